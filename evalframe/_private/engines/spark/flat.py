"""The Spark engine's flat pass in Spark SQL: the DuckDB engine's own SQL, transpiled.

    scores ─ typed temp view ─┐
    evaluator_policy (config) ├─ execution_partials (sql/execution_partials.sql,
                              │  transpiled by engines/spark/sql.py: one group-by of the
                              │  judge rows per execution key, fixed-point sums as
                              │  DECIMAL(38, 0), the value-check counts) → persisted
    executions, outcomes ─────┴─ execution_scores_of (sql/execution_scores_of.sql and its
                                 scalar macros, transpiled) → execution_scores

No Python runs on a judge row: Spark scans, groups and scores. The input checks come out
of the same pass (the folded counts of the partials) plus one count query per other
table, with data/validate.py's checks (their SQL transpiled) and messages; example keys
are fetched only for a check whose count is not zero (`flat_problems`).

What this pass does not run — composite trees (`scoring.flat.is_flat` false),
`--evaluators` / compare's evaluator nodes, more than 62 distinct evaluators without an
evaluator list — runs the polars kernel per partition instead (engines/spark/kernel.py),
chosen up front by `uses_sql_pass` / after the pass by `ev_max` (capabilities.py:
SPARK_SQL_PASS), never silently.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import polars as pl
from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from evalframe._private import schema as S
from evalframe._private.config import Config
from evalframe._private.data.validate import (
    FILLS,
    MAX_EXAMPLES,
    SCORE_VALUE_CHECKS,
    ClampReport,
    null_key_checks,
    value_checks,
)
from evalframe._private.engines.duckdb.sql import scoring_params
from evalframe._private.engines.spark.read import polars_empty
from evalframe._private.engines.spark.sql import spark_scoring_query, spark_sql_condition
from evalframe._private.errors import Problem, ValidationError
from evalframe._private.scoring.flat import is_flat

PREFIX = "evalframe_spark_"
"""Temp views of this pass are named PREFIX + the table the SQL reads (scores,
executions, outcomes, evaluator_policy, partials): a user's views are left alone."""
PARTIALS = "partials"
MAX_MASK_EVALUATORS = 63
"""Evaluator ids the per-execution bitmask holds (ev_max below this: the masks are
complete)."""


def uses_sql_pass(config: Config, evaluators: str | None) -> bool:
    """Whether a config runs on the Spark SQL pass (else: the per-partition kernel)."""
    return evaluators is None and is_flat(config)


def _spark_type(dtype: pl.DataType) -> str:
    if isinstance(dtype, pl.Datetime):
        return "timestamp_ntz"
    if isinstance(dtype, pl.List):
        return "array<string>"
    return {pl.String: "string", pl.Float64: "double", pl.Int64: "bigint", pl.Boolean: "boolean"}[
        type(dtype)
    ]


def _typed(name: str, df: DataFrame | None, spark: SparkSession) -> DataFrame:
    """The typed table (validate.typed_frame's columns and order): declared columns cast
    in their position, FILLS filled, absent declared columns appended as their default;
    no input: an empty table of the declared columns."""
    declared = S.TABLE_COLUMNS[name]
    if df is None:
        fields = ", ".join(f"`{c}` {_spark_type(d)}" for c, (d, _r, _x) in declared.items())
        return spark.createDataFrame([], fields)
    cols = []
    for col in df.columns:
        ref = F.col(f"`{col}`")
        if col in declared:
            ref = ref.cast(_spark_type(declared[col][0]))
            if col in FILLS:
                ref = F.coalesce(ref, F.lit(FILLS[col]).cast(_spark_type(declared[col][0])))
        cols.append(ref.alias(col))
    for col, (dtype, _r, _x) in declared.items():
        if col not in df.columns:
            value = F.lit(FILLS.get(col)).cast(_spark_type(dtype))
            cols.append(value.alias(col))
    return df.select(*cols)


def _view(name: str) -> str:
    return PREFIX + name


def _key_text(keys: tuple[str, ...]) -> F.Column:
    """'run_id=r case_id=c attempt=0' (null as ∅), as validate._key_text."""
    parts: list[F.Column] = []
    for i, k in enumerate(keys):
        parts.append(F.lit(f"{'' if i == 0 else ' '}{k}="))
        parts.append(F.coalesce(F.col(k).cast("string"), F.lit("∅")))
    return F.concat(*parts)


def _examples(rows: DataFrame, keys: tuple[str, ...]) -> tuple[str, ...]:
    got = rows.select(_key_text(keys).alias("_k")).orderBy("_k").limit(MAX_EXAMPLES).collect()
    return tuple(str(r[0]) for r in got)


def _check_problems(typed: DataFrame, table: str, checks: list, counts: list[int]) -> list[Problem]:
    out = []
    for check, n in zip(checks, counts, strict=True):
        if n:
            rows = typed.where(F.expr(spark_sql_condition(check.sql)))
            ex = _examples(rows, S.TABLE_KEYS[table])
            out.append(Problem(table, check.column, check.message, int(n), ex))
    return out


def _table_problems(typed: Mapping[str, DataFrame], raw: Mapping[str, DataFrame]) -> list:
    """The checks the pass does not fold in: every table's validate.value_checks (scores:
    the always-run ones), one count query per table; duplicate keys of executions,
    outcomes and runs; outcomes of unknown executions (as DuckDB's table_problems)."""
    problems: list[Problem] = []
    for table in S.TABLE_COLUMNS:
        if table not in raw or table not in typed:
            continue
        schema = polars_empty(raw[table].schema).schema
        checks = value_checks(table, schema, score_values=False)
        checks = [c for c in checks if not set(c.sql.split()) & {"evalframe_raw_created_at"}]
        if not checks:
            continue
        sums = [F.count_if(F.expr(spark_sql_condition(c.sql))) for c in checks]
        counts = list(typed[table].agg(*sums).collect()[0])
        problems += _check_problems(typed[table], table, checks, counts)
    for table in (S.EXECUTIONS, S.OUTCOMES):
        if table not in raw:
            continue
        keys = list(S.TABLE_KEYS[table])
        dups = typed[table].groupBy(*keys).count().where(F.col("count") > 1)
        n = dups.count()
        if n:
            ex = _examples(dups, S.TABLE_KEYS[table])
            problems.append(Problem(table, ", ".join(keys), "duplicate key (keys listed)", n, ex))
    if S.OUTCOMES in raw:
        parent = S.EXECUTIONS if S.EXECUTIONS in raw else S.SCORES
        keys = list(S.EXECUTION_KEY)
        known = typed[S.EXECUTIONS].select(*keys)
        orphans = typed[S.OUTCOMES].select(*keys).distinct().join(known, keys, "left_anti")
        n = orphans.count()
        if n:
            ex = _examples(orphans, S.EXECUTION_KEY)
            problems.append(
                Problem(S.OUTCOMES, "", f"execution is not in the {parent} table", n, ex)
            )
    return problems


def _score_problems(
    partials: DataFrame, scores: DataFrame, *, clamp: bool
) -> tuple[list[Problem], ClampReport | None, int]:
    """The null keys and SCORE_VALUE_CHECKS of scores from the counts the pass folded in
    (as DuckDB's score_problems); also the largest evaluator id."""
    checks = [
        c for c in (*null_key_checks(S.SCORES), *SCORE_VALUE_CHECKS) if not (clamp and c.clamped)
    ]
    folded = {
        f"null_{S.RUN_ID}": F.sum(F.when(F.col(S.RUN_ID).isNull(), F.col("n_all"))),
        f"null_{S.CASE_ID}": F.sum(F.when(F.col(S.CASE_ID).isNull(), F.col("n_all"))),
        **{
            c.fold: F.sum(c.fold)
            for c in (*null_key_checks(S.SCORES), *SCORE_VALUE_CHECKS)
            if c.fold and c.fold.startswith(("bad_", "null_eval"))
        },
    }
    row = partials.agg(
        *(F.coalesce(folded[c.fold], F.lit(0)) for c in checks),
        F.coalesce(F.sum("n_clamped"), F.lit(0)),
        F.coalesce(F.sum("n_nulled"), F.lit(0)),
        F.coalesce(F.max("ev_max"), F.lit(-1)),
    ).collect()[0]
    *counts, n_clamped, n_nulled, ev_max = list(row)
    problems = _check_problems(scores, S.SCORES, checks, [int(n) for n in counts])
    report = ClampReport(clamped=int(n_clamped), nulled=int(n_nulled)) if clamp else None
    return problems, report, int(ev_max)


def _key_problems(
    partials: DataFrame, scores: DataFrame, executions: DataFrame | None, wide: bool
) -> list[Problem]:
    """Score rows of unknown executions, then duplicate (execution, evaluator) keys (as
    DuckDB's key_problems)."""
    problems: list[Problem] = []
    keys = list(S.EXECUTION_KEY)
    known = partials.where(F.col(S.RUN_ID).isNotNull() & F.col(S.CASE_ID).isNotNull())
    if executions is not None:
        orphan = known.join(executions.select(*keys), keys, "left_anti")
        row = orphan.agg(F.count(F.lit(1)), F.sum("n_all")).collect()[0]
        if row[0]:
            ex = _examples(orphan, S.EXECUTION_KEY)
            problems.append(
                Problem(S.SCORES, "", "execution is not in the executions table", int(row[1]), ex)
            )
    suspects = known
    if not wide:
        suspects = known.where(F.bit_count("mask") != F.col("n_all") - F.col("null_eval"))
    suspects = suspects.select(*keys)
    if suspects.limit(1).count():
        dups = (
            scores.join(suspects, keys, "left_semi")
            .groupBy(*S.SCORE_KEY)
            .count()
            .where(F.col("count") > 1)
        )
        n = dups.count()
        if n:
            ex = _examples(dups, S.SCORE_KEY)
            problems.append(
                Problem(S.SCORES, ", ".join(S.SCORE_KEY), "duplicate key (keys listed)", n, ex)
            )
    return problems


def _policy(spark: SparkSession, config: Config) -> DataFrame:
    rows = [
        (name, e.weight, e.required, e.min_score, e.higher_is_better)
        for name, e in (config.evaluators or {}).items()
    ]
    schema = T.StructType(
        [
            T.StructField("evaluator", T.StringType()),
            T.StructField("weight", T.DoubleType()),
            T.StructField("required", T.BooleanType()),
            T.StructField("min_score", T.DoubleType()),
            T.StructField("higher_is_better", T.BooleanType()),
        ]
    )
    return spark.createDataFrame(rows, schema)


class WideEvaluators(Exception):
    """More than 62 distinct evaluators without a list: the bitmask does not hold them
    (the caller runs the per-partition kernel)."""


@contextmanager
def sql_execution_scores(
    inputs: Mapping[str, DataFrame], config: Config, *, clamp: bool = False
) -> Iterator[tuple[DataFrame, ClampReport | None]]:
    """(execution_scores as a lazy Spark DataFrame over the persisted partials, the clamp
    report) of the input tables (scores, and executions / outcomes when given), by the
    transpiled SQL pass. The partials are computed and checked on entry — a
    ValidationError lists every input problem — and unpersisted on exit. Raises
    WideEvaluators for more than 62 unlisted evaluators."""
    scores_raw = inputs[S.SCORES]
    spark = scores_raw.sparkSession
    typed = {
        name: _typed(name, inputs.get(name), spark) for name in (S.SCORES, S.EXECUTIONS, S.OUTCOMES)
    }
    if S.RUNS in inputs and dict(inputs[S.RUNS].dtypes).get(S.CREATED_AT) != "string":
        # created_at as text: read (and refused when not ISO 8601) by typed_runs in
        # run_summary, the local rule; a cast here would fail the query instead
        typed[S.RUNS] = _typed(S.RUNS, inputs[S.RUNS], spark)
    for name in (S.SCORES, S.OUTCOMES):
        typed[name].createOrReplaceTempView(_view(name))
    _policy(spark, config).createOrReplaceTempView(_view("evaluator_policy"))
    tables = {n: _view(n) for n in ("scores", "executions", "outcomes", "evaluator_policy")}
    tables[PARTIALS] = _view(PARTIALS)
    params: dict[str, Any] = {
        "configured": config.evaluators is not None,
        "required_children": list(config.required_children),
        "clamp": clamp,
        "keep_threshold_scores": config.aggregator == "threshold",
        "keep_leaf_scores": False,
        "on_missing": config.on_missing,
        "any_required": any(e.required for e in (config.evaluators or {}).values()),
    }
    query = spark_scoring_query("execution_partials", tables=tables, **params)
    partials = spark.sql(query).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        partials.createOrReplaceTempView(_view(PARTIALS))
        problems, report, ev_max = _score_problems(partials, typed[S.SCORES], clamp=clamp)
        given_ex = S.EXECUTIONS in inputs
        if given_ex:
            executions = typed[S.EXECUTIONS]
        else:  # the execution keys the pass found
            keys = set(S.EXECUTION_KEY)
            executions = partials.where(
                F.col(S.RUN_ID).isNotNull() & F.col(S.CASE_ID).isNotNull()
            ).select(
                *(
                    F.col(c) if c in keys else F.lit(FILLS.get(c)).cast(_spark_type(d)).alias(c)
                    for c, (d, _r, _x) in S.EXECUTIONS_COLUMNS.items()
                )
            )
        executions.createOrReplaceTempView(_view(S.EXECUTIONS))
        typed[S.EXECUTIONS] = executions
        raw = {n: df for n, df in inputs.items() if df is not None}
        problems += _table_problems(typed, raw)
        wide = ev_max >= MAX_MASK_EVALUATORS
        problems += _key_problems(partials, typed[S.SCORES], executions if given_ex else None, wide)
        if problems:
            raise ValidationError(problems)
        if wide and config.evaluators is None:
            raise WideEvaluators()
        extra = [c for c in executions.columns if c not in S.EXECUTIONS_COLUMNS]
        scoring = {"partials_source": _view(PARTIALS), **scoring_params(config)}
        ex_query = spark_scoring_query(
            "execution_scores_of",
            tables=tables,
            columns_of=lambda t: spark.table(t).columns,
            extra_columns=extra,
            **scoring,
        )
        # persisted: case_summary and run_summary read it several times (case stats,
        # run aggregates), each of which would otherwise rerun the scoring joins
        scored = spark.sql(ex_query).persist(StorageLevel.MEMORY_AND_DISK)
        try:
            yield scored, report
        finally:
            scored.unpersist()
    finally:
        partials.unpersist()
