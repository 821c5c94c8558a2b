"""Run gates (docs/scoring.md#runs): a run passes when its mean score and its pass rate meet the
config's minimums; a run without a value (no scored execution) fails the gate."""

from __future__ import annotations

from evalframe._private import schema as S
from evalframe._private.rules import Expr, Namespace
from evalframe._private.rules.boundaries import meets


def gate(value: Expr, minimum: Expr) -> Expr:
    """A run gate holds when the run's value meets the minimum; a run without a value
    (null: no scored execution) fails it."""
    return meets(value, minimum).fill_null(False)


def gate_columns(ns: Namespace, min_mean_score: Expr, min_pass_rate: Expr) -> list[Expr]:
    """mean_score_gate and pass_rate_gate of run_summary rows."""
    return [
        gate(ns.col(S.MEAN_SCORE), min_mean_score).alias(S.MEAN_SCORE_GATE),
        gate(ns.col(S.PASS_RATE), min_pass_rate).alias(S.PASS_RATE_GATE),
    ]


def run_passed(ns: Namespace) -> Expr:
    """run_passed: both gates hold."""
    return (ns.col(S.MEAN_SCORE_GATE) & ns.col(S.PASS_RATE_GATE)).alias(S.RUN_PASSED)
