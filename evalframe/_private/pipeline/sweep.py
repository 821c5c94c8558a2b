"""`sweep_tables`: every table `evalframe sweep` writes — sweep, sweep_configs and, on
request, threshold_curve — for any list of configs or a grid.

Configs whose evaluator trees differ (a metric added or removed, a composite changed)
are grouped by tree shape; each group is one vectorized pass (`sweep.sweep`: the tree
evaluated once per tree key, configs applied as a joined table in chunks). The only
Python loop is over the distinct tree shapes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import polars as pl

from evalframe._private import schema as S
from evalframe._private.config import Config
from evalframe._private.data.dataset import Dataset, load_dataset
from evalframe._private.errors import ConfigError
from evalframe._private.pipeline.tables import Tables
from evalframe._private.scoring.execution_scores import execution_scores
from evalframe._private.scoring.tree import shape_key
from evalframe._private.sweep.sweep import Grid, sweep
from evalframe._private.sweep.threshold_curve import threshold_curve


def tree_groups(configs: Sequence[Config]) -> list[list[Config]]:
    """Configs grouped by evaluator-tree shape, in first-seen order."""
    groups: dict[object, list[Config]] = {}
    for c in configs:
        groups.setdefault(repr(shape_key(c)), []).append(c)
    return list(groups.values())


def sweep_tables(
    dataset: str | Path | Dataset,
    configs: Sequence[Config] | Grid,
    *,
    curve: bool = False,
    clamp: bool = False,
    on_chunk: Callable[[int, int], None] | None = None,
) -> Tables[pl.DataFrame]:
    """A `Tables` of run_summary rows for every (config × run) (`sweep`, with `sweep_*`
    parameter columns for a Grid), the configs themselves (`sweep_configs`: config_id →
    JSON) and, with `curve=True`, the base config's `threshold_curve`. `on_chunk(done,
    total)` is called as chunks finish: configs done so far out of all of them."""
    grid = configs if isinstance(configs, Grid) else None
    config_list = list(grid.configs) if grid is not None else list(configs)  # type: ignore[arg-type]
    if not config_list:
        raise ConfigError("sweep needs at least one config; hint: check the grid file.")
    ds = dataset if isinstance(dataset, Dataset) else load_dataset(dataset, clamp=clamp)
    # one vectorized pass per tree shape (configs of a shape share the tree evaluation)
    parts = []
    done = 0
    for group in tree_groups(config_list):
        report = None
        if on_chunk is not None:

            def report(k: int, n: int, done: int = done, size: int = len(group)) -> None:
                on_chunk(done + size * k // n, len(config_list))

        parts.append(sweep(ds, group, on_chunk=report))
        done += len(group)
    table = pl.concat(parts, how="diagonal_relaxed")
    if grid is not None:
        table = table.join(grid.params, on=S.CONFIG_ID, how="left")
    out = Tables(
        {
            S.SWEEP: table,
            S.SWEEP_CONFIGS: pl.DataFrame(
                {
                    S.CONFIG_ID: [c.config_id for c in config_list],
                    S.CONFIG: [c.canonical_json() for c in config_list],
                }
            ),
        }
    )
    if curve:
        base = grid.base if grid is not None else config_list[0]
        out[S.THRESHOLD_CURVE] = threshold_curve(execution_scores(ds, base), base).collect()
    return out
