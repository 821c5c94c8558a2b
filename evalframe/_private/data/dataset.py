"""Datasets: finding the input tables on disk, validating them, filling in defaults
(docs/tables.md#input-tables)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import duckdb
import polars as pl
import pyarrow as pa

from evalframe._private import schema as S
from evalframe._private.data.keyed import EXEC, Keyed, key_scores
from evalframe._private.data.validate import MAX_EXAMPLES, ClampReport, validate_tables
from evalframe._private.errors import (
    DatasetNotFoundError,
    EvalframeError,
    Problem,
    UsageError,
    ValidationError,
)


@dataclass(frozen=True)
class Dataset:
    """Validated input tables as lazy frames, with every optional column filled in.

    `executions` is always present (derived from `scores` when the table is absent);
    `outcomes` and `runs` are empty frames of the right schema when absent. `labels`
    (docs/tables.md#labels, human verdicts and scores) is None when the dataset has no labels table;
    when present it is typed, with its scale column (`validate.LABEL_SCALE`).
    """

    scores: pl.LazyFrame
    executions: pl.LazyFrame
    outcomes: pl.LazyFrame
    runs: pl.LazyFrame
    keyed: Keyed
    source: str = "<frames>"
    clamped: ClampReport | None = None
    labels: pl.LazyFrame | None = None

    @property
    def evaluators(self) -> tuple[str, ...]:
        """The distinct evaluator names in `scores`, sorted."""
        return self.keyed.evaluators

    @classmethod
    def from_frames(
        cls,
        scores: pl.DataFrame | pl.LazyFrame,
        executions: pl.DataFrame | pl.LazyFrame | None = None,
        outcomes: pl.DataFrame | pl.LazyFrame | None = None,
        runs: pl.DataFrame | pl.LazyFrame | None = None,
        labels: pl.DataFrame | pl.LazyFrame | None = None,
        *,
        clamp: bool = False,
        source: str = "<frames>",
    ) -> Dataset:
        """Validate in-memory tables (raises ValidationError listing every problem)."""
        raw = {
            S.SCORES: scores,
            S.EXECUTIONS: executions,
            S.OUTCOMES: outcomes,
            S.RUNS: runs,
            S.LABELS: labels,
        }
        lazy = {k: (v.lazy() if isinstance(v, pl.DataFrame) else v) for k, v in raw.items()}
        tables, report, problems = validate_tables(lazy, clamp=clamp)
        keyed, key_problems = key_scores(tables[S.SCORES], tables[S.EXECUTIONS])
        if problems or key_problems:
            raise ValidationError([*problems, *key_problems])
        return cls(
            scores=tables[S.SCORES],
            executions=keyed.executions.drop(EXEC).lazy(),
            outcomes=tables[S.OUTCOMES],
            runs=tables[S.RUNS],
            keyed=keyed,
            source=source,
            clamped=report,
            labels=tables.get(S.LABELS),
        )


def open_tables(path: str | Path) -> dict[str, pl.LazyFrame | None]:
    """The raw input tables of a dataset as lazy scans (nothing read, nothing validated):
    a folder of `NAME.parquet` files or `NAME/` Parquet folders (hive partitions allowed),
    or a DuckDB database file with tables of those names. Absent tables are None."""
    path = Path(path)
    if not (path.is_dir() or path.is_file()):
        raise missing_dataset(path)
    tables = _open(path, S.INPUT_TABLES)
    if tables.get(S.SCORES) is None:
        raise no_scores_table(path)
    return tables


def missing_dataset(path: Path) -> DatasetNotFoundError:
    return DatasetNotFoundError(
        f"dataset {path} does not exist; hint: pass a folder holding scores.parquet "
        "(or a scores/ folder of Parquet files), or a DuckDB database file. "
        "`evalframe demo` writes an example."
    )


def no_scores_table(path: Path) -> DatasetNotFoundError:
    """The error for a dataset without scores; it names the CSV/JSON files a folder holds."""
    files = path.iterdir() if path.is_dir() else ()
    found = sorted(p.name for p in files if p.suffix.lower() in TEXT_TABLES)
    hint = (
        f"it holds {', '.join(found[:5])}: {INGEST_HINT}"
        if found
        else "`scores` is the one required table, see docs/tables.md."
    )
    return DatasetNotFoundError(
        f"dataset {path} has no `scores` table (looked for scores.parquet, scores/*.parquet"
        f" or a DuckDB table named scores); hint: {hint}"
    )


TEXT_TABLES = (".csv", ".json", ".jsonl")
"""Files users hand over as a dataset that evalframe reads only through `ingest`."""
INGEST_HINT = (
    "evalframe reads Parquet tables; `evalframe ingest wide FILE --to DATASET` turns a CSV or "
    "JSONL file with one row per execution and one column per metric into a dataset, and "
    "`evalframe ingest FORMAT` reads other tools' files (docs/ingest.md)."
)


def not_a_dataset(path: Path, exc: BaseException) -> UsageError:
    """The error for a file that is not a DuckDB database (a CSV file given as DATASET, ...)."""
    if path.suffix.lower() in TEXT_TABLES:
        return UsageError(f"{path} is a {path.suffix} file, not a dataset; hint: {INGEST_HINT}")
    return UsageError(
        f"{path} is neither a dataset folder nor a DuckDB database ({exc}); hint: pass "
        "a folder of Parquet tables or a .duckdb file."
    )


def load_dataset(path: str | Path, *, clamp: bool = False) -> Dataset:
    """Open a dataset: a folder of `NAME.parquet` files or `NAME/` Parquet folders (hive
    partitions allowed), or a DuckDB database file with tables of those names.

    Only `scores` is required. Raises ValidationError (every problem at once) on bad input;
    with `clamp=True`, out-of-range scores are clamped and NaN/inf become null instead.
    """
    tables = open_tables(path)
    scores = tables.pop(S.SCORES)
    assert scores is not None  # open_tables raises without a scores table
    labels = open_labels(path)
    return Dataset.from_frames(scores, **tables, labels=labels, clamp=clamp, source=str(path))


def open_labels(path: str | Path) -> pl.LazyFrame | None:
    """The raw `labels` table of a dataset (docs/tables.md#labels) as a lazy scan, read like the
    other input tables (`labels.parquet`, a `labels/` Parquet folder, or a DuckDB table named
    labels); None when the dataset has none. Nothing validated
    (`validate.validate_labels`)."""
    path = Path(path)
    return _open(path, (S.LABELS,))[S.LABELS] if path.is_dir() or path.is_file() else None


def _open(path: Path, names: Sequence[str]) -> dict[str, pl.LazyFrame | None]:
    problems: list[Problem] = []
    if path.is_dir():
        tables = {name: _scan_folder_table(path, name, problems) for name in names}
    else:
        tables = _read_duckdb(path, problems, names)
    if problems:
        raise ValidationError(problems)
    return tables


PARQUET_MAGIC = b"PAR1"


def _sniff(head: bytes) -> str:
    """What a file that is not Parquet looks like, from its first bytes."""
    if not head:
        return "it is empty: 0 bytes"
    text = head.lstrip(b"\xef\xbb\xbf").lstrip()
    if text[:1] in (b"{", b"["):
        return "it looks like JSON text"
    if b"," in text.split(b"\n", 1)[0] and all(32 <= c < 127 or c in b"\r\n\t" for c in text):
        return "it looks like CSV text"
    if head[:4] == PARQUET_MAGIC:
        return "it does not end with the Parquet footer: truncated?"
    return "it does not start and end with the Parquet magic bytes PAR1"


def _parquet_schema(
    path: Path, table: str, shown: str, problems: list[Problem]
) -> pl.Schema | None:
    """The schema in a Parquet file's footer, or None with a Problem naming the file when
    it is empty, truncated, not Parquet, unreadable or has two columns of one name."""
    hint = "hint: re-export the table; `evalframe ingest` converts CSV / JSON files."
    try:
        size = path.stat().st_size
        with path.open("rb") as fh:
            head = fh.read(256)
            fh.seek(max(0, size - 4))
            tail = fh.read(4)
    except OSError as exc:
        problems.append(Problem(table, "", f"cannot read {shown}: {exc.strerror}", 0))
        return None
    if size < 12 or head[:4] != PARQUET_MAGIC or tail != PARQUET_MAGIC:
        problems.append(
            Problem(table, "", f"{shown} is not a Parquet file ({_sniff(head)}); {hint}", 0)
        )
        return None
    try:
        import pyarrow.parquet as pq

        names = pq.read_schema(path).names
        dups = sorted({n for n in names if names.count(n) > 1})
        if not dups:
            return pl.scan_parquet(path, glob=False).collect_schema()
    # pyarrow raises ArrowInvalid, OSError, ...; polars panics on some damaged footers
    except (Exception, pl.exceptions.PanicException) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        problems.append(
            Problem(table, "", f"{shown}: the Parquet footer is unreadable ({first}); {hint}", 0)
        )
        return None
    message = f"{shown} has {names.count(dups[0])} columns named {', '.join(map(repr, dups))}"
    problems.append(Problem(table, dups[0], f"{message}; hint: rename or drop the copies.", 0))
    return None


def table_files(root: Path, name: str) -> tuple[list[Path], bool]:
    """The Parquet files of table `name` in a dataset folder: `NAME.parquet`, or every
    `*.parquet` under `NAME/` (hidden files and folders, starting with `.` or `_`, and
    files of other types, such as a README.txt or _SUCCESS, are ignored); and whether
    they form a folder. Paths are literal: `[ ] ? *` in a name are not patterns."""
    single = root / f"{name}.parquet"
    folder = root / name
    if single.is_file():
        return [single], False
    if folder.is_dir():
        files = [
            f
            for f in sorted(folder.rglob("*.parquet"))
            if f.is_file()
            and not any(part.startswith((".", "_")) for part in f.relative_to(folder).parts)
        ]
        return files, True
    return [], False


def _unify(
    table: str, schemas: dict[Path, pl.Schema], folder: Path, problems: list[Problem]
) -> dict[str, pl.DataType] | None:
    """One schema for the files of a folder table: a column's types must agree, except that
    integer and float columns widen to Float64 (integers of different widths to Int64) and
    Categorical to String; a column missing from some files reads as null there, unless it
    is required. Differences that do not widen are Problems naming the files."""
    columns: dict[str, dict[pl.DataType, list[Path]]] = {}
    for path, schema in schemas.items():
        for col, dtype in schema.items():
            columns.setdefault(col, {}).setdefault(dtype, []).append(path)
    out: dict[str, pl.DataType] = {}
    before = len(problems)
    declared = S.TABLE_COLUMNS[table]
    for col, by_type in columns.items():
        kinds = [t for t in by_type if t != pl.Null]
        present = {p for paths in by_type.values() for p in paths}
        if col in declared and declared[col][1] and len(present) < len(schemas):
            missing = sorted(str(p.relative_to(folder)) for p in schemas if p not in present)
            message = (
                f"required column is missing from {len(missing)} of the {len(schemas)} files "
                f"in {folder.name}/; e.g. {', '.join(missing[:MAX_EXAMPLES])}"
            )
        elif (widened := _widened(kinds)) is not None:
            out[col] = widened
            continue
        else:
            shown = "; ".join(
                f"{t} in {', '.join(str(p.relative_to(folder)) for p in paths[:2])}"
                + (f" (+{len(paths) - 2} more)" if len(paths) > 2 else "")
                for t, paths in by_type.items()
            )
            message = (
                f"the files in {folder.name}/ disagree on its type: {shown}; hint: write "
                "every file of a table with the same column types."
            )
        problems.append(Problem(table, col, message, 0))
    return None if len(problems) > before else out


def _widened(kinds: list[pl.DataType]) -> pl.DataType | None:
    """The one type of a column whose files hold `kinds` (None: they do not widen)."""
    if not kinds:
        return pl.Null()
    if len(kinds) == 1:
        return kinds[0]
    if pl.UInt64 not in kinds and all(t.is_integer() for t in kinds):
        return pl.Int64()
    if pl.UInt64 not in kinds and all(t.is_float() or t.is_integer() for t in kinds):
        return pl.Float64()
    if all(t in (pl.String, pl.Categorical) for t in kinds):
        return pl.String()
    return None


def _hive_keys(files: list[Path], folder: Path) -> list[str]:
    """Hive partition keys (`KEY=value` folders) on the path of the first file."""
    rel = files[0].relative_to(folder).parts[:-1]
    return [part.split("=", 1)[0] for part in rel if "=" in part]


def outer_hive_keys(folder: Path, inner: Sequence[str]) -> list[str]:
    """Keys of `KEY=value` folders on the path to a table folder (`/lake/team=eval/ds/
    scores/`): the engines parse every such folder of a file's path as a partition, but
    only those below the table folder are its partitions. The engines read them as text
    and drop them. Computed on the absolute path (the engines see absolute paths)."""
    return [
        k
        for k in dict.fromkeys(p.split("=", 1)[0] for p in folder.absolute().parts if "=" in p)
        if k not in inner
    ]


def _scan_folder_table(root: Path, name: str, problems: list[Problem]) -> pl.LazyFrame | None:
    files, is_folder = table_files(root, name)
    if not files:
        return None
    schemas: dict[Path, pl.Schema] = {}
    for f in files:
        shown = str(f.relative_to(root))
        schema = _parquet_schema(f, name, shown, problems)
        if schema is not None:
            schemas[f] = schema
    if len(schemas) < len(files):
        return None
    if not is_folder:
        # a link into the store's versions (ingest, demo) is pinned to the version it points
        # to now: a commit after this never swaps the file under a scan already planned
        single = files[0].resolve() if files[0].is_symlink() else files[0]
        return pl.scan_parquet(single, glob=False)
    folder = root / name
    unified = _unify(name, schemas, folder, problems)
    if unified is None:
        return None
    declared = S.TABLE_COLUMNS[name]
    # partition values are text unless the contract types the column: ids stay strings
    # (`case_id=001` is "001", not 1), `attempt=2` is an int
    hive = {
        k: (
            declared[k][0]
            if k in declared and declared[k][0] in (pl.Int64, pl.Float64)
            else pl.String()
        )
        for k in _hive_keys(files, folder)
    }
    outer = outer_hive_keys(folder, list(hive)) if hive else []
    uniform = all(s == next(iter(schemas.values())) for s in schemas.values())
    scan = pl.scan_parquet(
        [f.absolute() for f in files],
        glob=False,
        hive_partitioning=bool(hive),
        hive_schema={**hive, **dict.fromkeys(outer, pl.String())} or None,
        try_parse_hive_dates=False,
        schema=None if uniform else {c: t for c, t in unified.items() if c not in hive},
        missing_columns="insert",
        extra_columns="ignore",
        cast_options=None
        if uniform
        else pl.ScanCastOptions(
            integer_cast="allow-float", float_cast="upcast", categorical_to_string="allow"
        ),
    )
    return scan.drop(outer) if outer else scan


_UNREADABLE_TYPES = ("INTERVAL", "UNION", "VARINT", "BIGNUM", "TIME WITH TIME ZONE", "TIMETZ")
"""DuckDB types polars cannot import (nested anywhere in a column type): read as text."""


def _read_duckdb(
    path: Path, problems: list[Problem], names: Sequence[str]
) -> dict[str, pl.LazyFrame | None]:
    try:
        con = duckdb.connect(str(path), read_only=True)
    except duckdb.Error as exc:
        raise not_a_dataset(path, exc) from None
    try:
        present = {
            row[0]
            for row in con.execute(
                "select table_name from information_schema.tables where table_schema = 'main'"
            ).fetchall()
        }
        out: dict[str, pl.LazyFrame | None] = {}
        for name in names:
            out[name] = None
            if name not in present:
                continue
            # the name is one of our table-name constants, never user text
            try:
                columns = con.execute(f'describe select * from "{name}"').fetchall()
                cols = [c[0] for c in columns]
                dups = sorted({n for n in cols if cols.count(n) > 1})
                if dups:
                    message = f"two columns named {dups[0]!r}; hint: rename one."
                    problems.append(Problem(name, dups[0], message, 0))
                    continue
                quoted = ['"' + c.replace('"', '""') + '"' for c in cols]
                select = ", ".join(
                    f"cast({q} as varchar) as {q}"
                    if any(t in str(ctype).upper() for t in _UNREADABLE_TYPES)
                    else q
                    for q, (_c, ctype, *_) in zip(quoted, columns, strict=True)
                )
                out[name] = con.sql(f'select {select} from "{name}"').pl().lazy()
            except (duckdb.Error, pl.exceptions.PolarsError) as exc:
                first = str(exc).strip().splitlines()[0]
                message = f"cannot be read from {path.name} ({first}); hint: fix or drop the "
                problems.append(Problem(name, "", message + "table or view.", 0))
        return out
    finally:
        con.close()


READ_ERRORS: tuple[type[BaseException], ...] = (
    pl.exceptions.PolarsError,
    pl.exceptions.PanicException,
    pa.ArrowException,
    duckdb.Error,
)
"""What polars, pyarrow and DuckDB raise when a file they read is corrupt (polars panics on
some damaged pages): `explain_read_error` turns them into messages, exit code 2."""


def corrupt_files(path: str | Path) -> list[Problem]:
    """Problems naming every Parquet file of a dataset folder that does not decode in full
    (with polars and with pyarrow). Reads every byte: run only after a read has failed."""
    import pyarrow.parquet as pq

    root = Path(path)
    problems: list[Problem] = []
    if not root.is_dir():
        return problems
    for name in (*S.INPUT_TABLES, S.LABELS):
        for f in table_files(root, name)[0]:
            try:
                pl.read_parquet(f, glob=False)
                pq.read_table(f)
            except BaseException as exc:  # READ_ERRORS, OSError; PanicException: BaseException
                if not isinstance(exc, (*READ_ERRORS, OSError)):
                    raise
                first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
                shown = f.relative_to(root)
                problems.append(
                    Problem(name, "", f"{shown} is corrupt: {first}; hint: re-export the table", 0)
                )
    return problems


def explain_read_error(
    exc: BaseException, dataset: str | Path | None = None
) -> EvalframeError | None:
    """The error to show for `exc`, something polars, pyarrow or DuckDB raised while reading
    or computing over `dataset`: the corrupt files when a full read finds some, else what
    failed, with a hint (exit code 2). None when `exc` is not such an error."""
    if not isinstance(exc, READ_ERRORS):
        return None
    if dataset is not None:
        problems = corrupt_files(dataset)
        if problems:
            return ValidationError(problems)
    first = (str(exc).strip().splitlines() or [""])[0][:300]
    return EvalframeError(
        f"reading or computing failed ({type(exc).__name__}: {first}); hint: check that the "
        "input files are intact Parquet; if they are, this is a bug in evalframe: please "
        "report it with the command you ran."
    )
