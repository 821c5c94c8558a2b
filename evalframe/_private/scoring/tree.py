"""The evaluator tree as tables: one row per node, and the map from data evaluators to leaves.

The tree's *shape* (paths, parents, depths, aggregators, required_children membership) is
shared by every config evaluated together; per-node *parameters* (weight, required,
min_score, threshold) may differ per config, so they live in a (config, node) table. This
is what lets one vectorized plan score many configs at once (docs/sweep.md).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from evalframe._private import schema as S
from evalframe._private.config import Config, Evaluator, parse_range
from evalframe._private.errors import UsageError
from evalframe._private.rules.constants import ALL_OR_NOTHING, THRESHOLD

ROOT = ""
"""Path of the implicit root node (the execution score)."""
SEP = "/"

# internal column names of node tables
CFG = "_cfg"  # integer index of a config in the batch being scored
NODE = "_node"  # integer index of a node in `Tree.nodes`
PARENT_NODE = "_parent_node"
PK = "_pk"  # CFG * n_nodes + NODE: one Int64 key for (config, node)
NODE_WEIGHT = "_node_weight"
NODE_T = "_node_t"
IN_R = "_in_required_children"
HAS_R = "_has_required_children"


@dataclass(frozen=True)
class Node:
    path: str
    name: str
    parent: str | None
    depth: int
    aggregator: str | None  # None for leaves
    in_required_children: bool
    has_required_children: bool
    higher_is_better: bool = True
    """A leaf's direction (docs/scoring.md#one-scale): false normalizes its scores as 1 − score /
    scale_max."""


@dataclass(frozen=True)
class Tree:
    """Shape of the evaluator tree plus per-config node parameters."""

    nodes: tuple[Node, ...]
    params: pl.DataFrame  # CFG, PATH, NODE_WEIGHT, REQUIRED, MIN_SCORE, NODE_T
    labels: pl.DataFrame  # PATH, lo, hi, SCORE_LABEL, _order  (score_ranges)
    configured: bool  # False: leaves come from the data (no `evaluators` list)

    @property
    def max_depth(self) -> int:
        return max(n.depth for n in self.nodes)

    @property
    def leaves(self) -> list[Node]:
        return [n for n in self.nodes if n.aggregator is None and n.path != ROOT]

    @property
    def is_flat(self) -> bool:
        return self.max_depth <= 1

    @property
    def n_nodes(self) -> int:
        return len(self.nodes)

    def index(self) -> dict[str, int]:
        """Node path -> node index."""
        return {n.path: i for i, n in enumerate(self.nodes)}

    def shape_frame(self) -> pl.DataFrame:
        index = self.index()
        return pl.DataFrame(
            {
                NODE: list(range(len(self.nodes))),
                PARENT_NODE: [None if n.parent is None else index[n.parent] for n in self.nodes],
                S.PATH: [n.path for n in self.nodes],
                S.EVALUATOR: [n.name for n in self.nodes],
                S.PARENT: [n.parent for n in self.nodes],
                S.DEPTH: [n.depth for n in self.nodes],
                S.AGGREGATOR: [n.aggregator for n in self.nodes],
                IN_R: [n.in_required_children for n in self.nodes],
                HAS_R: [n.has_required_children for n in self.nodes],
            },
            schema={
                NODE: pl.Int32,
                PARENT_NODE: pl.Int32,
                S.PATH: pl.String,
                S.EVALUATOR: pl.String,
                S.PARENT: pl.String,
                S.DEPTH: pl.Int32,
                S.AGGREGATOR: pl.String,
                IN_R: pl.Boolean,
                HAS_R: pl.Boolean,
            },
        )

    def evaluator_map(self) -> dict[str, int]:
        """data `evaluator` value -> leaf node index, by the leaf's full path, or by its
        name when no other leaf has that name."""
        index = self.index()
        leaves = self.leaves
        counts = Counter(n.name for n in leaves)
        keys: dict[str, int] = {}
        for n in leaves:
            if counts[n.name] == 1:
                keys.setdefault(n.name, index[n.path])
        for n in leaves:
            keys[n.path] = index[n.path]
        return keys

    def node_table(self) -> pl.DataFrame:
        """Per-config parameters joined with the shape, keyed by PK."""
        return self.params.join(self.shape_frame(), on=S.PATH).with_columns(
            (pl.col(CFG).cast(pl.Int64) * self.n_nodes + pl.col(NODE)).alias(PK)
        )


def _walk(
    entries: dict[str, Evaluator], parent: str, depth: int, required: tuple[str, ...]
) -> list[tuple[Node, Evaluator]]:
    out: list[tuple[Node, Evaluator]] = []
    for name, entry in entries.items():
        path = name if parent == ROOT else f"{parent}{SEP}{name}"
        node = Node(
            path=path,
            name=name,
            parent=parent,
            depth=depth,
            aggregator=entry.effective_aggregator if entry.is_composite else None,
            in_required_children=name in required,
            has_required_children=bool(entry.required_children),
            higher_is_better=entry.higher_is_better,
        )
        out.append((node, entry))
        if entry.is_composite:
            out += _walk(entry.children or {}, path, depth + 1, entry.required_children)
    return out


def shape_key(config: Config) -> object:
    """What configs scored in one plan must share: names, nesting, aggregators, and the
    direction of each leaf (the leaf grid normalizes scores once for the whole batch)."""
    return _shape_key(config)


def _shape_key(config: Config) -> object:
    def strip(entries: dict[str, Evaluator] | None):
        if entries is None:
            return None
        return tuple(
            (
                name,
                e.effective_aggregator if e.is_composite else None,
                e.required_children,
                strip(e.children),
                e.higher_is_better,
            )
            for name, e in entries.items()
        )

    return (config.aggregator, config.required_children, strip(config.evaluators))


def _uses_threshold(config: Config) -> bool:
    """Whether evaluating the tree (below the root verdict) reads the execution threshold:
    a node whose pass flag matters (required, a safety_gate's required child, a child of a
    `threshold` node) with no min_score, or an all_or_nothing / threshold node with no t."""

    def walk(entries: dict[str, Evaluator] | None, parent_agg: str, parent_r: tuple) -> bool:
        for name, e in (entries or {}).items():
            matters = e.required or name in parent_r or parent_agg == "threshold"
            if matters and e.min_score is None:
                return True
            if e.is_composite:
                agg = e.effective_aggregator
                if agg in (ALL_OR_NOTHING, THRESHOLD) and e.threshold is None:
                    return True
                if walk(e.children, agg, e.required_children):
                    return True
        return False

    if config.aggregator == ALL_OR_NOTHING:
        return True
    if config.evaluators is None:
        return config.aggregator == "threshold" or bool(config.required_children)
    return walk(config.evaluators, config.aggregator, config.required_children)


def tree_key(config: Config) -> str:
    """Configs with equal keys evaluate the tree identically for every execution: same
    node parameters and on_missing, and — only when the tree reads it — same threshold."""
    parts: dict[str, object] = {
        "aggregator": config.aggregator,
        "required_children": config.required_children,
        "on_missing": config.on_missing,
        "evaluators": None
        if config.evaluators is None
        else {k: v.model_dump(mode="json") for k, v in config.evaluators.items()},
    }
    if _uses_threshold(config):
        parts["threshold"] = (config.threshold, config.threshold_override)
    return json.dumps(parts, sort_keys=True, default=list)


_PARAMS_SCHEMA = {
    CFG: pl.Int32,
    S.PATH: pl.String,
    NODE_WEIGHT: pl.Float64,
    S.REQUIRED: pl.Boolean,
    S.MIN_SCORE: pl.Float64,
    NODE_T: pl.Float64,
}
_LABELS_SCHEMA = {
    S.PATH: pl.String,
    "_lo": pl.Float64,
    "_hi": pl.Float64,
    S.SCORE_LABEL: pl.String,
    "_order": pl.Int32,
}


def _param_rows(
    ci: int, config: Config, nodes: tuple[Node, ...], walked: list[tuple[Node, Evaluator]]
) -> list[tuple]:
    """One config's node parameters (_PARAMS_SCHEMA rows): the root, then each node."""
    entries = (
        walked
        if config.evaluators is None
        else _walk(config.evaluators, ROOT, 1, config.required_children)
    )
    by_path = {n.path: e for n, e in entries}
    rows: list[tuple] = [(ci, ROOT, 1.0, False, None, None)]
    for node in nodes[1:]:
        e = by_path[node.path]
        rows.append((ci, node.path, e.weight, e.required, e.min_score, e.threshold))
    return rows


def build_tree(configs: Sequence[Config], data_evaluators: Sequence[str] = ()) -> Tree:
    """Node tables for a batch of configs that share one tree shape.

    `data_evaluators` are the distinct evaluator names in the data; they become the leaves
    when the configs list no `evaluators`.
    """
    first = configs[0]
    if any(_shape_key(c) != _shape_key(first) for c in configs[1:]):
        raise UsageError(
            "configs scored together must share one evaluator tree (names, nesting, "
            "aggregators, required_children, higher_is_better); hint: score configs with "
            "different trees in separate calls, or vary only weights, thresholds and flags."
        )
    root = Node(ROOT, ROOT, None, 0, first.aggregator, False, bool(first.required_children))
    if first.evaluators is None:
        walked = [
            (Node(name, name, ROOT, 1, None, False, False), Evaluator())
            for name in sorted(set(data_evaluators))
        ]
    else:
        walked = _walk(first.evaluators, ROOT, 1, first.required_children)
    nodes = (root, *(n for n, _ in walked))
    params = pl.DataFrame(
        [
            row
            for ci, config in enumerate(configs)
            for row in _param_rows(ci, config, nodes, walked)
        ],
        schema=_PARAMS_SCHEMA,
        orient="row",
    )
    labels = pl.DataFrame(
        [
            (node.path, *parse_range(key), label, order)
            for node, entry in walked
            for order, (key, label) in enumerate((entry.score_ranges or {}).items())
        ],
        schema=_LABELS_SCHEMA,
        orient="row",
    )
    return Tree(nodes=nodes, params=params, labels=labels, configured=first.evaluators is not None)
