"""95 % intervals and minimum detectable effects (docs/compare.md#run_deltas,
docs/statistics.md#power)."""

from __future__ import annotations

from evalframe._private.rules import Expr
from evalframe._private.rules.constants import MDE_FACTOR, Z_95


def ci_low(value: Expr, se: Expr) -> Expr:
    """Lower end of the 95 % interval: value − Z_95 · se."""
    return value - Z_95 * se


def ci_high(value: Expr, se: Expr) -> Expr:
    """Upper end of the 95 % interval: value + Z_95 · se."""
    return value + Z_95 * se


def mde(se: Expr) -> Expr:
    """Minimum detectable effect at α 0.05 two-sided and power 0.8: MDE_FACTOR · se."""
    return MDE_FACTOR * se
