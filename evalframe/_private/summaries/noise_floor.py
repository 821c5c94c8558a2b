"""The noise floor (docs/statistics.md#noise-floor): how far runs of the same system under the
same config (reruns, other seeds: equal values of a runs column, `--replicates COLUMN`) land
apart, and whether a compared change is larger than that.

For every unordered pair of runs (i, j) of one replicate group, over the cases both have
with `passed` non-null: Δp = the pass-rate difference, Δs = the mean case score difference
over the cases where both scores are non-null, f = the cases whose `passed` differs.
`noise_floor` holds per config × group the root mean square of Δp and Δs over the pairs
and Σf / Σ shared cases. The pairs are one self-join of case_summary: nothing loops over
groups, runs or pairs in Python.
"""

from __future__ import annotations

import polars as pl

from evalframe._private import schema as S
from evalframe._private.errors import UsageError
from evalframe._private.rules.boundaries import meets

GROUP_KEY = [S.CONFIG_ID, S.REPLICATE_GROUP]


def replicate_groups(run_summary: pl.DataFrame, column: str) -> pl.DataFrame:
    """(config_id, run_id, replicate_group) of the runs whose `column` is not null; the
    group is the column's value as text. Raises UsageError naming the runs columns when
    `column` is not one of them or holds lists or structs."""
    schema = run_summary.schema
    if column not in schema or isinstance(schema[column], pl.List | pl.Struct | pl.Array):
        runs_columns = [c for c in schema if c not in S.RUN_COLUMNS]
        raise UsageError(
            f"--replicates {column!r}: not a runs column of plain values; the runs table "
            f"has {', '.join(runs_columns) or 'no extra columns'}"
        )
    return run_summary.select(
        S.CONFIG_ID, S.RUN_ID, pl.col(column).cast(pl.String).alias(S.REPLICATE_GROUP)
    ).filter(pl.col(S.REPLICATE_GROUP).is_not_null())


def noise_floor(case_summary: pl.LazyFrame, groups: pl.DataFrame) -> pl.LazyFrame:
    """noise_floor: one row per config × replicate group of at least two runs."""
    cases = (
        case_summary.select(S.CONFIG_ID, S.RUN_ID, S.CASE_ID, S.PASSED, S.SCORE)
        .filter(pl.col(S.PASSED).is_not_null())
        .join(groups.lazy(), on=[S.CONFIG_ID, S.RUN_ID])
    )
    both = pl.col(S.SCORE).is_not_null() & pl.col(f"{S.SCORE}_j").is_not_null()
    pairs = (
        cases.join(cases, on=[*GROUP_KEY, S.CASE_ID], suffix="_j")
        .filter(pl.col(S.RUN_ID) < pl.col(f"{S.RUN_ID}_j"))
        .group_by(*GROUP_KEY, S.RUN_ID, f"{S.RUN_ID}_j")
        .agg(
            pl.len().alias("shared"),
            (pl.col(f"{S.PASSED}_j").cast(pl.Int64) - pl.col(S.PASSED).cast(pl.Int64))
            .mean()
            .alias("dp"),
            (pl.col(f"{S.SCORE}_j") - pl.col(S.SCORE)).filter(both).mean().alias("ds"),
            (pl.col(S.PASSED) != pl.col(f"{S.PASSED}_j")).sum().alias("flips"),
        )
        .group_by(GROUP_KEY)
        .agg(
            pl.len().cast(pl.Int64).alias(S.PAIRS),
            pl.col("shared").sum().cast(pl.Int64).alias(S.SHARED_CASES),
            (pl.col("dp") ** 2).mean().sqrt().alias(S.RMS_PASS_RATE_DELTA),
            (pl.col("ds") ** 2).mean().sqrt().alias(S.RMS_MEAN_SCORE_DELTA),
            (pl.col("flips").sum() / pl.col("shared").sum()).alias(S.FLIP_RATE),
        )
    )
    runs = (
        groups.lazy()
        .group_by(GROUP_KEY)
        .agg(pl.len().cast(pl.Int64).alias(S.N_RUNS))
        .filter(pl.col(S.N_RUNS) >= 2)
    )
    return (
        runs.join(pairs, on=GROUP_KEY, how="left")
        .with_columns(pl.col(S.PAIRS, S.SHARED_CASES).fill_null(0))
        .select(S.NOISE_FLOOR_COLUMNS)
        .sort(GROUP_KEY)
    )


def with_within_noise(
    run_deltas: pl.DataFrame, floor: pl.DataFrame, groups: pl.DataFrame
) -> pl.DataFrame:
    """run_deltas with `within_noise`: |pass_rate_delta| does not exceed the larger noise
    floor (rms_pass_rate_delta) of the two runs' replicate groups; null when either run has
    no group with a noise floor."""
    rms = groups.join(floor, on=GROUP_KEY).select(S.CONFIG_ID, S.RUN_ID, S.RMS_PASS_RATE_DELTA)
    side = {
        end: rms.rename({S.RUN_ID: run, S.RMS_PASS_RATE_DELTA: f"_rms_{end}"})
        for end, run in (("b", S.BASELINE_RUN_ID), ("c", S.CANDIDATE_RUN_ID))
    }
    larger = pl.max_horizontal("_rms_b", "_rms_c")
    known = pl.col("_rms_b").is_not_null() & pl.col("_rms_c").is_not_null()
    return (
        run_deltas.join(
            side["b"], on=[S.CONFIG_ID, S.BASELINE_RUN_ID], how="left", maintain_order="left"
        )
        .join(side["c"], on=[S.CONFIG_ID, S.CANDIDATE_RUN_ID], how="left", maintain_order="left")
        .with_columns(
            pl.when(known)
            .then(meets(larger, pl.col(S.PASS_RATE_DELTA).abs()))
            .alias(S.WITHIN_NOISE)
        )
        .drop("_rms_b", "_rms_c")
    )
