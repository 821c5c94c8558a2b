"""`threshold_curve`: each run's pass rate as an exact step function of the threshold."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from evalframe._private import schema as S
from evalframe._private.config import Config
from evalframe._private.rules.boundaries import meets
from evalframe._private.rules.constants import EPS
from evalframe._private.scoring.policy import OUTCOMES_MODE, policy_by_config_id


def threshold_curve(
    execution_scores: pl.LazyFrame, config: Config | Sequence[Config]
) -> pl.LazyFrame:
    """`threshold_curve`: per (config × run) and every distinct execution score t, the
    pass rate if t were the execution threshold, and whether mean_score meets t.

    Exact: pass rate is a step function of t that only changes at score values. Passes
    decided without the threshold (errors, judge errors, required gates, outcome-gated
    executions) are held fixed; a tree whose gates read the threshold needs `sweep`.
    """
    mode = policy_by_config_id(list(config) if isinstance(config, Sequence) else [config]).select(
        S.CONFIG_ID, OUTCOMES_MODE
    )
    key = [S.CONFIG_ID, S.RUN_ID]
    ex = execution_scores.join(mode, on=S.CONFIG_ID, how="left")
    out_total, out_passed = pl.col(S.OUTCOMES_TOTAL), pl.col(S.OUTCOMES_PASSED)
    all_out = out_passed == out_total
    fixed = (
        pl.when((pl.col(S.STATUS) == S.STATUS_ERROR) | pl.col(S.JUDGE_ERROR))
        .then(False)
        .when((pl.col(OUTCOMES_MODE) == "gate") & (out_total > 0))
        .then(all_out)
        .when(pl.col(S.SCORE).is_null() | pl.col(S.REQUIRED_FAILED))
        .then(False)
        .when((pl.col(OUTCOMES_MODE) == "both") & (out_total > 0) & ~all_out)
        .then(False)
        .otherwise(None)
    )
    ex = ex.with_columns(fixed.alias("_fixed"))
    totals = ex.group_by(key).agg(
        pl.len().cast(pl.Int64).alias(S.N_EXECUTIONS),
        pl.col("_fixed").fill_null(False).sum().alias("_n_fixed_pass"),
        pl.col(S.SCORE).mean().alias(S.MEAN_SCORE),
    )
    driven = (
        ex.filter(pl.col("_fixed").is_null())
        .select(*key, S.SCORE)
        .sort(*key, S.SCORE)
        .with_columns(pl.int_range(pl.len()).over(key).alias("_below"))
    )
    n_driven = driven.group_by(key).agg(pl.len().alias("_n_driven"))
    thresholds = (
        ex.filter(pl.col(S.SCORE).is_not_null())
        .select(*key, pl.col(S.SCORE).round(12).alias(S.THRESHOLD))
        .unique()
        .with_columns((pl.col(S.THRESHOLD) - EPS).alias("_k"))
        .sort("_k")
    )
    curve = thresholds.join_asof(
        driven.sort(S.SCORE),
        left_on="_k",
        right_on=S.SCORE,
        by=key,
        strategy="forward",
        check_sortedness=False,
    )
    return (
        curve.join(n_driven, on=key, how="left")
        .join(totals, on=key, how="left")
        .with_columns(
            (
                pl.col("_n_fixed_pass")
                + pl.when(pl.col("_below").is_null())
                .then(0)
                .otherwise(pl.col("_n_driven") - pl.col("_below"))
            )
            .cast(pl.Int64)
            .alias(S.N_PASSED)
        )
        .select(
            *key,
            S.THRESHOLD,
            S.N_EXECUTIONS,
            S.N_PASSED,
            (pl.col(S.N_PASSED) / pl.col(S.N_EXECUTIONS)).alias(S.PASS_RATE),
            S.MEAN_SCORE,
            meets(pl.col(S.MEAN_SCORE), pl.col(S.THRESHOLD))
            .fill_null(False)
            .alias(S.MEAN_SCORE_GATE),
        )
        .sort(*key, S.THRESHOLD)
    )
