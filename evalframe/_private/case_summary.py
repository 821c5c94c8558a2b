"""`case_summary`: repeated attempts of a case reduced to one row (SPEC §4)."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from evalframe._private import schema as S
from evalframe._private.config import Config
from evalframe._private.policy import ATTEMPT_PASSED, ATTEMPT_SCORE, as_configs, policy_by_config_id

CASE_COLUMNS = [
    S.CONFIG_ID,
    S.RUN_ID,
    S.CASE_ID,
    S.ATTEMPTS,
    S.ERRORED,
    S.SCORED,
    S.UNSCORED,
    S.SCORE,
    S.N_PASSED,
    S.PASS_RATE,
    S.PASSED,
    S.FLAKY,
    S.LATENCY_MEAN,
    S.COST_USD,
]


SCORE_SUM = "_score_sum"


def case_stats(execution_scores: pl.LazyFrame) -> pl.LazyFrame:
    """Per (config × run × case) aggregates that case_summary and run_summary share;
    collect it once and pass it to both to group the executions only once."""
    score = pl.col(S.SCORE)
    return execution_scores.group_by(S.CONFIG_ID, *S.CASE_KEY).agg(
        pl.len().cast(pl.Int64).alias(S.ATTEMPTS),
        (pl.col(S.STATUS) == S.STATUS_ERROR).sum().cast(pl.Int64).alias(S.ERRORED),
        score.is_not_null().sum().cast(pl.Int64).alias(S.SCORED),
        (pl.col(S.VERDICT) == S.VERDICT_UNSCORED).sum().cast(pl.Int64).alias(S.UNSCORED),
        score.sum().alias(SCORE_SUM),
        score.mean().alias("_mean"),
        score.min().alias("_min"),
        score.max().alias("_max"),
        pl.col(S.PASSED).sum().cast(pl.Int64).alias(S.N_PASSED),
        pl.col(S.LATENCY_MS).mean().alias(S.LATENCY_MEAN),
        pl.when(pl.col(S.COST_USD).is_not_null().any())
        .then(pl.col(S.COST_USD).sum())
        .alias(S.COST_USD),
    )


def case_passed(n: pl.Expr, k: pl.Expr) -> pl.Expr:
    """A case passes when all / any / more than half of its n attempts (k passed) did."""
    rule = pl.col(ATTEMPT_PASSED)
    return (
        pl.when(rule == "any")
        .then(k >= 1)
        .when(rule == "majority")
        .then(2 * k > n)
        .otherwise(k == n)
    )


def case_summary(
    execution_scores: pl.LazyFrame,
    config: Config | Sequence[Config] | None = None,
    *,
    stats: pl.LazyFrame | None = None,
) -> pl.LazyFrame:
    """One row per (config × run × case) from `execution_scores`.

    `config` supplies the `attempts` policy of each config_id in the frame; `stats`
    (from `case_stats`) skips grouping the executions again.
    """
    policy = policy_by_config_id(as_configs(config)).select(
        S.CONFIG_ID, ATTEMPT_SCORE, ATTEMPT_PASSED
    )
    grouped = case_stats(execution_scores) if stats is None else stats
    how = pl.col(ATTEMPT_SCORE)
    n, k = pl.col(S.ATTEMPTS), pl.col(S.N_PASSED)
    return (
        grouped.join(policy, on=S.CONFIG_ID, how="left")
        .with_columns(
            pl.when(how == "min")
            .then(pl.col("_min"))
            .when(how == "max")
            .then(pl.col("_max"))
            .otherwise(pl.col("_mean"))
            .alias(S.SCORE),
            (k / n).alias(S.PASS_RATE),
            case_passed(n, k).alias(S.PASSED),
            ((k > 0) & (k < n)).alias(S.FLAKY),
        )
        .select(CASE_COLUMNS)
        .sort(S.CONFIG_ID, *S.CASE_KEY)
    )
