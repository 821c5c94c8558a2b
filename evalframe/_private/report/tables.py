"""`report_tables`: every table the report draws, computed from a dataset in one go."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import polars as pl

from evalframe._private import schema as S
from evalframe._private.config import Config
from evalframe._private.data.dataset import Dataset, load_dataset
from evalframe._private.pipeline.compare import compare_tables
from evalframe._private.pipeline.score import score_tables
from evalframe._private.pipeline.sweep import sweep_tables
from evalframe._private.report.cases import (
    CASE_DETAILS,
    CASES_PER_PAIR,
    CASES_PER_RUN,
    both_sides,
    case_details,
)
from evalframe._private.scoring.execution_scores import evaluator_scores
from evalframe._private.sweep.sweep import Grid, grid_from_dict
from evalframe._private.sweep.threshold_curve import threshold_curve

WHAT_IF_THRESHOLDS = (0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9)
WHAT_IF_OUTCOMES = ("gate", "ignore", "both")


def default_grid(config: Config) -> Grid:
    """The what-if grid around `config`: threshold 0.6–0.9 × outcomes gate/ignore/both."""
    base = json.loads(config.canonical_json())
    base.pop("threshold_override", None)  # an override would pin every threshold
    return grid_from_dict(
        {
            "base": base,
            "grid": {"threshold": list(WHAT_IF_THRESHOLDS), "outcomes": list(WHAT_IF_OUTCOMES)},
        },
        source="report what-if grid",
    )


def case_nodes(ds: Dataset, cfg: Config) -> pl.LazyFrame | Callable[[pl.DataFrame], pl.LazyFrame]:
    """evaluator_scores for the embedded cases (`case_details`' `nodes`): with the config's
    evaluators listed a node row depends on its execution alone, so only the embedded
    cases' rows are evaluated; a tree from the data needs every row."""
    if cfg.evaluators is None:
        return evaluator_scores(ds, cfg)

    def nodes(rows: pl.DataFrame) -> pl.LazyFrame:
        keys = both_sides(rows)
        if keys.is_empty():
            return evaluator_scores(ds, cfg).head(0)
        key = [S.RUN_ID, S.CASE_ID]
        few = Dataset.from_frames(
            ds.scores.join(keys.lazy(), on=key, how="semi").collect(),
            ds.executions.join(keys.lazy(), on=key, how="semi").collect(),
            source=ds.source,
        )
        return evaluator_scores(few, cfg)

    return nodes


def report_tables(
    dataset: str | Path | Dataset,
    config: Config | None = None,
    *,
    baseline: str | None = None,
    grid: Grid | None = None,
    what_if: bool = True,
    by: str | None = None,
    clamp: bool = False,
    per_pair: int = CASES_PER_PAIR,
    per_run: int = CASES_PER_RUN,
    series: str | None = None,
    bootstrap: int | None = None,
    seed: int = 0,
    replicates: str | None = None,
) -> dict[str, pl.DataFrame]:
    """execution_scores, case_summary and run_summary; with two runs or more the comparison
    tables (each run against the one before it, or against `baseline`; slice_deltas by
    `by`, default by tag when any execution has tags); with `what_if` sweep over `grid`
    (default `default_grid`) and threshold_curve; and case_details (`per_pair` and
    `per_run` embedded cases). `series`, `bootstrap`/`seed` and `replicates` as in
    `compare_tables`."""
    cfg = config if config is not None else Config()
    ds = dataset if isinstance(dataset, Dataset) else load_dataset(dataset, clamp=clamp)
    # a path is scored by the flat pass (one read of the judge rows), a Dataset by the tree
    source: str | Path | Dataset = dataset if isinstance(dataset, (str, Path)) else ds
    executions = ds.executions
    n_runs = executions.select(pl.col(S.RUN_ID).n_unique()).collect().item()
    if by is None and S.TAGS in executions.collect_schema().names():
        tags = executions.select(pl.col(S.TAGS).list.len().fill_null(0).max()).collect().item()
        by = S.SLICE_BY_TAG if tags else None
    tables: dict[str, pl.DataFrame] = {}
    if n_runs >= 2 or baseline is not None:
        compared = compare_tables(
            source,
            cfg,
            clamp=clamp,
            baseline=baseline,
            pairs=None if baseline else "consecutive",
            by=by,
            series=series,
            bootstrap=bootstrap,
            seed=seed,
            replicates=replicates,
        )
        scored = compared.scored
        assert scored is not None  # compare_tables always keeps the scores it compared
        tables.update(compared)
    else:
        scored = score_tables(source, cfg, clamp=clamp, bootstrap=bootstrap, seed=seed)
    labels = (S.JUDGE_AGREEMENT, S.AGREEMENT_CURVE)
    for name in (S.EXECUTION_SCORES, S.CASE_SUMMARY, S.RUN_SUMMARY, *labels):
        frame = scored.get(name)
        if frame is not None:
            tables[name] = frame.collect() if isinstance(frame, pl.LazyFrame) else frame
    tables[CASE_DETAILS] = case_details(
        tables,
        nodes=case_nodes(ds, cfg),
        outcomes=ds.outcomes,
        per_pair=per_pair,
        per_run=per_run,
    )
    if what_if:
        swept = sweep_tables(ds, grid if grid is not None else default_grid(cfg))
        tables[S.SWEEP] = swept[S.SWEEP]
        tables[S.THRESHOLD_CURVE] = threshold_curve(
            tables[S.EXECUTION_SCORES].lazy(), cfg
        ).collect()
    return tables
