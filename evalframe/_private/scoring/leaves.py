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
