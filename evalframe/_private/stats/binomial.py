"""Ratios of binomial coefficients as polars expressions, for pass@k and pass^k
(SPEC §10).

C(a, k) / C(b, k) = Π_{i=0}^{k-1} (a − i) / (b − i) for 0 <= a <= b and k <= b. The product
runs over a per-row integer range (`int_ranges`), so k may be a column or a literal and
nothing loops over cases in Python. Every factor lies in [0, 1]; the product is exact to a
few ulps and never overflows, unlike a ratio of factorials.
"""

from __future__ import annotations

import polars as pl


def comb_ratio(a: pl.Expr, b: pl.Expr, k: pl.Expr | int) -> pl.Expr:
    """C(a, k) / C(b, k), row by row, for integers 0 <= a <= b and 1 <= k <= b.

    0 when a < k (C(a, k) = 0); null where b < k (C(b, k) = 0: undefined) or an input is
    null.
    """
    k = pl.lit(k, dtype=pl.Int64) if isinstance(k, int) else k.cast(pl.Int64)
    a, b = a.cast(pl.Int64), b.cast(pl.Int64)
    # only rows with a >= k build their k factors (the others are 0): clip the range there
    kk = pl.when(a >= k).then(k).otherwise(0)
    num = pl.int_ranges(a - kk + 1, a + 1, dtype=pl.Int64).cast(pl.List(pl.Float64))
    den = pl.int_ranges(b - kk + 1, b + 1, dtype=pl.Int64).cast(pl.List(pl.Float64))
    ratio = (num / den).list.eval(pl.element().product()).list.first()
    return pl.when(b < k).then(None).when(a < k).then(0.0).otherwise(ratio).cast(pl.Float64)


def pass_at_k(n: pl.Expr, c: pl.Expr, k: int) -> pl.Expr:
    """Unbiased pass@k of one case: 1 − C(n − c, k) / C(n, k); null where n < k."""
    return 1.0 - comb_ratio(n - c, n, k)


def pass_all_k(n: pl.Expr, c: pl.Expr, k: int) -> pl.Expr:
    """Unbiased pass^k of one case (all k draws pass): C(c, k) / C(n, k); null where n < k."""
    return comb_ratio(c, n, k)
