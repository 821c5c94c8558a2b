"""`evalframe flaky`: the quarantine candidates of the runs' history, worst first."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from evalframe.cli._console import stdout
from evalframe.cli._options import (
    ClampOpt,
    ConfigOpt,
    DatasetArg,
    Engine,
    EngineOpt,
    HistorySeriesOpt,
    JsonOpt,
    MemoryLimitOpt,
    OutOpt,
    PresetOpt,
    SparkRemoteOpt,
    ThresholdOpt,
    WindowOpt,
)
from evalframe.cli.trend import history_and_write, series_name


def flaky(
    dataset: DatasetArg,
    series: HistorySeriesOpt = None,
    window: WindowOpt = None,
    top: Annotated[
        int,
        typer.Option(
            "--top", min=0, help="How many candidates to list (worst first); --json lists all."
        ),
    ] = 20,
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
    runs, then series and case_id); --top N of them, all with --json.

    Example: [bold]evalframe flaky runs/ --series model --window 20 --top 10[/bold]
    """
    import polars as pl

    from evalframe.cli._render import print_json, say

    tables, target = history_and_write(
        dataset,
        "flaky",
        series=series,
        window=window,
        config=config,
        preset=preset,
        threshold=threshold,
        out=out,
        clamp=clamp,
        engine=engine,
        memory_limit=memory_limit,
        spark_remote=spark_remote,
    )
    history = tables["case_history"]
    candidates = history.filter(pl.col("quarantine")).sort(
        ["flip_rate", "runs", "config_id", "series", "case_id"],
        descending=[True, True, False, False, False],
        nulls_last=True,
    )
    if as_json:
        print_json(candidates.to_dicts())
        return
    if candidates.is_empty():
        stdout.print(
            say(
                "no quarantine candidates among {} case histories (a candidate has at least "
                "history.min_runs runs and a flip_rate meeting history.flaky_flip_rate)",
                history.height,
            )
        )
    else:
        stdout.print(candidates_table(candidates, top))
    stdout.print(say("tables written to {}/", target))


def candidates_table(candidates: Any, top: int) -> Any:
    """The `top` worst candidates as a table; its caption says where the rest are."""
    from rich.table import Table

    from evalframe.cli._render import id_text

    shown = f"the worst {top} of " if top < candidates.height else "worst first, "
    table = Table(
        title=f"quarantine candidates, {shown}{candidates.height}",
        title_justify="left",
        caption=None
        if top >= candidates.height
        else f"all {candidates.height}: --json, or case_history where quarantine",
    )
    for header in ("series", "case", "runs", "passes", "flips", "flip rate", "shrunk", "last"):
        table.add_column(header, justify="left" if header in ("series", "case") else "right")
    for r in candidates.head(top).iter_rows(named=True):
        table.add_row(
            id_text(series_name(r)),
            id_text(r["case_id"]),
            str(r["runs"]),
            str(r["passes"]),
            str(r["flips"]),
            f"{r['flip_rate'] * 100:.0f}%",
            f"{r['shrunk_pass_rate'] * 100:.1f}%",
            "pass" if r["last_passed"] else "fail",
        )
    return table
