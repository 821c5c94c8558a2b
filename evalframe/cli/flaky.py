"""`evalframe flaky`: the quarantine candidates of the runs' history, worst first."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from evalframe.cli._console import Lazy, stdout
from evalframe.cli._options import DatasetArg, shared
from evalframe.cli.trend import HISTORY, SeriesOpt, WindowOpt, history_and_write, series_name

if TYPE_CHECKING:
    import polars as pl

    import evalframe.cli._render as ui
else:
    pl, ui = Lazy("polars"), Lazy("evalframe.cli._render")


@shared(*HISTORY)
def flaky(
    dataset: DatasetArg,
    series: SeriesOpt = None,
    window: WindowOpt = None,
    top: Annotated[
        int,
        typer.Option(
            "--top", min=0, help="How many candidates to list (worst first); --json lists all."
        ),
    ] = 20,
    **options: Any,
) -> None:
    """The quarantine candidates of the runs' history: write series_trend and case_history
    and list the cases case_history quarantines, worst first (highest flip_rate, then most
    runs, then series and case_id); --top N of them, all with --json.

    Example: [bold]evalframe flaky runs/ --series model --window 20 --top 10[/bold]
    """
    options |= dict(series=series, window=window)
    tables, target = history_and_write(dataset, "flaky", options)
    history = tables["case_history"]
    candidates = history.filter(pl.col("quarantine")).sort(
        ["flip_rate", "runs", "config_id", "series", "case_id"],
        descending=[True, True, False, False, False],
        nulls_last=True,
    )
    if options["as_json"]:
        ui.print_json(candidates.to_dicts())
        return
    if candidates.is_empty():
        stdout.print(
            ui.say(
                "no quarantine candidates among {} case histories (a candidate has at least "
                "history.min_runs runs and a flip_rate meeting history.flaky_flip_rate)",
                history.height,
            )
        )
    else:
        n = candidates.height
        columns = [
            ("series", lambda r: ui.id_text(series_name(r))),
            ("case", lambda r: ui.id_text(r["case_id"])),
            ("runs", lambda r: str(r["runs"])),
            ("passes", lambda r: str(r["passes"])),
            ("flips", lambda r: str(r["flips"])),
            ("flip rate", lambda r: f"{r['flip_rate'] * 100:.0f}%"),
            ("shrunk", lambda r: f"{r['shrunk_pass_rate'] * 100:.1f}%"),
            ("last", lambda r: "pass" if r["last_passed"] else "fail"),
        ]
        title = (
            f"quarantine candidates, {f'the worst {top} of ' if top < n else 'worst first, '}{n}"
        )
        caption = None if top >= n else f"all {n}: --json, or case_history where quarantine"
        rows = candidates.head(top).iter_rows(named=True)
        stdout.print(ui.table(title, columns, rows, ("series", "case"), caption=caption))
    stdout.print(ui.say("tables written to {}/", target))
