"""The DuckDB engine's reader: a fresh spilling session, views over a dataset's files
(or a DuckDB database file), the typed views of the input contract, and the input checks
(the score checks read the counts the partials pass folded in; the other tables are
checked in one query each, with validate.py's messages and bounds).

Only constants, column names and paths reach SQL text (`ident`, `literal`)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from evalframe._private import schema as S
from evalframe._private.config import parse_memory_limit
from evalframe._private.data.dataset import dataset_not_found, outer_hive_keys, table_files
from evalframe._private.data.validate import (
    FILLS,
    MAX_EXAMPLES,
    RAW_TIME,
    SCORE_VALUE_CHECKS,
    ClampReport,
    check_schemas,
    folded_score_checks,
    raw_copy,
    time_text_sql,
    value_checks,
)
from evalframe._private.errors import (
    Problem,
    UsageError,
)

PARTIALS = "evalframe_partials"
SOURCE_DB = "evalframe_source"


# --- SQL text helpers (only constants, column names and paths reach SQL text) ------------
def ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


# --- the session -------------------------------------------------------------------------
@contextmanager
def session(
    memory_limit: str = "3GB", temp_directory: str | Path | None = None
) -> Iterator[duckdb.DuckDBPyConnection]:
    """A fresh in-memory connection that spills beyond `memory_limit` into
    `temp_directory` (default: a new temporary folder, removed on exit)."""
    setting = f"{parse_memory_limit(memory_limit)}B"  # the one grammar (config.py)
    owned = temp_directory is None
    folder = (
        Path(tempfile.mkdtemp(prefix="evalframe-duckdb-"))
        if temp_directory is None
        else Path(temp_directory)
    )
    con = duckdb.connect(":memory:")
    try:
        con.execute(f"set memory_limit = {_literal(setting)}")
        con.execute(f"set temp_directory = {_literal(str(folder))}")
        con.execute("set TimeZone = 'UTC'")
        con.execute("set preserve_insertion_order = true")
        try:
            yield con
        except duckdb.OutOfMemoryException as exc:
            raise UsageError(
                f"the memory limit {memory_limit} is too small for this dataset: DuckDB ran "
                f"out of memory ({str(exc).splitlines()[0][:160]}); hint: raise "
                "--memory-limit (default 3GB), or score with the polars engine."
            ) from None
    finally:
        con.close()
        if owned:
            shutil.rmtree(folder, ignore_errors=True)


# --- input views ---------------------------------------------------------------------------
def _raw(name: str) -> str:
    return f"evalframe_raw_{name}"


def _parquet_source(root: Path, name: str) -> str | None:
    """The read_parquet call of table `name` of a dataset folder, over the files the polars
    engine reads (dataset.table_files: literal paths, hidden files ignored; a link to a
    single file pinned to its target), with the same hive partition types (text, unless
    the contract declares the key Int64 or Float64). None when the table is absent."""
    files, is_folder = table_files(root, name)
    if not files:
        return None
    if not is_folder:
        single = files[0].resolve() if files[0].is_symlink() else files[0]
        # no partitions in a single file, whatever KEY=value folders lie above it
        return f"read_parquet({_literal(str(single))}, hive_partitioning = false)"
    rel = files[0].relative_to(root / name).parts[:-1]
    keys = [part.split("=", 1)[0] for part in rel if "=" in part]  # as dataset._hive_keys
    hive = "false"
    if keys:
        declared = S.TABLE_COLUMNS[name]
        types = ", ".join(
            f"{_literal(k)}: {_sql_type(declared[k][0])}"
            for k in keys
            if k in declared and declared[k][0] in (pl.Int64, pl.Float64)
        )
        hive = "true, hive_types_autocast = false" + (
            f", hive_types = {{{types}}}" if types else ""
        )
    listed = ", ".join(_literal(str(f.absolute())) for f in files)
    read = f"read_parquet([{listed}], hive_partitioning = {hive}, union_by_name = true)"
    outer = outer_hive_keys(root / name, keys) if keys else []
    if outer:  # KEY=value folders above the table folder are not its partitions
        return f"(select * exclude ({', '.join(ident(k) for k in outer)}) from {read})"
    return read


def open_views(con: duckdb.DuckDBPyConnection, dataset: str | Path) -> dict[str, bool]:
    """Create `evalframe_raw_NAME` views over the dataset's tables; return which exist.
    Raises DatasetNotFoundError / UsageError like `open_tables`."""
    path = Path(dataset)
    present: dict[str, bool] = {}
    if path.is_dir():
        for name in S.INPUT_TABLES:
            source = _parquet_source(path, name)
            present[name] = source is not None
            if source is not None:
                con.execute(f"create or replace view {_raw(name)} as select * from {source}")
    elif path.is_file():
        try:
            con.execute(f"attach {_literal(str(path))} as {SOURCE_DB} (read_only)")
        except duckdb.Error as exc:
            raise UsageError(
                f"{path} is neither a dataset folder nor a DuckDB database ({exc}); hint: "
                "pass a folder of Parquet tables or a .duckdb file."
            ) from None
        tables = {
            row[0]
            for row in con.execute(
                "select table_name from information_schema.tables "
                "where table_catalog = ? and table_schema = 'main'",
                [SOURCE_DB],
            ).fetchall()
        }
        for name in S.INPUT_TABLES:
            present[name] = name in tables
            if present[name]:
                con.execute(
                    f"create or replace view {_raw(name)} as "
                    f"select * from {SOURCE_DB}.main.{ident(name)}"
                )
    else:
        raise dataset_not_found(path)
    if not present.get(S.SCORES):
        raise dataset_not_found(path, scores=True)
    return present


def _schema(con: duckdb.DuckDBPyConnection, view: str) -> pl.Schema:
    """The polars schema of a view (an empty result: no row is read)."""
    return con.sql(f"select * from {view} limit 0").pl().schema


_SQL_TYPES = {
    pl.String: "varchar",
    pl.Float64: "double",
    pl.Int64: "bigint",
    pl.Boolean: "boolean",
}
_FILLS = {c: _literal(v) if isinstance(v, str) else repr(v) for c, v in FILLS.items()}


def _sql_type(dtype: pl.DataType) -> str:
    if isinstance(dtype, pl.Datetime):
        return "timestamp"
    if isinstance(dtype, pl.List):
        return "varchar[]"
    return _SQL_TYPES[type(dtype)]


def _checked(name: str) -> str:
    return f"evalframe_checked_{name}"


def _typed_select(name: str, schema: pl.Schema | None, *, raw: bool = False) -> str:
    """The select list of a typed table: declared columns cast (in their file position),
    FILLS filled, missing declared columns appended with their defaults — the columns and
    order of validate.typed_frame. `raw=True` appends the raw copies of validate.raw_copy
    (what the value checks read; the typed views drop them, as validate._complete does)."""
    declared = S.TABLE_COLUMNS[name]
    exprs: list[str] = []
    copies: list[str] = []
    present = schema if schema is not None else pl.Schema()
    for col, dtype in present.items():
        ref = f"r.{ident(col)}"  # qualified: DuckDB lets a macro parameter of the same
        # name shadow an unqualified column of a view the macro reads
        if col not in declared:
            exprs.append(f"{ref} as {ident(col)}")
            continue
        wanted = declared[col][0]
        copy = raw_copy(col, wanted, dtype)
        if copy == RAW_TIME:  # created_at as text: validate.TIME_TEXT
            expr = time_text_sql(ref)
            copies.append(f"{ref} as {ident(copy)}")
        elif copy is not None:  # a lossy cast: null where the value does not convert
            expr = f"try_cast({ref} as {_sql_type(wanted)})"
            copies.append(f"{ref} as {ident(copy)}")
        else:
            expr = f"cast({ref} as {_sql_type(wanted)})"
        if col in _FILLS:
            expr = f"coalesce({expr}, {_FILLS[col]})"
        exprs.append(f"{expr} as {ident(col)}")
    for col, (wanted, _required, _default) in declared.items():
        if col not in present:
            value = _FILLS.get(col, "null")
            exprs.append(f"cast({value} as {_sql_type(wanted)}) as {ident(col)}")
    return ", ".join([*exprs, *copies] if raw else exprs)


def typed_views(con: duckdb.DuckDBPyConnection, present: dict[str, bool]) -> dict[str, pl.Schema]:
    """Check the schemas (ValidationError with validate.check_schemas' messages) and create
    the typed views scores, outcomes and runs (executions: see `executions_view`), and for
    each given table the view `evalframe_checked_NAME` the value checks read (the typed
    columns plus the raw copies). Returns the input schemas of the given tables."""
    schemas = {n: _schema(con, _raw(n)) for n, ok in present.items() if ok}
    check_schemas({n: pl.LazyFrame(schema=s) for n, s in schemas.items()})
    for name in (S.SCORES, S.OUTCOMES, S.RUNS):
        schema = schemas.get(name)
        source = _raw(name) if schema is not None else "(select 1 where false)"
        select = _typed_select(name, schema)
        con.execute(f"create or replace view {name} as select {select} from {source} as r")
    if S.EXECUTIONS in schemas:
        select = _typed_select(S.EXECUTIONS, schemas[S.EXECUTIONS])
        con.execute(
            f"create or replace view {S.EXECUTIONS} as select {select} "
            f"from {_raw(S.EXECUTIONS)} as r"
        )
    for name, schema in schemas.items():
        select = _typed_select(name, schema, raw=True)
        con.execute(
            f"create or replace view {_checked(name)} as select {select} from {_raw(name)} as r"
        )
    return schemas


def executions_view(con: duckdb.DuckDBPyConnection, given: bool) -> None:
    """Without an executions table: the execution keys the judge-row pass found."""
    if given:
        return
    declared = {c: spec for c, spec in S.EXECUTIONS_COLUMNS.items()}
    cols = []
    for col, (wanted, _r, _d) in declared.items():
        if col in S.EXECUTION_KEY:
            cols.append(ident(col))
        else:
            cols.append(f"cast({_FILLS.get(col, 'null')} as {_sql_type(wanted)}) as {ident(col)}")
    con.execute(
        f"create or replace view {S.EXECUTIONS} as select {', '.join(cols)} from {PARTIALS} "
        "where run_id is not null and case_id is not null"
    )


# --- validation --------------------------------------------------------------------------
def _key_text(keys: Sequence[str], alias: str = "") -> str:
    """SQL for 'run_id=r case_id=c attempt=0' (null as ∅), as validate._key_text."""
    prefix = f"{alias}." if alias else ""
    parts = []
    for i, k in enumerate(keys):
        label = _literal(("" if i == 0 else " ") + f"{k}=")
        parts.append(f"{label} || coalesce(cast({prefix}{ident(k)} as varchar), '∅')")
    return " || ".join(parts)


def _one(con: duckdb.DuckDBPyConnection, sql: str, params: Any = None) -> tuple[Any, ...]:
    """The one row of a query (fetched to the end: the connection is free again)."""
    rows = con.execute(sql, params).fetchall() if params else con.execute(sql).fetchall()
    return rows[0]


def _examples(con: duckdb.DuckDBPyConnection, sql: str) -> tuple[str, ...]:
    return tuple(str(r[0]) for r in con.execute(f"{sql} limit {MAX_EXAMPLES}").fetchall())


NAN_UNSAFE_OPTIMIZERS = ("statistics_propagation", "filter_pushdown")
"""Optimizers that trust Parquet min/max statistics, which leave NaN out (the Parquet
spec): with them, `x <= 1e12` folds to true and `where isnan(x)` prunes the row group of a
column holding [NaN, 1e12]. The value checks run without them."""


@contextmanager
def _nan_safe(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """Run the enclosed queries without NAN_UNSAFE_OPTIMIZERS (restored afterwards)."""
    before = _one(con, "select current_setting('disabled_optimizers')")[0] or ""
    names = [n for n in before.split(",") if n.strip()] + list(NAN_UNSAFE_OPTIMIZERS)
    con.execute(f"set disabled_optimizers = {_literal(','.join(dict.fromkeys(names)))}")
    try:
        yield
    finally:
        con.execute(f"set disabled_optimizers = {_literal(before)}")


def _check_problems(
    con: duckdb.DuckDBPyConnection, table: str, checks: Sequence[Any], counts: Sequence[int]
) -> list[Problem]:
    """The problems of the checks (validate.ValueCheck) whose count is not zero, with up
    to MAX_EXAMPLES example keys read from the checked view of `table`."""
    keys = _key_text(S.TABLE_KEYS[table])
    problems = []
    for check, n in zip(checks, counts, strict=True):
        if n:
            with _nan_safe(con):
                ex = _examples(con, f"select {keys} from {_checked(table)} where {check.sql}")
            problems.append(Problem(table, check.column, check.message, int(n), ex))
    return problems


def score_problems(
    con: duckdb.DuckDBPyConnection, *, clamp: bool
) -> tuple[list[Problem], ClampReport | None, int]:
    """The null keys and SCORE_VALUE_CHECKS of `scores` from the counts the pass folded in
    (as flat.score_problems); also returns the largest evaluator id seen."""
    checks = folded_score_checks(clamp=clamp)
    folded = {
        f"null_{S.RUN_ID}": "sum(n_all) filter (where run_id is null)",
        f"null_{S.CASE_ID}": "sum(n_all) filter (where case_id is null)",
        "null_eval": "sum(null_eval)",
        **{c.fold: f"sum({c.fold})" for c in SCORE_VALUE_CHECKS},
    }
    sums_sql = ", ".join(
        [
            *(f"coalesce({folded[c.fold]}, 0)" for c in checks),
            "coalesce(sum(n_clamped), 0)",
            "coalesce(sum(n_nulled), 0)",
            "coalesce(max(ev_max), -1)",
        ]
    )
    row = _one(con, f"select {sums_sql} from {PARTIALS}")
    assert row is not None
    *counts, n_clamped, n_nulled, ev_max = row
    problems = _check_problems(con, S.SCORES, checks, counts)
    report = ClampReport(clamped=int(n_clamped), nulled=int(n_nulled)) if clamp else None
    return problems, report, int(ev_max)


def table_problems(con: duckdb.DuckDBPyConnection, schemas: dict[str, pl.Schema]) -> list[Problem]:
    """The checks validate_tables makes beside the one pass, in its order and with its
    messages: every table's validate.value_checks (scores: those the pass does not fold
    in), one query per table; then duplicate keys of executions, outcomes and runs, and
    outcomes of unknown executions."""
    problems: list[Problem] = []
    for table in S.TABLE_COLUMNS:
        if table not in schemas:
            continue
        checks = value_checks(table, schemas[table], score_values=False)
        if not checks:
            continue
        sums = ", ".join(f"count(*) filter (where {c.sql})" for c in checks)
        with _nan_safe(con):
            row = _one(con, f"select {sums} from {_checked(table)}")
        problems += _check_problems(con, table, checks, row)
    for table in (S.EXECUTIONS, S.OUTCOMES, S.RUNS):
        if table not in schemas:
            continue
        keys = S.TABLE_KEYS[table]
        cols = ", ".join(ident(k) for k in keys)
        dups = f"select {cols} from {table} group by all having count(*) > 1"
        n = _one(con, f"select count(*) from ({dups})")
        if n and n[0]:
            ex = _examples(con, f"select {_key_text(keys)} from ({dups}) order by all")
            problems.append(
                Problem(table, ", ".join(keys), "duplicate key (keys listed)", int(n[0]), ex)
            )
    if S.OUTCOMES in schemas:
        parent = S.EXECUTIONS if S.EXECUTIONS in schemas else S.SCORES
        orphans = (
            "select distinct run_id, case_id, attempt from outcomes as o where not exists ("
            "select 1 from executions as e where e.run_id is not distinct from o.run_id "
            "and e.case_id is not distinct from o.case_id "
            "and e.attempt is not distinct from o.attempt)"
        )
        n = _one(con, f"select count(*) from ({orphans})")
        if n and n[0]:
            ex = _examples(
                con, f"select {_key_text(S.EXECUTION_KEY)} from ({orphans}) order by all"
            )
            problems.append(
                Problem(S.OUTCOMES, "", f"execution is not in the {parent} table", int(n[0]), ex)
            )
    return problems


def key_problems(
    con: duckdb.DuckDBPyConnection, given_executions: bool, wide: bool
) -> list[Problem]:
    """Score rows of unknown executions, then duplicate (execution, evaluator) keys (as
    flat.orphan_problem and flat.duplicate_problem)."""
    problems: list[Problem] = []
    known = f"(select * from {PARTIALS} where run_id is not null and case_id is not null)"
    if given_executions:
        orphan = (
            f"select p.run_id, p.case_id, p.attempt, p.n_all from {known} as p "
            "anti join executions as e using (run_id, case_id, attempt)"
        )
        row = _one(con, f"select count(*), sum(n_all) from ({orphan})")
        if row and row[0]:
            ex = _examples(con, f"select {_key_text(S.EXECUTION_KEY)} from ({orphan}) order by all")
            problems.append(
                Problem(S.SCORES, "", "execution is not in the executions table", int(row[1]), ex)
            )
    if wide:  # the bitmask does not hold every evaluator: count the keys
        suspects = known
    else:
        suspects = f"(select * from {known} where bit_count(mask) <> n_all - null_eval)"
    found = _one(con, f"select count(*) from {suspects}")
    if found and found[0]:
        dups = (
            "select s.run_id, s.case_id, s.attempt, s.evaluator from scores as s "
            f"semi join {suspects} as p using (run_id, case_id, attempt) "
            "group by all having count(*) > 1"
        )
        n = _one(con, f"select count(*) from ({dups})")
        if n and n[0]:
            ex = _examples(con, f"select {_key_text(S.SCORE_KEY)} from ({dups}) order by all")
            problems.append(
                Problem(
                    S.SCORES, ", ".join(S.SCORE_KEY), "duplicate key (keys listed)", int(n[0]), ex
                )
            )
    return problems
