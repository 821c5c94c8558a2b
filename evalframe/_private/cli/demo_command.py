"""`evalframe demo`: write the demo dataset, score it, write its report."""

from __future__ import annotations

from pathlib import Path

from evalframe import write_demo
from evalframe._private.cli.console import stdout
from evalframe._private.cli.render import print_json, run_table, say, steps
from evalframe._private.cli.report_command import demo_report
from evalframe._private.cli.score_command import score_and_write


def demo_command(directory: Path, *, cases: int = 200, as_json: bool = False) -> None:
    """The body of `evalframe demo` (its options: evalframe/cli.py)."""
    with steps(3) as step:
        step(f"writing the demo dataset ({cases:,} cases × 3 runs) to {directory}")
        write_demo(directory, n_cases=cases)
        summary, target, _, _scored = score_and_write(
            directory, None, None, None, None, False, False
        )
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
