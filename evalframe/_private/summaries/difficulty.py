"""Case difficulty (docs/statistics.md#case-difficulty): which cases are hard, which are broken or
useless, and how able each run is, from the pass/fail matrix of a series' runs × cases.

y_rc = case_summary.passed of case c in run r (null left out). Cases and runs whose remaining y
are all 1 or all 0 are flagged (always_passes / never_passes) and removed, round after round,
until a round removes nothing. The rest is fitted by the penalized Rasch model
logit P(y_rc = 1) = θ_r − b_c with the ridge λ (RASCH_LAMBDA) on every θ and b.

The fit is vectorized over the cells of every config × series at once (the problems are
separate blocks of one objective): each iteration is a block Newton step on all θ, one on all
b, then the exact step along θ + s, b + s (the direction the data cannot see, where only the
ridge pulls), until the largest gradient component is below RASCH_TOLERANCE. Python loops
only over rounds and iterations, never over runs, cases or cells.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from evalframe._private import schema as S
from evalframe._private.rules.constants import (
    MIN_RUNS_DISCRIMINATION,
    RASCH_LAMBDA,
    RASCH_TOLERANCE,
)
from evalframe._private.summaries.history import SERIES_KEYS, series_runs

MAX_ITERATIONS = 10_000
"""A guard: the fit converges in tens of iterations on real data."""
MAX_STEP = 2.0
"""Largest change of one θ or b in one Newton step (a safeguard far from the optimum)."""
_G, _R, _C, _K, _Y = "_g", "_r", "_c", "_k", "_y"


def _indexed(cells: pl.DataFrame, key: list[str], name: str) -> pl.DataFrame:
    """The distinct `key` rows of `cells` numbered 0..n−1 in column `name`."""
    return cells.select(key).unique().sort(key, nulls_last=True).with_row_index(name)


def _prune(cells: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """(the cells left to fit, case flags, run flags): rounds that remove every case and run
    whose remaining y are all 1 or all 0, flagged on those remaining y."""
    flags: dict[str, list[pl.DataFrame]] = {_C: [], _R: []}
    while True:
        removed = {}
        for axis in (_C, _R):
            stats = cells.group_by(axis).agg(pl.len().alias("_n"), pl.col(_Y).sum().alias("_s"))
            gone = stats.filter((pl.col("_s") == 0) | (pl.col("_s") == pl.col("_n")))
            flag = (
                pl.when(pl.col("_s") == 0)
                .then(pl.lit(S.FLAG_NEVER))
                .otherwise(pl.lit(S.FLAG_ALWAYS))
            )
            flags[axis].append(gone.select(axis, flag.alias(S.FLAG)))
            removed[axis] = gone.select(axis)
        if removed[_C].is_empty() and removed[_R].is_empty():
            break
        cells = cells.join(removed[_C], on=_C, how="anti").join(removed[_R], on=_R, how="anti")
    return cells, pl.concat(flags[_C]), pl.concat(flags[_R])


def _collapsed(fitted: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(case → _k, weighted cells _r, _k, _n, _ys): cases with the same runs and the same passes
    share one difficulty at the optimum (the objective is symmetric in them and strictly
    concave), so the fit runs over case classes, not cases: a dense matrix of R runs
    collapses to at most R + 1 classes whatever the number of cases."""
    pattern = fitted.group_by(_C).agg(pl.col(_R).sort().alias("_runs"), pl.col(_Y).sum())
    classes = (
        pattern.group_by("_runs", _Y).agg(pl.col(_C)).with_row_index(_K).select(_K, _C).explode(_C)
    )
    cells = (
        fitted.join(classes, on=_C)
        .group_by(_R, _K)
        .agg(pl.len().cast(pl.Float64).alias("_n"), pl.col(_Y).sum().cast(pl.Float64).alias("_ys"))
        .sort(_R, _K)
    )
    return classes, cells


def _indexes(frame: pl.DataFrame, axis: str, size: int, *columns: pl.Expr) -> pl.DataFrame:
    """axis index 0..size−1 with `columns` aggregated per index (null where it has no row)."""
    full = pl.DataFrame({axis: pl.Series(range(size), dtype=pl.UInt32)})
    return full.join(frame.group_by(axis).agg(*columns), on=axis, how="left").sort(axis)


def _fit(
    cells: pl.DataFrame, run_group: pl.Series, class_group: pl.Series, class_size: pl.Series
) -> tuple[pl.Series, pl.Series]:
    """θ per run and b per case class maximizing the penalized likelihood; each weighted cell
    stands for `_n` cases of its class, `_ys` of them passed."""
    lam = RASCH_LAMBDA
    r, k = cells.get_column(_R), cells.get_column(_K)
    n, ys = cells.get_column("_n"), cells.get_column("_ys")
    theta = pl.Series("theta", [0.0] * run_group.len(), dtype=pl.Float64)
    b = pl.Series("b", [0.0] * class_group.len(), dtype=pl.Float64)
    ones = pl.Series([1.0] * run_group.len(), dtype=pl.Float64)
    weights = pl.concat([ones, class_size.cast(pl.Float64)])
    groups = pl.concat([run_group.cast(pl.UInt32), class_group.cast(pl.UInt32)])

    def sums(axis: pl.Series, size: int) -> tuple[pl.Series, pl.Series]:
        """Σ (ys − n p) and Σ n p (1 − p) per index of `axis`."""
        p = 1.0 / (1.0 + (b.gather(k) - theta.gather(r)).exp())
        terms = pl.DataFrame({"_i": axis, "_e": ys - n * p, "_w": n * p * (1.0 - p)})
        out = _indexes(terms, "_i", size, pl.col("_e").sum(), pl.col("_w").sum()).fill_null(0.0)
        return out.get_column("_e"), out.get_column("_w")

    def step(grad: pl.Series, hess: pl.Series) -> pl.Series:
        return (grad / hess).clip(-MAX_STEP, MAX_STEP)

    for _ in range(MAX_ITERATIONS):
        e, w = sums(r, theta.len())
        g_theta = e - lam * theta
        theta = theta + step(g_theta, w + lam)
        e, w = sums(k, b.len())
        g_b = -e / class_size - lam * b
        b = b + step(g_b, w / class_size + lam)
        # along θ + s, b + s only the ridge changes: its optimum per config × series is exact
        values = pl.DataFrame({_G: groups, "_v": pl.concat([theta, b]), "_w": weights})
        shift = (
            values.drop_nulls(_G)
            .group_by(_G)
            .agg((-(pl.col("_v") * pl.col("_w")).sum() / pl.col("_w").sum()).alias("_s"))
        )
        s = values.join(shift, on=_G, how="left", maintain_order="left").get_column("_s")
        s = s.fill_null(0.0)
        theta, b = theta + s.head(theta.len()), b + s.tail(b.len())
        largest = pl.concat([g_theta, g_b]).abs().max()
        if largest is None or float(largest) < RASCH_TOLERANCE:  # type: ignore[arg-type]
            break
    return theta, b


def difficulty_tables(
    case_summary: Any, run_summary: Any, *, series: str | None = None
) -> dict[str, pl.DataFrame]:
    """case_difficulty (one row per config × series × case) and run_ability (config × series ×
    run) over every run of each series (docs/statistics.md#case-difficulty)."""
    runs = series_runs(pl, run_summary.lazy(), series=series).select(
        *SERIES_KEYS, S.RUN_ID, S.SERIES, S.SERIES_COLUMN
    )
    cells = (
        case_summary.lazy()
        .select(S.CONFIG_ID, S.RUN_ID, S.CASE_ID, S.PASSED)
        .filter(pl.col(S.PASSED).is_not_null())
        .join(runs, on=[S.CONFIG_ID, S.RUN_ID])
        .collect()
    )
    groups = _indexed(cells, [*SERIES_KEYS, S.SERIES, S.SERIES_COLUMN], _G)
    run_ids = _indexed(cells, [*SERIES_KEYS, S.RUN_ID], _R)
    case_ids = _indexed(cells, [*SERIES_KEYS, S.CASE_ID], _C)
    cells = (
        cells.join(groups.select(_G, *SERIES_KEYS), on=SERIES_KEYS)
        .join(run_ids, on=[*SERIES_KEYS, S.RUN_ID])
        .join(case_ids, on=[*SERIES_KEYS, S.CASE_ID])
        .select(_G, _R, _C, pl.col(S.PASSED).cast(pl.Int8).alias(_Y))
    )
    fitted, case_flags, run_flags = _prune(cells)
    classes, weighted = _collapsed(fitted)
    group = pl.col(_G).first()
    run_group = _indexes(fitted, _R, run_ids.height, group).get_column(_G)
    case_group = fitted.group_by(_C).agg(group)
    per_class = classes.join(case_group, on=_C).group_by(_K).agg(group, pl.len().alias("_size"))
    per_class = per_class.sort(_K)
    theta, b = _fit(weighted, run_group, per_class.get_column(_G), per_class.get_column("_size"))
    p = 1.0 / (
        1.0 + (b.gather(weighted.get_column(_K)) - theta.gather(weighted.get_column(_R))).exp()
    )
    weighted = weighted.with_columns(_w=p * (1.0 - p))
    inverse_sqrt = 1.0 / (pl.col("_i") + RASCH_LAMBDA).sqrt()
    ran = (
        weighted.group_by(_R)
        .agg((pl.col("_w") * pl.col("_n")).sum().alias("_i"))
        .select(_R, inverse_sqrt.alias(S.ABILITY_SE))
    )
    hard = (
        weighted.group_by(_K)
        .agg(pl.col("_w").sum().alias("_i"))
        .select(_K, inverse_sqrt.alias(S.DIFFICULTY_SE))
    )
    per_case = classes.with_columns(pl.lit(b).gather(pl.col(_K)).alias(S.DIFFICULTY))
    per_case = per_case.join(hard, on=_K).drop(_K)
    return {
        S.CASE_DIFFICULTY: _cases(cells, fitted, case_ids, groups, per_case, case_flags),
        S.RUN_ABILITY: _runs(cells, run_ids, groups, theta, ran, run_flags),
    }


def _discrimination(fitted: pl.DataFrame) -> pl.DataFrame:
    """Per fitted case: the Pearson correlation of y with the run's pass rate on the other
    fitted cases (runs with no other fitted case left out); null when either is constant."""
    n = pl.len().over(_R)
    rest = ((pl.col(_Y).sum().over(_R) - pl.col(_Y)) / (n - 1)).alias("_x")
    cells = fitted.filter(n >= 2).with_columns(rest, pl.col(_Y).cast(pl.Float64))
    varies = (pl.col(_Y).n_unique() > 1) & (pl.col("_x").n_unique() > 1)
    corr = pl.when(varies).then(pl.corr(_Y, "_x"))
    return cells.group_by(_C).agg(corr.alias(S.DISCRIMINATION))


def _cases(
    cells: pl.DataFrame,
    fitted: pl.DataFrame,
    ids: pl.DataFrame,
    groups: pl.DataFrame,
    fit: pl.DataFrame,
    flags: pl.DataFrame,
) -> pl.DataFrame:
    counts = cells.group_by(_C).agg(
        pl.len().cast(pl.Int64).alias(S.N_RUNS), pl.col(_Y).sum().cast(pl.Int64).alias(S.PASSES)
    )
    negative = (pl.col(S.DISCRIMINATION) < 0) & (pl.col(S.N_RUNS) >= MIN_RUNS_DISCRIMINATION)
    return (
        ids.join(groups, on=SERIES_KEYS)
        .join(counts, on=_C)
        .join(fit, on=_C, how="left")
        .join(_discrimination(fitted), on=_C, how="left")
        .join(flags, on=_C, how="left")
        .with_columns(
            pl.when(negative).then(pl.lit(S.FLAG_NEGATIVE)).otherwise(pl.col(S.FLAG)).alias(S.FLAG),
        )
        .select(S.CASE_DIFFICULTY_COLUMNS)
        .sort(S.CONFIG_ID, S.SERIES, S.CASE_ID, nulls_last=True)
    )


def _runs(
    cells: pl.DataFrame,
    ids: pl.DataFrame,
    groups: pl.DataFrame,
    theta: pl.Series,
    se: pl.DataFrame,
    flags: pl.DataFrame,
) -> pl.DataFrame:
    counts = cells.group_by(_R).agg(pl.len().cast(pl.Int64).alias(S.CASES))
    return (
        ids.join(groups, on=SERIES_KEYS)
        .join(counts, on=_R)
        .join(se, on=_R, how="left")
        .join(flags, on=_R, how="left")
        .with_columns(
            pl.when(pl.col(S.ABILITY_SE).is_not_null())
            .then(pl.lit(theta).gather(pl.col(_R)))
            .alias(S.ABILITY)
        )
        .select(S.RUN_ABILITY_COLUMNS)
        .sort(S.CONFIG_ID, S.SERIES, S.RUN_ID, nulls_last=True)
    )


def case_difficulty(
    case_summary: Any, run_summary: Any, *, series: str | None = None
) -> pl.DataFrame:
    """case_difficulty of `difficulty_tables`: per config × series × case, the runs and passes,
    difficulty and its SE, discrimination and the flag (always_passes, never_passes,
    negative_discrimination)."""
    return difficulty_tables(case_summary, run_summary, series=series)[S.CASE_DIFFICULTY]


def run_ability(case_summary: Any, run_summary: Any, *, series: str | None = None) -> pl.DataFrame:
    """run_ability of `difficulty_tables`: per config × series × run, the cases, ability and its
    SE and the flag (always_passes, never_passes)."""
    return difficulty_tables(case_summary, run_summary, series=series)[S.RUN_ABILITY]
