"""`case_summary`: repeated attempts of a case reduced to one row (SPEC §4)."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from evalframe._private import schema as S
from evalframe._private.config import Config
from evalframe._private.scoring.policy import (
    ATTEMPT_PASSED,
    ATTEMPT_SCORE,
    as_configs,
    policy_by_config_id,
)

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


_GROUP = "_case_group"


def case_stats(
    execution_scores: pl.LazyFrame, *, by: Sequence[str] = (), is_sorted: bool = False
) -> pl.LazyFrame:
    """Per (config × run × case) aggregates that case_summary and run_summary share;
    collect it once and pass it to both to group the executions only once. `by` adds
    grouping columns (a slice value, SPEC §10) between config_id and the case key.

    `is_sorted=True` promises the executions are sorted by (config_id, `by`, run_id,
    case_id): the groups are then runs of equal neighbours, numbered in one linear pass
    and grouped by that integer (no hashing of string keys), and the result comes out in
    key order."""
    score = pl.col(S.SCORE)
    keys = (S.CONFIG_ID, *by, *S.CASE_KEY)
    if is_sorted:
        new_group = pl.any_horizontal(
            [pl.col(k).ne_missing(pl.col(k).shift(1)) for k in keys]
        ).fill_null(True)
        grouped = execution_scores.with_columns(
            new_group.cum_sum().set_sorted().alias(_GROUP)
        ).group_by(_GROUP, maintain_order=True)
        first_keys = [pl.col(k).first() for k in keys]
    else:
        grouped = execution_scores.group_by(*keys)
        first_keys = []
    out = grouped.agg(
        *first_keys,
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
    return out.drop(_GROUP) if is_sorted else out


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
    by: Sequence[str] = (),
    is_sorted: bool = False,
) -> pl.LazyFrame:
    """One row per (config × run × case) from `execution_scores`.

    `config` supplies the `attempts` policy of each config_id in the frame; `stats`
    (from `case_stats`, grouped with the same `by`) skips grouping the executions again.
    `by` adds grouping columns (a slice value) after config_id: one row per
    (config × by × run × case). `is_sorted=True` promises `stats` (or the executions)
    are in key order already: the final sort is skipped.
    """
    policy = policy_by_config_id(as_configs(config)).select(
        S.CONFIG_ID, ATTEMPT_SCORE, ATTEMPT_PASSED
    )
    grouped = case_stats(execution_scores, by=by, is_sorted=is_sorted) if stats is None else stats
    how = pl.col(ATTEMPT_SCORE)
    n, k = pl.col(S.ATTEMPTS), pl.col(S.N_PASSED)
    out = (
        grouped.join(policy, on=S.CONFIG_ID, how="left", maintain_order="left")
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
        .select(S.CONFIG_ID, *by, *CASE_COLUMNS[1:])
    )
    return out if is_sorted else out.sort(S.CONFIG_ID, *by, *S.CASE_KEY, nulls_last=True)
