"""Which metric moved: a per-pair summary of each evaluator (tree node), and the evaluators
behind each regressed case with ties kept.

Both are computed from the comparison tables (`evaluator_deltas`, `case_deltas`; docs/compare.md)
as one vectorized polars query over every pair; nothing loops over pairs, cases or
evaluators in Python.

evaluator_summary — one row per config × pair × evaluator path:

- `n_paired`: cases where the evaluator is scored in both runs (its delta is not null);
- `n_fell`: of those, cases where it fell: its delta exceeds `case_delta` downward (its
  `evaluator_deltas.status` is "regression");
- `n_fell_in_regressions`: regressed cases of the pair (`case_deltas.status` "regression")
  where it fell; `n_regression`: the pair's regressed cases;
- `share_of_regressions`: n_fell_in_regressions / n_regression (null when none);
- `n_worst`: regressed cases where its delta is the lowest of the leaves (and below 0); a
  tie counts for each tied evaluator; `n_worst_tied`: of those, the ties (another leaf has
  the same delta within EPS);
- `mean_delta`: mean of its score delta over the n_paired cases; `mean_delta_se`: sample
  SD of the deltas / √n_paired (null when n_paired < 2); `mean_delta_ci_low/high`: the
  paired 95 % interval (`rules.intervals`);
- `is_leaf`: no other path of the table lies under this one;
- `tied`: another evaluator of the pair explains as many regressions (> 0);
- `rank`: order within the pair: share of regressions (high first), mean delta (low
  first), path.
"""

from __future__ import annotations

import polars as pl

from evalframe._private import schema as S
from evalframe._private.compare.paired_stats import mean_se
from evalframe._private.rules.boundaries import exceeds
from evalframe._private.rules.compare import STATUS_REGRESSION
from evalframe._private.rules.intervals import ci_high, ci_low

PAIR = (S.CONFIG_ID, S.BASELINE_RUN_ID, S.CANDIDATE_RUN_ID)

N_PAIRED = "n_paired"
N_FELL = "n_fell"
N_FELL_IN_REGRESSIONS = "n_fell_in_regressions"
SHARE_OF_REGRESSIONS = "share_of_regressions"
N_WORST = "n_worst"
N_WORST_TIED = "n_worst_tied"
MEAN_DELTA = S.MEAN_DELTA
MEAN_DELTA_SE = S.MEAN_DELTA_SE
MEAN_DELTA_CI_LOW = S.MEAN_DELTA_CI_LOW
MEAN_DELTA_CI_HIGH = S.MEAN_DELTA_CI_HIGH
IS_LEAF = "is_leaf"
TIED = "tied"
RANK = "rank"
N_REGRESSION = "n_regression"

BEHIND_PATHS = "behind_paths"
"""Every leaf with the lowest (negative) delta of a case, alphabetically: more than one is a
tie."""
BEHIND_DELTA = "behind_delta"

EVALUATOR_SUMMARY_SCHEMA = pl.Schema(
    {
        **{c: pl.String for c in PAIR},
        S.PATH: pl.String,
        RANK: pl.UInt32,
        N_PAIRED: pl.UInt32,
        N_FELL: pl.UInt32,
        N_FELL_IN_REGRESSIONS: pl.UInt32,
        N_REGRESSION: pl.UInt32,
        SHARE_OF_REGRESSIONS: pl.Float64,
        N_WORST: pl.UInt32,
        N_WORST_TIED: pl.UInt32,
        S.MEAN_DELTA: pl.Float64,
        S.MEAN_DELTA_SE: pl.Float64,
        S.MEAN_DELTA_CI_LOW: pl.Float64,
        S.MEAN_DELTA_CI_HIGH: pl.Float64,
        IS_LEAF: pl.Boolean,
        TIED: pl.Boolean,
    }
)


def leaves(evaluator_deltas: pl.LazyFrame) -> pl.LazyFrame:
    """path → is_leaf: no other path of the table starts with `path/` (a small cross join
    of the distinct paths)."""
    paths = evaluator_deltas.select(S.PATH).unique()
    inner = (
        paths.join(paths.rename({S.PATH: "_other"}), how="cross")
        .filter(pl.col("_other").str.starts_with(pl.col(S.PATH) + "/"))
        .select(S.PATH)
        .unique()
        .with_columns(pl.lit(False).alias(IS_LEAF))
    )
    return paths.join(inner, on=S.PATH, how="left").with_columns(pl.col(IS_LEAF).fill_null(True))


def _regressed(case_deltas: pl.LazyFrame) -> pl.LazyFrame:
    return case_deltas.filter(pl.col(S.STATUS) == STATUS_REGRESSION).select(*PAIR, S.CASE_ID)


def behind_evaluators(
    evaluator_deltas: pl.DataFrame | pl.LazyFrame, cases: pl.DataFrame | pl.LazyFrame
) -> pl.LazyFrame:
    """For each (pair, case) of `cases`, the leaves behind it: every leaf whose delta is the
    case's lowest (within EPS: `rules.boundaries.exceeds`) and below 0, as the sorted list
    `behind_paths` (more than one = a tie), and that lowest delta `behind_delta`. Cases
    where no leaf fell have no row."""
    ed = evaluator_deltas.lazy()
    leaf_paths = leaves(ed).filter(pl.col(IS_LEAF)).select(S.PATH)
    keys = [*PAIR, S.CASE_ID]
    fell = (
        ed.join(cases.lazy().select(keys).unique(), on=keys, how="semi")
        .join(leaf_paths, on=S.PATH, how="semi")
        .filter(pl.col(S.SCORE_DELTA) < 0)
        .with_columns(pl.col(S.SCORE_DELTA).min().over(keys).alias(BEHIND_DELTA))
    )
    return (
        fell.filter(~exceeds(pl.col(S.SCORE_DELTA), pl.col(BEHIND_DELTA)))
        .group_by(keys)
        .agg(pl.col(S.PATH).sort().alias(BEHIND_PATHS), pl.col(BEHIND_DELTA).first())
    )


def evaluator_summary(
    evaluator_deltas: pl.DataFrame | pl.LazyFrame, case_deltas: pl.DataFrame | pl.LazyFrame
) -> pl.DataFrame:
    """The per-pair evaluator summary (columns in the module docstring), sorted by pair
    (the comparison's order) and `rank`."""
    ed, cd = evaluator_deltas.lazy(), case_deltas.lazy()
    keys = [*PAIR, S.CASE_ID]
    regressed = _regressed(cd).with_columns(pl.lit(True).alias("_regressed"))
    n_regression = regressed.group_by(PAIR).agg(pl.len().cast(pl.UInt32).alias(N_REGRESSION))
    worst = (
        behind_evaluators(ed, regressed)
        .with_columns((pl.col(BEHIND_PATHS).list.len() > 1).alias("_tie"))
        .explode(BEHIND_PATHS)
        .select(*keys, pl.col(BEHIND_PATHS).alias(S.PATH), pl.lit(True).alias("_worst"), "_tie")
    )
    delta = pl.col(S.SCORE_DELTA)
    paired = delta.is_not_null()
    fell = (pl.col(S.STATUS) == STATUS_REGRESSION) & paired
    in_regression = pl.col("_regressed").fill_null(False)
    is_worst = pl.col("_worst").fill_null(False)
    n = paired.sum()
    per_path = (
        ed.join(regressed, on=keys, how="left")
        .join(worst, on=[*keys, S.PATH], how="left")
        .group_by(*PAIR, S.PATH)
        .agg(
            n.cast(pl.UInt32).alias(N_PAIRED),
            fell.sum().cast(pl.UInt32).alias(N_FELL),
            (fell & in_regression).sum().cast(pl.UInt32).alias(N_FELL_IN_REGRESSIONS),
            is_worst.sum().cast(pl.UInt32).alias(N_WORST),
            (is_worst & pl.col("_tie").fill_null(False)).sum().cast(pl.UInt32).alias(N_WORST_TIED),
            delta.mean().alias(S.MEAN_DELTA),
            mean_se(pl, delta).alias(S.MEAN_DELTA_SE),
        )
    )
    mean, se = pl.col(S.MEAN_DELTA), pl.col(S.MEAN_DELTA_SE)
    share = pl.col(N_FELL_IN_REGRESSIONS) / pl.col(N_REGRESSION)
    explained = pl.col(N_FELL_IN_REGRESSIONS)
    # the comparison's order of pairs (evaluator_deltas is sorted by it)
    pair_order = ed.select(PAIR).unique(maintain_order=True).with_row_index("_pair")
    out = (
        per_path.join(n_regression, on=PAIR, how="left")
        .join(leaves(ed), on=S.PATH, how="left")
        .join(pair_order, on=PAIR, how="left")
        .with_columns(
            pl.col(N_REGRESSION).fill_null(0),
            ci_low(mean, se).alias(S.MEAN_DELTA_CI_LOW),
            ci_high(mean, se).alias(S.MEAN_DELTA_CI_HIGH),
        )
        .with_columns(
            pl.when(pl.col(N_REGRESSION) > 0).then(share).alias(SHARE_OF_REGRESSIONS),
            ((explained > 0) & (pl.len().over(*PAIR, N_FELL_IN_REGRESSIONS) > 1)).alias(TIED),
        )
        .sort(
            "_pair",
            pl.col(SHARE_OF_REGRESSIONS).fill_null(0.0),
            # equal means may differ in the last bits with the order of a parallel sum:
            # rounded, a tie falls to the path, the same on every run
            pl.col(S.MEAN_DELTA).round(12),
            S.PATH,
            descending=[False, True, False, False],
            nulls_last=True,
        )
        .with_columns(pl.int_range(1, pl.len() + 1).over("_pair").cast(pl.UInt32).alias(RANK))
        .drop("_pair")
    )
    schema = EVALUATOR_SUMMARY_SCHEMA
    return out.select(schema.names()).cast(schema).collect()
