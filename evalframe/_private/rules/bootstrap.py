"""Case bootstrap (docs/statistics.md#case-bootstrap): the replicate weights, the replicate
statistics, the percentiles and the ranks, written once.

**The generator.** Counter-based, integers only, so every engine draws the same weights
for a seed (no engine's RNG): with the prime M = 2^31 − 1,

    round(h, a, c) = g((h·a + c) mod M),
    g(x)           = lo · 2^15 + ((hi + ⌊lo² / 2^8⌋) mod 2^15),  hi = ⌊x / 2^16⌋, lo = x mod 2^16
    mix(h)         = round(round(h, A1, C1), A2, C2)
    case_key       = mix(mix(seed) + ordinal)             one per case of a config
    replicate_key  = mix(mix(mix(seed)) + replicate)      one per replicate (0, 1, ...)
    draw           = mix(case_key + replicate_key)        one per case × replicate

Every operand stays below 2^32 and every product below 2^49 (h·a) or 2^32 (lo²), far
inside a signed 64-bit integer on polars, DuckDB and Spark. Each round is a bijection
(an affine map mod the prime, then a Feistel step on 31 bits); the Feistel step makes the
map non-linear (a chain of multiply-adds alone would be an affine function of seed,
ordinal and replicate). Keying the replicate too (rather than adding its number) keeps
two cases whose keys are close from drawing shifted copies of one weight sequence.
The case ordinal is the dense rank of case_id in byte order within the config (1, 2, ...),
so every run of a config gives a case the same weight in a replicate, and all attempts of
a case share it.

**The weight.** Poisson(1) by inverse CDF on u = draw / 2^31: the number of cumulative
probabilities F(j) = Σ_{i≤j} e^-1 / i! (j = 0, 1, ..., until 1 − F(j) < 1e-12) that u
exceeds, computed in integers: u > F(j) ⇔ draw > T_j = ⌊F(j) · 2^31⌋ (exact). Thresholds
with T_j ≥ 2^31 − 1 are never exceeded and are left out of the expression.

**Statistics of a replicate** (per run, from the per-case sums): pass_rate = Σ w·k / Σ w·n
(k passed, n executions of the case), mean_score = Σ w·q / (Σ w·m · 2^32) (q the case's
Σ ⌊score · 2^32⌋ over its m scored executions: integer sums, so the result does not depend
on row order or engine), pass@k = Σ w·⌊p_c · 2^32⌋ / (Σ w·[n_c ≥ k] · 2^32). A run whose
Σ w·n is 0 is left out of the replicate.

**Percentiles** with linear interpolation at p = 1/40 and 39/40 (2.5 %, 97.5 %) of the n
values v_(0) ≤ ... ≤ v_(n−1): h = (n − 1)·p, lo = ⌊h⌋, v_(lo) + (h − lo)·(v_(lo+1) − v_(lo)),
with h computed in integers (p is a fraction).

`ns` is the expression namespace: `polars` or `narwhals` (polars natively, DuckDB and
Spark through narwhals).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Final

from evalframe._private import schema as S
from evalframe._private.rules import Expr, Namespace

MODULUS: Final = 2**31 - 1
"""The prime modulus of the generator (products stay below 2^63 on every engine)."""
ROUND_CONSTANTS: Final = ((48271, 12345), (69621, 743852806))
"""(multiplier, increment) of the two rounds of `mix`."""
SPLIT: Final = 2**16
HALF: Final = 2**15
FEISTEL_SHIFT: Final = 2**8
"""g(x) = lo · 2^15 + ((hi + ⌊lo² / 2^8⌋) mod 2^15) with hi = ⌊x / 2^16⌋, lo = x mod 2^16:
a Feistel step, the non-linear bijection of [0, 2^31) in a round."""
DRAW_RANGE: Final = 2**31
"""Draws are integers in [0, DRAW_RANGE); u = draw / DRAW_RANGE."""
MAX_SEED: Final = MODULUS - 1
"""--seed is an integer in [0, MAX_SEED]."""
MAX_REPLICATES: Final = 1_000_000
"""--bootstrap is an integer in [1, MAX_REPLICATES]."""
POISSON_TAIL: Final = 1e-12
"""The cumulative Poisson(1) probabilities are computed until 1 − F(j) < POISSON_TAIL."""
FIXED_SCALE: Final = 2**32
"""Scores and per-case pass@k values are summed as ⌊x · FIXED_SCALE⌋ (exact Int64 sums)."""
P_LOW: Final = Fraction(1, 40)
P_HIGH: Final = Fraction(39, 40)
"""The percentiles of the interval and of the rank band: 2.5 % and 97.5 %."""

# column names (docs/history.md): schema.py
RUN_PASSED_PROB: Final = S.RUN_PASSED_PROB
RANK_LOW: Final = S.RANK_LOW
RANK_HIGH: Final = S.RANK_HIGH
P_BEST: Final = S.P_BEST
boot_low = S.boot_low
boot_high = S.boot_high


def boot_columns(ks: tuple[int, ...] | list[int] = ()) -> list[str]:
    """The columns --bootstrap adds to run_summary, in order."""
    stats = [S.PASS_RATE, S.MEAN_SCORE]
    stats += [c for k in ks for c in (S.pass_at(k), S.pass_all(k))]
    out = [name for stat in stats for name in (boot_low(stat), boot_high(stat))]
    return [*out, RUN_PASSED_PROB, RANK_LOW, RANK_HIGH, P_BEST]


def _poisson_cdf() -> list[float]:
    """F(0), F(1), ... of Poisson(1) until the tail 1 − F(j) is below POISSON_TAIL."""
    out: list[float] = []
    total, j = 0.0, 0
    while not out or 1.0 - out[-1] >= POISSON_TAIL:
        total += math.exp(-1.0) / math.factorial(j)
        out.append(total)
        j += 1
    return out


POISSON_CDF: Final = tuple(_poisson_cdf())
"""Cumulative Poisson(1) probabilities F(0), F(1), ... (tail below POISSON_TAIL)."""
THRESHOLDS: Final = tuple(
    t for t in (math.floor(Fraction(f) * DRAW_RANGE) for f in POISSON_CDF) if t < DRAW_RANGE - 1
)
"""T_j = ⌊F(j) · M⌋, exactly; the weight of a draw is the number of T_j it exceeds (those
with T_j ≥ M − 1 cannot be exceeded and are left out)."""
MAX_WEIGHT: Final = len(THRESHOLDS)
"""The largest weight a draw can get (it exceeds every threshold)."""


# --- the generator ----------------------------------------------------------------------------
def _lit(ns: Namespace, value: int) -> Expr:
    return ns.lit(value, dtype=ns.Int64)


Stages = list[list[Any]]
"""Expressions to apply in successive `with_columns` calls (each stage reads the columns
the previous ones wrote: the mixing rounds stay small expressions, not a nested tree)."""


def mix_stages(ns: Namespace, source: Expr, out: str) -> Stages:
    """mix(source) into column `out` (source an Int64 expression in [0, 2^32)): per round,
    x = (h·a + c) mod M, then the Feistel step g(x)."""
    stages: Stages = []
    h = source
    for a, c in ROUND_CONSTANTS:  # two fixed rounds, not a loop over data
        stages.append([((h * _lit(ns, a) + _lit(ns, c)) % _lit(ns, MODULUS)).alias(out)])
        x = ns.col(out)
        high, low = x // _lit(ns, SPLIT), x % _lit(ns, SPLIT)
        feistel = (high + (low * low) // _lit(ns, FEISTEL_SHIFT)) % _lit(ns, HALF)
        stages.append([(low * _lit(ns, HALF) + feistel).alias(out)])
        h = ns.col(out)
    return stages


def case_key_stages(ns: Namespace, seed: int, ordinal: Expr, out: str) -> Stages:
    """mix(mix(seed) + ordinal) into `out`: one Int64 per case of a config under `seed`."""
    first = mix_stages(ns, _lit(ns, seed), out)
    return [*first, *mix_stages(ns, ns.col(out) + ordinal.cast(ns.Int64), out)]


def replicate_key_stages(ns: Namespace, seed: int, replicate: Expr, out: str) -> Stages:
    """mix(mix(mix(seed)) + replicate) into `out`: one Int64 per replicate under `seed`."""
    stages = mix_stages(ns, _lit(ns, seed), out)
    stages += mix_stages(ns, ns.col(out), out)
    return [*stages, *mix_stages(ns, ns.col(out) + replicate.cast(ns.Int64), out)]


def draw_stages(ns: Namespace, case: Expr, replicate: Expr, out: str) -> Stages:
    """mix(case_key + replicate_key) into `out`: the case's draw in [0, 2^31)."""
    return mix_stages(ns, case + replicate, out)


def apply(frame: Any, stages: Stages) -> Any:
    """`frame` with the stages applied in order (a polars or narwhals frame)."""
    for stage in stages:  # a fixed handful of stages
        frame = frame.with_columns(*stage)
    return frame


def poisson_weight(ns: Namespace, d: Expr) -> Expr:
    """The Poisson(1) weight of a draw: the number of thresholds T_j it exceeds (Int64),
    counted in Int8 (at most MAX_WEIGHT: an eighth of the memory traffic of Int64)."""
    terms = [(d > _lit(ns, t)).cast(ns.Int8) for t in THRESHOLDS]
    weight = terms[0]
    for term in terms[1:]:  # a chain of additions (cheaper than sum_horizontal)
        weight = weight + term
    return weight.cast(ns.Int64)


# --- per-case terms ---------------------------------------------------------------------------
def fixed(ns: Namespace, x: Expr) -> Expr:
    """⌊x · FIXED_SCALE⌋ as Int64 (x in [0, 1] per execution; null stays null)."""
    return (x * float(FIXED_SCALE)).floor().cast(ns.Int64)


# --- replicate statistics ---------------------------------------------------------------------
def ratio(ns: Namespace, num: Expr, den: Expr, scale: int = 1) -> Expr:
    """num / (den · scale) of two Int64 sums as a float; null where den is 0."""
    value = num.cast(ns.Float64) / float(scale) / den.cast(ns.Float64)
    return ns.when(den > 0).then(value).otherwise(ns.lit(None, dtype=ns.Float64))


def percentile_index(ns: Namespace, n: Expr, p: Fraction) -> tuple[Expr, Expr, Expr]:
    """(lo, hi, frac) of the linear-interpolation percentile p of n sorted values:
    h = (n − 1)·p, lo = ⌊h⌋ (integers), hi = min(lo + 1, n − 1), frac = h − lo."""
    scaled = (n.cast(ns.Int64) - 1) * _lit(ns, p.numerator)
    lo = scaled // _lit(ns, p.denominator)
    frac = (scaled - lo * _lit(ns, p.denominator)).cast(ns.Float64) / float(p.denominator)
    hi = ns.when(lo + 1 < n).then(lo + 1).otherwise(lo)
    return lo, hi, frac


def interpolate(v_lo: Expr, v_hi: Expr, frac: Expr) -> Expr:
    """v_lo + frac · (v_hi − v_lo): the percentile from its two order statistics."""
    return v_lo + frac * (v_hi - v_lo)
