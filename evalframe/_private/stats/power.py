"""Power of a paired comparison (SPEC §10): the minimum detectable effect of a design and
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

from evalframe._private.rules import intervals
from evalframe._private.rules.constants import CEIL_TOLERANCE, EPS, MDE_FACTOR

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


ALPHA = 0.05
"""Level of the two-sided test the power figures assume."""
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
        if limit > 0 and value is not None and value > limit + EPS:  # "exceeds" (SPEC §0)
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


def plan_rows(run_summary: pl.DataFrame, detect: float) -> pl.DataFrame:
    """Per run row of `run_summary` and metric (pass_rate, mean_score): the per-case SD
    implied by the clustered standard error, σ_c = se · √G (G = the run's cases); the
    minimum detectable change at the current G, MDE_FACTOR · se; and the cases a suite
    needs to see a change of `detect`, ⌈(MDE_FACTOR · σ_c / detect)²⌉. Null where the se
    is null (fewer than 2 cases). Vectorized over the runs."""
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
    return pl.concat(parts).select(PLAN_COLUMNS)
