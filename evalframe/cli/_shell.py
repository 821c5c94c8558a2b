"""The machinery of `evalframe sql` (the command: sql.py) on `ef.sql_connection`: running a
query (Ctrl-C cancels it), turning DuckDB types polars cannot hold into ones it can, showing
a result as a table, in line mode, as CSV or JSON, and the prompt with its history."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, cast

import duckdb
import polars as pl
from duckdb.sqltypes import DuckDBPyType
from rich.table import Table
from rich.text import Text

from evalframe import UsageError
from evalframe.cli._options import MODES
from evalframe.cli._render import (
    id_text,
    json_text,
    message_text,
    print_csv,
    print_json,
    say,
    stderr,
    stdout,
    visible_lines,
)

MAX_TABLE_ROWS = 100
"""Rows shown by the human table output (CSV and JSON print every row)."""
PROMPT = "evalframe> "
CONTINUE = "      ...> "


class QueryCancelled(Exception):
    """Ctrl-C stopped the query that was running."""


def _sql_error(exc: duckdb.Error) -> Exception:
    if isinstance(exc, duckdb.InterruptException):
        return QueryCancelled()
    if isinstance(exc, (duckdb.PermissionException, duckdb.InvalidInputException)) and (
        "disabled by configuration" in str(exc) or "configuration has been locked" in str(exc)
    ):
        return UsageError(
            f"SQL error: {exc}; hint: --read-only: queries read the dataset's tables and "
            "result sets only (no other file, no COPY ... TO, no ATTACH, no SET); run "
            "without --read-only for queries you trust (sql/README.md)."
        )
    return UsageError(f"SQL error: {exc}; hint: see sql/README.md for the tables and macros.")


def run_query(con: duckdb.DuckDBPyConnection, query: str) -> pl.DataFrame | None:
    """Run one or more statements; the result of the last one as a frame (None when it
    returns no rows, e.g. `create ...`). Ctrl-C while it runs interrupts the query on the
    connection and raises QueryCancelled (the connection stays usable)."""
    with cancellable(con):
        try:
            rel = con.sql(query)
            return None if rel is None else portable(con, rel).pl()
        except duckdb.Error as exc:
            raise _sql_error(exc) from None


@contextmanager
def cancellable(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """While the block runs, Ctrl-C (SIGINT) interrupts the connection's running query
    (`con.interrupt()`) instead of raising KeyboardInterrupt at some arbitrary line; however
    the interruption surfaces (DuckDB's InterruptException, the RuntimeError "Query
    interrupted" DuckDB raises when its own handler caught the signal, or a
    KeyboardInterrupt between statements), it leaves the block as QueryCancelled. Outside
    the main thread signals cannot be handled; the block then runs as it is."""
    interrupted = False

    def on_sigint(_signum: int, _frame: object) -> None:
        nonlocal interrupted
        interrupted = True
        con.interrupt()

    try:
        previous = signal.signal(signal.SIGINT, on_sigint)
    except ValueError:  # not the main thread
        previous = None
    try:
        yield
    except KeyboardInterrupt:
        raise QueryCancelled() from None
    except RuntimeError as exc:
        if interrupted or "interrupted" in str(exc).lower():
            raise QueryCancelled() from None
        raise
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


_TEXT_TYPES = frozenset({"union", "bit", "bignum", "varint", "time", "time with time zone"})
"""DuckDB types polars cannot hold (or holds as opaque bytes): shown as DuckDB's text."""
_ISO_UNITS = ("year", "month", "day", "hour", "minute", "microseconds")


def _iso_interval_sql(x: str) -> str:
    """SQL: an INTERVAL as ISO 8601 duration text (P1Y2M3DT4H5M6.5S, PT0S for zero; a
    negative component keeps its sign, e.g. PT-1H-30M)."""
    p = {u: f"datepart('{u}', {x})" for u in _ISO_UNITS}
    secs = f"rtrim(rtrim(printf('%.6f', {p['microseconds']} / 1000000), '0'), '.')"
    date_part = " || ".join(
        f"if({p[u]} <> 0, {p[u]} || '{u[0].upper()}', '')" for u in _ISO_UNITS[:3]
    )
    clock = (
        f"if({p['hour']} <> 0, {p['hour']} || 'H', '') || "
        f"if({p['minute']} <> 0, {p['minute']} || 'M', '') || "
        f"if({p['microseconds']} <> 0, {secs} || 'S', '')"
    )
    return (
        f"case when {x} is null then null when {x} = interval 0 second then 'PT0S' "
        f"else 'P' || {date_part} || if(({clock}) <> '', 'T' || {clock}, '') end"
    )


def _type_child(child: object) -> DuckDBPyType:
    return cast(DuckDBPyType, child)  # `children` also lists sizes, widths and enum values


def _portable_sql(x: str, t: DuckDBPyType, depth: int = 0) -> str | None:
    """SQL turning a value of type `t` into one polars and JSON can hold, or None when it
    already is one: intervals as ISO 8601 durations, blobs in base64, unions, bits, big
    integers and times as DuckDB's text; lists, arrays, structs and maps converted inside."""
    tid = t.id
    if tid == "interval":
        return _iso_interval_sql(x)
    if tid == "blob":
        return f"base64({x})"
    if tid in _TEXT_TYPES:
        return f"cast({x} as varchar)"
    if tid in ("list", "array"):
        v = f"v{depth}"
        inner = _portable_sql(v, _type_child(dict(t.children)["child"]), depth + 1)
        return None if inner is None else f"list_transform({x}, lambda {v}: {inner})"
    if tid == "struct":
        parts = []
        for n, ft in t.children:
            get = f"struct_extract({x}, {_quoted(str(n), chr(39))})"
            parts.append((str(n), get, _portable_sql(get, _type_child(ft), depth + 1)))
        if all(sql is None for *_, sql in parts):
            return None
        packed = ", ".join(f"{_quoted(n)} := {sql or get}" for n, get, sql in parts)
        return f"case when {x} is null then null else struct_pack({packed}) end"
    if tid == "map":
        e = f"e{depth}"
        kinds = dict(t.children)
        key = _portable_sql(f"{e}.key", _type_child(kinds["key"]), depth + 1)
        value = _portable_sql(f"{e}.value", _type_child(kinds["value"]), depth + 1)
        if key is None and value is None:
            return None
        return (
            f"map_from_entries(list_transform(map_entries({x}), lambda {e}: "
            f"struct_pack(key := {key or f'{e}.key'}, value := {value or f'{e}.value'})))"
        )
    return None


def _quoted(name: str, quote: str = '"') -> str:
    return quote + name.replace(quote, quote * 2) + quote


def portable(
    con: duckdb.DuckDBPyConnection, rel: duckdb.DuckDBPyRelation
) -> duckdb.DuckDBPyRelation:
    """The relation with every column polars cannot import (intervals, unions, ... which
    crashed the CSV/JSON/table output) converted by `_portable_sql`; unchanged otherwise."""
    exprs, changed = [], False
    for name, dtype in zip(rel.columns, rel.types, strict=True):
        col = _quoted(name)
        sql = _portable_sql(col, dtype)
        changed |= sql is not None
        exprs.append(f"{sql or col} as {col}")
    return rel.project(", ".join(exprs)) if changed else rel


def render_table(frame: pl.DataFrame, limit: int = MAX_TABLE_ROWS) -> Table:
    """A rich table of the first `limit` rows, with column types under the names."""
    table = Table(show_lines=False, header_style="bold")
    for name, dtype in frame.schema.items():
        numeric = dtype.is_numeric()
        table.add_column(  # names and values are data: Text, never markup
            id_text(name) + "\n" + Text(_type_label(dtype), style="dim"),
            justify="right" if numeric else "left",
            overflow="fold",  # ids and paths are never cut with an ellipsis
        )
    for row in frame.head(limit).iter_rows():
        table.add_row(*(Text("NULL") if v is None else id_text(_cell(v)) for v in row))
    table.caption = _rows_text(frame, limit)
    return table


def _rows_text(frame: pl.DataFrame, limit: int) -> str:
    more = frame.height - limit
    return f"{frame.height:,} rows" + (f" ({more:,} not shown)" if more > 0 else "")


def _cell(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, (list, tuple, dict, pl.Series)):
        return json_text(value)
    return str(value)


def _type_label(dtype: pl.DataType) -> str:
    """The column type under its name; a long nested type by its kind alone."""
    text = str(dtype)
    return text if len(text) <= 24 else dtype.base_type().__name__


MIN_COLUMN = 10
"""Width (cells) a table column needs at least to be readable; a result whose columns cannot
all get that much (or their full width, when less) on the terminal is shown in line mode."""


def too_wide(frame: pl.DataFrame, width: int, limit: int = MAX_TABLE_ROWS) -> bool:
    """Whether the table of `frame` cannot give every column MIN_COLUMN cells (or its whole
    width, when narrower) at `width`: each column costs its cells + 3 (padding, border)."""
    shown = frame.head(limit)
    need = 1
    for name, dtype in frame.schema.items():
        cells = [len(_cell(v)) for v in shown[name].to_list()]  # display text of shown rows
        natural = max([len(name), len(_type_label(dtype)), 4, *cells])
        need += min(natural, MIN_COLUMN) + 3
    return need > width


def render_lines(frame: pl.DataFrame, limit: int = MAX_TABLE_ROWS) -> list[Text]:
    """The first `limit` rows in line mode: per row one `column = value` line per column,
    names right-aligned, a blank line between rows, then the row count. Names and values
    are data: shown literally, control characters visible."""
    names = list(frame.columns)
    pad = max((len(visible_lines(n)) for n in names), default=0)
    out: list[Text] = []
    for k, row in enumerate(frame.head(limit).iter_rows()):
        if k:
            out.append(Text(""))
        for name, value in zip(names, row, strict=True):
            shown = Text("NULL", style="dim") if value is None else id_text(_cell(value))
            out.append(Text(visible_lines(name).rjust(pad), style="bold") + " = " + shown)
    return [*out, Text(""), Text(_rows_text(frame, limit))]


def print_result(
    frame: pl.DataFrame | None, *, csv: bool = False, json: bool = False, mode: str = "auto"
) -> None:
    if frame is None:
        return
    if csv:
        print_csv(frame)
    elif json:
        print_json(frame.to_dicts())  # lists as JSON lists; other values via json_value
    elif mode == "line" or (mode == "auto" and too_wide(frame, stdout.width)):
        for line in render_lines(frame):
            stdout.print(line, highlight=False)
    else:
        stdout.print(render_table(frame))


HELP = """\
.help             this list
.tables           the relations: input tables, result views, NAME_all views, macros' views
.mode line        one `column = value` line per column, rows apart (DuckDB .mode line, psql \\x)
.mode table       a table
.mode auto        a table, or line mode when a row is too wide for the terminal (default)
.quit, .exit, \\q  leave (also Ctrl-D)
Statements end with ';'. The views of the latest result set: `.tables`; every set: NAME_all
(a result_set column) and result_sets. Macros and views: sql/README.md."""


def banner(opened: Any) -> Text:
    """What the prompt says first: the tables, the latest result set's views, every set's
    NAME_all views and the dot commands (set ids and table names are folder and file
    names: shown literally)."""
    latest = opened.latest
    results = (
        f"; latest result set {latest.set_id}: {', '.join(opened.views)}"
        if latest is not None and opened.views
        else "; no result sets yet"
    )
    if opened.all_views:
        results += f"; every set ({len(opened.sets)}): {', '.join(opened.all_views)}, result_sets"
    return id_text(
        "evalframe sql — tables: scores, executions, outcomes, runs"
        + results
        + ". End statements with ';', `.help` lists the dot commands, `.tables` the "
        "relations, `.quit` or Ctrl-D leaves, Ctrl-C cancels the line or the running query."
    )


TABLES_QUERY = "select table_name, table_type from information_schema.tables order by 1;"
"""What `.tables` runs."""


def dot_command(line: str, mode: str) -> str | None:
    """Carry out a dot command typed at the start of a statement (`.help`, `.mode`, an
    unknown one) and return the display mode after it; None when `line` is none."""
    if line in (".help", r"\?"):
        stdout.print(HELP, highlight=False, markup=False)
    elif line.split()[:1] == [".mode"]:
        asked = line.split()[1:]
        if len(asked) == 1 and asked[0] in MODES:
            mode = asked[0]
            stdout.print(f"mode {mode}", highlight=False)
        else:
            usage = f"mode {mode}; usage: .mode {'|'.join(MODES)}"
            stdout.print(usage, highlight=False, markup=False)
    elif line.startswith(".") and not line.endswith(";"):
        unknown = f"unknown command {line}; .help lists the dot commands."
        stdout.print(message_text(unknown, "red"), highlight=False)
    else:
        return None
    return mode


def run_and_print(con: duckdb.DuckDBPyConnection, query: str, opened: Any, **show: Any) -> None:
    """Run `query`, print its result (`show`: print_result's csv, json, mode) and, when it
    reads an empty latest-set view (row queries and aggregates alike), the notes on it;
    raises QueryCancelled on Ctrl-C."""
    result = run_query(con, query)
    print_result(result, **show)
    if result is not None:
        for note in opened.empty_notes(con, query):
            stderr.print(message_text(note), highlight=False)


def interactive(
    con: duckdb.DuckDBPyConnection,
    opened: Any,
    *,
    read: Callable[[str], str] = input,
    csv: bool = False,
    json: bool = False,
    mode: str = "auto",
) -> None:
    """A read-eval loop: statements end with `;`; `.tables` lists the relations, `.mode
    line|table|auto` picks how results show, `.help` lists the dot commands, `.quit` (or
    end of input, Ctrl-D) leaves; Ctrl-C drops the statement being typed, or cancels the
    query that is running, and the loop goes on. Errors are printed and the loop goes on."""
    stdout.print(banner(opened), highlight=False)
    buffer: list[str] = []
    while True:
        try:
            line = read(CONTINUE if buffer else PROMPT)
        except EOFError:
            stdout.print()
            return
        except KeyboardInterrupt:  # cancel the statement being typed, not the session
            stdout.print("^C" if not buffer else "^C (statement cancelled)", highlight=False)
            buffer = []
            continue
        stripped = line.strip()
        if not buffer and stripped in (".quit", ".exit", r"\q"):
            return
        if not buffer and stripped == ".tables":
            line = stripped = TABLES_QUERY
        elif not buffer and stripped and (changed := dot_command(stripped, mode)) is not None:
            mode = changed
            continue
        if not stripped:
            continue
        buffer.append(line)
        if not stripped.endswith(";"):
            continue
        query, buffer = "\n".join(buffer), []
        try:
            run_and_print(con, query, opened, csv=csv, json=json, mode=mode)
        except UsageError as exc:  # DuckDB's message quotes values: shown literally
            stdout.print(message_text(str(exc), style="red"), highlight=False)
        except QueryCancelled:  # Ctrl-C while a query runs cancels that query
            stdout.print("\n^C (query cancelled)", highlight=False)
        except KeyboardInterrupt:  # Ctrl-C while its result prints stops the printing
            stdout.print("\n^C (output cancelled)", highlight=False)


def history_file() -> Path:
    """Where the prompt keeps its history: $EVALFRAME_HISTORY, else
    $XDG_CACHE_HOME/evalframe/sql_history (default ~/.cache/evalframe/sql_history)."""
    if os.environ.get("EVALFRAME_HISTORY"):
        return Path(os.environ["EVALFRAME_HISTORY"]).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(cache).expanduser() / "evalframe" / "sql_history"


HISTORY_LENGTH = 2000
"""Lines kept in the prompt history file."""


@contextmanager
def line_editing() -> Iterator[Callable[[str], str]]:
    """`input` with line editing and history (GNU readline or libedit, from the standard
    library) when stdin is a terminal: arrow keys move and recall, the history is read from
    and saved to `history_file()`. Plain `input` otherwise (pipes, no readline module)."""
    if not sys.stdin.isatty():
        yield input
        return
    try:
        import readline
    except ImportError:  # e.g. Windows without pyreadline: still a working prompt
        yield input
        return
    path = history_file()
    with suppress(OSError):  # first run, or unreadable: start empty
        readline.read_history_file(path)
    readline.set_history_length(HISTORY_LENGTH)
    try:
        yield input
    finally:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            readline.write_history_file(path)
        except OSError as exc:
            stdout.print(say("[dim]history not saved to {}: {}[/dim]", path, exc.strerror))
