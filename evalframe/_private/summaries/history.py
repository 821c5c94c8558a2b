"""History across runs (docs/history.md): `series_trend` and `case_history`.

Frames in, frames out, the same code for every engine: a polars LazyFrame runs natively
(`ns` = polars), anything else (a DuckDB relation, a Spark DataFrame, a narwhals frame)
runs through narwhals on its own engine and comes back as that engine's frame. The rules
are `rules/history.py`; this module orders the runs of each series and sums.

- **series order**: per config × series (a runs column's value as text, null its own
  series; one series of all runs without `series`), runs by created_at (runs without one
  after those with one), then run_id; index 0..N−1; `window` keeps the last N.
- **trend**: per y in (pass_rate, mean_score), the weighted least-squares fit of y on the
  run index over the runs whose y is not null (`runs` is N of the series, the fit's N
  the number of those runs), w = 1/se² or the median of the usable weights, or 1.
- **change point**: on the pass rate with the fit's weights, each split between two
  consecutive runs of the fit; the largest |z|, the earliest on ties.
- **case history**: per case, the runs of the series where case_summary has a non-null
  `passed`, flips between consecutive ones, and the beta-binomial shrinkage of the
  series.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from evalframe._private import schema as S
from evalframe._private.rules import history as rules
from evalframe._private.rules.intervals import ci_high, ci_low

_IDX, _N, _ONE, _NO_TIME = "_idx", "_n", "_one", "_no_time"
_SNULL, _SVAL = "_series_null", "_series_value"
"""The series as a join key that is never null (null joins nothing): is-null, value."""
SERIES_KEYS = [S.CONFIG_ID, _SNULL, _SVAL]
Y_COLUMNS = ((S.PASS_RATE, S.PASS_RATE_SE), (S.MEAN_SCORE, S.MEAN_SCORE_SE))
"""(y, its se) of run_summary: the two trends of series_trend."""


def _namespace(frame: Any) -> tuple[Any, Any, bool]:
    """(ns, frame in ns, is polars)."""
    if isinstance(frame, pl.DataFrame):
        frame = frame.lazy()
    if isinstance(frame, pl.LazyFrame):
        return pl, frame, True
    import narwhals as nw

    return nw, nw.from_native(frame), False


def _native(frame: Any, is_polars: bool) -> Any:
    return frame if is_polars else frame.to_native()


def series_runs(
    ns: Any, run_summary: Any, *, series: str | None = None, window: int | None = None
) -> Any:
    """config_id, run_id, series, series_column, the series keys, _idx (0..N−1 in the
    series order) and _n (N) of every run kept by `window`, plus run_summary's y and se."""
    names = run_summary.collect_schema().names()
    time = (
        ns.col(S.CREATED_AT)
        if S.CREATED_AT in names
        else ns.lit(None, ns.Datetime("us")).alias(S.CREATED_AT)
    )
    value = (
        ns.col(series).cast(ns.String) if series is not None else ns.lit(None, ns.String)
    ).alias(S.SERIES)
    ys = [c for pair in Y_COLUMNS for c in pair]
    frame = run_summary.select(
        S.CONFIG_ID,
        S.RUN_ID,
        time,
        value,
        ns.lit(series, ns.String).alias(S.SERIES_COLUMN),
        *[ns.col(c).cast(ns.Float64) for c in ys],
    ).with_columns(
        ns.col(S.SERIES).is_null().alias(_SNULL),
        ns.col(S.SERIES).fill_null("").alias(_SVAL),
        ns.col(S.CREATED_AT).is_null().alias(_NO_TIME),
        ns.lit(1).cast(ns.Int64).alias(_ONE),
    )
    order = [_NO_TIME, S.CREATED_AT, S.RUN_ID]
    frame = frame.with_columns(
        (ns.col(_ONE).cum_sum().over(*SERIES_KEYS, order_by=order) - 1).alias(_IDX),
        ns.col(_ONE).sum().over(*SERIES_KEYS).alias(_N),
    )
    if window is not None:
        frame = frame.filter(ns.col(_IDX) >= ns.col(_N) - window).with_columns(
            (ns.col(_IDX) - (ns.col(_N) - window).clip(lower_bound=0)).alias(_IDX),
            ns.col(_N).clip(upper_bound=window).alias(_N),
        )
    return frame


def _prefixed(y: str, what: str) -> str:
    return f"{y}_{what}"


def _fit(ns: Any, runs: Any, y: str, se: str) -> tuple[Any, Any]:
    """(the fit's rows with their weight `_w`, one row per series with the slope columns
    of y, the fit's N `_nfit` and its usable-se count `_nse`)."""
    rows = runs.filter(~ns.col(y).is_null()).with_columns(
        rules.run_weight(ns, ns.col(se)).alias("_w0")
    )
    medians = rows.group_by(*SERIES_KEYS).agg(
        ns.col("_w0").median().alias("_wmed"),
        ns.col("_w0").count().alias("_nse"),
        ns.col(_ONE).sum().alias("_nfit"),
    )
    x = ns.col(_IDX).cast(ns.Float64)
    rows = (
        rows.join(medians, on=SERIES_KEYS, how="left")
        .with_columns(rules.filled_weight(ns, ns.col("_w0"), ns.col("_wmed")).alias("_w"))
        .with_columns(
            (
                x
                - (ns.col("_w") * x).sum().over(*SERIES_KEYS)
                / ns.col("_w").sum().over(*SERIES_KEYS)
            ).alias("_dx"),
            (
                ns.col(y)
                - (ns.col("_w") * ns.col(y)).sum().over(*SERIES_KEYS)
                / ns.col("_w").sum().over(*SERIES_KEYS)
            ).alias("_dy"),
        )
        .with_columns(
            (ns.col("_w") * ns.col("_dx") ** 2).sum().over(*SERIES_KEYS).alias("_sxx"),
            (ns.col("_w") * ns.col("_dx") * ns.col("_dy")).sum().over(*SERIES_KEYS).alias("_sxy"),
        )
        .with_columns(rules.wls_slope(ns, ns.col("_sxy"), ns.col("_sxx")).alias("_slope"))
    )
    residual = ns.col("_dy") - ns.col("_slope") * ns.col("_dx")
    fit = rows.group_by(*SERIES_KEYS).agg(
        ns.col("_slope").max().alias("_slope"),
        ns.col("_sxx").max().alias("_sxx"),
        (ns.col("_w") * residual**2).sum().alias("_ssr"),
        ns.col("_nfit").max().alias("_nfit"),
        ns.col("_nse").max().alias("_nse"),
    )
    slope, slope_se = ns.col("_slope"), ns.col(_prefixed(y, "slope_se"))
    high = _prefixed(y, "slope_ci_high")
    fit = (
        fit.with_columns(
            slope.alias(_prefixed(y, "slope")),
            rules.wls_slope_se(ns, ns.col("_ssr"), ns.col("_sxx"), ns.col("_nfit")).alias(
                _prefixed(y, "slope_se")
            ),
        )
        .with_columns(
            ci_low(slope, slope_se).alias(_prefixed(y, "slope_ci_low")),
            ci_high(slope, slope_se).alias(high),
        )
        .with_columns(rules.degrading(ns.col(high)).alias(_prefixed(y, "degrading")))
    )
    return rows, fit


def _change_point(ns: Any, rows: Any) -> Any:
    """One row per series with change_run_id, change_z and change_p (the pass-rate fit's
    rows and weights, `_fit`)."""
    w, wy = ns.col("_w"), ns.col("_w") * ns.col(S.PASS_RATE)
    order = [_IDX]
    splits = (
        rows.with_columns(
            ns.col(_ONE).cum_sum().over(*SERIES_KEYS, order_by=order).alias("_k"),
            w.cum_sum().over(*SERIES_KEYS, order_by=order).alias("_cw"),
            wy.cum_sum().over(*SERIES_KEYS, order_by=order).alias("_cwy"),
            w.sum().over(*SERIES_KEYS).alias("_tw"),
            wy.sum().over(*SERIES_KEYS).alias("_twy"),
        )
        .with_columns(  # the split before this run: the runs before it against the rest
            (ns.col("_cw") - w).alias("_wb"),
            (ns.col("_cwy") - wy).alias("_wyb"),
        )
        .filter((ns.col("_k") >= 2) & (ns.col("_nse") > 0))
        .with_columns(
            rules.split_z(
                ns.col("_wb"),
                ns.col("_wyb"),
                ns.col("_tw") - ns.col("_wb"),
                ns.col("_twy") - ns.col("_wyb"),
            ).alias("_z")
        )
        .with_columns(ns.col("_z").abs().alias("_az"))
        .with_columns(ns.col("_az").max().over(*SERIES_KEYS).alias("_maxz"))
        .filter(ns.col("_az") == ns.col("_maxz"))
        .with_columns(ns.col("_k").min().over(*SERIES_KEYS).alias("_first"))
        .filter(ns.col("_k") == ns.col("_first"))
    )
    return splits.select(
        *SERIES_KEYS,
        ns.col(S.RUN_ID).alias(S.CHANGE_RUN_ID),
        ns.col("_z").alias(S.CHANGE_Z),
        rules.bonferroni_p(ns, ns.col("_z"), ns.col("_nfit")).alias(S.CHANGE_P),
    )


def series_trend(run_summary: Any, *, series: str | None = None, window: int | None = None) -> Any:
    """`series_trend` (docs/history.md#trend), one row per config × series, from run_summary (with
    the runs table's created_at and the `series` column, as `score_tables` writes it).
    `window` keeps the last N runs of each series. A polars frame gives a LazyFrame; a
    DuckDB relation or Spark DataFrame is computed there and returned as one."""
    ns, frame, is_polars = _namespace(run_summary)
    runs = series_runs(ns, frame, series=series, window=window)
    out = runs.group_by(*SERIES_KEYS).agg(
        ns.col(S.SERIES).max().alias(S.SERIES),
        ns.col(S.SERIES_COLUMN).max().alias(S.SERIES_COLUMN),
        ns.col(_N).max().cast(ns.Int64).alias(S.N_RUNS),
    )
    for y, se in Y_COLUMNS:
        rows, fit = _fit(ns, runs, y, se)
        out = out.join(fit.select(*SERIES_KEYS, *_trend_columns(y)), on=SERIES_KEYS, how="left")
        if y == S.PASS_RATE:
            change = _change_point(ns, rows)
    out = out.join(change, on=SERIES_KEYS, how="left").with_columns(
        *[ns.col(c).fill_null(False) for c in (S.PASS_RATE_DEGRADING, S.MEAN_SCORE_DEGRADING)]
    )
    return _native(
        out.select(_typed_trend(ns)).sort(S.CONFIG_ID, S.SERIES, nulls_last=True), is_polars
    )


def _trend_columns(y: str) -> list[str]:
    return [
        _prefixed(y, w) for w in ("slope", "slope_se", "slope_ci_low", "slope_ci_high", "degrading")
    ]


def _typed_trend(ns: Any) -> list[Any]:
    """The columns of series_trend in order, typed."""
    return [
        ns.col(c).cast(ns.Float64) if c in _FLOATS else ns.col(c) for c in S.SERIES_TREND_COLUMNS
    ]


_FLOATS = {
    c for y in (S.PASS_RATE, S.MEAN_SCORE) for c in _trend_columns(y) if not c.endswith("degrading")
} | {S.CHANGE_Z, S.CHANGE_P}


def case_history(
    case_summary: Any,
    run_summary: Any,
    *,
    series: str | None = None,
    window: int | None = None,
    min_runs: int = 5,
    flaky_flip_rate: float = 0.3,
) -> Any:
    """`case_history` (docs/history.md#flaky-cases), one row per config × series × case: the case's
    runs with a non-null `passed` in case_summary, passes, flips between consecutive ones,
    flip_rate, the beta-binomial shrunk pass rate of the series, last_passed and
    quarantine (history.min_runs, history.flaky_flip_rate). The series and their order
    come from run_summary (`series_trend`); both frames of one engine."""
    ns, frame, is_polars = _namespace(run_summary)
    cases = case_summary if is_polars else ns.from_native(case_summary)
    if is_polars and isinstance(cases, pl.DataFrame):
        cases = cases.lazy()
    runs = series_runs(ns, frame, series=series, window=window).select(
        *SERIES_KEYS, S.RUN_ID, S.SERIES, S.SERIES_COLUMN, _IDX
    )
    case_keys = [*SERIES_KEYS, S.CASE_ID]
    passed = ns.col(S.PASSED)
    rows = (
        cases.select(S.CONFIG_ID, S.RUN_ID, S.CASE_ID, S.PASSED)
        .filter(~passed.is_null())
        .join(runs, on=[S.CONFIG_ID, S.RUN_ID], how="inner")
        .with_columns(
            rules.flipped(ns, passed, passed.shift(1).over(*case_keys, order_by=[_IDX]))
            .cast(ns.Int64)
            .alias("_flip"),
            (ns.col(_IDX) == ns.col(_IDX).max().over(*case_keys)).alias("_last"),
        )
    )
    per_case = rows.group_by(*case_keys).agg(
        ns.col(S.SERIES).max().alias(S.SERIES),
        ns.col(S.SERIES_COLUMN).max().alias(S.SERIES_COLUMN),
        ns.len().cast(ns.Int64).alias(S.N_RUNS),
        passed.cast(ns.Int64).sum().cast(ns.Int64).alias(S.PASSES),
        ns.col("_flip").sum().cast(ns.Int64).alias(S.FLIPS),
        (passed & ns.col("_last")).cast(ns.Int64).max().alias("_last_passed"),
    )
    runs_col, passes = ns.col(S.N_RUNS), ns.col(S.PASSES)
    per_case = per_case.with_columns(
        (passes.cast(ns.Float64) / runs_col).alias(S.PASS_RATE),
        rules.flip_rate(ns, ns.col(S.FLIPS).cast(ns.Float64), runs_col).alias(S.FLIP_RATE),
        (ns.col("_last_passed") == 1).alias(S.LAST_PASSED),
    )
    prior = per_case.group_by(*SERIES_KEYS).agg(
        passes.sum().cast(ns.Float64).alias("_sp"),
        runs_col.sum().cast(ns.Float64).alias("_sr"),
        ns.col(S.PASS_RATE).var(ddof=1).alias("_s2"),
        runs_col.cast(ns.Float64).mean().alias("_mbar"),
    )
    terms = (ns.col("_sp"), ns.col("_sr"), ns.col("_s2"), ns.col("_mbar"))
    prior = prior.with_columns(
        rules.beta_binomial_a(ns, *terms).alias("_a"),
        rules.beta_binomial_b(ns, *terms).alias("_b"),
    )
    out = per_case.join(
        prior.select(*SERIES_KEYS, "_a", "_b"), on=SERIES_KEYS, how="left"
    ).with_columns(
        rules.shrunk_pass_rate(
            passes.cast(ns.Float64), runs_col.cast(ns.Float64), ns.col("_a"), ns.col("_b")
        ).alias(S.SHRUNK_PASS_RATE),
        rules.quarantine(runs_col, ns.col(S.FLIP_RATE), min_runs, flaky_flip_rate).alias(
            S.QUARANTINE
        ),
    )
    return _native(
        out.select(S.CASE_HISTORY_COLUMNS).sort(S.CONFIG_ID, S.SERIES, S.CASE_ID, nulls_last=True),
        is_polars,
    )


TREND_FIT = "pass_rate_fit"
"""Column of `trend_points`: the fitted pass rate of the run on the series' WLS line."""
RUN_INDEX = "run_index"
"""Column of `trend_points`: the run's position 0..N−1 in its series."""


def trend_points(run_summary: Any, *, series: str | None = None, window: int | None = None) -> Any:
    """One row per config × run kept by `window`: series, series_column, run_id, created_at,
    run_index, pass_rate and pass_rate_fit (ȳ + slope · (x − x̄), the line of
    series_trend's pass-rate fit; null for a run left out of the fit or a series with
    fewer than two runs in it) — the data of the report's trend chart."""
    ns, frame, is_polars = _namespace(run_summary)
    runs = series_runs(ns, frame, series=series, window=window)
    rows, _ = _fit(ns, runs, S.PASS_RATE, S.PASS_RATE_SE)
    fitted = rows.select(
        *SERIES_KEYS,
        S.RUN_ID,
        (ns.col(S.PASS_RATE) - ns.col("_dy") + ns.col("_slope") * ns.col("_dx")).alias(TREND_FIT),
    )
    out = runs.join(fitted, on=[*SERIES_KEYS, S.RUN_ID], how="left").select(
        S.CONFIG_ID,
        S.SERIES_COLUMN,
        S.SERIES,
        S.RUN_ID,
        S.CREATED_AT,
        ns.col(_IDX).cast(ns.Int64).alias(RUN_INDEX),
        S.PASS_RATE,
        S.PASS_RATE_SE,
        TREND_FIT,
    )
    return _native(out.sort(S.CONFIG_ID, S.SERIES, RUN_INDEX, nulls_last=True), is_polars)
