"""Order-independent weighted sums (docs/architecture.md, "Order-independent sums").

A weighted mean Σ w·s / Σ w is summed in fixed point — each term floor(x · 2^80) as an
Int128 — when every term is in band, so the sum is exact and does not depend on the order
of the rows, the thread count or the engine; otherwise in floating point. `ns` is the
expression namespace (`polars` or `narwhals`).
"""

from __future__ import annotations

import math
from typing import Final

from evalframe._private.rules import Expr, Namespace

FIXED_BITS: Final = 80
"""Fractional bits of the fixed-point sums: a term x is summed as floor(x · 2^80), an Int128."""
BAND_LO: Final = 2.0**-24
BAND_HI: Final = 2.0**24
"""Weights in [BAND_LO, BAND_HI) (or 0) are summed exactly: the terms w·s and w of a row are
below 2^104 in fixed point, so 2^23 rows of a group cannot overflow an Int128, and the
smallest positive weight keeps 56 bits. A group with a weight outside (or an invalid
term) is summed in floating point, in the order the rows arrive."""
_UNIT: Final = 2.0**FIXED_BITS


def effective_weight(ns: Namespace, configured: Expr, data: Expr) -> Expr:
    """A leaf's weight: the config's, else the data's, else 1."""
    return ns.coalesce(configured, data, ns.lit(1.0))


def weight_in_band(w: float) -> bool:
    """Whether one configured weight can be summed exactly."""
    return w == 0.0 or BAND_LO <= w < BAND_HI


def in_band(w: Expr, s: Expr | None = None) -> Expr:
    """Whether a row's weight (and normalized score, when given) can be summed exactly:
    w is 0 or in [BAND_LO, BAND_HI), s in [0, 1]. False for NaN, inf, negative values."""
    ok = (w == 0.0) | ((w >= BAND_LO) & (w < BAND_HI))
    if s is not None:
        ok = ok & (s >= 0.0) & (s <= 1.0)
    return ok.fill_null(False)


def fixed(ns: Namespace, x: Expr) -> Expr:
    """x (non-negative, below 2^47) in fixed point: floor(x · 2^80) as an Int128. The
    product and the floor are exact in binary floating point, so every engine computes
    the same integer; integer sums are associative."""
    # strict=False: a value out of range (only ever a row outside the band, which is not
    # summed) becomes null instead of an error, whatever order the engine evaluates in
    return (x * _UNIT).floor().cast(ns.Int128, strict=False)


def fixed_of(x: float) -> int:
    """`fixed` of one Python float (for sums of a config's own weights)."""
    return math.floor(x * _UNIT)


def fixed_value(ns: Namespace, q: Expr) -> Expr:
    """A fixed-point sum back as a float: one correctly rounded conversion (Int128 → f64),
    then an exact scaling by 2^-80."""
    return q.cast(ns.Float64) * (1.0 / _UNIT)


def weighted_mean(
    ns: Namespace, *, exact: Expr, num_q: Expr, den_q: Expr, num: Expr, den: Expr
) -> Expr:
    """Σ w·s / Σ w: of the fixed-point sums (`num_q`, `den_q`) when every term was summed
    exactly (`exact`), else of the floating-point sums; 0 when the weights sum to 0."""
    return (
        ns.when(exact)
        .then(
            ns.when(den_q > 0).then(fixed_value(ns, num_q) / fixed_value(ns, den_q)).otherwise(0.0)
        )
        .when(den > 0)
        .then(num / den)
        .otherwise(0.0)
    )
