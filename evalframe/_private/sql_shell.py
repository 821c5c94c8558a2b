"""`evalframe sql DATASET [QUERY]`: DuckDB over a dataset, its results and the sql/ macros.

The connection holds the dataset's validated input tables (scores, executions, outcomes,
runs, with every optional column filled in), the output tables found in DATASET/results
(execution_scores, case_summary, run_summary, ... as views over the Parquet files), the
analyst views over them (regressions, run_trend) and every macro of `sql/`
(sql/README.md). A query prints a table, CSV or JSON; without a query a small prompt
reads statements until `.quit`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import duckdb
import polars as pl
import typer
from rich.table import Table

from evalframe._private import duckdb_engine as engine
from evalframe._private.dataset import load_dataset
from evalframe._private.errors import UsageError
from evalframe._private.render import print_json, stdout

MAX_TABLE_ROWS = 100
"""Rows shown by the human table output (CSV and JSON print every row)."""
PROMPT = "evalframe> "
CONTINUE = "      ...> "
_HINT = "hint: `.tables` lists the relations; sql/README.md documents every macro."


def results_dir(dataset: Path) -> Path:
    """Where `evalframe score` writes by default: DATASET/results."""
    return (dataset if dataset.is_dir() else dataset.parent) / "results"


def open_connection(dataset: str | Path, results: str | Path | None = None):
    """A DuckDB connection with the dataset's tables, the output tables of `results`
    (default DATASET/results) and the macros; returns (connection, output tables found)."""
    dataset = Path(dataset)
    ds = load_dataset(dataset)
    con = engine.connect(ds)
    folder = Path(results) if results is not None else results_dir(dataset)
    # the views of sql/ read $evalframe_results/NAME.parquet, or are empty without it; the
    # folder is a bound parameter, never SQL text
    con.execute("set variable evalframe_results = $1", [str(folder)])
    for name in (*engine.OUTPUT_VIEWS, *engine.ANALYST_VIEWS):
        con.execute(engine.sql_text(name))
    found = [n for n in engine.OUTPUT_VIEWS if (folder / f"{n}.parquet").is_file()]
    return con, found


def run_query(con: duckdb.DuckDBPyConnection, query: str) -> pl.DataFrame | None:
    """Run one or more statements; the result of the last one as a frame (None when it
    returns no rows, e.g. `create ...`)."""
    try:
        rel = con.sql(query)
    except duckdb.Error as exc:
        raise UsageError(
            f"SQL error: {exc}; hint: see sql/README.md for the tables and macros."
        ) from None
    if rel is None:
        return None
    try:
        return rel.pl()
    except duckdb.Error as exc:
        raise UsageError(
            f"SQL error: {exc}; hint: see sql/README.md for the tables and macros."
        ) from None


def render_table(frame: pl.DataFrame, limit: int = MAX_TABLE_ROWS) -> Table:
    """A rich table of the first `limit` rows, with column types under the names."""
    table = Table(show_lines=False, header_style="bold")
    for name, dtype in frame.schema.items():
        numeric = dtype.is_numeric()
        table.add_column(f"{name}\n[dim]{dtype}[/dim]", justify="right" if numeric else "left")
    for row in frame.head(limit).iter_rows():
        table.add_row(*("NULL" if v is None else _cell(v) for v in row))
    more = frame.height - limit
    table.caption = f"{frame.height:,} rows" + (f" ({more:,} not shown)" if more > 0 else "")
    return table


def _cell(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def print_result(frame: pl.DataFrame | None, *, csv: bool = False, json: bool = False) -> None:
    if frame is None:
        return
    if csv:
        sys.stdout.write(_flat(frame).write_csv())
    elif json:
        print_json(frame.to_dicts())
    else:
        stdout.print(render_table(frame))


def _flat(frame: pl.DataFrame) -> pl.DataFrame:
    """CSV cannot hold nested values: lists and structs become their JSON-ish text."""
    nested = [n for n, t in frame.schema.items() if t.is_nested()]
    return frame.with_columns(pl.col(n).map_elements(str, return_dtype=pl.String) for n in nested)


def interactive(
    con: duckdb.DuckDBPyConnection,
    found: list[str],
    *,
    read: Callable[[str], str] = input,
    csv: bool = False,
    json: bool = False,
) -> None:
    """A read-eval loop: statements end with `;`; `.tables` lists the relations,
    `.quit` (or end of input) leaves. Errors are printed and the loop goes on."""
    stdout.print(
        "evalframe sql — tables: scores, executions, outcomes, runs"
        + (f"; results: {', '.join(found)}" if found else "; no results/ tables yet")
        + ". End statements with ';', `.tables` lists relations, `.quit` leaves.",
        highlight=False,
    )
    buffer: list[str] = []
    while True:
        try:
            line = read(CONTINUE if buffer else PROMPT)
        except (EOFError, KeyboardInterrupt):
            stdout.print()
            return
        stripped = line.strip()
        if not buffer and stripped in (".quit", ".exit", r"\q"):
            return
        if not buffer and stripped == ".tables":
            line = "select table_name, table_type from information_schema.tables order by 1;"
            stripped = line
        if not stripped:
            continue
        buffer.append(line)
        if not stripped.endswith(";"):
            continue
        query, buffer = "\n".join(buffer), []
        try:
            print_result(run_query(con, query), csv=csv, json=json)
        except UsageError as exc:
            stdout.print(f"[red]{exc}[/red]", highlight=False)


def sql_command(
    dataset: Annotated[
        Path, typer.Argument(help="Dataset folder (Parquet tables) or DuckDB database file.")
    ],
    query: Annotated[
        str | None,
        typer.Argument(help="SQL to run; without it an interactive prompt opens."),
    ] = None,
    csv: Annotated[bool, typer.Option("--csv", help="Print the result as CSV.")] = False,
    json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Query a dataset with DuckDB: its tables, the results/ tables and the sql/ macros.

    Example: [bold]evalframe sql runs/ "select * from run_summary_at(threshold := 0.7)"[/bold]
    """
    if csv and json:
        raise UsageError("--csv and --json exclude each other; hint: pick one.")
    con, found = open_connection(dataset)
    try:
        if query is None:
            interactive(con, found, csv=csv, json=json)
        else:
            print_result(run_query(con, query), csv=csv, json=json)
    finally:
        con.close()
