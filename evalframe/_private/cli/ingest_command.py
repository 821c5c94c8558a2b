"""`evalframe ingest`: the CLI face of `evalframe._private.ingest.ingest`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from evalframe import IngestReport, ingest
from evalframe._private.cli.render import error_line, id_text, print_json, say, stderr, stdout
from evalframe._private.errors import EvalframeError
from evalframe._private.ingest import FORMATS


def ingest_command(
    format: Annotated[str, typer.Argument(help=f"Source format: {', '.join(FORMATS)}.")],
    sources: Annotated[list[Path], typer.Argument(help="Result files or folders of that format.")],
    to: Annotated[
        Path, typer.Option("--to", help="Dataset folder to append to (created if missing).")
    ],
    run_id: Annotated[
        str | None,
        typer.Option("--run-id", help="Run id instead of the one derived from the source."),
    ] = None,
    replace: Annotated[
        bool, typer.Option("--replace", help="Overwrite runs whose ids already exist.")
    ] = False,
    id_cols: Annotated[
        str | None,
        typer.Option(
            "--id-cols",
            help="wide: key columns, e.g. 'case_id=question,run_id=model,attempt=seed'.",
        ),
    ] = None,
    scale_max: Annotated[
        str | None,
        typer.Option(
            "--scale-max",
            help="wide/inspect/lmeval: top of the raw scale, '5' or 'faith=5,rubric=10'.",
        ),
    ] = None,
    metrics: Annotated[
        str | None,
        typer.Option("--metrics", help="wide: metric columns (default: every numeric column)."),
    ] = None,
    labels: Annotated[
        bool,
        typer.Option(
            "--labels",
            help="wide: the files hold human labels of existing executions (run_id, case_id, "
            "attempt?, evaluator?, rater?, label_passed / label_score), added to `labels`.",
        ),
    ] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")] = False,
) -> None:
    """Convert other eval tools' results into evalframe tables, appending new runs.

    Example: [bold]evalframe ingest promptfoo results.json --to data/[/bold]
    then [bold]evalframe score data/[/bold]. Nested grader groups come with a suggested
    config; save it (--json) and pass it with --config. See docs/ingest.md.
    """
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
