"""History (docs/history.md): trends, change points and flaky cases across a series of runs.

Each rule written once over polars-syntax expressions: `ns` is the `polars` or the
`narwhals` module, the other arguments expressions of it (or floats). The frames around
them (series order, group-bys, joins) are `summaries/history.py`.

- weights of a run's y: `run_weight` (1/se², null when se is null or 0), `filled_weight`
  (the median of the usable weights, or 1 when none is usable);
- the weighted least-squares slope of y on the run index: `wls_slope`, `wls_slope_se`,
  and `degrading` on the interval's high end (`rules.intervals`);
- the change point: `split_z` per split, `two_sided_p` (Φ through `normal_sf`),
  `bonferroni_p` over the splits;
- flaky cases: `flipped`, `flip_rate`, the beta-binomial method of moments
  (`beta_binomial_a`, `beta_binomial_b`), `shrunk_pass_rate`, `quarantine`.
"""

from __future__ import annotations

import math

from evalframe._private.rules import Expr, Namespace
from evalframe._private.rules.boundaries import exceeds, meets

_ERFC = (
    -1.26551223,
    1.00002368,
    0.37409196,
    0.09678418,
    -0.18628806,
    0.27886807,
    -1.13520398,
    1.48851587,
    -0.82215223,
    0.17087277,
)
"""Chebyshev coefficients of erfc (Numerical Recipes `erfcc`: fractional error below
1.2e-7 everywhere, also deep in the tail where 1 − Φ would cancel)."""


# --- weights ------------------------------------------------------------------------
def run_weight(ns: Namespace, se: Expr) -> Expr:
    """The weight of a run's y: 1/se², null when se is null, 0, negative or not finite
    (such a run takes `filled_weight`)."""
    usable = (se > 0) & ~se.is_nan() & (se < math.inf)
    return ns.when(usable.fill_null(False)).then(1.0 / (se * se))


def filled_weight(ns: Namespace, weight: Expr, median_weight: Expr) -> Expr:
    """A run's weight in the fit: its own (`run_weight`), else the median of the usable
    weights of the other runs of the fit (`median_weight`, the mean of the two middle
    ones for an even count), else 1 (no run of the fit has a usable se)."""
    return ns.when(~weight.is_null()).then(weight).otherwise(median_weight.fill_null(1.0))


# --- trend: weighted least squares of y on the run index -----------------------------
def wls_slope(ns: Namespace, sxy: Expr, sxx: Expr) -> Expr:
    """The slope Σw(x−x̄)(y−ȳ) / Σw(x−x̄)² (x̄, ȳ weighted means); null when Σw(x−x̄)² is
    not positive (fewer than two runs in the fit)."""
    return ns.when(sxx > 0).then(sxy / sxx)


def wls_slope_se(ns: Namespace, ssr: Expr, sxx: Expr, n: Expr) -> Expr:
    """sqrt((Σw·r² / (N − 2)) / Σw(x−x̄)²), r the residuals of the fit; null when N < 3."""
    return ns.when((n >= 3) & (sxx > 0)).then((ssr / (n - 2) / sxx).sqrt())


def degrading(ci_high: Expr) -> Expr:
    """y is degrading when the slope's whole 95 % interval lies below 0: its high end
    does not meet 0 (docs/scoring.md#boundaries: below −EPS); false when the interval is null."""
    return (~meets(ci_high, 0.0)).fill_null(False)


# --- change point ---------------------------------------------------------------------
def split_z(w_before: Expr, wy_before: Expr, w_after: Expr, wy_after: Expr) -> Expr:
    """z_t = (m_after − m_before) / sqrt(v_before + v_after) of one split: m = Σw·y / Σw,
    v = 1/Σw of each side."""
    m_before, m_after = wy_before / w_before, wy_after / w_after
    return (m_after - m_before) / (1.0 / w_before + 1.0 / w_after).sqrt()


def normal_sf(ns: Namespace, z: Expr) -> Expr:
    """1 − Φ(z), Φ the standard normal CDF, as erfc(z/√2)/2 (`_ERFC`, relative error
    below 1.2e-7)."""
    x = z.abs() / math.sqrt(2.0)
    t = 1.0 / (1.0 + 0.5 * x)
    poly: Expr = _ERFC[-1]
    for c in reversed(_ERFC[:-1]):
        poly = c + t * poly
    erfc_abs = t * (poly - x * x).exp()
    return ns.when(z >= 0).then(erfc_abs / 2.0).otherwise(1.0 - erfc_abs / 2.0)


def two_sided_p(ns: Namespace, z: Expr) -> Expr:
    """2 · (1 − Φ(|z|))."""
    return 2.0 * normal_sf(ns, z.abs())


def bonferroni_p(ns: Namespace, z: Expr, n: Expr) -> Expr:
    """change_p = min(1, (N − 1) · 2 · (1 − Φ(|z|))): Bonferroni over the N − 1 splits."""
    p = (n - 1) * two_sided_p(ns, z)
    return ns.when(p > 1.0).then(1.0).otherwise(p)


# --- flaky cases ----------------------------------------------------------------------
def flipped(ns: Namespace, passed: Expr, previous: Expr) -> Expr:
    """1 when `passed` differs from the case's previous run with a verdict, else 0 (0 at
    the first such run, where `previous` is null)."""
    return ns.when(~previous.is_null() & (passed != previous)).then(1).otherwise(0)


def flip_rate(ns: Namespace, flips: Expr, runs: Expr) -> Expr:
    """flips / (runs − 1); null when runs < 2."""
    return ns.when(runs >= 2).then(flips / (runs - 1))


def _rho(ns: Namespace, passes: Expr, runs: Expr, variance: Expr, mean_runs: Expr) -> Expr:
    """The intra-case correlation ρ of the beta-binomial method of moments, null where
    the fit falls back to a = b = 1 (p̄ is 0 or 1, m̄ ≤ 1, or ρ not in (0, 1): ρ must exceed 0
    and not meet 1, both within EPS)."""
    p = passes / runs
    binomial = p * (1.0 - p)
    rho = (variance - binomial / mean_runs) / (binomial * (1.0 - 1.0 / mean_runs))
    # ρ in (0, 1) with the deterministic boundaries of docs/scoring.md#boundaries: a ρ of exactly 0
    # or 1 in
    # exact arithmetic that lands on 0.9999999999999998 in floats still falls back
    inside = exceeds(rho, 0.0) & ~meets(rho, 1.0)
    fits = (passes > 0) & (passes < runs) & (mean_runs > 1) & inside
    return ns.when(fits.fill_null(False)).then(rho)


def beta_binomial_a(
    ns: Namespace, passes: Expr, runs: Expr, variance: Expr, mean_runs: Expr
) -> Expr:
    """a = p̄ (1/ρ − 1) over the K cases of a series: p̄ = Σpasses / Σruns (`passes`,
    `runs`: the sums), s² the sample variance (divisor K − 1) of the cases' pass_rate
    (`variance`, null when K < 2), m̄ the mean of runs, ρ = (s² − p̄(1−p̄)/m̄) /
    (p̄(1−p̄)(1 − 1/m̄)); 1 when K < 2, m̄ ≤ 1, p̄ is 0 or 1, or ρ is not in (0, 1)."""
    rho = _rho(ns, passes, runs, variance, mean_runs)
    return ns.when(~rho.is_null()).then(passes / runs * (1.0 / rho - 1.0)).otherwise(1.0)


def beta_binomial_b(
    ns: Namespace, passes: Expr, runs: Expr, variance: Expr, mean_runs: Expr
) -> Expr:
    """b = (1 − p̄)(1/ρ − 1), with the same terms and fallback (1) as `beta_binomial_a`."""
    rho = _rho(ns, passes, runs, variance, mean_runs)
    p = passes / runs
    return ns.when(~rho.is_null()).then((1.0 - p) * (1.0 / rho - 1.0)).otherwise(1.0)


def shrunk_pass_rate(passes: Expr, runs: Expr, a: Expr, b: Expr) -> Expr:
    """(passes + a) / (runs + a + b): the case's pass rate shrunk toward the series'."""
    return (passes + a) / (runs + a + b)


def quarantine(runs: Expr, rate: Expr, min_runs: Expr | int, flaky_flip_rate: Expr | float) -> Expr:
    """A quarantine candidate: runs ≥ history.min_runs and flip_rate meets
    history.flaky_flip_rate (false when flip_rate is null)."""
    return ((runs >= min_runs) & meets(rate, flaky_flip_rate)).fill_null(False)
