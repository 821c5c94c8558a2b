"""`run_summary`: one row per (config × run): rates, uncertainty, latency, gates
(docs/scoring.md#runs)."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from evalframe._private import schema as S
from evalframe._private.config import Config
from evalframe._private.rules import run_gates, runs
from evalframe._private.scoring.policy import ATTEMPT_PASSED, as_configs, policy_by_config_id
from evalframe._private.summaries.case_summary import case_stats as _case_stats

COUNT_COLUMNS = S.COUNT_COLUMNS
RUN_COLUMNS = S.RUN_COLUMNS
RUN_KEY = (S.CONFIG_ID, S.RUN_ID)


def pass_k_columns(ks: Sequence[int]) -> list[str]:
    """run_summary columns of attempts.k, in order: per k pass_at_k, its se, pass_all_k, its se."""
    return [
        name for k in ks for col in (S.pass_at(k), S.pass_all(k)) for name in (col, S.se_of(col))
    ]


def case_level(per_case: pl.LazyFrame, keys: Sequence[str], ks: Sequence[int] = ()) -> pl.LazyFrame:
    """cases, case_pass_rate and both clustered SEs per `keys` (`rules.runs`) from per-case
    rows (`rules.runs.per_case_columns`) with the ATTEMPT_PASSED rule; with `ks`, pass@k /
    pass^k and their SEs for each k (docs/statistics.md#passk-and-passk)."""
    return (
        per_case.with_columns(*runs.case_level_terms(pl, keys, pl.col(ATTEMPT_PASSED)))
        .group_by(*keys)
        .agg(*runs.case_level_aggregations(pl), *runs.pass_k_aggregations(pl, ks))
    )


def with_ppi_columns(run_summary: pl.DataFrame, ppi: pl.DataFrame) -> pl.DataFrame:
    """run_summary with the columns of a labeled dataset (docs/judges.md#corrected-pass-rate):
    n_labeled (0 for a run without labels), ppi_pass_rate, its se and 95 % interval (null there),
    from the rows of `summaries.agreement.ppi_table`; placed after the pass@k columns, before the
    runs table's metadata."""
    names = run_summary.columns
    pass_k = [c for c in names if c.startswith(("pass_at_", "pass_all_"))]
    head = [c for c in names if c in RUN_COLUMNS or c in pass_k]
    rest = [c for c in names if c not in head and c not in S.PPI_COLUMNS]
    out = run_summary.drop(c for c in S.PPI_COLUMNS if c in names).join(
        ppi, on=RUN_KEY, how="left", maintain_order="left"
    )
    out = out.with_columns(pl.col(S.N_LABELED).fill_null(0).cast(pl.Int64))
    return out.select(*head, *S.PPI_COLUMNS, *rest)


def configured_ks(configs: Sequence[Config]) -> list[int]:
    """Every k any of the configs asks for (attempts.k), ascending."""
    return sorted({k for c in configs for k in c.attempts.k})


def mask_unasked_ks(summary: pl.LazyFrame, configs: Sequence[Config]) -> pl.LazyFrame:
    """Null the pass@k columns of configs that did not list that k (several configs)."""
    ks = configured_ks(configs)
    masks = []
    for k in ks:
        asked = sorted({c.config_id for c in configs if k in c.attempts.k})
        if len(asked) < len({c.config_id for c in configs}):
            keep = pl.col(S.CONFIG_ID).is_in(asked)
            masks += [pl.when(keep).then(pl.col(c)).alias(c) for c in pass_k_columns([k])]
    return summary.with_columns(masks) if masks else summary


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
    summary = summarize(execution_scores, configs, RUN_KEY, case_stats=case_stats)
    return finish_run_summary(summary, configs, runs)


def summarize(
    execution_scores: pl.LazyFrame,
    configs: Sequence[Config],
    keys: Sequence[str],
    *,
    case_stats: pl.LazyFrame | None = None,
) -> pl.LazyFrame:
    """The run_summary statistics (before gates and ordering) per `keys`: (config_id,
    run_id) for run_summary, plus a slice value for slice_summary. `case_stats` must be
    grouped by the same keys plus case_id."""
    policy = policy_by_config_id(configs)
    ex = execution_scores
    extra = [c for c in keys if c not in RUN_KEY]
    base = ex.group_by(*keys).agg(*runs.execution_aggregations(pl), *runs.cost_aggregations(pl))
    # one pass per case serves cases, case_pass_rate, both clustered SEs and pass@k
    stats = _case_stats(ex, by=extra) if case_stats is None else case_stats
    per_case = stats.select(*keys, *runs.per_case_columns(pl)).join(
        policy.select(S.CONFIG_ID, ATTEMPT_PASSED), on=S.CONFIG_ID, how="left"
    )
    levels = case_level(per_case, keys, configured_ks(configs))
    summary = base.join(levels, on=list(keys), how="left", nulls_equal=True)
    return mask_unasked_ks(summary, configs)


def finish_run_summary(
    summary: pl.LazyFrame, configs: Sequence[Config], runs: pl.LazyFrame | None
) -> pl.LazyFrame:
    """Empty runs and metadata from the runs table, the gates, column order, sort."""
    if runs is not None:
        summary = _with_runs_table(summary, runs, configs)
    limits = [*run_gates.GATES]
    gates = policy_by_config_id(configs).select(S.CONFIG_ID, *limits)
    summary = summary.join(gates, on=S.CONFIG_ID, how="left")
    for step in run_gates.pass_rate_lower(pl):
        summary = summary.with_columns(*step)
    summary = summary.drop(run_gates.N_EFF).with_columns(
        *run_gates.gate_columns(pl, *(pl.col(c) for c in limits))
    )
    failures = pl.concat_list(
        [pl.when(failed).then(pl.lit(key)) for key, failed in run_gates.failed_gates(pl).items()]
    ).list.drop_nulls()
    summary = summary.with_columns(run_gates.run_passed(pl), failures.alias(S.RUN_GATE_FAILURES))
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
