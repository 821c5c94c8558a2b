"""An execution's threshold, score, verdict and passed flag (docs/scoring.md), written once.

The engines compute the root score of an execution's evaluator tree (weights,
aggregators, the required gate: `scoring/`); these rules turn it, with the execution's
status and outcome checks and the config's policy, into the execution_scores columns.
`ns` is the expression namespace (`polars` or `narwhals`).
"""

from __future__ import annotations

from typing import Literal, get_args

from evalframe._private import schema as S
from evalframe._private.rules import Expr, Namespace
from evalframe._private.rules.boundaries import meets

OnMissing = Literal["skip", "zero", "fail"]
"""on_missing: a missing expected evaluator is left out of the weighted mean, counts as a
score of 0, or fails the execution as a judge error."""
ON_MISSING_SKIP, ON_MISSING_ZERO, ON_MISSING_FAIL = get_args(OnMissing)
OutcomesMode = Literal["gate", "ignore", "both"]
"""outcomes: the outcome checks gate passed, are ignored, or are needed with the verdict."""
OUTCOMES_GATE, OUTCOMES_IGNORE, OUTCOMES_BOTH = get_args(OutcomesMode)


def resolved_threshold(ns: Namespace, override: Expr, execution: Expr, config: Expr) -> Expr:
    """The threshold an execution is judged by: the command line's override, else the
    execution's own `threshold`, else the config's (docs/config.md)."""
    return ns.coalesce(override, execution, config)


def judge_error(ok: Expr, has_rows: Expr, on_missing: Expr, n_missing: Expr) -> Expr:
    """A judge error: an ok execution with judge rows misses an expected evaluator while
    on_missing is `fail` (never null)."""
    return (ok & has_rows & (on_missing == ON_MISSING_FAIL) & (n_missing > 0)).fill_null(False)


def unscored(ok: Expr, judge_error: Expr, has_rows: Expr, root_present: Expr) -> Expr:
    """An ok execution without a judge error whose tree has no score (no judge row, or
    nothing present under the root)."""
    return ok & ~judge_error & ~(has_rows & root_present.fill_null(False))


def required_failed(ok: Expr, has_rows: Expr, gate_fired: Expr) -> Expr:
    """The required gate of the tree fired for an ok execution with judge rows."""
    return ok & has_rows & gate_fired.fill_null(False)


def execution_score(ns: Namespace, ok: Expr, unscored: Expr, judge_error: Expr, root: Expr) -> Expr:
    """The execution's score: null when errored or unscored, 0 on a judge error, else the
    root score of its tree."""
    return ns.when(~ok | unscored).then(None).when(judge_error).then(0.0).otherwise(root)


def _band(ns: Namespace, score: Expr, threshold: Expr, borderline: Expr) -> Expr:
    return (
        ns.when(meets(score, threshold))
        .then(ns.lit(S.VERDICT_PASS))
        .when(~borderline.is_null() & meets(score, borderline))
        .then(ns.lit(S.VERDICT_BORDERLINE))
        .otherwise(ns.lit(S.VERDICT_FAIL))
    )


def verdict_band(ns: Namespace, score: Expr, threshold: Expr, borderline: Expr) -> Expr:
    """pass when the score meets the threshold, borderline when it meets the lower edge of
    the band (if there is one), else fail; null for a null score."""
    return (
        ns.when(score.is_null())
        .then(ns.lit(None, dtype=ns.String))
        .otherwise(_band(ns, score, threshold, borderline))
    )


def verdict(
    ns: Namespace,
    *,
    ok: Expr,
    judge_error: Expr,
    unscored: Expr,
    required_failed: Expr,
    score: Expr,
    threshold: Expr,
    borderline: Expr,
) -> Expr:
    """The first verdict that applies: error (the execution errored), fail (judge error),
    unscored, fail (required gate), then the band of the score."""
    return (
        ns.when(~ok)
        .then(ns.lit(S.VERDICT_ERROR))
        .when(judge_error)
        .then(ns.lit(S.VERDICT_FAIL))
        .when(unscored)
        .then(ns.lit(S.VERDICT_UNSCORED))
        .when(required_failed)
        .then(ns.lit(S.VERDICT_FAIL))
        .otherwise(_band(ns, score, threshold, borderline))
    )


def passed(
    ns: Namespace,
    *,
    ok: Expr,
    judge_error: Expr,
    verdict: Expr,
    outcomes_total: Expr,
    outcomes_passed: Expr,
    mode: Expr,
) -> Expr:
    """passed under the outcomes mode: `gate` — every outcome check passed (the verdict
    when there is none); `ignore` — the verdict is pass; `both` — the verdict is pass and
    every outcome check (if any) passed. An errored execution or a judge error never
    passes."""
    is_pass = verdict == S.VERDICT_PASS
    has_out = outcomes_total > 0
    all_out = outcomes_passed == outcomes_total
    return (
        ns.when(~ok | judge_error)
        .then(False)
        .when(mode == OUTCOMES_GATE)
        .then(ns.when(has_out).then(all_out).otherwise(is_pass))
        .when(mode == OUTCOMES_IGNORE)
        .then(is_pass)
        .otherwise(is_pass & (~has_out | all_out))
    )
