"""`evalframe cases`: the regressed (or failing) cases, one row each, with their scores,
labels, reasons and outcome checks."""

from __future__ import annotations

from pathlib import Path

from evalframe import UsageError, cases
from evalframe._private.cli.console import stdout
from evalframe._private.cli.render import cases_report, print_csv, print_json


def cases_command(
    dataset: Path,
    *,
    run: str | None = None,
    status: str = "regression",
    evaluator: str | None = None,
    results: Path | None = None,
    result_set: str | None = None,
    as_json: bool = False,
    csv: bool = False,
) -> None:
    """The body of `evalframe cases` (its options: evalframe/cli.py)."""
    if csv and as_json:
        raise UsageError("--csv and --json exclude each other; hint: pick one.")
    frame = cases(
        dataset,
        run,
        status=status,
        evaluator=evaluator,
        results=results,
        result_set=result_set,
    )
    if as_json:
        print_json(frame.to_dicts())
    elif csv:
        print_csv(frame)
    else:
        for part in cases_report(frame, status):
            stdout.print(part)
