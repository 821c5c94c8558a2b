"""The leaf grid: one row per (ok execution × expected leaf), config-independent.

Score rows are mapped to leaf node ids of the tree; expected leaves an execution has no
row for are added as *missing* rows. Only executions with some leaf rows but fewer than
expected get the (small) anti-join that finds their missing leaves, so complete data costs
no grid expansion at all. Integer ids keep the hot joins and group-bys on integer keys.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from evalframe._private import schema as S
from evalframe._private.data.dataset import Dataset
from evalframe._private.data.keyed import EVAL, EXEC, EXEC_T, OK
from evalframe._private.rules.normalize import normalized_score
from evalframe._private.scoring.tree import NODE, Tree

S_NORM = "_s"  # normalized score, null when missing
DATA_W = "_data_w"
N_ROWS = "_n_rows"
N_EXPECTED = "_n_expected"
MISSING_ROW = "_missing_row"

# --- order-independent sums (docs/architecture.md, "Order-independent sums") -------------
FIXED_BITS = 80
"""Fractional bits of the fixed-point sums: a term x is summed as floor(x · 2^80), an Int128."""
BAND_LO = 2.0**-24
BAND_HI = 2.0**24
"""Weights in [BAND_LO, BAND_HI) (or 0) are summed exactly: the terms w·s and w of a row are
below 2^104 in fixed point, so 2^23 rows of a group cannot overflow an Int128, and the
smallest positive weight keeps 56 bits. A group with a weight outside (or an invalid
term) is summed in floating point, in the order the rows arrive."""
_UNIT = 2.0**FIXED_BITS


def in_band(w: pl.Expr, s: pl.Expr | None = None) -> pl.Expr:
    """Whether a row's weight (and normalized score, when given) can be summed exactly:
    w is 0 or in [BAND_LO, BAND_HI), s in [0, 1]. False for NaN, inf, negative values."""
    ok = (w == 0.0) | ((w >= BAND_LO) & (w < BAND_HI))
    if s is not None:
        ok = ok & (s >= 0.0) & (s <= 1.0)
    return ok.fill_null(False)


def fixed(x: pl.Expr) -> pl.Expr:
    """x (non-negative, below 2^47) in fixed point: floor(x · 2^80) as an Int128. The
    product and the floor are exact in binary floating point, so every engine computes
    the same integer; integer sums are associative, so the sum does not depend on the
    order of the rows, the thread count or the engine."""
    # strict=False: a value out of range (only ever a row outside the band, which is not
    # summed) becomes null instead of an error, whatever order the engine evaluates in
    return (x * _UNIT).floor().cast(pl.Int128, strict=False)


def fixed_value(q: pl.Expr) -> pl.Expr:
    """A fixed-point sum back as a float: one correctly rounded conversion (Int128 → f64),
    then an exact scaling by 2^-80."""
    return q.cast(pl.Float64) * (1.0 / _UNIT)


def fixed_of(x: float) -> int:
    """`fixed` of one Python float (for sums of a config's own weights)."""
    import math

    return math.floor(x * _UNIT)


@dataclass(frozen=True)
class LeafGrid:
    executions: pl.LazyFrame  # executions + EXEC
    grid: pl.LazyFrame  # EXEC, NODE, EVAL, EXEC_T, S_NORM, DATA_W, RAW_SCORE, SCALE_MAX
    per_exec: pl.LazyFrame  # EXEC, N_ROWS, N_MISSING, N_IGNORED
    expected: pl.LazyFrame  # EXEC, N_EXPECTED: expected leaves of each execution


def data_evaluators(ds: Dataset) -> list[str]:
    """Distinct evaluator names in the data (the leaves of an unconfigured tree)."""
    return list(ds.keyed.evaluators)


def build_leaf_grid(ds: Dataset, tree: Tree) -> LeafGrid:
    execs = ds.keyed.executions.lazy()
    by_name = tree.evaluator_map() if tree.configured else tree.index()
    lookup = pl.Series([by_name.get(name) for name in ds.keyed.evaluators], dtype=pl.Int32)
    node = pl.lit(lookup).gather(pl.col(EVAL))  # evaluator id -> leaf node id (or null)
    scores = ds.keyed.scores.lazy().filter(pl.col(OK)).with_columns(node.alias(NODE))
    # one pass over the score rows: rows per execution, null scores, ignored rows
    counts = scores.group_by(EXEC).agg(
        pl.col(NODE).is_not_null().sum().cast(pl.Int64).alias(N_ROWS),
        (pl.col(NODE).is_not_null() & pl.col(S.SCORE).is_null())
        .sum()
        .cast(pl.Int64)
        .alias("_n_null"),
        pl.col(NODE).is_null().sum().cast(pl.Int64).alias(S.N_IGNORED),
    )
    # a leaf's direction (higher_is_better) is part of the tree's shape: one per node
    lower = [i for i, n in enumerate(tree.nodes) if not n.higher_is_better]
    direction: pl.Expr | bool = True
    if lower:
        flags = pl.Series([i not in lower for i in range(tree.n_nodes)], dtype=pl.Boolean)
        direction = pl.lit(flags).gather(pl.col(NODE))
    rows = scores.filter(pl.col(NODE).is_not_null()).select(
        EXEC,
        EXEC_T,
        NODE,
        EVAL,
        normalized_score(pl, pl.col(S.SCORE), pl.col(S.SCALE_MAX), direction).alias(S_NORM),
        pl.col(S.WEIGHT).alias(DATA_W),
        pl.col(S.SCORE).alias(S.RAW_SCORE),
        S.SCALE_MAX,
    )

    # expected leaves: static for a configured tree, per run otherwise
    with_rows = counts.filter(pl.col(N_ROWS) > 0)
    if tree.configured:
        index = tree.index()
        leaf_ids = pl.LazyFrame(
            {NODE: [index[n.path] for n in tree.leaves]}, schema={NODE: pl.Int32}
        )
        incomplete = with_rows.filter(pl.col(N_ROWS) < len(tree.leaves))
        candidates = incomplete.select(EXEC).join(leaf_ids, how="cross")
        expected = execs.select(EXEC, pl.lit(len(tree.leaves), dtype=pl.Int64).alias(N_EXPECTED))
    else:
        per_run = (
            ds.keyed.scores.lazy()
            .join(execs.select(EXEC, S.RUN_ID), on=EXEC)
            .select(S.RUN_ID, node.alias(NODE))
            .unique()
        )
        expected_n = per_run.group_by(S.RUN_ID).agg(pl.len().cast(pl.Int64).alias("_n_exp"))
        incomplete = (
            with_rows.join(execs.select(EXEC, S.RUN_ID), on=EXEC)
            .join(expected_n, on=S.RUN_ID)
            .filter(pl.col(N_ROWS) < pl.col("_n_exp"))
        )
        candidates = incomplete.select(EXEC, S.RUN_ID).join(per_run, on=S.RUN_ID).select(EXEC, NODE)
        expected = (
            execs.select(EXEC, S.RUN_ID)
            .join(expected_n, on=S.RUN_ID, how="left")
            .select(EXEC, pl.col("_n_exp").fill_null(0).alias(N_EXPECTED))
        )
    absent = candidates.join(rows.select(EXEC, NODE), on=[EXEC, NODE], how="anti").join(
        execs.select(EXEC, pl.col(S.THRESHOLD).alias(EXEC_T)), on=EXEC
    )
    grid = pl.concat([rows, absent], how="diagonal_relaxed").with_columns(
        pl.col(S_NORM).is_null().alias(MISSING_ROW)
    )
    absent_n = absent.group_by(EXEC).agg(pl.len().cast(pl.Int64).alias("_n_absent"))
    per_exec = counts.join(absent_n, on=EXEC, how="left").select(
        EXEC,
        N_ROWS,
        (pl.col("_n_null") + pl.col("_n_absent").fill_null(0)).alias(S.N_MISSING),
        S.N_IGNORED,
    )
    return LeafGrid(executions=execs, grid=grid, per_exec=per_exec, expected=expected)
