"""The `evalframe` command line: a thin layer over the Python API.

Exit codes: 0 ok; 1 a gate failed (`score --check`) or a regression was detected
(`compare`); 2 bad input or usage.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, TypeVar

import polars as pl
import typer

from evalframe import (
    compare_tables,
    load_config,
    load_dataset,
    load_grid,
    score_tables,
    sweep_tables,
    write_demo,
    write_tables,
)
from evalframe._private import schema as S
from evalframe._private.cli.ingest_command import ingest_command
from evalframe._private.cli.options import (
    ConfigOpt,
    DatasetArg,
    JsonOpt,
    MemoryLimitOpt,
    OutOpt,
    PresetOpt,
    SeriesOpt,
    ThresholdOpt,
)
from evalframe._private.cli.plan_command import plan_command
from evalframe._private.cli.render import (
    Prose,
    cases_report,
    compare_report,
    error_line,
    id_text,
    message_text,
    policy_note,
    print_csv,
    print_json,
    progress,
    run_table,
    say,
    slice_table,
    stderr,
    stdout,
    steps,
    sweep_progress,
    sweep_report,
)
from evalframe._private.cli.report_command import demo_report, report_command
from evalframe._private.cli.results_command import results_command
from evalframe._private.cli.sql_shell import sql_command
from evalframe._private.cli.stats_report import power_notes, slice_notes
from evalframe._private.compare.pairs import series_note
from evalframe._private.data.dataset import READ_ERRORS, read_failure
from evalframe._private.display import with_pass_k_cases
from evalframe._private.errors import EvalframeError, UsageError, ValidationError
from evalframe._private.pipeline.sweep import grid_evaluators, tree_groups
from evalframe._private.store.fingerprint import inputs_fingerprint
from evalframe._private.store.output import config_metadata
from evalframe._private.sweep.sweep import MAX_CONFIGS
from evalframe._private.version import __version__

app = typer.Typer(
    name="evalframe",
    help="Vectorized analytics over LLM-judge outputs: scores, verdicts, gates, regressions.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="rich",
    context_settings={"help_option_names": ["-h", "--help"]},
)

F = TypeVar("F", bound=Callable[..., Any])


def _print_version(value: bool) -> None:
    if value:
        stdout.print(f"evalframe {__version__}", highlight=False)
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            "-V",
            callback=_print_version,
            is_eager=True,
            help="Print the version and exit.",
        ),
    ] = False,
) -> None:
    """Vectorized analytics over LLM-judge outputs: scores, verdicts, gates, regressions."""


def handles_errors(fn: F) -> F:
    """Turn EvalframeError into its message on stderr and exit code 2 (the message
    quotes ids and example keys: printed literally, control characters visible)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except EvalframeError as exc:
            stderr.print(error_line(exc), highlight=False)
            raise typer.Exit(exc.exit_code) from None
        except READ_ERRORS as exc:  # a corrupt file polars / pyarrow / DuckDB choked on
            if os.environ.get("EVALFRAME_DEBUG"):
                raise
            err = read_failure(exc, kwargs.get("dataset"))
            stderr.print(error_line(err), highlight=False)
            raise typer.Exit(err.exit_code) from None

    return wrapper  # type: ignore[return-value]


PAIR_MODES = ("consecutive",)
"""Values of `compare --pairs`."""


def _check_pairs(value: str | None) -> str | None:
    if value is not None and value not in PAIR_MODES:
        raise typer.BadParameter(
            f"must be 'consecutive' (each run against the one before it), not "
            f"{value!r}; to pick runs, give --baseline and/or --candidate instead."
        )
    return value


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
        '(pip install "evalframe[spark]"; local[2], or Spark Connect with --spark-remote); '
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


def _default_out(dataset: Path, out: Path | None) -> Path:
    if out is not None:
        return out
    return (dataset if dataset.is_dir() else dataset.parent) / "results"


def _score_and_write(
    dataset: Path,
    config: Path | None,
    preset: str | None,
    threshold: float | None,
    out: Path | None,
    evaluators: bool,
    clamp: bool,
    engine: str = Engine.polars,
    memory_limit: str | None = None,
    by: str | None = None,
    spark_remote: str | None = None,
) -> tuple[pl.DataFrame, Path, int, Any]:
    """Score and commit; returns run_summary, the folder, rows --clamp changed, the tables."""
    cfg = load_config(config, preset=preset, threshold=threshold)
    target = _default_out(dataset, out)
    fingerprint = inputs_fingerprint(dataset)  # before reading: a later change marks it stale
    with progress(f"scoring {dataset} under config {cfg.config_id} ({engine})"):
        tables = score_tables(
            dataset,
            cfg,
            evaluators=evaluators,
            clamp=clamp,
            engine=str(engine),
            memory_limit=memory_limit,
            by=by,
            spark_remote=spark_remote,
        )
        write_tables(
            tables,
            target,
            config_json=cfg.canonical_json(),
            command="score",
            dataset=dataset,
            inputs_fingerprint=fingerprint,
        )
    changed = tables.clamped.changed if tables.clamped else 0
    if changed and tables.clamped is not None:
        stderr.print(
            f"--clamp changed {changed} score rows ({tables.clamped.clamped} clamped, "
            f"{tables.clamped.nulled} NaN/inf set to null)"
        )
    summary = tables[S.RUN_SUMMARY]
    assert isinstance(summary, pl.DataFrame)  # run_summary is always materialized
    return summary, target, changed, tables


def _with_pass_k_cases(summary: pl.DataFrame, scored: Any) -> pl.DataFrame:
    """The run summary with, per k of attempts.k, how many cases have >= k attempts (the
    rule the report's run table uses too: display.with_pass_k_cases)."""
    return with_pass_k_cases(summary, scored.get(S.CASE_SUMMARY))


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
    memory_limit: MemoryLimitOpt = None,
    by: ByOpt = None,
    spark_remote: SparkRemoteOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Score every execution; write execution_scores, case_summary and run_summary
    (and slice_summary with --by).

    Example: [bold]evalframe score runs/ --preset connexity --threshold 0.75 --check[/bold]
    """
    policy = load_config(config, preset=preset, threshold=threshold)  # stated under the table
    summary, target, _, scored = _score_and_write(
        dataset,
        config,
        preset,
        threshold,
        out,
        evaluators,
        clamp,
        engine,
        memory_limit,
        by,
        spark_remote,
    )
    if as_json:
        print_json(summary.to_dicts())
    else:
        stdout.print(run_table(_with_pass_k_cases(summary, scored)))
        if summary[S.CONFIG_ID].eq(policy.config_id).all():
            stdout.print(policy_note(policy))
        if by is not None and S.SLICE_SUMMARY in scored:
            stdout.print(slice_table(scored[S.SLICE_SUMMARY]))
        stdout.print(say("tables written to {}/", target))
    if check and not summary[S.RUN_PASSED].all():
        failed = summary.filter(~pl.col(S.RUN_PASSED))[S.RUN_ID].to_list()
        stderr.print(say("run gate failed for: {}", ", ".join(map(str, failed))))
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
    try:
        ds = load_dataset(dataset, clamp=clamp)
    except ValidationError as exc:
        if not as_json:
            raise
        print_json(
            {
                "valid": False,
                "problems": [
                    {
                        "table": p.table,
                        "column": p.column,
                        "message": p.message,
                        "count": p.count,
                        "examples": list(p.examples),
                    }
                    for p in exc.problems
                ],
            }
        )
        raise typer.Exit(exc.exit_code) from None
    except EvalframeError as exc:
        if not as_json:
            raise
        print_json({"valid": False, "problems": [], "error": str(exc)})
        raise typer.Exit(exc.exit_code) from None
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
    with steps(3) as step:
        step(f"writing the demo dataset ({cases:,} cases × 3 runs) to {directory}")
        write_demo(directory, n_cases=cases)
        summary, target, _, _scored = _score_and_write(
            directory, None, None, None, None, False, False
        )
        step("writing the HTML report")
        report = demo_report(directory)
    if as_json:
        print_json(summary.to_dicts())
        return
    stdout.print(say("demo dataset written to {}/", directory))
    stdout.print(run_table(summary))
    stdout.print(say("tables written to {}/", target))
    if report is not None:
        stdout.print(say("report written to {}", report))
    stdout.print(
        say(
            "next: [bold]evalframe score {} --preset connexity[/bold]  ·  "
            "[bold]evalframe compare {} --pairs consecutive[/bold]",
            directory,
            directory,
        )
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
            callback=_check_pairs,
            metavar="consecutive",
            help="'consecutive': each run against the one before it (runs.created_at, "
            "else run_id).",
        ),
    ] = None,
    top: Annotated[
        int,
        typer.Option("--top", min=0, help="How many regressed cases to list per pair."),
    ] = 10,
    config: ConfigOpt = None,
    preset: PresetOpt = None,
    threshold: ThresholdOpt = None,
    out: OutOpt = None,
    clamp: ClampOpt = False,
    engine: EngineOpt = Engine.polars,
    memory_limit: MemoryLimitOpt = None,
    by: ByOpt = None,
    series: SeriesOpt = None,
    spark_remote: SparkRemoteOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Compare runs case by case; write case_deltas, evaluator_deltas, run_deltas (and
    slice_deltas with --by).

    With --baseline alone, every other run is compared against it; with neither, the
    newest run against the one before it. Exit 1 when any pair shows a regression.

    Example: [bold]evalframe compare runs/ -b 2026-10-01-v1.4 --candidate 2026-11-01-v1.6[/bold]
    """
    cfg = load_config(config, preset=preset, threshold=threshold)
    target = _default_out(dataset, out)
    fingerprint = inputs_fingerprint(dataset)
    with progress(f"scoring and comparing runs ({engine})"):
        tables = compare_tables(
            dataset,
            cfg,
            baseline=baseline,
            candidate=candidate,
            pairs=pairs,
            clamp=clamp,
            engine=str(engine),
            memory_limit=memory_limit,
            by=by,
            series=series,
            spark_remote=spark_remote,
        )
        written = write_tables(
            tables,
            target,
            config_json=cfg.canonical_json(),
            command="compare",
            dataset=dataset,
            inputs_fingerprint=fingerprint,
        )
    run_deltas = pl.read_parquet(written[S.RUN_DELTAS])
    mixed = None if series is not None or tables.scored is None else _series_note(tables)
    if mixed is not None:
        stderr.print(message_text(mixed), highlight=False)
    if as_json:
        print_json(run_deltas.to_dicts())
    else:
        case_deltas = pl.read_parquet(written[S.CASE_DELTAS])
        evaluator_deltas = (
            pl.read_parquet(written[S.EVALUATOR_DELTAS]) if S.EVALUATOR_DELTAS in written else None
        )
        stdout.print(policy_note(cfg))
        for part in compare_report(
            run_deltas,
            case_deltas,
            limits=cfg.compare,
            top=top,
            evaluator_deltas=evaluator_deltas,
        ):
            stdout.print(part)
        slices = pl.read_parquet(written[S.SLICE_DELTAS]) if S.SLICE_DELTAS in written else None
        for note in [*slice_notes(slices), *power_notes(run_deltas, cfg.compare)]:
            stdout.print(Prose(note))
        stdout.print(say("\ntables written to {}/", target))
    if run_deltas["regression_detected"].any():
        raise typer.Exit(1)


def _series_note(tables: Any) -> str | None:
    """The note that compared pairs join runs of several series (`pairs.series_note`)."""
    summary = tables.scored[S.RUN_SUMMARY]
    return series_note(summary, tables.pairs)


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
    max_configs: Annotated[
        int,
        typer.Option(
            "--max-configs",
            min=1,
            help=f"Refuse grids of more configs than this (default {MAX_CONFIGS:,}).",
        ),
    ] = MAX_CONFIGS,
    as_json: JsonOpt = False,
) -> None:
    """Recompute every run under many configs at once; write sweep and sweep_configs.

    Example: [bold]evalframe sweep runs/ --grid grid.yaml --curve[/bold]
    """
    spec = load_grid(grid, evaluators=grid_evaluators(dataset), max_configs=max_configs)
    target = _default_out(dataset, out)
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


class CaseStatus(StrEnum):
    """Which cases `evalframe cases` lists (pipeline/cases.py)."""

    regression = "regression"
    improvement = "improvement"
    unchanged = "unchanged"
    new = "new"
    removed = "removed"
    error = "error"
    fail = "fail"
    pass_ = "pass"
    flaky = "flaky"


@app.command("cases")
@handles_errors
def cases_command(
    dataset: DatasetArg,
    run: Annotated[
        str | None,
        typer.Option(
            "--run",
            help="The run whose cases to list: for a comparison's statuses, the candidate "
            "of the compared pairs (default: every pair, or every run).",
        ),
    ] = None,
    status: Annotated[
        CaseStatus,
        typer.Option(
            "--status",
            help="A comparison's case status (regression ... error: case_deltas of the "
            "latest result set) or a run's (fail, pass, flaky: its case_summary).",
        ),
    ] = CaseStatus.regression,
    evaluator: Annotated[
        str | None,
        typer.Option(
            "--evaluator",
            "-e",
            help="Only cases where this evaluator fell (regression), rose (improvement), "
            "did not pass (fail), passed (pass), or has a score.",
        ),
    ] = None,
    results: Annotated[
        Path | None,
        typer.Option(
            "--results",
            "-r",
            help="Results to read: a store or an --out folder (default: DATASET/results).",
        ),
    ] = None,
    result_set: Annotated[
        str | None,
        typer.Option("--result-set", help="Read this result set (default: the latest)."),
    ] = None,
    as_json: JsonOpt = False,
    csv: Annotated[
        bool, typer.Option("--csv", help="Print CSV (evaluators, outcomes as JSON text).")
    ] = False,
) -> None:
    """Every regressed case of the compared pairs (or every failing case of a run), one
    row each, with its per-evaluator scores, the judge's labels and reasons and the
    outcome checks with their justifications.

    Example: [bold]evalframe cases runs/ --run 2026-11-01-v1.6 --status regression[/bold]
    """
    from evalframe import cases

    if csv and as_json:
        raise UsageError("--csv and --json exclude each other; hint: pick one.")
    frame = cases(
        dataset,
        run,
        status=str(status),
        evaluator=evaluator,
        results=results,
        result_set=result_set,
    )
    if as_json:
        print_json(frame.to_dicts())
    elif csv:
        print_csv(frame)
    else:
        for part in cases_report(frame, str(status)):
            stdout.print(part)


@app.command("agree")
@handles_errors
def agree_command(
    dataset: DatasetArg,
    config: ConfigOpt = None,
    preset: PresetOpt = None,
    threshold: ThresholdOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """How far the judge agrees with the human labels of the dataset's labels table: per
    evaluator and rater the labeled count, Cohen's kappa, sensitivity, specificity and the
    threshold that agrees best; per run the judge's pass rate beside the corrected one
    (prediction-powered, with its 95 % interval). Writes nothing (score does).

    Example: [bold]evalframe agree runs/ --config policy.yaml[/bold]
    """
    import evalframe
    from evalframe._private.display import num, pct

    cfg = load_config(config, preset=preset, threshold=threshold)
    with progress(f"measuring the judge of {dataset} under config {cfg.config_id}"):
        result = evalframe.judge_agreement(dataset, cfg)
    runs = result.run_summary.select(S.RUN_ID, S.PASS_RATE, *S.PPI_COLUMNS)
    if as_json:
        print_json(
            {
                "config_id": result.config_id,
                "judge_agreement": result.judge_agreement.to_dicts(),
                "agreement_curve": result.agreement_curve.to_dicts(),
                "runs": runs.to_dicts(),
                "ignored_labels": result.ignored_labels,
            }
        )
        return
    from rich.table import Table

    agreement = result.judge_agreement
    alpha = agreement.filter(pl.col(S.RATER).is_null()).select(
        S.RUN_ID, S.EVALUATOR, S.KRIPPENDORFF_ALPHA
    )
    rows = agreement.filter(pl.col(S.RATER).is_not_null()).drop(S.KRIPPENDORFF_ALPHA)
    rows = rows.join(alpha, on=[S.RUN_ID, S.EVALUATOR], how="left", nulls_equal=True)
    table = Table(title=f"judge vs human labels (config {cfg.config_id})", title_justify="left")
    for header in ("run", "evaluator", "rater", "labeled", "kappa", "sensitivity"):
        table.add_column(
            header, justify="left" if header in ("run", "evaluator", "rater") else "right"
        )
    for header in ("specificity", "agreement", "score MAE", "best threshold", "alpha"):
        table.add_column(header, justify="right")
    for r in rows.iter_rows(named=True):
        table.add_row(
            id_text(r[S.RUN_ID]),
            "(verdict)" if r[S.EVALUATOR] is None else id_text(r[S.EVALUATOR]),
            id_text(r[S.RATER]),
            str(r[S.N_LABELED]),
            num(r[S.KAPPA]),
            pct(r[S.SENSITIVITY]),
            pct(r[S.SPECIFICITY]),
            pct(r[S.AGREEMENT]),
            num(r[S.SCORE_MAE]),
            num(r[S.BEST_KAPPA_THRESHOLD]),
            num(r[S.KRIPPENDORFF_ALPHA]),
        )
    stdout.print(table)
    corrected = Table(title="pass rate: judge vs corrected by the labels", title_justify="left")
    for header in ("run", "judge pass rate", "labeled", "corrected (PPI)", "95 % interval"):
        corrected.add_column(header, justify="left" if header == "run" else "right")
    for r in runs.iter_rows(named=True):
        low, high = r[S.PPI_PASS_RATE_CI_LOW], r[S.PPI_PASS_RATE_CI_HIGH]
        interval = "—" if low is None else f"{pct(max(low, 0.0))} – {pct(min(high, 1.0))}"
        corrected.add_row(
            id_text(r[S.RUN_ID]),
            pct(r[S.PASS_RATE]),
            str(r[S.N_LABELED]),
            pct(r[S.PPI_PASS_RATE]),
            interval,
        )
    stdout.print(corrected)
    stdout.print(
        "kappa: agreement beyond chance (1 = perfect, 0 = chance); sensitivity / specificity:"
        " the share of human passes / fails the judge also passes / fails; the corrected "
        "pass rate assumes the labeled executions are a random sample (docs/statistics.md)."
    )
    if result.ignored_labels:
        stderr.print(
            f"note: {result.ignored_labels} label rows name a composite node or an evaluator "
            "outside the config's tree; they were left out."
        )


@app.command("sample")
@handles_errors
def sample_command(
    dataset: DatasetArg,
    n: Annotated[
        int, typer.Option("--n", min=1, help="How many judged executions to draw per run.")
    ] = 200,
    seed: Annotated[
        int, typer.Option("--seed", min=0, help="Seed of the draw (same seed, same sample).")
    ] = 0,
    run: Annotated[
        str | None, typer.Option("--run", help="Draw from this run only (default: every run).")
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", "-o", help="Write the keys to this .csv or .parquet file (else print)."
        ),
    ] = None,
    config: ConfigOpt = None,
    preset: PresetOpt = None,
    threshold: ThresholdOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Draw a uniform random sample of judged executions (status ok, not unscored) of
    each run to label by hand: the sample the corrected pass rate needs to be unbiased.
    Prints their keys (run_id, case_id, attempt) or writes them with --out; add a
    label_passed column and read it back with [bold]evalframe ingest wide FILE --labels[/bold].

    Example: [bold]evalframe sample runs/ --n 200 --seed 7 --out to_label.csv[/bold]
    """
    from evalframe import sample_executions
    from evalframe._private.pipeline.sample import judged_counts, write_sample

    cfg = load_config(config, preset=preset, threshold=threshold)
    ds = load_dataset(dataset)
    sample = sample_executions(ds, cfg, n=n, seed=seed, run=run)
    if out is not None:
        write_sample(sample, out, dataset)
    if as_json:
        print_json(
            sample.to_dicts() if out is None else {"written": str(out), "rows": sample.height}
        )
        return
    if out is None:
        from rich.table import Table

        table = Table(title=say("executions to label (seed {})", seed), title_justify="left")
        for header in ("run", "case", "attempt"):
            table.add_column(header, justify="right" if header == "attempt" else "left")
        for r in sample.iter_rows(named=True):
            table.add_row(id_text(r[S.RUN_ID]), id_text(r[S.CASE_ID]), str(r[S.ATTEMPT]))
        stdout.print(table)
    counts = judged_counts(ds, cfg).join(
        sample.group_by(S.RUN_ID).agg(pl.len().alias("drawn")), on=S.RUN_ID, how="inner"
    )
    for r in counts.sort(S.RUN_ID).iter_rows(named=True):
        stdout.print(
            say("run {}: {} of {} judged executions drawn", r[S.RUN_ID], r["drawn"], r["judged"])
        )
    if out is not None:
        stdout.print(
            say(
                "keys written to {}; add a label_passed column (true/false) and run "
                "[bold]evalframe ingest wide {} --labels --to {}[/bold]",
                out,
                out,
                dataset,
            )
        )


app.command("ingest")(handles_errors(ingest_command))
app.command("sql")(handles_errors(sql_command))
app.command("report")(handles_errors(report_command))
app.command("results")(handles_errors(results_command))
app.command("plan")(handles_errors(plan_command))


def main() -> None:
    """The `evalframe` command. Off a terminal (a log, a pipe), usage errors print as
    click's plain lines, never boxed and wrapped at 80 columns; on one, typer's panels."""
    if stderr.is_terminal:
        app()
        return
    try:
        code = app(standalone_mode=False)
    except typer.Abort:
        stderr.print("Aborted.")
        code = 1
    except Exception as exc:
        # click's usage errors (typer vendors click privately): they know how to show
        # themselves plainly and carry their exit code
        show, exit_code = getattr(exc, "show", None), getattr(exc, "exit_code", None)
        if not callable(show) or not isinstance(exit_code, int):
            raise
        show()
        code = exit_code
    raise SystemExit(code if isinstance(code, int) else 0)


if __name__ == "__main__":  # pragma: no cover
    main()
