"""The case bootstrap of run_summary (docs/statistics.md#case-bootstrap), over any engine's frame
(narwhals).

`bootstrap_columns(execution_scores, ...)` takes the engine's execution_scores as a native
lazy frame (a polars LazyFrame, a DuckDB relation, a Spark DataFrame) and returns, in the
same engine, one row per (config_id, run_id) with the columns of
`rules.bootstrap.boot_columns`. Every rule is `rules/bootstrap.py` (the generator, the
weights, the replicate statistics, the percentiles) and `rules/run_gates.py` (the gates);
this module only arranges the frames:

1. per case (config × run × case): executions n, passed k, scored m, Σ⌊score·2^32⌋ q and,
   per k of attempts.k, [n ≥ k] and ⌊pass@k·2^32⌋, ⌊pass^k·2^32⌋; the case ordinal (dense
   rank of case_id within the config) and its key;
2. the runs that share their cases: a run's case count and Σ of its case keys (a
   fingerprint; runs of a config with the same pair are ranked together);
3. the cases of a config as one wide frame (one row per config × case, the key, and per
   run number i of the config the columns `<x>@i`, 0 where the run lacks the case): a
   case's weight in a replicate is shared by every run of its config, so it is drawn and
   weighed once per case × replicate, not once per run; the columns are packed into a
   few Int64 words (bit widths from their totals: no carries, exact);
4. per chunk of replicates (`replicates(start, stop)`: the engine's frame of replicate
   numbers; chunks sized by the caller from --memory-limit): replicates × cases (a cross
   join, replicate-major), the weight of each row, Σ w·word per (config, replicate) — a
   loop over a few chunks, never over replicates or cases; the words unpacked and spread
   back to one row per (config, run, replicate);
5. per (config, run, replicate): the statistics, the gates, the rank among the runs that
   share their cases (runs of total weight 0 left out of that replicate);
6. per run: the 2.5 % / 97.5 % percentiles, run_passed_prob, rank_low/high, p_best.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import narwhals as nw

from evalframe._private import schema as S
from evalframe._private.rules import bootstrap as B
from evalframe._private.rules import run_gates
from evalframe._private.rules.pass_at_k import pass_all_k, pass_at_k

NativeFrame = Any
"""A polars LazyFrame, a DuckDB relation or a Spark DataFrame."""

REP = "_rep"
"""The replicate number column of the frame `replicates(start, stop)` returns (Int64)."""
_ORD, _CKEY, _RKEY, _W = "_ord", "_case_key", "_rep_key", "_w"
_N, _K, _M, _Q = "_n", "_k", "_m", "_q"
_FP_N, _FP, _RUN, _CFG, _GRP = "_fp_n", "_fp", "_run", "_cfg", "_grp"
_WN, _WK, _WM, _WQ = "_wn", "_wk", "_wm", "_wq"
_PASSED, _RANK = "_run_passed", "_rank"
RUN_KEY = (S.CONFIG_ID, S.RUN_ID)
BYTES_PER_CELL = 96
"""Memory of one case × replicate row of a chunk (a handful of Int64 columns, doubled):
sets how many replicates one chunk holds under --memory-limit."""


def _has_k(k: int) -> str:
    return f"_has_{k}"


def _pk(stat: str) -> str:
    return f"_q_{stat}"


def _wsum(column: str) -> str:
    return f"_w{column}"


def _k_stats(ks: Sequence[int]) -> list[tuple[int, str, Any]]:
    """(k, column, per-case rule) of every pass@k statistic, in run_summary's order."""
    return [
        (k, name, rule)
        for k in ks
        for name, rule in (
            (S.pass_at(k), pass_at_k),
            (S.pass_all(k), pass_all_k),
        )
    ]


def replicates_per_chunk(case_rows: int, memory_limit_bytes: int, replicates: int) -> int:
    """How many replicates one chunk of cases × replicates holds under the memory limit."""
    per_replicate = max(1, case_rows) * BYTES_PER_CELL
    return max(1, min(replicates, memory_limit_bytes // per_replicate))


def per_case(execution_scores: NativeFrame, seed: int, ks: Sequence[int]) -> nw.LazyFrame[Any]:
    """Step 1: one row per (config × run × case) with the sums a replicate weighs."""
    ex = nw.from_native(execution_scores)
    if not isinstance(ex, nw.LazyFrame):
        ex = ex.lazy()
    cases = ex.group_by(S.CONFIG_ID, S.RUN_ID, S.CASE_ID).agg(
        nw.len().cast(nw.Int64).alias(_N),
        nw.col(S.PASSED).fill_null(False).cast(nw.Int64).sum().cast(nw.Int64).alias(_K),
        nw.col(S.SCORE).count().cast(nw.Int64).alias(_M),
        B.fixed(nw, nw.col(S.SCORE)).sum().cast(nw.Int64).alias(_Q),
    )
    n, c = nw.col(_N), nw.col(_K)
    terms = [(n >= k).cast(nw.Int64).alias(_has_k(k)) for k in dict.fromkeys(ks)]
    terms += [B.fixed(nw, rule(nw, n, c, k)).alias(_pk(name)) for k, name, rule in _k_stats(ks)]
    ordinal = nw.col(S.CASE_ID).rank("dense").over(S.CONFIG_ID).cast(nw.Int64)
    run = nw.col(S.RUN_ID).rank("dense").over(S.CONFIG_ID).cast(nw.Int64)
    config = nw.col(S.CONFIG_ID).rank("dense").cast(nw.Int64)
    keyed = B.apply(
        cases.with_columns(*terms, ordinal.alias(_ORD), run.alias(_RUN), config.alias(_CFG)),
        B.case_key_stages(nw, seed, nw.col(_ORD), _CKEY),
    )
    return keyed.with_columns(
        nw.col(_Q).fill_null(0),
        nw.len().over(*RUN_KEY).cast(nw.Int64).alias(_FP_N),
        nw.col(_CKEY).sum().over(*RUN_KEY).cast(nw.Int64).alias(_FP),
    )


def _fields(ks: Sequence[int]) -> list[str]:
    """The per-case columns a replicate weighs (Σ w·x of each, per run)."""
    out = [_N, _K, _M, _Q, *(_has_k(k) for k in dict.fromkeys(ks))]
    return out + [_pk(name) for _, name, _ in _k_stats(ks)]


def _at(column: str, run: int) -> str:
    return f"{column}@{run}"


def wide_cases(cases: nw.LazyFrame[Any], runs: int, ks: Sequence[int]) -> nw.LazyFrame[Any]:
    """One row per (config, case): its key and, per run number i of the config (1..runs, a
    handful), the run's per-case columns `<x>@i` (0 where the run lacks the case). A case
    weighs the same in every run of its config, so its draw is made once, not once per run."""
    fields = _fields(ks)
    spread = [
        nw.when(nw.col(_RUN) == i).then(nw.col(f)).otherwise(0).cast(nw.Int64).alias(_at(f, i))
        for i in range(1, runs + 1)  # the config's runs: a handful
        for f in fields
    ]
    return (
        cases.with_columns(*spread)
        .group_by(_CFG, _ORD)
        .agg(
            nw.col(_CKEY).max(),
            *(nw.col(_at(f, i)).sum().cast(nw.Int64) for i in range(1, runs + 1) for f in fields),
        )
        .drop(_ORD)
    )


Packing = list[list[tuple[str, int, int]]]
"""Words of a packed chunk: per word, (column, bit offset, bit width) of the columns it holds."""
WORD_BITS = 63
"""Bits of one packed Int64 word (sums stay below 2^63)."""
SHARED_BITS = 53
"""The widest column that shares a word: unpacking divides by 2^offset, which some engines
(Spark through narwhals) compute in float64, exact only up to 53 significant bits."""


def packing(totals: dict[str, int]) -> Packing:
    """Columns packed into Int64 words, so one Σ w·word gives several Σ w·x at once: a
    column whose Σ w·x is at most B.MAX_WEIGHT · Σ x < 2^bits takes `bits` bits, so the
    sums of the columns of a word never carry into each other (exact integers, the same
    on every engine). `totals`: Σ x of each column over all cases (non-negative)."""
    words: Packing = []
    used: list[int] = []
    for column, total in totals.items():  # a handful of columns
        bits = max(1, (B.MAX_WEIGHT * max(0, total)).bit_length())
        shared = bits <= SHARED_BITS
        slot = next((j for j, u in enumerate(used) if shared and u + bits <= WORD_BITS), None)
        if slot is None:
            words.append([(column, 0, bits)])
            used.append(bits if shared else WORD_BITS + 1)
        else:
            words[slot].append((column, used[slot], bits))
            used[slot] += bits
    return words


def _word(j: int) -> str:
    return f"_word{j}"


def _power(exponent: int) -> Any:
    return nw.lit(2**exponent, dtype=nw.Int64)


def pack(wide: nw.LazyFrame[Any], words: Packing) -> nw.LazyFrame[Any]:
    """(config, case key, packed words) of the wide case frame."""
    exprs = []
    for j, word in enumerate(words):  # a handful of words
        terms = [nw.col(c) * _power(offset) for c, offset, _ in word]
        total = terms[0]
        for term in terms[1:]:
            total = total + term
        exprs.append(total.cast(nw.Int64).alias(_word(j)))
    return wide.select(_CFG, _CKEY, *exprs)


def _field(word: Any, offset: int, bits: int) -> Any:
    """The column at `offset` of a summed word: (word mod 2^(offset+bits) − word mod
    2^offset) / 2^offset, a quotient of at most 53 significant bits (exact in float64)."""
    high = word if offset + bits >= WORD_BITS else word % _power(offset + bits)
    if offset == 0:
        return high
    return (high - word % _power(offset)) // _power(offset)


def unpack(
    sums: nw.LazyFrame[Any], words: Packing, same: dict[str, str] | None = None
) -> nw.LazyFrame[Any]:
    """Σ w·x of every packed column from the summed words (and of each column of `same`,
    equal to the packed column it maps to)."""
    exprs = [
        (_field(nw.col(_word(j)), offset, bits) if len(word) > 1 else nw.col(_word(j)))
        .cast(nw.Int64)
        .alias(c)
        for j, word in enumerate(words)
        for c, offset, bits in word
    ]
    copies = [nw.col(kept).alias(column) for column, kept in (same or {}).items()]
    out = sums.select(_CFG, REP, *exprs)
    return out.with_columns(*copies) if copies else out


def duplicates(wide: nw.LazyFrame[Any], totals: dict[str, int]) -> dict[str, str]:
    """Columns of the wide frame equal, case for case, to an earlier one: column → that
    one (their sums are the same; e.g. executions and scored executions when no score is
    null, or one attempt per case in every run). Only columns of equal totals are compared."""
    names = list(totals)
    pairs = [
        (b, a)
        for i, b in enumerate(names)
        for a in names[:i]  # a handful of columns
        if totals[a] == totals[b]
    ]
    if not pairs:
        return {}
    equal = wide.select(
        *((nw.col(b) == nw.col(a)).all().alias(f"{b}={a}") for b, a in pairs)
    ).collect()
    same: dict[str, str] = {}
    for b, a in pairs:
        if b not in same and bool(equal[f"{b}={a}"].item()):
            same[b] = same.get(a, a)
    return same


def replicate_sums(
    packed: nw.LazyFrame[Any], reps: NativeFrame, seed: int, words: Packing, configs: int
) -> nw.LazyFrame[Any]:
    """Step 4 for one chunk: Σ w·word per (config, replicate) over replicates × cases
    (replicate-major), one draw and one weight per case × replicate. The group key is one
    Int64, replicate · configs + config − 1 (the replicate alone for one config): a
    single-key group-by."""
    r = nw.from_native(reps)
    r = B.apply(r, B.replicate_key_stages(nw, seed, nw.col(REP), _RKEY))
    if configs > 1:
        r = r.with_columns((nw.col(REP) * configs - 1).alias(_GRP))
    rows = r.join(packed, how="cross")
    if configs > 1:
        rows = rows.with_columns((nw.col(_GRP) + nw.col(_CFG)).alias(_GRP))
    weighted = B.apply(rows, B.draw_stages(nw, nw.col(_CKEY), nw.col(_RKEY), _W)).with_columns(
        B.poisson_weight(nw, nw.col(_W)).alias(_W)
    )
    w = nw.col(_W)
    key = _GRP if configs > 1 else REP
    sums = weighted.group_by(key).agg(
        *((w * nw.col(_word(j))).sum().cast(nw.Int64).alias(_word(j)) for j in range(len(words)))
    )
    if configs == 1:
        return sums.with_columns(nw.lit(1, dtype=nw.Int64).alias(_CFG))
    return sums.with_columns(
        (nw.col(_GRP) // configs).cast(nw.Int64).alias(REP),
        (nw.col(_GRP) % configs + 1).cast(nw.Int64).alias(_CFG),
    ).drop(_GRP)


def per_run(sums: nw.LazyFrame[Any], runs: int, ks: Sequence[int]) -> nw.LazyFrame[Any]:
    """Σ w·x per (config, run number, replicate): the wide sums back to one row per run."""
    fields = _fields(ks)
    parts = [
        sums.select(
            _CFG,
            REP,
            nw.lit(i, dtype=nw.Int64).alias(_RUN),
            *(nw.col(_at(f, i)).alias(_wsum(f)) for f in fields),
        )
        for i in range(1, runs + 1)  # the config's runs: a handful
    ]
    return nw.concat(parts, how="vertical") if len(parts) > 1 else parts[0]


def replicate_statistics(
    sums: nw.LazyFrame[Any], ks: Sequence[int], min_mean_score: float, min_pass_rate: float
) -> nw.LazyFrame[Any]:
    """Step 4: per (config, run, replicate) with total weight > 0: the statistics, whether
    the run gates hold, the rank by pass_rate among the runs that share their cases."""
    stats = [
        B.ratio(nw, nw.col(_wsum(_K)), nw.col(_wsum(_N))).alias(S.PASS_RATE),
        B.ratio(nw, nw.col(_wsum(_Q)), nw.col(_wsum(_M)), B.FIXED_SCALE).alias(S.MEAN_SCORE),
    ]
    stats += [
        B.ratio(nw, nw.col(_wsum(_pk(name))), nw.col(_wsum(_has_k(k))), B.FIXED_SCALE).alias(name)
        for k, name, _ in _k_stats(ks)
    ]
    holds = run_gates.gate(nw.col(S.MEAN_SCORE), min_mean_score) & run_gates.gate(
        nw.col(S.PASS_RATE), min_pass_rate
    )
    rank = nw.col(S.PASS_RATE).rank("min", descending=True).over(S.CONFIG_ID, _FP_N, _FP, REP)
    return (
        sums.filter(nw.col(_wsum(_N)) > 0)
        .with_columns(*stats)
        .with_columns(holds.alias(_PASSED), rank.cast(nw.Int64).alias(_RANK))
    )


def _percentile_terms(column: str) -> list[Any]:
    """Window columns of one statistic: its 0-based order among a run's non-null values
    and their count (the percentile's order statistics are picked from these)."""
    value = nw.col(column)
    return [
        (value.rank("ordinal").over(*RUN_KEY).cast(nw.Int64) - 1).alias(f"_i{column}"),
        value.count().over(*RUN_KEY).cast(nw.Int64).alias(f"_c{column}"),
    ]


def _percentile(column: str, p: Any, name: str) -> list[Any]:
    """Aggregations giving the linear-interpolation percentile p of `column` per run."""
    lo, hi, frac = B.percentile_index(nw, nw.col(f"_c{column}"), p)
    i, v = nw.col(f"_i{column}"), nw.col(column).cast(nw.Float64)
    return [
        nw.when(i == lo).then(v).max().alias(f"{name}_vlo"),
        nw.when(i == hi).then(v).max().alias(f"{name}_vhi"),
        frac.max().alias(f"{name}_frac"),
    ]


def run_columns(reps: nw.LazyFrame[Any], ks: Sequence[int]) -> nw.LazyFrame[Any]:
    """Step 5: per (config, run) the percentiles, run_passed_prob, rank band and p_best."""
    stats = [S.PASS_RATE, S.MEAN_SCORE, *(name for _, name, _ in _k_stats(ks))]
    banded = [*stats, _RANK]
    windows = [t for c in banded for t in _percentile_terms(c)]
    named = [
        (c, p, out)
        for c in banded
        for p, out in (
            (B.P_LOW, B.boot_low(c) if c != _RANK else B.RANK_LOW),
            (B.P_HIGH, B.boot_high(c) if c != _RANK else B.RANK_HIGH),
        )
    ]
    aggs = [a for c, p, out in named for a in _percentile(c, p, out)]
    aggs += [
        nw.col(_PASSED).cast(nw.Float64).mean().alias(B.RUN_PASSED_PROB),
        (nw.col(_RANK) == 1).cast(nw.Float64).mean().alias(B.P_BEST),
    ]
    out = reps.with_columns(*windows).group_by(*RUN_KEY).agg(*aggs)
    finals = [
        B.interpolate(nw.col(f"{o}_vlo"), nw.col(f"{o}_vhi"), nw.col(f"{o}_frac")).alias(o)
        for _, _, o in named
    ]
    return out.with_columns(*finals).select(*RUN_KEY, *B.boot_columns(list(ks)))


def bootstrap_columns(
    execution_scores: NativeFrame,
    *,
    replicates: int,
    seed: int,
    ks: Sequence[int],
    min_mean_score: float,
    min_pass_rate: float,
    replicate_frame: Callable[[int, int], NativeFrame],
    chunk: int,
    materialize: Callable[[nw.LazyFrame[Any]], nw.LazyFrame[Any]] = lambda f: f,
) -> nw.LazyFrame[Any]:
    """The bootstrap columns per (config_id, run_id) of one config's execution_scores, in
    the engine of `execution_scores` (see the module docstring). `replicate_frame(a, b)`
    returns that engine's frame of one Int64 column `_rep` = a, ..., b − 1; `chunk`
    replicates are weighed at a time; `materialize` computes a chunk's sums (the polars
    engine collects them, so one chunk at a time is in memory)."""
    cases = materialize(per_case(execution_scores, seed, ks))
    runs = materialize(cases.select(S.CONFIG_ID, S.RUN_ID, _CFG, _RUN, _FP_N, _FP).unique())
    counts = runs.select(nw.col(_RUN).max(), nw.col(_CFG).max()).collect()
    most = max(1, int(counts[_RUN].item() or 0))  # runs of the largest config: a handful
    configs = max(1, int(counts[_CFG].item() or 0))
    wide = materialize(wide_cases(cases, most, ks))
    totals = wide.select(*(nw.col(c).sum() for c in wide.columns if "@" in c)).collect()
    sums_of = {c: int(totals[c].item() or 0) for c in totals.columns}
    same = duplicates(wide, sums_of)
    words = packing({c: t for c, t in sums_of.items() if c not in same})
    packed = materialize(pack(wide, words))
    parts = [
        materialize(
            replicate_sums(
                packed, replicate_frame(a, min(a + chunk, replicates)), seed, words, configs
            )
        )
        for a in range(0, replicates, max(1, chunk))  # a few chunks, each vectorized
    ]
    sums = nw.concat(parts, how="vertical") if len(parts) > 1 else parts[0]
    sums = per_run(unpack(sums, words, same), most, ks).join(runs, on=[_CFG, _RUN], how="inner")
    reps = replicate_statistics(sums, ks, min_mean_score, min_pass_rate)
    return run_columns(reps, ks)
