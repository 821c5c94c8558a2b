"""The Spark engine's reader: the session, the Arrow schemas between polars and Spark,
and a dataset path read as Spark DataFrames (`read_dataset`, `typed_runs`).

pyspark is imported here at module level: only `evalframe.spark`, the Spark adapters and
`pipeline/` (inside the function that runs `--engine spark`) import this module, never
core evalframe.
"""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

import polars as pl
import pyarrow as pa
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema

from evalframe._private import schema as S
from evalframe._private.data.dataset import open_tables, table_files
from evalframe._private.data.validate import parse_time_text
from evalframe._private.errors import SparkValidationError


# --- the session --------------------------------------------------------------------------
def use_current_python() -> None:
    """Python workers start `python3` on PATH unless PYSPARK_PYTHON names an interpreter:
    point it at this one (local mode), so workers see the same evalframe and polars."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)


LOCAL_SHUFFLE_PARTITIONS = 8
"""Hash partitions of a local session's shuffles (Spark's default, 200, is a cluster's:
on local[2] each of the validation queries' and the pass's shuffles would run 200 tiny
tasks)."""


def session(remote: str | None = None, master: str = "local[2]") -> SparkSession:
    """The active SparkSession, or a new one: Spark Connect at `remote` (sc://HOST:PORT),
    else a local one on `master`."""
    use_current_python()
    builder = SparkSession.builder
    if remote:
        return builder.remote(remote).getOrCreate()
    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    return (
        builder.master(master)
        .appName("evalframe")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", str(LOCAL_SHUFFLE_PARTITIONS))
        .getOrCreate()
    )


# --- Arrow schemas ------------------------------------------------------------------------
def _narrow(t: pa.DataType) -> pa.DataType:
    """polars emits large_string / large_list; Spark's Arrow reader wants the 32-bit kinds."""
    if pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return pa.string()
    if pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        return pa.binary()
    if pa.types.is_large_list(t) or pa.types.is_list_view(t) or pa.types.is_list(t):
        return pa.list_(_narrow(t.value_type))
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, _narrow(f.type)) for f in t])
    if pa.types.is_dictionary(t):
        return _narrow(t.value_type)
    return t


def spark_struct_of(frame: pl.DataFrame) -> T.StructType:
    arrow = frame.head(0).to_arrow().schema
    return from_arrow_schema(pa.schema([pa.field(f.name, _narrow(f.type)) for f in arrow]))


def polars_empty(schema: T.StructType) -> pl.DataFrame:
    return pl.from_arrow(to_arrow_schema(schema).empty_table())  # type: ignore[return-value]


def to_arrow(df: DataFrame) -> pa.Table:
    """`df.toArrow()` (pyspark >= 4), or the same through pyspark 3.5's Arrow collect."""
    with warnings.catch_warnings():  # pyspark warns about pandas 3; Arrow needs none
        warnings.simplefilter("ignore", FutureWarning)
        if hasattr(df, "toArrow"):
            return df.toArrow()
        # pyspark 3.5's private method; pyspark 4's stubs type any unknown attribute as a Column
        batches = df._collect_as_arrow()  # type: ignore[operator, unused-ignore]  # pragma: no cover
        schema = to_arrow_schema(df.schema)  # pragma: no cover
        return pa.Table.from_batches(batches, schema=schema)  # pragma: no cover


def typed_runs(runs: DataFrame) -> DataFrame:
    """The runs table with its declared columns (created_at as a timestamp; absent
    optional columns as nulls), as the local engine types it. created_at given as text is
    read by the local engine's one rule (`validate.parse_time_text`: ISO 8601, offsets to
    UTC) — the runs table has a row per run, so its distinct texts are parsed on the
    driver and joined back; text that is not ISO 8601 is a SparkValidationError."""
    out = runs
    for col, (dtype, _required, _default) in S.RUNS_COLUMNS.items():
        # naive timestamps (timestamp_ntz), as the local engine's Datetime("us")
        kind = "timestamp_ntz" if isinstance(dtype, pl.Datetime) else "string"
        if col not in out.columns:
            out = out.withColumn(col, F.lit(None).cast(kind))
        elif kind == "timestamp_ntz" and dict(out.dtypes)[col] == "string":
            out = _parsed_times(out, col)
        else:
            out = out.withColumn(col, F.col(col).cast(kind))
    return out


def _parsed_times(runs: DataFrame, col: str) -> DataFrame:
    texts = pl.from_arrow(to_arrow(runs.select(col).distinct().where(F.col(col).isNotNull())))
    assert isinstance(texts, pl.DataFrame)
    parsed = texts.with_columns(parse_time_text(pl.col(col)).alias("_t"))
    bad = parsed.filter(pl.col("_t").is_null())[col].to_list()
    if bad:
        shown = ", ".join(repr(t) for t in sorted(bad)[:5])
        raise SparkValidationError(
            f"1 problem(s) in the input tables:\n  - runs.created_at: created_at is not a "
            f"timestamp ({len(bad)} distinct values), e.g. {shown}; hint: write ISO 8601 "
            "(2026-01-02T03:04:05, optionally with Z or +02:00)."
        )
    canonical = parsed.select(
        pl.col(col).alias("_text"), pl.col("_t").dt.strftime("%Y-%m-%d %H:%M:%S%.6f").alias("_t")
    )
    lookup = runs.sparkSession.createDataFrame(canonical.rows(), "_text string, _t string")
    return (
        runs.join(F.broadcast(lookup), runs[col] == lookup["_text"], "left")
        .withColumn(col, F.to_timestamp_ntz(F.col("_t")))
        .drop("_text", "_t")
    )


# --- a dataset on disk: what `evalframe score --engine spark` runs -------------------------
def _is_local(spark: SparkSession) -> bool:
    """A classic session whose executors read this machine's files (local master)."""
    try:
        return str(spark.sparkContext.master).startswith("local")
    except Exception:  # Spark Connect: no SparkContext on the client
        return False


def narrow_table(table: pa.Table) -> pa.Table:
    """`table` with the 32-bit Arrow kinds Spark's reader wants (`_narrow`)."""
    schema = pa.schema([pa.field(f.name, _narrow(f.type)) for f in table.schema])
    return table.cast(schema)


def read_dataset(spark: SparkSession, dataset: str | os.PathLike[str]) -> dict[str, DataFrame]:
    """The input tables of a dataset path as Spark DataFrames. A local session reads the
    Parquet files itself (nothing passes through the driver); a remote one (Spark Connect,
    which cannot see this machine's files) and DuckDB database files get the rows from
    evalframe's own reader, sent as Arrow."""
    root = Path(dataset)
    lazy = open_tables(root)  # evalframe's checks of the files (missing, unreadable, schemas)
    out: dict[str, DataFrame] = {}
    for name, frame in lazy.items():
        if frame is None:
            continue
        files, is_folder = table_files(root, name) if root.is_dir() else ([], False)
        if files and _is_local(spark):
            if is_folder:  # hive keys stay strings, as evalframe's own reader keeps them
                key = "spark.sql.sources.partitionColumnTypeInference.enabled"
                before = spark.conf.get(key)
                spark.conf.set(key, "false")
                try:
                    out[name] = spark.read.option("basePath", str(root / name)).parquet(
                        *(str(f) for f in files)
                    )
                finally:
                    if before is None:
                        spark.conf.unset(key)
                    else:
                        spark.conf.set(key, before)
            else:
                out[name] = spark.read.parquet(str(files[0]))
        else:
            out[name] = spark.createDataFrame(narrow_table(frame.collect().to_arrow()))
    return out


def listed(flags: dict[str, Column]) -> Column:
    """The names whose flag is true, in order (a list column: run_deltas.reasons,
    run_summary.run_gate_failures)."""
    return F.filter(
        F.array(*(F.when(flag, F.lit(name)) for name, flag in flags.items())),
        lambda x: x.isNotNull(),
    )
