"""The report's History section (SPEC §12) and its charts: the pass-rate trend per series
with its band, fitted line and change point, and the flaky-case strip (cases × runs).

`history_section(frames, series=...)` is empty with fewer than HISTORY_MIN_RUNS runs in a
config; otherwise it holds the trend table of series_trend, the quarantine candidates of
case_history and one figure per entry of HISTORY_CHARTS. To add a chart, add an entry:
a name, a function of the section's data (`HistoryData`) returning an Altair chart or
None, and a caption.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import polars as pl

from evalframe._private import schema as S
from evalframe._private.display import visible
from evalframe._private.report.plots import (
    MAX_CHART_ROWS,
    MAX_RUNS,
    THINNED,
    WIDTH,
    chart_note,
    rate_interval,
    to_svg,
    visible_text,
)
from evalframe._private.summaries.history import (
    RUN_INDEX,
    TREND_FIT,
    case_history,
    series_trend,
    trend_points,
)

HISTORY_MIN_RUNS = 3
"""The History section appears when a config has at least this many runs."""
MAX_STRIP_CASES = 60
"""Most cases the flaky-case strip draws: quarantine candidates first, then by flip_rate."""
MAX_TREND_SERIES = 10
"""Most series the trend chart draws (the first in series order)."""
SERIES_LABEL = "series_label"
NO_SERIES = "(all runs)"
NULL_SERIES = "(none)"


@dataclass
class HistoryData:
    """What the History section draws from, for one config: run_summary's runs in series
    order (`points`), series_trend and case_history, the case_summary rows of the runs
    and the --series column."""

    points: pl.DataFrame
    trend: pl.DataFrame
    cases: pl.DataFrame
    case_summary: pl.DataFrame | None
    series: str | None


def _e(x: Any) -> str:
    return html.escape(visible("" if x is None else str(x)))


def _label(series_column: Any, value: Any) -> str:
    if series_column is None:
        return NO_SERIES
    return f"{series_column}={NULL_SERIES if value is None else value}"


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


def _noted(chart: Any, notes: list[str]) -> Any:
    text = " ".join(notes)
    return chart.properties(description=text) if text else chart


# --- charts ---------------------------------------------------------------------------
def history_trend_chart(data: HistoryData) -> Any:
    """Pass rate per run of each series by its index in the series (0 = oldest), the 95 %
    Wilson band of each run (as the pass-rate chart), the series' weighted least-squares
    line (series_trend) dashed, and a rule at each series' change run."""
    import altair as a

    points = _labelled(data.points)
    labels = points[SERIES_LABEL].unique(maintain_order=True).to_list()
    notes = []
    if len(labels) > MAX_TREND_SERIES:
        notes.append(
            f"{THINNED} only the first {MAX_TREND_SERIES} of {len(labels)} series are drawn."
        )
        labels = labels[:MAX_TREND_SERIES]
    points = visible_text(points.filter(pl.col(SERIES_LABEL).is_in(labels)))
    cases = [S.CASES] if S.CASES in points.columns else []
    df = points.with_columns(*rate_interval(S.PASS_RATE, S.PASS_RATE_SE, next(iter(cases), None)))
    change = visible_text(
        _labelled(data.trend)
        .filter(pl.col(S.CHANGE_RUN_ID).is_not_null())
        .join(
            _labelled(data.points).select(S.CONFIG_ID, SERIES_LABEL, S.RUN_ID, RUN_INDEX),
            left_on=[S.CONFIG_ID, SERIES_LABEL, S.CHANGE_RUN_ID],
            right_on=[S.CONFIG_ID, SERIES_LABEL, S.RUN_ID],
        )
        .select(SERIES_LABEL, S.CHANGE_RUN_ID, S.CHANGE_P, (pl.col(RUN_INDEX) - 0.5).alias("at"))
        .filter(pl.col(SERIES_LABEL).is_in(labels))
    )
    data_cols = [SERIES_LABEL, S.RUN_ID, RUN_INDEX, S.PASS_RATE, TREND_FIT, "ci_low", "ci_high"]
    base = a.Chart(df.select(data_cols)).encode(
        x=a.X(f"{RUN_INDEX}:Q", title="run in the series (0 = oldest)", axis=a.Axis(tickMinStep=1)),
        color=a.Color(f"{SERIES_LABEL}:N", title="series"),
    )
    scale = a.Scale(domain=[0, 1])
    band = base.mark_area(opacity=0.15).encode(
        y=a.Y("ci_low:Q", scale=scale, title="pass rate", axis=a.Axis(format="%"), stack=None),
        y2="ci_high:Q",
    )
    line = base.mark_line(point=True).encode(
        y=a.Y(f"{S.PASS_RATE}:Q", scale=scale),
        tooltip=[
            a.Tooltip(f"{S.RUN_ID}:N", title="run"),
            a.Tooltip(f"{SERIES_LABEL}:N", title="series"),
            a.Tooltip(f"{S.PASS_RATE}:Q", format=".1%"),
        ],
    )
    fit = base.mark_line(strokeDash=[6, 3]).encode(y=a.Y(f"{TREND_FIT}:Q", scale=scale))
    layers = band + line + fit
    if change.height:
        rules = (
            a.Chart(change)
            .mark_rule(strokeDash=[2, 2])
            .encode(
                x="at:Q",
                color=a.Color(f"{SERIES_LABEL}:N"),
                tooltip=[
                    a.Tooltip(f"{S.CHANGE_RUN_ID}:N", title="change run"),
                    a.Tooltip(f"{S.CHANGE_P}:Q", format=".3g", title="p (Bonferroni)"),
                ],
            )
        )
        layers = layers + rules
    chart = layers.properties(width=WIDTH, title="Pass rate over the runs of each series")
    return _noted(chart, notes)


def flaky_strip_chart(data: HistoryData) -> Any:
    """Cases × runs of the series, a cell per run where the case has a verdict (passed
    green, failed red): the quarantine candidates first, then the cases with the highest
    flip_rate; thinned to MAX_STRIP_CASES cases and the latest MAX_RUNS runs, with a note.
    None without case_summary or without a case that ever flipped."""
    import altair as a

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
    runs = _labelled(data.points).select(SERIES_LABEL, S.RUN_ID, RUN_INDEX)
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
    order = cells.unique("row", maintain_order=True)["row"].to_list()
    chart = (
        a.Chart(cells)
        .mark_rect(stroke="white", strokeWidth=0.5)
        .encode(
            x=a.X(f"{RUN_INDEX}:O", title="run in the series (0 = oldest)"),
            y=a.Y("row:N", sort=order, title=None),
            color=a.Color(
                "cell:N",
                scale=a.Scale(domain=["pass", "fail"], range=["#2e7d32", "#c62828"]),
                title="case",
            ),
            tooltip=[a.Tooltip(f"{S.RUN_ID}:N", title="run"), "row:N", "cell:N"],
        )
        .properties(width=WIDTH, title="Cases that flip across runs (worst first)")
    )
    return _noted(chart, notes)


HISTORY_CHARTS: dict[str, tuple[Callable[[HistoryData], Any], str]] = {
    "history_trend": (
        history_trend_chart,
        "Pass rate per run of each series with its 95 % band (Wilson, clustered n_eff), the "
        "weighted least-squares trend (dashed) and the change point (dotted rule, between "
        "the two runs around the split).",
    ),
    "flaky_strip": (
        flaky_strip_chart,
        "Each case that changed verdict across the runs of its series: one cell per run "
        "(green passed, red failed), quarantine candidates first.",
    ),
}
"""name → (chart of the section's data, caption): the History section's figures, in order."""


# --- the section ---------------------------------------------------------------------
def history_data(
    frames: Mapping[str, pl.DataFrame], config: Any = None, series: str | None = None
) -> HistoryData | None:
    """The section's data from the report's tables (series_trend and case_history when
    given, else computed from run_summary and case_summary), for the first config with at
    least HISTORY_MIN_RUNS runs; None when no config has that many."""
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
        series=series,
    )


def _pts(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:+.2f}"


def _trend_table(trend: pl.DataFrame) -> str:
    head = (
        "<tr><th>series</th><th>runs</th><th>pass rate slope (pts/run) [95 %]</th>"
        "<th>mean score slope (pts/run) [95 %]</th><th>change run</th><th>p</th></tr>"
    )
    body = []
    for r in trend.iter_rows(named=True):
        cells = [f"<td><bdi>{_e(_label(r[S.SERIES_COLUMN], r[S.SERIES]))}</bdi></td>"]
        cells.append(f"<td>{r[S.N_RUNS]}</td>")
        for y in (S.PASS_RATE, S.MEAN_SCORE):
            low, high = r[f"{y}_slope_ci_low"], r[f"{y}_slope_ci_high"]
            band = "" if low is None or high is None else f" [{_pts(low)}, {_pts(high)}]"
            flag = " <span class='pill bad'>degrading</span>" if r[f"{y}_degrading"] else ""
            cells.append(f"<td>{_pts(r[f'{y}_slope'])}{band}{flag}</td>")
        change = r[S.CHANGE_RUN_ID]
        cells.append(f"<td><bdi>{_e(change) if change is not None else '—'}</bdi></td>")
        p = r[S.CHANGE_P]
        cells.append(f"<td>{'—' if p is None else f'{p:.3g}'}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table class='history-trend'>{head}{''.join(body)}</table>"


def _candidates(cases: pl.DataFrame) -> str:
    if cases.is_empty() or S.QUARANTINE not in cases.columns:
        return ""
    flagged = cases.filter(pl.col(S.QUARANTINE))
    if flagged.is_empty():
        return (
            "<p class='note'>No quarantine candidates "
            "(history.min_runs, history.flaky_flip_rate).</p>"
        )
    worst = flagged.sort(S.FLIP_RATE, descending=True, nulls_last=True).head(10)
    names = ", ".join(
        f"<bdi>{_e(r[S.CASE_ID])}</bdi> ({100 * r[S.FLIP_RATE]:.0f}% flips over {r[S.N_RUNS]} runs)"
        for r in worst.iter_rows(named=True)
    )
    more = f" and {flagged.height - worst.height} more" if flagged.height > worst.height else ""
    return (
        f"<p class='note'><b>{flagged.height} quarantine candidate(s)</b> "
        f"(<code>evalframe flaky</code> lists them): {names}{more}.</p>"
    )


def history_section(
    frames: Mapping[str, pl.DataFrame], config: Any = None, series: str | None = None
) -> str:
    """The History section (`<h2 id='history'>`), or "" when no config has at least
    HISTORY_MIN_RUNS runs."""
    data = history_data(frames, config, series)
    if data is None:
        return ""
    figures = []
    for name, (fn, caption) in HISTORY_CHARTS.items():
        chart = fn(data)
        if chart is None:
            continue
        svg = to_svg(chart)
        svg = svg[svg.index("<svg") :]
        note = chart_note(chart)
        thinned = f" <span class='thinned'>{_e(note)}</span>" if note else ""
        figures.append(
            f"<figure class='history-chart' id='history-{name}' data-chart='{name}'>{svg}"
            f"<figcaption>{_e(caption)}{thinned}</figcaption></figure>"
        )
    return (
        "<h2 id='history'>History</h2>"
        "<p class='note'>Runs in series order (created_at, then run_id; "
        + (
            "one series per value of the runs column " + _e(series)
            if series
            else "all runs one series"
        )
        + "). Slopes are weighted least squares (weights 1/se²), in percentage points per run; "
        "the change point is the split of the pass rate with the largest |z|, its p "
        "Bonferroni-adjusted (docs/statistics.md).</p>"
        + _trend_table(data.trend)
        + _candidates(data.cases)
        + "\n".join(figures)
    )
