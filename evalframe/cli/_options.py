"""The options several commands share, declared once (typer reads the Annotated
metadata): the dataset argument, --config, --preset, --threshold, --out, --json,
--memory-limit, --series, --engine, --clamp, --by, --spark-remote, --bootstrap, --seed,
--replicates (`shared` adds them to a command); and where a command writes its tables by
default (`default_out`).

Light to import (typer and the standard library): `evalframe --help` builds every
command's options from here without loading polars. Help text that names a value of a
heavy module (the presets, the grid size limit, the ingest formats) says `{name}` and is
filled in from `LATE_HELP` only when a command's help is shown (`fill_late_help`)."""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable
from enum import StrEnum
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

import evalframe as ef
from evalframe.cli._console import Lazy

if TYPE_CHECKING:
    import evalframe.cli._render as ui
else:
    ui = Lazy("evalframe.cli._render")

F = TypeVar("F", bound=Callable[..., Any])

DatasetArg = Annotated[
    Path, typer.Argument(help="Dataset folder (Parquet tables) or DuckDB database file.")
]
ConfigOpt = Annotated[
    Path | None, typer.Option("--config", "-c", help="Policy file (YAML or JSON).")
]


def describe_preset(name: str) -> str:
    """What a preset (config.PRESETS) sets, from the config it loads: threshold, borderline
    band, weighted evaluators, missing evaluators, outcomes and run gates."""
    cfg = ef.config_from_dict(dict(ef.PRESETS[name]), source=f"preset {name}")
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


def preset_help() -> str:
    """--preset's help: every preset and what it sets (generated from config.PRESETS)."""
    return (
        "Base policy (--config and --threshold apply on top): "
        + "; ".join(describe_preset(name) for name in ef.PRESETS)
        + ". score, compare and report state the policy they used."
    )


def default_of(function: Callable[..., Any], parameter: str) -> Any:
    """The default of a public function's parameter: where a limit the CLI states in its
    help is written (load_grid's max_configs, report_tables' per_pair)."""
    return inspect.signature(function).parameters[parameter].default


LATE_HELP: dict[str, Callable[[], str]] = {
    "presets": preset_help,
    "max_configs": lambda: f"{default_of(ef.load_grid, 'max_configs'):,}",
    "formats": lambda: ", ".join(ef.INGEST_FORMATS),
    "cases_per_pair": lambda: str(
        default_of(import_module("evalframe.plots").report_tables, "per_pair")
    ),
}
"""`{name}` in an option's help -> the text it stands for, computed when help is shown
(each needs a module that imports polars)."""


def fill_late_help(command: Any) -> None:
    """Replace the `{name}` fields of LATE_HELP in the help of `command`'s parameters (a
    click command)."""
    for param in getattr(command, "params", []):
        if "{" in (getattr(param, "help", None) or ""):
            param.help = re.sub(
                r"\{(\w+)\}", lambda m: LATE_HELP[m[1]]() if m[1] in LATE_HELP else m[0], param.help
            )


PresetOpt = Annotated[str | None, typer.Option("--preset", "-p", help="{presets}")]
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


MemoryLimitOpt = Annotated[
    str | None,
    typer.Option(
        "--memory-limit",
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


class Engine(StrEnum):
    """Which engine computes the tables (what each runs: engines/capabilities.py)."""

    polars = "polars"
    duckdb = "duckdb"
    spark = "spark"


EngineOpt = Annotated[
    Engine,
    typer.Option(
        "--engine",
        help="polars (everything), duckdb (flat configs: sql/ macros) or spark "
        '(pip install "evalframe\\[spark]"; local\\[2], or Spark Connect with --spark-remote); '
        "docs/architecture.md#capabilities lists what each runs.",
    ),
]
SparkRemoteOpt = Annotated[
    str | None,
    typer.Option(
        "--spark-remote",
        metavar="sc://HOST:PORT",
        help="With --engine spark: run on the Spark Connect server at this address.",
    ),
]
ClampOpt = Annotated[
    bool,
    typer.Option("--clamp", help="Clamp out-of-range scores, turn NaN/inf into null."),
]
ByOpt = Annotated[
    str | None,
    typer.Option(
        "--by",
        help="Slice by 'tag' (each value of executions.tags) or an executions column; "
        "score writes slice_summary, compare writes slice_deltas.",
    ),
]
ReplicatesOpt = Annotated[
    str | None,
    typer.Option(
        "--replicates",
        metavar="COLUMN",
        help="A runs column whose equal values mark reruns of one system (seed, rerun): "
        "writes noise_floor, how far such runs land apart; compare marks pairs within it.",
    ),
]
BootstrapOpt = Annotated[
    int | None,
    typer.Option(
        "--bootstrap",
        metavar="B",
        show_default=False,
        help="Case bootstrap with B replicates (1-1000000; default off): run_summary gets "
        "95 % bootstrap intervals, run_passed_prob, rank_low/high and p_best "
        "(docs/statistics.md).",
    ),
]
SeedOpt = Annotated[
    int,
    typer.Option("--seed", metavar="S", help="Seed of the --bootstrap replicates (0-2147483646)."),
]
SHARED: dict[str, tuple[Any, Any]] = {
    "config": (ConfigOpt, None),
    "preset": (PresetOpt, None),
    "threshold": (ThresholdOpt, None),
    "out": (OutOpt, None),
    "clamp": (ClampOpt, False),
    "engine": (EngineOpt, Engine.polars),
    "memory_limit": (MemoryLimitOpt, None),
    "by": (ByOpt, None),
    "series": (SeriesOpt, None),
    "spark_remote": (SparkRemoteOpt, None),
    "as_json": (JsonOpt, False),
    "bootstrap": (BootstrapOpt, None),
    "seed": (SeedOpt, 0),
    "replicates": (ReplicatesOpt, None),
}
"""The options several commands take, by parameter name: (declaration, default)."""
POLICY = ("config", "preset", "threshold")
ENGINE = ("clamp", "engine", "memory_limit", "spark_remote")
BOOT = ("bootstrap", "seed", "replicates")


def shared(*names: str) -> Callable[[F], F]:
    """Give a command the SHARED options `names`, after its own parameters: typer reads
    them from the signature, the command receives them in its `**kwargs` (the engine as
    its name)."""

    def add(fn: F) -> F:
        own = [
            p
            for p in inspect.signature(fn, eval_str=True).parameters.values()
            if p.kind != p.VAR_KEYWORD
        ]
        kind = inspect.Parameter.KEYWORD_ONLY
        more = [
            inspect.Parameter(n, kind, annotation=a, default=d)
            for n in names
            for a, d in [SHARED[n]]
        ]

        @functools.wraps(fn)
        def command(**kwargs: Any) -> Any:
            return fn(**{k: str(v) if isinstance(v, Engine) else v for k, v in kwargs.items()})

        command.__signature__ = inspect.Signature([*own, *more])  # type: ignore[attr-defined]
        return command  # type: ignore[return-value]

    return add


def policy(options: dict[str, Any]) -> Any:
    """The config of the policy options (removed from `options`)."""
    config, preset = options.pop("config"), options.pop("preset")
    return ef.load_config(config, preset=preset, threshold=options.pop("threshold", None))


def beside(dataset: Path, name: str) -> Path:
    """DATASET/name for a dataset folder; next to a DuckDB file otherwise."""
    return (dataset if dataset.is_dir() else dataset.parent) / name


def default_out(dataset: Path, out: Path | None) -> Path:
    """Where a command writes its tables: --out, else the results store DATASET/results."""
    return beside(dataset, "results") if out is None else out


def compute_and_write(
    dataset: Path, out: Path | None, command: str, cfg: Any, message: str, compute: Any
) -> tuple[Any, Path, dict[str, Path]]:
    """`compute()` (a `*_tables` call of the public API) under a progress line `message`,
    its tables committed under `default_out` as one result set written by `command` with
    `cfg`'s canonical JSON; the inputs' fingerprint is taken before anything is read, so a
    later change marks the set stale. Returns the tables, the folder and the written files."""
    target = default_out(dataset, out)
    fingerprint = ef.inputs_fingerprint(dataset)
    with ui.progress(message):
        tables = compute()
        written = ef.write_tables(
            tables,
            target,
            config_json=cfg.canonical_json(),
            command=command,
            dataset=dataset,
            inputs_fingerprint=fingerprint,
        )
    return tables, target, written


MODES = ("auto", "table", "line")
"""How `evalframe sql` shows a result on screen: `table`; `line` (one `column = value` line
per column, rows apart, like DuckDB's `.mode line` or psql's `\\x`); `auto` (default): line
when a row is too wide for the terminal (`_shell.too_wide`)."""


def check_mode(value: str) -> str:
    """The --mode callback: one of MODES, else a usage error (exit 2)."""
    if value not in MODES:
        raise typer.BadParameter(f"must be one of {', '.join(MODES)}, not {value!r}.")
    return value
