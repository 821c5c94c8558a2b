"""`case_summary`: repeated attempts of a case reduced to one row (docs/scoring.md#cases)."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from evalframe._private import schema as S
from evalframe._private.config import Config
from evalframe._private.rules import attempts
from evalframe._private.scoring.policy import (
    ATTEMPT_PASSED,
    ATTEMPT_SCORE,
    as_configs,
    policy_by_config_id,
)

CASE_COLUMNS = S.CASE_COLUMNS


_GROUP = "_case_group"


def case_stats(
    execution_scores: pl.LazyFrame, *, by: Sequence[str] = (), is_sorted: bool = False
) -> pl.LazyFrame:
    """Per (config × run × case) aggregates that case_summary and run_summary share
    (`rules.attempts.case_aggregations`); collect it once and pass it to both to group the
    executions only once. `by` adds grouping columns (a slice value, docs/statistics.md#slices)
    between config_id and the case key.

    `is_sorted=True` promises the executions are sorted by (config_id, `by`, run_id,
    case_id): the groups are then runs of equal neighbours, numbered in one linear pass
    and grouped by that integer (no hashing of string keys), and the result comes out in
    key order."""
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
    out = grouped.agg(*first_keys, *attempts.case_aggregations(pl))
    return out.drop(_GROUP) if is_sorted else out


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
    out = (
        grouped.join(policy, on=S.CONFIG_ID, how="left", maintain_order="left")
        .with_columns(*attempts.case_columns(pl, pl.col(ATTEMPT_SCORE), pl.col(ATTEMPT_PASSED)))
        .select(S.CONFIG_ID, *by, *CASE_COLUMNS[1:])
    )
    return out if is_sorted else out.sort(S.CONFIG_ID, *by, *S.CASE_KEY, nulls_last=True)
