"""Bottom-up evaluation of the evaluator tree: one group-by per depth level (docs/scoring.md).

Input is the leaf grid crossed with the batch of configs; every level's children are
grouped by (config, parent node, execution) — packed into one Int64 key, the fastest
group-by key polars has — into the parent's row. Aggregators are per-row `when`
expressions over group statistics, so all configs and all executions of a level are one
query. The only Python loop is over the tree's depth.
"""

from __future__ import annotations

import polars as pl

from evalframe._private import schema as S
from evalframe._private.data.keyed import EXEC, EXEC_T
from evalframe._private.rules import aggregators
from evalframe._private.rules.boundaries import meets
from evalframe._private.rules.constants import (
    ALL_OR_NOTHING,
    MAXIMUM,
    MINIMUM,
    SAFETY_GATE,
    THRESHOLD,
)
from evalframe._private.rules.exact_sums import (
    effective_weight,
    fixed,
    in_band,
    weighted_mean,
)
from evalframe._private.rules.verdicts import ON_MISSING_ZERO, resolved_threshold
from evalframe._private.scoring.leaves import DATA_W, MISSING_ROW, S_NORM
from evalframe._private.scoring.tree import (
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


_KEYS = (PK, CFG, NODE)


_BOUNDARY = pl.coalesce(pl.col(S.MIN_SCORE), pl.col(T))
"""A node's pass boundary: its min_score, else the execution's threshold."""


def by_pk(tree: Tree, column: str) -> pl.Expr:
    """Per-row lookup of a node parameter: gather from the (config group × node) table by
    the dense key PK = CFG · n_nodes + NODE — no join, no hashing."""
    table = tree.node_table().sort(PK)
    return pl.lit(table[column]).gather(pl.col(PK))


def leaf_rows(grid: pl.LazyFrame, policy: pl.LazyFrame, tree: Tree) -> pl.LazyFrame:
    """Leaf rows per (config group × execution × leaf) with weight, presence and pass flags."""
    policy_df = policy.select(CFG, OVERRIDE, CFG_THRESHOLD, ON_MISSING).collect()
    if policy_df.height == 1:  # one group: its values are literals, no cross join
        row = policy_df.row(0, named=True)
        rows = grid.with_columns(
            pl.lit(row[CFG], dtype=pl.Int32).alias(CFG),
            pl.lit(row[OVERRIDE], dtype=pl.Float64).alias(OVERRIDE),
            pl.lit(row[CFG_THRESHOLD], dtype=pl.Float64).alias(CFG_THRESHOLD),
            pl.lit(row[ON_MISSING], dtype=pl.String).alias(ON_MISSING),
        )
    else:
        rows = grid.join(policy_df.lazy(), how="cross")
    zero = pl.col(ON_MISSING) == ON_MISSING_ZERO
    raw_present = pl.col(S_NORM).is_not_null()
    key = pl.col(CFG).cast(pl.Int64) * tree.n_nodes + pl.col(NODE)
    return (
        rows.with_columns(key.alias(PK))
        .with_columns(
            # every node column; projection pushdown drops the ones a plan does not use
            *(by_pk(tree, c).alias(c) for c in tree.node_table().columns if c not in _KEYS),
            resolved_threshold(pl, pl.col(OVERRIDE), pl.col(EXEC_T), pl.col(CFG_THRESHOLD)).alias(
                T
            ),
        )
        .with_columns(
            effective_weight(pl, pl.col(NODE_WEIGHT), pl.col(DATA_W)).alias(W),
            (raw_present & meets(pl.col(S_NORM), _BOUNDARY)).alias(PASSES),
            pl.when(raw_present)
            .then(pl.col(S_NORM))
            .when(zero)
            .then(pl.lit(0.0))
            .otherwise(None)
            .alias(S_NORM),
            (raw_present | zero).alias(PRESENT),
        )
    )


def _level_needs(tree: Tree, depth: int, *, complete: bool) -> set[str]:
    """Statistics the parents of the nodes at `depth` need (static in the tree shape).
    `complete` also keeps what only the root's own pass flag needs (evaluator_scores)."""
    parents = {n.aggregator for n in tree.nodes if n.depth == depth - 1 and n.aggregator}
    children = [n for n in tree.nodes if n.depth == depth]
    paths = {n.path for n in children}
    needs = {"threshold"} if complete or depth > 1 or ALL_OR_NOTHING in parents else set()
    if parents & {MINIMUM, ALL_OR_NOTHING}:
        needs.add("min")
    if MAXIMUM in parents:
        needs.add("max")
    if THRESHOLD in parents:
        needs.add("pass")
    if tree.params.filter(pl.col(S.PATH).is_in(paths) & pl.col(S.REQUIRED)).height:
        needs.add("required")
    if SAFETY_GATE in parents:
        needs.add("gate")
    return needs


def _aggregate(children: pl.LazyFrame, tree: Tree, depth: int, *, complete: bool) -> pl.LazyFrame:
    """Group children rows into their parents' statistics. Row-level terms come first, so
    the group-by only sums, counts and takes extremes — and only what this level's
    aggregators need (what they do not need is filled with its `_DEFAULTS`)."""
    needs = _level_needs(tree, depth, complete=complete)
    parent_pk = pl.col(CFG).cast(pl.Int64) * tree.n_nodes + pl.col(PARENT_NODE)
    terms: list[pl.Expr] = [(parent_pk * EXEC_SPAN + pl.col(EXEC)).alias(GROUP_KEY)]
    aggs: list[pl.Expr] = []
    for need in ("sums", *(n for n in _DEFAULTS if n in needs)):
        more_terms, more_aggs = _terms(need)
        terms += more_terms
        aggs += more_aggs
    unique = {term.meta.output_name(): term for term in terms}  # min and max share S_NORM
    stats = children.select(*unique.values()).group_by(GROUP_KEY).agg(aggs)
    missing = [
        expr.alias(c)
        for need, defaults in _DEFAULTS.items()
        if need not in needs
        for c, expr in defaults.items()
    ]
    return stats.with_columns(missing) if missing else stats


def _weighted_sums(present: pl.Expr, suffix: str) -> tuple[list[pl.Expr], list[pl.Expr]]:
    """Count, Σw·s and Σw of the `present` children, also in fixed point (order-
    independent) unless a weight is out of band: a group with such a child uses the
    floating-point sums (see rules/exact_sums.py)."""
    exact = in_band(pl.col(W), pl.col(S_NORM))
    ws = pl.col(W) * pl.col(S_NORM)
    p, s, w, x = (f"_{c}{suffix}" for c in ("p", "ws", "wp", "x"))
    terms = [
        present.cast(pl.Int32).alias(p),
        pl.when(present).then(ws).otherwise(0.0).alias(s),
        pl.when(present).then(pl.col(W)).otherwise(0.0).alias(w),
        (present & exact).alias(x),
    ]
    aggs = [
        pl.col(p).sum().alias(f"_n_p{suffix}"),
        pl.col(s).sum().alias(f"_sw{suffix}"),
        pl.col(w).sum().alias(f"_sW{suffix}"),
        # converted in the aggregation, not materialized as Int128 row columns (memory)
        pl.when(pl.col(x)).then(fixed(pl, pl.col(s))).sum().alias(f"_sw{suffix}_q"),
        pl.when(pl.col(x)).then(fixed(pl, pl.col(w))).sum().alias(f"_sW{suffix}_q"),
    ]
    return terms, aggs


def _terms(need: str) -> tuple[list[pl.Expr], list[pl.Expr]]:
    """The row terms and aggregations of one need of a level's aggregators."""
    fails = ~pl.col(PASSES)
    if need == "sums":
        terms, aggs = _weighted_sums(pl.col(PRESENT), "")
        return terms, [*aggs, (pl.col("_p").cast(pl.Boolean) & ~pl.col("_x")).sum().alias("_n_out")]
    if need == "threshold":
        return [pl.col(T)], [pl.col(T).first()]
    if need in ("min", "max"):
        s = pl.col(S_NORM)
        return [s], [s.min().alias("_smin") if need == "min" else s.max().alias("_smax")]
    if need == "pass":
        return [pl.col(PASSES).cast(pl.Int32).alias("_pass")], [
            pl.col("_pass").sum().alias("_n_pass")
        ]
    if need == "required":
        return [(pl.col(S.REQUIRED) & fails).alias("_rq")], [pl.col("_rq").max().alias("_req_fail")]
    terms, aggs = _weighted_sums(pl.col(PRESENT) & ~pl.col(IN_R), "_nonr")  # "gate"
    return [*terms, (pl.col(IN_R) & fails).alias("_rf")], [
        *aggs,
        pl.col("_rf").max().alias("_r_fail"),
    ]


_DEFAULTS: dict[str, dict[str, pl.Expr]] = {
    "threshold": {T: pl.lit(None, dtype=pl.Float64)},
    "min": {"_smin": pl.lit(None, dtype=pl.Float64)},
    "max": {"_smax": pl.lit(None, dtype=pl.Float64)},
    "pass": {"_n_pass": pl.lit(0, dtype=pl.Int32)},
    "required": {"_req_fail": pl.lit(False)},
    "gate": {
        "_r_fail": pl.lit(False),
        "_n_p_nonr": pl.lit(0, dtype=pl.Int32),
        "_sw_nonr": pl.lit(0.0),
        "_sW_nonr": pl.lit(0.0),
        "_sw_nonr_q": pl.lit(0, dtype=pl.Int128),
        "_sW_nonr_q": pl.lit(0, dtype=pl.Int128),
    },
}
"""What a level's group-by leaves out when its aggregators do not need it."""


def _node_values(stats: pl.LazyFrame, tree: Tree) -> pl.LazyFrame:
    """Turn group statistics into each composite node's score and pass flag."""
    agg = pl.col(S.AGGREGATOR)
    t = pl.coalesce(NODE_T, T)

    exact = pl.col("_n_out") == 0

    def ratio(num: str, den: str) -> pl.Expr:
        """Weighted mean: of the fixed-point sums (`{num}_q`, `{den}_q`) when every present
        child was summed exactly, else of the floating-point sums."""
        return weighted_mean(
            pl,
            exact=exact,
            num_q=pl.col(f"{num}_q"),
            den_q=pl.col(f"{den}_q"),
            num=pl.col(num),
            den=pl.col(den),
        )

    wavg = ratio("_sw", "_sW")
    pass_ratio = pl.col("_n_pass") / pl.col("_n_p")
    r_fail = pl.col(HAS_R) & pl.col("_r_fail")
    raw = aggregators.aggregate(
        pl,
        aggregator=agg,
        wavg=wavg,
        s_min=pl.col("_smin"),
        s_max=pl.col("_smax"),
        threshold=t,
        pass_ratio=pass_ratio,
        safety_gate_fired=r_fail,
        wavg_rest=pl.when(pl.col("_n_p_nonr") > 0).then(ratio("_sw_nonr", "_sW_nonr")),
    )
    missing = pl.col("_n_p") == 0
    req_fail = pl.col("_req_fail")
    passes_raw = aggregators.node_passes(
        pl,
        aggregator=agg,
        raw=raw,
        pass_ratio=pass_ratio,
        threshold=t,
        boundary=_BOUNDARY,
        safety_gate_fired=r_fail,
    )
    is_threshold = agg == THRESHOLD
    return (
        stats.with_columns(
            (pl.col(GROUP_KEY) // EXEC_SPAN).alias(PK),
            (pl.col(GROUP_KEY) % EXEC_SPAN).alias(EXEC),
        )
        .with_columns(by_pk(tree, c).alias(c) for c in tree.node_table().columns if c != PK)
        .with_columns(
            aggregators.node_score(pl, present=~missing, required_failed=req_fail, raw=raw).alias(
                S_NORM
            ),
            (~missing & ~req_fail & passes_raw).alias(PASSES),
            (~missing).alias(PRESENT),
            aggregators.gate_fired(
                pl,
                present=~missing,
                aggregator=agg,
                required_failed=req_fail,
                safety_gate_fired=r_fail,
            ).alias(GATE_FIRED),
            missing.alias(MISSING_ROW),
            pl.coalesce(NODE_WEIGHT, pl.lit(1.0)).alias(W),
            pl.when(is_threshold).then(pl.col("_n_pass")).cast(pl.Int64).alias(S.CHILDREN_PASSED),
            pl.when(is_threshold).then(pl.col("_n_p")).cast(pl.Int64).alias(S.CHILDREN_PRESENT),
        )
    )


def evaluate_tree(
    grid: pl.LazyFrame, policy: pl.LazyFrame, tree: Tree, *, complete: bool = True
) -> tuple[pl.LazyFrame, list[pl.LazyFrame]]:
    """Return (leaf rows, composite rows per level from deepest to the root).

    The last frame holds the root rows: one per (config × execution that has leaf rows),
    with the execution score in `_s`, `_gate_fired` for required_failed.
    """
    if not tree.leaves:
        raise ValueError("evaluate_tree needs a tree with at least one leaf")
    leaves = leaf_rows(grid, policy, tree)
    composites: list[pl.LazyFrame] = []
    carried: pl.LazyFrame | None = None
    for depth in range(tree.max_depth, 0, -1):
        level_leaves = leaves if tree.is_flat else leaves.filter(pl.col(S.DEPTH) == depth)
        parts = [level_leaves.select(_ROW_COLUMNS)]
        if carried is not None:
            parts.append(carried.select(_ROW_COLUMNS))
        children = parts[0] if len(parts) == 1 else pl.concat(parts, how="vertical_relaxed")
        carried = _node_values(_aggregate(children, tree, depth, complete=complete), tree)
        composites.append(carried)
    return leaves, composites
