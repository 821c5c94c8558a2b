"""`power_plan`: how many cases a suite needs to see a change — what `evalframe plan` prints
(the formulas: stats/power.py `plan_rows`, docs/statistics.md#power)."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from evalframe._private import schema as S
from evalframe._private.compare.pairs import check_runs, pairs_for
from evalframe._private.config import Config
from evalframe._private.data.dataset import Dataset
from evalframe._private.pipeline.score import score_tables
from evalframe._private.stats.power import plan_rows


def power_plan(
    dataset: Dataset | str | Path,
    config: Config | None = None,
    *,
    detect: float = 0.03,
    run: str | None = None,
) -> pl.DataFrame:
    """Per metric (pass_rate, mean_score) of one run (`run`, default the newest by
    created_at, else run_id): the cases it has, the per-case SD σ_c its clustered standard
    error implies, the smallest change its cases see now (`mde`, α 0.05, power 0.8), the
    cases a suite needs to see a change of `detect` (on 0-1), and the run mean's standard
    error now and with twice the cases or twice the attempts (from variance_components).
    UnknownRunError names the runs when `run` is not one of them.

    Example: `ef.power_plan("runs/", detect=0.03, run="2026-11-01-v1.6")`
    """
    scored = score_tables(dataset, config if config is not None else Config())
    summary = scored[S.RUN_SUMMARY]
    variance = scored[S.VARIANCE_COMPONENTS]
    assert isinstance(summary, pl.DataFrame) and isinstance(variance, pl.DataFrame)
    summary = summary.filter(pl.col(S.EXECUTIONS) > 0)
    if run is None:
        order = summary.select(S.RUN_ID, *({S.CREATED_AT} & set(summary.columns)))
        run = pairs_for(order)[-1][1] if summary.height >= 2 else summary[S.RUN_ID][0]
    check_runs([run], summary[S.RUN_ID].to_list())
    return plan_rows(summary.filter(pl.col(S.RUN_ID) == run), detect, variance)
