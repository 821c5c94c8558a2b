"""Paired statistics of a run comparison (docs/compare.md#run_deltas): mean delta, its standard
error and 95 % interval, and the exact McNemar test, all as lazy polars expressions and plans.

The McNemar p-value needs the Binomial(n, 1/2) lower tail. It is a row-wise expression
in log space: no Python loop, no join, and no underflow for large n (2^-n underflows in
float64 from n = 1075).
"""

from __future__ import annotations

import math

import polars as pl

from evalframe._private import schema as S
from evalframe._private.rules.intervals import ci_high, ci_low, mde

N_PAIRED = S.N_PAIRED
MEAN_DELTA = S.MEAN_DELTA
MEAN_DELTA_SE = S.MEAN_DELTA_SE
MEAN_DELTA_CI_LOW = S.MEAN_DELTA_CI_LOW
MEAN_DELTA_CI_HIGH = S.MEAN_DELTA_CI_HIGH
N_PASSED_TO_FAILED = S.N_PASSED_TO_FAILED
N_FAILED_TO_PASSED = S.N_FAILED_TO_PASSED
MCNEMAR_P = S.MCNEMAR_P
PAIRED_SCHEMA = {
    N_PAIRED: pl.Int64,
    MEAN_DELTA: pl.Float64,
    MEAN_DELTA_SE: pl.Float64,
    MEAN_DELTA_CI_LOW: pl.Float64,
    MEAN_DELTA_CI_HIGH: pl.Float64,
    N_PASSED_TO_FAILED: pl.Int64,
    N_FAILED_TO_PASSED: pl.Int64,
    MCNEMAR_P: pl.Float64,
    S.PAIRED_PASS_DELTA: pl.Float64,
    S.PAIRED_PASS_DELTA_SE: pl.Float64,
    S.PAIRED_PASS_DELTA_CI_LOW: pl.Float64,
    S.PAIRED_PASS_DELTA_CI_HIGH: pl.Float64,
    S.MDE_PASS_RATE: pl.Float64,
    S.MDE_MEAN_SCORE: pl.Float64,
}
_N_PASS_PAIRED = "_n_pass_paired"


def mean_se(delta: pl.Expr, n: pl.Expr) -> pl.Expr:
    """Sample standard deviation of `delta` / sqrt(n); null when n < 2 (aggregation)."""
    return pl.when(n >= 2).then(delta.std(ddof=1) / n.cast(pl.Float64).sqrt())


def mcnemar_p(n01: pl.Expr, n10: pl.Expr) -> pl.Expr:
    """Exact two-sided McNemar p-value, row by row: min(1, 2 · P(X <= min(n01, n10))),
    X ~ Binomial(n01 + n10, 1/2); 1.0 when n01 + n10 = 0.

    P(X <= k) = Σ_{i<=k} C(n, i) / 2^n, with ln C(n, i) = Σ_{j<=i} ln(n - j + 1) - ln j as a
    cumulative sum over a per-row list, so there is no Python loop and no underflow.
    """
    n = (n01 + n10).cast(pl.Int64)
    k = pl.min_horizontal(n01, n10).cast(pl.Int64)
    ln = pl.element().cast(pl.Float64).log()
    numerators = pl.int_ranges(n, n - k, -1, dtype=pl.Int64).list.eval(ln)
    denominators = pl.int_ranges(1, k + 1, dtype=pl.Int64).list.eval(ln)
    ln_comb = (numerators - denominators).list.eval(pl.element().cum_sum())  # i = 1..k
    ln_half_n = -n.cast(pl.Float64) * math.log(2.0)
    tail = ln_half_n.exp() + (ln_comb + ln_half_n).list.eval(pl.element().exp()).list.sum()
    return pl.min_horizontal(pl.lit(1.0), 2.0 * tail)


def paired_aggregations(
    delta: pl.Expr,
    paired: pl.Expr,
    matched: pl.Expr,
    b_passed: pl.Expr,
    c_passed: pl.Expr,
    *,
    b_passed_raw: pl.Expr | None = None,
    c_passed_raw: pl.Expr | None = None,
) -> list[pl.Expr]:
    """group_by aggregations: `delta` over the `paired` rows (scored on both sides), the
    pass flips over the `matched` rows (present on both sides), and the paired pass delta
    d = passed_candidate − passed_baseline over the matched rows where both case `passed`
    values (`*_raw`, default `b_passed` / `c_passed`) are not null
    (docs/statistics.md#paired-comparisons)."""
    paired_delta = delta.filter(paired)
    n = paired_delta.count()
    b_raw = b_passed if b_passed_raw is None else b_passed_raw
    c_raw = c_passed if c_passed_raw is None else c_passed_raw
    d = (c_raw.cast(pl.Float64) - b_raw.cast(pl.Float64)).filter(
        matched & b_raw.is_not_null() & c_raw.is_not_null()
    )
    n_pass = d.count()
    return [
        n.alias(N_PAIRED),
        paired_delta.mean().alias(MEAN_DELTA),
        mean_se(paired_delta, n).alias(MEAN_DELTA_SE),
        (matched & b_passed & ~c_passed).sum().alias(N_PASSED_TO_FAILED),
        (matched & ~b_passed & c_passed).sum().alias(N_FAILED_TO_PASSED),
        d.mean().alias(S.PAIRED_PASS_DELTA),
        mean_se(d, n_pass).alias(S.PAIRED_PASS_DELTA_SE),
    ]


def finish_paired(rows: pl.LazyFrame) -> pl.LazyFrame:
    """Add the 95 % intervals, McNemar's p and the minimum detectable effects to rows
    holding `paired_aggregations` (counts of keys without any case row are null and
    become 0)."""
    counts = [N_PAIRED, N_PASSED_TO_FAILED, N_FAILED_TO_PASSED]
    rows = rows.with_columns(pl.col(counts).fill_null(0).cast(pl.Int64))
    se = pl.col(MEAN_DELTA_SE)
    pass_d, pass_se = pl.col(S.PAIRED_PASS_DELTA), pl.col(S.PAIRED_PASS_DELTA_SE)
    return rows.with_columns(
        ci_low(pl.col(MEAN_DELTA), se).alias(MEAN_DELTA_CI_LOW),
        ci_high(pl.col(MEAN_DELTA), se).alias(MEAN_DELTA_CI_HIGH),
        mcnemar_p(pl.col(N_PASSED_TO_FAILED), pl.col(N_FAILED_TO_PASSED)).alias(MCNEMAR_P),
        ci_low(pass_d, pass_se).alias(S.PAIRED_PASS_DELTA_CI_LOW),
        ci_high(pass_d, pass_se).alias(S.PAIRED_PASS_DELTA_CI_HIGH),
        mde(pass_se).alias(S.MDE_PASS_RATE),
        mde(se).alias(S.MDE_MEAN_SCORE),
    )
