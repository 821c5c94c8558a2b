"""`evalframe sql DATASET [QUERY]`: query a dataset, its result sets and the sql/ macros with
DuckDB; without a query, a prompt (the connection and the prompt: _shell.py)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

import evalframe as ef
from evalframe.cli._console import Lazy, stderr
from evalframe.cli._options import MODES, DatasetArg, check_mode

if TYPE_CHECKING:
    import evalframe.cli._render as ui
    import evalframe.cli._shell as shell
else:
    ui, shell = Lazy("evalframe.cli._render"), Lazy("evalframe.cli._shell")


def sql(
    dataset: DatasetArg,
    query: Annotated[
        str | None,
        typer.Argument(help="SQL to run; without it an interactive prompt opens."),
    ] = None,
    csv: Annotated[bool, typer.Option("--csv", help="Print the result as CSV.")] = False,
    json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
    mode: Annotated[
        str,
        typer.Option(
            "--mode",
            callback=check_mode,
            metavar="|".join(MODES),
            help="How a result shows on screen: table, line (one `column = value` line per "
            "column, like DuckDB's .mode line) or auto (line when a row is too wide).",
        ),
    ] = "auto",
    results: Annotated[
        Path | None,
        typer.Option(
            "--results",
            "-r",
            help="Results to open: a store or a folder written with --out "
            "(default: DATASET/results).",
        ),
    ] = None,
    read_only: Annotated[
        bool,
        typer.Option(
            "--read-only",
            help="Seal the connection for SQL you did not write: queries read the dataset's "
            "tables and result sets and nothing else; COPY ... TO, ATTACH, reading other "
            "files, extensions and SET of settings are refused.",
        ),
    ] = False,
) -> None:
    """Query a dataset with DuckDB: its tables, its result sets and the sql/ macros.

    Each table of the latest result set is a view (run_summary, case_deltas, sweep, ...:
    one config's tables, never a mix); NAME_all reads NAME of every set with a result_set
    column; result_sets lists the sets. DATASET may also be an --out folder.

    A query has DuckDB's full reach: it can read any file the user can (read_csv,
    read_parquet, ...), write any path (COPY ... TO, EXPORT DATABASE — also over the
    dataset's own tables) and ATTACH databases. --read-only takes all of that away
    (sql/README.md, "What a query can read and write").

    Example: [bold]evalframe sql runs/ "select * from run_summary_at(threshold := 0.7)"[/bold]
    """
    if csv and json:
        raise ef.UsageError("--csv and --json exclude each other; hint: pick one.")
    con, opened = ef.sql_connection(dataset, results, read_only=read_only)
    show: dict[str, Any] = dict(csv=csv, json=json, mode=str(mode))
    if opened.latest is not None and opened.latest.stale():
        stderr.print(
            ui.say(
                "note: the latest result set {} is stale — the dataset's input tables changed "
                "since it was computed; re-run the command that wrote it (`evalframe results` "
                "lists the sets).",
                opened.latest.set_id,
            )
        )
    try:
        if query is None:
            with shell.line_editing() as read:
                shell.interactive(con, opened, read=read, **show)
        else:
            con = query_once(con, opened, query, (dataset, results, read_only), show)
    except shell.QueryCancelled:
        stderr.print("query cancelled", highlight=False)
        raise typer.Exit(130) from None
    finally:
        con.close()


def query_once(con: Any, opened: Any, query: str, where: tuple, show: dict[str, Any]) -> Any:
    """Run and print `query`; when it failed because a commit replaced a set the views read,
    open the new sets (`where`: sql_connection's arguments) and run it once more. Returns
    the connection in use."""
    try:
        shell.run_and_print(con, query, opened, **show)
    except ef.UsageError:
        if all(s.folder.is_dir() for s in opened.sets):
            raise
        con.close()
        con, opened = ef.sql_connection(where[0], where[1], read_only=where[2])
        shell.run_and_print(con, query, opened, **show)
    return con
