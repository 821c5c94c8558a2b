"""Constants of the rules (docs/scoring.md, docs/compare.md, docs/statistics.md): each written once,
here."""

from __future__ import annotations

from typing import Final, Literal, get_args

EPS: Final = 1e-9
"""Boundary tolerance: x meets b when x >= b - EPS; x exceeds L when x > L + EPS."""

Z_95: Final = 1.96
"""Normal quantile of a two-sided 95 % interval: value ± Z_95 · se (docs/compare.md#run_deltas)."""

ALPHA: Final = 0.05
"""Significance level of every two-sided test evalframe reports on: the power figures, the
slices' Benjamini–Hochberg q-values, the change point the terminal names."""

Z_975: Final = 1.959964
"""z_{0.975} to the 7 digits docs/statistics.md#power gives (the α = 0.05 two-sided test of an
MDE)."""

Z_80: Final = 0.841621
"""z_{0.80}: the power 0.8 of an MDE (docs/statistics.md#power)."""

MDE_FACTOR: Final = round(Z_975 + Z_80, 6)
"""z_{0.975} + z_{0.80} = 2.801585: the minimum detectable effect is MDE_FACTOR · se."""

RASCH_LAMBDA: Final = 0.1
"""The ridge penalty of the case-difficulty fit (docs/statistics.md#case-difficulty)."""

RASCH_TOLERANCE: Final = 1e-9
"""The fit stops when the largest gradient component is below this."""

MIN_RUNS_DISCRIMINATION: Final = 5
"""A case is flagged negative_discrimination only with at least this many runs."""

CEIL_TOLERANCE: Final = 1e-9
"""Slack subtracted before a ceiling of a float (a case count): 16.000000000000004 is 16."""

# --- rule names (config values) ---------------------------------------------------------
Aggregator = Literal[
    "weighted_average", "minimum", "maximum", "all_or_nothing", "safety_gate", "threshold"
]
"""Node aggregators (docs/scoring.md#composite-nodes-and-the-root), in the order the docs list
them."""
WEIGHTED_AVERAGE: Final = "weighted_average"
MINIMUM: Final = "minimum"
MAXIMUM: Final = "maximum"
ALL_OR_NOTHING: Final = "all_or_nothing"
SAFETY_GATE: Final = "safety_gate"
THRESHOLD: Final = "threshold"
AGGREGATORS: Final = get_args(Aggregator)

AttemptPassed = Literal["all", "any", "majority"]
"""attempts.passed: a case passes when all / any / more than half of its attempts did."""
ATTEMPTS_ALL: Final = "all"
ATTEMPTS_ANY: Final = "any"
ATTEMPTS_MAJORITY: Final = "majority"
ATTEMPT_PASSED_RULES: Final = get_args(AttemptPassed)

AttemptScore = Literal["mean", "min", "max"]
"""attempts.score: a case's score is the mean / min / max of its attempts' scores."""
ATTEMPT_SCORE_RULES: Final = get_args(AttemptScore)
