"""The options several commands share, declared once (typer reads the Annotated
metadata): the dataset argument, --config, --preset, --threshold, --out, --json."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from evalframe._private.config import PRESETS

DatasetArg = Annotated[
    Path, typer.Argument(help="Dataset folder (Parquet tables) or DuckDB database file.")
]
ConfigOpt = Annotated[
    Path | None, typer.Option("--config", "-c", help="Policy file (YAML or JSON).")
]
PresetOpt = Annotated[
    str | None, typer.Option("--preset", "-p", help=f"Base policy: {', '.join(PRESETS)}.")
]
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
