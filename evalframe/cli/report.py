"""`evalframe report DATASET`: one self-contained HTML page with the run table, the
comparisons and every chart (docs/report.md)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

import evalframe as ef
from evalframe.cli._console import Lazy, stderr, stdout
from evalframe.cli._options import BOOT, DatasetArg, beside, default_of, policy, shared

if TYPE_CHECKING:
    import evalframe.cli._render as ui
    from evalframe import plots
else:
    ui, plots = Lazy("evalframe.cli._render"), Lazy("evalframe.plots")


def make_report(
    dataset: Path,
    cfg: Any,
    out: Path,
    *,
    grid: Path | None = None,
    clamp: bool = False,
    top: int | None = None,
    series: str | None = None,
    **options: Any,
) -> Path:
    """Compute the report's tables from `dataset` under `cfg` (`options`: report_tables'
    keywords) and write the page to `out` (checked first: `check_report_path`); `series`
    pairs and trends runs within each value of that runs column."""
    plots.check_report_path(out, dataset, beside(dataset, "report.html"))
    ds = ef.load_dataset(dataset, clamp=clamp)
    spec = ef.load_grid(grid, evaluators=ds.evaluators) if grid is not None else None
    if top is None:  # the report's own number of cases per pair (and per run)
        top = int(default_of(plots.report_tables, "per_pair"))
    tables = plots.report_tables(
        ds, cfg, grid=spec, per_pair=top, per_run=top, series=series, **options
    )
    return plots.write_report(
        tables,
        out,
        title=f"evalframe report: {dataset.name or dataset}",
        source=str(dataset),
        limits=cfg.compare,
        top=top,
        config=cfg,
        series=series,
    )


ReportThresholdOpt = Annotated[
    float | None, typer.Option("--threshold", "-t", min=0.0, max=1.0, help="Pass threshold 0-1.")
]
ReportBaselineOpt = Annotated[
    str | None,
    typer.Option(
        "--baseline",
        "-b",
        help="Compare every other run against this run (default: each run against the one "
        "before it).",
    ),
]
GridOpt = Annotated[
    Path | None,
    typer.Option(
        "--grid",
        "-g",
        help="What-if grid file for the sweep heatmap (default: threshold 0.6-0.9 × outcomes "
        "mode).",
    ),
]
WhatIfOpt = Annotated[
    bool, typer.Option("--what-if/--no-what-if", help="Include the sweep and threshold charts.")
]
ReportByOpt = Annotated[
    str | None,
    typer.Option(
        "--by",
        help="Slice the comparison by 'tag' or an executions column (forest plot; default: "
        "tag when the executions have tags).",
    ),
]
ReportTopOpt = Annotated[
    int | None,
    typer.Option(
        "--top",
        min=0,
        show_default=False,
        help="Regressed cases embedded per pair and failing cases per run (worst first; the "
        "page says how to list the rest; default {cases_per_pair}).",
    ),
]
ReportOutOpt = Annotated[
    Path | None,
    typer.Option("--out", "-o", help="HTML file to write (default: DATASET/report.html)."),
]


@shared("config", "preset", "series", "clamp", *BOOT)
def report(
    dataset: DatasetArg,
    threshold: ReportThresholdOpt = None,
    baseline: ReportBaselineOpt = None,
    grid: GridOpt = None,
    what_if: WhatIfOpt = True,
    by: ReportByOpt = None,
    top: ReportTopOpt = None,
    out: ReportOutOpt = None,
    **options: Any,
) -> None:
    """Write one self-contained HTML report (no network needed to view it): the policy
    (threshold, band, gates, limits), run table with gates and Wilson intervals, comparisons
    with reasons, which evaluator moved (ties marked), paired interval and McNemar p, every
    regressed and failing case with its judge reasons and outcome checks (search, sort,
    expand), and the charts.

    Example: [bold]evalframe report runs/ --baseline 2026-10-01-v1.4 --out report.html[/bold]
    """
    options["threshold"] = threshold
    cfg = policy(options)
    target = out if out is not None else beside(dataset, "report.html")
    options |= dict(baseline=baseline, grid=grid, what_if=what_if, by=by, top=top)
    with ui.progress(f"building the report of {dataset} under config {cfg.config_id}"):
        path = make_report(dataset, cfg, target, **options)
    stdout.print(ui.say("report written to {}", path))


def demo_report(directory: Path) -> Path | None:
    """The demo's report (DIRECTORY/report.html) under the default config. Altair and
    vl-convert are base dependencies; only a broken install cannot import them, and then
    the demo says so on stderr (naming the import error) and returns None."""
    try:
        import altair  # noqa: F401
        import vl_convert  # noqa: F401
    except ImportError as exc:
        stderr.print(
            f"no report: the charts' Altair or vl-convert cannot be imported ({exc}); "
            "reinstall evalframe (pip install -e .) to get report.html",
            markup=False,
        )
        return None
    return make_report(directory, ef.load_config(None), beside(directory, "report.html"))
