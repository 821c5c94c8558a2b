"""Exact slow reference of the three-outcome decision (docs/compare.md#decisions), in plain Python
with `fractions`: every float compared exactly as a Fraction, EPS as the Fraction of the
float the rule layer writes.

    part(ci_low, ci_high, margin)     -> "pass" | "fail" | "inconclusive"
    latency_part(b, c, limit)         -> "pass" | "fail"
    decide(run, margins, limit)       -> {"decision": ..., "decision_reasons": [...]}
    cases_to_settle(n, d, se, margin) -> the paired cases at which the interval settles
"""

from __future__ import annotations

import math
from fractions import Fraction

from evalframe._private.rules.constants import EPS, Z_95

PASS, FAIL, INCONCLUSIVE = "pass", "fail", "inconclusive"
PARTS = ("pass_rate", "mean_score", "latency")


def f(x: float | None) -> Fraction | None:
    return None if x is None else Fraction(x)


def part(ci_low: float | None, ci_high: float | None, margin: float) -> str:
    """fail when high < −m − EPS; pass when low ≥ −m − EPS; else inconclusive."""
    low, high = f(ci_low), f(ci_high)
    # the engines compute m + EPS and −m − EPS in floating point: the same floats here,
    # every comparison exact
    if high is not None and -high > Fraction(margin + EPS):
        return FAIL
    if low is not None and low >= Fraction(-margin - EPS):
        return PASS
    return INCONCLUSIVE


def latency_part(baseline: float | None, candidate: float | None, limit: float) -> str:
    b, c = f(baseline), f(candidate)
    if b is None or c is None or not b > 0:
        return PASS
    ratio = Fraction((candidate - baseline) / baseline)  # type: ignore[operator]
    return FAIL if ratio > Fraction(limit + EPS) else PASS


def decide(run: dict, pass_rate_margin: float, mean_score_margin: float, limit: float) -> dict:
    parts = {
        "pass_rate": part(
            run["paired_pass_delta_ci_low"], run["paired_pass_delta_ci_high"], pass_rate_margin
        ),
        "mean_score": part(run["mean_delta_ci_low"], run["mean_delta_ci_high"], mean_score_margin),
        "latency": latency_part(run["baseline_latency_mean"], run["candidate_latency_mean"], limit),
    }
    values = list(parts.values())
    decision = FAIL if FAIL in values else INCONCLUSIVE if INCONCLUSIVE in values else PASS
    return {
        "decision": decision,
        "decision_reasons": [name for name in PARTS if parts[name] != PASS],
    }


def cases_to_settle(n: int, estimate: float, se: float | None, margin: float) -> int | None:
    """The smallest n' (never below n) with Z·σ/√n' ≤ |d + m|, σ = se·√n: exactly
    ⌈n·(Z·se/|d + m|)²⌉ in rationals (the engines subtract a 1e-9 slack before the ceiling)."""
    if se is None or n < 2 or not se > 0:
        return None
    distance = abs(Fraction(estimate) + Fraction(margin))
    if distance <= Fraction(EPS):
        return None
    total = n * (Fraction(Z_95) * Fraction(se) / distance) ** 2
    return max(n, math.ceil(total))
