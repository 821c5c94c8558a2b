"""The `evalframe` command line: a thin layer over the Python API.

Each command declares its options here and makes one call to its body in
`evalframe/_private/cli/<name>_command.py`, imported inside the command: parse → one
call → render. At import this module loads typer, rich and the light option declarations
(`_private/cli/options.py`) only, so `--help`, `--version` and usage errors never pay for
polars, DuckDB or pyarrow (tests/test_startup.py).

Exit codes: 0 ok; 1 a gate failed (`score --check`) or a regression was detected
(`compare`; with `--decide`, a pair's decision fails); 2 bad input or usage; 3 `compare
--decide`: no pair fails, one is inconclusive.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from typer.core import TyperGroup

from evalframe._private.cli.console import stderr, stdout
from evalframe._private.cli.options import (
    MODES,
    ByOpt,
    ClampOpt,
    ConfigOpt,
    DatasetArg,
    Engine,
    EngineOpt,
    FormatArg,
    IdColsOpt,
    JsonOpt,
    LabelsOpt,
    MemoryLimitOpt,
    MetricsOpt,
    OutOpt,
    PresetOpt,
    ReplaceOpt,
    RunIdOpt,
    ScaleMaxOpt,
    SeriesOpt,
    SourcesArg,
    SparkRemoteOpt,
    ThresholdOpt,
    ToOpt,
    check_mode,
    fill_late_help,
)
from evalframe._private.errors import EvalframeError
from evalframe._private.version import __version__


class _Group(TyperGroup):
    """The command group: a command's help fills its late fields (options.LATE_HELP) when
    -h/--help follows the command, so help that names presets or limits costs nothing
    otherwise."""

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        name, command, rest = super().resolve_command(ctx, args)
        if command is not None and set(rest) & set(ctx.help_option_names):
            fill_late_help(command)
        return name, command, rest


app = typer.Typer(
    name="evalframe",
    cls=_Group,
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


def _read_errors() -> tuple[type[BaseException], ...]:
    """What polars, pyarrow and DuckDB raise on a corrupt file (data.dataset.READ_ERRORS),
    imported only when a command failed."""
    from evalframe._private.data.dataset import READ_ERRORS

    return READ_ERRORS


def handles_errors(fn: F) -> F:
    """Turn EvalframeError into its message on stderr and exit code 2 (the message
    quotes ids and example keys: printed literally, control characters visible); a corrupt
    file polars, pyarrow or DuckDB choked on (some polars panics are BaseExceptions) into
    `read_failure`'s message, exit code 2."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (typer.Exit, typer.Abort, KeyboardInterrupt, SystemExit):
            raise
        except EvalframeError as exc:
            from evalframe._private.cli.render import error_line

            stderr.print(error_line(exc), highlight=False)
            raise typer.Exit(exc.exit_code) from None
        except BaseException as exc:
            if (
                not {"polars", "pyarrow", "duckdb"} & set(sys.modules)
                or not isinstance(exc, _read_errors())
                or os.environ.get("EVALFRAME_DEBUG")
            ):
                raise
            from evalframe._private.cli.render import error_line
            from evalframe._private.data.dataset import read_failure

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
    bootstrap: BootstrapOpt = None,
    seed: SeedOpt = 0,
) -> None:
    """Score every execution; write execution_scores, case_summary and run_summary
    (and slice_summary with --by).

    Example: [bold]evalframe score runs/ --preset connexity --threshold 0.75 --check[/bold]
    """
    from evalframe._private.cli.score_command import score_command as body

    body(
        dataset,
        config=config,
        preset=preset,
        threshold=threshold,
        out=out,
        check=check,
        evaluators=evaluators,
        clamp=clamp,
        engine=str(engine),
        memory_limit=memory_limit,
        by=by,
        spark_remote=spark_remote,
        as_json=as_json,
        bootstrap=bootstrap,
        seed=seed,
    )


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
    from evalframe._private.cli.validate_command import validate_command as body

    body(dataset, clamp=clamp, as_json=as_json)


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
    from evalframe._private.cli.demo_command import demo_command as body

    body(directory, cases=cases, as_json=as_json)


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
    decide: Annotated[
        bool,
        typer.Option(
            "--decide",
            help="Print each pair's three-outcome decision (pass / fail / inconclusive, "
            "margins from the config's decide: section) and exit by it: 1 if any pair "
            "fails, else 3 if any is inconclusive, else 0.",
        ),
    ] = False,
    bootstrap: BootstrapOpt = None,
    seed: SeedOpt = 0,
) -> None:
    """Compare runs case by case; write case_deltas, evaluator_deltas, run_deltas (and
    slice_deltas with --by).

    With --baseline alone, every other run is compared against it; with neither, the
    newest run against the one before it. Exit 1 when any pair shows a regression; with
    --decide, exit 1 when any pair's decision fails, 3 when one is inconclusive.

    Example: [bold]evalframe compare runs/ -b 2026-10-01-v1.4 --candidate 2026-11-01-v1.6[/bold]
    """
    from evalframe._private.cli.compare_command import compare_command as body

    body(
        dataset,
        baseline=baseline,
        candidate=candidate,
        pairs=pairs,
        top=top,
        config=config,
        preset=preset,
        threshold=threshold,
        out=out,
        clamp=clamp,
        engine=str(engine),
        memory_limit=memory_limit,
        by=by,
        series=series,
        spark_remote=spark_remote,
        as_json=as_json,
        decide=decide,
        bootstrap=bootstrap,
        seed=seed,
    )


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
        int | None,
        typer.Option(
            "--max-configs",
            min=1,
            show_default=False,
            help="Refuse grids of more configs than this (default {max_configs}).",
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Recompute every run under many configs at once; write sweep and sweep_configs.

    Example: [bold]evalframe sweep runs/ --grid grid.yaml --curve[/bold]
    """
    from evalframe._private.cli.sweep_command import sweep_command as body

    body(
        dataset,
        grid=grid,
        out=out,
        curve=curve,
        clamp=clamp,
        max_configs=max_configs,
        as_json=as_json,
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
    from evalframe._private.cli.cases_command import cases_command as body

    body(
        dataset,
        run=run,
        status=str(status),
        evaluator=evaluator,
        results=results,
        result_set=result_set,
        as_json=as_json,
        csv=csv,
    )


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
    from evalframe._private.cli.agree_command import agree_command as body

    body(dataset, config=config, preset=preset, threshold=threshold, as_json=as_json)


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
    from evalframe._private.cli.sample_command import sample_command as body

    body(
        dataset,
        n=n,
        seed=seed,
        run=run,
        out=out,
        config=config,
        preset=preset,
        threshold=threshold,
        as_json=as_json,
    )


HistorySeriesOpt = Annotated[
    str | None,
    typer.Option(
        "--series",
        metavar="COLUMN",
        help="One series per value of this runs column (model, target, agent, ...; a null "
        "value is a series of its own); default: all runs are one series.",
    ),
]
WindowOpt = Annotated[
    int | None,
    typer.Option("--window", min=1, metavar="N", help="Keep the last N runs of each series."),
]


@app.command("trend")
@handles_errors
def trend_command(
    dataset: DatasetArg,
    series: HistorySeriesOpt = None,
    window: WindowOpt = None,
    fail_on_degrading: Annotated[
        bool,
        typer.Option(
            "--fail-on-degrading",
            help="Exit 1 when a series' pass-rate or mean-score slope interval lies below 0.",
        ),
    ] = False,
    config: ConfigOpt = None,
    preset: PresetOpt = None,
    threshold: ThresholdOpt = None,
    out: OutOpt = None,
    clamp: ClampOpt = False,
    engine: EngineOpt = Engine.polars,
    memory_limit: MemoryLimitOpt = None,
    spark_remote: SparkRemoteOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """The history of the runs: write series_trend and case_history; print per series the
    weighted slope of pass rate and mean score (points per run, 95 % interval) and the
    change run of the pass rate with its Bonferroni p.

    Runs are ordered by runs.created_at (runs without one last), then run_id.

    Example: [bold]evalframe trend runs/ --series model --window 20 --fail-on-degrading[/bold]
    """
    from evalframe._private.cli.history_command import trend_command as body

    body(
        dataset,
        series=series,
        window=window,
        fail_on_degrading=fail_on_degrading,
        config=config,
        preset=preset,
        threshold=threshold,
        out=out,
        clamp=clamp,
        engine=str(engine),
        memory_limit=memory_limit,
        spark_remote=spark_remote,
        as_json=as_json,
    )


@app.command("flaky")
@handles_errors
def flaky_command(
    dataset: DatasetArg,
    series: HistorySeriesOpt = None,
    window: WindowOpt = None,
    config: ConfigOpt = None,
    preset: PresetOpt = None,
    threshold: ThresholdOpt = None,
    out: OutOpt = None,
    clamp: ClampOpt = False,
    engine: EngineOpt = Engine.polars,
    memory_limit: MemoryLimitOpt = None,
    spark_remote: SparkRemoteOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """The quarantine candidates of the runs' history: write series_trend and case_history
    and list the cases case_history quarantines, worst first (highest flip_rate, then most
    runs, then series and case_id).

    Example: [bold]evalframe flaky runs/ --series model --window 20[/bold]
    """
    from evalframe._private.cli.history_command import flaky_command as body

    body(
        dataset,
        series=series,
        window=window,
        config=config,
        preset=preset,
        threshold=threshold,
        out=out,
        clamp=clamp,
        engine=str(engine),
        memory_limit=memory_limit,
        spark_remote=spark_remote,
        as_json=as_json,
    )


@app.command("ingest")
@handles_errors
def ingest_command(
    format: FormatArg,
    sources: SourcesArg,
    to: ToOpt,
    run_id: RunIdOpt = None,
    replace: ReplaceOpt = False,
    id_cols: IdColsOpt = None,
    scale_max: ScaleMaxOpt = None,
    metrics: MetricsOpt = None,
    labels: LabelsOpt = False,
    json_out: JsonOpt = False,
) -> None:
    """Convert other eval tools' results into evalframe tables, appending new runs.

    Example: [bold]evalframe ingest promptfoo results.json --to data/[/bold]
    then [bold]evalframe score data/[/bold]. Nested grader groups come with a suggested
    config; save it (--json) and pass it with --config. See docs/ingest.md.
    """
    from evalframe._private.cli.ingest_command import ingest_command as body

    body(
        format,
        sources,
        to,
        run_id=run_id,
        replace=replace,
        id_cols=id_cols,
        scale_max=scale_max,
        metrics=metrics,
        labels=labels,
        json_out=json_out,
    )


@app.command("sql")
@handles_errors
def sql_command(
    dataset: DatasetArg,
    query: Annotated[
        str | None,
        typer.Argument(help="SQL to run; without it an interactive prompt opens."),
    ] = None,
    csv: Annotated[bool, typer.Option("--csv", help="Print the result as CSV.")] = False,
    json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
    mode: Annotated[
        str,
        typer.Option(
            "--mode",
            callback=check_mode,
            metavar="|".join(MODES),
            help="How a result shows on screen: table, line (one `column = value` line per "
            "column, like DuckDB's .mode line) or auto (line when a row is too wide).",
        ),
    ] = "auto",
    results: Annotated[
        Path | None,
        typer.Option(
            "--results",
            "-r",
            help="Results to open: a store or a folder written with --out "
            "(default: DATASET/results).",
        ),
    ] = None,
    read_only: Annotated[
        bool,
        typer.Option(
            "--read-only",
            help="Seal the connection for SQL you did not write: queries read the dataset's "
            "tables and result sets and nothing else; COPY ... TO, ATTACH, reading other "
            "files, extensions and SET of settings are refused.",
        ),
    ] = False,
) -> None:
    """Query a dataset with DuckDB: its tables, its result sets and the sql/ macros.

    Each table of the latest result set is a view (run_summary, case_deltas, sweep, ...:
    one config's tables, never a mix); NAME_all reads NAME of every set with a result_set
    column; result_sets lists the sets. DATASET may also be an --out folder.

    A query has DuckDB's full reach: it can read any file the user can (read_csv,
    read_parquet, ...), write any path (COPY ... TO, EXPORT DATABASE — also over the
    dataset's own tables) and ATTACH databases. --read-only takes all of that away
    (sql/README.md, "What a query can read and write").

    Example: [bold]evalframe sql runs/ "select * from run_summary_at(threshold := 0.7)"[/bold]
    """
    from evalframe._private.cli.sql_shell import sql_command as body

    body(
        dataset,
        query,
        csv=csv,
        json=json,
        mode=mode,
        results=results,
        read_only=read_only,
    )


@app.command("report")
@handles_errors
def report_command(
    dataset: DatasetArg,
    config: ConfigOpt = None,
    preset: PresetOpt = None,
    threshold: Annotated[
        float | None,
        typer.Option("--threshold", "-t", min=0.0, max=1.0, help="Pass threshold 0-1."),
    ] = None,
    baseline: Annotated[
        str | None,
        typer.Option(
            "--baseline",
            "-b",
            help="Compare every other run against this run (default: each run against "
            "the one before it).",
        ),
    ] = None,
    grid: Annotated[
        Path | None,
        typer.Option(
            "--grid",
            "-g",
            help="What-if grid file for the sweep heatmap (default: threshold 0.6-0.9 × "
            "outcomes mode).",
        ),
    ] = None,
    what_if: Annotated[
        bool,
        typer.Option("--what-if/--no-what-if", help="Include the sweep and threshold charts."),
    ] = True,
    by: Annotated[
        str | None,
        typer.Option(
            "--by",
            help="Slice the comparison by 'tag' or an executions column (forest plot; "
            "default: tag when the executions have tags).",
        ),
    ] = None,
    series: SeriesOpt = None,
    top: Annotated[
        int | None,
        typer.Option(
            "--top",
            min=0,
            show_default=False,
            help="Regressed cases embedded per pair and failing cases per run (worst first; "
            "the page says how to list the rest; default {cases_per_pair}).",
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="HTML file to write (default: DATASET/report.html)."),
    ] = None,
    clamp: ClampOpt = False,
    bootstrap: BootstrapOpt = None,
    seed: SeedOpt = 0,
) -> None:
    """Write one self-contained HTML report (no network needed to view it): the policy
    (threshold, band, gates, limits), run table with gates and Wilson intervals, comparisons
    with reasons, which evaluator moved (ties marked), paired interval and McNemar p, every
    regressed and failing case with its judge reasons and outcome checks (search, sort,
    expand), and the charts.

    Example: [bold]evalframe report runs/ --baseline 2026-10-01-v1.4 --out report.html[/bold]
    """
    from evalframe._private.cli.report_command import report_command as body

    body(
        dataset,
        config=config,
        preset=preset,
        threshold=threshold,
        baseline=baseline,
        grid=grid,
        what_if=what_if,
        by=by,
        series=series,
        top=top,
        out=out,
        clamp=clamp,
        bootstrap=bootstrap,
        seed=seed,
    )


@app.command("results")
@handles_errors
def results_command(
    dataset: Annotated[
        Path,
        typer.Argument(help="Dataset folder, results store, or a folder written with --out."),
    ],
    as_json: JsonOpt = False,
) -> None:
    """List the result sets (config_id, command, created_at, tables, rows) and flag the
    stale ones: sets whose input tables changed since they were computed.

    Example: [bold]evalframe results runs/[/bold]
    """
    from evalframe._private.cli.results_command import results_command as body

    body(dataset, as_json=as_json)


@app.command("plan")
@handles_errors
def plan_command(
    dataset: DatasetArg,
    detect: Annotated[
        float,
        typer.Option(
            "--detect",
            "-d",
            min=0.0001,
            max=1.0,
            help="The change to detect, on 0-1 (0.03 = 3 points of pass rate / mean score).",
        ),
    ] = 0.03,
    run: Annotated[
        str | None,
        typer.Option("--run", "-r", help="Run whose variance to use (default: the newest)."),
    ] = None,
    config: ConfigOpt = None,
    preset: PresetOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """How many cases a suite needs to see a change of --detect (α 0.05, power 0.8), from
    one run's clustered per-case variance; and the smallest change it sees now.

    Example: [bold]evalframe plan runs/ --detect 0.03 --run 2026-11-01-v1.6[/bold]
    """
    from evalframe._private.cli.plan_command import plan_command as body

    body(dataset, detect=detect, run=run, config=config, preset=preset, as_json=as_json)


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
