"""Slow, exact reference of the case bootstrap (docs/statistics.md#case-bootstrap) in plain Python.

Written from the definition, not from the implementation: the generator with Python
integers (the integers must match exactly), the weights by counting the cumulative
Poisson(1) probabilities a draw exceeds (all of them, reachable or not), the replicate
statistics with `fractions` from the execution rows (exact scores, exact pass@k), the
percentiles by linear interpolation on exact values, ranks by counting better runs.
"""

from __future__ import annotations

import math
from collections import defaultdict
from fractions import Fraction
from typing import Any

M = 2**31 - 1
ROUNDS = ((48271, 12345), (69621, 743852806))
EPS = Fraction(1e-9)


def mix(h: int) -> int:
    for a, c in ROUNDS:
        x = (h * a + c) % M
        hi, lo = divmod(x, 2**16)
        h = lo * 2**15 + (hi + lo * lo // 2**8) % 2**15
    return h


def case_key(seed: int, ordinal: int) -> int:
    return mix(mix(seed) + ordinal)


def replicate_key(seed: int, replicate: int) -> int:
    return mix(mix(mix(seed)) + replicate)


def draw(seed: int, ordinal: int, replicate: int) -> int:
    return mix(case_key(seed, ordinal) + replicate_key(seed, replicate))


def poisson_cdf() -> list[float]:
    out, total, j = [], 0.0, 0
    while not out or 1.0 - out[-1] >= 1e-12:
        total += math.exp(-1.0) / math.factorial(j)
        out.append(total)
        j += 1
    return out


CDF = poisson_cdf()


def weight(d: int) -> int:
    """The number of F(j) that u = d / 2^31 exceeds (exact rationals)."""
    u = Fraction(d, 2**31)
    return sum(1 for f in CDF if u > Fraction(f))


def ordinals(case_ids: list[str]) -> dict[str, int]:
    """Dense rank of case_id in byte order (1, 2, ...)."""
    keys = sorted(set(case_ids), key=lambda c: c.encode())
    return {c: i + 1 for i, c in enumerate(keys)}


def comb(n: int, k: int) -> int:
    return math.comb(n, k) if 0 <= k <= n else 0


def percentile(values: list[Fraction], p: Fraction) -> Fraction | None:
    if not values:
        return None
    v = sorted(values)
    h = (len(v) - 1) * p
    lo = math.floor(h)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (h - lo) * (v[hi] - v[lo])


def bootstrap(
    rows: list[dict[str, Any]],
    *,
    replicates: int,
    seed: int,
    ks: list[int] = (),  # type: ignore[assignment]
    min_mean_score: float = 0.8,
    min_pass_rate: float = 1.0,
) -> dict[str, dict[str, Any]]:
    """run_id → bootstrap columns, from execution rows (run_id, case_id, passed, score) of
    one config."""
    order = ordinals([r["case_id"] for r in rows])
    cases: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for r in rows:
        cases[r["run_id"]][r["case_id"]].append(r)
    runs = sorted(cases)
    case_sets = {run: frozenset(cases[run]) for run in runs}
    per: dict[str, dict[str, list[Any]]] = {run: defaultdict(list) for run in runs}
    for b in range(replicates):
        w = {c: weight(draw(seed, o, b)) for c, o in order.items()}
        rates: dict[str, Fraction] = {}
        for run in runs:
            n = k = m = 0
            q = Fraction(0)
            kstat: dict[str, list[Fraction]] = defaultdict(lambda: [Fraction(0), Fraction(0)])
            for case, execs in cases[run].items():
                wc = w[case]
                passed = sum(1 for e in execs if e["passed"])
                n += wc * len(execs)
                k += wc * passed
                scored = [Fraction(e["score"]) for e in execs if e["score"] is not None]
                m += wc * len(scored)
                q += wc * sum(scored, Fraction(0))
                for kk in ks:
                    if len(execs) >= kk:
                        at = 1 - Fraction(comb(len(execs) - passed, kk), comb(len(execs), kk))
                        al = Fraction(comb(passed, kk), comb(len(execs), kk))
                        for name, value in ((f"pass_at_{kk}", at), (f"pass_all_{kk}", al)):
                            kstat[name][0] += wc * value
                            kstat[name][1] += wc
            if n == 0:
                continue  # total weight 0: the run is left out of this replicate
            rate = Fraction(k, n)
            mean = q / m if m else None
            rates[run] = rate
            per[run]["pass_rate"].append(rate)
            if mean is not None:
                per[run]["mean_score"].append(mean)
            for name, (num, den) in kstat.items():
                if den:
                    per[run][name].append(num / den)
            holds = (
                mean is not None
                and mean >= Fraction(min_mean_score) - EPS
                and rate >= Fraction(min_pass_rate) - EPS
            )
            per[run]["passed"].append(holds)
        for run, rate in rates.items():
            peers = [r for r in rates if case_sets[r] == case_sets[run]]
            per[run]["rank"].append(1 + sum(1 for r in peers if rates[r] > rate))
    out: dict[str, dict[str, Any]] = {}
    stats = ["pass_rate", "mean_score", *(f"pass_{x}_{kk}" for kk in ks for x in ("at", "all"))]
    for run in runs:
        row: dict[str, Any] = {}
        for stat in stats:
            row[f"{stat}_boot_low"] = percentile(per[run][stat], Fraction(1, 40))
            row[f"{stat}_boot_high"] = percentile(per[run][stat], Fraction(39, 40))
        ranks = [Fraction(x) for x in per[run]["rank"]]
        row["rank_low"] = percentile(ranks, Fraction(1, 40))
        row["rank_high"] = percentile(ranks, Fraction(39, 40))
        passed = per[run]["passed"]
        row["run_passed_prob"] = Fraction(sum(passed), len(passed)) if passed else None
        row["p_best"] = (
            Fraction(sum(1 for x in per[run]["rank"] if x == 1), len(ranks)) if ranks else None
        )
        out[run] = row
    return out
