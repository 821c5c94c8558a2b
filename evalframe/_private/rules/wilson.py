"""The Wilson score interval of a rate (docs/scoring.md#runs, docs/statistics.md): a 95 % interval
that does not collapse at 0 and 1, where value ± Z_95 · se gives [100 %, 100 %] for a run that
passed everything.

A rate over executions whose attempts cluster by case is not a rate over independent
trials: its effective sample size is the n whose binomial standard error equals the
clustered one, n_eff = p (1 − p) / se², when se > 0. At p = 0 or 1 (or when the clustered
se is 0 or missing) that ratio carries no information and n_eff is the number of cases.
`wilson_low` / `wilson_high` then take the rate and that n.

Written over polars-syntax expressions: `ns` is the `polars` or the `narwhals` module
(for `when`); the other arguments are expressions of it (or floats).
"""

from __future__ import annotations

from evalframe._private.rules import Expr, Namespace
from evalframe._private.rules.constants import Z_95


def effective_n(ns: Namespace, p: Expr, se: Expr, n_cases: Expr) -> Expr:
    """The clustered effective sample size of a rate p with standard error se (clustered
    by case): p (1 − p) / se² when se > 0 and 0 < p < 1 (at least 1: a rate is never
    worth less than one trial), else `n_cases`."""
    informative = (se > 0) & (p > 0) & (p < 1)
    from_se = (p * (1 - p) / (se * se)).clip(lower_bound=1.0)
    return ns.when(informative.fill_null(False)).then(from_se).otherwise(n_cases)


def _centre_and_half(p: Expr, n: Expr) -> tuple[Expr, Expr]:
    z2 = Z_95 * Z_95
    denominator = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denominator
    half = Z_95 * (p * (1 - p) / n + z2 / (4 * n * n)).sqrt() / denominator
    return centre, half


def wilson_low(ns: Namespace, p: Expr, n: Expr) -> Expr:
    """Lower end of the 95 % Wilson interval of the rate p over n trials (null when n is
    null or not positive), clipped to 0 against rounding."""
    centre, half = _centre_and_half(p, n)
    return ns.when(n > 0).then((centre - half).clip(0.0, 1.0))


def wilson_high(ns: Namespace, p: Expr, n: Expr) -> Expr:
    """Upper end of the 95 % Wilson interval of the rate p over n trials (null when n is
    null or not positive), clipped to 1 against rounding."""
    centre, half = _centre_and_half(p, n)
    return ns.when(n > 0).then((centre + half).clip(0.0, 1.0))
