"""Which evaluators really moved (docs/statistics.md#per-evaluator-paired-tests): per pair and
leaf evaluator, a paired test of the case-level evaluator scores, corrected across the pair's
evaluators.

From `evaluator_deltas` (any engine's): over the cases with a score on both sides, d = candidate −
baseline of the leaf's mean normalized score over the case's attempts.
- `n_cases`, `mean_delta`, `d_z` = mean d / sample sd of d (null when n < 2 or sd ≤ EPS);
- Wilcoxon signed-rank over the non-zero d (|d| ≤ EPS is zero; `n_nonzero`): |d| ranked with
  ties (a sorted |d| within EPS of the previous one joins its tie group) given their average
  rank, W+ = Σ ranks of positive d, σ² = n(n+1)(2n+1)/24 − Σ (t³ − t)/48 over tie groups,
  `wilcoxon_z` = (W+ − n(n+1)/4) / σ without continuity correction, `p_value` = 2 (1 − Φ(|z|));
- `p_holm`: Holm's step-down over the pair's evaluators with a p_value.
One vectorized query over every pair and leaf: nothing loops over pairs, cases or evaluators.
"""

from __future__ import annotations

import polars as pl

from evalframe._private import schema as S
from evalframe._private.compare.evaluator_summary import IS_LEAF, PAIR, leaves
from evalframe._private.rules.constants import EPS
from evalframe._private.rules.history import two_sided_p

TEST = [*PAIR, S.PATH]
EVALUATOR_TESTS_SCHEMA = pl.Schema(
    {
        **{c: pl.String for c in TEST},
        S.N_CASES: pl.Int64,
        S.MEAN_DELTA: pl.Float64,
        S.D_Z: pl.Float64,
        S.N_NONZERO: pl.Int64,
        S.WILCOXON_Z: pl.Float64,
        S.P_VALUE: pl.Float64,
        S.P_HOLM: pl.Float64,
    }
)


def _signed_ranks(d: pl.LazyFrame) -> pl.LazyFrame:
    """n_nonzero, W+ and the tie term Σ (t³ − t)/48 per test, over the non-zero d."""
    size = pl.col("_a")
    ranked = (
        d.filter(size > EPS)
        .sort(*TEST, "_a")
        .with_columns(
            (size - size.shift(1).over(TEST) > EPS)
            .fill_null(True)
            .cum_sum()
            .over(TEST)
            .alias("_t"),
            pl.int_range(1, pl.len() + 1).over(TEST).alias("_ordinal"),
        )
        .with_columns(
            pl.col("_ordinal").mean().over(*TEST, "_t").alias("_rank"),
            pl.len().over(*TEST, "_t").cast(pl.Float64).alias("_tie"),
        )
    )
    return ranked.group_by(TEST).agg(
        pl.len().cast(pl.Int64).alias(S.N_NONZERO),
        pl.col("_rank").filter(pl.col("_d") > 0).sum().alias("_w"),
        ((pl.col("_tie") ** 2 - 1) / 48).sum().alias("_ties"),  # (t³ − t)/48 over t rows
    )


def evaluator_tests(evaluator_deltas: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    """evaluator_tests: one row per config × pair × leaf evaluator with a case scored on both
    sides, in the comparison's pair order, then by path."""
    ed = evaluator_deltas.lazy()
    d = (
        ed.join(leaves(ed).filter(pl.col(IS_LEAF)), on=S.PATH, how="semi")
        .select(
            *TEST,
            (pl.col(f"candidate_{S.SCORE}") - pl.col(f"baseline_{S.SCORE}")).alias("_d"),
        )
        .drop_nulls("_d")
        .with_columns(pl.col("_d").abs().alias("_a"))
    )
    sd = pl.col("_d").std(ddof=1)
    moments = d.group_by(TEST).agg(
        pl.len().cast(pl.Int64).alias(S.N_CASES),
        pl.col("_d").mean().alias(S.MEAN_DELTA),
        pl.when((pl.len() >= 2) & (sd > EPS)).then(pl.col("_d").mean() / sd).alias(S.D_Z),
    )
    n = pl.col(S.N_NONZERO).cast(pl.Float64)
    sigma = (n * (n + 1) * (2 * n + 1) / 24 - pl.col("_ties")).sqrt()
    z = pl.when(sigma > 0).then((pl.col("_w") - n * (n + 1) / 4) / sigma)
    p = pl.col(S.P_VALUE)
    # Holm: the k-th smallest of m p-values times m − k + 1, capped at 1, made monotone
    m = p.count().over(PAIR)
    k = p.rank("ordinal").over(PAIR)
    pair_order = ed.select(PAIR).unique(maintain_order=True).with_row_index("_pair")
    out = (
        moments.join(_signed_ranks(d), on=TEST, how="left")
        .join(pair_order, on=PAIR, how="left")
        .with_columns(pl.col(S.N_NONZERO).fill_null(0), z.alias(S.WILCOXON_Z))
        .with_columns(two_sided_p(pl, pl.col(S.WILCOXON_Z)).alias(S.P_VALUE))
        .sort("_pair", p, nulls_last=True)
        .with_columns(
            pl.when(p.is_not_null())
            .then(pl.min_horizontal(1.0, (m - k + 1) * p).cum_max().over(PAIR))
            .alias(S.P_HOLM)
        )
        .sort("_pair", S.PATH)
    )
    return out.select(EVALUATOR_TESTS_SCHEMA.names()).cast(EVALUATOR_TESTS_SCHEMA).collect()
