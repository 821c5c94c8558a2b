"""Variance components (docs/statistics.md#variance-components): how much of a run's spread
is between cases and how much is between attempts of one case, per config × run × measure.

One-way random-effects ANOVA over the run's scored executions, y_ij = the score (measure
"score") or `passed` as 0/1 (measure "passed") of attempt j of case i; a cases with a value,
N values, m_i values of case i:

    MSB = Σ m_i (ȳ_i − ȳ)² / (a − 1)      MSW = Σ (y_ij − ȳ_i)² / (N − a)
    n0  = (N − Σ m_i² / N) / (a − 1)
    var_within = MSW, var_between = max(0, (MSB − MSW) / n0), icc = vb / (vb + vw)

Every sum is one aggregation of the execution_scores plan (cases, then runs): nothing loops
over runs or cases in Python.
"""

from __future__ import annotations

import polars as pl

from evalframe._private import schema as S

RUN_KEY = [S.CONFIG_ID, S.RUN_ID]


def variance_components(execution_scores: pl.LazyFrame) -> pl.LazyFrame:
    """variance_components: one row per config × run × measure ("score", "passed") of the
    runs with a scored execution; variances null (counts kept) when a run has fewer than two
    cases or no case with a second attempt."""
    scored = execution_scores.filter(pl.col(S.SCORE).is_not_null())
    measures = [
        scored.select(
            *RUN_KEY, S.CASE_ID, pl.lit(name).alias(S.MEASURE), value.cast(pl.Float64).alias("y")
        )
        for name, value in ((S.SCORE, pl.col(S.SCORE)), (S.PASSED, pl.col(S.PASSED)))
    ]
    key = [*RUN_KEY, S.MEASURE]
    cases = (
        pl.concat(measures)
        # shifted by the run's smallest value (the variances do not change): a run whose
        # values are all equal sums exact zeros, not rounding noise that would make icc 1
        .with_columns(pl.col("y") - pl.col("y").min().over(key))
        .group_by(*key, S.CASE_ID)
        .agg(
            pl.len().alias("m"),
            pl.col("y").mean().alias("mean"),
            ((pl.col("y") - pl.col("y").mean()) ** 2).sum().alias("ss"),
        )
        .with_columns(
            ((pl.col("m") * pl.col("mean")).sum().over(key) / pl.col("m").sum().over(key)).alias(
                "grand"
            )
        )
    )
    runs = cases.group_by(key).agg(
        pl.len().alias(S.CASES),
        pl.col("m").sum().alias(S.VALUES),
        (pl.col("m") * (pl.col("mean") - pl.col("grand")) ** 2).sum().alias("ssb"),
        pl.col("ss").sum().alias("ssw"),
        (pl.col("m") ** 2).sum().alias("m2"),
    )
    return runs.select(*_columns()).sort(key)


def _columns() -> list[pl.Expr | str]:
    a, n = pl.col(S.CASES), pl.col(S.VALUES)
    defined = (a >= 2) & (n - a >= 1)
    within = pl.col("ssw") / (n - a)
    n0 = (n - pl.col("m2") / n) / (a - 1)
    between = ((pl.col("ssb") / (a - 1) - within) / n0).clip(lower_bound=0.0)
    total = between + within
    return [
        *RUN_KEY,
        S.MEASURE,
        a.cast(pl.Int64),
        n.cast(pl.Int64),
        (n / a).alias(S.MEAN_ATTEMPTS),
        pl.when(defined).then(within).alias(S.VAR_WITHIN),
        pl.when(defined).then(between).alias(S.VAR_BETWEEN),
        pl.when(defined & (total > 0)).then(between / total).alias(S.ICC),
    ]
