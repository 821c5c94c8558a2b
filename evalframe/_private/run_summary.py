"""`run_summary`: one row per (config × run): rates, uncertainty, latency, gates (SPEC §5)."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from evalframe._private import schema as S
from evalframe._private.case_summary import SCORE_SUM, case_passed
from evalframe._private.case_summary import case_stats as _case_stats
from evalframe._private.config import Config
from evalframe._private.policy import ATTEMPT_PASSED, as_configs, policy_by_config_id
from evalframe._private.tree_eval import meets

COUNT_COLUMNS = [
    S.N_EXECUTIONS,
    S.CASES,
    S.PASSED,
    S.FAILED,
    S.ERRORED,
    S.UNSCORED,
    S.N_PASS,
    S.N_BORDERLINE,
    S.N_FAIL,
]
RUN_COLUMNS = [
    S.CONFIG_ID,
    S.RUN_ID,
    *COUNT_COLUMNS,
    S.PASS_RATE,
    S.MEAN_SCORE,
    S.CASE_PASS_RATE,
    S.PASS_RATE_SE,
    S.MEAN_SCORE_SE,
    S.LATENCY_MEAN,
    S.LATENCY_P50,
    S.LATENCY_P95,
    S.LATENCY_MAX,
    S.COST_USD,
    S.INPUT_TOKENS,
    S.OUTPUT_TOKENS,
    S.MIN_MEAN_SCORE,
    S.MIN_PASS_RATE,
    S.MEAN_SCORE_GATE,
    S.PASS_RATE_GATE,
    S.RUN_PASSED,
]
RUN_KEY = (S.CONFIG_ID, S.RUN_ID)


def _sum_or_null(col: str) -> pl.Expr:
    return pl.when(pl.col(col).is_not_null().any()).then(pl.col(col).sum()).alias(col)


def _clustered_se(sx: str, nc: str, keys: Sequence[str]) -> tuple[pl.Expr, pl.Expr]:
    """Row-level term and its final expression for the case-clustered standard error.

    Over per-case sums `sx` of the values and counts `nc`:
    se = sqrt(G/(G-1) · Σ_c (sx_c − nc_c · x̄)²) / n with n = Σ nc, x̄ = Σ sx / n and G the
    cases with nc > 0; null when G < 2 (SPEC §5). Returns (term per case, aggregate).
    """
    mean = pl.col(sx).sum().over(keys) / pl.col(nc).sum().over(keys)
    term = pl.when(pl.col(nc) > 0).then((pl.col(sx) - pl.col(nc) * mean) ** 2)
    g = (pl.col(nc) > 0).sum()
    n = pl.col(nc).sum()
    se = pl.when(g >= 2).then((g / (g - 1) * pl.col(f"_ss_{sx}").sum()).sqrt() / n)
    return term.alias(f"_ss_{sx}"), se


def execution_aggs() -> list[pl.Expr]:
    """Per-run aggregations over execution rows that depend on the config."""
    status, verdict, passed = pl.col(S.STATUS), pl.col(S.VERDICT), pl.col(S.PASSED)
    errored = status == S.STATUS_ERROR
    unscored = verdict == S.VERDICT_UNSCORED
    return [
        pl.len().cast(pl.Int64).alias(S.N_EXECUTIONS),
        passed.sum().cast(pl.Int64).alias(S.PASSED),
        (~passed & ~errored & ~unscored).sum().cast(pl.Int64).alias(S.FAILED),
        errored.sum().cast(pl.Int64).alias(S.ERRORED),
        unscored.sum().cast(pl.Int64).alias(S.UNSCORED),
        (verdict == S.VERDICT_PASS).sum().cast(pl.Int64).alias(S.N_PASS),
        (verdict == S.VERDICT_BORDERLINE).sum().cast(pl.Int64).alias(S.N_BORDERLINE),
        (verdict == S.VERDICT_FAIL).sum().cast(pl.Int64).alias(S.N_FAIL),
        passed.cast(pl.Float64).mean().alias(S.PASS_RATE),
        pl.col(S.SCORE).mean().alias(S.MEAN_SCORE),
    ]


def latency_aggs() -> list[pl.Expr]:
    """Per-run aggregations that do not depend on the config (latency, cost, tokens)."""
    lat = pl.col(S.LATENCY_MS)
    return [
        lat.mean().alias(S.LATENCY_MEAN),
        lat.quantile(0.5, interpolation="linear").alias(S.LATENCY_P50),
        lat.quantile(0.95, interpolation="linear").alias(S.LATENCY_P95),
        lat.max().alias(S.LATENCY_MAX),
        _sum_or_null(S.COST_USD),
        _sum_or_null(S.INPUT_TOKENS),
        _sum_or_null(S.OUTPUT_TOKENS),
    ]


def case_level(per_case: pl.LazyFrame, keys: Sequence[str]) -> pl.LazyFrame:
    """cases, case_pass_rate and both clustered SEs per `keys` from per-case rows with
    attempts `_n`, passed `_k`, scored `_ns`, score sum `_ss` and the ATTEMPT_PASSED rule."""
    pass_term, pass_se = _clustered_se("_k", "_n", keys)
    score_term, score_se = _clustered_se("_ss", "_ns", keys)
    passed = case_passed(pl.col("_n"), pl.col("_k"))
    return (
        per_case.with_columns(pass_term, score_term, passed.alias("_case_passed"))
        .group_by(*keys)
        .agg(
            pl.len().cast(pl.Int64).alias(S.CASES),
            pl.col("_case_passed").cast(pl.Float64).mean().alias(S.CASE_PASS_RATE),
            pass_se.alias(S.PASS_RATE_SE),
            score_se.alias(S.MEAN_SCORE_SE),
        )
    )


def run_summary(
    execution_scores: pl.LazyFrame,
    config: Config | Sequence[Config] | None = None,
    *,
    runs: pl.LazyFrame | None = None,
    case_stats: pl.LazyFrame | None = None,
) -> pl.LazyFrame:
    """One row per (config × run) from `execution_scores`.

    `runs` (the dataset's runs table) adds rows for runs with no executions and carries
    run metadata (created_at, label, ...) onto each row. `case_stats` (from
    `case_summary.case_stats`) skips grouping the executions by case again.
    """
    configs = as_configs(config)
    policy = policy_by_config_id(configs)
    ex = execution_scores
    base = ex.group_by(RUN_KEY).agg(*execution_aggs(), *latency_aggs())
    # one pass per case serves cases, case_pass_rate and both clustered SEs
    stats = _case_stats(ex) if case_stats is None else case_stats
    per_case = stats.select(
        *RUN_KEY,
        pl.col(S.ATTEMPTS).cast(pl.Float64).alias("_n"),
        pl.col(S.N_PASSED).cast(pl.Float64).alias("_k"),
        pl.col(S.SCORED).cast(pl.Float64).alias("_ns"),
        pl.col(SCORE_SUM).alias("_ss"),
    ).join(policy.select(S.CONFIG_ID, ATTEMPT_PASSED), on=S.CONFIG_ID, how="left")
    summary = base.join(case_level(per_case, RUN_KEY), on=RUN_KEY, how="left")
    return finish_run_summary(summary, configs, runs)


def finish_run_summary(
    summary: pl.LazyFrame, configs: Sequence[Config], runs: pl.LazyFrame | None
) -> pl.LazyFrame:
    """Empty runs and metadata from the runs table, the two gates, column order, sort."""
    if runs is not None:
        summary = _with_runs_table(summary, runs, configs)
    gates = policy_by_config_id(configs).select(S.CONFIG_ID, S.MIN_MEAN_SCORE, S.MIN_PASS_RATE)
    summary = summary.join(gates, on=S.CONFIG_ID, how="left").with_columns(
        meets(pl.col(S.MEAN_SCORE), pl.col(S.MIN_MEAN_SCORE))
        .fill_null(False)
        .alias(S.MEAN_SCORE_GATE),
        meets(pl.col(S.PASS_RATE), pl.col(S.MIN_PASS_RATE))
        .fill_null(False)
        .alias(S.PASS_RATE_GATE),
    )
    summary = summary.with_columns(
        (pl.col(S.MEAN_SCORE_GATE) & pl.col(S.PASS_RATE_GATE)).alias(S.RUN_PASSED)
    )
    names = summary.collect_schema().names()
    extra = [c for c in names if c not in RUN_COLUMNS]
    order = [S.CONFIG_ID, S.CREATED_AT, S.RUN_ID] if S.CREATED_AT in names else list(RUN_KEY)
    return summary.select(*RUN_COLUMNS, *extra).sort(order, nulls_last=True)


def _with_runs_table(
    summary: pl.LazyFrame, runs: pl.LazyFrame, configs: Sequence[Config]
) -> pl.LazyFrame:
    """Add zero rows for runs without executions and carry the runs table's columns."""
    ids = pl.LazyFrame({S.CONFIG_ID: list(dict.fromkeys(c.config_id for c in configs))})
    empty = (
        runs.select(S.RUN_ID)
        .join(ids, how="cross")
        .join(summary.select(RUN_KEY), on=RUN_KEY, how="anti")
        .with_columns(pl.lit(0, dtype=pl.Int64).alias(c) for c in COUNT_COLUMNS)
    )
    meta = runs.rename({c: f"run_{c}" for c in (S.CONFIG,) if c in runs.collect_schema()})
    return pl.concat([summary, empty], how="diagonal_relaxed").join(meta, on=S.RUN_ID, how="left")
