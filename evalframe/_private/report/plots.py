"""Charts of the result tables: each aggregates one table in polars to at most a few
thousand rows and returns an Altair chart, thinned to the latest runs or pairs it can show
(`chart_note` says what was left out), every text passed through `visible`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import polars as pl

from evalframe._private import schema as S
from evalframe._private.compare.compare import PAIR_KEY
from evalframe._private.compare.pairs import NO_SERIES
from evalframe._private.errors import ChartInputError, UsageError
from evalframe._private.rules.constants import EPS
from evalframe._private.stats.power import MDE_FACTOR, POWER, power
from evalframe._private.summaries.slices import SIGNIFICANCE
from evalframe.format import INVISIBLE, run_rate, visible, with_wilson

try:
    import altair as alt
except ImportError as exc:  # pragma: no cover - only in a broken install
    raise UsageError(
        f"charts need Altair, a dependency of evalframe, which cannot be imported ({exc}); "
        "hint: reinstall evalframe (pip install -e . or pip install evalframe)."
    ) from exc

MAX_POINTS = 400
"""Most marks one series draws (cases, threshold steps)."""
MAX_RUNS = 40
"""Most runs a chart with one row per run draws: the latest."""
MAX_SERIES = 10
"""Most runs or pairs a chart with a panel or a line each draws: the latest."""
MAX_TREND_RUNS = 1000
MAX_CHART_ROWS = 4000
"""Most rows a chart embeds (Altair refuses more than 5,000)."""
WIDTH = 520

VERDICT_BANDS = {
    S.N_PASS: S.VERDICT_PASS,
    S.N_BORDERLINE: S.VERDICT_BORDERLINE,
    S.N_FAIL: S.VERDICT_FAIL,
    S.ERRORED: S.VERDICT_ERROR,
    S.UNSCORED: S.VERDICT_UNSCORED,
}
"""run_summary count column -> the verdict it counts (stacked in this order)."""
VERDICT_COLORS = ("#2e7d32", "#f9a825", "#c62828", "#6a1b9a", "#9e9e9e")
CASE_STATUS_ORDER = ("regression", "improvement", "unchanged", "error", "new", "removed")
CASE_STATUS_COLORS = ("#c62828", "#2e7d32", "#9e9e9e", "#6a1b9a", "#1565c0", "#795548")
PAIR = "pair"
PAIR_NOUN = "pairs (in the comparison's order)"
RUN_ORDER = "run_order"
SERIES = "run_series"
THINNED = "Thinned:"
"""How a chart note about runs or pairs left out begins."""
CI = ("ci_low", "ci_high")


def _frame(
    table: pl.DataFrame | pl.LazyFrame,
    chart: str,
    needs: Sequence[str],
    optional: Sequence[str] = (),
    collect: bool = True,
) -> Any:
    """The table's `needs` (and `optional`, created_at) columns, text visible, the pair
    label added, after checking that it has them and one config (`collect=False`: lazy)."""
    lf = table.lazy()
    names = lf.collect_schema().names()
    missing = [c for c in needs if c not in names]
    if missing:
        raise ChartInputError(
            f"{chart} needs the columns {', '.join(needs)}; the table lacks "
            f"{', '.join(missing)} (it has {', '.join(names[:12])}"
            f"{', …' if len(names) > 12 else ''}); hint: pass the table named in the "
            "function's docstring (docs/tables.md)."
        )
    one = [pl.col(S.CONFIG_ID).unique().sort()] if S.CONFIG_ID in needs else []
    ids = lf.select(one).collect().to_series() if one else pl.Series([])
    if ids.len() > 1:
        raise ChartInputError(
            f"{chart} draws one config; the table holds {ids.len()} config_ids "
            f"({', '.join(ids.head(5).to_list())}); hint: filter first, e.g. "
            "table.filter(pl.col('config_id') == '...')."
        )
    if not collect:
        return lf
    extra = [c for c in (*optional, S.CREATED_AT) if c in names and c not in needs]
    df = visible_text(lf.select(*needs, *extra).collect())
    if S.BASELINE_RUN_ID not in needs or S.CANDIDATE_RUN_ID not in needs:
        return df
    label = pl.concat_str(pl.col(S.BASELINE_RUN_ID), pl.lit(" → "), pl.col(S.CANDIDATE_RUN_ID))
    return df.with_columns(label.alias(PAIR))


def visible_text(df: pl.DataFrame) -> pl.DataFrame:
    """df with every String value passed through `visible`: NUL, VT, FF or ESC make
    vl-convert abort, U+2028 breaks a Vega sort expression."""
    fixes = []
    for name, dtype in df.schema.items():
        if dtype != pl.String:
            continue
        values = df[name].unique().drop_nulls()
        odd = values.filter(values.str.contains(INVISIBLE))  # vectorised; usually none
        if odd.len():
            fixes.append(pl.col(name).replace({v: visible(v) for v in odd}))
    return df.with_columns(fixes) if fixes else df


Thinned = tuple[pl.DataFrame, list[str], str | None]


def _latest(df: pl.DataFrame, column: str, order: list[str], limit: int, noun: str) -> Thinned:
    """The rows of the last `limit` values of `order`, those kept and a note on the rest."""
    if len(order) <= limit:
        return df, order, None
    kept = order[-limit:]
    note = f"{THINNED} only the latest {limit} of {len(order)} {noun} are drawn."
    return df.filter(pl.col(column).is_in(kept)), kept, note


def _per_item(limit: int, cells: int) -> int:
    """Runs or pairs to draw when each has `cells` rows: 1 to `limit`, in MAX_CHART_ROWS."""
    return max(1, min(limit, MAX_CHART_ROWS // max(cells, 1)))


def _run_noun(df: pl.DataFrame) -> str:
    by = "created_at, then run_id" if S.CREATED_AT in df.columns else "run_id"
    return f"runs (by {by})"


def _run_order(df: pl.DataFrame) -> list[str]:
    """Run ids in run_summary order: created_at (nulls last) when present, then run_id."""
    keys = [S.CREATED_AT, S.RUN_ID] if S.CREATED_AT in df.columns else [S.RUN_ID]
    return df.unique(S.RUN_ID).sort(keys, nulls_last=True)[S.RUN_ID].to_list()


def _latest_runs(df: pl.DataFrame, limit: int, runs: pl.DataFrame | None = None) -> Thinned:
    """`_latest` over the runs of `df` (in the order of `runs`, default df)."""
    runs = df if runs is None else runs
    return _latest(df, S.RUN_ID, _run_order(runs), limit, _run_noun(runs))


def _latest_pairs(df: pl.DataFrame, limit: int, order: list[str] | None = None) -> Thinned:
    order = df[PAIR].unique(maintain_order=True).to_list() if order is None else order
    return _latest(df, PAIR, order, limit, PAIR_NOUN)


def noted(chart: Any, notes: Sequence[str | None]) -> Any:
    """The chart carrying what it left out as its Vega-Lite `description`."""
    text = " ".join(n for n in notes if n)
    return chart.properties(description=text) if text else chart


def chart_note(chart: Any) -> str | None:
    """What a chart of evalframe.plots left out of its table; None when it drew all."""
    text = getattr(chart, "description", None)
    return text if isinstance(text, str) and text else None


def titled(chart: Any, title: str, notes: Sequence[str | None], **props: Any) -> Any:
    """The chart at the report's width with its title and notes."""
    return noted(chart.properties(**{"width": WIDTH, **props}, title=title), notes)


def _rates(
    run_summary: pl.DataFrame | pl.LazyFrame, chart: str, extra: Sequence[str] = ()
) -> pl.DataFrame:
    """run_summary's runs with the pass rate as shown (`run_rate`) and its Wilson interval."""
    needs = [S.CONFIG_ID, S.RUN_ID, S.PASS_RATE, S.PASS_RATE_SE, *extra]
    df = _frame(run_summary, chart, needs, optional=[S.CASES, S.MEAN_SCORE])
    if S.MEAN_SCORE in df.columns:
        rates = [
            run_rate({S.PASS_RATE: rate, S.MEAN_SCORE: mean})
            for rate, mean in zip(df[S.PASS_RATE], df[S.MEAN_SCORE], strict=True)
        ]
        df = df.with_columns(pl.Series(S.PASS_RATE, rates, dtype=pl.Float64)).with_columns(
            pl.when(pl.col(S.PASS_RATE).is_not_null()).then(pl.col(S.PASS_RATE_SE))
        )
    return with_wilson(df)


# --- shared encodings ------------------------------------------------------------------
def _enc(channel: Any, field: str, *, unit: bool = False, pct: bool = False, **kw: Any) -> Any:
    """A position channel of `field`: `unit` scales it 0–1, `pct` labels it in percent."""
    if unit:
        kw["scale"] = alt.Scale(domain=[0, 1])
    if pct:
        kw["axis"] = alt.Axis(format="%")
    return channel(field, **kw)


def _tips(*fields: str | tuple[str, str]) -> list[Any]:
    """A tooltip list: a field as is, or (field, d3 format)."""
    return [f if isinstance(f, str) else alt.Tooltip(f[0], format=f[1]) for f in fields]


def colors(field: str, domain: Sequence[str], colors: Sequence[str], title: str, **kw: Any) -> Any:
    scale = alt.Scale(domain=list(domain), range=list(colors))
    return alt.Color(f"{field}:N", scale=scale, title=title, **kw)


def _panels(field: str, order: list[str] | None = None) -> Any:
    """A facet row per value of `field` (in `order`), the labels left-aligned above."""
    header = alt.Header(labelOrient="top", labelAnchor="start", labelFontWeight="bold", title=None)
    return alt.Row(
        f"{field}:N", sort=alt.Undefined if order is None else order, title=None, header=header
    )


def _heatmap(base: Any, fill: Any, tooltip: list[Any], value: str, fmt: str, **text: Any) -> Any:
    """Cells of `base` (its x and y) coloured by `fill`, each labelled with `value`."""
    rect = base.mark_rect().encode(color=fill, tooltip=tooltip)
    return rect, base.mark_text(fontSize=10).encode(text=alt.Text(f"{value}:Q", format=fmt), **text)


# --- run charts ----------------------------------------------------------------------
def pass_rate_chart(run_summary: pl.DataFrame | pl.LazyFrame) -> Any:
    """Pass rate per run (run_summary) with its 95 % Wilson interval (`rate_interval`); a
    run without any scored execution has no point (when mean_score is given)."""
    df = _rates(run_summary, "pass_rate_chart")
    df, order, note = _latest_runs(df, MAX_RUNS)
    data = df.select(S.RUN_ID, S.PASS_RATE, S.PASS_RATE_SE, *CI)
    base = alt.Chart(data).encode(y=alt.Y(f"{S.RUN_ID}:N", sort=order, title="run"))
    title = "pass rate (95 % Wilson interval)"
    rule = base.mark_rule(strokeWidth=2).encode(
        x=_enc(alt.X, "ci_low:Q", unit=True, pct=True, title=title), x2="ci_high:Q"
    )
    point = base.mark_point(filled=True, size=80).encode(
        x=_enc(alt.X, f"{S.PASS_RATE}:Q", unit=True),
        tooltip=_tips(f"{S.RUN_ID}:N", *((f"{c}:Q", ".1%") for c in (S.PASS_RATE, *CI))),
    )
    return titled(rule + point, "Pass rate per run", [note])


def verdict_chart(run_summary: pl.DataFrame | pl.LazyFrame) -> Any:
    """Verdict bands per run (run_summary): n_pass, n_borderline, n_fail, errored and
    unscored stacked to the run's executions."""
    df = _frame(run_summary, "verdict_chart", [S.CONFIG_ID, S.RUN_ID, *VERDICT_BANDS])
    df, order, note = _latest_runs(df, MAX_RUNS)
    band_order = {b: i for i, b in enumerate(VERDICT_BANDS)}
    long = (
        df.select(S.RUN_ID, *VERDICT_BANDS)
        .unpivot(index=S.RUN_ID, variable_name="band", value_name="executions")
        .with_columns(
            pl.col("band").replace_strict(VERDICT_BANDS).alias(S.VERDICT),
            pl.col("band").replace_strict(band_order, return_dtype=pl.Int64).alias("band_order"),
        )
        .select(S.RUN_ID, S.VERDICT, "band_order", "executions")
    )
    chart = (
        alt.Chart(long)
        .mark_bar()
        .encode(
            y=alt.Y(f"{S.RUN_ID}:N", sort=order, title="run"),
            x=_enc(alt.X, "executions:Q", pct=True, stack="normalize", title="share of executions"),
            color=colors(S.VERDICT, list(VERDICT_BANDS.values()), VERDICT_COLORS, "verdict"),
            order=alt.Order("band_order:Q"),
            tooltip=[f"{S.RUN_ID}:N", f"{S.VERDICT}:N", "executions:Q"],
        )
    )
    return titled(chart, "Verdicts per run", [note])


def trend_chart(run_summary: pl.DataFrame | pl.LazyFrame, *, series: str | None = None) -> Any:
    """Pass rate over runs in time order (run_summary) with its 95 % Wilson band; with
    `series` (a runs column: model, target, agent) one line and band per value of it."""
    df = _rates(run_summary, "trend_chart", [] if series is None else [series])
    df, order, note = _latest_runs(df, MAX_TREND_RUNS)
    timed = S.CREATED_AT in df.columns and df[S.CREATED_AT].null_count() == 0
    if series is not None:
        df = visible_text(
            df.with_columns(pl.col(series).cast(pl.String).fill_null(NO_SERIES).alias(SERIES))
        )
    position = {r: i for i, r in enumerate(order)}
    data = (
        df.with_columns(
            pl.col(S.RUN_ID).replace_strict(position, return_dtype=pl.Int64).alias(RUN_ORDER)
        )
        .select(
            S.RUN_ID,
            RUN_ORDER,
            S.PASS_RATE,
            *CI,
            *([S.CREATED_AT] if timed else []),
            *([SERIES] if series is not None else []),
        )
        .sort(RUN_ORDER)
    )
    if timed:  # dates with their month; the hour too when the runs span under two days
        days = df.select((pl.col(S.CREATED_AT).max() - pl.col(S.CREATED_AT).min()).dt.total_days())
        fmt = "%Y-%m-%d" if days.item() >= 2 else "%Y-%m-%d %H:%M"
        x = alt.X(
            f"{S.CREATED_AT}:T", title="created_at", axis=alt.Axis(format=fmt, labelAngle=-40)
        )
    else:
        x = alt.X(f"{S.RUN_ID}:O", sort=order, title="run")
    by = None if series is None else (SERIES, visible(series))
    title = "Pass rate over runs" + ("" if by is None else f" per {by[1]}") + " (95 % band)"
    return titled(alt.layer(*rate_over_runs(x, by), data=data), title, [note])


def rate_over_runs(x: Any, series: tuple[str, str] | None = None) -> list[Any]:
    """The band and line of a pass rate over runs on the axis `x`, per value of `series`
    (a column and its title) if given."""
    tooltip = _tips(f"{S.RUN_ID}:N", (f"{S.PASS_RATE}:Q", ".1%"))
    base = alt.Chart().encode(x=x)
    if series is not None:
        base = base.encode(color=alt.Color(f"{series[0]}:N", title=series[1]))
        tooltip.append(alt.Tooltip(f"{series[0]}:N", title=series[1]))
    y = _enc(alt.Y, "ci_low:Q", unit=True, pct=True, title="pass rate", stack=None)
    return [
        base.mark_area(opacity=0.2).encode(y=y, y2="ci_high:Q"),
        base.mark_line(point=True).encode(
            y=_enc(alt.Y, f"{S.PASS_RATE}:Q", unit=True), tooltip=tooltip
        ),
    ]


def score_distribution_chart(
    execution_scores: pl.DataFrame | pl.LazyFrame, *, bins: int = 20
) -> Any:
    """Execution scores per run (execution_scores) in `bins` equal bins over [0, 1]: the
    share of the run's scored executions per bin."""
    if bins < 1:
        raise UsageError(f"bins must be at least 1, not {bins}.")
    needs = [S.CONFIG_ID, S.RUN_ID, S.SCORE]
    lf = _frame(execution_scores, "score_distribution_chart", needs, collect=False)
    names = lf.collect_schema().names()
    binned = (
        lf.filter(pl.col(S.SCORE).is_not_null())
        .select(
            S.RUN_ID,
            (pl.col(S.SCORE) * bins).floor().clip(0, bins - 1).cast(pl.Int64).alias("bin"),
        )
        .group_by(S.RUN_ID, "bin")
        .agg(pl.len().cast(pl.Int64).alias("executions"))
        .with_columns(
            (pl.col("bin") / bins).alias("bin_start"),
            ((pl.col("bin") + 1) / bins).alias("bin_end"),
            (pl.col("executions") / pl.col("executions").sum().over(S.RUN_ID)).alias("share"),
        )
        .sort(S.RUN_ID, "bin")
        .drop("bin")
        .collect()
    )
    binned = visible_text(binned)
    runs = lf.select(S.RUN_ID, *([S.CREATED_AT] if S.CREATED_AT in names else [])).unique()
    runs = visible_text(runs.collect())
    runs = runs.filter(pl.col(S.RUN_ID).is_in(binned[S.RUN_ID].unique().to_list()))
    binned, _, note = _latest_runs(binned, MAX_SERIES, runs)
    chart = (
        alt.Chart(binned)
        .mark_rect()
        .encode(
            x=_enc(alt.X, "bin_start:Q", unit=True, title="execution score"),
            x2="bin_end:Q",
            y=_enc(alt.Y, "share:Q", pct=True, title="share"),
            color=alt.Color(f"{S.RUN_ID}:N", legend=None),
            row=_panels(S.RUN_ID),
            tooltip=_tips(
                f"{S.RUN_ID}:N",
                ("bin_start:Q", ".2f"),
                ("bin_end:Q", ".2f"),
                "executions:Q",
                ("share:Q", ".1%"),
            ),
        )
    )
    return titled(chart, "Score distribution per run", [note], height=90)


# --- comparison charts ---------------------------------------------------------------
def regression_waterfall_chart(
    case_deltas: pl.DataFrame | pl.LazyFrame, *, max_points: int = MAX_POINTS
) -> Any:
    """Paired case score deltas of each pair (case_deltas), sorted, coloured by case status,
    one panel per pair; above `max_points` cases at `max_points` quantile-spaced ones."""
    needs = [*PAIR_KEY, S.CASE_ID, S.SCORE_DELTA, S.STATUS]
    df = _frame(case_deltas, "regression_waterfall_chart", needs)
    df, order, note = _latest_pairs(df, MAX_SERIES)
    paired = df.filter(pl.col(S.SCORE_DELTA).is_not_null())
    most = paired.group_by(PAIR).len()["len"].max() if paired.height else 0
    quantiles = (
        f"A pair with more than {max_points} paired cases is drawn at {max_points} "
        "quantile-spaced cases."
        if most is not None and most > max_points  # type: ignore[operator]
        else None
    )
    ranked = (
        paired.sort(PAIR, S.SCORE_DELTA, S.CASE_ID)
        .with_columns(
            pl.int_range(pl.len()).over(PAIR).alias("rank"), pl.len().over(PAIR).alias("n")
        )
        .with_columns(
            (pl.col("rank") * max_points // pl.col("n")).alias("bucket"),
            ((pl.col("rank") + 0.5) / pl.col("n")).alias("case_quantile"),
        )
        .filter(pl.col("rank") == pl.col("rank").min().over(PAIR, "bucket"))
        .select(PAIR, S.CASE_ID, "case_quantile", S.SCORE_DELTA, S.STATUS)
    )
    title = "paired cases, sorted by score delta"
    chart = (
        alt.Chart(ranked)
        .mark_bar()
        .encode(
            x=_enc(alt.X, "case_quantile:Q", unit=True, pct=True, title=title),
            y=alt.Y(f"{S.SCORE_DELTA}:Q", title="score delta"),
            color=colors(S.STATUS, CASE_STATUS_ORDER, CASE_STATUS_COLORS, "case status"),
            row=_panels(PAIR, order),
            tooltip=_tips(
                f"{PAIR}:N", f"{S.CASE_ID}:N", (f"{S.SCORE_DELTA}:Q", "+.3f"), f"{S.STATUS}:N"
            ),
        )
    )
    return titled(chart, "Regression waterfall", [note, quantiles], height=140)


def evaluator_delta_heatmap(evaluator_deltas: pl.DataFrame | pl.LazyFrame) -> Any:
    """Mean score delta of every evaluator-tree node per pair (evaluator_deltas):
    evaluators down, pairs across, red = worse."""
    needs = [*PAIR_KEY, S.PATH, S.SCORE_DELTA, S.STATUS]
    df = _frame(evaluator_deltas, "evaluator_delta_heatmap", needs)
    pair_order = df[PAIR].unique(maintain_order=True).to_list()
    cells = (
        df.group_by(PAIR, S.PATH)
        .agg(
            pl.col(S.SCORE_DELTA).mean().alias(S.MEAN_DELTA),
            pl.col(S.SCORE_DELTA).count().cast(pl.Int64).alias(S.N_PAIRED),
            (pl.col(S.STATUS) == "regression").sum().cast(pl.Int64).alias("n_regression"),
        )
        .sort(PAIR, S.PATH)
    )
    limit = _per_item(MAX_SERIES, cells[S.PATH].n_unique())
    cells, order, note = _latest_pairs(cells, limit, pair_order)
    extent = float(cells[S.MEAN_DELTA].abs().max() or 0.01)  # type: ignore[arg-type]
    angle = 0 if len(order) <= 4 else -40
    base = alt.Chart(cells).encode(
        x=alt.X(
            f"{PAIR}:N",
            sort=order,
            title="baseline → candidate",
            axis=alt.Axis(labelAngle=angle, labelLimit=260),
        ),
        y=alt.Y(f"{S.PATH}:N", title="evaluator"),
    )
    scale = alt.Scale(scheme="redblue", domain=[-extent, extent])
    rect, text = _heatmap(
        base,
        alt.Color(f"{S.MEAN_DELTA}:Q", scale=scale, title="mean delta"),
        _tips(
            f"{PAIR}:N",
            f"{S.PATH}:N",
            (f"{S.MEAN_DELTA}:Q", "+.3f"),
            f"{S.N_PAIRED}:Q",
            "n_regression:Q",
        ),
        S.MEAN_DELTA,
        "+.3f",
    )
    return titled(rect + text, "Evaluator score delta per pair", [note])


FLIPS_SIGNIFICANT = "q < 0.05: more pass → fail (a regression)"
FLIPS_IMPROVED = "q < 0.05: more fail → pass (an improvement)"
FLIPS_NOT_SIGNIFICANT = "q ≥ 0.05"
FLIPS_TITLE = "pass flips (McNemar), Benjamini–Hochberg q"
FLIPS_COLORS = ("#c62828", "#2e7d32", "#546e7a")


def slice_forest_chart(slice_deltas: pl.DataFrame | pl.LazyFrame) -> Any:
    """Forest plot of slices (slice_deltas): each slice value's paired mean score delta with
    its 95 % interval, one panel per pair, coloured when its pass flips are significant
    (q_value < 0.05): red when more went pass → fail, green when more went fail → pass."""
    needs = [
        *PAIR_KEY,
        *(S.SLICE, S.SLICE_VALUE, S.MEAN_DELTA, S.MEAN_DELTA_CI_LOW, S.MEAN_DELTA_CI_HIGH),
        *(S.Q_VALUE, S.N_PASSED_TO_FAILED, S.N_FAILED_TO_PASSED),
    ]
    df = _frame(slice_deltas, "slice_forest_chart", needs)
    pair_order = df[PAIR].unique(maintain_order=True).to_list()
    down, up = pl.col(S.N_PASSED_TO_FAILED), pl.col(S.N_FAILED_TO_PASSED)
    significant = pl.col(S.Q_VALUE) < SIGNIFICANCE
    value = pl.col(S.SLICE_VALUE).fill_null("(none)")
    data = (
        df.with_columns(
            pl.concat_str(pl.col(S.SLICE), pl.lit("="), value).alias("slice_label"),
            pl.when(significant & (down > up))
            .then(pl.lit(FLIPS_SIGNIFICANT))
            .when(significant & (up > down))
            .then(pl.lit(FLIPS_IMPROVED))
            .otherwise(pl.lit(FLIPS_NOT_SIGNIFICANT))
            .alias("significance"),
        )
        .select(
            PAIR,
            "slice_label",
            *(S.MEAN_DELTA, S.MEAN_DELTA_CI_LOW, S.MEAN_DELTA_CI_HIGH, S.Q_VALUE),
            "significance",
        )
        .sort(PAIR, "slice_label")
    )
    most = data.group_by(PAIR).len()["len"].max() if data.height else 0
    data, order, note = _latest_pairs(data, _per_item(MAX_SERIES, int(most or 0)), pair_order)
    base = alt.Chart().encode(y=alt.Y("slice_label:N", title="slice"))
    rule = base.mark_rule().encode(
        x=alt.X(f"{S.MEAN_DELTA_CI_LOW}:Q", title="mean score delta (95 % interval)"),
        x2=f"{S.MEAN_DELTA_CI_HIGH}:Q",
    )
    flips = (FLIPS_SIGNIFICANT, FLIPS_IMPROVED, FLIPS_NOT_SIGNIFICANT)
    legend = alt.Legend(labelLimit=400, titleLimit=400)
    point = base.mark_point(filled=True, size=60).encode(
        x=f"{S.MEAN_DELTA}:Q",
        color=colors("significance", flips, FLIPS_COLORS, FLIPS_TITLE, legend=legend),
        tooltip=_tips("slice_label:N", (f"{S.MEAN_DELTA}:Q", "+.3f"), (f"{S.Q_VALUE}:Q", ".3g")),
    )
    zero = alt.Chart().mark_rule(strokeDash=[4, 4], color="#888").encode(x=alt.datum(0))
    chart = alt.layer(rule, point, zero, data=data).properties(width=WIDTH)
    return noted(
        chart.facet(row=_panels(PAIR, order)).properties(title="Slices: paired score delta"),
        [note],
    )


POWER_POINTS = 41
POWER_METRICS = (
    ("pass rate", S.PAIRED_PASS_DELTA_SE, "max_pass_rate_drop"),
    ("mean score", S.MEAN_DELTA_SE, "max_mean_score_drop"),
)
"""Power curve panel -> the run_deltas standard error it reads and the limit it marks."""


def power_curve_chart(
    run_deltas: pl.DataFrame | pl.LazyFrame, *, limits: Any = None, points: int = POWER_POINTS
) -> Any:
    """Power curves of each pair (run_deltas): the chance that a two-sided 5 % test on its
    paired cases sees a true change δ of the pass rate and of the mean score (`power`), one
    panel each, at `points` δ from 0 to 1.5 × the largest MDE (1.25 × the limit if larger,
    at most 1); `limits` (the config's `compare` block) adds the drop limits as red rules."""
    if points < 2:
        raise UsageError(f"points must be at least 2, not {points}.")
    needs = [*PAIR_KEY, S.N_PAIRED, S.PAIRED_PASS_DELTA_SE, S.MEAN_DELTA_SE]
    df = _frame(run_deltas, "power_curve_chart", needs)
    drawable = set(
        df.filter(
            (pl.col(S.PAIRED_PASS_DELTA_SE).is_not_null() | pl.col(S.MEAN_DELTA_SE).is_not_null())
            & (pl.col(S.N_PAIRED) > 0)
        )[PAIR].to_list()
    )
    order = df[PAIR].unique(maintain_order=True).to_list()
    pairs, kept, note = _latest_pairs(df, MAX_SERIES, [p for p in order if p in drawable])
    rows: list[dict[str, Any]] = []
    charts = []
    for metric, se_col, limit_field in POWER_METRICS:
        have = pairs.filter(pl.col(se_col).is_not_null() & (pl.col(S.N_PAIRED) > 0))
        if have.height == 0:
            continue
        limit = None if limits is None else float(getattr(limits, limit_field))
        top = max(1.5 * MDE_FACTOR * float(have[se_col].max()), 1.25 * (limit or 0.0))  # type: ignore[arg-type]
        top = min(1.0, max(top, 0.01))
        for r in have.iter_rows(named=True):
            for i in range(points):
                delta = top * i / (points - 1)
                rows.append(
                    {
                        "metric": metric,
                        PAIR: r[PAIR],
                        S.N_PAIRED: r[S.N_PAIRED],
                        "true_change": round(delta, 6),
                        "power": round(power(delta, float(r[se_col])), 6),
                    }
                )
        charts.append(_power_panel(metric, limit, kept if note else order))
    if not rows:
        raise ChartInputError(
            "power_curve_chart: no pair has a paired standard error (each needs 2 or more "
            "cases scored in both runs); hint: compare runs that share cases."
        )
    chart = alt.hconcat(*charts, data=pl.DataFrame(rows)).properties(
        title="Power to see a change (paired, α 0.05; dashed: 80 %)"
    )
    return noted(chart, [note])


def _power_panel(metric: str, limit: float | None, order: list[str]) -> Any:
    """One metric's power curves, the dashed 80 % line and the limit's red rule."""
    fmt = "%" if metric == "pass rate" else ".2f"
    legend = alt.Legend(orient="bottom", direction="vertical", labelLimit=600)
    line = (
        alt.Chart()
        .transform_filter(alt.datum.metric == metric)
        .mark_line()
        .encode(
            x=alt.X("true_change:Q", title=f"true {metric} change", axis=alt.Axis(format=fmt)),
            y=_enc(alt.Y, "power:Q", unit=True, pct=True, title="power"),
            color=alt.Color(f"{PAIR}:N", sort=order, title="baseline → candidate", legend=legend),
            tooltip=_tips(
                f"{PAIR}:N", f"{S.N_PAIRED}:Q", ("true_change:Q", ".3f"), ("power:Q", ".1%")
            ),
        )
    )
    dashed = alt.Chart(alt.Data(values=[{"power": POWER}])).mark_rule(
        strokeDash=[4, 4], color="#888"
    )
    layers = [line, dashed.encode(y="power:Q")]
    if limit:
        red = alt.Chart(alt.Data(values=[{"limit": limit}])).mark_rule(color="#c62828")
        layers.append(red.encode(x="limit:Q"))
    return alt.layer(*layers).properties(width=WIDTH // 2 - 20, title=metric)


# --- what-if charts ------------------------------------------------------------------
def threshold_curve_chart(
    threshold_curve: pl.DataFrame | pl.LazyFrame, *, max_points: int = MAX_POINTS
) -> Any:
    """Pass rate by execution threshold, one step line per run (threshold_curve); a run of
    more than `max_points` steps is read on a grid of `max_points` thresholds."""
    needs = [S.CONFIG_ID, S.RUN_ID, S.THRESHOLD, S.PASS_RATE]
    df = _frame(threshold_curve, "threshold_curve_chart", needs).sort(S.RUN_ID, S.THRESHOLD)
    df, _, note = _latest_runs(df, MAX_SERIES)
    steps = df.group_by(S.RUN_ID).agg(pl.len().alias("n"))
    small = df.join(steps.filter(pl.col("n") <= max_points), on=S.RUN_ID, how="semi")
    big_runs = steps.filter(pl.col("n") > max_points)
    parts = [small.select(S.RUN_ID, S.THRESHOLD, S.PASS_RATE)]
    grid_note = None
    if big_runs.height:
        grid_note = (
            f"A run with more than {max_points} threshold steps is read on a grid of "
            f"{max_points} thresholds."
        )
        lo, hi = pl.col(S.THRESHOLD).min(), pl.col(S.THRESHOLD).max()
        bounds = df.join(big_runs, on=S.RUN_ID, how="semi").group_by(S.RUN_ID)
        step = (pl.col("hi") - pl.col("lo")) * pl.col("i") / (max_points - 1)
        grid = (
            bounds.agg(lo.alias("lo"), hi.alias("hi"))
            .with_columns(pl.int_range(max_points).implode().alias("i"))
            .explode("i")
            .with_columns((pl.col("lo") + step).clip(upper_bound=pl.col("hi")).alias(S.THRESHOLD))
            .with_columns((pl.col(S.THRESHOLD) - EPS).alias("_key"))
            .select(S.RUN_ID, S.THRESHOLD, "_key")
            .sort(S.RUN_ID, "_key")
        )
        # the pass rate at x is that of the first row whose threshold meets x (>= x - EPS)
        read = grid.join_asof(
            df.select(S.RUN_ID, pl.col(S.THRESHOLD).alias("_key"), S.PASS_RATE),
            on="_key",
            by=S.RUN_ID,
            strategy="forward",
            check_sortedness=False,  # both sides are sorted by (run_id, key) above
        )
        parts.append(read.select(S.RUN_ID, S.THRESHOLD, S.PASS_RATE))
    chart = (
        alt.Chart(pl.concat(parts).sort(S.RUN_ID, S.THRESHOLD))
        .mark_line(interpolate="step-before")
        .encode(
            x=alt.X(f"{S.THRESHOLD}:Q", title="execution threshold"),
            y=_enc(alt.Y, f"{S.PASS_RATE}:Q", unit=True, pct=True, title="pass rate"),
            color=alt.Color(f"{S.RUN_ID}:N", title="run"),
            tooltip=_tips(
                f"{S.RUN_ID}:N", (f"{S.THRESHOLD}:Q", ".3f"), (f"{S.PASS_RATE}:Q", ".1%")
            ),
        )
    )
    return titled(chart, "Pass rate by threshold", [note, grid_note])


def kappa_curve_chart(agreement_curve: pl.DataFrame | pl.LazyFrame) -> Any:
    """Cohen's κ of each judge against the human labels by threshold, one line per evaluator
    and rater, for the latest labeled run (agreement_curve)."""
    needs = [S.CONFIG_ID, S.RUN_ID, S.EVALUATOR, S.RATER, S.THRESHOLD, S.KAPPA]
    df = _frame(agreement_curve, "kappa_curve_chart", needs).drop_nulls(S.KAPPA)
    df, _, note = _latest_runs(df, 1)
    judge = pl.format("{} ({})", S.EVALUATOR, S.RATER).alias("judge")
    chart = (
        alt.Chart(df.select(judge, S.THRESHOLD, S.KAPPA).sort("judge", S.THRESHOLD))
        .mark_line(point=True)
        .encode(
            x=alt.X(f"{S.THRESHOLD}:Q", title="judge threshold"),
            y=alt.Y(f"{S.KAPPA}:Q", title="Cohen's κ against the labels"),
            color=alt.Color("judge:N", title="evaluator (rater)"),
            tooltip=_tips("judge:N", (f"{S.THRESHOLD}:Q", ".3f"), (f"{S.KAPPA}:Q", ".3f")),
        )
    )
    return titled(chart, "Judge vs human: κ by threshold", [note])


def sweep_heatmap(
    sweep: pl.DataFrame | pl.LazyFrame,
    x: str | None = None,
    y: str | None = None,
    *,
    value: str = S.PASS_RATE,
) -> Any:
    """`value` by two swept parameters `x` and `y` (sweep_* columns, default the first
    two), one panel per run (sweep); with one parameter the runs go down the y axis. Every
    (x, y, run) must be one config."""
    names = sweep.lazy().collect_schema().names()
    params = [c for c in names if c.startswith("sweep_")]

    def column(name: str | None, k: int) -> str | None:
        if name is None:
            return params[k] if len(params) > k else None
        full = name if name.startswith("sweep_") else f"sweep_{name.replace('.', '_')}"
        if full not in names:
            raise ChartInputError(
                f"sweep_heatmap: no swept parameter {name!r}; the sweep has "
                f"{', '.join(params) or 'no sweep_* columns'}; hint: sweep a grid (docs/sweep.md)."
            )
        return full

    xc = column(x, 0)
    if xc is None:
        raise ChartInputError(
            "sweep_heatmap needs at least one sweep_* column; hint: sweep a Grid "
            "(ef.grid_from_dict / --grid), not a plain list of configs."
        )
    yc = column(y, 1 if x is None else next((k for k, p in enumerate(params) if p != xc), 99))
    keys = [xc, *([yc] if yc else [])]
    df = _frame(sweep, "sweep_heatmap", [S.RUN_ID, *keys, value])
    dup = df.group_by(S.RUN_ID, *keys).len().filter(pl.col("len") > 1)
    if dup.height:
        others = [p for p in params if p not in keys]
        raise ChartInputError(
            f"sweep_heatmap: {dup.height} (run, {', '.join(keys)}) cells hold several configs"
            f" (other swept parameters: {', '.join(others) or 'explicit configs'}); hint: "
            "filter the sweep to one value of each other parameter first."
        )
    as_text = (pl.col(k).cast(pl.String).fill_null("(base)").alias(k) for k in keys)
    data = visible_text(df.with_columns(as_text).select(S.RUN_ID, *keys, value))
    # one parameter: a row per run; two: a panel per run, each of (x, y) cells
    cells = data.group_by(S.RUN_ID).len()["len"].max() if data.height else 0
    limit = _per_item(MAX_SERIES if yc else MAX_RUNS, int(cells or 0))  # type: ignore[arg-type]
    data, _, note = _latest_runs(data, limit, df)
    ycol = yc or S.RUN_ID
    fmt = ".0%" if value in (S.PASS_RATE, S.CASE_PASS_RATE) else ".3f"
    base = alt.Chart().encode(
        x=alt.X(f"{xc}:O", title=xc.removeprefix("sweep_")),
        y=alt.Y(f"{ycol}:O", title=ycol.removeprefix("sweep_")),
    )
    lo, hi = data[value].min(), data[value].max()
    mid = (float(lo) + float(hi)) / 2 if lo is not None and hi is not None else 0.0  # type: ignore[arg-type]
    rect, text = _heatmap(
        base,
        alt.Color(f"{value}:Q", scale=alt.Scale(scheme="viridis"), title=value),
        _tips(f"{S.RUN_ID}:N", f"{xc}:O", f"{ycol}:O", (f"{value}:Q", fmt)),
        value,
        fmt,
        # dark text on the light (high) end of viridis, white on the dark end
        color=alt.condition(f"datum['{value}'] > {mid!r}", alt.value("black"), alt.value("white")),
    )
    layer = alt.layer(rect, text, data=data).properties(width=220)
    title = f"What-if: {value} by {', '.join(k.removeprefix('sweep_') for k in keys)}"
    if yc is not None:
        layer = layer.facet(column=alt.Column(f"{S.RUN_ID}:N", title=None), columns=3)
    return noted(layer.properties(title=title), [note])


BAND_COLUMNS = (S.RANK_LOW, S.RANK_HIGH, S.P_BEST)


def rank_bands_chart(run_summary: pl.DataFrame) -> Any:
    """The case bootstrap's rank bands (`--bootstrap B`): per run the 95 % band of its
    pass-rate rank (1 = best), labelled with p_best."""
    df = run_summary.filter(pl.col(S.P_BEST).is_not_null())
    several = df[S.CONFIG_ID].n_unique() > 1
    label = pl.concat_str(S.CONFIG_ID, pl.lit(" · "), S.RUN_ID) if several else pl.col(S.RUN_ID)
    data = visible_text(
        df.select(
            label.alias("run"),
            *BAND_COLUMNS,
            pl.format("p best {}%", (pl.col(S.P_BEST) * 100).round(1)).alias("text"),
        )
    )
    top = max(2.0, float(data[S.RANK_HIGH].max() or 1.0))  # type: ignore[arg-type]
    base = alt.Chart(data).encode(
        y=alt.Y("run:N", sort=data["run"].to_list(), title="run"),
        tooltip=_tips("run:N", f"{S.RANK_LOW}:Q", f"{S.RANK_HIGH}:Q", (f"{S.P_BEST}:Q", ".1%")),
    )
    low = base.encode(
        x=alt.X(
            f"{S.RANK_LOW}:Q",
            scale=alt.Scale(domain=[0.5, top + 0.5], nice=False),
            title="rank by pass rate (95 % band; 1 = best)",
            axis=alt.Axis(tickMinStep=1),
        )
    )
    high = base.encode(x=f"{S.RANK_HIGH}:Q")
    return (
        low.mark_rule(strokeWidth=6, opacity=0.6).encode(x2=f"{S.RANK_HIGH}:Q")
        + low.mark_point(filled=True, size=60)
        + high.mark_point(filled=True, size=60)
        + high.mark_text(align="left", dx=10).encode(text="text:N")
    ).properties(width=420, title="Rank bands (bootstrap)")


CHARTS: dict[str, tuple[Callable[..., Any], str]] = {
    "pass_rate": (pass_rate_chart, S.RUN_SUMMARY),
    "verdicts": (verdict_chart, S.RUN_SUMMARY),
    "trend": (trend_chart, S.RUN_SUMMARY),
    "score_distribution": (score_distribution_chart, S.EXECUTION_SCORES),
    "regression_waterfall": (regression_waterfall_chart, S.CASE_DELTAS),
    "evaluator_heatmap": (evaluator_delta_heatmap, S.EVALUATOR_DELTAS),
    "threshold_curve": (threshold_curve_chart, S.THRESHOLD_CURVE),
    "sweep_heatmap": (sweep_heatmap, S.SWEEP),
    "slice_forest": (slice_forest_chart, S.SLICE_DELTAS),
    "power_curve": (power_curve_chart, S.RUN_DELTAS),
    "kappa_curve": (kappa_curve_chart, S.AGREEMENT_CURVE),
}
"""Chart name -> its function and table."""


def charts_for(tables: dict[str, pl.DataFrame | pl.LazyFrame]) -> dict[str, Any]:
    """Every chart whose table is present (and not empty) in `tables`, by chart name."""
    return {
        name: fn(table)
        for name, (fn, table_name) in CHARTS.items()
        if (table := tables.get(table_name)) is not None
        and table.lazy().select(pl.len()).collect().item()
    }


def to_svg(chart: Any) -> str:
    """The chart rendered to an SVG document offline (vl-convert, no browser, no network)."""
    try:
        import vl_convert as vlc
    except ImportError as exc:  # pragma: no cover - only in a broken install
        raise UsageError(
            "rendering charts to SVG needs vl-convert-python, a dependency of evalframe, "
            f"which cannot be imported ({exc}); hint: reinstall evalframe (pip install -e . "
            "or pip install evalframe)."
        ) from exc
    spec = chart.to_dict()
    # no aria label on every mark: they tripled the size of a chart of many marks
    spec["config"] = {**spec.get("config", {}), "aria": False}
    return str(vlc.vegalite_to_svg(spec))
