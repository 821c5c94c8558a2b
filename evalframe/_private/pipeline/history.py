"""`history_tables`: series_trend and case_history of a dataset (docs/history.md), one result set.

The chosen engine scores the dataset (`score_tables`) and the history rules run on that
engine's run_summary and case_summary (summaries/history.py):

- `engine="polars"`: polars LazyFrames, natively;
- `engine="duckdb"`: the DuckDB engine's finished run_summary and case_summary as
  relations of a DuckDB connection, the rules through narwhals (DuckDB computes them);
- `engine="spark"`: the Spark DataFrames of one scoring (`scored_dataset`), the rules
  through narwhals, both tables collected in one Spark job.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from evalframe._private import schema as S
from evalframe._private.compare.pairs import check_series, pairs_for, series_note
from evalframe._private.config import Config
from evalframe._private.data.dataset import Dataset, open_tables
from evalframe._private.errors import UsageError
from evalframe._private.pipeline.score import check_request, require_spark, score_tables
from evalframe._private.pipeline.tables import Tables
from evalframe._private.summaries.difficulty import difficulty_tables
from evalframe._private.summaries.history import case_history, series_trend


def _runs(dataset: Any) -> pl.LazyFrame | None:
    """The dataset's runs table (None without one)."""
    return dataset.runs if isinstance(dataset, Dataset) else open_tables(dataset).get(S.RUNS)


def series_mix_note(dataset: Any, series: str | None) -> str | None:
    """Without `series`: the note `compare` gives when consecutive runs of the history differ
    in a column that usually tells series apart (model, target, ...); None otherwise."""
    runs = _runs(dataset)
    if series is not None or runs is None:
        return None
    lead = "one trend is fitted across runs of different series (consecutive runs)"
    return series_note(runs, pairs_for(runs, mode="consecutive"), lead, "for a trend per series")


MAX_WINDOW = 2**31 - 1
"""The largest --window: more runs than any history holds."""


def check_window(window: int | None) -> None:
    if window is not None and (isinstance(window, bool) or not 1 <= window <= MAX_WINDOW):
        raise UsageError(
            f"--window must be a number of runs from 1 to {MAX_WINDOW:,}, not {window!r}."
        )


def history_tables(
    dataset: str | Path | Dataset,
    config: Config | None = None,
    *,
    series: str | None = None,
    window: int | None = None,
    clamp: bool = False,
    engine: str = "polars",
    memory_limit: str | None = None,
    spark_remote: str | None = None,
) -> Tables[pl.DataFrame]:
    """The history of a dataset's runs (docs/history.md#trend): a `Tables` of series_trend (one row
    per config × series: the weighted trend of pass_rate and mean_score over the runs, the
    change point of the pass rate) and case_history (one row per config × series × case:
    runs, flips, flip_rate, the shrunk pass rate, quarantine); on polars and DuckDB also
    case_difficulty and run_ability over every run of each series, whatever `window`
    (docs/statistics.md#case-difficulty).

    `series` (a runs column: model, target, agent) makes each of its values a series of
    its own; `window` keeps the last N runs of each series. Thresholds come from the
    config's `history:` section. `engine` is "polars", "duckdb" or "spark", as for
    `score_tables`; the history is computed by that engine."""
    cfg = config if config is not None else Config()
    check_window(window)
    check_request(engine, dataset, cfg, memory_limit=memory_limit, spark_remote=spark_remote)
    runs = _runs(dataset)
    check_series(pl.Schema() if runs is None else runs.collect_schema(), series)
    opts = _Options(series, window, cfg.history.min_runs, cfg.history.flaky_flip_rate)
    if engine == "spark":
        tables = _spark(dataset, cfg, opts, clamp=clamp, remote=spark_remote)
    else:
        scored = score_tables(dataset, cfg, clamp=clamp, engine=engine, memory_limit=memory_limit)
        rs, cs = scored[S.RUN_SUMMARY].lazy(), scored[S.CASE_SUMMARY].lazy()
        if engine == "duckdb":
            tables = _duckdb(rs, cs, opts)
        else:
            trend, cases = _history(rs, cs, opts)
            tables = dict(zip(S.HISTORY_TABLES, pl.collect_all([trend, cases]), strict=True))
        tables |= difficulty_tables(cs, rs, series=series)  # every run of each series
    out: Tables[pl.DataFrame] = Tables(tables)
    out.path = engine
    out.notes = [n for n in [series_mix_note(dataset, series)] if n]
    return out


@dataclass(frozen=True)
class _Options:
    series: str | None
    window: int | None
    min_runs: int
    flaky_flip_rate: float


def _history(run_summary: Any, case_summary: Any, opts: _Options) -> tuple[Any, Any]:
    """(series_trend, case_history) in the frames' own engine."""
    trend = series_trend(run_summary, series=opts.series, window=opts.window)
    cases = case_history(
        case_summary,
        run_summary,
        series=opts.series,
        window=opts.window,
        min_runs=opts.min_runs,
        flaky_flip_rate=opts.flaky_flip_rate,
    )
    return trend, cases


def _duckdb(rs: pl.LazyFrame, cs: pl.LazyFrame, opts: _Options) -> dict[str, pl.DataFrame]:
    """The history rules in DuckDB (through narwhals) over the DuckDB engine's tables."""
    import duckdb

    con = duckdb.connect()
    try:
        runs = con.from_arrow(rs.collect().to_arrow())
        cases = con.from_arrow(cs.collect().to_arrow())
        out = {}
        for name, rel in zip(S.HISTORY_TABLES, _history(runs, cases, opts), strict=True):
            frame = pl.from_arrow(rel.arrow())
            assert isinstance(frame, pl.DataFrame)
            out[name] = frame
        return out
    finally:
        con.close()


def _spark(
    dataset: Any, cfg: Config, opts: _Options, *, clamp: bool, remote: str | None
) -> dict[str, pl.DataFrame]:
    require_spark(remote)
    from evalframe._private.engines.spark.run import (  # pyspark: optional
        collect_tables,
        scored_dataset,
    )

    with scored_dataset(Path(dataset), cfg, clamp=clamp, remote=remote) as scored:
        trend, cases = _history(scored[S.RUN_SUMMARY], scored[S.CASE_SUMMARY], opts)
        return collect_tables({S.SERIES_TREND: trend, S.CASE_HISTORY: cases})
