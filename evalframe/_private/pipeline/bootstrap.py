"""`with_bootstrap`: run_summary with the case-bootstrap columns
(docs/statistics.md#case-bootstrap), computed by the engine that scored.

The rule is `rules/bootstrap.py`, arranged into frames by `summaries/bootstrap.py` over
narwhals; this module hands it the engine's own frames: a polars LazyFrame (chunks of
replicates collected by polars' streaming engine), a DuckDB relation in a fresh spilling
session under --memory-limit, or a Spark DataFrame in the scoring session. It never runs
one engine's job on another.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import narwhals as nw
import polars as pl

from evalframe._private import schema as S
from evalframe._private.config import DEFAULT_MEMORY_LIMIT, Config, parse_memory_limit
from evalframe._private.engines import capabilities as caps
from evalframe._private.errors import UsageError
from evalframe._private.pipeline.tables import Frame, Tables
from evalframe._private.rules import bootstrap as B
from evalframe._private.summaries import bootstrap as SB

BOOT_INPUT = [S.CONFIG_ID, S.RUN_ID, S.CASE_ID, S.PASSED, S.SCORE]
"""The execution_scores columns the bootstrap reads."""


def check_bootstrap(replicates: Any, seed: Any) -> None:
    """A UsageError (CLI exit 2) for a replicate count or a seed out of range."""
    if isinstance(replicates, bool) or not isinstance(replicates, int):
        raise UsageError(f"--bootstrap must be an integer, got {replicates!r}")
    if not 1 <= replicates <= B.MAX_REPLICATES:
        raise UsageError(
            f"--bootstrap must be between 1 and {B.MAX_REPLICATES:,} replicates, got {replicates}"
        )
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise UsageError(f"--seed must be an integer, got {seed!r}")
    if not 0 <= seed <= B.MAX_SEED:
        raise UsageError(f"--seed must be between 0 and {B.MAX_SEED}, got {seed}")


def place_columns(run_summary: pl.DataFrame, boot: pl.DataFrame) -> pl.DataFrame:
    """run_summary with the bootstrap columns joined on (config_id, run_id) (null for a run
    without executions), placed after the statistics (run_summary's columns, pass@k, PPI),
    before the runs table's metadata; columns of an earlier bootstrap are replaced."""
    names = [c for c in run_summary.columns if c not in boot.columns or c in SB.RUN_KEY]
    stats = set(S.RUN_COLUMNS) | set(S.PPI_COLUMNS)
    head = [c for c in names if c in stats or c.startswith(("pass_at_", "pass_all_"))]
    rest = [c for c in names if c not in head]
    value_columns = [c for c in boot.columns if c not in SB.RUN_KEY]
    out = run_summary.select(names).join(
        boot, on=list(SB.RUN_KEY), how="left", maintain_order="left"
    )
    return out.select(*head, *value_columns, *rest)


def bootstrap_frame(
    execution_scores: Frame,
    cfg: Config,
    *,
    replicates: int,
    seed: int = 0,
    engine: str = "polars",
    memory_limit: str | None = None,
    spark_remote: str | None = None,
    chunk: int | None = None,
) -> pl.DataFrame:
    """The bootstrap columns per (config_id, run_id), computed by `engine` from the
    engine's execution_scores (see the module docstring). `chunk` (replicates weighed at a
    time) defaults to what --memory-limit holds."""
    check_bootstrap(replicates, seed)
    caps.check_engine(engine)
    caps.require(engine, caps.BOOTSTRAP)
    ex = execution_scores.lazy().select(BOOT_INPUT)
    limit = parse_memory_limit(DEFAULT_MEMORY_LIMIT if memory_limit is None else memory_limit)
    ks: Sequence[int] = list(dict.fromkeys(cfg.attempts.k))
    gates = (cfg.run_gates.min_mean_score, cfg.run_gates.min_pass_rate)
    rows = ex.select(pl.len()).collect().item()
    if chunk is None:
        chunk = SB.replicates_per_chunk(rows, limit, replicates)
    if engine == "duckdb":
        return _duckdb(ex, ks, gates, replicates, seed, chunk, memory_limit)
    if engine == "spark":
        return _spark(ex, ks, gates, replicates, seed, chunk, spark_remote)

    def reps(a: int, b: int) -> pl.LazyFrame:
        return pl.LazyFrame({SB.REP: pl.int_range(a, b, dtype=pl.Int64, eager=True)})

    out = SB.bootstrap_columns(
        ex,
        replicates=replicates,
        seed=seed,
        ks=ks,
        min_mean_score=gates[0],
        min_pass_rate=gates[1],
        replicate_frame=reps,
        chunk=chunk,
        materialize=lambda f: nw.from_native(f.to_native().collect(engine="streaming").lazy()),
    )
    return out.collect().to_native().sort(SB.RUN_KEY)


def _duckdb(
    ex: pl.LazyFrame,
    ks: Sequence[int],
    gates: tuple[float, float],
    replicates: int,
    seed: int,
    chunk: int,
    memory_limit: str | None,
) -> pl.DataFrame:
    """The bootstrap in DuckDB: execution_scores handed to a fresh spilling session as
    Arrow, every step a DuckDB relation (narwhals), the result fetched at the end."""
    from evalframe._private.engines.duckdb.read import session

    with session(memory_limit or DEFAULT_MEMORY_LIMIT) as con:
        con.register("evalframe_boot_arrow", ex.collect().to_arrow())
        con.execute("create temp table evalframe_boot_input as select * from evalframe_boot_arrow")
        con.unregister("evalframe_boot_arrow")
        source = con.table("evalframe_boot_input")

        def reps(a: int, b: int) -> Any:
            return con.sql(f"select cast(range as bigint) as {SB.REP} from range({a}, {b})")

        def materialize(f: nw.LazyFrame[Any]) -> nw.LazyFrame[Any]:
            name = f"evalframe_boot_{len(made)}"
            f.to_native().create(name)
            made.append(name)
            return nw.from_native(con.table(name))

        made: list[str] = []
        out = SB.bootstrap_columns(
            source,
            replicates=replicates,
            seed=seed,
            ks=ks,
            min_mean_score=gates[0],
            min_pass_rate=gates[1],
            replicate_frame=reps,
            chunk=chunk,
            materialize=materialize,
        )
        return out.to_native().pl().sort(SB.RUN_KEY)


def _spark(
    ex: pl.LazyFrame,
    ks: Sequence[int],
    gates: tuple[float, float],
    replicates: int,
    seed: int,
    chunk: int,
    remote: str | None,
) -> pl.DataFrame:
    """The bootstrap on Spark: execution_scores as a Spark DataFrame, every step a Spark
    DataFrame (narwhals), the result fetched at the end."""
    from evalframe._private.engines.spark.read import narrow_table, session, to_arrow

    spark = session(remote)
    source = spark.createDataFrame(narrow_table(ex.collect().to_arrow()))

    def reps(a: int, b: int) -> Any:
        return spark.range(a, b).withColumnRenamed("id", SB.REP)

    out = SB.bootstrap_columns(
        source,
        replicates=replicates,
        seed=seed,
        ks=ks,
        min_mean_score=gates[0],
        min_pass_rate=gates[1],
        replicate_frame=reps,
        chunk=chunk,
    )
    result = pl.from_arrow(to_arrow(out.to_native()))
    assert isinstance(result, pl.DataFrame)
    return result.sort(SB.RUN_KEY)


def with_bootstrap(
    tables: Tables[Any],
    config: Config | None = None,
    *,
    replicates: int,
    seed: int = 0,
    engine: str = "polars",
    memory_limit: str | None = None,
    spark_remote: str | None = None,
) -> Tables[Any]:
    """`tables` (a `score_tables` result, or `compare_tables`' `.scored`) with run_summary
    carrying the case-bootstrap columns of docs/statistics.md#case-bootstrap: `<stat>_boot_low/high`
    for pass_rate, mean_score and each pass@k / pass^k, run_passed_prob, rank_low, rank_high,
    p_best. `replicates` Poisson(1) case-weight replicates drawn by evalframe's own generator
    from `seed` (identical on every engine); computed by `engine`, the engine that scored."""
    cfg = config if config is not None else Config()
    boot = bootstrap_frame(
        tables[S.EXECUTION_SCORES],
        cfg,
        replicates=replicates,
        seed=seed,
        engine=engine,
        memory_limit=memory_limit,
        spark_remote=spark_remote,
    )
    rs = tables[S.RUN_SUMMARY]
    rs = rs.collect() if isinstance(rs, pl.LazyFrame) else rs
    tables[S.RUN_SUMMARY] = place_columns(rs, boot)
    return tables
