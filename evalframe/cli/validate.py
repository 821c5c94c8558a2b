"""`evalframe validate`: check a dataset against the data contract."""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING

import typer

import evalframe as ef
from evalframe.cli._console import Lazy, stdout
from evalframe.cli._options import ClampOpt, DatasetArg, JsonOpt

if TYPE_CHECKING:
    import polars as pl

    import evalframe.cli._render as ui
else:
    pl, ui = Lazy("polars"), Lazy("evalframe.cli._render")


def validate(dataset: DatasetArg, clamp: ClampOpt = False, as_json: JsonOpt = False) -> None:
    """Check a dataset against the data contract; report every problem at once (exit 2).

    Example: [bold]evalframe validate runs/[/bold]
    """
    try:
        ds = ef.load_dataset(dataset, clamp=clamp)
    except ef.ValidationError as exc:
        if not as_json:
            raise
        ui.print_json({"valid": False, "problems": [asdict(p) for p in exc.problems]})
        raise typer.Exit(exc.exit_code) from None
    except ef.EvalframeError as exc:
        if not as_json:
            raise
        ui.print_json({"valid": False, "problems": [], "error": str(exc)})
        raise typer.Exit(exc.exit_code) from None
    tables = (ds.scores, ds.executions, ds.outcomes, ds.runs)
    counts = pl.collect_all([t.select(pl.len()) for t in tables])
    report = dict(
        zip(("scores", "executions", "outcomes", "runs"), (c.item() for c in counts), strict=True)
    )
    if as_json:
        clamped = ds.clamped.changed if ds.clamped else 0
        ui.print_json({"valid": True, "rows": report, "clamped": clamped})
    else:
        sizes = ", ".join(f"{name} {n:,}" for name, n in report.items())
        stdout.print(f"[green]valid[/green]: {sizes} rows")
