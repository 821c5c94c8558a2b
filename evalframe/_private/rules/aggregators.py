"""Aggregators and gates of a composite node (docs/scoring.md#composite-nodes-and-the-root), written
once.

The engines reduce a node's children to statistics — the weighted mean (`wavg`, from the
exact partial sums), the minimum and maximum child score, the share of children that pass
(`pass_ratio`), the weighted mean without the required children (`wavg_rest`) and whether
a required child failed — once for a flat root and once per level of a tree. These rules
turn the statistics into the node's score, pass flag and gate. `ns` is the expression
namespace (`polars` or `narwhals`); `aggregator` is a column or a literal.
"""

from __future__ import annotations

from evalframe._private.rules import Expr, Namespace
from evalframe._private.rules.boundaries import meets
from evalframe._private.rules.constants import (
    ALL_OR_NOTHING,
    MAXIMUM,
    MINIMUM,
    SAFETY_GATE,
    THRESHOLD,
)


def aggregate(
    ns: Namespace,
    *,
    aggregator: Expr,
    wavg: Expr,
    s_min: Expr,
    s_max: Expr,
    threshold: Expr,
    pass_ratio: Expr,
    safety_gate_fired: Expr,
    wavg_rest: Expr,
) -> Expr:
    """The node's raw score under its aggregator: minimum / maximum of the children;
    all_or_nothing — the weighted mean when every child meets the threshold, else 0;
    safety_gate — 0 when a required child failed, else the weighted mean of the other
    children (of all when there is no other); threshold — the share of children that
    pass; weighted_average — the weighted mean."""
    return (
        ns.when(aggregator == MINIMUM)
        .then(s_min)
        .when(aggregator == MAXIMUM)
        .then(s_max)
        .when(aggregator == ALL_OR_NOTHING)
        .then(ns.when(meets(s_min, threshold)).then(wavg).otherwise(0.0))
        .when(aggregator == SAFETY_GATE)
        .then(ns.when(safety_gate_fired).then(0.0).otherwise(ns.coalesce(wavg_rest, wavg)))
        .when(aggregator == THRESHOLD)
        .then(pass_ratio)
        .otherwise(wavg)
    )


def node_score(ns: Namespace, *, present: Expr, required_failed: Expr, raw: Expr) -> Expr:
    """The node's score: null when no child is present, 0 when the required gate fired,
    else the aggregator's raw score."""
    return ns.when(~present).then(None).when(required_failed).then(0.0).otherwise(raw)


def node_passes(
    ns: Namespace,
    *,
    aggregator: Expr,
    raw: Expr,
    pass_ratio: Expr,
    threshold: Expr,
    boundary: Expr,
    safety_gate_fired: Expr,
) -> Expr:
    """Whether the node passes before its gate: a threshold node when the share of passing
    children meets the threshold; a safety_gate when no required child failed and its
    score meets the boundary; any other node when its score meets the boundary
    (min_score, else the threshold)."""
    return (
        ns.when(aggregator == THRESHOLD)
        .then(meets(pass_ratio, threshold))
        .when(aggregator == SAFETY_GATE)
        .then(~safety_gate_fired & meets(raw, boundary))
        .otherwise(meets(raw, boundary))
    )


def gate_fired(
    ns: Namespace,
    *,
    present: Expr,
    aggregator: Expr,
    required_failed: Expr,
    safety_gate_fired: Expr,
) -> Expr:
    """The node's gate fired: a present node whose required gate fired, or a safety_gate
    whose required child failed."""
    return present & (required_failed | ((aggregator == SAFETY_GATE) & safety_gate_fired))
