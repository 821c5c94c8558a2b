"""The options several commands share, declared once (typer reads the Annotated
metadata): the dataset argument, --config, --preset, --threshold, --out, --json,
--memory-limit."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from evalframe import PRESETS, Config, config_from_dict
from evalframe._private.config import parse_memory_limit
from evalframe._private.errors import UsageError

DatasetArg = Annotated[
    Path, typer.Argument(help="Dataset folder (Parquet tables) or DuckDB database file.")
]
ConfigOpt = Annotated[
    Path | None, typer.Option("--config", "-c", help="Policy file (YAML or JSON).")
]


def describe_preset(name: str) -> str:
    """What a preset (config.PRESETS) sets, from the config it loads: threshold, borderline
    band, weighted evaluators, missing evaluators, outcomes and run gates."""
    cfg: Config = config_from_dict(dict(PRESETS[name]), source=f"preset {name}")
    band = "no borderline band" if cfg.borderline is None else f"borderline from {cfg.borderline:g}"
    tree = (
        "every evaluator weighted equally"
        if not cfg.evaluators
        else f"{len(cfg.evaluators)} weighted evaluators ({', '.join(cfg.evaluators)})"
    )
    gates = cfg.run_gates
    return (
        f"'{name}': threshold {cfg.threshold:g}, {band}, {tree}, missing evaluators "
        f"{cfg.on_missing}, outcomes {cfg.outcomes}, run gates mean score {gates.min_mean_score:g}"
        f" and pass rate {100 * gates.min_pass_rate:g}%"
    )


PRESET_HELP = (
    "Base policy (--config and --threshold apply on top): "
    + "; ".join(describe_preset(name) for name in PRESETS)
    + ". score, compare and report state the policy they used."
)
"""--preset's help: every preset and what it sets (generated from config.PRESETS)."""

PresetOpt = Annotated[str | None, typer.Option("--preset", "-p", help=PRESET_HELP)]
ThresholdOpt = Annotated[
    float | None,
    typer.Option(
        "--threshold",
        "-t",
        min=0.0,
        max=1.0,
        help="Pass threshold 0-1; beats executions.threshold and the config.",
    ),
]
OutOpt = Annotated[
    Path | None, typer.Option("--out", "-o", help="Output folder (default: DATASET/results).")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]


def check_memory_limit(value: str | None) -> str | None:
    """The --memory-limit callback: the one parser (config.parse_memory_limit), so a bad
    size is a usage error (exit 2) before anything is read, whatever the engine."""
    if value is not None:
        try:
            parse_memory_limit(value)
        except UsageError as exc:
            raise typer.BadParameter(str(exc).removeprefix("--memory-limit ")) from None
    return value


MemoryLimitOpt = Annotated[
    str | None,
    typer.Option(
        "--memory-limit",
        callback=check_memory_limit,
        help="Memory budget, e.g. 3GB, 512MB, 1.5GiB (default 3GB; 64MB to 1024TiB): DuckDB "
        "spills to disk beyond it, the polars engine scores runs in batches that fit it.",
    ),
]
SeriesOpt = Annotated[
    str | None,
    typer.Option(
        "--series",
        metavar="COLUMN",
        help="Pair runs within each value of this runs column only (model, target, agent, "
        "...): --pairs consecutive never pairs runs of two series; the default compares "
        "the newest run of each series with the one before it.",
    ),
]
