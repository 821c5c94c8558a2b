"""Power of a paired comparison (docs/statistics.md): the minimum detectable effect of a design and
the number of cases a suite needs to see a given change.

A two-sided test at level α = 0.05 detects a true change δ with power 0.8 when
δ >= (z_{0.975} + z_{0.80}) · se; with se = σ / √n this gives n = ((z_{0.975} + z_{0.80})·σ/δ)².
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import polars as pl

from evalframe._private import schema as S
from evalframe._private.rules import decide as rules_decide
from evalframe._private.rules import intervals
from evalframe._private.rules.compare import latency_ratio
from evalframe._private.rules.constants import ALPHA, CEIL_TOLERANCE, EPS, MDE_FACTOR

Z_975 = NormalDist().inv_cdf(0.975)
Z_80 = NormalDist().inv_cdf(0.80)


def cases_needed(sigma: float, delta: float) -> int:
    """Smallest whole number of cases n with MDE_FACTOR · sigma / √n <= delta."""
    if not delta > 0:
        raise ValueError("delta must be > 0")
    if sigma <= 0:
        return 1
    return max(1, math.ceil((MDE_FACTOR * sigma / delta) ** 2 - CEIL_TOLERANCE))


def mde(sigma: float, n: int) -> float | None:
    """Minimum detectable change with n cases of per-case SD sigma; None when n < 1."""
    return MDE_FACTOR * sigma / math.sqrt(n) if n >= 1 else None


POWER = 0.8
"""Power the minimum detectable effects are computed for."""


def power(delta: float, se: float) -> float:
    """Power of the two-sided 5 % z-test to detect a true change `delta` when the estimate
    has standard error `se`: Φ(|δ|/se − z_.975) + Φ(−|δ|/se − z_.975). α (0.05) at δ = 0;
    at δ = MDE_FACTOR · se it is 0.8 (plus the far tail, < 1e-4). se = 0: 1 for any δ ≠ 0."""
    if se < 0 or not math.isfinite(se):
        raise ValueError(f"se must be finite and >= 0, not {se}")
    if se == 0:
        return ALPHA if delta == 0 else 1.0
    z = abs(delta) / se
    phi = NormalDist().cdf
    return phi(z - Z_975) + phi(-z - Z_975)


@dataclass(frozen=True)
class TooSmall:
    """A pair whose paired cases cannot see a configured limit: its minimum detectable
    change `mde` (α 0.05, power 0.8) exceeds `limit`."""

    metric: str
    """"pass rate" or "mean score"."""
    limit_name: str
    """The config field: max_pass_rate_drop or max_mean_score_drop."""
    limit: float
    mde: float
    n_paired: int


def too_small(run_delta: Mapping[str, Any], limits: Any) -> list[TooSmall]:
    """The configured limits one run_deltas row (a pair) is too small to see: mde_mean_score
    > max_mean_score_drop, and mde_pass_rate > max_pass_rate_drop when that limit is above
    0 (a limit of 0 flags any drop; no sample size sees a change of 0). `limits` is the
    config's `compare` block; None checks nothing."""
    if limits is None:
        return []
    out = []
    for metric, column, field in (
        ("pass rate", "mde_pass_rate", "max_pass_rate_drop"),
        ("mean score", "mde_mean_score", "max_mean_score_drop"),
    ):
        limit = float(getattr(limits, field))
        value = run_delta.get(column)
        # "exceeds" (docs/scoring.md#boundaries)
        if limit > 0 and value is not None and value > limit + EPS:
            out.append(TooSmall(metric, field, limit, float(value), int(run_delta["n_paired"])))
    return out


PLAN_COLUMNS = (
    "metric",
    "run_id",
    "cases",
    "se",
    "sigma_c",
    "mde",
    "detect",
    "cases_needed",
)


def run_mean_se(
    var_between: pl.Expr, var_within: pl.Expr, cases: pl.Expr, values: pl.Expr
) -> pl.Expr:
    """Standard error of a run's mean from its variance components:
    sqrt(var_between / cases + var_within / values)."""
    return (var_between / cases + var_within / values).sqrt()


def design_errors(variance: pl.DataFrame) -> pl.DataFrame:
    """variance_components rows with the run mean's standard error now (`se_now`), with
    twice the cases (a → 2a, N → 2N: `se_twice_the_cases`) and with twice the attempts per
    case (N → 2N: `se_twice_the_attempts`); null where the variances are null. Twice the
    cases never buys less than twice the attempts (both add N executions); they buy the
    same when var_between is 0."""
    vb, vw = pl.col(S.VAR_BETWEEN), pl.col(S.VAR_WITHIN)
    a, n = pl.col(S.CASES), pl.col(S.VALUES)
    return variance.with_columns(
        run_mean_se(vb, vw, a, n).alias("se_now"),
        run_mean_se(vb, vw, 2 * a, 2 * n).alias("se_twice_the_cases"),
        run_mean_se(vb, vw, a, 2 * n).alias("se_twice_the_attempts"),
    )


DESIGN = ("se_now", "se_twice_the_cases", "se_twice_the_attempts")
MEASURE_METRIC = {S.PASSED: "pass_rate", S.SCORE: "mean_score"}
"""variance_components' measure -> the plan's metric."""


def plan_rows(
    run_summary: pl.DataFrame, detect: float, variance: pl.DataFrame | None = None
) -> pl.DataFrame:
    """Per run row of `run_summary` and metric (pass_rate, mean_score): the per-case SD
    implied by the clustered standard error, σ_c = se · √G (G = the run's cases); the
    minimum detectable change at the current G, MDE_FACTOR · se; and the cases a suite
    needs to see a change of `detect`, ⌈(MDE_FACTOR · σ_c / detect)²⌉. Null where the se
    is null (fewer than 2 cases). Vectorized over the runs. With `variance`
    (variance_components rows), also the run mean's standard errors of `design_errors`."""
    if not detect > 0:
        raise ValueError("detect must be > 0")
    parts = []
    for metric, se_col in (("pass_rate", "pass_rate_se"), ("mean_score", "mean_score_se")):
        se = pl.col(se_col).cast(pl.Float64)
        g = pl.col("cases").cast(pl.Float64)
        sigma = se * g.sqrt()
        needed = ((MDE_FACTOR * sigma / detect) ** 2 - CEIL_TOLERANCE).ceil().clip(lower_bound=1)
        parts.append(
            run_summary.select(
                pl.lit(metric).alias("metric"),
                pl.col("run_id"),
                pl.col("cases").cast(pl.Int64),
                se.alias("se"),
                sigma.alias("sigma_c"),
                intervals.mde(se).alias("mde"),
                pl.lit(detect, dtype=pl.Float64).alias("detect"),
                needed.cast(pl.Int64).alias("cases_needed"),
            )
        )
    rows = pl.concat(parts).select(PLAN_COLUMNS)
    if variance is None:
        return rows
    design = design_errors(variance).select(
        S.RUN_ID, pl.col(S.MEASURE).replace_strict(MEASURE_METRIC).alias("metric"), *DESIGN
    )
    return rows.join(design, on=[S.RUN_ID, "metric"], how="left", maintain_order="left")


# --- three-outcome decisions (docs/compare.md#decisions): what leaves a part open, and what settles
# it ---
DECISION_PART_COLUMNS = (
    S.CONFIG_ID,
    S.BASELINE_RUN_ID,
    S.CANDIDATE_RUN_ID,
    "part",
    "part_decision",
    "estimate",
    "ci_low",
    "ci_high",
    "margin",
    "n_paired",
    "cases_to_settle",
    "more_cases",
)
"""The columns of `decision_parts_table`, one row per pair × part that is not "pass"."""
_INTERVAL_PARTS = (
    # part, estimate, ci_low, ci_high, se, decide field
    (
        rules_decide.PART_PASS_RATE,
        S.PAIRED_PASS_DELTA,
        S.PAIRED_PASS_DELTA_CI_LOW,
        S.PAIRED_PASS_DELTA_CI_HIGH,
        S.PAIRED_PASS_DELTA_SE,
        "pass_rate_margin",
    ),
    (
        rules_decide.PART_MEAN_SCORE,
        S.MEAN_DELTA,
        S.MEAN_DELTA_CI_LOW,
        S.MEAN_DELTA_CI_HIGH,
        S.MEAN_DELTA_SE,
        "mean_score_margin",
    ),
)


def decision_parts_table(run_deltas: pl.DataFrame, decide: Any, limits: Any) -> pl.DataFrame:
    """Per run_deltas row (a pair) and part of its decision that is not "pass"
    (docs/compare.md#decisions, rules/decide.py), in `decision_reasons` order: the part's decision;
    for pass_rate and mean_score the point estimate, its 95 % interval, the margin, n_paired and
    `cases_to_settle` / `more_cases` (rules/decide.py: the paired cases at which the
    interval would clear −margin on one side, with the same estimate and per-case SD; n
    is n_paired for both parts); for latency the relative latency_mean increase as
    `estimate` and compare.max_latency_increase as `margin`. `decide` is the config's
    `decide` block, `limits` its `compare` block. Vectorized over the pairs."""
    keys = [S.CONFIG_ID, S.BASELINE_RUN_ID, S.CANDIDATE_RUN_ID]
    n = pl.col(S.N_PAIRED).cast(pl.Int64)
    frames = []
    for order, (part, est, lo, hi, se, field) in enumerate(_INTERVAL_PARTS):
        margin = pl.lit(float(getattr(decide, field)), dtype=pl.Float64)
        decision = rules_decide.part_decision(pl, pl.col(lo), pl.col(hi), margin)
        frames.append(
            run_deltas.with_row_index("_row").select(
                "_row",
                pl.lit(order).alias("_order"),
                *keys,
                pl.lit(part).alias("part"),
                decision.alias("part_decision"),
                pl.col(est).cast(pl.Float64).alias("estimate"),
                pl.col(lo).cast(pl.Float64).alias("ci_low"),
                pl.col(hi).cast(pl.Float64).alias("ci_high"),
                margin.alias("margin"),
                n.alias("n_paired"),
                rules_decide.cases_to_settle(pl, n, pl.col(est), pl.col(se), margin)
                .cast(pl.Int64)
                .alias("cases_to_settle"),
                rules_decide.more_cases(pl, n, pl.col(est), pl.col(se), margin)
                .cast(pl.Int64)
                .alias("more_cases"),
            )
        )
    base, cand = pl.col(f"baseline_{S.LATENCY_MEAN}"), pl.col(f"candidate_{S.LATENCY_MEAN}")
    limit = pl.lit(float(limits.max_latency_increase), dtype=pl.Float64)
    frames.append(
        run_deltas.with_row_index("_row").select(
            "_row",
            pl.lit(len(_INTERVAL_PARTS)).alias("_order"),
            *keys,
            pl.lit(rules_decide.PART_LATENCY).alias("part"),
            rules_decide.latency_decision(pl, base, cand, limit).alias("part_decision"),
            latency_ratio(pl, base, cand).cast(pl.Float64).alias("estimate"),
            pl.lit(None, dtype=pl.Float64).alias("ci_low"),
            pl.lit(None, dtype=pl.Float64).alias("ci_high"),
            limit.alias("margin"),
            n.alias("n_paired"),
            pl.lit(None, dtype=pl.Int64).alias("cases_to_settle"),
            pl.lit(None, dtype=pl.Int64).alias("more_cases"),
        )
    )
    return (
        pl.concat(frames)
        .filter(rules_decide.names_part(pl.col("part_decision")))
        .with_columns(
            pl.when(pl.col("part_decision") == rules_decide.INCONCLUSIVE).then(
                pl.col("cases_to_settle")
            ),
            pl.when(pl.col("part_decision") == rules_decide.INCONCLUSIVE).then(
                pl.col("more_cases")
            ),
        )
        .sort("_row", "_order")
        .select(DECISION_PART_COLUMNS)
    )


def decision_part_text(part: Mapping[str, Any]) -> str:
    """One row of `decision_parts_table` in words: which limit left the part open (or
    failed it) and, for an open interval, how many more paired cases would settle it."""
    name, decision = part["part"], part["part_decision"]
    if name == rules_decide.PART_LATENCY:
        ratio = part["estimate"]
        return (
            f"latency: latency_mean rose {100 * ratio:.0f} %, beyond "
            f"compare.max_latency_increase = {100 * part['margin']:.0f} %"
        )
    metric = "pass rate" if name == rules_decide.PART_PASS_RATE else "mean score"
    field = f"decide.{name}_margin"

    def show(x: float) -> str:
        return f"{100 * x:+.1f} pts" if name == rules_decide.PART_PASS_RATE else f"{x:+.3f}"

    bound = show(0.0 - part["margin"] + 0.0)  # a margin of 0 shows as +0, not −0
    if part["ci_low"] is None:
        return (
            f"{metric}: no interval ({part['n_paired']} paired cases; it needs at least 2), "
            f"so it cannot be held to {field} ({bound})"
        )
    interval = f"[{show(part['ci_low'])}, {show(part['ci_high'])}]"
    if decision == rules_decide.FAIL:
        return f"{metric}: the 95 % interval {interval} lies below −{field} ({bound})"
    text = f"{metric}: the 95 % interval {interval} spans −{field} ({bound})"
    if part["more_cases"] is None:
        return text + "; its estimate sits on the margin, so more cases alone do not settle it"
    more = part["more_cases"]
    towards = "fail" if part["estimate"] + part["margin"] < 0 else "pass"
    return (
        text + f"; about {more} more paired case{'' if more == 1 else 's'} "
        f"({part['cases_to_settle']} in all, at the same estimate and spread) would settle "
        f"it, as {towards}"
    )
