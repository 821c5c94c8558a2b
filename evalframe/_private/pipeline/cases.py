"""`cases`: every regressed case of the compared pairs (or every failing case of a run) of a
result set, one row each, with its per-evaluator scores, the judge's labels and reasons and
the outcome checks — what `evalframe cases` prints.

The rows come from the set's own tables (case_deltas for the statuses of a comparison,
case_summary for those of a run); the per-evaluator part is recomputed from the dataset
under the set's config (the config its tables were computed with), so its numbers are
those of `evaluator_deltas` / `evaluator_scores`.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from evalframe._private import schema as S
from evalframe._private.compare.pairs import check_runs, describe_runs
from evalframe._private.config import Config, config_from_dict
from evalframe._private.data.dataset import Dataset, load_dataset
from evalframe._private.errors import UsageError
from evalframe._private.scoring.execution_scores import evaluator_scores, execution_scores
from evalframe._private.store.result_sets import (
    METADATA_CONFIG,
    ResultSet,
    ResultsNotFoundError,
    open_results,
    read_metadata,
)
from evalframe._private.summaries.case_summary import case_summary

DELTA_STATUSES = ("regression", "improvement", "unchanged", "new", "removed", "error")
"""Statuses of a case in a comparison (case_deltas.status, docs/compare.md#case_deltas)."""
RUN_STATUSES = ("fail", "pass", "flaky")
"""Statuses of a case in one run (case_summary): passed false, passed true, flaky."""
STATUSES = (*DELTA_STATUSES, *RUN_STATUSES)

EVALUATORS = "evaluators"
"""The list of per-evaluator structs of a case row."""
EVALUATOR_FIELDS: dict[str, pl.DataType] = {
    "evaluator": pl.String(),
    "baseline_score": pl.Float64(),
    "score": pl.Float64(),
    "score_delta": pl.Float64(),
    "passed": pl.Boolean(),
    "labels": pl.List(pl.String()),
    "reasons": pl.List(pl.String()),
}
OUTCOME_FIELDS: dict[str, pl.DataType] = {
    S.ATTEMPT: pl.Int64(),
    S.OUTCOME: pl.String(),
    S.PASSED: pl.Boolean(),
    S.JUSTIFICATION: pl.String(),
}
CASE_COLUMNS: dict[str, pl.DataType] = {
    S.CONFIG_ID: pl.String(),
    S.BASELINE_RUN_ID: pl.String(),
    S.RUN_ID: pl.String(),
    S.CASE_ID: pl.String(),
    S.STATUS: pl.String(),
    "baseline_score": pl.Float64(),
    S.SCORE: pl.Float64(),
    S.SCORE_DELTA: pl.Float64(),
    "baseline_passed": pl.Boolean(),
    S.PASSED: pl.Boolean(),
    EVALUATORS: pl.List(pl.Struct(EVALUATOR_FIELDS)),
    S.OUTCOMES: pl.List(pl.Struct(OUTCOME_FIELDS)),
}
"""The columns of `cases`, in order (docs/compare.md, "Every case")."""

CONFIG_TABLES = (S.CASE_DELTAS, S.CASE_SUMMARY, S.RUN_DELTAS, S.RUN_SUMMARY)
"""Tables whose metadata names the set's config (score's and compare's)."""
_KEY = [S.CONFIG_ID, S.BASELINE_RUN_ID, S.RUN_ID, S.CASE_ID]


def cases(
    dataset: str | Path,
    run: str | None = None,
    *,
    status: str = "regression",
    evaluator: str | None = None,
    results: str | Path | None = None,
    result_set: str | None = None,
) -> pl.DataFrame:
    """Every case of `status` — one row per pair × case for the statuses of a comparison
    (regression, improvement, unchanged, new, removed, error: the compared pairs of the
    result set, `run` their candidate), one row per run × case for those of a run (fail,
    pass, flaky) — with `evaluators` (per evaluator node: its mean normalized score over
    the case's attempts in `run_id` and in `baseline_run_id`, the delta, whether it passed
    in every attempt, the judge's distinct labels and reasons) and `outcomes` (every
    outcome check of the case in `run_id`, with its justification).

    Reads the latest result set of `results` (default: DATASET/results), or the set
    `result_set`. `evaluator` keeps the cases in which that evaluator fell (regression),
    rose (improvement), did not pass (fail), passed (pass), or has a score (the others).
    Rows are sorted worst first (score_delta, else score), then by case_id.

    Example: `ef.cases("runs/", "2026-11-01-v1.6", status="regression")`
    """
    if status not in STATUSES:
        raise UsageError(f"unknown case status {status!r}; hint: one of {', '.join(STATUSES)}.")
    chosen = _result_set(dataset, results, result_set)
    cfg = _set_config(chosen)
    ds = load_dataset(dataset)
    rows = _status_rows(chosen, ds, cfg, dataset, status, run)
    runs = pl.concat([rows[S.RUN_ID], rows[S.BASELINE_RUN_ID]]).drop_nulls().unique()
    per_side = _sides(rows, _evaluator_rows(ds, cfg, runs.to_list())).collect()
    if evaluator is not None:
        rows = _with_evaluator(rows, per_side, evaluator, status, cfg)
    listed = (
        per_side.sort(
            [*_KEY, "score_delta" if status in DELTA_STATUSES else "score", "evaluator"],
            nulls_last=True,
        )
        .group_by(_KEY, maintain_order=True)
        .agg(pl.struct(list(EVALUATOR_FIELDS)).alias(EVALUATORS))
    )
    out = (
        rows.join(listed, on=_KEY, how="left", nulls_equal=True)
        .join(_outcome_lists(ds, runs), on=[S.RUN_ID, S.CASE_ID], how="left")
        .with_columns(
            pl.col(EVALUATORS).fill_null(pl.lit([], dtype=CASE_COLUMNS[EVALUATORS])),
            pl.col(S.OUTCOMES).fill_null(pl.lit([], dtype=CASE_COLUMNS[S.OUTCOMES])),
        )
        .sort(S.SCORE_DELTA, S.SCORE, S.RUN_ID, S.CASE_ID, S.BASELINE_RUN_ID, nulls_last=True)
    )
    return out.select(pl.col(c).cast(t) for c, t in CASE_COLUMNS.items())


def _status_rows(
    chosen: ResultSet,
    ds: Dataset,
    cfg: Config,
    dataset: str | Path,
    status: str,
    run: str | None,
) -> pl.DataFrame:
    """The cases of `status`: from the set's case_deltas (a comparison's statuses), else
    from its case_summary or, without one, from a case_summary under the set's config."""
    if status in DELTA_STATUSES:
        if S.CASE_DELTAS not in chosen.tables:
            raise ResultsNotFoundError(
                f"result set {chosen.set_id} has no {S.CASE_DELTAS} (it has "
                f"{', '.join(chosen.tables) or 'no table'}); status {status!r} is a "
                f"comparison's; hint: run `evalframe compare {dataset}` first (with the same "
                "config), or pick a set with --result-set (`evalframe results` lists them)."
            )
        return _rows(chosen.read(S.CASE_DELTAS), S.CASE_DELTAS, status, run, chosen.set_id)
    summary = (
        chosen.read(S.CASE_SUMMARY)
        if S.CASE_SUMMARY in chosen.tables
        else case_summary(execution_scores(ds, cfg), cfg).collect()
    )
    return _rows(summary, S.CASE_SUMMARY, status, run, chosen.set_id)


def _with_evaluator(
    rows: pl.DataFrame, per_side: pl.DataFrame, evaluator: str, status: str, cfg: Config
) -> pl.DataFrame:
    """The rows in which `evaluator` fell, rose, failed, passed or has a score (by status)."""
    known = per_side["evaluator"].unique().sort().to_list()
    if evaluator not in known:
        raise UsageError(
            f"unknown evaluator {evaluator!r}; evaluators of config {cfg.config_id}: "
            f"{describe_runs(known)}."
        )
    hits = per_side.filter((pl.col("evaluator") == evaluator) & _evaluator_condition(status))
    return rows.join(hits.select(_KEY).unique(), on=_KEY, how="semi", nulls_equal=True)


def _outcome_lists(ds: Dataset, runs: pl.Series) -> pl.DataFrame:
    """Every outcome check of each case of `runs`, as a list per (run, case)."""
    return (
        ds.outcomes.filter(pl.col(S.RUN_ID).is_in(runs.implode()))
        .sort(S.RUN_ID, S.CASE_ID, S.ATTEMPT, S.PASSED, S.OUTCOME, nulls_last=True)
        .group_by(S.RUN_ID, S.CASE_ID, maintain_order=True)
        .agg(pl.struct(list(OUTCOME_FIELDS)).alias(S.OUTCOMES))
        .collect()
    )


def _result_set(
    dataset: str | Path, results: str | Path | None, result_set: str | None
) -> ResultSet:
    where = open_results(results if results is not None else dataset)
    sets = where.sets()
    if not sets:
        raise ResultsNotFoundError(
            f"no result sets for {dataset}; hint: run `evalframe compare {dataset}` (for "
            f"regressions) or `evalframe score {dataset}` (for failing cases) first."
        )
    if result_set is None:
        return sets[-1]
    for s in sets:
        if s.set_id == result_set:
            return s
    raise ResultsNotFoundError(
        f"no result set {result_set!r} (sets: {', '.join(s.set_id for s in sets)}); hint: "
        "`evalframe results DATASET` lists them."
    )


def _set_config(chosen: ResultSet) -> Config:
    """The config the set's tables were computed with (their Parquet metadata)."""
    tables = chosen.tables
    table = next((t for t in CONFIG_TABLES if t in tables), None)
    raw = read_metadata(tables[table]).get(METADATA_CONFIG) if table is not None else None
    data = json.loads(raw) if raw else None
    if not isinstance(data, dict):
        raise ResultsNotFoundError(
            f"result set {chosen.set_id} holds no table of one config's score or compare "
            f"(it has {', '.join(tables) or 'no table'}: a sweep's, or tables evalframe did "
            "not write); hint: run `evalframe compare` or `evalframe score` with the config "
            "you want."
        )
    return config_from_dict(data, source=f"result set {chosen.set_id}")


def _rows(
    table: pl.DataFrame, name: str, status: str, run: str | None, set_id: str
) -> pl.DataFrame:
    """The case rows of `status` (and `run`) with the key and headline columns of
    CASE_COLUMNS (baseline columns null for a run's statuses)."""
    if name == S.CASE_DELTAS:
        frame = table.rename(
            {
                S.CANDIDATE_RUN_ID: S.RUN_ID,
                "candidate_score": S.SCORE,
                "candidate_passed": S.PASSED,
            }
        )
        if run is not None:
            known = pl.concat([frame[S.RUN_ID], frame[S.BASELINE_RUN_ID]]).unique().sort()
            check_runs([run], known.to_list())
            if run not in frame[S.RUN_ID]:
                pairs = frame.select(S.BASELINE_RUN_ID, S.RUN_ID).unique(maintain_order=True)
                shown = [f"{b} → {c}" for b, c in pairs.iter_rows()]
                raise UsageError(
                    f"run {run!r} is no candidate of the pairs compared in result set "
                    f"{set_id} ({describe_runs(shown)}); hint: pick a candidate run, or "
                    f"compare it: `evalframe compare DATASET --candidate {run}`."
                )
        keep = pl.col(S.STATUS) == status
    else:
        if run is not None:
            check_runs([run], table[S.RUN_ID].unique().sort().to_list())
        frame = table.with_columns(
            pl.lit(None, dtype=pl.String()).alias(S.BASELINE_RUN_ID),
            pl.lit(None, dtype=pl.Float64()).alias("baseline_score"),
            pl.lit(None, dtype=pl.Float64()).alias(S.SCORE_DELTA),
            pl.lit(None, dtype=pl.Boolean()).alias("baseline_passed"),
            pl.lit(status).alias(S.STATUS),
        )
        keep = {
            "fail": pl.col(S.PASSED).not_(),
            "pass": pl.col(S.PASSED),
            "flaky": pl.col(S.FLAKY),
        }[status].fill_null(False)
    if run is not None:
        keep = keep & (pl.col(S.RUN_ID) == run)
    columns = [c for c in CASE_COLUMNS if c not in (EVALUATORS, S.OUTCOMES)]
    return frame.filter(keep).select(columns)


def _evaluator_rows(ds: Dataset, cfg: Config, runs: list[str]) -> pl.LazyFrame:
    """Per run × case × evaluator node (the root left out): the mean normalized score over
    the case's attempts, passed in every attempt, the distinct labels and reasons."""
    nodes = evaluator_scores(ds, cfg).filter(pl.col(S.RUN_ID).is_in(runs) & (pl.col(S.PATH) != ""))
    return (
        nodes.sort(S.RUN_ID, S.CASE_ID, S.PATH, S.ATTEMPT)
        .group_by(S.RUN_ID, S.CASE_ID, S.PATH, maintain_order=True)
        .agg(
            pl.col(S.SCORE).mean(),
            pl.col(S.PASSED).all(ignore_nulls=False).alias(S.PASSED),
            pl.col(S.LABEL).drop_nulls().unique(maintain_order=True).alias("labels"),
            pl.col(S.REASON).drop_nulls().unique(maintain_order=True).alias("reasons"),
        )
    )


def _sides(rows: pl.DataFrame, nodes: pl.LazyFrame) -> pl.LazyFrame:
    """One row per case row × evaluator node: the run's side (score, passed, labels,
    reasons) beside the baseline's score, and the delta."""
    key = rows.lazy().select(_KEY)
    run_side = key.join(nodes, on=[S.RUN_ID, S.CASE_ID], how="inner")
    base_side = key.join(
        nodes.select(
            pl.col(S.RUN_ID).alias(S.BASELINE_RUN_ID),
            S.CASE_ID,
            S.PATH,
            pl.col(S.SCORE).alias("baseline_score"),
        ),
        on=[S.BASELINE_RUN_ID, S.CASE_ID],
        how="inner",
    )
    return (
        run_side.join(base_side, on=[*_KEY, S.PATH], how="full", coalesce=True, nulls_equal=True)
        .rename({S.PATH: "evaluator"})
        .with_columns((pl.col(S.SCORE) - pl.col("baseline_score")).alias("score_delta"))
        .select(*_KEY, *EVALUATOR_FIELDS)
    )


def _evaluator_condition(status: str) -> pl.Expr:
    """Whether the evaluator is part of the story of a case of `status` (--evaluator)."""
    if status == "regression":
        return pl.col("score_delta") < 0
    if status == "improvement":
        return pl.col("score_delta") > 0
    if status == "fail":
        return pl.col("passed").not_().fill_null(False)
    if status == "pass":
        return pl.col("passed").fill_null(False)
    return pl.col("score").is_not_null() | pl.col("baseline_score").is_not_null()


def difficult_cases(
    dataset: str | Path, *, results: str | Path | None = None, result_set: str | None = None
) -> pl.DataFrame:
    """The cases `case_difficulty` flags (never_passes, always_passes,
    negative_discrimination: docs/statistics.md#case-difficulty) from the latest result set
    that holds the table (`evalframe trend` writes it), or from the set `result_set`:
    config_id, series, case_id, flag, runs, passes, difficulty, discrimination, the flags
    in that order, then series and case_id."""
    where = open_results(results if results is not None else dataset)
    sets = [s for s in where.sets() if S.CASE_DIFFICULTY in s.tables]
    if result_set is not None:
        sets = [s for s in sets if s.set_id == result_set]
    if not sets:
        which = f"result set {result_set!r}" if result_set is not None else f"{dataset}"
        raise ResultsNotFoundError(
            f"no case_difficulty table in the results of {which}; hint: run "
            f"`evalframe trend {dataset}` first."
        )
    table = pl.read_parquet(sets[-1].tables[S.CASE_DIFFICULTY])
    order = {S.FLAG_NEVER: 0, S.FLAG_ALWAYS: 1, S.FLAG_NEGATIVE: 2}
    return (
        table.filter(pl.col(S.FLAG).is_not_null())
        .sort(pl.col(S.FLAG).replace_strict(order, default=3), S.SERIES, S.CASE_ID)
        .select(
            S.CONFIG_ID,
            S.SERIES,
            S.CASE_ID,
            S.FLAG,
            S.N_RUNS,
            S.PASSES,
            S.DIFFICULTY,
            S.DISCRIMINATION,
        )
    )
