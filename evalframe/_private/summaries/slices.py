"""Slices (docs/statistics.md#slices): `slice_summary` — the run_summary columns per config × run ×
slice value — and `slice_deltas` — each slice's paired comparison per pair, with
Benjamini–Hochberg q-values across the slices of a pair.

`--by tag` puts an execution in one slice per distinct value of `executions.tags` (none:
the slice whose value is null); `--by COLUMN` in the slice of that column's value, cast
to string. The slice value is one more grouping key of the same plans that compute
run_summary and compare: nothing loops over slices in Python.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from evalframe._private import schema as S
from evalframe._private.compare import compare as C
from evalframe._private.compare.paired_stats import (
    PAIRED_SCHEMA,
    finish_paired,
)
from evalframe._private.compare.pairs import check_runs
from evalframe._private.config import Config
from evalframe._private.errors import UsageError
from evalframe._private.rules.constants import ALPHA
from evalframe._private.scoring.policy import as_configs
from evalframe._private.stats.multiple import bh_q_values
from evalframe._private.summaries.case_summary import case_summary
from evalframe._private.summaries.run_summary import RUN_COLUMNS, finish_run_summary, summarize

SLICE_KEY = (S.CONFIG_ID, S.RUN_ID, S.SLICE_VALUE)
COMPUTED = frozenset(
    {
        S.CONFIG_ID,
        S.SCORE,
        S.VERDICT,
        S.PASSED,
        S.REQUIRED_FAILED,
        S.JUDGE_ERROR,
        S.N_MISSING,
        S.N_IGNORED,
        S.OUTCOMES_TOTAL,
        S.OUTCOMES_PASSED,
    }
)
"""execution_scores columns computed by scoring (or keys) that are not slicing columns."""
SIGNIFICANCE = ALPHA
"""q-value below which the compare report names a slice's regression."""

SLICE_DELTAS_SCHEMA = pl.Schema(
    {
        **C.PAIR_SCHEMA,
        S.SLICE: pl.String,
        S.SLICE_VALUE: pl.String,
        **{name: pl.Int64 for name in C.STATUS_COUNTS.values()},
        **PAIRED_SCHEMA,
        S.Q_VALUE: pl.Float64,
    }
)


def slice_rows(execution_scores: pl.LazyFrame, by: str) -> pl.LazyFrame:
    """execution_scores with a `slice_value` column: one row per execution × tag for
    `by="tag"` (null for an execution without tags), else the column `by` as a string.
    Raises UsageError naming the columns one can slice by."""
    schema = execution_scores.collect_schema()
    names = schema.names()
    if by == S.SLICE_BY_TAG and S.TAGS in names:
        tags = pl.col(S.TAGS).list.unique()
        return execution_scores.with_columns(
            pl.when(tags.list.len() > 0).then(tags).alias(S.SLICE_VALUE)
        ).explode(S.SLICE_VALUE)
    choices = [
        c for c in names if c not in COMPUTED and not isinstance(schema[c], pl.List | pl.Struct)
    ]
    if by == S.SLICE_BY_TAG or by not in choices:
        raise UsageError(
            f"cannot slice by {by!r}: "
            + (
                "the executions have no `tags` column"
                if by == S.SLICE_BY_TAG
                else "it is computed by scoring, not a column of the executions"
                if by in COMPUTED
                else "it is a list or struct column"
                if by in names
                else "no such executions column"
            )
            + f"; hint: --by tag, or one of the executions columns: {', '.join(choices)}."
        )
    return execution_scores.with_columns(pl.col(by).cast(pl.String).alias(S.SLICE_VALUE))


def slice_summary(
    execution_scores: pl.LazyFrame,
    config: Config | Sequence[Config] | None = None,
    *,
    by: str,
) -> pl.LazyFrame:
    """`slice_summary`: the run_summary columns per config × run × slice value, plus
    `slice` (the --by name) and `slice_value`. Sorted by config, run, slice value (null
    last)."""
    configs = as_configs(config)
    rows = slice_rows(execution_scores.lazy(), by)
    summary = finish_run_summary(summarize(rows, configs, SLICE_KEY), configs, None)
    rest = [c for c in summary.collect_schema().names() if c not in (*RUN_COLUMNS, S.SLICE_VALUE)]
    return (
        summary.with_columns(pl.lit(by, dtype=pl.String).alias(S.SLICE))
        .select(
            S.CONFIG_ID,
            S.RUN_ID,
            S.SLICE,
            S.SLICE_VALUE,
            *[c for c in RUN_COLUMNS if c not in (S.CONFIG_ID, S.RUN_ID)],
            *rest,
        )
        .sort(S.CONFIG_ID, S.RUN_ID, S.SLICE_VALUE, nulls_last=True)
    )


def slice_deltas(
    execution_scores: pl.LazyFrame,
    pairs: Sequence[tuple[str, str]],
    config: Config | Sequence[Config],
    *,
    by: str,
) -> pl.LazyFrame:
    """`slice_deltas`: per config × pair × slice value, the case-status counts and the
    paired statistics of docs/compare.md#run_deltas over the slice's matched cases (a case is in a
    slice when any of its attempts is), and `q_value`, the Benjamini–Hochberg adjusted
    mcnemar_p over the slice values of that pair (docs/statistics.md)."""
    rows = slice_rows(execution_scores.lazy(), by)
    cs = case_summary(rows, config, by=[S.SLICE_VALUE])
    pair_df = C.pair_table(pairs)
    keys = rows.select(S.CONFIG_ID, S.RUN_ID).unique().collect()
    check_runs(
        [*pair_df[S.BASELINE_RUN_ID], *pair_df[S.CANDIDATE_RUN_ID]],
        keys[S.RUN_ID].unique().to_list(),
    )
    limits = C.limits_table(config, sorted(keys[S.CONFIG_ID].unique().to_list())).lazy()
    cases = C.case_rows(cs, pair_df.lazy(), limits, [S.SLICE_VALUE, S.CASE_ID])
    group = [C.PAIR_INDEX, *C.PAIR_KEY, S.SLICE_VALUE]
    per_slice = cases.group_by(group).agg(C.pair_aggregations(pl))
    out = bh_q_values(finish_paired(per_slice), S.MCNEMAR_P, [S.CONFIG_ID, C.PAIR_INDEX], S.Q_VALUE)
    return (
        out.with_columns(pl.lit(by, dtype=pl.String).alias(S.SLICE))
        .with_columns(pl.col(list(C.STATUS_COUNTS.values())).cast(pl.Int64))
        .sort(S.CONFIG_ID, C.PAIR_INDEX, S.SLICE_VALUE, nulls_last=True)
        .select(SLICE_DELTAS_SCHEMA.names())
        .cast(SLICE_DELTAS_SCHEMA)
    )


def significant_regressions(
    slice_deltas: pl.DataFrame, alpha: float = SIGNIFICANCE
) -> pl.DataFrame:
    """The slice rows whose regression survives the Benjamini–Hochberg correction: more
    passed → failed flips than the reverse and q_value < alpha."""
    return slice_deltas.filter(
        (pl.col(S.Q_VALUE) < alpha) & (pl.col(S.N_PASSED_TO_FAILED) > pl.col(S.N_FAILED_TO_PASSED))
    )
