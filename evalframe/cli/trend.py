"""`evalframe trend`: the history of a dataset's runs. Like `flaky`, it computes
series_trend and case_history (`ef.history_tables`) and writes them as one result set; it
prints per series the slope ± its 95 % interval and the change run."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

import evalframe as ef
from evalframe.cli._console import stderr, stdout
from evalframe.cli._options import (
    ClampOpt,
    ConfigOpt,
    DatasetArg,
    Engine,
    EngineOpt,
    HistorySeriesOpt,
    JsonOpt,
    MemoryLimitOpt,
    OutOpt,
    PresetOpt,
    SparkRemoteOpt,
    ThresholdOpt,
    WindowOpt,
    compute_and_write,
    default_out,
)

NO_SERIES = "(all runs)"
"""How the one series of all runs is named when --series is not given."""
NULL_SERIES = "(none)"
"""How a null value of the --series column is named (it is a series of its own)."""


def history_and_write(
    dataset: Path,
    command: str,
    *,
    config: Path | None,
    preset: str | None,
    threshold: float | None,
    out: Path | None,
    **options: Any,
) -> tuple[Any, Path]:
    """series_trend and case_history of `dataset` (`options`: history_tables' keywords),
    committed as one result set written by `command`."""
    cfg = ef.load_config(config, preset=preset, threshold=threshold)
    target = default_out(dataset, out)
    message = f"history of the runs of {dataset} under config {cfg.config_id} ({options['engine']})"
    tables, _ = compute_and_write(
        dataset,
        target,
        command,
        cfg.canonical_json(),
        message,
        lambda: ef.history_tables(dataset, cfg, **options),
    )
    from evalframe.cli._render import message_text

    for note in tables.notes:
        stderr.print(message_text(note))
    return tables, target


def series_name(row: dict[str, Any]) -> str:
    """`COLUMN=value` of a series (shown literally by `say` / `id_text`)."""
    if row["series_column"] is None:
        return NO_SERIES
    value = row["series"]
    return f"{row['series_column']}={NULL_SERIES if value is None else value}"


def slope_text(row: dict[str, Any], y: str, what: str) -> str:
    slope = row[f"{y}_slope"]
    if slope is None:
        return f"{what}: no slope (fewer than 2 runs with a {what})"
    unit = "pts/run"
    low, high = row[f"{y}_slope_ci_low"], row[f"{y}_slope_ci_high"]
    band = (
        f" [{low * 100:+.2f}, {high * 100:+.2f}]"
        if low is not None and high is not None
        else " (no interval: fewer than 3 runs)"
    )
    flag = " DEGRADING" if row[f"{y}_degrading"] else ""
    return f"{what} {slope * 100:+.2f} {unit}{band}{flag}"


def trend(
    dataset: DatasetArg,
    series: HistorySeriesOpt = None,
    window: WindowOpt = None,
    fail_on_degrading: Annotated[
        bool,
        typer.Option(
            "--fail-on-degrading",
            help="Exit 1 when a series' pass-rate or mean-score slope interval lies below 0.",
        ),
    ] = False,
    config: ConfigOpt = None,
    preset: PresetOpt = None,
    threshold: ThresholdOpt = None,
    out: OutOpt = None,
    clamp: ClampOpt = False,
    engine: EngineOpt = Engine.polars,
    memory_limit: MemoryLimitOpt = None,
    spark_remote: SparkRemoteOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """The history of the runs: write series_trend and case_history; print per series the
    weighted slope of pass rate and mean score (points per run, 95 % interval) and the
    change run of the pass rate with its Bonferroni p.

    Runs are ordered by runs.created_at (runs without one last), then run_id.

    Example: [bold]evalframe trend runs/ --series model --window 20 --fail-on-degrading[/bold]
    """
    from evalframe.cli._render import print_json, say
    from evalframe.format import change_point_text

    tables, target = history_and_write(
        dataset,
        "trend",
        series=series,
        window=window,
        config=config,
        preset=preset,
        threshold=threshold,
        out=out,
        clamp=clamp,
        engine=engine,
        memory_limit=memory_limit,
        spark_remote=spark_remote,
    )
    rows = tables["series_trend"].to_dicts()
    if as_json:
        print_json(rows)
    else:
        for row in rows:
            stdout.print(say("{} — {} runs", series_name(row), row["runs"]))
            stdout.print(say("  {}", slope_text(row, "pass_rate", "pass rate")))
            stdout.print(say("  {}", slope_text(row, "mean_score", "mean score")))
            stdout.print(say("  {}", change_point_text(row)))
        stdout.print(say("tables written to {}/", target))
    degrading = [r for r in rows if r["pass_rate_degrading"] or r["mean_score_degrading"]]
    if fail_on_degrading and degrading:
        names = ", ".join(series_name(r) for r in degrading)
        stderr.print(say("degrading (slope interval below 0): {}", names))
        raise typer.Exit(1)
