"""`evalframe trend`: the history of a dataset's runs. Like `flaky`, it computes
series_trend and case_history (`ef.history_tables`) and writes them as one result set; it
prints per series the slope ± its 95 % interval and the change run."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

import evalframe as ef
from evalframe.cli._console import Lazy, stderr, stdout
from evalframe.cli._options import ENGINE, POLICY, DatasetArg, compute_and_write, policy, shared

if TYPE_CHECKING:
    import evalframe.cli._render as ui
    from evalframe import format as fmt
else:
    ui, fmt = Lazy("evalframe.cli._render"), Lazy("evalframe.format")

HISTORY = (*POLICY, "out", *ENGINE, "as_json")
"""The shared options of `trend` and `flaky`."""
SeriesOpt = Annotated[
    str | None,
    typer.Option(
        "--series",
        metavar="COLUMN",
        help="One series per value of this runs column (model, target, agent, ...; a null "
        "value is a series of its own); default: all runs are one series.",
    ),
]
WindowOpt = Annotated[
    int | None,
    typer.Option("--window", metavar="N", help="Keep the last N runs of each series."),
]


def history_and_write(dataset: Path, command: str, options: dict[str, Any]) -> tuple[Any, Path]:
    """series_trend and case_history of `dataset` under the policy of `options` (the rest:
    history_tables' keywords; --json is left in), committed as one result set written by
    `command`."""
    cfg, out = policy(options), options.pop("out")
    keywords = {k: v for k, v in options.items() if k != "as_json"}
    tables, target, _ = compute_and_write(
        dataset,
        out,
        command,
        cfg,
        f"history of the runs of {dataset} under config {cfg.config_id} ({options['engine']})",
        lambda: ef.history_tables(dataset, cfg, **keywords),
    )
    for note in tables.notes:
        stderr.print(ui.message_text(note))
    return tables, target


def series_name(row: dict[str, Any]) -> str:
    """`COLUMN=value` of a series; `(all runs)` without --series, `(none)` for a null value."""
    if row["series_column"] is None:
        return "(all runs)"
    value = row["series"]
    return f"{row['series_column']}={'(none)' if value is None else value}"


def slope_text(row: dict[str, Any], y: str, what: str) -> str:
    slope = row[f"{y}_slope"]
    if slope is None:
        return f"{what}: no slope (fewer than 2 runs with a {what})"
    low, high = row[f"{y}_slope_ci_low"], row[f"{y}_slope_ci_high"]
    band = (
        f" [{low * 100:+.2f}, {high * 100:+.2f}]"
        if low is not None and high is not None
        else " (no interval: fewer than 3 runs)"
    )
    flag = " DEGRADING" if row[f"{y}_degrading"] else ""
    return f"{what} {slope * 100:+.2f} pts/run{band}{flag}"


@shared(*HISTORY)
def trend(
    dataset: DatasetArg,
    series: SeriesOpt = None,
    window: WindowOpt = None,
    fail_on_degrading: Annotated[
        bool,
        typer.Option(
            "--fail-on-degrading",
            help="Exit 1 when a series' pass-rate or mean-score slope interval lies below 0.",
        ),
    ] = False,
    **options: Any,
) -> None:
    """The history of the runs: write series_trend and case_history; print per series the
    weighted slope of pass rate and mean score (points per run, 95 % interval) and the
    change run of the pass rate with its Bonferroni p.

    Runs are ordered by runs.created_at (runs without one last), then run_id.

    Example: [bold]evalframe trend runs/ --series model --window 20 --fail-on-degrading[/bold]
    """
    options |= dict(series=series, window=window)
    tables, target = history_and_write(dataset, "trend", options)
    rows = tables["series_trend"].to_dicts()
    if options["as_json"]:
        ui.print_json(rows)
    else:
        for row in rows:
            stdout.print(ui.say("{} — {} runs", series_name(row), row["runs"]))
            stdout.print(ui.say("  {}", slope_text(row, "pass_rate", "pass rate")))
            stdout.print(ui.say("  {}", slope_text(row, "mean_score", "mean score")))
            stdout.print(ui.say("  {}", fmt.change_point_text(row)))
        stdout.print(ui.say("tables written to {}/", target))
    degrading = [r for r in rows if r["pass_rate_degrading"] or r["mean_score_degrading"]]
    if fail_on_degrading and degrading:
        names = ", ".join(series_name(r) for r in degrading)
        stderr.print(ui.say("degrading (slope interval below 0): {}", names))
        raise typer.Exit(1)
