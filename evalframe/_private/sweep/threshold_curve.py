"""`threshold_curve`: each run's pass rate as an exact step function of the threshold."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from evalframe._private import schema as S
from evalframe._private.config import Config
from evalframe._private.rules import verdicts
from evalframe._private.rules.boundaries import meets
from evalframe._private.rules.constants import EPS
from evalframe._private.scoring.policy import OUTCOMES_MODE, policy_by_config_id


def threshold_curve(
    execution_scores: pl.LazyFrame, config: Config | Sequence[Config]
) -> pl.LazyFrame:
    """`threshold_curve`: per (config × run) and every distinct execution score t, the
    pass rate if t were the execution threshold, and whether mean_score meets t.

    Exact: pass rate is a step function of t that only changes at score values. Passes
    decided without the threshold (errors, judge errors, required gates, outcome-gated
    executions) are held fixed; a tree whose gates read the threshold needs `sweep`.
    """
    mode = policy_by_config_id(list(config) if isinstance(config, Sequence) else [config]).select(
        S.CONFIG_ID, OUTCOMES_MODE
    )
    ex = execution_scores.join(mode, on=S.CONFIG_ID, how="left")
    ex = ex.with_columns(_fixed_pass().alias("_fixed"))
    totals = ex.group_by(_KEY).agg(
        pl.len().cast(pl.Int64).alias(S.N_EXECUTIONS),
        pl.col("_fixed").fill_null(False).sum().alias("_n_fixed_pass"),
        pl.col(S.SCORE).mean().alias(S.MEAN_SCORE),
    )
    below = (pl.col("_n_driven") - pl.col("_below")).fill_null(0)
    return (
        _steps(ex)
        .join(totals, on=_KEY, how="left")
        .with_columns((pl.col("_n_fixed_pass") + below).cast(pl.Int64).alias(S.N_PASSED))
        .select(
            *_KEY,
            S.THRESHOLD,
            S.N_EXECUTIONS,
            S.N_PASSED,
            (pl.col(S.N_PASSED) / pl.col(S.N_EXECUTIONS)).alias(S.PASS_RATE),
            S.MEAN_SCORE,
            meets(pl.col(S.MEAN_SCORE), pl.col(S.THRESHOLD))
            .fill_null(False)
            .alias(S.MEAN_SCORE_GATE),
        )
        .sort(*_KEY, S.THRESHOLD)
    )


_KEY = [S.CONFIG_ID, S.RUN_ID]


def _fixed_pass() -> pl.Expr:
    """`passed` when the threshold cannot change it (the same whether the score's band is
    pass or fail, or no band is read: no score, a required gate fired), else null."""

    def passed_if(band: str) -> pl.Expr:
        return verdicts.passed(
            pl,
            ok=pl.col(S.STATUS) != S.STATUS_ERROR,
            judge_error=pl.col(S.JUDGE_ERROR),
            verdict=pl.lit(band),
            outcomes_total=pl.col(S.OUTCOMES_TOTAL),
            outcomes_passed=pl.col(S.OUTCOMES_PASSED),
            mode=pl.col(OUTCOMES_MODE),
        )

    as_fail = passed_if(S.VERDICT_FAIL)
    no_band = pl.col(S.SCORE).is_null() | pl.col(S.REQUIRED_FAILED)
    return pl.when(no_band | (as_fail == passed_if(S.VERDICT_PASS))).then(as_fail)


def _steps(ex: pl.LazyFrame) -> pl.LazyFrame:
    """Per (config × run) and distinct score t: how many threshold-driven executions
    score below t (`_below`, null: none at or above it) of `_n_driven`."""
    driven = (
        ex.filter(pl.col("_fixed").is_null())
        .select(*_KEY, S.SCORE)
        .sort(*_KEY, S.SCORE)
        .with_columns(pl.int_range(pl.len()).over(_KEY).alias("_below"))
    )
    n_driven = driven.group_by(_KEY).agg(pl.len().alias("_n_driven"))
    thresholds = (
        ex.filter(pl.col(S.SCORE).is_not_null())
        .select(*_KEY, pl.col(S.SCORE).round(12).alias(S.THRESHOLD))
        .unique()
        .with_columns((pl.col(S.THRESHOLD) - EPS).alias("_k"))
        .sort("_k")
    )
    curve = thresholds.join_asof(
        driven.sort(S.SCORE),
        left_on="_k",
        right_on=S.SCORE,
        by=_KEY,
        strategy="forward",
        check_sortedness=False,
    )
    return curve.join(n_driven, on=_KEY, how="left")
