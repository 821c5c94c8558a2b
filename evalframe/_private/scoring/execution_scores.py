"""`execution_scores` and `evaluator_scores`: score every execution under one or more configs.

docs/scoring.md: verdicts, required gates, missing evaluators, outcomes. The tree is evaluated by
`tree_eval`; this module assembles the per-execution row and the per-node rows.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from evalframe._private import schema as S
from evalframe._private.config import Config
from evalframe._private.data.dataset import Dataset
from evalframe._private.data.keyed import EVAL, EXEC
from evalframe._private.rules import verdicts
from evalframe._private.scoring.leaves import (
    MISSING_ROW,
    N_EXPECTED,
    N_ROWS,
    S_NORM,
    LeafGrid,
    build_leaf_grid,
    data_evaluators,
)
from evalframe._private.scoring.policy import (
    BORDERLINE,
    OUTCOMES_MODE,
    TREE,
    as_configs,
    policy_table,
)
from evalframe._private.scoring.tree import CFG, Tree, build_tree, tree_key
from evalframe._private.scoring.tree_eval import (
    CFG_THRESHOLD,
    GATE_FIRED,
    ON_MISSING,
    OVERRIDE,
    PASSES,
    PRESENT,
    W,
    evaluate_tree,
)

EXECUTION_COLUMNS = S.EXECUTION_COLUMNS
EVALUATOR_COLUMNS = S.EVALUATOR_COLUMNS


@dataclass(frozen=True)
class _Plan:
    configs: list[Config]
    tree: Tree  # node parameters per tree-evaluation group (CFG = group index)
    leaf_grid: LeafGrid
    policy: pl.LazyFrame  # one row per config, TREE = its group
    tree_policy: pl.LazyFrame  # one row per group (CFG = group index)


def scoring_plan(
    dataset: Dataset,
    config: Config | Sequence[Config] | None,
    *,
    share_trees: bool = True,
) -> _Plan:
    """Configs whose tree evaluation is identical (same `tree_key`) share one evaluation;
    thresholds, bands, outcome modes and gates then apply per config at execution level."""
    configs = as_configs(config)
    if share_trees:
        keys = [tree_key(c) for c in configs]
        first: dict[str, int] = {}
        for k in keys:
            first.setdefault(k, len(first))
        groups = [first[k] for k in keys]
        reps = [configs[keys.index(k)] for k in first]
    else:
        groups, reps = list(range(len(configs))), configs
    names = () if configs[0].evaluators is not None else data_evaluators(dataset)
    tree = build_tree(reps, names)
    grid = build_leaf_grid(dataset, tree)
    return _Plan(
        configs, tree, grid, policy_table(configs, groups).lazy(), policy_table(reps).lazy()
    )


def execution_scores(
    dataset: Dataset, config: Config | Sequence[Config] | None = None
) -> pl.LazyFrame:
    """`execution_scores`: one row per (config × execution) with score, verdict and passed.

    `config` may be one Config or several sharing one evaluator tree (scored in one plan).
    """
    plan = scoring_plan(dataset, config)
    return _execution_scores(dataset, plan)


def score(dataset: Dataset, config: Config | Sequence[Config] | None = None) -> pl.LazyFrame:
    """Deprecated alias of `execution_scores` (same arguments, same table); warns with a
    DeprecationWarning."""
    warnings.warn(
        "evalframe.score is deprecated; use evalframe.execution_scores (same arguments, "
        "same table).",
        DeprecationWarning,
        stacklevel=2,
    )
    return execution_scores(dataset, config)


def root_rows(plan: _Plan) -> pl.LazyFrame:
    if not plan.tree.leaves:
        return pl.LazyFrame(
            schema={
                TREE: pl.Int32,
                EXEC: pl.Int64,
                "_root": pl.Float64,
                "_root_present": pl.Boolean,
                GATE_FIRED: pl.Boolean,
            }
        )
    _leaves, composites = evaluate_tree(
        plan.leaf_grid.grid, plan.tree_policy, plan.tree, complete=False
    )
    return composites[-1].select(
        pl.col(CFG).alias(TREE),
        EXEC,
        pl.col(S_NORM).alias("_root"),
        pl.col(PRESENT).alias("_root_present"),
        GATE_FIRED,
    )


def execution_inputs(dataset: Dataset, plan: _Plan) -> pl.LazyFrame:
    """Config-independent execution rows: the executions table with EXEC, leaf counts,
    expected leaves and outcome totals."""
    outcomes = dataset.outcomes.group_by(S.EXECUTION_KEY).agg(
        pl.len().cast(pl.Int64).alias(S.OUTCOMES_TOTAL),
        pl.col(S.PASSED).sum().cast(pl.Int64).alias(S.OUTCOMES_PASSED),
    )
    return (
        plan.leaf_grid.executions.join(plan.leaf_grid.per_exec, on=EXEC, how="left")
        .join(plan.leaf_grid.expected, on=EXEC, how="left")
        .join(outcomes, on=S.EXECUTION_KEY, how="left")
        .with_columns(pl.col(S.OUTCOMES_TOTAL).fill_null(0), pl.col(S.OUTCOMES_PASSED).fill_null(0))
    )


VERDICT_ENUM = pl.Enum(
    [S.VERDICT_PASS, S.VERDICT_BORDERLINE, S.VERDICT_FAIL, S.VERDICT_ERROR, S.VERDICT_UNSCORED]
)
"""Verdicts are computed as an Enum (integer compares); `score` returns them as String."""


def apply_policy(frame: pl.LazyFrame) -> pl.LazyFrame:
    """Verdict columns of docs/scoring.md for (config × execution) rows that carry the
    execution inputs, the config's policy columns and the root rows of its tree group."""
    ok = pl.col(S.STATUS) == S.STATUS_OK
    has_rows = pl.col(N_ROWS).fill_null(0) > 0
    frame = frame.with_columns(
        verdicts.resolved_threshold(
            pl, pl.col(OVERRIDE), pl.col(S.THRESHOLD), pl.col(CFG_THRESHOLD)
        ).alias(S.THRESHOLD),
        verdicts.judge_error(ok, has_rows, pl.col(ON_MISSING), pl.col(S.N_MISSING)).alias(
            S.JUDGE_ERROR
        ),
    )
    judge_error = pl.col(S.JUDGE_ERROR)
    frame = frame.with_columns(
        verdicts.unscored(ok, judge_error, has_rows, pl.col("_root_present")).alias("_unscored"),
        verdicts.required_failed(ok, has_rows, pl.col(GATE_FIRED)).alias(S.REQUIRED_FAILED),
        # an ok execution with no matching row misses every expected leaf
        pl.when(has_rows)
        .then(pl.col(S.N_MISSING))
        .otherwise(pl.col(N_EXPECTED))
        .alias(S.N_MISSING),
    )
    score = verdicts.execution_score(pl, ok, pl.col("_unscored"), judge_error, pl.col("_root"))
    frame = frame.with_columns(score.alias(S.SCORE))
    verdict = verdicts.verdict(
        pl,
        ok=ok,
        judge_error=judge_error,
        unscored=pl.col("_unscored"),
        required_failed=pl.col(S.REQUIRED_FAILED),
        score=pl.col(S.SCORE),
        threshold=pl.col(S.THRESHOLD),
        borderline=pl.col(BORDERLINE),
    )
    frame = frame.with_columns(verdict.cast(VERDICT_ENUM).alias(S.VERDICT))
    passed = verdicts.passed(
        pl,
        ok=ok,
        judge_error=judge_error,
        verdict=pl.col(S.VERDICT),
        outcomes_total=pl.col(S.OUTCOMES_TOTAL),
        outcomes_passed=pl.col(S.OUTCOMES_PASSED),
        mode=pl.col(OUTCOMES_MODE),
    )
    zero_if_error = [
        pl.when(ok).then(pl.col(c).fill_null(0)).otherwise(0).alias(c)
        for c in (S.N_MISSING, S.N_IGNORED)
    ]
    return frame.with_columns(passed.alias(S.PASSED), *zero_if_error)


def _execution_scores(dataset: Dataset, plan: _Plan) -> pl.LazyFrame:
    """Execution rows of every config of the plan."""
    inputs = execution_inputs(dataset, plan)
    extra = [
        c for c in dataset.executions.collect_schema().names() if c not in S.EXECUTIONS_COLUMNS
    ]
    frame = inputs.join(plan.policy, how="cross").join(root_rows(plan), on=[TREE, EXEC], how="left")
    return (
        apply_policy(frame)
        .with_columns(pl.col(S.VERDICT).cast(pl.String))
        .select(*EXECUTION_COLUMNS, *extra)
    )


def evaluator_scores(
    dataset: Dataset,
    config: Config | Sequence[Config] | None = None,
    *,
    passthrough: bool = True,
) -> pl.LazyFrame:
    """`evaluator_scores`: one row per (config × scored execution × tree node), root
    included as path "". As large as the input, so the CLI writes it only on request.

    `passthrough=False` leaves label, reason and extra score columns out (null), which
    saves joining every row back to its source row (what `compare` needs)."""
    plan = scoring_plan(dataset, config, share_trees=False)
    if not plan.tree.leaves:
        return pl.LazyFrame(schema=dict.fromkeys(EVALUATOR_COLUMNS, pl.String))
    leaves, composites = evaluate_tree(plan.leaf_grid.grid, plan.policy, plan.tree)
    leaf_part = leaves.with_columns(
        pl.lit(True).alias(S.IS_LEAF),
        pl.lit(None, dtype=pl.String).alias(S.AGGREGATOR),
        pl.lit(None, dtype=pl.Int64).alias(S.CHILDREN_PASSED),
        pl.lit(None, dtype=pl.Int64).alias(S.CHILDREN_PRESENT),
        _score_label(plan.tree).alias(S.SCORE_LABEL),
    )
    parts = [leaf_part] + [c.with_columns(pl.lit(False).alias(S.IS_LEAF)) for c in composites]
    nodes = pl.concat(parts, how="diagonal_relaxed")
    keys = plan.leaf_grid.executions.select(EXEC, *S.EXECUTION_KEY)
    ids = plan.policy.select(CFG, S.CONFIG_ID)
    names = dict(enumerate(dataset.keyed.evaluators))
    out = (
        nodes.join(keys, on=EXEC, how="inner")
        .join(ids, on=CFG, how="inner")
        .with_columns(
            pl.col(S_NORM).alias(S.SCORE),
            pl.col(W).alias(S.WEIGHT),
            pl.col(PASSES).alias(S.PASSED),
            pl.col(MISSING_ROW).alias(S.MISSING),
            pl.col(EVAL)
            .replace_strict(names, default=None, return_dtype=pl.String)
            .alias("_data_evaluator"),
        )
    )
    if not passthrough:
        return out.with_columns(
            pl.lit(None, dtype=pl.String).alias(S.LABEL),
            pl.lit(None, dtype=pl.String).alias(S.REASON),
        ).select(*EVALUATOR_COLUMNS)
    # label, reason and extra columns of the score rows, back onto the leaf rows
    declared = set(S.SCORES_COLUMNS) - {S.LABEL, S.REASON}
    source_cols = [c for c in dataset.scores.collect_schema().names() if c not in declared]
    source = dataset.scores.select(
        *S.EXECUTION_KEY, pl.col(S.EVALUATOR).alias("_data_evaluator"), *source_cols
    )
    extra = [c for c in source_cols if c not in EVALUATOR_COLUMNS]
    return (
        out.drop(S.LABEL, S.REASON, strict=False)
        .join(source, on=[*S.EXECUTION_KEY, "_data_evaluator"], how="left", nulls_equal=False)
        .select(*EVALUATOR_COLUMNS, *extra)
    )


def _score_label(tree: Tree) -> pl.Expr:
    expr: pl.Expr = pl.lit(None, dtype=pl.String)
    if tree.labels.is_empty():
        return expr
    chain: Any = None
    raw = pl.col(S.RAW_SCORE)
    for row in tree.labels.sort(S.PATH, "_order").iter_rows(named=True):
        cond = (pl.col(S.PATH) == row[S.PATH]) & (raw >= row["_lo"]) & (raw <= row["_hi"])
        chain = (pl.when(cond) if chain is None else chain.when(cond)).then(
            pl.lit(row[S.SCORE_LABEL])
        )
    return chain.otherwise(expr) if chain is not None else expr


__all__ = ["evaluator_scores", "score"]
