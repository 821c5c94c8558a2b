"""The Spark engine: evalframe's own kernel per partition, summaries by the rule layer.

    scores ─┐  tagged wide frame: one row per input row, the table's columns prefixed
 executions ├─ (`scores__score`, `executions__status`, ...) plus the partition key
   outcomes ┘  (run_id, case_id) cast to string
                 └ repartition(n, run_id, case_id): every row of a case in one partition
                 └ mapInArrow: gather ALL Arrow batches of the partition, split by tag,
                   run `flat_execution_scores` (engines/polars_engine.py; flat configs)
                   or the tree path on them, cast to the declared Arrow schema
                   → execution_scores; with `evaluators` (FULL for score --evaluators,
                   NODES for compare) also evaluator_scores, both leaving as one tagged
                   frame (`_tagged`) that `kernel_tables` cuts back into two
 execution_scores → case_summary, run_summary: rules/attempts.py, rules/runs.py and
                   rules/run_gates.py through narwhals (pass@k: `_comb_ratio`)
 `scored_dataset`: a dataset path read by Spark, scored once (persisted), the tables lazy
 (engines/spark_compare.py compares them)

pyspark is imported here at module level: only `evalframe.spark`, the Spark adapters and
`pipeline/` (inside the function that runs `--engine spark`) import this module, never
core evalframe.
"""

from __future__ import annotations

import functools
import os
import sys
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import narwhals as nw
import polars as pl
import pyarrow as pa
from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema

from evalframe._private import schema as S
from evalframe._private.config import Config, Evaluator
from evalframe._private.data.dataset import Dataset, open_tables, table_files
from evalframe._private.data.validate import parse_time_text
from evalframe._private.engines.polars_engine import flat_execution_scores
from evalframe._private.errors import SparkValidationError, UsageError, ValidationError
from evalframe._private.rules import attempts, run_gates
from evalframe._private.rules import runs as rules_runs
from evalframe._private.scoring.execution_scores import evaluator_scores as polars_evaluator_scores
from evalframe._private.scoring.execution_scores import execution_scores as polars_execution_scores
from evalframe._private.scoring.flat import is_flat
from evalframe._private.summaries.case_summary import CASE_COLUMNS
from evalframe._private.summaries.run_summary import COUNT_COLUMNS, RUN_COLUMNS

K = TypeVar("K")
TAG = "_ef_table"
K_RUN = "_ef_run"
K_CASE = "_ef_case"
EVALSET = "_ef_evalset"
SEP = "\x1f"
KERNEL_TABLES = (S.SCORES, S.EXECUTIONS, S.OUTCOMES)
VALIDATION_MARKER = "evalframe input error:"
"""Prefix of the message a worker raises when its partition fails validation."""


PARTITION_NOTE = (
    "\n(Spark checks each partition of whole cases on its own: the counts and examples above"
    " are those of one partition; `evalframe validate DATASET` lists every problem.)"
)


# --- the session --------------------------------------------------------------------------
def use_current_python() -> None:
    """Python workers start `python3` on PATH unless PYSPARK_PYTHON names an interpreter:
    point it at this one (local mode), so workers see the same evalframe and polars."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)


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


def _spark_schema(frame: pl.DataFrame) -> T.StructType:
    arrow = frame.head(0).to_arrow().schema
    return from_arrow_schema(pa.schema([pa.field(f.name, _narrow(f.type)) for f in arrow]))


def _polars_empty(schema: T.StructType) -> pl.DataFrame:
    return pl.from_arrow(to_arrow_schema(schema).empty_table())  # type: ignore[return-value]


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
    expected evaluators are those seen anywhere in the run (SPEC §3.4), which one
    partition does not see; listing the run's set reproduces the rule exactly."""
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
        pieces.append(_score_frames(part, sub, clamp, evaluators))
    rest = {
        name: (f.filter(~pl.col(S.RUN_ID).is_in(listed_runs)) if f is not None else None)
        for name, f in frames.items()
    }
    rest[S.SCORES] = rest[S.SCORES].drop(EVALSET)  # type: ignore[union-attr]
    if any(f is not None and f.height for f in rest.values()) or not pieces:
        pieces.append(_score_frames(rest, cfg, clamp, evaluators))  # runs without scores
    out = {}
    for name in pieces[0]:
        # a piece without evaluators has no node rows (and an all-text empty schema)
        parts = [p[name] for p in pieces if p[name].height] or [pieces[0][name]]
        out[name] = pl.concat(parts, how="vertical_relaxed").with_columns(
            pl.lit(cfg.config_id, dtype=pl.String).alias(S.CONFIG_ID)
        )
    return out


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


def _untagged(tagged: DataFrame, name: str, columns: list[str]) -> DataFrame:
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
) -> Iterator[pa.RecordBatch]:
    """mapInArrow body: gather every batch of the partition (Spark hands them over 10 000
    rows at a time; a case may straddle batches), then one kernel call."""
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
        raise RuntimeError(f"{VALIDATION_MARKER} {e}") from None
    result = out[S.EXECUTION_SCORES] if evaluators is None else _tagged(out)
    arrow = result.select(out_schema.names).to_arrow().cast(out_schema)
    yield from arrow.to_batches(max_chunksize=10_000)


# --- score_tables ---------------------------------------------------------------------------
def _col(df: DataFrame, name: str) -> bool:
    return name in df.columns


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
) -> tuple[DataFrame, dict[str, DataFrame]]:
    """The kernel's output as lazy Spark DataFrames: (the mapInArrow frame, {table name:
    table}); execution_scores, and evaluator_scores with `evaluators` (FULL or NODES), in
    which case both tables are cuts of the one mapInArrow frame (persist it to score
    once). See the module docstring."""
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
    empties.update({n: _polars_empty(df.schema) for n, df in inputs.items()})
    typed = config if config.evaluators is not None else _listing(config, ["_"])
    sample = _score_frames(empties, typed, clamp, evaluators)
    spark_schema = _spark_schema(
        sample[S.EXECUTION_SCORES] if evaluators is None else _tagged(sample)
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
    )
    with warnings.catch_warnings():  # pyspark warns about pandas 3; mapInArrow uses none
        warnings.simplefilter("ignore", FutureWarning)
        scored = wide.repartition(n, K_RUN, K_CASE).mapInArrow(fn, spark_schema)
    if evaluators is None:
        return scored, {S.EXECUTION_SCORES: scored}
    return scored, {name: _untagged(scored, name, list(f.columns)) for name, f in sample.items()}


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


# --- case_summary and run_summary in native Spark ----------------------------------------
_CASE_KEY = [S.CONFIG_ID, S.RUN_ID, S.CASE_ID]


def _case_stats(ex: DataFrame) -> DataFrame:
    """`rules.attempts.case_aggregations`, run natively by Spark through narwhals."""
    return nw.from_native(ex).group_by(*_CASE_KEY).agg(*attempts.case_aggregations(nw)).to_native()


def case_summary(ex: DataFrame, cfg: Config, *, stats: DataFrame | None = None) -> DataFrame:
    """case_summary (SPEC §4) from execution_scores: one group-by per (run, case), the
    rules of `rules.attempts` run natively by Spark."""
    st = _case_stats(ex) if stats is None else stats
    policy = (nw.lit(cfg.attempts.score), nw.lit(cfg.attempts.passed))
    return (
        nw.from_native(st)
        .with_columns(*attempts.case_columns(nw, *policy))
        .select(*CASE_COLUMNS)
        .to_native()
    )


def _comb_ratio(a: Column, b: Column, k: int) -> Column:
    """C(a, k) / C(b, k) = Π (a − i) / (b − i): 0 when a < k, null when b < k."""
    prod = F.lit(1.0)
    for i in range(k):  # a loop over the factors of one k, not over cases
        prod = prod * ((a - i).cast("double") / (b - i).cast("double"))
    return F.when(b < k, F.lit(None).cast("double")).when(a < k, F.lit(0.0)).otherwise(prod)


def _mean_and_se(value: Column, name: str) -> list[Column]:
    g = F.count(value)
    se = F.when(g >= 2, F.stddev_samp(value) / F.sqrt(g.cast("double")))
    return [F.avg(value).alias(name), se.alias(S.se_of(name))]


def run_summary(
    ex: DataFrame,
    cfg: Config,
    *,
    runs: DataFrame | None = None,
    stats: DataFrame | None = None,
) -> DataFrame:
    """run_summary (SPEC §5) from execution_scores: the rules of `rules/runs.py` and
    `rules/run_gates.py` run natively by Spark through narwhals (exact percentiles:
    Spark's `percentile`, linear interpolation like polars'), pass@k by the Spark kernel
    `_comb_ratio`; the runs table's rows and columns joined as the local engine does."""
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
    levels = per_case.group_by(*keys).agg(*rules_runs.case_level_aggregations(nw)).to_native()
    ks = list(cfg.attempts.k)
    if ks:  # pass@k / pass^k: the one engine-specific kernel (a product of k factors)
        n_att = F.col(rules_runs.CASE_N).cast("long")
        c_att = F.col(rules_runs.CASE_K).cast("long")
        pass_k = []
        for k in ks:  # the configured k values
            pass_k += _mean_and_se(1.0 - _comb_ratio(n_att - c_att, n_att, k), S.pass_at(k))
            pass_k += _mean_and_se(_comb_ratio(c_att, n_att, k), S.pass_all(k))
        levels = levels.join(per_case.to_native().groupBy(*keys).agg(*pass_k), on=keys, how="left")
    summary = base.join(levels, on=keys, how="left")
    if runs is not None:
        runs = typed_runs(runs)
        present = summary.select(S.RUN_ID)
        empty = (
            runs.select(F.col(S.RUN_ID).cast("string").alias(S.RUN_ID))
            .distinct()
            .join(present, on=S.RUN_ID, how="left_anti")
            .select(
                F.lit(cfg.config_id).alias(S.CONFIG_ID),
                S.RUN_ID,
                *(F.lit(0).cast("long").alias(c) for c in COUNT_COLUMNS),
            )
        )
        summary = summary.unionByName(empty, allowMissingColumns=True)
        meta = runs.withColumn(S.RUN_ID, F.col(S.RUN_ID).cast("string"))
        if _col(meta, S.CONFIG):
            meta = meta.withColumnRenamed(S.CONFIG, f"run_{S.CONFIG}")
        summary = summary.join(meta, on=S.RUN_ID, how="left")
    else:  # the runs table's columns, null, as the local engine has them without one
        for col, (dtype, _required, _default) in S.RUNS_COLUMNS.items():
            if col != S.RUN_ID:
                kind = "timestamp_ntz" if isinstance(dtype, pl.Datetime) else "string"
                name = f"run_{S.CONFIG}" if col == S.CONFIG else col
                summary = summary.withColumn(name, F.lit(None).cast(kind))
    gates = run_gates.gate_columns(nw, cfg.run_gates.min_mean_score, cfg.run_gates.min_pass_rate)
    summary = (
        nw.from_native(summary)
        .with_columns(
            nw.lit(cfg.run_gates.min_mean_score).alias(S.MIN_MEAN_SCORE),
            nw.lit(cfg.run_gates.min_pass_rate).alias(S.MIN_PASS_RATE),
        )
        .with_columns(*gates)
        .with_columns(run_gates.run_passed(nw))
        .to_native()
    )
    head = [*RUN_COLUMNS]
    pk = [c for k in ks for col in (S.pass_at(k), S.pass_all(k)) for c in (col, S.se_of(col))]
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
    )
    ex = tables[S.EXECUTION_SCORES]
    stats = _case_stats(ex)
    tables[S.CASE_SUMMARY] = case_summary(ex, cfg, stats=stats)
    tables[S.RUN_SUMMARY] = run_summary(ex, cfg, runs=runs_df, stats=stats)
    if S.EVALUATOR_SCORES in tables:  # after the three, as the local engine orders them
        tables[S.EVALUATOR_SCORES] = tables.pop(S.EVALUATOR_SCORES)
    return scored, tables


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


# --- a dataset on disk: what `evalframe score --engine spark` runs -------------------------
def _is_local(spark: SparkSession) -> bool:
    """A classic session whose executors read this machine's files (local master)."""
    try:
        return str(spark.sparkContext.master).startswith("local")
    except Exception:  # Spark Connect: no SparkContext on the client
        return False


def _narrow_table(table: pa.Table) -> pa.Table:
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
            out[name] = spark.createDataFrame(_narrow_table(frame.collect().to_arrow()))
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
    or Spark Connect at `remote`) as lazy Spark DataFrames over ONE kernel pass: its
    output is persisted (spilling to disk when large) and checked — a partition that
    failed validation is a SparkValidationError — before the body runs, and unpersisted
    after it."""
    spark = session(remote)
    inputs = read_dataset(spark, dataset)
    scored, tables = _score_tables(
        inputs[S.SCORES],
        config,
        inputs.get(S.EXECUTIONS),
        inputs.get(S.OUTCOMES),
        inputs.get(S.RUNS),
        partitions=partitions,
        clamp=clamp,
        evaluators=evaluators,
    )
    # the kernel runs once: without the cache each table's branch would rescore
    scored = scored.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        try:
            scored.count()
        except Exception as e:
            message = validation_message(e)
            if message is None:
                raise
            raise SparkValidationError(message + PARTITION_NOTE) from None
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
