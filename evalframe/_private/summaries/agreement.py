"""`judge_agreement`, `agreement_curve` and the prediction-powered pass rate (docs/judges.md).

The statistics are the rule layer's (`rules/agreement.py`); this module builds the rows
they run over, in polars:

- `labeled_decisions`: one row per label of a *judged* execution (status ok, verdict not
  "unscored") — the judge's decision (the leaf passes, for an evaluator; `passed`, for the
  execution verdict), the label, and both normalized scores;
- `judge_agreement_table`: confusion counts, agreement, κ, sensitivity, specificity,
  score MAE / bias per config × run × evaluator × rater, one Krippendorff α row per config
  × run × evaluator (rater null), and best_kappa_threshold from the curve;
- `agreement_curve_table`: κ, sensitivity and specificity at every distinct judge score
  as the threshold, in one pass: counts per distinct score, reverse cumulative sums, and
  an as-of join that applies "s meets t" (s ≥ t − EPS), as `threshold_curve` does;
- `ppi_table`: n_labeled and the corrected pass rate of each run, with its se and 95 %
  interval, which `run_summary.with_ppi_columns` joins onto run_summary.

`label_tables` is what `score` calls: the three results for a dataset (path or Dataset)
that has a labels table, nothing otherwise. `judge_agreement` is the public function
(`evalframe.judge_agreement`, `evalframe agree`).
"""

from __future__ import annotations

from collections.abc import MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import polars as pl

from evalframe._private import schema as S
from evalframe._private.config import Config
from evalframe._private.data.dataset import Dataset, load_dataset, open_labels, open_tables
from evalframe._private.data.validate import LABEL_SCALE, typed_frame, validate_labels
from evalframe._private.errors import UsageError, ValidationError
from evalframe._private.rules import agreement as rules
from evalframe._private.rules.boundaries import meets
from evalframe._private.rules.constants import EPS, Z_95
from evalframe._private.rules.normalize import normalized_score
from evalframe._private.scoring.execution_scores import execution_scores
from evalframe._private.scoring.tree import build_tree
from evalframe._private.summaries.run_summary import run_summary, with_ppi_columns

JUDGE, LABEL = "_judge", "_label"
"""The judge's decision and the label (booleans) of a labeled row."""
S_JUDGE, S_LABEL = "_s_judge", "_s_label"
"""The normalized judge score and label score (0–1) of a labeled row."""
GROUP = [S.CONFIG_ID, S.RUN_ID, S.EVALUATOR, S.RATER]
HIGHER_IS_BETTER = "_higher_is_better"
"""A leaf's direction (config `higher_is_better`) on the labeled rows."""
"""The grain of judge_agreement and agreement_curve."""


def _normalized(score: pl.Expr, scale: pl.Expr) -> pl.Expr:
    """score / scale on 0–1 (docs/scoring.md#one-scale), null when either is null or not finite; a
    clamped dataset's out-of-range scores are read clamped (validation refused them otherwise)."""
    ok = score.is_finite() & scale.is_finite() & (scale > 0)
    return pl.when(ok).then(score.clip(0.0, scale) / scale)


def leaf_boundaries(config: Config, data_evaluators: list[str]) -> pl.DataFrame:
    """Per data evaluator value that names a leaf of the config's tree (by its path, or
    by its name when no other leaf has it): the leaf's min_score (null: the execution's
    threshold) and its direction (`higher_is_better`). Composite nodes and evaluators
    outside the tree have no row."""
    tree = build_tree([config], data_evaluators)
    min_score = dict(zip(tree.params[S.PATH], tree.params[S.MIN_SCORE], strict=True))
    keys = tree.evaluator_map()
    return pl.DataFrame(
        {
            S.EVALUATOR: list(keys),
            S.MIN_SCORE: [min_score[tree.nodes[i].path] for i in keys.values()],
            HIGHER_IS_BETTER: [tree.nodes[i].higher_is_better for i in keys.values()],
        },
        schema={S.EVALUATOR: pl.String, S.MIN_SCORE: pl.Float64, HIGHER_IS_BETTER: pl.Boolean},
    )


def judged(execution_scores: pl.LazyFrame) -> pl.LazyFrame:
    """The judged executions (docs/judges.md): status ok and a verdict other than unscored."""
    return execution_scores.filter(
        (pl.col(S.STATUS) == S.STATUS_OK) & (pl.col(S.VERDICT) != S.VERDICT_UNSCORED)
    )


def labeled_decisions(
    execution_scores: pl.LazyFrame,
    scores: pl.LazyFrame,
    labels: pl.LazyFrame,
    leaves: pl.DataFrame,
) -> pl.LazyFrame:
    """One row per label (typed, with LABEL_SCALE) of a judged execution whose judge
    decision exists, × config: GROUP, the execution key, JUDGE, LABEL (may be null),
    S_JUDGE and S_LABEL (evaluator rows; null on verdict rows). An evaluator label counts
    where the leaf has a score; labels of composite nodes or evaluators outside the tree
    are left out (`ignored_labels` counts them)."""
    ex = judged(execution_scores).select(
        S.CONFIG_ID, *S.EXECUTION_KEY, S.THRESHOLD, pl.col(S.PASSED).alias("_passed")
    )
    lab = labels.select(
        *S.LABEL_KEY,
        pl.col(S.LABEL_PASSED).alias(LABEL),
        _normalized(pl.col(S.LABEL_SCORE), pl.col(LABEL_SCALE)).alias(S_LABEL),
    )
    verdicts = (
        lab.filter(pl.col(S.EVALUATOR).is_null())
        .join(ex, on=S.EXECUTION_KEY, how="inner")
        .with_columns(pl.col("_passed").alias(JUDGE), pl.lit(None, dtype=pl.Float64).alias(S_JUDGE))
    )
    on_leaves = lab.filter(pl.col(S.EVALUATOR).is_not_null()).join(
        leaves.lazy(), on=S.EVALUATOR, how="inner"
    )
    judge_scores = (
        scores.join(on_leaves.select(S.SCORE_KEY).unique(), on=S.SCORE_KEY, how="semi")
        .select(*S.SCORE_KEY, _normalized(pl.col(S.SCORE), pl.col(S.SCALE_MAX)).alias(S_JUDGE))
        .filter(pl.col(S_JUDGE).is_not_null())
    )
    # a lower-is-better leaf (docs/scoring.md#one-scale): judge and label scores on the
    # higher-is-better
    # scale every boundary reads (`rules/normalize.py`, here on scores already on 0–1)
    direction = pl.col(HIGHER_IS_BETTER)
    leaf_rows = (
        on_leaves.join(judge_scores, on=S.SCORE_KEY, how="inner")
        .join(ex, on=S.EXECUTION_KEY, how="inner")
        .with_columns(
            normalized_score(pl, pl.col(c), pl.lit(1.0), direction).alias(c)
            for c in (S_JUDGE, S_LABEL)
        )
        .with_columns(meets(pl.col(S_JUDGE), pl.coalesce(S.MIN_SCORE, S.THRESHOLD)).alias(JUDGE))
    )
    columns = [*GROUP, S.CASE_ID, S.ATTEMPT, JUDGE, LABEL, S_JUDGE, S_LABEL]
    return pl.concat([verdicts.select(columns), leaf_rows.select(columns)], how="vertical")


def ignored_labels(labels: pl.LazyFrame, leaves: pl.DataFrame) -> int:
    """Labels of an evaluator that is not a leaf of the config's tree (a composite node,
    or outside the tree): left out of every table, counted in a note."""
    return int(
        labels.filter(pl.col(S.EVALUATOR).is_not_null())
        .join(leaves.lazy(), on=S.EVALUATOR, how="anti")
        .select(pl.len())
        .collect()
        .item()
    )


def _rated(rows: pl.LazyFrame) -> pl.LazyFrame:
    """The rows with the rater's label_passed: the population of every count."""
    return rows.filter(pl.col(LABEL).is_not_null())


def agreement_curve_table(rows: pl.LazyFrame) -> pl.LazyFrame:
    """`agreement_curve`: per config × run × evaluator × rater (evaluator rows) and every
    distinct judge score t among the rated rows, the counts, κ, sensitivity and
    specificity of the decision "s meets t" against the labels."""
    rated = _rated(rows).filter(pl.col(S.EVALUATOR).is_not_null())
    label = pl.col(LABEL)
    per_score = (
        rated.group_by(*GROUP, S_JUDGE)
        .agg(
            label.cast(pl.Int64).sum().alias("_p"),
            (~label).cast(pl.Int64).sum().alias("_f"),
        )
        .sort(*GROUP, S_JUDGE)
        .with_columns(
            # rows whose score is at or above this one (the group's reverse running sum)
            pl.col("_p").cum_sum(reverse=True).over(GROUP).alias("_p_above"),
            pl.col("_f").cum_sum(reverse=True).over(GROUP).alias("_f_above"),
            pl.col("_p").sum().over(GROUP).alias("_p_all"),
            pl.col("_f").sum().over(GROUP).alias("_f_all"),
        )
    )
    thresholds = (
        per_score.select(*GROUP, pl.col(S_JUDGE).alias(S.THRESHOLD), "_p_all", "_f_all")
        .with_columns((pl.col(S.THRESHOLD) - EPS).alias("_k"))
        .sort("_k")
    )
    above = per_score.select(*GROUP, S_JUDGE, "_p_above", "_f_above").sort(S_JUDGE)
    curve = thresholds.join_asof(
        above,
        left_on="_k",
        right_on=S_JUDGE,
        by=GROUP,
        strategy="forward",
        check_sortedness=False,
    )
    tp, fp = pl.col("_p_above").cast(pl.Int64), pl.col("_f_above").cast(pl.Int64)
    return (
        curve.with_columns(
            tp.alias(S.TP),
            fp.alias(S.FP),
            (pl.col("_p_all") - tp).cast(pl.Int64).alias(S.FN),
            (pl.col("_f_all") - fp).cast(pl.Int64).alias(S.TN),
            (pl.col("_p_all") + pl.col("_f_all")).cast(pl.Int64).alias(S.N_LABELED),
        )
        .with_columns(*rules.rate_columns(pl, with_agreement=False))
        .select(S.AGREEMENT_CURVE_COLUMNS)
        .sort(*GROUP, S.THRESHOLD)
    )


def best_kappa_thresholds(curve: pl.LazyFrame) -> pl.LazyFrame:
    """Per group of the curve: the threshold with the largest κ (ties: the smallest
    threshold); groups whose every κ is null have no row."""
    return (
        curve.filter(pl.col(S.KAPPA).is_not_null())
        .sort(*GROUP, S.KAPPA, S.THRESHOLD, descending=[False] * len(GROUP) + [True, False])
        .group_by(GROUP, maintain_order=True)
        .agg(pl.col(S.THRESHOLD).first().alias(S.BEST_KAPPA_THRESHOLD))
    )


def recommended_thresholds(curve: pl.LazyFrame, max_false_pass: float | None) -> pl.LazyFrame:
    """Per group of the curve: the smallest threshold whose false-pass rate has a 95 %
    Wilson upper bound at most `max_false_pass` (docs/judges.md#admission); groups where none
    has, or without a label fail, have no row (none at all when the limit is off)."""
    if max_false_pass is None:
        curve = curve.filter(pl.lit(False))
    return (
        curve.filter(rules.false_pass_ok(pl, max_false_pass or 0.0))
        .group_by(GROUP)
        .agg(pl.col(S.THRESHOLD).min().alias(S.RECOMMENDED_THRESHOLD))
    )


def judge_agreement_table(rows: pl.LazyFrame, curve: pl.LazyFrame, judges: Any) -> pl.LazyFrame:
    """`judge_agreement`: per config × run × evaluator (null = the verdict) × rater over
    the rated rows, with the admission columns of `judges` (the config's `judges:`); then
    one row per config × run × evaluator with rater null, the counts null and
    Krippendorff's α across its raters."""
    rated = _rated(rows)
    per_rater = (
        rated.group_by(GROUP, maintain_order=True)
        .agg(
            *rules.confusion_aggregations(pl, pl.col(JUDGE), pl.col(LABEL)),
            *rules.score_error_aggregations(pl, pl.col(S_JUDGE), pl.col(S_LABEL)),
        )
        .with_columns(*rules.rate_columns(pl), *rules.bound_columns(pl))
        .with_columns(rules.admitted(pl, judges))
        .join(best_kappa_thresholds(curve), on=GROUP, how="left", nulls_equal=True)
        .join(
            recommended_thresholds(curve, judges.max_false_pass),
            on=GROUP,
            how="left",
            nulls_equal=True,
        )
    )
    item = [S.CONFIG_ID, S.RUN_ID, S.EVALUATOR, S.CASE_ID, S.ATTEMPT]
    alpha = (
        rated.group_by(item)
        .agg(*rules.alpha_item_aggregations(pl, pl.col(LABEL)))
        .with_columns(*rules.alpha_item_terms(pl))
        .group_by(S.CONFIG_ID, S.RUN_ID, S.EVALUATOR)
        .agg(rules.alpha_aggregation(pl))
        .with_columns(pl.lit(None, dtype=pl.String).alias(S.RATER))
    )
    return (
        pl.concat([per_rater, alpha], how="diagonal_relaxed")
        .select(S.JUDGE_AGREEMENT_COLUMNS)
        .sort(*GROUP, nulls_last=True)
    )


def ppi_table(execution_scores: pl.LazyFrame, labels: pl.LazyFrame) -> pl.LazyFrame:
    """Per config × run with judged executions: n_labeled, ppi_pass_rate, its se and 95 %
    interval (docs/judges.md#corrected-pass-rate); H = the mean of the raters' label_passed on an
    execution's verdict row, J = its passed."""
    h = (
        labels.filter(pl.col(S.EVALUATOR).is_null() & pl.col(S.LABEL_PASSED).is_not_null())
        .group_by(S.EXECUTION_KEY)
        .agg(pl.col(S.LABEL_PASSED).cast(pl.Float64).mean().alias(rules.PPI_H))
    )
    run = [S.CONFIG_ID, S.RUN_ID]
    rows = (
        judged(execution_scores)
        .select(S.CONFIG_ID, *S.EXECUTION_KEY, pl.col(S.PASSED).alias(rules.PPI_J))
        .join(h, on=S.EXECUTION_KEY, how="left")
    )
    # the labeled rows (few) in key order: their float means do not depend on row order
    labeled_rows = (
        rows.filter(pl.col(rules.PPI_H).is_not_null()).sort(*run, S.CASE_ID, S.ATTEMPT)
    ).collect()
    means = labeled_rows.group_by(run, maintain_order=True).agg(*rules.ppi_labeled_aggregations(pl))
    variances = (
        labeled_rows.join(means, on=run, how="left", maintain_order="left")
        .group_by(run, maintain_order=True)
        .agg(*rules.ppi_variance_aggregations(pl))
    )
    labeled = means.join(variances, on=run, how="left").lazy()
    return (
        rows.group_by(run)
        .agg(*rules.ppi_unlabeled_aggregations(pl))
        .join(labeled, on=run, how="left")
        .with_columns(pl.col(S.N_LABELED).fill_null(0))
        .with_columns(*rules.ppi_columns(pl))
        .with_columns(*rules.ppi_interval_columns(pl))
        .select(*run, *S.PPI_COLUMNS)
    )


@dataclass(frozen=True)
class LabelResults:
    """What labels add to a result set: judge_agreement, agreement_curve, the PPI columns
    per run, and how many labels were left out (not on a leaf of the config's tree)."""

    judge_agreement: pl.DataFrame
    agreement_curve: pl.DataFrame
    ppi: pl.DataFrame
    ignored: int


def label_results(
    execution_scores: pl.LazyFrame,
    scores: pl.LazyFrame,
    labels: pl.LazyFrame,
    config: Config,
    data_evaluators: list[str],
) -> LabelResults:
    """The label tables of one config from its execution_scores, the typed scores and the
    typed, validated labels (with LABEL_SCALE)."""
    leaves = leaf_boundaries(config, data_evaluators)
    # collected once, in key order: the float means do not depend on the input's row order
    rows = (
        labeled_decisions(execution_scores, scores, labels, leaves)
        .sort(*GROUP, S.CASE_ID, S.ATTEMPT, nulls_last=True)
        .collect()
        .lazy()
    )
    curve = agreement_curve_table(rows)
    agreement, curve_df, ppi = pl.collect_all(
        [
            judge_agreement_table(rows, curve, config.judges),
            curve,
            ppi_table(execution_scores, labels),
        ]
    )
    return LabelResults(agreement, curve_df, ppi, ignored_labels(labels, leaves))


def _scores_and_labels(
    dataset: str | Path | Dataset, execution_scores: pl.LazyFrame
) -> tuple[pl.LazyFrame, pl.LazyFrame, list[str]] | None:
    """(typed scores, validated labels with LABEL_SCALE, data evaluators) of a dataset
    that has a labels table; None without one. Raises ValidationError on bad labels
    (orphans are checked against the executions of `execution_scores`)."""
    if isinstance(dataset, Dataset):
        if dataset.labels is None:
            return None
        return dataset.scores, dataset.labels, list(dataset.evaluators)
    raw = open_labels(dataset)
    if raw is None:
        return None
    scan = open_tables(dataset)[S.SCORES]
    assert scan is not None  # open_tables raises without a scores table
    scores = typed_frame(scan, S.SCORES)
    labels, problems = validate_labels(raw, scores, execution_scores)
    if problems:
        raise ValidationError(problems)
    names = scores.select(pl.col(S.EVALUATOR).unique()).collect()[S.EVALUATOR]
    return scores, labels, sorted(n for n in names.to_list() if n is not None)


TablesT = TypeVar("TablesT", bound=MutableMapping[str, Any])


def label_tables(out: TablesT, dataset: str | Path | Dataset, config: Config) -> TablesT:
    """Add judge_agreement and agreement_curve to `score`'s tables, and the PPI columns to
    its run_summary, when the dataset has a labels table (docs/tables.md#labels); `out` unchanged
    otherwise. Raises ValidationError on bad labels (nothing is written then)."""
    ex = out[S.EXECUTION_SCORES].lazy()
    found = _scores_and_labels(dataset, ex)
    if found is None:
        return out
    scores, labels, names = found
    results = label_results(ex, scores, labels, config, names)
    out[S.JUDGE_AGREEMENT] = results.judge_agreement
    out[S.AGREEMENT_CURVE] = results.agreement_curve
    out[S.RUN_SUMMARY] = with_ppi_columns(out[S.RUN_SUMMARY], results.ppi)
    return out


@dataclass(frozen=True)
class JudgeAgreement:
    """`evalframe.judge_agreement`: how far the judge agrees with human labels.

    - `judge_agreement`: per config × run × evaluator (null = the execution verdict) ×
      rater: n_labeled, tp, fp, fn, tn, agreement, kappa, sensitivity, specificity,
      score_mae, score_bias, best_kappa_threshold; plus a row per config × run ×
      evaluator with rater null and krippendorff_alpha;
    - `agreement_curve`: κ, sensitivity, specificity at every distinct judge score;
    - `run_summary`: run_summary with n_labeled, ppi_pass_rate, its se and interval;
    - `ignored_labels`: labels on composite nodes or evaluators outside the tree.
    """

    judge_agreement: pl.DataFrame
    agreement_curve: pl.DataFrame
    run_summary: pl.DataFrame
    ignored_labels: int
    config_id: str


def judge_agreement(
    dataset: str | Path | Dataset, config: Config | None = None, *, clamp: bool = False
) -> JudgeAgreement:
    """Score a dataset that has a labels table (docs/tables.md#labels) under `config` and measure
    the judge against the labels: see `JudgeAgreement`. Raises UsageError when the dataset
    has no labels table, ValidationError on bad input."""
    cfg = config if config is not None else Config()
    ds = dataset if isinstance(dataset, Dataset) else load_dataset(dataset, clamp=clamp)
    if ds.labels is None:
        raise UsageError(
            f"dataset {ds.source} has no labels table; hint: add labels.parquet (run_id, "
            "case_id, attempt, evaluator, rater, label_passed, label_score), see "
            "docs/statistics.md."
        )
    ex = execution_scores(ds, cfg).collect().sort(S.EXECUTION_KEY, nulls_last=True)
    results = label_results(ex.lazy(), ds.scores, ds.labels, cfg, list(ds.evaluators))
    runs = run_summary(ex.lazy(), cfg, runs=ds.runs).collect()
    return JudgeAgreement(
        judge_agreement=results.judge_agreement,
        agreement_curve=results.agreement_curve,
        run_summary=with_ppi_columns(runs, results.ppi),
        ignored_labels=results.ignored,
        config_id=cfg.config_id,
    )


NOT_ADMITTED_VERDICT = "verdict"
"""How decision_reasons names the execution verdict's judge when it is not admitted."""


def with_judges_not_admitted(
    run_deltas: pl.DataFrame, judge_agreement: pl.DataFrame
) -> pl.DataFrame:
    """run_deltas whose decision_reasons also name, sorted, the judges not admitted for the
    pair's candidate run (judge_agreement.admitted false: an evaluator, or `verdict` for the
    execution verdict); the decision is unchanged (docs/judges.md#admission)."""
    refused = (
        judge_agreement.filter(pl.col(S.ADMITTED).eq(False))
        .select(
            S.CONFIG_ID,
            pl.col(S.RUN_ID).alias(S.CANDIDATE_RUN_ID),
            pl.col(S.EVALUATOR).fill_null(NOT_ADMITTED_VERDICT).alias("_judge"),
        )
        .unique()
        .group_by(S.CONFIG_ID, S.CANDIDATE_RUN_ID)
        .agg(pl.col("_judge").sort())
    )
    joined = run_deltas.join(
        refused, on=[S.CONFIG_ID, S.CANDIDATE_RUN_ID], how="left", maintain_order="left"
    )
    reasons = pl.concat_list(
        pl.col(S.DECISION_REASONS), pl.col("_judge").fill_null(pl.lit([], pl.List(pl.String)))
    )
    return joined.with_columns(reasons.alias(S.DECISION_REASONS)).drop("_judge")


def _significant(low: pl.Expr, high: pl.Expr) -> pl.Expr:
    """The 95 % interval excludes 0."""
    return (low > 0) | (high < 0)


def ppi_disagreements(run_summary: pl.DataFrame, run_deltas: pl.DataFrame) -> pl.DataFrame:
    """The pairs whose judge-only pass-rate change and labels-corrected change disagree in
    sign or in significance (docs/judges.md#judge-only-and-corrected-changes): judge_delta =
    paired_pass_delta with its 95 % interval; corrected_delta = the candidate's
    ppi_pass_rate − the baseline's, ± Z_95 · sqrt(se_b² + se_c²); significant when the
    interval excludes 0. Pairs without a corrected rate on both sides have no row."""
    if S.PPI_PASS_RATE not in run_summary.columns:
        return pl.DataFrame()
    rates = run_summary.select(S.CONFIG_ID, S.RUN_ID, S.PPI_PASS_RATE, S.PPI_PASS_RATE_SE)
    side = {
        role: rates.rename(
            {
                S.RUN_ID: f"{role}_run_id",
                S.PPI_PASS_RATE: f"_{role}",
                S.PPI_PASS_RATE_SE: f"_{role}_se",
            }
        )
        for role in ("baseline", "candidate")
    }
    pairs = run_deltas.join(side["baseline"], on=[S.CONFIG_ID, S.BASELINE_RUN_ID]).join(
        side["candidate"], on=[S.CONFIG_ID, S.CANDIDATE_RUN_ID]
    )
    corrected = pl.col("_candidate") - pl.col("_baseline")
    margin = Z_95 * (pl.col("_baseline_se") ** 2 + pl.col("_candidate_se") ** 2).sqrt()
    out = pairs.select(
        S.CONFIG_ID,
        S.BASELINE_RUN_ID,
        S.CANDIDATE_RUN_ID,
        pl.col(S.PAIRED_PASS_DELTA).alias("judge_delta"),
        _significant(pl.col(S.PAIRED_PASS_DELTA_CI_LOW), pl.col(S.PAIRED_PASS_DELTA_CI_HIGH)).alias(
            "judge_significant"
        ),
        corrected.alias("corrected_delta"),
        _significant(corrected - margin, corrected + margin).alias("corrected_significant"),
    ).drop_nulls()
    opposite = (pl.col("judge_delta") * pl.col("corrected_delta")) < 0
    return out.filter(opposite | (pl.col("judge_significant") != pl.col("corrected_significant")))
