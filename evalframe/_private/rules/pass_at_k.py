"""pass@k and pass^k of a case: unbiased estimates from its n attempts, c of them passed.

C(a, k) / C(b, k) = Π_{i<k} (a − k + 1 + i) / (b − k + 1 + i) for 0 <= a <= b: every factor
lies in [0, 1], so the product is exact to a few ulps and never overflows, unlike a ratio
of factorials. `ns` is the expression namespace (`polars` or `narwhals`); k is a
configured integer, so the product is k factors of an expression, not a loop over data.
"""

from __future__ import annotations

from evalframe._private.rules import Expr, Namespace


def comb_ratio(ns: Namespace, a: Expr, b: Expr, k: int) -> Expr:
    """C(a, k) / C(b, k) for integers 0 <= a <= b and k >= 1: 0 when a < k, null when b < k
    (C(b, k) = 0: undefined) or an input is null."""
    a64, b64 = a.cast(ns.Float64), b.cast(ns.Float64)
    ratio: Expr = ns.lit(1.0, dtype=ns.Float64)
    for i in range(k):
        ratio = ratio * ((a64 - (k - 1 - i)) / (b64 - (k - 1 - i)))
    return (
        ns.when(b < k).then(ns.lit(None, dtype=ns.Float64)).when(a < k).then(0.0).otherwise(ratio)
    )


def pass_at_k(ns: Namespace, n: Expr, c: Expr, k: int) -> Expr:
    """pass@k of a case of n attempts, c passed: 1 − C(n − c, k) / C(n, k); null when n < k."""
    return 1.0 - comb_ratio(ns, n - c, n, k)


def pass_all_k(ns: Namespace, n: Expr, c: Expr, k: int) -> Expr:
    """pass^k of a case (all k draws pass): C(c, k) / C(n, k); null when n < k."""
    return comb_ratio(ns, c, n, k)
