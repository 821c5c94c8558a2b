"""`evalframe demo`: write the demo dataset, score it, write its report."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

import evalframe as ef
from evalframe.cli._console import Lazy, stdout
from evalframe.cli._options import JsonOpt
from evalframe.cli.report import demo_report
from evalframe.cli.score import score_and_write

if TYPE_CHECKING:
    import evalframe.cli._render as ui
else:
    ui = Lazy("evalframe.cli._render")


def demo(
    directory: Annotated[Path, typer.Argument(help="Where to write the demo dataset.")] = Path(
        "evalframe-demo"
    ),
    cases: Annotated[int, typer.Option("--cases", min=1, help="Number of test cases.")] = 200,
    as_json: JsonOpt = False,
) -> None:
    """Write a realistic demo dataset (3 runs × 200 cases × 8 judge metrics), score it,
    and print the run table.

    Example: [bold]evalframe demo /tmp/evalframe-demo[/bold]
    """
    with ui.steps(3) as step:
        step(f"writing the demo dataset ({cases:,} cases × 3 runs) to {directory}")
        ef.write_demo(directory, n_cases=cases)
        summary, target, _tables = score_and_write(directory, ef.load_config(None), None)
        step("writing the HTML report")
        report = demo_report(directory)
    if as_json:
        ui.print_json(summary.to_dicts())
        return
    stdout.print(ui.say("demo dataset written to {}/", directory))
    stdout.print(ui.run_table(summary))
    stdout.print(ui.say("tables written to {}/", target))
    if report is not None:
        stdout.print(ui.say("report written to {}", report))
    stdout.print(
        ui.say(
            "next: [bold]evalframe score {} --preset connexity[/bold]  ·  "
            "[bold]evalframe compare {} --pairs consecutive[/bold]",
            directory,
            directory,
        )
    )
