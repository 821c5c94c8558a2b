"""`evalframe ingest`: convert other eval tools' results into evalframe tables."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

import evalframe as ef
from evalframe.cli._console import Lazy, stdout
from evalframe.cli._options import JsonOpt

if TYPE_CHECKING:
    import evalframe.cli._render as ui
else:
    ui = Lazy("evalframe.cli._render")


def ingest(
    format: Annotated[str, typer.Argument(help="Source format: {formats}.")],
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
            help="wide: key columns, e.g. 'case_id=question,run_id=model,attempt=seed'; "
            "langfuse: run_id=COL, case_id=observation_id; mlflow: case_id=COL.",
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
    json_out: JsonOpt = False,
) -> None:
    """Convert other eval tools' results into evalframe tables, appending new runs.

    Example: [bold]evalframe ingest promptfoo results.json --to data/[/bold]
    then [bold]evalframe score data/[/bold]. Nested grader groups come with a suggested
    config; save it (--json) and pass it with --config. See docs/ingest.md.
    """
    report = ef.ingest(
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
    if json_out:
        ui.print_json(report.to_dict())
    else:
        print_summary(report)


def print_summary(report: Any) -> None:
    """The runs added and replaced, the rows per table, what was skipped and the suggested
    config of nested evaluator groups."""
    stdout.print(ui.say("ingested {} into {}", report.format, report.dataset), highlight=False)
    if report.runs_added or report.runs_replaced:
        table = Table("run", "")
        for rid in report.runs_added:
            table.add_row(ui.id_text(rid), "added")
        for rid in report.runs_replaced:
            table.add_row(ui.id_text(rid), "[yellow]replaced[/yellow]")
        stdout.print(table)
    stdout.print(
        ui.say("rows: {}", ", ".join(f"{name} {n}" for name, n in report.rows.items())),
        highlight=False,
    )
    for note in report.skipped:
        stdout.print(ui.say("[yellow]skipped:[/yellow] {}", note), highlight=False)
    if report.suggested_config is not None:
        stdout.print(
            "[bold]nested evaluator groups:[/bold] score with this config (save it as JSON "
            "and pass --config) to aggregate them as the tool did:"
        )
        stdout.print_json(json.dumps(report.suggested_config))
    stdout.print(ui.say("next: [bold]evalframe score {}[/bold]", report.dataset))
