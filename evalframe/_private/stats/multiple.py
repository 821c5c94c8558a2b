"""Benjamini–Hochberg adjusted p-values (q-values) as a polars plan (docs/statistics.md#slices)."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

_RANK = "_bh_rank"
_M = "_bh_m"
_ORDER = "_bh_row"


def bh_q_values(frame: pl.LazyFrame, p: str, groups: Sequence[str], out: str) -> pl.LazyFrame:
    """Add column `out`: the Benjamini–Hochberg adjustment of `p` within each `groups`.

    Over the m p-values of a group sorted ascending, q_(i) = min_{j>=i} min(1, m·p_(j)/j).
    Tied p-values get the same q (the minimum over j >= i reaches the last of the ties), so
    the result does not depend on row order. Null p-values are left out of m and get null.
    The input row order is kept.
    """
    keys = list(groups)
    ranked = (
        frame.with_row_index(_ORDER)
        .with_columns(
            pl.col(p).rank("ordinal").over(keys).alias(_RANK),
            pl.col(p).count().over(keys).alias(_M),
        )
        .sort([*keys, p], nulls_last=True)
    )
    raw = pl.min_horizontal(pl.lit(1.0), pl.col(_M) * pl.col(p) / pl.col(_RANK))
    return (
        ranked.with_columns(raw.cum_min(reverse=True).over(keys).alias(out))
        .with_columns(pl.when(pl.col(p).is_not_null()).then(pl.col(out)).alias(out))
        .sort(_ORDER)
        .drop(_ORDER, _RANK, _M)
    )
