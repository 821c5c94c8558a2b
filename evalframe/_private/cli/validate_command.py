"""`evalframe validate`: check a dataset against the data contract."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import typer

from evalframe import EvalframeError, ValidationError, load_dataset
from evalframe._private import schema as S
from evalframe._private.cli.console import stdout
from evalframe._private.cli.render import print_json


def validate_command(dataset: Path, *, clamp: bool = False, as_json: bool = False) -> None:
    """The body of `evalframe validate` (its options: evalframe/cli.py): every problem at
    once (exit 2), as text or --json."""
    try:
        ds = load_dataset(dataset, clamp=clamp)
    except ValidationError as exc:
        if not as_json:
            raise
        print_json(
            {
                "valid": False,
                "problems": [
                    {
                        "table": p.table,
                        "column": p.column,
                        "message": p.message,
                        "count": p.count,
                        "examples": list(p.examples),
                    }
                    for p in exc.problems
                ],
            }
        )
        raise typer.Exit(exc.exit_code) from None
    except EvalframeError as exc:
        if not as_json:
            raise
        print_json({"valid": False, "problems": [], "error": str(exc)})
        raise typer.Exit(exc.exit_code) from None
    counts = pl.collect_all(
        [
            ds.scores.select(pl.len()),
            ds.executions.select(pl.len()),
            ds.outcomes.select(pl.len()),
            ds.runs.select(pl.len()),
        ]
    )
    report = dict(zip(S.INPUT_TABLES, (c.item() for c in counts), strict=True))
    if as_json:
        print_json(
            {"valid": True, "rows": report, "clamped": ds.clamped.changed if ds.clamped else 0}
        )
    else:
        sizes = ", ".join(f"{name} {n:,}" for name, n in report.items())
        stdout.print(f"[green]valid[/green]: {sizes} rows")
