"""Run gates (docs/scoring.md#runs): a run passes when its mean score and its pass rate meet the
config's minimums and, when `min_pass_rate_lower` is set, the lower 95 % bound of its pass rate
meets that too; a run without a value (no scored execution) fails a gate."""

from __future__ import annotations

from evalframe._private import schema as S
from evalframe._private.rules import Expr, Namespace
from evalframe._private.rules.boundaries import meets
from evalframe._private.rules.wilson import effective_n, wilson_low

GATES = {
    S.MIN_MEAN_SCORE: S.MEAN_SCORE_GATE,
    S.MIN_PASS_RATE: S.PASS_RATE_GATE,
    S.MIN_PASS_RATE_LOWER: S.PASS_RATE_LOWER_GATE,
}
"""Config key (and run_summary column of its limit) → its gate column, in the order
run_gate_failures lists them."""


def gate(value: Expr, minimum: Expr) -> Expr:
    """A run gate holds when the run's value meets the minimum; a run without a value
    (null: no scored execution) fails it."""
    return meets(value, minimum).fill_null(False)


N_EFF = "_n_eff"
"""A step column of pass_rate_lower (one expression would grow too large for Spark's code
generation)."""


def pass_rate_lower(ns: Namespace) -> list[list[Expr]]:
    """The steps (each a `with_columns`) to pass_rate_lower, the Wilson lower bound of the
    run's pass rate over the case-clustered effective sample size (`rules.wilson.effective_n`,
    the run's cases when the SE says nothing); the caller drops N_EFF."""
    p = ns.col(S.PASS_RATE)
    n = effective_n(ns, p, ns.col(S.PASS_RATE_SE), ns.col(S.CASES).cast(ns.Float64))
    return [[n.alias(N_EFF)], [wilson_low(ns, p, ns.col(N_EFF)).alias(S.PASS_RATE_LOWER)]]


def gate_columns(
    ns: Namespace, min_mean_score: Expr, min_pass_rate: Expr, min_pass_rate_lower: Expr
) -> list[Expr]:
    """The three gates of run_summary rows (after `pass_rate_lower`); the bound's gate holds
    when its limit is null (not set)."""
    lower = ns.col(S.PASS_RATE_LOWER)
    bound = ns.when(min_pass_rate_lower.is_null()).then(True)
    return [
        gate(ns.col(S.MEAN_SCORE), min_mean_score).alias(S.MEAN_SCORE_GATE),
        gate(ns.col(S.PASS_RATE), min_pass_rate).alias(S.PASS_RATE_GATE),
        bound.otherwise(gate(lower, min_pass_rate_lower)).alias(S.PASS_RATE_LOWER_GATE),
    ]


def run_passed(ns: Namespace) -> Expr:
    """run_passed: every gate holds."""
    held = [ns.col(g) for g in GATES.values()]
    return (held[0] & held[1] & held[2]).alias(S.RUN_PASSED)


def failed_gates(ns: Namespace) -> dict[str, Expr]:
    """Config key → its gate failed; run_gate_failures lists the keys whose flag is true."""
    return {key: ~ns.col(column) for key, column in GATES.items()}
