"""Judges measured against human labels (docs/judges.md), written once.

The label is the truth in every count. `ns` is the expression namespace (`polars` or
`narwhals`); counts are `cast(Int64).sum()` as in `rules.runs`.

- `confusion_aggregations`: n_labeled, tp, fp, fn, tn of a judge decision against a
  label, over the rows of a group (rows without a label left out);
- `agreement`, `kappa`, `sensitivity`, `specificity`: from the four counts (the
  `agreement_curve` applies the same functions at every threshold);
- `score_error_aggregations`: score_mae and score_bias over the rows holding both scores;
- `alpha_item_terms` / `alpha_aggregation`: Krippendorff's α (nominal, two values) over
  items rated by at least two raters;
- `ppi_unlabeled_aggregations`, `ppi_labeled_aggregations`,
  `ppi_variance_aggregations`, `ppi_columns`: the
  prediction-powered pass rate of a run and its standard error, from per-execution judge
  (J) and mean label (H) columns (the unlabeled part from integer counts).

Cohen's κ is computed from integer counts, κ = (n·(tp+tn) − A) / (n² − A) with
A = (tp+fp)(tp+fn) + (fn+tn)(fp+tn): the same rational as (p_o − p_e)/(1 − p_e), with
p_e = A/n² exactly 1 when n² = A (κ null then), and equal counts always give equal floats
(ties of `best_kappa_threshold` are exact).
"""

from __future__ import annotations

from typing import Any

from evalframe._private import schema as S
from evalframe._private.rules import Expr, Namespace
from evalframe._private.rules.boundaries import exceeds, meets
from evalframe._private.rules.intervals import ci_high, ci_low
from evalframe._private.rules.wilson import wilson_high, wilson_low


def _count(ns: Namespace, condition: Expr) -> Expr:
    return condition.cast(ns.Int64).sum().cast(ns.Int64)


def confusion_aggregations(ns: Namespace, judge: Expr, label: Expr) -> list[Expr]:
    """n_labeled, tp, fp, fn, tn over a group's rows: judge pass / label pass, judge pass
    / label fail, judge fail / label pass, judge fail / label fail. A row whose label
    (or judge decision) is null counts nowhere."""
    both = judge.is_not_null() & label.is_not_null()
    j, h = judge.fill_null(False), label.fill_null(False)
    return [
        _count(ns, both).alias(S.N_LABELED),
        _count(ns, both & j & h).alias(S.TP),
        _count(ns, both & j & ~h).alias(S.FP),
        _count(ns, both & ~j & h).alias(S.FN),
        _count(ns, both & ~j & ~h).alias(S.TN),
    ]


def _ratio(ns: Namespace, num: Expr, den: Expr) -> Expr:
    """num / den as a float, null when den is 0."""
    return ns.when(den > 0).then(num.cast(ns.Float64) / den.cast(ns.Float64))


def agreement(ns: Namespace, tp: Expr, fp: Expr, fn: Expr, tn: Expr) -> Expr:
    """(tp + tn) / n; null when n = 0."""
    return _ratio(ns, tp + tn, tp + fp + fn + tn)


def kappa(ns: Namespace, tp: Expr, fp: Expr, fn: Expr, tn: Expr) -> Expr:
    """Cohen's κ = (p_o − p_e) / (1 − p_e), p_e = ((tp+fp)(tp+fn) + (fn+tn)(fp+tn)) / n²;
    null when p_e = 1 (and when n = 0). Computed as (n·(tp+tn) − A) / (n² − A) on
    integers cast to float (exact below 2^53, so up to about 9·10^7 labels)."""
    f = ns.Float64
    n = (tp + fp + fn + tn).cast(f)
    a = (tp + fp).cast(f) * (tp + fn).cast(f) + (fn + tn).cast(f) * (fp + tn).cast(f)
    den = n * n - a
    return ns.when(den > 0).then((n * (tp + tn).cast(f) - a) / den)


def sensitivity(ns: Namespace, tp: Expr, fn: Expr) -> Expr:
    """tp / (tp + fn): the share of label passes the judge passes; null on 0 / 0."""
    return _ratio(ns, tp, tp + fn)


def specificity(ns: Namespace, tn: Expr, fp: Expr) -> Expr:
    """tn / (tn + fp): the share of label fails the judge fails; null on 0 / 0."""
    return _ratio(ns, tn, tn + fp)


def rate_columns(ns: Namespace, *, with_agreement: bool = True) -> list[Expr]:
    """agreement (optional), kappa, sensitivity and specificity from the count columns."""
    tp, fp, fn, tn = (ns.col(c) for c in (S.TP, S.FP, S.FN, S.TN))
    out = [agreement(ns, tp, fp, fn, tn).alias(S.AGREEMENT)] if with_agreement else []
    return [
        *out,
        kappa(ns, tp, fp, fn, tn).alias(S.KAPPA),
        sensitivity(ns, tp, fn).alias(S.SENSITIVITY),
        specificity(ns, tn, fp).alias(S.SPECIFICITY),
    ]


# --- admission (docs/judges.md#admission) ----------------------------------------------------
def bound_columns(ns: Namespace) -> list[Expr]:
    """sensitivity_low and specificity_low: the 95 % Wilson lower bounds of tp in tp + fn
    and of tn in tn + fp (null on 0 / 0)."""
    tp, fp, fn, tn = (ns.col(c) for c in (S.TP, S.FP, S.FN, S.TN))
    f = ns.Float64
    return [
        wilson_low(ns, sensitivity(ns, tp, fn), (tp + fn).cast(f)).alias(S.SENSITIVITY_LOW),
        wilson_low(ns, specificity(ns, tn, fp), (tn + fp).cast(f)).alias(S.SPECIFICITY_LOW),
    ]


def admitted(ns: Namespace, judges: Any) -> Expr:
    """A judge (a rater row of judge_agreement) is admitted when n_labeled meets
    `min_labeled` and every limit that is set is met by its bound (κ by kappa itself); a
    null bound fails its limit."""
    ok = ns.col(S.N_LABELED) >= judges.min_labeled
    limits = (
        (S.SENSITIVITY_LOW, judges.min_sensitivity),
        (S.SPECIFICITY_LOW, judges.min_specificity),
        (S.KAPPA, judges.min_kappa),
    )
    for column, limit in limits:
        if limit is not None:
            ok = ok & meets(ns.col(column), limit).fill_null(False)
    return ok.alias(S.ADMITTED)


def false_pass_ok(ns: Namespace, max_false_pass: float) -> Expr:
    """On agreement_curve rows: the 95 % Wilson upper bound of the false passes fp among the
    label fails fp + tn is at most max_false_pass (EPS); null when there is no label fail."""
    fp, tn = ns.col(S.FP), ns.col(S.TN)
    nf = (fp + tn).cast(ns.Float64)
    high = wilson_high(ns, _ratio(ns, fp, fp + tn), nf)
    return ~exceeds(high, max_false_pass)


def score_error_aggregations(ns: Namespace, judge_score: Expr, label_score: Expr) -> list[Expr]:
    """score_mae = mean |s_judge − s_label| and score_bias = mean (s_judge − s_label), over
    the rows where both normalized scores are present (null when none)."""
    diff = ns.when(judge_score.is_not_null() & label_score.is_not_null()).then(
        judge_score - label_score
    )
    return [diff.abs().mean().alias(S.SCORE_MAE), diff.mean().alias(S.SCORE_BIAS)]


# --- Krippendorff's α (nominal, label_passed) ---------------------------------------------
ALPHA_M, ALPHA_PASS, ALPHA_O = "_alpha_m", "_alpha_pass", "_alpha_o"
"""Per item (execution): raters m, raters that pass it, and its disagreement term."""


def alpha_item_aggregations(ns: Namespace, label: Expr) -> list[Expr]:
    """Per item (one execution × evaluator): the number of raters with a label and of
    those that pass it."""
    return [
        _count(ns, label.is_not_null()).alias(ALPHA_M),
        _count(ns, label.fill_null(False)).alias(ALPHA_PASS),
    ]


def alpha_item_terms(ns: Namespace) -> list[Expr]:
    """Per item with m ≥ 2 raters (pairable): its coincidence term n_pass·n_fail/(m − 1);
    null for an item with fewer raters (left out)."""
    m, k = ns.col(ALPHA_M).cast(ns.Float64), ns.col(ALPHA_PASS).cast(ns.Float64)
    return [ns.when(m >= 2).then(k * (m - k) / (m - 1)).alias(ALPHA_O)]


def alpha_aggregation(ns: Namespace) -> Expr:
    """Krippendorff's α (nominal, two values) over a group's items:
    α = 1 − (n − 1) · Σ_u n_u,pass·n_u,fail/(m_u − 1) / (n_pass · n_fail), with n the
    pairable values (Σ m_u over items with m_u ≥ 2); null when no item has two raters or
    the expected disagreement is 0 (every pairable value the same)."""
    f = ns.Float64
    pairable = ns.col(ALPHA_O).is_not_null()
    m = ns.when(pairable).then(ns.col(ALPHA_M).cast(f))
    k = ns.when(pairable).then(ns.col(ALPHA_PASS).cast(f))
    n, n_pass = m.sum(), k.sum()
    n_fail = n - n_pass
    expected = n_pass * n_fail
    return (
        ns.when(pairable.any() & (expected > 0))
        .then(1 - (n - 1) * ns.col(ALPHA_O).sum() / expected)
        .alias(S.KRIPPENDORFF_ALPHA)
    )


# --- prediction-powered pass rate ------------------------------------------------------
PPI_J, PPI_H = "_ppi_j", "_ppi_h"
"""Per judged execution: J = the judge's passed (0/1), H = the mean of the raters'
label_passed on its verdict (null when unlabeled)."""
N_U, K_U = "_ppi_n_u", "_ppi_k_u"
"""Per run: the unlabeled judged executions N_u and how many of them the judge passed."""
MEAN_D, VAR_D, MEAN_H, VAR_H = "_ppi_mean_d", "_ppi_var_d", "_ppi_mean_h", "_ppi_var_h"
"""Per run, over the labeled executions: mean and sample variance of H − J and of H."""


def ppi_unlabeled_aggregations(ns: Namespace) -> list[Expr]:
    """N_u and the judge's passes among a run's unlabeled judged executions (integers:
    mean_U(J) and var_U(J) follow exactly, whatever the row order)."""
    unlabeled = ns.col(PPI_H).is_null()
    return [
        _count(ns, unlabeled).alias(N_U),
        _count(ns, unlabeled & (ns.col(PPI_J) > 0)).alias(K_U),
    ]


def _d(ns: Namespace) -> Expr:
    f = ns.Float64
    return ns.col(PPI_H).cast(f) - ns.col(PPI_J).cast(f)


def ppi_labeled_aggregations(ns: Namespace) -> list[Expr]:
    """Over a run's labeled judged executions: n_labeled and the means of H − J and of H
    (first of two passes; `ppi_variance_aggregations` is the second)."""
    return [
        ns.len().cast(ns.Int64).alias(S.N_LABELED),
        _d(ns).mean().alias(MEAN_D),
        ns.col(PPI_H).cast(ns.Float64).mean().alias(MEAN_H),
    ]


def ppi_variance_aggregations(ns: Namespace) -> list[Expr]:
    """Over the labeled rows with their run's MEAN_D and MEAN_H: the sample variances of
    H − J and of H, Σ (x − x̄)² / (n − 1) (null below two executions). Written as sums
    of squared deviations: the same digits whatever the engine's variance kernel."""
    n = ns.len()
    dev_d = (_d(ns) - ns.col(MEAN_D)) ** 2
    dev_h = (ns.col(PPI_H).cast(ns.Float64) - ns.col(MEAN_H)) ** 2
    return [
        ns.when(n >= 2).then(dev_d.sum() / (n - 1)).alias(VAR_D),
        ns.when(n >= 2).then(dev_h.sum() / (n - 1)).alias(VAR_H),
    ]


def ppi_columns(ns: Namespace) -> list[Expr]:
    """ppi_pass_rate and ppi_pass_rate_se of a run from the two aggregations above (n
    filled with 0 for a run without labels): mean_U(J) + mean_L(H − J) and
    sqrt(var_U(J)/N_u + var_L(H − J)/n) (sample variances, a term 0 when its set has one
    member); when N_u = 0, mean_L(H) and sd_L(H)/√n. The estimate needs n ≥ 1, its se
    n ≥ 2."""
    f = ns.Float64
    n, n_u, k_u = ns.col(S.N_LABELED), ns.col(N_U), ns.col(K_U)
    nf, n_uf, k_uf = n.cast(f), n_u.cast(f), k_u.cast(f)
    mean_u = k_uf / n_uf
    # var_U(J) of N_u values 0/1 with k_u ones: k_u (N_u − k_u) / (N_u (N_u − 1))
    var_u = ns.when(n_u >= 2).then(k_uf * (n_uf - k_uf) / (n_uf * (n_uf - 1))).otherwise(0.0)
    estimate = (
        ns.when(n == 0)
        .then(None)
        .when(n_u == 0)
        .then(ns.col(MEAN_H))
        .otherwise(mean_u + ns.col(MEAN_D))
    )
    se = (
        ns.when(n < 2)
        .then(None)
        .when(n_u == 0)
        .then((ns.col(VAR_H) / nf).sqrt())
        .otherwise((var_u / n_uf + ns.col(VAR_D) / nf).sqrt())
    )
    return [estimate.cast(f).alias(S.PPI_PASS_RATE), se.cast(f).alias(S.PPI_PASS_RATE_SE)]


def ppi_interval_columns(ns: Namespace) -> list[Expr]:
    """ppi_pass_rate_ci_low / high: ± Z_95 · se (rules/intervals.py); null with the se."""
    value, se = ns.col(S.PPI_PASS_RATE), ns.col(S.PPI_PASS_RATE_SE)
    return [
        ci_low(value, se).alias(S.PPI_PASS_RATE_CI_LOW),
        ci_high(value, se).alias(S.PPI_PASS_RATE_CI_HIGH),
    ]
