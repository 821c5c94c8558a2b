"""The leaf grid: one row per (ok execution × expected leaf), config-independent.

Score rows are mapped to leaves of the tree; expected leaves an execution has no row for
are added as *missing* rows. Only executions with some leaf rows but fewer than expected
get the (small) anti-join that finds their missing leaves, so complete data costs no grid
expansion at all.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from evalframe._private import schema as S
from evalframe._private.dataset import Dataset
from evalframe._private.tree import Tree

EXEC = "_exec"  # integer execution id (row index of the executions table)
S_NORM = "_s"  # normalized score, null when missing
DATA_W = "_data_w"
EXEC_T = "_exec_threshold"
N_ROWS = "_n_rows"
MISSING_ROW = "_missing_row"


@dataclass(frozen=True)
class LeafGrid:
    executions: pl.LazyFrame  # executions + EXEC
    grid: pl.LazyFrame  # EXEC, PATH, S_NORM, DATA_W, RAW_SCORE, SCALE_MAX (+ passthrough)
    per_exec: pl.LazyFrame  # EXEC, N_ROWS, N_MISSING, N_IGNORED


def data_evaluators(ds: Dataset) -> list[str]:
    """Distinct evaluator names in the data (the leaves of an unconfigured tree)."""
    return ds.scores.select(pl.col(S.EVALUATOR).unique()).collect()[S.EVALUATOR].to_list()


def build_leaf_grid(ds: Dataset, tree: Tree, *, passthrough: bool = False) -> LeafGrid:
    execs = ds.executions.with_row_index(EXEC).with_columns(pl.col(EXEC).cast(pl.Int64))
    keyed = execs.select(*S.EXECUTION_KEY, EXEC, S.STATUS, pl.col(S.THRESHOLD).alias(EXEC_T))
    extra = [S.LABEL, S.REASON] if passthrough else []
    extra += _extra_score_columns(ds) if passthrough else []

    scores = ds.scores.join(keyed, on=S.EXECUTION_KEY, how="inner").filter(
        pl.col(S.STATUS) == S.STATUS_OK
    )
    if tree.configured:
        emap = tree.evaluator_map().lazy()
        mapped = scores.join(emap, on=S.EVALUATOR, how="inner")
        ignored = (
            scores.join(emap, on=S.EVALUATOR, how="anti")
            .group_by(EXEC)
            .agg(pl.len().cast(pl.Int64).alias(S.N_IGNORED))
        )
    else:
        mapped = scores.with_columns(pl.col(S.EVALUATOR).alias(S.PATH))
        ignored = None

    rows = mapped.select(
        EXEC,
        S.RUN_ID,
        EXEC_T,
        S.PATH,
        (pl.col(S.SCORE) / pl.col(S.SCALE_MAX)).alias(S_NORM),
        pl.col(S.WEIGHT).alias(DATA_W),
        pl.col(S.SCORE).alias(S.RAW_SCORE),
        S.SCALE_MAX,
        *extra,
    )
    counts = rows.group_by(EXEC).agg(
        pl.len().cast(pl.Int64).alias(N_ROWS),
        pl.col(S_NORM).is_null().sum().cast(pl.Int64).alias("_n_null"),
    )

    # expected leaves: static for a configured tree, per run otherwise
    if tree.configured:
        leaf_paths = pl.LazyFrame({S.PATH: [n.path for n in tree.leaves]})
        n_expected = pl.lit(len(tree.leaves), dtype=pl.Int64)
        incomplete = counts.filter(pl.col(N_ROWS) < n_expected)
        candidates = incomplete.select(EXEC).join(leaf_paths, how="cross")
    else:
        per_run = ds.scores.select(S.RUN_ID, pl.col(S.EVALUATOR).alias(S.PATH)).unique()
        expected_n = per_run.group_by(S.RUN_ID).agg(pl.len().cast(pl.Int64).alias("_n_exp"))
        incomplete = (
            counts.join(execs.select(EXEC, S.RUN_ID), on=EXEC)
            .join(expected_n, on=S.RUN_ID)
            .filter(pl.col(N_ROWS) < pl.col("_n_exp"))
        )
        candidates = (
            incomplete.select(EXEC, S.RUN_ID).join(per_run, on=S.RUN_ID).select(EXEC, S.PATH)
        )
    absent = candidates.join(rows.select(EXEC, S.PATH), on=[EXEC, S.PATH], how="anti")
    absent = absent.join(execs.select(EXEC, S.RUN_ID, pl.col(S.THRESHOLD).alias(EXEC_T)), on=EXEC)
    grid = pl.concat([rows, absent], how="diagonal_relaxed")
    grid = grid.with_columns(pl.col(S_NORM).is_null().alias(MISSING_ROW))

    absent_n = absent.group_by(EXEC).agg(pl.len().cast(pl.Int64).alias("_n_absent"))
    per_exec = counts.join(absent_n, on=EXEC, how="left").select(
        EXEC,
        N_ROWS,
        (pl.col("_n_null") + pl.col("_n_absent").fill_null(0)).alias(S.N_MISSING),
    )
    if ignored is not None:
        per_exec = per_exec.join(ignored, on=EXEC, how="full", coalesce=True)
    else:
        per_exec = per_exec.with_columns(pl.lit(0, dtype=pl.Int64).alias(S.N_IGNORED))
    per_exec = per_exec.with_columns(
        pl.col(N_ROWS).fill_null(0),
        pl.col(S.N_MISSING).fill_null(0),
        pl.col(S.N_IGNORED).fill_null(0),
    )
    return LeafGrid(executions=execs, grid=grid, per_exec=per_exec)


def _extra_score_columns(ds: Dataset) -> list[str]:
    declared = set(S.SCORES_COLUMNS)
    return [c for c in ds.scores.collect_schema().names() if c not in declared]
