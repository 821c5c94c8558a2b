"""Bottom-up evaluation of the evaluator tree: one group-by per depth level (SPEC §3.1-3.3).

Input is the leaf grid crossed with the batch of configs; every level's children are
grouped by (config, parent node, execution) — packed into one Int64 key, the fastest
group-by key polars has — into the parent's row. Aggregators are per-row `when`
expressions over group statistics, so all configs and all executions of a level are one
query. The only Python loop is over the tree's depth.
"""

from __future__ import annotations

import polars as pl

from evalframe._private import schema as S
from evalframe._private.keyed import EXEC, EXEC_T
from evalframe._private.leaves import DATA_W, MISSING_ROW, S_NORM
from evalframe._private.tree import (
    CFG,
    HAS_R,
    IN_R,
    NODE,
    NODE_T,
    NODE_WEIGHT,
    PARENT_NODE,
    PK,
    Tree,
)

# per-config policy columns (see policy.py) used here
OVERRIDE = "_threshold_override"
CFG_THRESHOLD = "_cfg_threshold"
ON_MISSING = "_on_missing"

# node-row columns
T = "_T"
W = "_w"
PRESENT = "_present"
PASSES = "_passes"
GATE_FIRED = "_gate_fired"
GROUP_KEY = "_gk"
EXEC_SPAN = 1 << 32
"""Executions per (config, node) slot of the packed group key; ids must stay below it."""

_ROW_COLUMNS = [CFG, EXEC, NODE, PARENT_NODE, W, S_NORM, PRESENT, PASSES, S.REQUIRED, IN_R, T]


def meets(x: pl.Expr, b: pl.Expr | float) -> pl.Expr:
    """x >= b - EPS (SPEC §0)."""
    return x >= (b - S.EPS)


def exceeds(x: pl.Expr, limit: pl.Expr | float) -> pl.Expr:
    """x > L + EPS (SPEC §0)."""
    return x > (limit + S.EPS)


def leaf_rows(grid: pl.LazyFrame, policy: pl.LazyFrame, tree: Tree) -> pl.LazyFrame:
    """Leaf rows per (config × execution × leaf) with weight, presence and pass flags."""
    nodes = tree.node_table().drop(CFG, NODE).lazy()
    zero = pl.col(ON_MISSING) == "zero"
    raw_present = pl.col(S_NORM).is_not_null()
    boundary = pl.coalesce(pl.col(S.MIN_SCORE), pl.col(T))
    key = pl.col(CFG).cast(pl.Int64) * tree.n_nodes + pl.col(NODE)
    return (
        grid.join(policy.select(CFG, OVERRIDE, CFG_THRESHOLD, ON_MISSING), how="cross")
        .with_columns(key.alias(PK))
        .join(nodes, on=PK, how="inner")
        .with_columns(
            pl.coalesce(OVERRIDE, EXEC_T, CFG_THRESHOLD).alias(T),
            pl.coalesce(NODE_WEIGHT, DATA_W, pl.lit(1.0)).alias(W),
        )
        .with_columns(
            (raw_present & meets(pl.col(S_NORM), boundary)).alias(PASSES),
            pl.when(raw_present)
            .then(pl.col(S_NORM))
            .when(zero)
            .then(pl.lit(0.0))
            .otherwise(None)
            .alias(S_NORM),
            (raw_present | zero).alias(PRESENT),
        )
    )


def _aggregate(children: pl.LazyFrame, n_nodes: int) -> pl.LazyFrame:
    """Group children rows into their parents' statistics (row-level terms first, so
    the group-by itself only sums, counts and takes extremes)."""
    present = pl.col(PRESENT)
    non_r = present & ~pl.col(IN_R)
    ws = pl.col(W) * pl.col(S_NORM)
    fails = ~pl.col(PASSES)
    parent_pk = pl.col(CFG).cast(pl.Int64) * n_nodes + pl.col(PARENT_NODE)
    terms = children.select(
        (parent_pk * EXEC_SPAN + pl.col(EXEC)).alias(GROUP_KEY),
        T,
        present.cast(pl.Int32).alias("_p"),
        pl.when(present).then(ws).otherwise(0.0).alias("_ws"),
        pl.when(present).then(pl.col(W)).otherwise(0.0).alias("_wp"),
        S_NORM,
        pl.col(PASSES).cast(pl.Int32).alias("_pass"),
        (pl.col(S.REQUIRED) & fails).alias("_rq"),
        (pl.col(IN_R) & fails).alias("_rf"),
        non_r.cast(pl.Int32).alias("_pn"),
        pl.when(non_r).then(ws).otherwise(0.0).alias("_wsn"),
        pl.when(non_r).then(pl.col(W)).otherwise(0.0).alias("_wpn"),
    )
    return terms.group_by(GROUP_KEY).agg(
        pl.col(T).first(),
        pl.col("_p").sum().alias("_n_p"),
        pl.col("_ws").sum().alias("_sw"),
        pl.col("_wp").sum().alias("_sW"),
        pl.col(S_NORM).min().alias("_smin"),
        pl.col(S_NORM).max().alias("_smax"),
        pl.col("_pass").sum().alias("_n_pass"),
        pl.col("_rq").max().alias("_req_fail"),
        pl.col("_rf").max().alias("_r_fail"),
        pl.col("_pn").sum().alias("_n_p_nonr"),
        pl.col("_wsn").sum().alias("_sw_nonr"),
        pl.col("_wpn").sum().alias("_sW_nonr"),
    )


def _node_values(stats: pl.LazyFrame, nodes: pl.LazyFrame) -> pl.LazyFrame:
    """Turn group statistics into each composite node's score and pass flag."""
    agg = pl.col(S.AGGREGATOR)
    t = pl.coalesce(NODE_T, T)
    boundary = pl.coalesce(pl.col(S.MIN_SCORE), pl.col(T))

    def ratio(num: str, den: str) -> pl.Expr:
        return pl.when(pl.col(den) > 0).then(pl.col(num) / pl.col(den)).otherwise(0.0)

    wavg = ratio("_sw", "_sW")
    pass_ratio = pl.col("_n_pass") / pl.col("_n_p")
    r_fail = pl.col(HAS_R) & pl.col("_r_fail")
    raw = (
        pl.when(agg == "minimum")
        .then(pl.col("_smin"))
        .when(agg == "maximum")
        .then(pl.col("_smax"))
        .when(agg == "all_or_nothing")
        .then(pl.when(meets(pl.col("_smin"), t)).then(wavg).otherwise(0.0))
        .when(agg == "safety_gate")
        .then(
            pl.when(r_fail)
            .then(0.0)
            .when(pl.col("_n_p_nonr") > 0)
            .then(ratio("_sw_nonr", "_sW_nonr"))
            .otherwise(wavg)
        )
        .when(agg == "threshold")
        .then(pass_ratio)
        .otherwise(wavg)
    )
    missing = pl.col("_n_p") == 0
    req_fail = pl.col("_req_fail")
    passes_raw = (
        pl.when(agg == "threshold")
        .then(meets(pass_ratio, t))
        .when(agg == "safety_gate")
        .then(~r_fail & meets(raw, boundary))
        .otherwise(meets(raw, boundary))
    )
    is_threshold = agg == "threshold"
    return (
        stats.with_columns(
            (pl.col(GROUP_KEY) // EXEC_SPAN).alias(PK),
            (pl.col(GROUP_KEY) % EXEC_SPAN).alias(EXEC),
        )
        .join(nodes, on=PK, how="inner")
        .with_columns(
            pl.when(missing).then(None).when(req_fail).then(0.0).otherwise(raw).alias(S_NORM),
            (~missing & ~req_fail & passes_raw).alias(PASSES),
            (~missing).alias(PRESENT),
            (~missing & (req_fail | (agg == "safety_gate") & r_fail)).alias(GATE_FIRED),
            missing.alias(MISSING_ROW),
            pl.coalesce(NODE_WEIGHT, pl.lit(1.0)).alias(W),
            pl.when(is_threshold).then(pl.col("_n_pass")).cast(pl.Int64).alias(S.CHILDREN_PASSED),
            pl.when(is_threshold).then(pl.col("_n_p")).cast(pl.Int64).alias(S.CHILDREN_PRESENT),
        )
    )


def evaluate_tree(
    grid: pl.LazyFrame, policy: pl.LazyFrame, tree: Tree
) -> tuple[pl.LazyFrame, list[pl.LazyFrame]]:
    """Return (leaf rows, composite rows per level from deepest to the root).

    The last frame holds the root rows: one per (config × execution that has leaf rows),
    with the execution score in `_s`, `_gate_fired` for required_failed.
    """
    if not tree.leaves:
        raise ValueError("evaluate_tree needs a tree with at least one leaf")
    leaves = leaf_rows(grid, policy, tree)
    nodes = tree.node_table().lazy()
    composites: list[pl.LazyFrame] = []
    carried: pl.LazyFrame | None = None
    for depth in range(tree.max_depth, 0, -1):
        level_leaves = leaves if tree.is_flat else leaves.filter(pl.col(S.DEPTH) == depth)
        parts = [level_leaves.select(_ROW_COLUMNS)]
        if carried is not None:
            parts.append(carried.select(_ROW_COLUMNS))
        children = parts[0] if len(parts) == 1 else pl.concat(parts, how="vertical_relaxed")
        carried = _node_values(_aggregate(children, tree.n_nodes), nodes)
        composites.append(carried)
    return leaves, composites
