"""Paired statistics of a run comparison (SPEC §6): mean delta, its standard error and
95 % interval, and the exact McNemar test, all as lazy polars expressions and plans.

The McNemar p-value needs the Binomial(n, 1/2) lower tail. It is computed in log space
for every pair at once: a table of ln(m!) for m = 0..max n (a cumulative sum of ln m)
is joined to one row per (pair, i) with i = 0..k, so there is no Python loop and no
underflow for large n (2^-n underflows in float64 from n = 1075).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import polars as pl

Z_95 = 1.96
"""Normal quantile of the two-sided 95 % interval: mean_delta ± Z_95 · se."""

N_PAIRED = "n_paired"
MEAN_DELTA = "mean_delta"
MEAN_DELTA_SE = "mean_delta_se"
MEAN_DELTA_CI_LOW = "mean_delta_ci_low"
MEAN_DELTA_CI_HIGH = "mean_delta_ci_high"
N_PASSED_TO_FAILED = "n_passed_to_failed"
N_FAILED_TO_PASSED = "n_failed_to_passed"
MCNEMAR_P = "mcnemar_p"
PAIRED_SCHEMA = {
    N_PAIRED: pl.Int64,
    MEAN_DELTA: pl.Float64,
    MEAN_DELTA_SE: pl.Float64,
    MEAN_DELTA_CI_LOW: pl.Float64,
    MEAN_DELTA_CI_HIGH: pl.Float64,
    N_PASSED_TO_FAILED: pl.Int64,
    N_FAILED_TO_PASSED: pl.Int64,
    MCNEMAR_P: pl.Float64,
}

_N = "_mc_n"
_K = "_mc_k"
_I = "_mc_i"
_M = "_mc_m"
_LNF = "_mc_lnf"
_TAIL = "_mc_tail"


def mean_se(delta: pl.Expr, n: pl.Expr) -> pl.Expr:
    """Sample standard deviation of `delta` / sqrt(n); null when n < 2 (aggregation)."""
    return pl.when(n >= 2).then(delta.std(ddof=1) / n.cast(pl.Float64).sqrt())


def mcnemar_p(
    counts: pl.LazyFrame, keys: Sequence[str], n01: str, n10: str, out: str
) -> pl.LazyFrame:
    """One row per key of `counts` with `out` = exact two-sided McNemar p-value.

    p = min(1, 2 · P(X <= min(n01, n10))), X ~ Binomial(n01 + n10, 1/2); 1.0 when
    n01 + n10 = 0. `counts` must hold one row per key with non-null integer counts.
    """
    keys = list(keys)
    table = counts.select(
        *keys,
        (pl.col(n01) + pl.col(n10)).cast(pl.Int64).alias(_N),
        pl.min_horizontal(n01, n10).cast(pl.Int64).alias(_K),
    )
    ln_fact = table.select(
        pl.int_range(0, pl.col(_N).max().fill_null(0) + 1, dtype=pl.Int64).alias(_M)
    ).with_columns(
        pl.when(pl.col(_M) > 0)
        .then(pl.col(_M).cast(pl.Float64).log())
        .otherwise(0.0)
        .cum_sum()
        .alias(_LNF)
    )
    terms = (
        table.with_columns(pl.int_ranges(0, pl.col(_K) + 1, dtype=pl.Int64).alias(_I))
        .explode(_I)
        .with_columns((pl.col(_N) - pl.col(_I)).alias(_M + "_rest"))
        .join(ln_fact.rename({_M: _N, _LNF: "_lnf_n"}), on=_N, how="left")
        .join(ln_fact.rename({_M: _I, _LNF: "_lnf_i"}), on=_I, how="left")
        .join(ln_fact.rename({_M: _M + "_rest", _LNF: "_lnf_r"}), on=_M + "_rest", how="left")
        .group_by(keys)
        .agg(
            (
                pl.col("_lnf_n")
                - pl.col("_lnf_i")
                - pl.col("_lnf_r")
                - pl.col(_N).cast(pl.Float64) * math.log(2.0)
            )
            .exp()
            .sum()
            .alias(_TAIL)
        )
    )
    return (
        table.join(terms, on=keys, how="left", nulls_equal=True)
        .with_columns(
            pl.when(pl.col(_N) == 0)
            .then(1.0)
            .otherwise(pl.min_horizontal(pl.lit(1.0), 2.0 * pl.col(_TAIL)))
            .alias(out)
        )
        .select(*keys, out)
    )


def paired_aggregations(
    delta: pl.Expr, paired: pl.Expr, matched: pl.Expr, b_passed: pl.Expr, c_passed: pl.Expr
) -> list[pl.Expr]:
    """group_by aggregations: `delta` over the `paired` rows (scored on both sides), and
    the pass flips over the `matched` rows (present on both sides)."""
    paired_delta = delta.filter(paired)
    n = paired_delta.count()
    return [
        n.alias(N_PAIRED),
        paired_delta.mean().alias(MEAN_DELTA),
        mean_se(paired_delta, n).alias(MEAN_DELTA_SE),
        (matched & b_passed & ~c_passed).sum().alias(N_PASSED_TO_FAILED),
        (matched & ~b_passed & c_passed).sum().alias(N_FAILED_TO_PASSED),
    ]


def finish_paired(rows: pl.LazyFrame, keys: Sequence[str]) -> pl.LazyFrame:
    """Add the 95 % interval and McNemar's p to rows holding `paired_aggregations`
    (counts of keys without any case row are null and become 0)."""
    counts = [N_PAIRED, N_PASSED_TO_FAILED, N_FAILED_TO_PASSED]
    rows = rows.with_columns(pl.col(counts).fill_null(0).cast(pl.Int64))
    se = pl.col(MEAN_DELTA_SE)
    return rows.join(
        mcnemar_p(rows, keys, N_PASSED_TO_FAILED, N_FAILED_TO_PASSED, MCNEMAR_P),
        on=list(keys),
        how="left",
        nulls_equal=True,
    ).with_columns(
        (pl.col(MEAN_DELTA) - Z_95 * se).alias(MEAN_DELTA_CI_LOW),
        (pl.col(MEAN_DELTA) + Z_95 * se).alias(MEAN_DELTA_CI_HIGH),
    )
