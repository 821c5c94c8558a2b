"""Comparing runs (docs/compare.md#case_deltas): a case's status in a pair and a pair's regression
checks.

`case_status` is the first rule that applies to one (case, or case × evaluator) of a
(baseline, candidate) pair; `regression_checks` are the three reasons a pair regressed.
Written over polars-syntax expressions (`ns` = polars or narwhals): the polars engine,
Spark (through narwhals) run these same functions; DuckDB runs `sql/case_status.sql`,
`sql/drop_regressed.sql` and `sql/latency_regressed.sql`.
"""

from __future__ import annotations

from evalframe._private.rules import Expr, Namespace
from evalframe._private.rules.boundaries import exceeds

CASE_STATUSES = ("new", "removed", "error", "regression", "improvement", "unchanged")
"""case_deltas / evaluator_deltas status values, in rule order."""
STATUS_NEW, STATUS_REMOVED, STATUS_ERROR = CASE_STATUSES[:3]
STATUS_REGRESSION, STATUS_IMPROVEMENT, STATUS_UNCHANGED = CASE_STATUSES[3:]

REASON_PASS_RATE = "pass_rate_drop"
REASON_MEAN_SCORE = "mean_score_drop"
REASON_LATENCY = "latency_increase"
"""run_deltas reason codes, in the order `reasons` lists them."""


def case_status(
    ns: Namespace,
    *,
    in_baseline: Expr,
    in_candidate: Expr,
    baseline_scored: Expr,
    candidate_scored: Expr,
    baseline_passed: Expr,
    candidate_passed: Expr,
    score_delta: Expr,
    case_delta: Expr,
) -> Expr:
    """The first rule that applies (docs/compare.md#case_deltas): new (not in the baseline), removed
    (not in the candidate), error (a side without a score), regression / improvement when the
    case's verdict flips (passed → not passed / the reverse; a null passed never flips —
    evaluator_deltas pass null), then regression / improvement when the score moved more
    than `case_delta` (exceeds), else unchanged."""
    b_passed, c_passed = baseline_passed.fill_null(False), candidate_passed.fill_null(False)
    return (
        ns.when(~in_baseline)
        .then(ns.lit(STATUS_NEW))
        .when(~in_candidate)
        .then(ns.lit(STATUS_REMOVED))
        .when(~baseline_scored | ~candidate_scored)
        .then(ns.lit(STATUS_ERROR))
        .when(b_passed & ~c_passed)
        .then(ns.lit(STATUS_REGRESSION))
        .when(~b_passed & c_passed)
        .then(ns.lit(STATUS_IMPROVEMENT))
        .when(exceeds(-score_delta, case_delta).fill_null(False))
        .then(ns.lit(STATUS_REGRESSION))
        .when(exceeds(score_delta, case_delta).fill_null(False))
        .then(ns.lit(STATUS_IMPROVEMENT))
        .otherwise(ns.lit(STATUS_UNCHANGED))
    )


def latency_ratio(ns: Namespace, baseline: Expr, candidate: Expr) -> Expr:
    """The relative latency increase (candidate − baseline) / baseline; null unless the
    baseline's latency is positive."""
    return ns.when(baseline > 0).then((candidate - baseline) / baseline)


def significant_drop(ci_high: Expr) -> Expr:
    """A drop is significant when its paired 95 % interval lies wholly below 0; a null
    interval (fewer than two paired cases) is not significant (docs/statistics.md)."""
    return (ci_high < 0).fill_null(False)


def drop_regressed(drop: Expr, limit: Expr, require_significance: Expr, ci_high: Expr) -> Expr:
    """A pair regressed on a rate or score when its drop exceeds the limit and, with
    compare.require_significance, the drop is significant (never null)."""
    lax = ~require_significance.fill_null(False)
    return (exceeds(drop, limit) & (lax | significant_drop(ci_high))).fill_null(False)


def latency_regressed(ns: Namespace, baseline: Expr, candidate: Expr, limit: Expr) -> Expr:
    """A pair regressed on latency when the relative increase exceeds the limit."""
    return exceeds(latency_ratio(ns, baseline, candidate), limit).fill_null(False)


def regression_checks(
    ns: Namespace,
    *,
    pass_rate_drop: Expr,
    mean_score_drop: Expr,
    baseline_latency: Expr,
    candidate_latency: Expr,
    max_pass_rate_drop: Expr,
    max_mean_score_drop: Expr,
    max_latency_increase: Expr,
    require_significance: Expr,
    pass_delta_ci_high: Expr,
    mean_delta_ci_high: Expr,
) -> dict[str, Expr]:
    """Reason code → whether the pair regressed for it (never null): a drop of the pass
    rate / mean score that exceeds its limit (and, with compare.require_significance, is
    significant), a relative latency increase that exceeds its limit."""
    return {
        REASON_PASS_RATE: drop_regressed(
            pass_rate_drop, max_pass_rate_drop, require_significance, pass_delta_ci_high
        ),
        REASON_MEAN_SCORE: drop_regressed(
            mean_score_drop, max_mean_score_drop, require_significance, mean_delta_ci_high
        ),
        REASON_LATENCY: latency_regressed(
            ns, baseline_latency, candidate_latency, max_latency_increase
        ),
    }
