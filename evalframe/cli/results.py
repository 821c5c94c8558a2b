"""`evalframe results DATASET`: list the result sets of a dataset (or of a store or an
--out folder) with their provenance, and flag the stale ones."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table
from rich.text import Text

from evalframe.cli._console import Lazy, stdout
from evalframe.cli._options import JsonOpt

if TYPE_CHECKING:
    import evalframe.cli._render as ui
else:
    ui = Lazy("evalframe.cli._render")


STALE = {
    None: "[dim]unknown[/dim]",
    True: "[bold red]stale[/bold red]",
    False: "[green]current[/green]",
}
"""How the inputs column says whether a set is stale."""


def results(
    dataset: Annotated[
        Path,
        typer.Argument(help="Dataset folder, results store, or a folder written with --out."),
    ],
    as_json: JsonOpt = False,
) -> None:
    """List the result sets (config_id, command, created_at, tables, rows) and flag the
    stale ones: sets whose input tables changed since they were computed.

    Example: [bold]evalframe results runs/[/bold]
    """
    import evalframe as ef

    where = ef.open_results(dataset)
    sets = where.sets()
    rows = [s.describe(i == len(sets) - 1) for i, s in enumerate(sets)]
    if as_json:
        ui.print_json(rows)
        return
    if not rows:
        stdout.print(
            ui.say("no result sets in {}; hint: run `evalframe score {}`.", where.path, dataset)
        )
        return
    table = Table(
        header_style="bold", caption=ui.id_text(f"{len(rows)} result set(s) in {where.path}")
    )
    ui.id_column(table, "result_set", min_width=12)  # a config id is never cut
    for name in ("command", "created_at", "tables", "rows", "inputs"):
        table.add_column(name, justify="right" if name == "rows" else "left", overflow="fold")
    for r in rows:
        configs = f" ({r['configs']} configs)" if (r["configs"] or 0) > 1 else ""
        table.add_row(
            ui.id_text(r["result_set"])
            + configs
            + (Text(" latest", style="bold") if r["latest"] else ""),
            ui.id_text(", ".join(r["commands"]) or "-"),
            ui.id_text(r["created_at"][:19].replace("T", " ")),
            ui.id_text(", ".join(f"{t} {n:,}" for t, n in r["tables"].items())),
            f"{r['rows']:,}",
            STALE[r["stale"]],
        )
    stdout.print(table)
    stale = [r["result_set"] for r in rows if r["stale"]]
    if stale:
        stdout.print(
            ui.say(
                "stale: {} — the dataset's input tables changed since; re-run the command to "
                "refresh them.",
                ", ".join(stale),
            )
        )
