"""`score_tables`: every table `evalframe score` writes, from a dataset path or Dataset.

The one scoring entry point the CLI and Python users share. It asks the capability
table (engines/capabilities.py) whether the engine runs what was asked, refuses with the
table's message otherwise, and hands the job to that engine alone (never another):

- `engine="polars"` (engines/polars/): the aggregate-first streaming pass for a
  flat config on a dataset path, the tree path otherwise;
- `engine="duckdb"` (engines/duckdb/): the whole job in DuckDB, from the files;
- `engine="spark"` (engines/spark/): evalframe's kernel per partition of whole
  cases, summaries through the rule layer; local[2] or Spark Connect at `spark_remote`.

slice_summary (`by=`) and variance_components are computed from the engine's
execution_scores (output-side summaries, summaries/slices.py and
summaries/variance_components.py).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import polars as pl

from evalframe._private import schema as S
from evalframe._private.config import Config, parse_memory_limit
from evalframe._private.data.dataset import Dataset
from evalframe._private.engines import capabilities as caps
from evalframe._private.engines.duckdb.run import score_tables_duckdb
from evalframe._private.engines.polars.run import score_tables_polars
from evalframe._private.errors import UsageError
from evalframe._private.pipeline.tables import Frame, Tables
from evalframe._private.summaries.agreement import label_tables
from evalframe._private.summaries.noise_floor import noise_floor, replicate_groups
from evalframe._private.summaries.slices import slice_summary
from evalframe._private.summaries.variance_components import variance_components

ENGINES = caps.ENGINES


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
    bootstrap: int | None = None,
    seed: int = 0,
    replicates: str | None = None,
) -> Tables[Frame]:
    """Score a dataset under one config: a `Tables` of execution_scores, case_summary,
    run_summary and variance_components.

    `dataset` is a dataset path (folder or DuckDB file) or a loaded `Dataset`.
    `evaluators=True` also returns evaluator_scores (one row per execution × tree node,
    as large as the input). `engine="duckdb"` computes everything in DuckDB from the
    files, spilling to disk beyond `memory_limit` (e.g. "3GB"; flat configs only).
    `by` ("tag" or an executions column) adds slice_summary (docs/statistics.md#slices).
    `engine="spark"` scores on Spark (the `spark` extra): a local[2] session, the active
    one, or Spark Connect at `spark_remote` (sc://HOST:PORT).
    `bootstrap=B` adds the case-bootstrap columns of docs/statistics.md#case-bootstrap to
    run_summary (B replicates drawn from `seed`, computed by the same engine:
    `pipeline/bootstrap.py`). `replicates` (a runs column whose equal values mark reruns)
    adds noise_floor (docs/statistics.md#noise-floor). Raises ValidationError listing every
    input problem at once.
    """
    cfg = config if config is not None else Config()
    check_request(
        engine,
        dataset,
        cfg,
        memory_limit=memory_limit,
        spark_remote=spark_remote,
        evaluators=evaluators,
    )
    if bootstrap is not None:  # refused before any input is read
        from evalframe._private.pipeline.bootstrap import check_bootstrap

        check_bootstrap(bootstrap, seed)
    if engine == "spark":
        out = _spark(dataset, cfg, evaluators=evaluators, clamp=clamp, remote=spark_remote)
    elif engine == "duckdb":
        out = _duckdb(dataset, cfg, clamp=clamp, memory_limit=memory_limit)
    else:
        out = _polars(dataset, cfg, evaluators=evaluators, clamp=clamp, memory_limit=memory_limit)
    out = _with_slices(label_tables(out, dataset, cfg), cfg, by)
    out[S.VARIANCE_COMPONENTS] = variance_components(out[S.EXECUTION_SCORES].lazy()).collect()
    if replicates is not None:
        with_noise_floor(out, replicates)
    if bootstrap is not None:
        from evalframe._private.pipeline.bootstrap import with_bootstrap

        kw = {"memory_limit": memory_limit, "spark_remote": spark_remote}
        with_bootstrap(out, cfg, replicates=bootstrap, seed=seed, engine=engine, **kw)
    return out


def with_noise_floor(out: Tables[Frame], replicates: str) -> pl.DataFrame:
    """Add noise_floor, from the scored case_summary and the runs column `replicates`, to
    `out`; return the runs' replicate groups."""
    summary = out[S.RUN_SUMMARY]
    assert isinstance(summary, pl.DataFrame)  # run_summary is always materialized
    groups = replicate_groups(summary, replicates)
    out[S.NOISE_FLOOR] = noise_floor(out[S.CASE_SUMMARY].lazy(), groups).collect()
    return groups


def _polars(
    dataset: Any,
    cfg: Config,
    *,
    evaluators: bool,
    clamp: bool,
    memory_limit: str | None,
    leaves: list[pl.DataFrame] | None = None,
) -> Tables[Frame]:
    tables = score_tables_polars(
        dataset,
        cfg,
        evaluators=evaluators,
        clamp=clamp,
        memory_limit=memory_limit,
        leaf_scores=leaves is not None,
    )
    if leaves is not None and tables.leaf_scores is not None:
        leaves.append(tables.leaf_scores)
    out: Tables[Frame] = Tables(tables)
    out.clamped, out.path, out.spill = tables.clamped, tables.path, tables.spill
    return out


def score_tables_with_leaves(
    dataset: str | Path | Dataset,
    cfg: Config,
    *,
    clamp: bool = False,
    memory_limit: str | None = None,
) -> tuple[Tables[Frame], pl.DataFrame | None]:
    """`score_tables` on the polars engine (the request checked by the caller), plus the
    flat pass's per-execution leaf partials (`engines/polars/run.py` `leaf_scores`) when
    the flat pass ran in one batch, else None: what `compare` derives evaluator_deltas
    from without reading the judge rows again."""
    leaves: list[pl.DataFrame] = []
    out = _polars(
        dataset, cfg, evaluators=False, clamp=clamp, memory_limit=memory_limit, leaves=leaves
    )
    return label_tables(out, dataset, cfg), (leaves[0] if leaves else None)


def check_request(
    engine: str,
    dataset: Any,
    cfg: Config,
    *,
    memory_limit: str | None = None,
    spark_remote: str | None = None,
    evaluators: bool = False,
) -> None:
    """Refuse, with the capability table's message, what `engine` does not run; a bad
    --memory-limit is refused first, whatever the engine (one grammar)."""
    caps.check_engine(engine)
    if memory_limit is not None:
        parse_memory_limit(memory_limit)
        caps.require(engine, caps.MEMORY_LIMIT)
    if spark_remote is not None:
        caps.require(engine, caps.SPARK_CONNECT)
    if isinstance(dataset, Dataset):
        caps.require(engine, caps.DATASET_OBJECT)
    composite = sorted(n for n, e in (cfg.evaluators or {}).items() if e.is_composite)
    if composite:
        caps.require(
            engine, caps.COMPOSITE_TREES, f"evaluator(s) {', '.join(composite)} are composite"
        )
    if evaluators:
        caps.require(engine, caps.EVALUATOR_SCORES)
    if cfg.attempts.k:
        caps.require(engine, caps.ATTEMPTS_K)


def _with_slices(out: Tables[Frame], cfg: Config, by: str | None) -> Tables[Frame]:
    """Add slice_summary (docs/statistics.md#slices) when `by` ("tag" or an executions column) is
    given."""
    if by is not None:
        out[S.SLICE_SUMMARY] = slice_summary(out[S.EXECUTION_SCORES].lazy(), cfg, by=by).collect()
    return out


def _duckdb(dataset: Any, cfg: Config, *, clamp: bool, memory_limit: str | None) -> Tables[Frame]:
    kwargs: dict[str, Any] = {"clamp": clamp}
    if memory_limit is not None:
        kwargs["memory_limit"] = memory_limit
    tables = score_tables_duckdb(Path(dataset), cfg, **kwargs)
    out: Tables[Frame] = Tables(tables)
    out.clamped = tables.clamped
    out.path = "duckdb"
    return out


SPARK_HINT = (
    'hint: pip install "evalframe[spark]" (pyspark >= 3.5; a local Spark also needs Java 17 '
    "on PATH), or use --engine polars."
)


def require_spark(remote: str | None) -> None:
    """A UsageError naming what `--engine spark` misses: pyspark (an optional dependency,
    imported only here and by the Spark adapters), or Java for a local Spark."""
    try:
        import pyspark  # noqa: F401
    except ImportError as e:
        raise UsageError(f"--engine spark needs pyspark ({e}); {SPARK_HINT}") from None
    if remote is None and not java_available():
        raise UsageError(
            "--engine spark needs Java for a local Spark (`java` is not on PATH); "
            "hint: install Java 17, or give --spark-remote sc://HOST."
        )


def java_available() -> bool:
    """A local Spark needs a JVM: `java` on PATH or under JAVA_HOME."""
    home = os.environ.get("JAVA_HOME")
    return shutil.which("java") is not None or (
        home is not None and os.path.exists(os.path.join(home, "bin", "java"))
    )


def _spark(
    dataset: Any, cfg: Config, *, evaluators: bool, clamp: bool, remote: str | None
) -> Tables[Frame]:
    require_spark(remote)
    from evalframe._private.engines.spark.run import score_dataset  # pyspark: optional

    out: Tables[Frame] = Tables(
        score_dataset(Path(dataset), cfg, clamp=clamp, remote=remote, evaluators=evaluators)
    )
    out.path = "spark"
    return out
