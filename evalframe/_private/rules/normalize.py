"""A judge score on the one 0–1, higher-is-better scale (docs/scoring.md#one-scale), written once.

`s = score / scale_max`; for an evaluator whose `higher_is_better` is false (a
hallucination rate, a toxicity score, an error rate) `s = 1 − score / scale_max`. Every
other rule — weights, boundaries (`min_score`, thresholds), aggregators, deltas — reads
that `s`, so a lower-is-better metric needs no rule of its own. `ns` is the expression
namespace (`polars` or `narwhals`); the three arguments are expressions (or, for
`higher_is_better`, a Python bool when it is the same for every row).
"""

from __future__ import annotations

from evalframe._private.rules import Expr, Namespace


def normalized_score(
    ns: Namespace, score: Expr, scale_max: Expr, higher_is_better: Expr | bool = True
) -> Expr:
    """The normalized score: score / scale_max (a null scale_max reads as 1.0), or
    1 − that when `higher_is_better` is false (a null flag reads as true: evaluators
    are higher-is-better unless a config says otherwise). Null when score is null."""
    ratio = score / ns.coalesce(scale_max, ns.lit(1.0))
    if isinstance(higher_is_better, bool):
        return ratio if higher_is_better else 1.0 - ratio
    lower = ~ns.coalesce(higher_is_better, ns.lit(True))
    return ns.when(lower).then(1.0 - ratio).otherwise(ratio)
