"""Three-outcome decisions (docs/compare.md#decisions): a non-inferiority decision per compared
pair.

Each part of the decision is "pass", "fail" or "inconclusive":

- pass rate, on the paired interval of `paired_pass_delta` (docs/statistics.md#paired-comparisons),
  and mean score, on the interval of `mean_delta` (docs/compare.md#run_deltas), each with its margin
  m (config `decide:`): "fail" when the interval's high end < −m − EPS, "pass" when its low end ≥ −m
  − EPS (`meets`), else "inconclusive" (also when the interval is null: fewer than two cases);
- latency: the latency rule of docs/compare.md#run_deltas (`compare.max_latency_increase`): "fail"
  when it regressed, else "pass".

`decision` is "fail" if any part fails, else "inconclusive" if any is, else "pass";
`decision_reasons` names the parts that are not "pass", in the order of
`schema.DECISION_PARTS` (pass_rate, mean_score, latency).

`cases_to_settle` is the number of paired cases at which an inconclusive part's interval
would clear −m on one side, with the same point estimate and per-case variance.

Written over polars-syntax expressions (`ns` = polars or narwhals): the polars engine,
Spark (through narwhals) run these same functions; DuckDB runs the SQL macros
`decide_part`, `decide_latency` and `decide_pair`.
"""

from __future__ import annotations

from evalframe._private import schema as S
from evalframe._private.rules import Expr, Namespace
from evalframe._private.rules.boundaries import exceeds, meets
from evalframe._private.rules.compare import latency_regressed
from evalframe._private.rules.constants import CEIL_TOLERANCE, EPS, Z_95

PASS, FAIL, INCONCLUSIVE = S.DECISION_PASS, S.DECISION_FAIL, S.DECISION_INCONCLUSIVE
PART_PASS_RATE, PART_MEAN_SCORE, PART_LATENCY = S.DECISION_PARTS


def part_decision(ns: Namespace, ci_low: Expr, ci_high: Expr, margin: Expr) -> Expr:
    """One interval against its non-inferiority margin m: "fail" when the high end lies
    below −m (high < −m − EPS, i.e. −high exceeds m), "pass" when the low end meets −m
    (low ≥ −m − EPS), else "inconclusive" (a null interval too). Never null."""
    below = exceeds(-ci_high, margin).fill_null(False)
    clears = meets(ci_low, -margin).fill_null(False)
    return (
        ns.when(below)
        .then(ns.lit(FAIL))
        .when(clears)
        .then(ns.lit(PASS))
        .otherwise(ns.lit(INCONCLUSIVE))
    )


def latency_decision(ns: Namespace, baseline: Expr, candidate: Expr, limit: Expr) -> Expr:
    """The latency part: "fail" when the latency rule of docs/compare.md#run_deltas regressed (the
    relative latency_mean increase exceeds compare.max_latency_increase), else "pass"."""
    regressed = latency_regressed(ns, baseline, candidate, limit)
    return ns.when(regressed).then(ns.lit(FAIL)).otherwise(ns.lit(PASS))


def pair_decision(ns: Namespace, pass_rate: Expr, mean_score: Expr, latency: Expr) -> Expr:
    """The pair's decision from its three parts: "fail" if any fails, else
    "inconclusive" if any is, else "pass"."""
    parts = (pass_rate, mean_score, latency)
    any_fail = (parts[0] == FAIL) | (parts[1] == FAIL) | (parts[2] == FAIL)
    any_open = (parts[0] == INCONCLUSIVE) | (parts[1] == INCONCLUSIVE) | (parts[2] == INCONCLUSIVE)
    return (
        ns.when(any_fail)
        .then(ns.lit(FAIL))
        .when(any_open)
        .then(ns.lit(INCONCLUSIVE))
        .otherwise(ns.lit(PASS))
    )


def decision_parts(
    ns: Namespace,
    *,
    pass_delta_ci_low: Expr,
    pass_delta_ci_high: Expr,
    mean_delta_ci_low: Expr,
    mean_delta_ci_high: Expr,
    baseline_latency: Expr,
    candidate_latency: Expr,
    pass_rate_margin: Expr,
    mean_score_margin: Expr,
    max_latency_increase: Expr,
) -> dict[str, Expr]:
    """Part name (pass_rate, mean_score, latency, in `decision_reasons` order) → its
    decision "pass" | "fail" | "inconclusive" (never null)."""
    return {
        PART_PASS_RATE: part_decision(ns, pass_delta_ci_low, pass_delta_ci_high, pass_rate_margin),
        PART_MEAN_SCORE: part_decision(
            ns, mean_delta_ci_low, mean_delta_ci_high, mean_score_margin
        ),
        PART_LATENCY: latency_decision(
            ns, baseline_latency, candidate_latency, max_latency_increase
        ),
    }


def names_part(part: Expr) -> Expr:
    """A part is named in decision_reasons when it is not "pass"."""
    return part != PASS


def cases_to_settle(ns: Namespace, n: Expr, estimate: Expr, se: Expr, margin: Expr) -> Expr:
    """The paired cases (in all) at which the interval estimate ± Z_95·se of `n` cases
    would clear −margin on one side, with the same point estimate d and per-case SD
    σ = se·√n: its half-width Z_95·σ/√n' must shrink to |d + m|, the distance of the
    estimate from −margin, so n' = ⌈n · (Z_95·se / |d + m|)²⌉ (never below n). Null when
    the interval is null (n < 2), the estimate sits on −margin (|d + m| ≤ EPS: no number
    of cases settles it) or se is 0 (the interval is a point, already settled)."""
    distance = (estimate + margin).abs()
    n_float = n.cast(ns.Float64)
    total = (n_float * (Z_95 * se / distance) ** 2 - CEIL_TOLERANCE).ceil()
    settles = (distance > EPS) & (se > 0) & (n >= 2)
    return ns.when(settles).then(ns.max_horizontal(total, n_float))


def more_cases(ns: Namespace, n: Expr, estimate: Expr, se: Expr, margin: Expr) -> Expr:
    """How many more paired cases settle the part: `cases_to_settle` − n (null as it)."""
    return cases_to_settle(ns, n, estimate, se, margin) - n.cast(ns.Float64)
