"""Datasets: finding the input tables on disk, validating them, filling in defaults (SPEC §1)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import polars as pl

from evalframe._private import schema as S
from evalframe._private.errors import DatasetNotFoundError, UsageError, ValidationError
from evalframe._private.keyed import EXEC, Keyed, key_scores
from evalframe._private.validate import ClampReport, validate_tables


@dataclass(frozen=True)
class Dataset:
    """Validated input tables as lazy frames, with every optional column filled in.

    `executions` is always present (derived from `scores` when the table is absent);
    `outcomes` and `runs` are empty frames of the right schema when absent.
    """

    scores: pl.LazyFrame
    executions: pl.LazyFrame
    outcomes: pl.LazyFrame
    runs: pl.LazyFrame
    keyed: Keyed
    source: str = "<frames>"
    clamped: ClampReport | None = None

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
        )


def load_dataset(path: str | Path, *, clamp: bool = False) -> Dataset:
    """Open a dataset: a folder of `NAME.parquet` files or `NAME/` Parquet folders (hive
    partitions allowed), or a DuckDB database file with tables of those names.

    Only `scores` is required. Raises ValidationError (every problem at once) on bad input;
    with `clamp=True`, out-of-range scores are clamped and NaN/inf become null instead.
    """
    path = Path(path)
    if path.is_dir():
        tables = {name: _scan_folder_table(path, name) for name in S.INPUT_TABLES}
    elif path.is_file():
        tables = _read_duckdb(path)
    else:
        raise DatasetNotFoundError(
            f"dataset {path} does not exist; hint: pass a folder holding scores.parquet "
            "(or a scores/ folder of Parquet files), or a DuckDB database file. "
            "`evalframe demo` writes an example."
        )
    if tables.get(S.SCORES) is None:
        raise DatasetNotFoundError(
            f"dataset {path} has no `scores` table (looked for scores.parquet, scores/*.parquet"
            " or a DuckDB table named scores); hint: `scores` is the one required table, "
            "see docs/tables.md."
        )
    return Dataset.from_frames(**tables, clamp=clamp, source=str(path))


def _scan_folder_table(root: Path, name: str) -> pl.LazyFrame | None:
    single = root / f"{name}.parquet"
    folder = root / name
    if single.is_file():
        return pl.scan_parquet(single)
    if folder.is_dir():
        files = sorted(folder.rglob("*.parquet"))
        if not files:
            return None
        return pl.scan_parquet(folder, hive_partitioning=True)
    return None


def _read_duckdb(path: Path) -> dict[str, pl.LazyFrame | None]:
    import duckdb

    try:
        con = duckdb.connect(str(path), read_only=True)
    except duckdb.Error as exc:
        raise UsageError(
            f"{path} is neither a dataset folder nor a DuckDB database ({exc}); hint: pass "
            "a folder of Parquet tables or a .duckdb file."
        ) from None
    try:
        present = {
            row[0]
            for row in con.execute(
                "select table_name from information_schema.tables where table_schema = 'main'"
            ).fetchall()
        }
        out: dict[str, pl.LazyFrame | None] = {}
        for name in S.INPUT_TABLES:
            if name in present:
                # the name is one of our four constants, never user text
                out[name] = con.sql(f'select * from "{name}"').pl().lazy()
            else:
                out[name] = None
        return out
    finally:
        con.close()
