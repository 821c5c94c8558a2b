"""meets and exceeds (docs/scoring.md#boundaries): every boundary of evalframe is one of these two.

Written over polars-syntax expressions: pass `pl.Expr` for the polars engine, `nw.Expr`
for DuckDB and Spark (through narwhals), or a plain float where a side is a literal.
"""

from __future__ import annotations

from evalframe._private.rules import Expr
from evalframe._private.rules.constants import EPS


def meets(x: Expr, b: Expr | float) -> Expr:
    """x meets the boundary b: x >= b - EPS. False when x is NaN (a NaN score never
    passes; DuckDB and Spark order NaN above every number); null when x or b is null."""
    return (x >= b - EPS) & ~x.is_nan()


def exceeds(x: Expr, limit: Expr | float) -> Expr:
    """x exceeds the limit: x > limit + EPS (a regression limit, a run gate's maximum)."""
    return x > limit + EPS
