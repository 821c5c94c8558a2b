"""The rank-bands chart of the case bootstrap (SPEC §12, `--bootstrap B`): one row per run,
the 95 % band of its pass-rate rank among the runs of its config that share their cases
(rank_low … rank_high, 1 = best), labelled with p_best (the share of replicates ranking
it first). Shown in the report's runs part when run_summary carries the columns."""

from __future__ import annotations

import html
from typing import Any

import polars as pl

from evalframe._private import schema as S
from evalframe._private.display import visible
from evalframe._private.report.plots import to_svg

BAND_COLUMNS = (S.RANK_LOW, S.RANK_HIGH, S.P_BEST)
"""The run_summary columns the chart reads (present only with --bootstrap)."""
WIDTH = 420
CAPTION = (
    "Rank bands (case bootstrap): each run's 95 % band of its pass-rate rank among the runs "
    "of its config that share their cases, over the --bootstrap replicates (1 = best; ties "
    "share the best rank). The label is p_best, the share of replicates ranking the run "
    "first. Overlapping bands: the order of those runs is not settled by these cases."
)


def has_bands(run_summary: pl.DataFrame) -> bool:
    """Whether run_summary carries the bootstrap rank columns with at least one value."""
    return all(c in run_summary.columns for c in BAND_COLUMNS) and bool(
        run_summary.select(pl.col(S.P_BEST).is_not_null().any()).item()
    )


def rank_bands_chart(run_summary: pl.DataFrame) -> Any:
    """Runs × rank interval (a rule from rank_low to rank_high, a point at each end), the
    label p_best; runs in the table's order, one panel row per config and run."""
    import altair as alt

    df = run_summary.filter(pl.col(S.P_BEST).is_not_null())
    several = df[S.CONFIG_ID].n_unique() > 1
    label = (
        pl.concat_str(pl.col(S.CONFIG_ID), pl.lit(" · "), pl.col(S.RUN_ID))
        if several
        else pl.col(S.RUN_ID)
    )
    data = df.select(
        label.map_elements(visible, return_dtype=pl.String).alias("run"),
        S.RANK_LOW,
        S.RANK_HIGH,
        S.P_BEST,
        (pl.lit("p best ") + (pl.col(S.P_BEST) * 100).round(1).cast(pl.String) + "%").alias("text"),
    )
    order = data["run"].to_list()
    top = max(2.0, float(data[S.RANK_HIGH].max() or 1.0))  # type: ignore[arg-type]
    y = alt.Y("run:N", sort=order, title="run")
    x = alt.X(
        f"{S.RANK_LOW}:Q",
        scale=alt.Scale(domain=[0.5, top + 0.5], nice=False),
        title="rank by pass rate (95 % band; 1 = best)",
        axis=alt.Axis(tickMinStep=1),
    )
    base = alt.Chart(data)
    tooltip = [
        alt.Tooltip("run:N"),
        alt.Tooltip(f"{S.RANK_LOW}:Q"),
        alt.Tooltip(f"{S.RANK_HIGH}:Q"),
        alt.Tooltip(f"{S.P_BEST}:Q", format=".1%"),
    ]
    rule = base.mark_rule(strokeWidth=6, opacity=0.6).encode(
        y=y, x=x, x2=f"{S.RANK_HIGH}:Q", tooltip=tooltip
    )
    low = base.mark_point(filled=True, size=60).encode(y=y, x=x, tooltip=tooltip)
    high = base.mark_point(filled=True, size=60).encode(
        y=y, x=alt.X(f"{S.RANK_HIGH}:Q"), tooltip=tooltip
    )
    text = base.mark_text(align="left", dx=10).encode(
        y=y, x=alt.X(f"{S.RANK_HIGH}:Q"), text="text:N"
    )
    return (rule + low + high + text).properties(width=WIDTH, title="Rank bands (bootstrap)")


def rank_bands_figure(run_summary: pl.DataFrame) -> str:
    """The chart as an inline SVG figure with its caption; "" without the columns."""
    if not has_bands(run_summary):
        return ""
    svg = to_svg(rank_bands_chart(run_summary))
    svg = svg[svg.index("<svg") :]  # inline: no XML prolog
    return (
        f"<figure class='chart' id='chart-rank_bands' data-chart='rank_bands'>{svg}"
        f"<figcaption>{html.escape(CAPTION)}</figcaption></figure>"
    )
