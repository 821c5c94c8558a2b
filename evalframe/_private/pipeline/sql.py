"""`sql_connection`: DuckDB over a dataset, its result sets and the sql/ macros — what
`evalframe sql` queries.

The connection holds the dataset's validated input tables (scores, executions, outcomes,
runs, with every optional column filled in), the result sets of DATASET/results (or of
`results`): one view per table of the latest set (execution_scores, run_summary,
case_deltas, sweep, threshold_curve, ... whatever the set holds), `NAME_all` over every set
with a `result_set` column, the table `result_sets`, the analyst views over them
(regressions, run_trend) and every macro of `sql/` (sql/README.md).

A query runs with DuckDB's full reach (it can read any file, COPY ... TO any path, ATTACH
databases) unless `read_only` seals the connection first (`seal`): then it reads the
dataset's tables and result sets and nothing else, and writes nowhere.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from evalframe._private.data.dataset import load_dataset
from evalframe._private.engines.duckdb import sql as engine
from evalframe._private.store.result_sets import (
    SET_COLUMN,
    ResultFolder,
    ResultSet,
    ResultStore,
    looks_like_dataset,
    open_results,
)

IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
"""Table names that become views (file names that are not SQL identifiers are skipped)."""


ANALYST_SOURCES = {"regressions": "case_deltas", "run_trend": "run_summary"}
"""The analyst views of sql/ and the result table each reads from the latest set."""
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Opened:
    """What `sql_connection` registered: the result sets, the latest one, the views."""

    latest: ResultSet | None
    sets: tuple[ResultSet, ...]
    views: tuple[str, ...]
    """Tables of the latest set, one view each."""
    all_views: tuple[str, ...]
    """`NAME_all` views over every set (a `result_set` column beside config_id)."""

    def empty_notes(self, con: duckdb.DuckDBPyConnection, query: str) -> list[str]:
        """For each latest-set view (or analyst view over one) `query` names that is empty
        while other result sets hold rows of its table: a note naming those sets and how to
        read them (`NAME_all where result_set = '...'`). A query answering nothing says why."""
        order = {s.set_id: k for k, s in enumerate(self.sets)}
        tables = {v.removesuffix("_all") for v in self.all_views}
        latest = "" if self.latest is None else f" {self.latest.set_id}"
        notes = []
        for view in sorted({w.lower() for w in _WORD.findall(query)}):
            table = ANALYST_SOURCES.get(view, view)
            if table not in tables:
                continue
            try:
                ((n,),) = con.execute(f'select count(*) from "{view}"').fetchall()
                holders = con.execute(
                    f'select {SET_COLUMN}, count(*) from "{table}_all" group by 1 '
                    "having count(*) > 0"
                ).fetchall()
            except duckdb.Error:  # a view this connection cannot read: nothing to say
                continue
            if n or not holders:
                continue
            holders = sorted(holders, key=lambda h: -order.get(h[0], -1))  # newest first
            held = ", ".join(f"{s} ({c:,} rows)" for s, c in holders[:3])
            held += f" and {len(holders) - 3} more" if len(holders) > 3 else ""
            reads = "" if view == table else f" reads {table}"
            newest = str(holders[0][0]).replace("'", "''")
            notes.append(
                f"note: {view}{reads} of the latest result set{latest}"
                f"{' has' if view == table else ', which has'} no rows; result set(s) holding "
                f"{table}: {held}; read them with: select * from {table}_all where "
                f"{SET_COLUMN} = '{newest}' (result_sets lists the sets)."
            )
        return notes


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


def sql_connection(
    dataset: str | Path, results: str | Path | None = None, *, read_only: bool = False
) -> tuple[duckdb.DuckDBPyConnection, Opened]:
    """A DuckDB connection with the dataset's tables, the macros, and the result sets of
    `results` (default: DATASET/results; DATASET may itself be a store or an --out folder):
    a view per table of the latest set, `NAME_all` over every set with a `result_set`
    column, the table `result_sets` listing them, the analyst views and the sql/ macros.
    Returns the connection and what it `Opened`. With `read_only`, the connection is
    sealed (`seal`): it reads those tables and nothing else, and writes nowhere.

    Example: `con, _ = ef.sql_connection("runs/"); con.sql("select * from run_summary")`
    """
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
    if source is not None:
        for name in (*engine.OUTPUT_VIEWS, *engine.ANALYST_VIEWS):
            with _reading(latest, ANALYST_SOURCES.get(name, name)):
                con.execute(engine.sql_text(name))
    for name, path in latest_tables.items():
        if source is None or name not in engine.OUTPUT_VIEWS:
            with _reading(latest, name):
                _latest_view(con, name, path)
    if source is None:
        for name in engine.ANALYST_VIEWS:
            if ANALYST_SOURCES.get(name) in latest_tables:
                with _reading(latest, ANALYST_SOURCES[name]):
                    con.execute(engine.sql_text(name))
    names = sorted({n for s in sets for n in s.tables if IDENTIFIER.match(n)})
    for name in names:
        for s in sets:
            if name in s.tables:
                with _reading(s, name):
                    con.execute("select * from read_parquet($1) limit 0", [str(s.tables[name])])
        _view(con, f"{name}_all", [(s.set_id, s.tables[name]) for s in sets if name in s.tables])
    columns: dict[str, Any] = {
        "latest": pl.Boolean,
        "commands": pl.List(pl.String),
        "created_at": pl.String,
    }
    columns |= {"tables": pl.List(pl.String), "rows": pl.Int64, "stale": pl.Boolean}
    listing = [s.describe(s is latest) for s in sets]
    frame = pl.DataFrame(
        [{**r, "tables": list(r["tables"])} for r in listing],
        schema={SET_COLUMN: pl.String, **columns},
    )
    con.register("result_sets_frame", frame)
    con.execute("create or replace table result_sets as select * from result_sets_frame")
    con.unregister("result_sets_frame")
    opened = Opened(
        latest, tuple(sets), tuple(sorted(latest_tables)), tuple(f"{n}_all" for n in names)
    )
    if read_only:
        seal(con)
    return con, opened


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
