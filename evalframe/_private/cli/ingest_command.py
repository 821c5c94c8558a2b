"""`evalframe ingest`: the CLI face of `evalframe._private.ingest.ingest`."""

from __future__ import annotations

import json

import typer
from rich.table import Table

from evalframe import IngestReport, ingest
from evalframe._private.cli.console import stderr, stdout
from evalframe._private.cli.options import (
    FormatArg,
    IdColsOpt,
    JsonOpt,
    LabelsOpt,
    MetricsOpt,
    ReplaceOpt,
    RunIdOpt,
    ScaleMaxOpt,
    SourcesArg,
    ToOpt,
)
from evalframe._private.cli.render import error_line, id_text, print_json, say
from evalframe._private.errors import EvalframeError


def ingest_command(
    format: FormatArg,
    sources: SourcesArg,
    to: ToOpt,
    run_id: RunIdOpt = None,
    replace: ReplaceOpt = False,
    id_cols: IdColsOpt = None,
    scale_max: ScaleMaxOpt = None,
    metrics: MetricsOpt = None,
    labels: LabelsOpt = False,
    json_out: JsonOpt = False,
) -> None:
    """The body of `evalframe ingest` (its help: evalframe/cli.py); the options are
    declared in options.py, so this function is a typer command of its own too."""
    try:
        report = ingest(
            format,
            sources,
            to,
            run_id=run_id,
            replace=replace,
            id_cols=id_cols,
            scale_max=scale_max,
            metrics=metrics,
            labels=labels,
        )
    except EvalframeError as exc:
        stderr.print(error_line(exc), highlight=False)
        raise typer.Exit(2) from None
    if json_out:
        print_json(report.to_dict())
        return
    _print_summary(report)


def _print_summary(report: IngestReport) -> None:
    table = Table(title=say("ingested {} into {}", report.format, report.dataset))
    table.add_column("run")
    table.add_column("")
    for rid in report.runs_added:
        table.add_row(id_text(rid), "added")
    for rid in report.runs_replaced:
        table.add_row(id_text(rid), "[yellow]replaced[/yellow]")
    stdout.print(table)
    stdout.print(
        say("rows: {}", ", ".join(f"{name} {n}" for name, n in report.rows.items())),
        highlight=False,
    )
    for note in report.skipped:
        stdout.print(say("[yellow]skipped:[/yellow] {}", note), highlight=False)
    if report.suggested_config is not None:
        stdout.print(
            "[bold]nested evaluator groups:[/bold] score with this config (save it as JSON "
            "and pass --config) to aggregate them as the tool did:"
        )
        stdout.print_json(json.dumps(report.suggested_config))
    stdout.print(say("next: [bold]evalframe score {}[/bold]", report.dataset))
