"""Paired statistics of a run comparison (docs/compare.md#run_deltas): mean delta, its standard
error and 95 % interval, and the exact McNemar test, all as lazy polars expressions and plans.

The McNemar p-value needs the Binomial(n, 1/2) lower tail. It is a row-wise expression
in log space: no Python loop, no join, and no underflow for large n (2^-n underflows in
float64 from n = 1075).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import polars as pl

from evalframe._private import schema as S
from evalframe._private.rules import Expr, Namespace
from evalframe._private.rules.intervals import ci_high, ci_low, mde

PAIRED_SCHEMA = {
    S.N_PAIRED: pl.Int64,
    S.MEAN_DELTA: pl.Float64,
    S.MEAN_DELTA_SE: pl.Float64,
    S.MEAN_DELTA_CI_LOW: pl.Float64,
    S.MEAN_DELTA_CI_HIGH: pl.Float64,
    S.N_PASSED_TO_FAILED: pl.Int64,
    S.N_FAILED_TO_PASSED: pl.Int64,
    S.MCNEMAR_P: pl.Float64,
    S.PAIRED_PASS_DELTA: pl.Float64,
    S.PAIRED_PASS_DELTA_SE: pl.Float64,
    S.PAIRED_PASS_DELTA_CI_LOW: pl.Float64,
    S.PAIRED_PASS_DELTA_CI_HIGH: pl.Float64,
    S.MDE_PASS_RATE: pl.Float64,
    S.MDE_MEAN_SCORE: pl.Float64,
}


def mean_se(ns: Namespace, x: Expr) -> Expr:
    """Sample standard deviation of the non-null `x` / sqrt(their count); null below two
    (aggregation)."""
    n = x.count()
    return ns.when(n >= 2).then(x.std(ddof=1) / n.cast(ns.Float64).sqrt())


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
    ns: Namespace,
    delta: Expr,
    paired: Expr,
    matched: Expr,
    b_passed: Expr,
    c_passed: Expr,
) -> list[Expr]:
    """group_by aggregations: `delta` over the `paired` rows (scored on both sides), the
    pass flips over the `matched` rows (present on both sides, a null `passed` counts as
    not passed), and the paired pass delta d = passed_candidate − passed_baseline over the
    matched rows where both case `passed` values are not null
    (docs/statistics.md#paired-comparisons). `ns` is polars or narwhals."""
    paired_delta = ns.when(paired).then(delta)
    both = matched & ~b_passed.is_null() & ~c_passed.is_null()
    d = ns.when(both).then(c_passed.cast(ns.Float64) - b_passed.cast(ns.Float64))
    b, c = b_passed.fill_null(False), c_passed.fill_null(False)
    return [
        paired_delta.count().cast(ns.Int64).alias(S.N_PAIRED),
        paired_delta.mean().alias(S.MEAN_DELTA),
        mean_se(ns, paired_delta).alias(S.MEAN_DELTA_SE),
        (matched & b & ~c).cast(ns.Int64).sum().alias(S.N_PASSED_TO_FAILED),
        (matched & ~b & c).cast(ns.Int64).sum().alias(S.N_FAILED_TO_PASSED),
        d.mean().alias(S.PAIRED_PASS_DELTA),
        mean_se(ns, d).alias(S.PAIRED_PASS_DELTA_SE),
    ]


def interval_columns(col: Callable[[str], Expr]) -> dict[str, Expr]:
    """The 95 % intervals and minimum detectable effects of rows holding
    `paired_aggregations`; `col` builds a column expression (pl.col, nw.col, F.col)."""
    se, pass_d, pass_se = (
        col(S.MEAN_DELTA_SE),
        col(S.PAIRED_PASS_DELTA),
        col(S.PAIRED_PASS_DELTA_SE),
    )
    return {
        S.MEAN_DELTA_CI_LOW: ci_low(col(S.MEAN_DELTA), se),
        S.MEAN_DELTA_CI_HIGH: ci_high(col(S.MEAN_DELTA), se),
        S.PAIRED_PASS_DELTA_CI_LOW: ci_low(pass_d, pass_se),
        S.PAIRED_PASS_DELTA_CI_HIGH: ci_high(pass_d, pass_se),
        S.MDE_PASS_RATE: mde(pass_se),
        S.MDE_MEAN_SCORE: mde(se),
    }


def finish_paired(rows: pl.LazyFrame) -> pl.LazyFrame:
    """Add the 95 % intervals, McNemar's p and the minimum detectable effects to rows
    holding `paired_aggregations` (counts of keys without any case row are null and
    become 0)."""
    counts = [S.N_PAIRED, S.N_PASSED_TO_FAILED, S.N_FAILED_TO_PASSED]
    rows = rows.with_columns(pl.col(counts).fill_null(0).cast(pl.Int64))
    return rows.with_columns(
        mcnemar_p(pl.col(S.N_PASSED_TO_FAILED), pl.col(S.N_FAILED_TO_PASSED)).alias(S.MCNEMAR_P),
        **interval_columns(pl.col),
    )
