"""The report's History section: the trend table of series_trend, the quarantine
candidates of case_history, and one figure per entry of HISTORY_CHARTS (the pass-rate trend
per series with its band, fitted line and change point; the flaky-case strip)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import altair as alt
import polars as pl

from evalframe._private import schema as S
from evalframe._private.report.plots import (
    MAX_CHART_ROWS,
    MAX_RUNS,
    THINNED,
    colors,
    rate_over_runs,
    titled,
    visible_text,
)
from evalframe._private.report.sections import bdi, esc, figure, table, text
from evalframe._private.summaries.difficulty import case_difficulty
from evalframe._private.summaries.history import (
    RUN_INDEX,
    TREND_FIT,
    case_history,
    series_trend,
    trend_points,
)
from evalframe.format import p_value, visible, with_wilson

HISTORY_MIN_RUNS = 3
"""The History section appears when a config has at least this many runs."""
MAX_STRIP_CASES = 60
"""Most cases the flaky-case strip draws: quarantine candidates first, then by flip_rate."""
MAX_TREND_SERIES = 10
"""Most series the trend chart draws (the first in series order)."""
MAX_TICKS = 20
"""Most run ids the trend chart's axis labels (evenly spaced)."""
SERIES_LABEL = "series_label"
POSITION = "run_position"
NO_SERIES = "(all runs)"
NULL_SERIES = "(none)"


@dataclass
class HistoryData:
    """One config's runs in series order (`points`), series_trend, case_history, its
    case_summary rows and the cases case_difficulty flags."""

    points: pl.DataFrame
    trend: pl.DataFrame
    cases: pl.DataFrame
    case_summary: pl.DataFrame | None
    difficulty: pl.DataFrame | None = None


def _labelled(df: pl.DataFrame) -> pl.DataFrame:
    return df.with_columns(
        pl.when(pl.col(S.SERIES_COLUMN).is_null())
        .then(pl.lit(NO_SERIES))
        .otherwise(
            pl.concat_str(
                pl.col(S.SERIES_COLUMN), pl.lit("="), pl.col(S.SERIES).fill_null(NULL_SERIES)
            )
        )
        .alias(SERIES_LABEL)
    )


def _positions(points: pl.DataFrame) -> tuple[pl.DataFrame, Any]:
    """points with POSITION, the run's place among the config's runs (created_at, then
    run_id), and the x axis labelling those positions with at most MAX_TICKS run ids."""
    order = points.sort(S.CREATED_AT, S.RUN_ID, nulls_last=True)[S.RUN_ID].unique(
        maintain_order=True
    )
    step = max(1, -(-order.len() // MAX_TICKS))
    labels = json.dumps([visible(r) for r in order.to_list()])
    axis = alt.Axis(
        values=list(range(0, order.len(), step)),
        labelExpr=f"{labels}[datum.value]",
        labelAngle=-40,
        labelLimit=160,
        title="run (created_at order)",
    )
    index = {r: i for i, r in enumerate(order.to_list())}
    position = pl.col(S.RUN_ID).replace_strict(index, return_dtype=pl.Int64).alias(POSITION)
    return points.with_columns(position), alt.X(
        f"{POSITION}:Q", axis=axis, scale=alt.Scale(domain=[-0.5, order.len() - 0.5], nice=False)
    )


def history_trend_chart(data: HistoryData) -> Any:
    """Pass rate per run of each series with its Wilson band, the series' fitted line
    (dashed) and a dotted rule before its change run."""
    points, x = _positions(_labelled(data.points))
    labels = points[SERIES_LABEL].unique(maintain_order=True).to_list()
    notes = []
    if len(labels) > MAX_TREND_SERIES:
        notes.append(
            f"{THINNED} only the first {MAX_TREND_SERIES} of {len(labels)} series are drawn."
        )
        labels = labels[:MAX_TREND_SERIES]
    points = points.filter(pl.col(SERIES_LABEL).is_in(labels))
    change = (
        _labelled(data.trend)
        .join(
            points.select(SERIES_LABEL, S.RUN_ID, POSITION),
            left_on=[SERIES_LABEL, S.CHANGE_RUN_ID],
            right_on=[SERIES_LABEL, S.RUN_ID],
        )
        .select(SERIES_LABEL, S.CHANGE_RUN_ID, S.CHANGE_P, (pl.col(POSITION) - 0.5).alias("at"))
    )
    rows = visible_text(
        with_wilson(points).select(
            SERIES_LABEL, S.RUN_ID, POSITION, S.PASS_RATE, TREND_FIT, "ci_low", "ci_high"
        )
    )
    layers = rate_over_runs(x, (SERIES_LABEL, "series"))
    fit = alt.Chart().mark_line(strokeDash=[6, 3])
    fit = fit.encode(x=x, y=f"{TREND_FIT}:Q", color=f"{SERIES_LABEL}:N")
    chart = alt.layer(*layers, fit, data=rows)
    if change.height:
        chart += (
            alt.Chart(visible_text(change))
            .mark_rule(strokeDash=[2, 2])
            .encode(
                x="at:Q",
                color=f"{SERIES_LABEL}:N",
                tooltip=[
                    alt.Tooltip(f"{S.CHANGE_RUN_ID}:N", title="change run"),
                    alt.Tooltip(f"{S.CHANGE_P}:Q", format=".3g", title="p (Bonferroni)"),
                ],
            )
        )
    return titled(chart, "Pass rate over the runs of each series", notes)


def flaky_strip_chart(data: HistoryData) -> Any:
    """Cases × runs, a cell per verdict (passed green, failed red), quarantine candidates
    first, then by flip_rate; thinned to MAX_STRIP_CASES cases and the latest MAX_RUNS
    runs. None without case_summary or a case that ever flipped."""
    if data.case_summary is None or data.cases.is_empty():
        return None
    ranked = (
        data.cases.filter(pl.col(S.FLIPS) > 0)
        .sort(
            [S.QUARANTINE, S.FLIP_RATE, S.N_RUNS, S.SERIES, S.CASE_ID],
            descending=[True, True, True, False, False],
            nulls_last=True,
        )
        .pipe(_labelled)
    )
    if ranked.is_empty():
        return None
    notes = []
    runs = _labelled(data.points).select(SERIES_LABEL, S.RUN_ID, S.CREATED_AT, RUN_INDEX)
    latest = runs.filter(
        pl.col(RUN_INDEX) >= pl.col(RUN_INDEX).max().over(SERIES_LABEL) - MAX_RUNS + 1
    )
    if latest.height < runs.height:
        notes.append(f"{THINNED} only the latest {MAX_RUNS} runs of each series are drawn.")
    n_runs: int = max([1, *latest.group_by(SERIES_LABEL).len()["len"].to_list()])
    limit = max(1, min(MAX_STRIP_CASES, MAX_CHART_ROWS // n_runs))
    if ranked.height > limit:
        notes.append(
            f"{THINNED} {limit} of the {ranked.height} cases that flipped are drawn "
            "(quarantine candidates first, then by flip_rate)."
        )
        ranked = ranked.head(limit)
    kept = ranked.select(SERIES_LABEL, S.CASE_ID).with_row_index("case_rank")
    cells = (
        data.case_summary.select(S.RUN_ID, S.CASE_ID, S.PASSED)
        .filter(pl.col(S.PASSED).is_not_null())
        .join(latest, on=S.RUN_ID)
        .join(kept, on=[SERIES_LABEL, S.CASE_ID])
        .with_columns(
            pl.when(pl.col(S.PASSED)).then(pl.lit("pass")).otherwise(pl.lit("fail")).alias("cell"),
            pl.when(pl.col(SERIES_LABEL) == NO_SERIES)
            .then(pl.col(S.CASE_ID))
            .otherwise(pl.concat_str(pl.col(SERIES_LABEL), pl.lit(" · "), pl.col(S.CASE_ID)))
            .alias("row"),
        )
        .sort("case_rank", RUN_INDEX)
    )
    cells = visible_text(cells.select("row", "case_rank", S.RUN_ID, RUN_INDEX, "cell"))
    runs_in_order = visible_text(_positions(latest)[0].sort(POSITION))[S.RUN_ID].to_list()
    order = cells.unique("row", maintain_order=True)["row"].to_list()
    axis = alt.Axis(labelAngle=-40, labelLimit=160)
    chart = (
        alt.Chart(cells)
        .mark_rect(stroke="white", strokeWidth=0.5)
        .encode(
            x=alt.X(f"{S.RUN_ID}:N", sort=runs_in_order, title="run (created_at order)", axis=axis),
            y=alt.Y("row:N", sort=order, title=None),
            color=colors("cell", ("pass", "fail"), ("#2e7d32", "#c62828"), "verdict in the run"),
            tooltip=[alt.Tooltip(f"{S.RUN_ID}:N", title="run"), "row:N", "cell:N"],
        )
    )
    return titled(chart, "Cases that flip across runs (worst first)", notes, height=alt.Step(12))


HISTORY_CHARTS: dict[str, Callable[[HistoryData], Any]] = {
    "history_trend": history_trend_chart,
    "flaky_strip": flaky_strip_chart,
}
"""The History section's figures in order (captions: text.html's caption_NAME)."""


def history_data(
    frames: Mapping[str, pl.DataFrame], config: Any = None, series: str | None = None
) -> HistoryData | None:
    """The section's data (series_trend and case_history as given, else computed) for the
    first config with at least HISTORY_MIN_RUNS runs; None when none has that many."""
    rs = frames.get(S.RUN_SUMMARY)
    if rs is None or rs.is_empty():
        return None
    counts = rs.group_by(S.CONFIG_ID, maintain_order=True).agg(pl.col(S.RUN_ID).n_unique())
    ready = counts.filter(pl.col(S.RUN_ID) >= HISTORY_MIN_RUNS)[S.CONFIG_ID].to_list()
    if not ready:
        return None
    config_id = ready[0]
    runs = rs.filter(pl.col(S.CONFIG_ID) == config_id)
    if series is not None and series not in runs.columns:
        series = None
    cs = frames.get(S.CASE_SUMMARY)
    cs = None if cs is None else cs.filter(pl.col(S.CONFIG_ID) == config_id)
    trend = frames.get(S.SERIES_TREND)
    if trend is None:
        trend = series_trend(runs.lazy(), series=series).collect()
    history = frames.get(S.CASE_HISTORY)
    if history is None and cs is not None:
        rules = getattr(config, "history", None)
        kwargs = (
            {}
            if rules is None
            else {"min_runs": rules.min_runs, "flaky_flip_rate": rules.flaky_flip_rate}
        )
        history = case_history(cs.lazy(), runs.lazy(), series=series, **kwargs).collect()
    points = trend_points(runs.lazy(), series=series).collect()
    if S.CASES in runs.columns:
        points = points.join(runs.select(S.RUN_ID, S.CASES), on=S.RUN_ID, how="left")
    return HistoryData(
        points=points,
        trend=trend.filter(pl.col(S.CONFIG_ID) == config_id),
        cases=(
            pl.DataFrame(schema={c: pl.Null for c in S.CASE_HISTORY_COLUMNS})
            if history is None
            else history.filter(pl.col(S.CONFIG_ID) == config_id)
        ),
        case_summary=cs,
        difficulty=_flagged(frames.get(S.CASE_DIFFICULTY), cs, runs, series, config_id),
    )


def _flagged(
    stored: pl.DataFrame | None,
    cs: pl.DataFrame | None,
    runs: pl.DataFrame,
    series: str | None,
    config_id: str,
) -> pl.DataFrame | None:
    """The config's cases case_difficulty flags (as given, else fitted from case_summary)."""
    if stored is None and cs is None:
        return None
    table = case_difficulty(cs, runs, series=series) if stored is None else stored
    return table.filter((pl.col(S.CONFIG_ID) == config_id) & pl.col(S.FLAG).is_not_null())


def _slope(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:+.2f}"


def _trend_table(trend: pl.DataFrame) -> str:
    rows = []
    for r in _labelled(trend).iter_rows(named=True):
        cells = [bdi(r[SERIES_LABEL]), str(r[S.N_RUNS])]
        for y in (S.PASS_RATE, S.MEAN_SCORE):
            low, high = r[f"{y}_slope_ci_low"], r[f"{y}_slope_ci_high"]
            band = "" if low is None or high is None else f" [{_slope(low)}, {_slope(high)}]"
            flag = " <span class='pill bad'>degrading</span>" if r[f"{y}_degrading"] else ""
            cells.append(f"{_slope(r[f'{y}_slope'])}{band}{flag}")
        change = r[S.CHANGE_RUN_ID]
        cells += ["—" if change is None else bdi(change), p_value(r[S.CHANGE_P])]
        rows.append(cells)
    headers = [
        "series",
        "runs",
        "pass rate slope (pts/run) [95 %]",
        "mean score slope (pts/run) [95 %]",
        "change run",
        "p",
    ]
    return table(headers, rows, cls="history-trend")


def _candidates(cases: pl.DataFrame) -> str:
    if cases.is_empty() or S.QUARANTINE not in cases.columns:
        return ""
    flagged = cases.filter(pl.col(S.QUARANTINE))
    if flagged.is_empty():
        return text("no_quarantine")
    worst = flagged.sort(S.FLIP_RATE, descending=True, nulls_last=True).head(10)
    names = ", ".join(
        f"{bdi(r[S.CASE_ID])} ({100 * r[S.FLIP_RATE]:.0f}% flips over {r[S.N_RUNS]} runs)"
        for r in worst.iter_rows(named=True)
    )
    more = f" and {flagged.height - worst.height} more" if flagged.height > worst.height else ""
    return text("quarantine", n=flagged.height, names=names, more=more)


def history_section(
    frames: Mapping[str, pl.DataFrame], config: Any = None, series: str | None = None
) -> str:
    data = history_data(frames, config, series)
    if data is None:
        return ""
    figures = [
        figure(name, chart, cls="history-chart")
        for name, fn in HISTORY_CHARTS.items()
        if (chart := fn(data)) is not None
    ]
    by = (
        f"one series per value of the runs column {esc(series)}"
        if series
        else "all runs one series"
    )
    return (
        text("history", series=by)
        + _trend_table(data.trend)
        + _candidates(data.cases)
        + _difficulty(data.difficulty)
        + "\n".join(figures)
    )


def _difficulty(flagged: pl.DataFrame | None) -> str:
    """The cases the history flags, per flag: how many and the first ten of them."""
    if flagged is None or flagged.is_empty():
        return ""
    lines = []
    for flag in (S.FLAG_NEVER, S.FLAG_ALWAYS, S.FLAG_NEGATIVE):
        ids = flagged.filter(pl.col(S.FLAG) == flag).sort(S.CASE_ID)[S.CASE_ID].to_list()
        if ids:
            more = f" and {len(ids) - 10} more" if len(ids) > 10 else ""
            lines.append(f"<li>{flag}: {len(ids)} ({', '.join(map(bdi, ids[:10]))}{more})</li>")
    return text("difficulty", flags="".join(lines))
