"""The Spark engine's kernel: evalframe's own kernel (engines/polars/kernel.py
`flat_execution_scores`, or the tree path) per partition of whole cases, through
mapInArrow (see engines/spark/__init__.py for the shape of the work).
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, TypeVar

import polars as pl
import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import to_arrow_schema

from evalframe._private import schema as S
from evalframe._private.config import Config, Evaluator
from evalframe._private.data.dataset import Dataset
from evalframe._private.data.validate import MAX_EXAMPLES
from evalframe._private.engines.polars.kernel import flat_execution_scores
from evalframe._private.engines.spark.read import polars_empty, spark_struct_of, use_current_python
from evalframe._private.errors import Problem, UsageError, ValidationError
from evalframe._private.scoring.execution_scores import evaluator_scores as polars_evaluator_scores
from evalframe._private.scoring.execution_scores import execution_scores as polars_execution_scores
from evalframe._private.scoring.flat import is_flat

K = TypeVar("K")
TAG = "_ef_table"
K_RUN = "_ef_run"
K_CASE = "_ef_case"
EVALSET = "_ef_evalset"
SEP = "\x1f"
KERNEL_TABLES = (S.SCORES, S.EXECUTIONS, S.OUTCOMES)
VALIDATION_MARKER = "evalframe input error:"
"""Prefix of the message a worker raises when its partition fails validation."""
PROBLEMS = "_problems"
"""The tagged output's table of input problems (`problems=True`): one row per problem
of a partition, merged over the partitions by `merged_problems`."""
PROBLEM_SCHEMA = pl.Schema(
    {
        "table": pl.String(),
        "column": pl.String(),
        "message": pl.String(),
        "count": pl.Int64(),
        "examples": pl.List(pl.String),
        "order": pl.Int64(),
    }
)


# --- the kernel, on one partition --------------------------------------------------------
NODES = "nodes"
"""`evaluators=` value: evaluator_scores without label, reason and extra score columns
(what compare reads), as `evaluator_scores(..., passthrough=False)`."""
FULL = "full"
"""`evaluators=` value: evaluator_scores as `score --evaluators` writes it."""


def _score_frames(
    frames: dict[str, pl.DataFrame | None], cfg: Config, clamp: bool, evaluators: str | None
) -> dict[str, pl.DataFrame]:
    """evalframe's own scoring of in-memory input tables: execution_scores by the
    aggregate-first pass for flat configs, the tree path otherwise (or beyond 62
    evaluators); with `evaluators` (FULL or NODES) also evaluator_scores, by the tree path
    (the polars engine's `evaluator_scores`)."""
    ex: pl.DataFrame | None = None
    if is_flat(cfg):
        lazy = {k: (v.lazy() if v is not None else None) for k, v in frames.items()}
        result = flat_execution_scores({**lazy, S.RUNS: None}, cfg, clamp=clamp)
        if result is not None:
            ex = result[0]
    if ex is not None and evaluators is None:
        return {S.EXECUTION_SCORES: ex}
    ds = Dataset.from_frames(
        frames[S.SCORES],  # type: ignore[arg-type]
        frames.get(S.EXECUTIONS),
        frames.get(S.OUTCOMES),
        None,
        clamp=clamp,
    )
    out = {S.EXECUTION_SCORES: polars_execution_scores(ds, cfg).collect() if ex is None else ex}
    if evaluators is not None:
        nodes = polars_evaluator_scores(ds, cfg, passthrough=evaluators == FULL)
        out[S.EVALUATOR_SCORES] = nodes.collect()
    return out


def _listing(cfg: Config, names: list[str]) -> Config:
    """`cfg` with its evaluators listed explicitly: for a config without a list, a run's
    expected evaluators are those seen anywhere in the run (docs/scoring.md#missing-evaluators),
    which one partition does not see; listing the run's set reproduces the rule exactly."""
    return cfg.model_copy(update={"evaluators": {n: Evaluator() for n in names}})


def score_partition(
    frames: dict[str, pl.DataFrame | None],
    cfg: Config,
    *,
    clamp: bool = False,
    evaluators: str | None = None,
) -> dict[str, pl.DataFrame]:
    """execution_scores (and evaluator_scores with `evaluators`) of the rows of one
    partition (whole cases). Without an evaluator list, runs are scored in groups sharing
    one evaluator set (`EVALSET` on the score rows): one kernel call per distinct set,
    never per case."""
    scores = frames[S.SCORES]
    assert scores is not None
    if cfg.evaluators is not None or EVALSET not in scores.columns:
        return _score_frames(frames, cfg, clamp, evaluators)
    sets = scores.select(S.RUN_ID, EVALSET).unique(S.RUN_ID).sort(S.RUN_ID)
    groups = sets.group_by(EVALSET, maintain_order=True).agg(pl.col(S.RUN_ID))
    pieces: list[dict[str, pl.DataFrame]] = []
    problems: list[Problem] = []
    listed_runs: list[Any] = []
    for evalset, runs in groups.iter_rows():  # one per distinct evaluator set
        listed_runs += runs
        part = {
            name: (f.filter(pl.col(S.RUN_ID).is_in(runs)) if f is not None else None)
            for name, f in frames.items()
        }
        part[S.SCORES] = part[S.SCORES].drop(EVALSET)  # type: ignore[union-attr]
        names = [] if evalset is None else evalset.split(SEP)
        sub = _listing(cfg, names) if names else cfg
        try:
            pieces.append(_score_frames(part, sub, clamp, evaluators))
        except ValidationError as e:
            problems += e.problems
    rest = {
        name: (f.filter(~pl.col(S.RUN_ID).is_in(listed_runs)) if f is not None else None)
        for name, f in frames.items()
    }
    rest[S.SCORES] = rest[S.SCORES].drop(EVALSET)  # type: ignore[union-attr]
    if any(f is not None and f.height for f in rest.values()) or not pieces:
        try:
            pieces.append(_score_frames(rest, cfg, clamp, evaluators))  # runs without scores
        except ValidationError as e:
            problems += e.problems
    if problems:
        raise ValidationError(merged_problems(problem_frame(problems)))
    out = {}
    for name in pieces[0]:
        # a piece without evaluators has no node rows (and an all-text empty schema)
        parts = [p[name] for p in pieces if p[name].height] or [pieces[0][name]]
        out[name] = pl.concat(parts, how="vertical_relaxed").with_columns(
            pl.lit(cfg.config_id, dtype=pl.String).alias(S.CONFIG_ID)
        )
    return out


def problem_frame(problems: Sequence[Problem]) -> pl.DataFrame:
    rows = [
        (p.table, p.column, p.message, p.count, list(p.examples), i) for i, p in enumerate(problems)
    ]
    return pl.DataFrame(rows, schema=PROBLEM_SCHEMA, orient="row")


def merged_problems(rows: pl.DataFrame) -> list[Problem]:
    """The problems of several partitions (or evaluator-set groups) as one list: a check's
    counts summed (every row of a case is in one partition, so each offending row or
    key is counted once), its first example keys in sorted order."""
    keys = ["table", "column", "message"]
    merged = (
        rows.group_by(keys)
        .agg(
            pl.col("count").sum(),
            pl.col("examples")
            .list.explode(keep_nulls=False, empty_as_null=False)
            .unique()
            .sort()
            .head(MAX_EXAMPLES),
            pl.col("order").min(),
        )
        .sort("order", *keys)
    )
    return [Problem(t, c, m, n, tuple(ex)) for t, c, m, n, ex, _o in merged.iter_rows()]


def _tagged(tables: Mapping[str, pl.DataFrame]) -> pl.DataFrame:
    """Several output tables as one frame (mapInArrow has one output schema): a row per
    row of each table, TAG naming the table, its columns prefixed `TABLE__`."""
    return pl.concat(
        [
            frame.select(
                pl.lit(name, dtype=pl.String).alias(TAG),
                *(pl.col(c).alias(f"{name}__{c}") for c in frame.columns),
            )
            for name, frame in tables.items()
        ],
        how="diagonal",
    )


def untagged(tagged: DataFrame, name: str, columns: list[str]) -> DataFrame:
    """Table `name` out of the frame `_tagged` built, with its own column names."""
    return tagged.where(F.col(TAG) == name).select(
        *(F.col(f"`{name}__{c}`").alias(c) for c in columns)
    )


def _partition_fn(
    batches: Iterator[pa.RecordBatch],
    *,
    config_json: str,
    columns: dict[str, list[str]],
    out_schema: pa.Schema,
    clamp: bool,
    evaluators: str | None,
    problems: bool,
) -> Iterator[pa.RecordBatch]:
    """mapInArrow body: gather every batch of the partition (Spark hands them over 10 000
    rows at a time; a case may straddle batches), then one kernel call. Input problems
    fail the job, or with `problems` leave as rows of the PROBLEMS table."""
    gathered = [b for b in batches if b.num_rows]
    if not gathered:  # an empty partition (fewer cases than partitions): nothing to score
        return
    table = pa.Table.from_batches(gathered)
    wide = pl.from_arrow(table)
    assert isinstance(wide, pl.DataFrame)
    frames: dict[str, pl.DataFrame | None] = {}
    for name in KERNEL_TABLES:
        if name not in columns:
            frames[name] = None
            continue
        frames[name] = wide.filter(pl.col(TAG) == name).select(
            pl.col(f"{name}__{c}").alias(c) for c in columns[name]
        )
    if frames[S.SCORES] is not None and EVALSET in wide.columns:
        frames[S.SCORES] = frames[S.SCORES].with_columns(  # type: ignore[union-attr]
            wide.filter(pl.col(TAG) == S.SCORES)[EVALSET]
        )
    cfg = Config.model_validate_json(config_json)
    try:
        out = score_partition(frames, cfg, clamp=clamp, evaluators=evaluators)
    except ValidationError as e:
        if not problems:
            raise RuntimeError(f"{VALIDATION_MARKER} {e}") from None
        out = {PROBLEMS: problem_frame(e.problems)}
    if evaluators is None and not problems:
        result = out[S.EXECUTION_SCORES]
    else:  # the tables the partition has; the others' columns null
        result = _tagged(out)
        result = result.with_columns(
            pl.lit(None).alias(c) for c in out_schema.names if c not in result.columns
        )
    arrow = result.select(out_schema.names).to_arrow().cast(out_schema)
    yield from arrow.to_batches(max_chunksize=10_000)


# --- score_tables ---------------------------------------------------------------------------
def _wide_frame(inputs: Mapping[str, DataFrame], evalsets: DataFrame | None) -> DataFrame:
    parts = []
    for name, df in inputs.items():
        keyed = df.select(
            F.lit(name).alias(TAG),
            F.col(S.RUN_ID).cast("string").alias(K_RUN),
            F.col(S.CASE_ID).cast("string").alias(K_CASE),
            *(F.col(f"`{c}`").alias(f"{name}__{c}") for c in df.columns),
        )
        if name == S.SCORES and evalsets is not None:
            keyed = keyed.join(F.broadcast(evalsets), on=K_RUN, how="left")
        parts.append(keyed)
    wide = parts[0]
    for p in parts[1:]:
        wide = wide.unionByName(p, allowMissingColumns=True)
    return wide


def _evalsets(scores: DataFrame) -> DataFrame:
    """run → its evaluator set (sorted names joined by SEP): small, broadcast."""
    return (
        scores.select(
            F.col(S.RUN_ID).cast("string").alias(K_RUN),
            F.col(S.EVALUATOR).cast("string").alias("_e"),
        )
        .where(F.col("_e").isNotNull() & F.col(K_RUN).isNotNull())
        .groupBy(K_RUN)
        .agg(F.concat_ws(SEP, F.array_sort(F.collect_set("_e"))).alias(EVALSET))
    )


def default_partitions(spark: SparkSession) -> int:
    try:
        return max(1, int(spark.conf.get("spark.sql.shuffle.partitions") or 200))
    except Exception:  # pragma: no cover - Connect sessions without the conf
        return 200


def kernel_tables(
    scores: DataFrame,
    config: Config,
    executions: DataFrame | None = None,
    outcomes: DataFrame | None = None,
    *,
    partitions: int | None = None,
    clamp: bool = False,
    evaluators: str | None = None,
    problems: bool = False,
) -> tuple[DataFrame, dict[str, DataFrame]]:
    """The kernel's output as lazy Spark DataFrames: (the mapInArrow frame, {table name:
    table}); execution_scores, and evaluator_scores with `evaluators` (FULL or NODES).
    With `problems`, input problems are rows of the frame's PROBLEMS table instead of a
    failed job. With either, the tables are cuts of the one mapInArrow frame (persist it
    to score once). See the module docstring."""
    for name, df in ((S.SCORES, scores), (S.EXECUTIONS, executions), (S.OUTCOMES, outcomes)):
        if df is None:
            continue
        missing = [c for c in (S.RUN_ID, S.CASE_ID) if c not in df.columns]
        if missing:
            raise UsageError(
                f"the {name} DataFrame lacks {', '.join(missing)}; hint: columns: "
                f"{', '.join(df.columns)} (docs/tables.md lists the input columns)."
            )
    use_current_python()
    inputs = {S.SCORES: scores}
    if executions is not None:
        inputs[S.EXECUTIONS] = executions
    if outcomes is not None:
        inputs[S.OUTCOMES] = outcomes
    columns = {name: list(df.columns) for name, df in inputs.items()}
    # the declared output schema: the kernel run on empty inputs of the same types (with
    # one listed evaluator, so that evaluator_scores has its typed node columns)
    empties: dict[str, pl.DataFrame | None] = {n: None for n in KERNEL_TABLES}
    empties.update({n: polars_empty(df.schema) for n, df in inputs.items()})
    typed = config if config.evaluators is not None else _listing(config, ["_"])
    sample = _score_frames(empties, typed, clamp, evaluators)
    tagged = evaluators is not None or problems
    spark_schema = spark_struct_of(
        _tagged({**sample, PROBLEMS: problem_frame([])} if problems else sample)
        if tagged
        else sample[S.EXECUTION_SCORES]
    )
    evalsets = _evalsets(scores) if config.evaluators is None else None
    wide = _wide_frame(inputs, evalsets)
    n = partitions or default_partitions(scores.sparkSession)
    fn = functools.partial(
        _partition_fn,
        config_json=config.model_dump_json(),
        columns=columns,
        out_schema=to_arrow_schema(spark_schema),
        clamp=clamp,
        evaluators=evaluators,
        problems=problems,
    )
    with warnings.catch_warnings():  # pyspark warns about pandas 3; mapInArrow uses none
        warnings.simplefilter("ignore", FutureWarning)
        scored = wide.repartition(n, K_RUN, K_CASE).mapInArrow(fn, spark_schema)
    if not tagged:
        return scored, {S.EXECUTION_SCORES: scored}
    return scored, {name: untagged(scored, name, list(f.columns)) for name, f in sample.items()}


def execution_scores(
    scores: DataFrame,
    config: Config,
    executions: DataFrame | None = None,
    outcomes: DataFrame | None = None,
    *,
    partitions: int | None = None,
    clamp: bool = False,
) -> DataFrame:
    """execution_scores as a lazy Spark DataFrame (see the module docstring)."""
    _scored, tables = kernel_tables(
        scores, config, executions, outcomes, partitions=partitions, clamp=clamp
    )
    return tables[S.EXECUTION_SCORES]
