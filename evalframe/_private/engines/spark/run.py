"""The Spark engine: evalframe's own kernel per partition; summaries by the rule layer.

    scores ─┐  tagged wide frame: one row per input row, the table's columns prefixed
 executions ├─ (`scores__score`, `executions__status`, ...) plus the partition key
   outcomes ┘  (run_id, case_id) cast to string
                 └ repartition(n, run_id, case_id): every row of a case in one partition
                 └ mapInArrow: gather ALL Arrow batches of the partition, split by tag,
                   run `flat_execution_scores` (engines/polars/; flat configs)
                   or the tree path on them, cast to the declared Arrow schema
                   → execution_scores; with `evaluators` (FULL for score --evaluators,
                   NODES for compare) also evaluator_scores, and for a dataset path the
                   partition's input problems, all leaving as one tagged frame
                   (`_tagged`) that `kernel_tables` cuts back into tables
 execution_scores → case_summary, run_summary: rules/attempts.py, rules/runs.py and
                   rules/run_gates.py through narwhals
 `scored_dataset`: a dataset path read by Spark, scored once (persisted), the tables lazy
 (engines/spark/compare.py compares them)

pyspark is imported here at module level: only `evalframe.spark`, the Spark adapters and
`pipeline/` (inside the function that runs `--engine spark`) import this module, never
core evalframe.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TypeVar

import narwhals as nw
import polars as pl
import pyarrow as pa
from pyspark import StorageLevel
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.pandas.types import to_arrow_schema

from evalframe._private import schema as S
from evalframe._private.config import Config
from evalframe._private.engines.spark.kernel import (
    FULL,
    PROBLEM_SCHEMA,
    PROBLEMS,
    VALIDATION_MARKER,
    kernel_tables,
    merged_problems,
    untagged,
)
from evalframe._private.engines.spark.read import (
    listed,
    read_dataset,
    session,
    to_arrow,
    typed_runs,
)
from evalframe._private.errors import SparkValidationError, ValidationError
from evalframe._private.rules import attempts, run_gates
from evalframe._private.rules import runs as rules_runs
from evalframe._private.summaries.case_summary import CASE_COLUMNS
from evalframe._private.summaries.run_summary import RUN_COLUMNS, pass_k_columns

K = TypeVar("K")

PARTITION_NOTE = (
    "\n(Spark checks each partition of whole cases on its own: the counts and examples above"
    " are those of one partition; `evalframe validate DATASET` lists every problem.)"
)


# --- case_summary and run_summary in native Spark ----------------------------------------
_CASE_KEY = [S.CONFIG_ID, S.RUN_ID, S.CASE_ID]


def _case_stats(ex: DataFrame) -> DataFrame:
    """`rules.attempts.case_aggregations`, run natively by Spark through narwhals."""
    return nw.from_native(ex).group_by(*_CASE_KEY).agg(*attempts.case_aggregations(nw)).to_native()


def case_summary(ex: DataFrame, cfg: Config, *, stats: DataFrame | None = None) -> DataFrame:
    """case_summary (docs/scoring.md#cases) from execution_scores: one group-by per (run, case), the
    rules of `rules.attempts` run natively by Spark."""
    st = _case_stats(ex) if stats is None else stats
    policy = (nw.lit(cfg.attempts.score), nw.lit(cfg.attempts.passed))
    return (
        nw.from_native(st)
        .with_columns(*attempts.case_columns(nw, *policy))
        .select(*CASE_COLUMNS)
        .to_native()
    )


def run_summary(
    ex: DataFrame,
    cfg: Config,
    *,
    runs: DataFrame | None = None,
    stats: DataFrame | None = None,
) -> DataFrame:
    """run_summary (docs/scoring.md#runs) from execution_scores: the rules of `rules/runs.py` and
    `rules/run_gates.py` run natively by Spark through narwhals (exact percentiles:
    Spark's `percentile`, linear interpolation like polars'); the runs table's rows and
    columns joined as the local engine does."""
    keys = [S.CONFIG_ID, S.RUN_ID]
    base = (
        nw.from_native(ex)
        .group_by(*keys)
        .agg(*rules_runs.execution_aggregations(nw), *rules_runs.cost_aggregations(nw))
        .to_native()
    )
    st = _case_stats(ex) if stats is None else stats
    per_case = (
        nw.from_native(st)
        .select(*keys, *rules_runs.per_case_columns(nw))
        .with_columns(*rules_runs.case_level_terms(nw, keys, nw.lit(cfg.attempts.passed)))
    )
    ks = list(cfg.attempts.k)
    levels = (
        per_case.group_by(*keys)
        .agg(*rules_runs.case_level_aggregations(nw), *rules_runs.pass_k_aggregations(nw, ks))
        .to_native()
    )
    summary = _with_runs_table(base.join(levels, on=keys, how="left"), runs, cfg)
    limits = {key: getattr(cfg.run_gates, key) for key in run_gates.GATES}
    frame = nw.from_native(summary).with_columns(
        nw.lit(v, dtype=nw.Float64).alias(key) for key, v in limits.items()
    )
    for step in run_gates.pass_rate_lower(nw):
        frame = frame.with_columns(*step)
    summary = (
        frame.drop(run_gates.N_EFF)
        .with_columns(*run_gates.gate_columns(nw, *(nw.col(key) for key in limits)))
        .with_columns(run_gates.run_passed(nw))
        .to_native()
        .withColumn(S.RUN_GATE_FAILURES, listed(run_gates.failed_gates(F)))
    )
    head = [*RUN_COLUMNS]
    pk = pass_k_columns(ks)
    extra = [c for c in summary.columns if c not in head and c not in pk]
    order = [S.CONFIG_ID, S.RUN_ID]
    if S.CREATED_AT in summary.columns:
        order = [S.CONFIG_ID, S.CREATED_AT, S.RUN_ID]
    # one row per run: sorted in one partition (a global orderBy would first run a job
    # sampling the rows for its range partitioner)
    return (
        summary.select(*head, *pk, *extra)
        .repartition(1)
        .sortWithinPartitions(*(F.col(c).asc_nulls_last() for c in order))
    )


def _with_runs_table(summary: DataFrame, runs: DataFrame | None, cfg: Config) -> DataFrame:
    """Zero rows for the runs without executions and the runs table's columns, as the
    local engine adds them (null columns without a runs table)."""
    if runs is None:
        for col, (dtype, _required, _default) in S.RUNS_COLUMNS.items():
            if col != S.RUN_ID:
                kind = "timestamp_ntz" if isinstance(dtype, pl.Datetime) else "string"
                name = f"run_{S.CONFIG}" if col == S.CONFIG else col
                summary = summary.withColumn(name, F.lit(None).cast(kind))
        return summary
    runs = typed_runs(runs)
    empty = (
        runs.select(F.col(S.RUN_ID).cast("string").alias(S.RUN_ID))
        .distinct()
        .join(summary.select(S.RUN_ID), on=S.RUN_ID, how="left_anti")
        .select(
            F.lit(cfg.config_id).alias(S.CONFIG_ID),
            S.RUN_ID,
            *(F.lit(0).cast("long").alias(c) for c in S.COUNT_COLUMNS),
        )
    )
    meta = runs.withColumn(S.RUN_ID, F.col(S.RUN_ID).cast("string"))
    if S.CONFIG in meta.columns:
        meta = meta.withColumnRenamed(S.CONFIG, f"run_{S.CONFIG}")
    summary = summary.unionByName(empty, allowMissingColumns=True)
    return summary.join(meta, on=S.RUN_ID, how="left")


def score_tables(
    scores_df: DataFrame,
    config: Config | None = None,
    executions_df: DataFrame | None = None,
    outcomes_df: DataFrame | None = None,
    runs_df: DataFrame | None = None,
    *,
    partitions: int | None = None,
    clamp: bool = False,
    evaluators: bool = False,
) -> dict[str, DataFrame]:
    """execution_scores, case_summary and run_summary of Spark input tables, as lazy Spark
    DataFrames (nothing runs until an action); `evaluators=True` adds evaluator_scores
    (one row per execution × tree node, root included as path "", from the same
    partition pass). `partitions` is the number of hash partitions of (run_id, case_id)
    the kernel runs on (default spark.sql.shuffle.partitions). The tables share one
    scoring: `.persist()` execution_scores (with `evaluators=True`: write or persist the
    tables, or use `collect_tables`) when you read more than one, or each action
    rescores."""
    _scored, tables = _score_tables(
        scores_df,
        config if config is not None else Config(),
        executions_df,
        outcomes_df,
        runs_df,
        partitions=partitions,
        clamp=clamp,
        evaluators=FULL if evaluators else None,
    )
    return tables


def _score_tables(
    scores_df: DataFrame,
    cfg: Config,
    executions_df: DataFrame | None,
    outcomes_df: DataFrame | None,
    runs_df: DataFrame | None,
    *,
    partitions: int | None,
    clamp: bool,
    evaluators: str | None,
    problems: bool = False,
) -> tuple[DataFrame, dict[str, DataFrame]]:
    """(the kernel's mapInArrow frame, the score tables derived from it)."""
    scored, tables = kernel_tables(
        scores_df,
        cfg,
        executions_df,
        outcomes_df,
        partitions=partitions,
        clamp=clamp,
        evaluators=evaluators,
        problems=problems,
    )
    ex = tables[S.EXECUTION_SCORES]
    stats = _case_stats(ex)
    tables[S.CASE_SUMMARY] = case_summary(ex, cfg, stats=stats)
    tables[S.RUN_SUMMARY] = run_summary(ex, cfg, runs=runs_df, stats=stats)
    if S.EVALUATOR_SCORES in tables:  # after the three, as the local engine orders them
        tables[S.EVALUATOR_SCORES] = tables.pop(S.EVALUATOR_SCORES)
    return scored, tables


def collect_tables(tables: Mapping[K, DataFrame]) -> dict[K, pl.DataFrame]:
    """Run several lazy Spark tables in ONE job and bring them to the driver as polars
    DataFrames (row order kept). The tables of `score_tables` / `compare` share their
    scoring and case statistics: in one query plan Spark computes those shared stages once
    (exchange reuse) instead of once per action, with no `.cache()`."""
    names = list(tables)
    if not names:
        return {}
    slots = [f"_ef_t{i}" for i in range(len(names))]
    parts = []
    for name, slot in zip(names, slots, strict=True):
        df = tables[name]
        # every field nullable: in the union a table's struct is null on the other rows
        loose = T.StructType([T.StructField(f.name, f.dataType, True) for f in df.schema])
        packed = F.struct(*(F.col(f"`{c}`") for c in df.columns)).cast(loose)
        parts.append(df.select(packed.alias(slot)))
    union = parts[0]
    for part in parts[1:]:
        union = union.unionByName(part, allowMissingColumns=True)
    try:
        arrow = to_arrow(union)
    except Exception as e:
        message = validation_message(e)
        if message is None:
            raise
        raise SparkValidationError(message + PARTITION_NOTE) from None
    out: dict[K, pl.DataFrame] = {}
    for name, slot in zip(names, slots, strict=True):
        column = arrow.column(slot)
        rows = column.filter(column.is_valid()).combine_chunks()
        fields = [tables[name].schema[c].name for c in tables[name].columns]
        flat = pa.Table.from_arrays(rows.flatten(), names=fields) if len(rows) else None
        if flat is None:
            empty = to_arrow_schema(tables[name].schema).empty_table()
            flat = empty
        frame = pl.from_arrow(flat)
        assert isinstance(frame, pl.DataFrame)
        out[name] = frame
    return out


@contextmanager
def scored_dataset(
    dataset: str | os.PathLike[str],
    config: Config,
    *,
    clamp: bool = False,
    remote: str | None = None,
    partitions: int | None = None,
    evaluators: str | None = None,
) -> Iterator[dict[str, DataFrame]]:
    """The score tables of a dataset path on Spark (a local[2] session, the active one,
    or Spark Connect at `remote`) as lazy Spark DataFrames over ONE kernel pass,
    persisted and checked before the body runs (every partition's input problems, merged:
    a ValidationError as the local engine's), unpersisted after it."""
    inputs = read_dataset(session(remote), dataset)
    scored, tables = _score_tables(
        inputs[S.SCORES],
        config,
        inputs.get(S.EXECUTIONS),
        inputs.get(S.OUTCOMES),
        inputs.get(S.RUNS),
        partitions=partitions,
        clamp=clamp,
        evaluators=evaluators,
        problems=True,
    )
    # the kernel runs once: without the cache each table's branch would rescore
    scored = scored.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        found = pl.from_arrow(to_arrow(untagged(scored, PROBLEMS, list(PROBLEM_SCHEMA))))
        assert isinstance(found, pl.DataFrame)
        if found.height:
            raise ValidationError(merged_problems(found))
        yield tables
    finally:
        scored.unpersist()


def score_dataset(
    dataset: str | os.PathLike[str],
    config: Config,
    *,
    clamp: bool = False,
    remote: str | None = None,
    partitions: int | None = None,
    evaluators: bool = False,
) -> dict[str, pl.DataFrame]:
    """execution_scores, case_summary and run_summary (and evaluator_scores with
    `evaluators=True`) of a dataset path scored on Spark, collected in one Spark job as
    polars DataFrames (for the results store); see `scored_dataset`."""
    with scored_dataset(
        dataset,
        config,
        clamp=clamp,
        remote=remote,
        partitions=partitions,
        evaluators=FULL if evaluators else None,
    ) as tables:
        return collect_tables(tables)


def validation_message(error: BaseException) -> str | None:
    """The evalframe input problems inside a Spark job failure, or None."""
    text = str(error)
    at = text.find(VALIDATION_MARKER)
    if at < 0:
        return None
    body = text[at + len(VALIDATION_MARKER) :].strip()
    # the Python traceback Spark appends follows the message
    return body.split("\n\n\tat ")[0].split("\nJVM stacktrace")[0].strip()
