"""`compare_tables`: every table `evalframe compare` writes — case_deltas,
evaluator_deltas, run_deltas — scoring the dataset once and comparing every pair in one
pass, on the engine asked for (the capability table refuses what it does not run):
polars here, DuckDB in one session (engines/duckdb/), Spark over one
partition pass (engines/spark/compare.py).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl

from evalframe._private import schema as S
from evalframe._private.compare.compare import compare
from evalframe._private.compare.evaluator_tests import evaluator_tests
from evalframe._private.compare.leaf_deltas import (
    evaluator_deltas_from_cases,
    leaf_case_means,
)
from evalframe._private.compare.pairs import pairs_for
from evalframe._private.config import Config
from evalframe._private.data.dataset import Dataset, load_dataset
from evalframe._private.engines import capabilities as caps
from evalframe._private.engines.duckdb.run import compare_tables_duckdb
from evalframe._private.pipeline.score import (
    check_request,
    require_spark,
    score_tables_with_leaves,
    with_noise_floor,
)
from evalframe._private.pipeline.tables import Frame, Tables
from evalframe._private.scoring.execution_scores import evaluator_scores
from evalframe._private.summaries.agreement import label_tables, with_judges_not_admitted
from evalframe._private.summaries.noise_floor import with_within_noise
from evalframe._private.summaries.slices import slice_deltas

COMPARE_NODE_COLUMNS = [S.CONFIG_ID, S.RUN_ID, S.CASE_ID, S.ATTEMPT, S.PATH, S.SCORE]
"""The evaluator_scores columns `compare` reads (the rest is never computed)."""


def compare_tables(
    dataset: str | Path | Dataset,
    config: Config | None = None,
    *,
    baseline: str | None = None,
    candidate: str | None = None,
    pairs: str | list[tuple[str, str]] | None = None,
    clamp: bool = False,
    engine: str = "polars",
    memory_limit: str | None = None,
    by: str | None = None,
    series: str | None = None,
    spark_remote: str | None = None,
    bootstrap: int | None = None,
    seed: int = 0,
    replicates: str | None = None,
) -> Tables[pl.DataFrame]:
    """Compare runs case by case (docs/compare.md): a `Tables` of case_deltas, evaluator_deltas,
    evaluator_tests and run_deltas, with `.pairs` (the pairs compared) and `.scored` (the score
    tables they came from). `pairs` is "consecutive", an explicit list of
    (baseline, candidate) run ids, or None: with `baseline` alone every other run is
    compared against it; with neither, the newest run against the one before it.
    `by` ("tag" or an executions column) adds `slice_deltas` (docs/statistics.md#slices). `series`
    (a runs column: model, target, agent) pairs runs within each of its values only (`pairs_for`).
    `engine` is "polars", "duckdb" or "spark" (`spark_remote`: Spark Connect), as for
    `score_tables`; `bootstrap`/`seed` add the case-bootstrap columns to `.scored`'s
    run_summary, as `score_tables` does. `replicates` (a runs column whose equal values mark
    reruns) adds noise_floor and run_deltas.within_noise (docs/statistics.md#noise-floor).
    Raises UnknownRunError (listing the known run ids)
    for a run not in the data."""
    cfg = config if config is not None else Config()
    choose = _chooser(pairs, baseline=baseline, candidate=candidate, series=series)
    check_request(engine, dataset, cfg, memory_limit=memory_limit, spark_remote=spark_remote)
    if bootstrap is not None:  # refused before any input is read
        from evalframe._private.pipeline.bootstrap import check_bootstrap

        check_bootstrap(bootstrap, seed)
    caps.require(engine, caps.COMPARE)
    caps.require(engine, caps.EVALUATOR_DELTAS)
    if engine == "duckdb":  # scores and compares in one DuckDB session
        tables, scored, chosen = _duckdb_compare(
            dataset, cfg, choose, clamp=clamp, memory_limit=memory_limit
        )
    elif engine == "spark":  # one Spark scoring, the deltas in the same session
        tables, scored, chosen = _spark_compare(
            dataset, cfg, choose, clamp=clamp, remote=spark_remote
        )
    else:
        tables, scored, chosen = _polars_compare(
            dataset, cfg, choose, clamp=clamp, memory_limit=memory_limit
        )
    tables[S.EVALUATOR_TESTS] = evaluator_tests(tables[S.EVALUATOR_DELTAS])
    if by is not None:
        tables[S.SLICE_DELTAS] = slice_deltas(
            scored[S.EXECUTION_SCORES].lazy(), chosen, cfg, by=by
        ).collect()
    if bootstrap is not None:
        from evalframe._private.pipeline.bootstrap import with_bootstrap

        kw = {"memory_limit": memory_limit, "spark_remote": spark_remote}
        with_bootstrap(scored, cfg, replicates=bootstrap, seed=seed, engine=engine, **kw)
    if S.JUDGE_AGREEMENT not in scored:  # the engines' score pass adds it only on polars
        label_tables(scored, dataset, cfg)
    if S.JUDGE_AGREEMENT in scored:
        agreement = scored[S.JUDGE_AGREEMENT].lazy().collect()
        tables[S.RUN_DELTAS] = with_judges_not_admitted(tables[S.RUN_DELTAS], agreement)
    if replicates is not None:
        groups = with_noise_floor(scored, replicates)
        floor = scored[S.NOISE_FLOOR]
        assert isinstance(floor, pl.DataFrame)
        tables[S.NOISE_FLOOR] = floor
        tables[S.RUN_DELTAS] = with_within_noise(tables[S.RUN_DELTAS], floor, groups)
    out = Tables(tables)
    out.pairs = chosen
    out.scored = scored
    return out


Chooser = Callable[[pl.DataFrame], list[tuple[str, str]]]
"""Picks the (baseline, candidate) pairs from a run_summary."""


def _chooser(
    pairs: str | list[tuple[str, str]] | None,
    *,
    baseline: str | None,
    candidate: str | None,
    series: str | None,
) -> Chooser:
    """The pairs asked for: an explicit list as given (compare checks the run ids), else
    `pairs_for` over the run_summary's run ids, creation times and text columns."""

    def choose(rs: pl.DataFrame) -> list[tuple[str, str]]:
        if isinstance(pairs, list):
            return [(str(b), str(c)) for b, c in pairs]
        text = [
            c for c, t in rs.schema.items() if (t == pl.String or c == series) and c != S.RUN_ID
        ]
        kept = [S.CREATED_AT] if S.CREATED_AT in rs.columns else []
        return pairs_for(
            rs.select(S.RUN_ID, *kept, *(text if series is not None else [])),
            baseline=baseline,
            candidate=candidate,
            mode=pairs,
            series=series,
        )

    return choose


def _polars_compare(
    dataset: str | Path | Dataset,
    cfg: Config,
    choose: Chooser,
    *,
    clamp: bool,
    memory_limit: str | None,
) -> tuple[dict[str, pl.DataFrame], Tables[Frame], list[tuple[str, str]]]:
    """The deltas, the score tables they came from and the pairs compared, on polars. The
    flat pass keeps its per-execution leaf partials: evaluator_deltas comes from them, not
    from a second read of the judge rows through the tree path."""
    scored, leaves = score_tables_with_leaves(dataset, cfg, clamp=clamp, memory_limit=memory_limit)
    rs, cs = scored[S.RUN_SUMMARY], scored[S.CASE_SUMMARY]
    assert isinstance(rs, pl.DataFrame)  # run_summary is always materialized
    chosen = choose(rs)
    nodes = None
    if leaves is None:  # the tree path, or batches of runs: the tree path's nodes
        ds = dataset if isinstance(dataset, Dataset) else load_dataset(dataset, clamp=clamp)
        nodes = evaluator_scores(ds, cfg, passthrough=False).select(COMPARE_NODE_COLUMNS)
        nodes = nodes.collect().lazy()
    lazy = compare(cs.lazy(), chosen, cfg, evaluator_scores=nodes, run_summary=rs.lazy())
    order = list(lazy)  # compare's table order
    if leaves is not None:
        ex = scored[S.EXECUTION_SCORES]
        assert isinstance(ex, pl.DataFrame)  # the flat pass in one batch
        per_case = leaf_case_means(leaves, ex, cfg)
        del leaves  # the per-execution leaf partials are done with
        lazy[S.EVALUATOR_DELTAS] = evaluator_deltas_from_cases(per_case, chosen, cfg).lazy()
        del per_case
    collected = pl.collect_all([lazy[n] for n in order])
    return dict(zip(order, collected, strict=True)), scored, chosen


def _duckdb_compare(
    dataset: Any,
    cfg: Config,
    choose: Chooser,
    *,
    clamp: bool,
    memory_limit: str | None,
) -> tuple[dict[str, pl.DataFrame], Tables[Frame], list[tuple[str, str]]]:
    """The deltas, the score tables they came from and the pairs compared, all from one
    DuckDB session over the dataset's files (engines/duckdb/)."""
    kwargs: dict[str, Any] = {"clamp": clamp}
    if memory_limit is not None:
        kwargs["memory_limit"] = memory_limit
    out = compare_tables_duckdb(Path(dataset), cfg, choose, **kwargs)
    scored: Tables[Frame] = Tables(out.scored or {})
    scored.clamped = out.clamped
    scored.path = "duckdb"
    return dict(out), scored, list(out.pairs or [])


def _spark_compare(
    dataset: Any,
    cfg: Config,
    choose: Chooser,
    *,
    clamp: bool,
    remote: str | None,
) -> tuple[dict[str, pl.DataFrame], Tables[Frame], list[tuple[str, str]]]:
    """The deltas, the score tables they came from and the pairs compared, from one
    Spark scoring of the dataset's files (engines/spark/compare.py)."""
    require_spark(remote)
    from evalframe._private.engines.spark.compare import compare_dataset  # pyspark: optional

    deltas, tables, chosen = compare_dataset(Path(dataset), cfg, choose, clamp=clamp, remote=remote)
    scored: Tables[Frame] = Tables(tables)
    scored.path = "spark"
    return deltas, scored, chosen
