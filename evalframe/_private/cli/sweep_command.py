"""`evalframe sweep`: recompute every run under many configs at once."""

from __future__ import annotations

from pathlib import Path

from evalframe import load_grid, sweep_tables, write_tables
from evalframe._private import schema as S
from evalframe._private.cli.console import stdout
from evalframe._private.cli.render import print_json, say, sweep_progress, sweep_report
from evalframe._private.cli.score_command import default_out
from evalframe._private.pipeline.sweep import grid_evaluators, tree_groups
from evalframe._private.store.fingerprint import inputs_fingerprint
from evalframe._private.store.output import config_metadata


def sweep_command(
    dataset: Path,
    *,
    grid: Path,
    out: Path | None = None,
    curve: bool = False,
    clamp: bool = False,
    max_configs: int | None = None,
    as_json: bool = False,
) -> None:
    """The body of `evalframe sweep` (its options: evalframe/cli.py); `max_configs` None is
    load_grid's limit."""
    limit = {} if max_configs is None else {"max_configs": max_configs}
    spec = load_grid(grid, evaluators=grid_evaluators(dataset), **limit)
    target = default_out(dataset, out)
    fingerprint = inputs_fingerprint(dataset)
    with sweep_progress([len(g) for g in tree_groups(spec.configs)]) as on_chunk:
        tables = sweep_tables(dataset, spec, curve=curve, clamp=clamp, on_chunk=on_chunk)
    write_tables(
        tables,
        target,
        config_json=config_metadata([c.canonical_json() for c in spec.configs]),
        command="sweep",
        dataset=dataset,
        inputs_fingerprint=fingerprint,
    )
    table = tables[S.SWEEP]
    if as_json:
        print_json(table.to_dicts())
        return
    for part in sweep_report(table, spec.params):
        stdout.print(part)
    stdout.print(
        say(
            f"{len(spec.configs)} configs × {table[S.RUN_ID].n_unique()} runs; "
            "tables written to {}/",
            target,
        )
    )
