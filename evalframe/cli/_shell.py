"""The machinery of `evalframe sql` (the command: sql.py): DuckDB over a dataset, its
results and the sql/ macros.

The connection holds the dataset's validated input tables (scores, executions, outcomes,
runs, with every optional column filled in), the result sets of DATASET/results (or of
--results DIR): one view per table of the latest set (execution_scores, run_summary,
case_deltas, sweep, threshold_curve, ... whatever the set holds), `NAME_all` over every set
with a `result_set` column, the table `result_sets`, the analyst views over them
(regressions, run_trend) and every macro of `sql/` (sql/README.md). A query prints a
table, CSV or JSON; without a query a small prompt reads statements until `.quit`.

A query runs with DuckDB's full reach (it can read any file, COPY ... TO any path, ATTACH
databases) unless `--read-only` seals the connection first (`seal`): then it reads the
dataset's tables and result sets and nothing else, and writes nowhere.
"""

from __future__ import annotations

import os
import re
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

import duckdb
import polars as pl
from duckdb.sqltypes import DuckDBPyType
from rich.table import Table
from rich.text import Text

from evalframe import load_dataset
from evalframe._private.engines.duckdb import sql as engine
from evalframe._private.errors import UsageError
from evalframe._private.store.result_sets import (
    SET_COLUMN,
    ResultFolder,
    ResultSet,
    ResultStore,
    default_store,
    looks_like_dataset,
    open_results,
)
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
from evalframe.cli.results import describe

MAX_TABLE_ROWS = 100
"""Rows shown by the human table output (CSV and JSON print every row)."""
PROMPT = "evalframe> "
CONTINUE = "      ...> "
_HINT = "hint: `.tables` lists the relations; sql/README.md documents every macro."


def results_dir(dataset: Path) -> Path:
    """Where `evalframe score` writes by default: the results store DATASET/results."""
    return default_store(dataset)


IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
"""Table names that become views (file names that are not SQL identifiers are skipped)."""


@dataclass(frozen=True)
class Opened:
    """What `open_connection` registered, for the banner and `.tables`."""

    latest: ResultSet | None
    sets: tuple[ResultSet, ...]
    views: tuple[str, ...]
    """Tables of the latest set, one view each."""
    all_views: tuple[str, ...]
    """`NAME_all` views over every set (a `result_set` column beside config_id)."""


class Found(list[str]):
    """The latest set's table names (a list, as before), with what else was opened."""

    opened: Opened


def _dataset_of(where: ResultStore | ResultFolder, given: Path) -> Path | None:
    """The dataset to register: the given path when it is one, else the one the latest
    set's manifest records (an --out folder opened on its own)."""
    if looks_like_dataset(given):
        return given
    latest = where.latest()
    recorded = latest.manifest.get("dataset") if latest is not None else None
    if recorded and looks_like_dataset(Path(recorded)):
        return Path(recorded)
    return None


def _view(con: duckdb.DuckDBPyConnection, name: str, parts: list[tuple[str, Path]]) -> None:
    """`name` as a view over Parquet files; with set ids, each row gets its result_set.
    Paths and ids are bound through variables, never SQL text."""
    selects: list[str] = []
    for set_id, path in parts:
        var = f"evalframe_{name}_{len(selects)}"
        con.execute(f"set variable {var}_file = $1", [str(path)])
        con.execute(f"set variable {var}_set = $1", [set_id])
        selects.append(
            f"select *, getvariable('{var}_set') as {SET_COLUMN} "
            f"from read_parquet(getvariable('{var}_file'), hive_partitioning = false)"
        )
    con.execute(f'create or replace view "{name}" as ' + " union all by name ".join(selects))


def _latest_view(con: duckdb.DuckDBPyConnection, name: str, path: Path) -> None:
    var = f"evalframe_{name}_latest"
    con.execute(f"set variable {var} = $1", [str(path)])
    con.execute(
        f'create or replace view "{name}" as select * from '
        f"read_parquet(getvariable('{var}'), hive_partitioning = false)"
    )


@contextmanager
def _reading(result_set: ResultSet | None, name: str) -> Iterator[None]:
    """A result table DuckDB cannot read (or that lacks a column a view of sql/ needs) is
    named with its set and file."""
    try:
        yield
    except duckdb.Error as exc:
        if result_set is None or name not in result_set.tables:
            raise
        raise result_set.damaged(name, exc) from None


def open_connection(
    dataset: str | Path, results: str | Path | None = None, *, read_only: bool = False
):
    """A DuckDB connection with the dataset's tables, the macros, and the result sets of
    `results` (default: DATASET/results; DATASET may itself be a store or an --out folder):
    a view per table of the latest set, `NAME_all` over every set with a `result_set`
    column, and `result_sets` listing them. Returns (connection, the latest set's tables).
    With `read_only`, the connection is sealed (`seal`) before it is returned."""
    dataset = Path(dataset)
    where = open_results(results if results is not None else dataset)
    source = _dataset_of(where, dataset)
    if source is None and results is None and not where.sets():
        load_dataset(dataset)  # raises the usual "no scores table" error
    sets = where.sets()
    latest = sets[-1] if sets else None
    if source is not None:
        con = engine.connect(load_dataset(source))
    else:  # results alone: macros that need no input table
        con = duckdb.connect()
        engine.create_macros(con, engine.COMPARE_MACROS)
    # the views of sql/ read $evalframe_results/NAME.parquet: the latest set's folder, so
    # every view shows one set (one config); without a set they are empty
    folder = latest.folder if latest is not None else where.path
    con.execute("set variable evalframe_results = $1", [str(folder)])
    latest_tables = {
        n: p for n, p in (latest.tables if latest else {}).items() if IDENTIFIER.match(n)
    }
    needs = {"regressions": "case_deltas", "run_trend": "run_summary"}
    if source is not None:
        for name in (*engine.OUTPUT_VIEWS, *engine.ANALYST_VIEWS):
            with _reading(latest, needs.get(name, name)):
                con.execute(engine.sql_text(name))
    for name, path in latest_tables.items():
        if source is None or name not in engine.OUTPUT_VIEWS:
            with _reading(latest, name):
                _latest_view(con, name, path)
    if source is None:
        for name in engine.ANALYST_VIEWS:
            if needs.get(name) in latest_tables:
                with _reading(latest, needs[name]):
                    con.execute(engine.sql_text(name))
    names = sorted({n for s in sets for n in s.tables if IDENTIFIER.match(n)})
    for name in names:
        for s in sets:
            if name in s.tables:
                with _reading(s, name):
                    con.execute("select * from read_parquet($1) limit 0", [str(s.tables[name])])
        _view(con, f"{name}_all", [(s.set_id, s.tables[name]) for s in sets if name in s.tables])
    listing = [describe(s, s is latest) for s in sets]
    frame = pl.DataFrame(
        {
            SET_COLUMN: [r["result_set"] for r in listing],
            "latest": [r["latest"] for r in listing],
            "commands": [r["commands"] for r in listing],
            "created_at": [r["created_at"] for r in listing],
            "tables": [list(r["tables"]) for r in listing],
            "rows": [r["rows"] for r in listing],
            "stale": [r["stale"] for r in listing],
        },
        schema={
            SET_COLUMN: pl.String,
            "latest": pl.Boolean,
            "commands": pl.List(pl.String),
            "created_at": pl.String,
            "tables": pl.List(pl.String),
            "rows": pl.Int64,
            "stale": pl.Boolean,
        },
    )
    con.register("result_sets_frame", frame)
    con.execute("create or replace table result_sets as select * from result_sets_frame")
    con.unregister("result_sets_frame")
    found = Found(sorted(latest_tables))
    found.opened = Opened(
        latest, tuple(sets), tuple(sorted(latest_tables)), tuple(f"{n}_all" for n in names)
    )
    if read_only:
        seal(con)
    return con, found


_FILE_SCAN = re.compile(r"read_parquet\(getvariable\((''?)(\w+)\1\)(?:,(?:[^()]|\([^()]*\))*)?\)")
"""How the views read a result table: `read_parquet(getvariable('VAR'), OPTIONS)`, the
path bound through a variable (quotes doubled inside the sql/ views' `query(...)` text).
The options (hive_partitioning = false) are those of a single file read by pyarrow."""
_SERVED = "evalframe_file_"
"""Prefix of the relations `seal` registers, one per Parquet file the views read."""


def seal(con: duckdb.DuckDBPyConnection) -> None:
    """Make the connection unable to touch any file (`--read-only`): every Parquet file a
    view reads is handed to DuckDB as a lazy Arrow dataset (pyarrow reads it, scanning only
    what a query asks for; nothing is materialized) and the view is re-pointed at it; then
    `enable_external_access = false` and `lock_configuration = true`. After that no
    statement can read a file (read_csv, read_parquet, glob, ...), write one (COPY ... TO,
    EXPORT DATABASE), ATTACH a database, install or load an extension, or change a setting
    back. (DuckDB's `allowed_paths` would keep the views readable, but it allows writing
    those files too: `COPY ... TO` over a result table.)"""
    import pyarrow.dataset as pads

    served: dict[str, str] = {}

    def serve(match: re.Match[str]) -> str:
        ((path,),) = con.execute("select getvariable($1)", [match.group(2)]).fetchall()
        if path is None:  # no file behind it (an sql/ view of a table no set holds)
            return match.group(0)
        if path not in served:
            name = f"{_SERVED}{len(served)}"
            con.register(name, pads.dataset([str(path)], format="parquet"))
            served[path] = name
        return served[path]

    views = con.execute(
        "select view_name, sql from duckdb_views() "
        "where not internal and not temporary and sql is not null"
    ).fetchall()
    for _name, sql in views:
        rewritten = _FILE_SCAN.sub(serve, sql)
        if rewritten != sql:
            replace = re.compile(r"^\s*create\s+view", re.IGNORECASE)
            con.execute(replace.sub("create or replace view", rewritten, count=1))
    con.execute("set enable_external_access = false")
    con.execute("set lock_configuration = true")


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


def _type_child(child: DuckDBPyType | int | list[str]) -> DuckDBPyType:
    """A nested type's child type: a list's, array's or map's element, a struct's field
    (`children` also lists an array's size, a decimal's width and an enum's values)."""
    if not isinstance(child, DuckDBPyType):
        raise TypeError(f"not a DuckDB type: {child!r}")
    return child


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
        fields = [(str(n), _type_child(ft)) for n, ft in t.children]
        parts = [
            (
                n,
                _portable_sql(
                    f"struct_extract({x}, '{n.replace(chr(39), chr(39) * 2)}')", ft, depth + 1
                ),
            )
            for n, ft in fields
        ]
        if all(sql is None for _n, sql in parts):
            return None
        packed = ", ".join(
            f'"{n.replace(chr(34), chr(34) * 2)}" := '
            + (sql or f"struct_extract({x}, '{n.replace(chr(39), chr(39) * 2)}')")
            for n, sql in parts
        )
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


def portable(
    con: duckdb.DuckDBPyConnection, rel: duckdb.DuckDBPyRelation
) -> duckdb.DuckDBPyRelation:
    """The relation with every column polars cannot import (intervals, unions, ... which
    crashed the CSV/JSON/table output) converted by `_portable_sql`; unchanged otherwise."""
    exprs, changed = [], False
    for name, dtype in zip(rel.columns, rel.types, strict=True):
        col = '"' + name.replace('"', '""') + '"'
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
    more = frame.height - limit
    table.caption = f"{frame.height:,} rows" + (f" ({more:,} not shown)" if more > 0 else "")
    return table


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
    more = frame.height - limit
    out.append(Text(""))
    out.append(Text(f"{frame.height:,} rows" + (f" ({more:,} not shown)" if more > 0 else "")))
    return out


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


ANALYST_SOURCES = {"regressions": "case_deltas", "run_trend": "run_summary"}
"""The analyst views of sql/ and the result table each reads from the latest set."""
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def empty_notes(con: duckdb.DuckDBPyConnection, query: str, opened: Opened | None) -> list[Text]:
    """For each latest-set view (or analyst view over one) the query names that is empty
    while other result sets hold rows of its table: a note naming those sets and how to read
    them (`NAME_all where result_set = '...'`); after row queries and aggregates alike."""
    if opened is None:
        return []
    order = {s.set_id: k for k, s in enumerate(opened.sets)}
    words = {w.lower() for w in _WORD.findall(query)}
    tables = {v.removesuffix("_all") for v in opened.all_views}
    latest = opened.latest.set_id if opened.latest is not None else None
    notes = []
    for view in sorted(words):
        table = ANALYST_SOURCES.get(view, view)
        if table not in tables:
            continue
        try:
            ((n,),) = con.execute(f'select count(*) from "{view}"').fetchall()
            holders = con.execute(
                f'select {SET_COLUMN}, count(*) from "{table}_all" group by 1 having count(*) > 0'
            ).fetchall()
        except duckdb.Error:  # a view this connection cannot read: nothing to say
            continue
        if n or not holders:
            continue
        holders = sorted(holders, key=lambda h: -order.get(h[0], -1))  # newest first
        newest = holders[0][0]
        held = ", ".join(f"{{}} ({c:,} rows)" for _s, c in holders[:3])
        held += f" and {len(holders) - 3} more" if len(holders) > 3 else ""
        where = "the latest result set {}" if latest is not None else "the latest result set"
        head = (
            f"note: {{}} of {where} has no rows"
            if view == table
            else f"note: {{}} reads {{}} of {where}, which has no rows"
        )
        notes.append(
            say(
                head + f"; result set(s) holding {{}}: {held}; read them with: select * from "
                f"{{}}_all where {SET_COLUMN} = '{{}}' (result_sets lists the sets).",
                *([view] if view == table else [view, table]),
                *([latest] if latest is not None else []),
                table,
                *(h[0] for h in holders[:3]),
                table,
                str(newest).replace("'", "''"),
            )
        )
    return notes


HELP = """\
.help             this list
.tables           the relations: input tables, result views, NAME_all views, macros' views
.mode line        one `column = value` line per column, rows apart (DuckDB .mode line, psql \\x)
.mode table       a table
.mode auto        a table, or line mode when a row is too wide for the terminal (default)
.quit, .exit, \\q  leave (also Ctrl-D)
Statements end with ';'. The views of the latest result set: `.tables`; every set: NAME_all
(a result_set column) and result_sets. Macros and views: sql/README.md."""


def interactive(
    con: duckdb.DuckDBPyConnection,
    found: list[str],
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
    opened = getattr(found, "opened", None)
    latest = opened.latest if opened is not None else None
    results = (
        f"; latest result set {latest.set_id}: {', '.join(found)}"
        if latest is not None and found
        else "; no result sets yet"
    )
    if opened is not None and opened.all_views:
        results += f"; every set ({len(opened.sets)}): {', '.join(opened.all_views)}, result_sets"
    stdout.print(
        id_text(  # set ids and table names are folder and file names: shown literally
            "evalframe sql — tables: scores, executions, outcomes, runs"
            + results
            + ". End statements with ';', `.help` lists the dot commands, `.tables` the "
            "relations, `.quit` or Ctrl-D leaves, Ctrl-C cancels the line or the running query."
        ),
        highlight=False,
    )
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
            line = "select table_name, table_type from information_schema.tables order by 1;"
            stripped = line
        elif not buffer and stripped in (".help", r"\?"):
            stdout.print(HELP, highlight=False, markup=False)
            continue
        elif not buffer and stripped.split()[:1] == [".mode"]:
            asked = stripped.split()[1:]
            if len(asked) == 1 and asked[0] in MODES:
                mode = asked[0]
                stdout.print(f"mode {mode}", highlight=False)
            else:
                stdout.print(
                    f"mode {mode}; usage: .mode {'|'.join(MODES)}", highlight=False, markup=False
                )
            continue
        elif not buffer and stripped.startswith(".") and not stripped.endswith(";"):
            stdout.print(
                message_text(f"unknown command {stripped}; .help lists the dot commands.", "red"),
                highlight=False,
            )
            continue
        if not stripped:
            continue
        buffer.append(line)
        if not stripped.endswith(";"):
            continue
        query, buffer = "\n".join(buffer), []
        try:
            result = run_query(con, query)
            print_result(result, csv=csv, json=json, mode=mode)
            if result is not None:  # row queries and aggregates alike
                for note in empty_notes(con, query, opened):
                    stderr.print(note, highlight=False)
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
