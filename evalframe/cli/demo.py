"""`evalframe demo`: write the demo dataset, score it, write its report."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

import evalframe as ef
from evalframe.cli._console import stdout
from evalframe.cli._options import JsonOpt


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
    from evalframe.cli._render import print_json, run_table, say, steps
    from evalframe.cli.report import demo_report
    from evalframe.cli.score import score_and_write

    with steps(3) as step:
        step(f"writing the demo dataset ({cases:,} cases × 3 runs) to {directory}")
        ef.write_demo(directory, n_cases=cases)
        summary, target, _tables = score_and_write(directory, ef.load_config(None), None)
        step("writing the HTML report")
        report = demo_report(directory)
    if as_json:
        print_json(summary.to_dicts())
        return
    stdout.print(say("demo dataset written to {}/", directory))
    stdout.print(run_table(summary))
    stdout.print(say("tables written to {}/", target))
    if report is not None:
        stdout.print(say("report written to {}", report))
    stdout.print(
        say(
            "next: [bold]evalframe score {} --preset connexity[/bold]  ·  "
            "[bold]evalframe compare {} --pairs consecutive[/bold]",
            directory,
            directory,
        )
    )
