"""`score_tables`: every table `evalframe score` writes, from a dataset path or Dataset.

The one scoring pipeline the CLI and Python users share:

- a flat config on a dataset path takes the aggregate-first streaming pass
  (`scoring/flat.py`): one scan of the judge rows, validation folded in;
- a composite tree (or a Dataset already loaded, or more than 62 distinct evaluators)
  takes the tree path: `load_dataset` keys the judge rows once, `tree_eval` runs one
  group-by per depth level;
- `engine="duckdb"` runs the whole job in DuckDB, straight from the files;
- `engine="spark"` runs it on Spark (`evalframe.spark`: the kernel per partition of whole
  cases, summaries in native Spark), local[2] or Spark Connect at `spark_remote`.

Both polars paths end in the same `apply_policy` (verdicts) and the same summaries.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl

from evalframe._private import schema as S
from evalframe._private.config import DEFAULT_MEMORY_LIMIT, Config, parse_memory_limit
from evalframe._private.data.dataset import Dataset, load_dataset, open_tables
from evalframe._private.data.validate import ClampReport, _typed, check_schemas, validate_tables
from evalframe._private.errors import UsageError, ValidationError
from evalframe._private.pipeline.tables import Frame, Tables
from evalframe._private.scoring import flat
from evalframe._private.scoring.execution_scores import (
    EXECUTION_COLUMNS,
    apply_policy,
    evaluator_scores,
    execution_scores,
)
from evalframe._private.summaries.case_summary import case_stats, case_summary
from evalframe._private.summaries.run_summary import run_summary
from evalframe._private.summaries.slices import slice_summary

ENGINES = ("polars", "duckdb", "spark")


def score_tables(
    dataset: str | Path | Dataset,
    config: Config | None = None,
    *,
    evaluators: bool = False,
    clamp: bool = False,
    engine: str = "polars",
    memory_limit: str | None = None,
    by: str | None = None,
    spark_remote: str | None = None,
) -> Tables[Frame]:
    """Score a dataset under one config: a `Tables` of execution_scores, case_summary and
    run_summary.

    `dataset` is a dataset path (folder or DuckDB file) or a loaded `Dataset`.
    `evaluators=True` also returns evaluator_scores (one row per execution × tree node,
    as large as the input). `engine="duckdb"` computes everything in DuckDB from the
    files, spilling to disk beyond `memory_limit` (e.g. "3GB"; flat configs only).
    `by` ("tag" or an executions column) adds slice_summary (SPEC §10).
    `engine="spark"` scores on Spark (the `spark` extra): a local[2] session, the active
    one, or Spark Connect at `spark_remote` (sc://HOST:PORT).
    Raises ValidationError listing every input problem at once.
    """
    cfg = config if config is not None else Config()
    if engine not in ENGINES:
        raise UsageError(f"unknown engine {engine!r}; hint: one of {', '.join(ENGINES)}.")
    if memory_limit is not None:
        parse_memory_limit(memory_limit)  # one grammar for every engine and path
    if engine == "spark":
        return _with_slices(
            _spark(dataset, cfg, evaluators=evaluators, clamp=clamp, remote=spark_remote),
            cfg,
            by,
        )
    if spark_remote is not None:
        raise UsageError(
            f"spark_remote is for engine='spark', not {engine!r}; hint: --engine spark."
        )
    if engine == "duckdb":
        tables = _duckdb(
            dataset, cfg, evaluators=evaluators, clamp=clamp, memory_limit=memory_limit
        )
        return _with_slices(tables, cfg, by)
    ds: Dataset | None = dataset if isinstance(dataset, Dataset) else None
    out: Tables[Frame] = Tables()
    if ds is None and flat.is_flat(cfg):
        raw = open_tables(dataset)  # type: ignore[arg-type]
        batches = run_batches(raw, judge_rows_budget(memory_limit))
        if batches is None:
            result = flat_execution_scores(raw, cfg, clamp=clamp)
            if result is not None:
                ex, runs, out.clamped = result
                out.update(_summaries(ex, cfg, runs, is_sorted=True))
                out.path = "flat"
        elif _spill_batches(out, raw, cfg, batches, clamp=clamp):
            out.path = "flat"
    if not out:
        if ds is None:
            ds = load_dataset(dataset, clamp=clamp)  # type: ignore[arg-type]
        out.clamped = ds.clamped
        out.update(_summaries(execution_scores(ds, cfg).collect(), cfg, ds.runs))
    if evaluators:
        if ds is None:
            ds = load_dataset(dataset, clamp=clamp)  # type: ignore[arg-type]
        out[S.EVALUATOR_SCORES] = evaluator_scores(ds, cfg).collect()
    return _with_slices(out, cfg, by)


def _with_slices(out: Tables[Frame], cfg: Config, by: str | None) -> Tables[Frame]:
    """Add slice_summary (SPEC §10) when `by` ("tag" or an executions column) is given."""
    if by is not None:
        out[S.SLICE_SUMMARY] = slice_summary(out[S.EXECUTION_SCORES].lazy(), cfg, by=by).collect()
    return out


def _summaries(
    ex: pl.DataFrame, cfg: Config, runs: pl.LazyFrame, *, is_sorted: bool = False
) -> dict[str, pl.DataFrame]:
    """execution_scores with its case_summary and run_summary (one shared case pass).
    Executions are sorted by key first: the output is deterministic, whatever the row
    order of the input and the order the streaming group-by emitted the executions."""
    if not is_sorted:
        ex = ex.sort(S.EXECUTION_KEY, nulls_last=True)
    # one config: sorted by the execution key is sorted by (config_id, run_id, case_id)
    stats = case_stats(ex.lazy(), is_sorted=True).collect().lazy()
    cs, rs = pl.collect_all(
        [
            case_summary(ex.lazy(), cfg, stats=stats, is_sorted=True),
            run_summary(ex.lazy(), cfg, runs=runs, case_stats=stats),
        ]
    )
    return {S.EXECUTION_SCORES: ex, S.CASE_SUMMARY: cs, S.RUN_SUMMARY: rs}


BYTES_PER_JUDGE_ROW = 160
"""Peak memory of the flat pass per judge row of one batch (measured: ≈ 90 bytes at
16 M rows, doubled for headroom); sets how many judge rows one batch of runs may hold."""


def judge_rows_budget(memory_limit: str | None) -> int:
    """Judge rows one batch of the flat pass may hold under `memory_limit`."""
    limit = parse_memory_limit(DEFAULT_MEMORY_LIMIT if memory_limit is None else memory_limit)
    return max(1, limit // BYTES_PER_JUDGE_ROW)


def run_batches(tables: Mapping[str, pl.LazyFrame | None], budget: int) -> list[list[str]] | None:
    """None when every judge row fits one batch (the row count comes from the Parquet
    metadata); else the runs grouped into batches of at most `budget` judge rows (a run
    larger than the budget is a batch of its own)."""
    scores = tables[S.SCORES]
    assert scores is not None
    n = scores.select(pl.len()).collect().item()
    if n <= budget:
        return None
    sizes = (
        scores.group_by(pl.col(S.RUN_ID).cast(pl.String))
        .agg(pl.len().alias("_n"))
        .collect(engine="streaming")
    )
    executions = tables.get(S.EXECUTIONS)
    if executions is not None:  # runs with executions but no score rows
        extra = executions.select(pl.col(S.RUN_ID).cast(pl.String).unique()).collect()
        sizes = pl.concat(
            [sizes, extra.with_columns(pl.lit(0, dtype=sizes["_n"].dtype).alias("_n"))]
        ).unique(S.RUN_ID, keep="first")
    sizes = sizes.filter(pl.col(S.RUN_ID).is_not_null()).sort(S.RUN_ID)
    # greedy packing in run-id order: batch k holds the runs whose cumulative size falls
    # in [k·budget, (k+1)·budget)
    packed = sizes.with_columns((pl.col("_n").cum_sum() // budget).alias("_batch"))
    groups = packed.group_by("_batch", maintain_order=True).agg(pl.col(S.RUN_ID))
    return [list(ids) for ids in groups[S.RUN_ID].to_list()]


def _spill_batches(
    out: Tables[Frame],
    tables: Mapping[str, pl.LazyFrame | None],
    cfg: Config,
    batches: list[list[str]],
    *,
    clamp: bool,
) -> bool:
    """Score batch by batch (every table decomposes by run), writing each batch's tables
    to spill files; the results are lazy scans of those files. Peak memory is one batch.
    False when a batch has more evaluators than the flat pass handles."""
    spill = tempfile.TemporaryDirectory(prefix="evalframe-spill-")
    folder = Path(spill.name)
    clamped = ClampReport() if clamp else None
    for k, runs in enumerate(batches):
        keep = pl.col(S.RUN_ID).cast(pl.String).is_in(runs)
        part = {n: (lf.filter(keep) if lf is not None else None) for n, lf in tables.items()}
        result = flat_execution_scores(part, cfg, clamp=clamp)
        if result is None:
            spill.cleanup()
            return False
        ex, runs_table, report = result
        if clamped is not None and report is not None:
            clamped = ClampReport(clamped.clamped + report.clamped, clamped.nulled + report.nulled)
        for name, frame in _summaries(ex, cfg, runs_table, is_sorted=True).items():
            (folder / name).mkdir(exist_ok=True)
            frame.write_parquet(folder / name / f"part-{k:05d}.parquet")
        del ex
    for name in (S.EXECUTION_SCORES, S.CASE_SUMMARY):
        out[name] = pl.scan_parquet(folder / name / "*.parquet")
    out[S.RUN_SUMMARY] = pl.read_parquet(folder / S.RUN_SUMMARY / "*.parquet")
    out.clamped = clamped
    out.spill = spill  # the scans read these files: they live as long as the tables
    return True


def flat_execution_scores(
    tables: Mapping[str, pl.LazyFrame | None], config: Config, *, clamp: bool = False
) -> tuple[pl.DataFrame, pl.LazyFrame, ClampReport | None] | None:
    """execution_scores of a flat config from the raw input scans in one streaming pass
    over the judge rows (validation folded in). Returns (execution_scores, typed runs,
    clamp report), or None when the data has more evaluators than the pass handles."""
    raw = dict(tables)
    check_schemas(raw)
    scores = _typed(raw[S.SCORES], S.SCORES)  # type: ignore[arg-type]
    names = flat.evaluator_names(scores)
    if len(names) > flat.MAX_EVALUATORS:
        return None
    leaves = flat.Leaves.of(config, names)
    partials = flat.execution_partials(scores, leaves, clamp=clamp).collect(engine="streaming")
    problems, report = flat.score_problems(partials, scores, clamp=clamp)
    known = partials.filter(pl.col(S.RUN_ID).is_not_null() & pl.col(S.CASE_ID).is_not_null())
    given = raw.get(S.EXECUTIONS) is not None
    derived = None if given else known.select(S.EXECUTION_KEY).lazy()
    typed, _report, side = validate_tables(
        raw, score_values=False, derived_executions=derived, execution_duplicates=False
    )
    problems += side
    executions = typed[S.EXECUTIONS].collect()
    outcomes = (
        typed[S.OUTCOMES]
        .group_by(S.EXECUTION_KEY)
        .agg(
            pl.len().cast(pl.Int64).alias(S.OUTCOMES_TOTAL),
            pl.col(S.PASSED).sum().cast(pl.Int64).alias(S.OUTCOMES_PASSED),
        )
    )
    frame = flat.execution_frame(executions.lazy(), known, outcomes, leaves, config).collect()
    extra = [c for c in executions.columns if c not in S.EXECUTIONS_COLUMNS]
    del executions
    # sorted once, at the end: execution_scores comes out in key order (deterministic sums
    # downstream, whatever the input order) and duplicate execution keys are neighbours
    ex = (
        apply_policy(frame.lazy())
        .with_columns(pl.col(S.VERDICT).cast(pl.String))
        .select(*EXECUTION_COLUMNS, *extra)
        .sort(S.EXECUTION_KEY, nulls_last=True)
        .collect()
    )
    dup_exec = None
    if given:
        dup_exec = flat.neighbour_duplicates(ex, S.EXECUTIONS, S.EXECUTION_KEY)
        if dup_exec is not None:  # where validate_tables lists it: before the other
            # tables' duplicate keys and the outcome orphans, after every value check
            at = next(
                (
                    i
                    for i, p in enumerate(side)
                    if p.message == "duplicate key (keys listed)"
                    or p.message.startswith("execution is not in")
                ),
                len(side),
            )
            problems.insert(len(problems) - len(side) + at, dup_exec)
    # some rows matched no execution (with duplicate executions the sums can balance)
    if given and (dup_exec is not None or frame[flat.N_ALL].sum() < known[flat.N_ALL].sum()):
        orphan = flat.orphan_problem(known, ex.select(S.EXECUTION_KEY))
        if orphan is not None:
            problems.append(orphan)
    dup = flat.duplicate_problem(known, scores)
    if dup is not None:
        problems.append(dup)
    if problems:
        raise ValidationError(problems)
    return ex, typed[S.RUNS], report


def _duckdb(
    dataset: Any, cfg: Config, *, evaluators: bool, clamp: bool, memory_limit: str | None
) -> Tables[Frame]:
    from evalframe._private.engines.duckdb_pipeline import score_tables_duckdb

    if isinstance(dataset, Dataset):
        raise UsageError(
            "engine='duckdb' reads the dataset's files; hint: pass the dataset path, not a "
            "loaded Dataset."
        )
    kwargs: dict[str, Any] = {"clamp": clamp, "evaluators": evaluators}
    if memory_limit is not None:
        kwargs["memory_limit"] = memory_limit
    tables = score_tables_duckdb(Path(dataset), cfg, **kwargs)
    out: Tables[Frame] = Tables(tables)
    out.path = "duckdb"
    return out


SPARK_HINT = (
    'hint: pip install "evalframe[spark]" (pyspark >= 3.5; a local Spark also needs Java 17 '
    "on PATH), or use --engine polars."
)


def _spark(
    dataset: Any, cfg: Config, *, evaluators: bool, clamp: bool, remote: str | None
) -> Tables[Frame]:
    if isinstance(dataset, Dataset):
        raise UsageError(
            "engine='spark' reads the dataset's files; hint: pass the dataset path, or use "
            "evalframe.spark.score_tables on Spark DataFrames."
        )
    if evaluators:
        raise UsageError(
            "the Spark engine does not compute evaluator_scores; hint: drop --evaluators, "
            "or use --engine polars."
        )
    try:
        from evalframe._private.engines import spark_engine
    except ImportError as e:
        raise UsageError(f"--engine spark needs pyspark ({e}); {SPARK_HINT}") from None
    if remote is None and not spark_engine.java_available():
        raise UsageError(
            "--engine spark needs Java for a local Spark (`java` is not on PATH); "
            "hint: install Java 17, or give --spark-remote sc://HOST."
        )
    out: Tables[Frame] = Tables(
        spark_engine.score_dataset(Path(dataset), cfg, clamp=clamp, remote=remote)
    )
    out.path = "spark"
    return out
