"""The `evalframe` command line: a thin layer over the Python API.

Exit codes: 0 ok; 1 a gate failed (`score --check`) or a regression was detected
(`compare`); 2 bad input or usage.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, TypeVar

import polars as pl
import typer

from evalframe._private import schema as S
from evalframe._private.case_summary import case_stats, case_summary
from evalframe._private.compare import compare
from evalframe._private.config import PRESETS, load_config
from evalframe._private.dataset import load_dataset
from evalframe._private.demo import write_demo
from evalframe._private.duckdb_engine import compare_duckdb, score_duckdb
from evalframe._private.errors import EvalframeError
from evalframe._private.execution_scores import evaluator_scores, score
from evalframe._private.ingest.command import ingest_command
from evalframe._private.leaves import data_evaluators
from evalframe._private.output import config_metadata, write_tables
from evalframe._private.pairs import pairs_for
from evalframe._private.render import (
    compare_report,
    print_json,
    progress,
    run_table,
    stderr,
    stdout,
    sweep_progress,
    sweep_report,
)
from evalframe._private.run_summary import run_summary
from evalframe._private.sql_shell import sql_command
from evalframe._private.sweep import load_grid, sweep
from evalframe._private.threshold_curve import threshold_curve

app = typer.Typer(
    name="evalframe",
    help="Vectorized analytics over LLM-judge outputs: scores, verdicts, gates, regressions.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="rich",
    context_settings={"help_option_names": ["-h", "--help"]},
)

F = TypeVar("F", bound=Callable[..., Any])


def handles_errors(fn: F) -> F:
    """Turn EvalframeError into its message on stderr and exit code 2."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except EvalframeError as exc:
            stderr.print(f"[bold red]error:[/bold red] {exc}", markup=True, highlight=False)
            raise typer.Exit(exc.exit_code) from None

    return wrapper  # type: ignore[return-value]


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


class Engine(StrEnum):
    """Which engine computes the tables."""

    polars = "polars"
    duckdb = "duckdb"


EngineOpt = Annotated[
    Engine,
    typer.Option("--engine", help="polars (any config) or duckdb (flat configs: sql/ macros)."),
]
ClampOpt = Annotated[
    bool,
    typer.Option("--clamp", help="Clamp out-of-range scores, turn NaN/inf into null."),
]


COMPARE_NODE_COLUMNS = [S.CONFIG_ID, S.RUN_ID, S.CASE_ID, S.ATTEMPT, S.PATH, S.SCORE]
"""The evaluator_scores columns `compare` reads (the rest is never computed)."""


def _default_out(dataset: Path, out: Path | None) -> Path:
    if out is not None:
        return out
    return (dataset if dataset.is_dir() else dataset.parent) / "results"


def _score_tables(ds: Any, cfg: Any, engine: str) -> dict[str, pl.DataFrame | pl.LazyFrame]:
    """execution_scores, case_summary and run_summary by the chosen engine."""
    if engine == Engine.duckdb:
        return dict(score_duckdb(ds, cfg))
    # materialize once: both summaries and the written table derive from it
    ex = score(ds, cfg).sort(S.RUN_ID, S.CASE_ID, S.ATTEMPT).collect()
    stats = case_stats(ex.lazy()).collect().lazy()
    return {
        S.EXECUTION_SCORES: ex,
        S.CASE_SUMMARY: case_summary(ex.lazy(), cfg, stats=stats),
        S.RUN_SUMMARY: run_summary(ex.lazy(), cfg, runs=ds.runs, case_stats=stats),
    }


def _score_and_write(
    dataset: Path,
    config: Path | None,
    preset: str | None,
    threshold: float | None,
    out: Path | None,
    evaluators: bool,
    clamp: bool,
    engine: str = Engine.polars,
) -> tuple[pl.DataFrame, Path, int]:
    cfg = load_config(config, preset=preset, threshold=threshold)
    ds = load_dataset(dataset, clamp=clamp)
    changed = ds.clamped.changed if ds.clamped else 0
    if changed:
        stderr.print(
            f"--clamp changed {changed} score rows ({ds.clamped.clamped} clamped, "
            f"{ds.clamped.nulled} NaN/inf set to null)"
        )
    target = _default_out(dataset, out)
    with progress(f"scoring {dataset} under config {cfg.config_id} ({engine.value})"):
        tables = _score_tables(ds, cfg, engine)
        if evaluators:
            tables[S.EVALUATOR_SCORES] = evaluator_scores(ds, cfg)
        written = write_tables(tables, target, config_json=cfg.canonical_json())
    summary = pl.read_parquet(written[S.RUN_SUMMARY])
    return summary, target, changed


@app.command("score")
@handles_errors
def score_command(
    dataset: DatasetArg,
    config: ConfigOpt = None,
    preset: PresetOpt = None,
    threshold: ThresholdOpt = None,
    out: OutOpt = None,
    check: Annotated[
        bool, typer.Option("--check", help="Exit 1 when any run fails a run gate.")
    ] = False,
    evaluators: Annotated[
        bool, typer.Option("--evaluators", help="Also write evaluator_scores (input-sized).")
    ] = False,
    clamp: ClampOpt = False,
    engine: EngineOpt = Engine.polars,
    as_json: JsonOpt = False,
) -> None:
    """Score every execution; write execution_scores, case_summary and run_summary.

    Example: [bold]evalframe score runs/ --preset connexity --threshold 0.75 --check[/bold]
    """
    summary, target, _ = _score_and_write(
        dataset, config, preset, threshold, out, evaluators, clamp, engine
    )
    if as_json:
        print_json(summary.to_dicts())
    else:
        stdout.print(run_table(summary))
        stdout.print(f"tables written to {target}/")
    if check and not summary[S.RUN_PASSED].all():
        failed = summary.filter(~pl.col(S.RUN_PASSED))[S.RUN_ID].to_list()
        stderr.print(f"run gate failed for: {', '.join(map(str, failed))}")
        raise typer.Exit(1)


@app.command("validate")
@handles_errors
def validate_command(
    dataset: DatasetArg,
    clamp: ClampOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Check a dataset against the data contract; report every problem at once (exit 2).

    Example: [bold]evalframe validate runs/[/bold]
    """
    ds = load_dataset(dataset, clamp=clamp)
    counts = pl.collect_all(
        [
            ds.scores.select(pl.len()),
            ds.executions.select(pl.len()),
            ds.outcomes.select(pl.len()),
            ds.runs.select(pl.len()),
        ]
    )
    report = dict(zip(S.INPUT_TABLES, (c.item() for c in counts), strict=True))
    if as_json:
        print_json(
            {"valid": True, "rows": report, "clamped": ds.clamped.changed if ds.clamped else 0}
        )
    else:
        sizes = ", ".join(f"{name} {n:,}" for name, n in report.items())
        stdout.print(f"[green]valid[/green]: {sizes} rows")


@app.command("demo")
@handles_errors
def demo_command(
    directory: Annotated[Path, typer.Argument(help="Where to write the demo dataset.")] = Path(
        "evalframe-demo"
    ),
    cases: Annotated[int, typer.Option("--cases", min=1, help="Number of test cases.")] = 200,
    as_json: JsonOpt = False,
) -> None:
    """Write a realistic demo dataset (3 runs × 200 cases × 8 judge metrics), score it,
    and print the run table.

    Example: [bold]evalframe demo /tmp/evalframe-demo[/bold]
    """
    write_demo(directory, n_cases=cases)
    summary, target, _ = _score_and_write(directory, None, None, None, None, False, False)
    if as_json:
        print_json(summary.to_dicts())
        return
    stdout.print(f"demo dataset written to {directory}/")
    stdout.print(run_table(summary))
    stdout.print(f"tables written to {target}/")
    stdout.print(
        f"next: [bold]evalframe score {directory} --preset connexity[/bold]  ·  "
        f"[bold]evalframe compare {directory} --pairs consecutive[/bold]"
    )


@app.command("compare")
@handles_errors
def compare_command(
    dataset: DatasetArg,
    baseline: Annotated[
        str | None, typer.Option("--baseline", "-b", help="Baseline run id.")
    ] = None,
    candidate: Annotated[str | None, typer.Option("--candidate", help="Candidate run id.")] = None,
    pairs: Annotated[
        str | None,
        typer.Option(
            "--pairs",
            help="'consecutive': each run against the one before it (runs.created_at, "
            "else run_id).",
        ),
    ] = None,
    config: ConfigOpt = None,
    preset: PresetOpt = None,
    threshold: ThresholdOpt = None,
    out: OutOpt = None,
    clamp: ClampOpt = False,
    engine: EngineOpt = Engine.polars,
    as_json: JsonOpt = False,
) -> None:
    """Compare runs case by case; write case_deltas, evaluator_deltas, run_deltas.

    With --baseline alone, every other run is compared against it; with neither, the
    newest run against the one before it. Exit 1 when any pair shows a regression.

    Example: [bold]evalframe compare runs/ -b 2026-10-01-v1.4 --candidate 2026-11-01-v1.6[/bold]
    """
    cfg = load_config(config, preset=preset, threshold=threshold)
    ds = load_dataset(dataset, clamp=clamp)
    with progress(f"scoring and comparing runs ({engine.value})"):
        scored = _score_tables(ds, cfg, engine)
        cs_any, rs_any = scored[S.CASE_SUMMARY], scored[S.RUN_SUMMARY]
        rs, cs = (f if isinstance(f, pl.DataFrame) else f.collect() for f in (rs_any, cs_any))
        run_list = rs.select(S.RUN_ID, *([S.CREATED_AT] if S.CREATED_AT in rs.columns else []))
        chosen = pairs_for(run_list, baseline=baseline, candidate=candidate, mode=pairs)
        compare_fn = compare_duckdb if engine == Engine.duckdb else compare
        tables = compare_fn(
            cs.lazy(),
            chosen,
            cfg,
            evaluator_scores=evaluator_scores(ds, cfg, passthrough=False)
            .select(COMPARE_NODE_COLUMNS)
            .collect()
            .lazy(),
            run_summary=rs.lazy(),
        )
        written = write_tables(tables, _default_out(dataset, out), config_json=cfg.canonical_json())
    run_deltas = pl.read_parquet(written[S.RUN_DELTAS])
    if as_json:
        print_json(run_deltas.to_dicts())
    else:
        case_deltas = pl.read_parquet(written[S.CASE_DELTAS])
        for part in compare_report(run_deltas, case_deltas, limits=cfg.compare):
            stdout.print(part)
        stdout.print(f"\ntables written to {_default_out(dataset, out)}/")
    if run_deltas["regression_detected"].any():
        raise typer.Exit(1)


@app.command("sweep")
@handles_errors
def sweep_command(
    dataset: DatasetArg,
    grid: Annotated[
        Path, typer.Option("--grid", "-g", help="Grid file (YAML/JSON), see docs/sweep.md.")
    ],
    out: OutOpt = None,
    curve: Annotated[
        bool,
        typer.Option("--curve", help="Also write threshold_curve for the grid's base config."),
    ] = False,
    clamp: ClampOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Recompute every run under many configs at once; write sweep and sweep_configs.

    Example: [bold]evalframe sweep runs/ --grid grid.yaml --curve[/bold]
    """
    ds = load_dataset(dataset, clamp=clamp)
    spec = load_grid(grid, evaluators=data_evaluators(ds))
    with sweep_progress(len(spec.configs)) as on_chunk:
        table = sweep(ds, spec, on_chunk=on_chunk)
    configs = pl.DataFrame(
        {
            S.CONFIG_ID: [c.config_id for c in spec.configs],
            S.CONFIG: [c.canonical_json() for c in spec.configs],
        }
    )
    tables: dict[str, pl.DataFrame | pl.LazyFrame] = {S.SWEEP: table, S.SWEEP_CONFIGS: configs}
    if curve:
        ex = score(ds, spec.base).collect()
        tables[S.THRESHOLD_CURVE] = threshold_curve(ex.lazy(), spec.base)
    target = _default_out(dataset, out)
    write_tables(
        tables, target, config_json=config_metadata([c.canonical_json() for c in spec.configs])
    )
    if as_json:
        print_json(table.to_dicts())
        return
    for part in sweep_report(table, spec.params):
        stdout.print(part)
    stdout.print(
        f"{len(spec.configs)} configs × {table[S.RUN_ID].n_unique()} runs; "
        f"tables written to {target}/"
    )


app.command("ingest")(handles_errors(ingest_command))
app.command("sql")(handles_errors(sql_command))


def main() -> None:
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
