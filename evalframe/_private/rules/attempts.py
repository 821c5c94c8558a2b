"""Repeated attempts of a case reduced to one row (docs/scoring.md#cases): the `case_summary` rules.

`case_aggregations` are the per (config × run × case) aggregates that `case_summary` and
`run_summary` share; `case_columns` turns them into the case's score, pass rate, verdict
and flakiness under the attempts policy. `ns` is the expression namespace: the `polars`
module (the polars engine) or the `narwhals` module (Spark); DuckDB runs
`sql/case_summary_of.sql` and `sql/case_passed.sql`, held to the same golden tables.
Counts are written as `cast(Int64).sum()` so every engine reads them alike (Spark sums no
booleans; DuckDB's sum of integers is a 128-bit decimal, cast back).
"""

from __future__ import annotations

from evalframe._private import schema as S
from evalframe._private.rules import Expr, Namespace
from evalframe._private.rules.constants import ATTEMPTS_ANY, ATTEMPTS_MAJORITY

SCORE_SUM = "_score_sum"
"""Σ score over a case's scored attempts (run_summary's clustered SE of mean_score)."""
SCORE_MEAN, SCORE_MIN, SCORE_MAX = "_score_mean", "_score_min", "_score_max"
"""Mean / min / max score over a case's scored attempts (attempts.score picks one)."""


def _count(ns: Namespace, condition: Expr) -> Expr:
    return condition.cast(ns.Int64).sum().cast(ns.Int64)


def case_aggregations(ns: Namespace) -> list[Expr]:
    """Aggregations of the execution_scores rows of one case (a group-by over config_id,
    run_id, case_id): attempts, errored, scored, unscored, n_passed, latency_mean,
    cost_usd (null when no attempt has a cost) and the score statistics."""
    score, cost = ns.col(S.SCORE), ns.col(S.COST_USD)
    return [
        ns.len().cast(ns.Int64).alias(S.ATTEMPTS),
        _count(ns, ns.col(S.STATUS) == S.STATUS_ERROR).alias(S.ERRORED),
        score.count().cast(ns.Int64).alias(S.SCORED),
        _count(ns, ns.col(S.VERDICT) == S.VERDICT_UNSCORED).alias(S.UNSCORED),
        score.sum().alias(SCORE_SUM),
        score.mean().alias(SCORE_MEAN),
        score.min().alias(SCORE_MIN),
        score.max().alias(SCORE_MAX),
        _count(ns, ns.col(S.PASSED)).alias(S.N_PASSED),
        ns.col(S.LATENCY_MS).mean().alias(S.LATENCY_MEAN),
        ns.when(cost.count() > 0).then(cost.sum()).alias(S.COST_USD),
    ]


def case_passed(ns: Namespace, n: Expr, k: Expr, rule: Expr) -> Expr:
    """A case of n attempts, k of them passed, passes when all / any / more than half of
    its attempts did (`rule`: attempts.passed, a column or a literal)."""
    return (
        ns.when(rule == ATTEMPTS_ANY)
        .then(k >= 1)
        .when(rule == ATTEMPTS_MAJORITY)
        .then(2 * k > n)
        .otherwise(k == n)
    )


def case_score(ns: Namespace, rule: Expr) -> Expr:
    """The case's score: the min / max / mean of its attempts' scores (attempts.score)."""
    return (
        ns.when(rule == "min")
        .then(ns.col(SCORE_MIN))
        .when(rule == "max")
        .then(ns.col(SCORE_MAX))
        .otherwise(ns.col(SCORE_MEAN))
    )


def case_columns(ns: Namespace, score_rule: Expr, passed_rule: Expr) -> list[Expr]:
    """score, pass_rate, passed and flaky of a case from `case_aggregations`."""
    n, k = ns.col(S.ATTEMPTS), ns.col(S.N_PASSED)
    return [
        case_score(ns, score_rule).alias(S.SCORE),
        (k / n).alias(S.PASS_RATE),
        case_passed(ns, n, k, passed_rule).alias(S.PASSED),
        ((k > 0) & (k < n)).alias(S.FLAKY),
    ]
