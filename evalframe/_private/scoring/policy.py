"""Configs as a table: one row per config of a batch, one column per scalar policy field.

Scoring many configs at once (a sweep, docs/sweep.md) joins this table to the data instead of
looping over configs in Python; scoring one config is the one-row case of the same plan.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from evalframe._private import schema as S
from evalframe._private.config import Config
from evalframe._private.scoring.tree import CFG
from evalframe._private.scoring.tree_eval import CFG_THRESHOLD, ON_MISSING, OVERRIDE

TREE = "_tree"  # index of the config's tree-evaluation group (see tree.tree_key)
BORDERLINE = "_borderline"
OUTCOMES_MODE = "_outcomes"
ATTEMPT_SCORE = "_attempts_score"
ATTEMPT_PASSED = "_attempts_passed"

_POLICY_SCHEMA = {
    CFG: pl.Int32,
    TREE: pl.Int32,
    S.CONFIG_ID: pl.String,
    CFG_THRESHOLD: pl.Float64,
    OVERRIDE: pl.Float64,
    BORDERLINE: pl.Float64,
    ON_MISSING: pl.String,
    OUTCOMES_MODE: pl.String,
    ATTEMPT_SCORE: pl.String,
    ATTEMPT_PASSED: pl.String,
    S.MIN_MEAN_SCORE: pl.Float64,
    S.MIN_PASS_RATE: pl.Float64,
    S.MIN_PASS_RATE_LOWER: pl.Float64,
}


def as_configs(config: Config | Sequence[Config] | None) -> list[Config]:
    """Normalize the `config` argument of the public functions to a non-empty list."""
    if config is None:
        return [Config()]
    if isinstance(config, Config):
        return [config]
    configs = list(config)
    if not configs:
        return [Config()]
    return configs


def policy_table(configs: Sequence[Config], trees: Sequence[int] | None = None) -> pl.DataFrame:
    """One row per config with every scalar field the plans need; `trees` gives each
    config's tree-evaluation group (default: its own)."""
    trees = list(range(len(configs))) if trees is None else list(trees)
    rows = [
        {
            CFG: i,
            TREE: trees[i],
            S.CONFIG_ID: c.config_id,
            CFG_THRESHOLD: c.threshold,
            OVERRIDE: c.threshold_override,
            BORDERLINE: c.borderline,
            ON_MISSING: c.on_missing,
            OUTCOMES_MODE: c.outcomes,
            ATTEMPT_SCORE: c.attempts.score,
            ATTEMPT_PASSED: c.attempts.passed,
            S.MIN_MEAN_SCORE: c.run_gates.min_mean_score,
            S.MIN_PASS_RATE: c.run_gates.min_pass_rate,
            S.MIN_PASS_RATE_LOWER: c.run_gates.min_pass_rate_lower,
        }
        for i, c in enumerate(configs)
    ]
    return pl.DataFrame(rows, schema=_POLICY_SCHEMA)


def policy_by_config_id(configs: Sequence[Config]) -> pl.LazyFrame:
    """The policy table keyed by config_id (for frames that already carry config_id)."""
    return policy_table(configs).drop(CFG).unique(S.CONFIG_ID, keep="first").lazy()
