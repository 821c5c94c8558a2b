"""Runs (docs/scoring.md#runs): the statistics of `run_summary` per (config × run), written once.

Two group-bys, as every engine runs them:
- over execution rows: counts by status and verdict, pass rate, mean score
  (`execution_aggregations`) and latency, cost and tokens (`cost_aggregations`);
- over per-case rows (`rules.attempts.case_aggregations`, one row per case):
  cases, case_pass_rate and the case-clustered standard errors of the pass rate and the
  mean score (`case_level_terms`, then `case_level_aggregations`).
`ns` is the expression namespace (`polars` or `narwhals`); counts are
`cast(Int64).sum()` as in `rules.attempts`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from evalframe._private import schema as S
from evalframe._private.rules import Expr, Namespace
from evalframe._private.rules.attempts import SCORE_SUM, case_passed
from evalframe._private.rules.pass_at_k import pass_all_k, pass_at_k

CASE_N, CASE_K, CASE_NS, CASE_SS = "_n", "_k", "_ns", "_ss"
"""Per-case columns: attempts, passed attempts, scored attempts, Σ score (as floats)."""
CASE_PASSED = "_case_passed"
P50, P95 = 0.5, 0.95
"""The latency percentiles of run_summary (linear interpolation between order statistics)."""


def _count(ns: Namespace, condition: Expr, weight: Expr | None = None) -> Expr:
    if weight is not None:  # rows standing for `weight` equal rows each (sweep states)
        return (condition.cast(ns.Int64) * weight).sum().cast(ns.Int64)
    return condition.cast(ns.Int64).sum().cast(ns.Int64)


def _mean(ns: Namespace, value: Expr, weight: Expr | None) -> Expr:
    """The mean of the non-null values; with `weight`, each row counted `weight` times."""
    if weight is None:
        return value.mean()
    n = (value.is_not_null().cast(ns.Int64) * weight).sum()
    return ns.when(n > 0).then((value * weight).sum() / n)


def _sum_or_null(ns: Namespace, column: str, dtype: Any) -> Expr:
    """Σ of a column, null when every value is null (no cost recorded is not a cost of 0)."""
    value = ns.col(column)
    return ns.when(value.count() > 0).then(value.sum().cast(dtype)).alias(column)


def execution_aggregations(ns: Namespace, weight: Expr | None = None) -> list[Expr]:
    """Aggregations of a run's execution rows that depend on the config: executions,
    passed, failed (scored and not passed), errored, unscored, the three verdict bands,
    pass_rate and mean_score. With `weight` (an integer column), each row stands for
    that many executions (sweep's distinct execution states)."""
    status, verdict, passed = ns.col(S.STATUS), ns.col(S.VERDICT), ns.col(S.PASSED)
    errored = status == S.STATUS_ERROR
    unscored = verdict == S.VERDICT_UNSCORED
    n = ns.len() if weight is None else weight.sum()
    return [
        n.cast(ns.Int64).alias(S.N_EXECUTIONS),
        _count(ns, passed, weight).alias(S.PASSED),
        _count(ns, ~passed & ~errored & ~unscored, weight).alias(S.FAILED),
        _count(ns, errored, weight).alias(S.ERRORED),
        _count(ns, unscored, weight).alias(S.UNSCORED),
        _count(ns, verdict == S.VERDICT_PASS, weight).alias(S.N_PASS),
        _count(ns, verdict == S.VERDICT_BORDERLINE, weight).alias(S.N_BORDERLINE),
        _count(ns, verdict == S.VERDICT_FAIL, weight).alias(S.N_FAIL),
        _mean(ns, passed.cast(ns.Float64), weight).alias(S.PASS_RATE),
        _mean(ns, ns.col(S.SCORE), weight).alias(S.MEAN_SCORE),
    ]


def cost_aggregations(ns: Namespace) -> list[Expr]:
    """Aggregations of a run's execution rows that do not depend on the config."""
    lat = ns.col(S.LATENCY_MS)
    return [
        lat.mean().alias(S.LATENCY_MEAN),
        lat.quantile(P50, interpolation="linear").alias(S.LATENCY_P50),
        lat.quantile(P95, interpolation="linear").alias(S.LATENCY_P95),
        lat.max().alias(S.LATENCY_MAX),
        _sum_or_null(ns, S.COST_USD, ns.Float64),
        _sum_or_null(ns, S.INPUT_TOKENS, ns.Int64),
        _sum_or_null(ns, S.OUTPUT_TOKENS, ns.Int64),
    ]


def per_case_columns(ns: Namespace) -> list[Expr]:
    """The per-case inputs of the case level, from `rules.attempts.case_aggregations`."""
    return [
        ns.col(S.ATTEMPTS).cast(ns.Float64).alias(CASE_N),
        ns.col(S.N_PASSED).cast(ns.Float64).alias(CASE_K),
        ns.col(S.SCORED).cast(ns.Float64).alias(CASE_NS),
        ns.col(SCORE_SUM).alias(CASE_SS),
    ]


def _deviation(sx: str) -> str:
    return f"_dev{sx}"


def case_level_terms(
    ns: Namespace, keys: Sequence[str], passed_rule: Expr, weight: Expr | None = None
) -> list[Expr]:
    """Per-case terms (window sums over the run `keys`): whether the case passes under
    attempts.passed, and each case's squared deviation (sx_c − nc_c · x̄)² of the
    clustered SE, for the pass rate (sx = passed, nc = attempts) and the mean score
    (sx = Σ score, nc = scored attempts). With `weight`, each row stands for that many
    equal cases."""
    terms = [case_passed(ns, ns.col(CASE_N), ns.col(CASE_K), passed_rule).alias(CASE_PASSED)]
    for sx, nc in ((CASE_K, CASE_N), (CASE_SS, CASE_NS)):
        x, n = ns.col(sx), ns.col(nc)
        if weight is not None:
            x, n = x * weight, n * weight
        mean = x.sum().over(*keys) / n.sum().over(*keys)
        deviation = (ns.col(sx) - ns.col(nc) * mean) ** 2
        terms.append(ns.when(ns.col(nc) > 0).then(deviation).alias(_deviation(sx)))
    return terms


def clustered_se(ns: Namespace, sx: str, nc: str, weight: Expr | None = None) -> Expr:
    """The case-clustered standard error of Σ sx / Σ nc
    (docs/statistics.md#clustered-standard-errors): sqrt(G/(G−1) · Σ_c (sx_c − nc_c · x̄)²) / n with
    n = Σ nc and G the cases with nc > 0; null when G < 2. With `weight`, each row stands for that
    many equal cases."""
    g = _count(ns, ns.col(nc) > 0, weight)
    if weight is None:
        n, dev = ns.col(nc).sum(), ns.col(_deviation(sx)).sum()
    else:
        n, dev = (ns.col(nc) * weight).sum(), (ns.col(_deviation(sx)) * weight).sum()
    return ns.when(g >= 2).then((g / (g - 1) * dev).sqrt() / n)


def case_level_aggregations(ns: Namespace, weight: Expr | None = None) -> list[Expr]:
    """cases, case_pass_rate and the two clustered SEs of a run, over the rows of
    `case_level_terms` (with `weight`, each row stands for that many equal cases)."""
    cases = ns.len() if weight is None else weight.sum()
    return [
        cases.cast(ns.Int64).alias(S.CASES),
        _mean(ns, ns.col(CASE_PASSED).cast(ns.Float64), weight).alias(S.CASE_PASS_RATE),
        clustered_se(ns, CASE_K, CASE_N, weight).alias(S.PASS_RATE_SE),
        clustered_se(ns, CASE_SS, CASE_NS, weight).alias(S.MEAN_SCORE_SE),
    ]


def _case_mean_and_se(ns: Namespace, value: Expr, name: str) -> list[Expr]:
    """Mean of a per-case value over the cases where it is not null, and its sample SD /
    √G (null when G < 2): the pass@k aggregation (docs/statistics.md#passk-and-passk)."""
    g = value.count()
    se = ns.when(g >= 2).then(value.std(ddof=1) / g.cast(ns.Float64).sqrt())
    return [value.mean().alias(name), se.alias(S.se_of(name))]


def pass_k_aggregations(ns: Namespace, ks: Sequence[int]) -> list[Expr]:
    """pass@k and pass^k per configured k and their SEs, over the per-case rows of
    `per_case_columns` (errored attempts count as not passed)."""
    n, c = ns.col(CASE_N).cast(ns.Int64), ns.col(CASE_K).cast(ns.Int64)
    aggs: list[Expr] = []
    for k in ks:  # a loop over the configured k values, not over cases
        aggs += _case_mean_and_se(ns, pass_at_k(ns, n, c, k), S.pass_at(k))
        aggs += _case_mean_and_se(ns, pass_all_k(ns, n, c, k), S.pass_all(k))
    return aggs
