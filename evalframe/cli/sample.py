"""`evalframe sample`: a uniform random sample of judged executions to label by hand."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

import evalframe as ef
from evalframe.cli._console import Lazy, stdout
from evalframe.cli._options import POLICY, DatasetArg, policy, shared

if TYPE_CHECKING:
    import polars as pl

    import evalframe.cli._render as ui
else:
    pl, ui = Lazy("polars"), Lazy("evalframe.cli._render")


@shared(*POLICY, "as_json")
def sample(
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
    **options: Any,
) -> None:
    """Draw a uniform random sample of judged executions (status ok, not unscored) of
    each run to label by hand: the sample the corrected pass rate needs to be unbiased.
    Prints their keys (run_id, case_id, attempt) or writes them with --out; add a
    label_passed column and read it back with [bold]evalframe ingest wide FILE --labels[/bold].

    Example: [bold]evalframe sample runs/ --n 200 --seed 7 --out to_label.csv[/bold]
    """
    cfg = policy(options)
    ds = ef.load_dataset(dataset)
    sample = ef.sample_executions(ds, cfg, n=n, seed=seed, run=run)
    if out is not None:
        ef.write_sample(sample, out, dataset)
    if options["as_json"]:
        ui.print_json(
            sample.to_dicts() if out is None else {"written": str(out), "rows": sample.height}
        )
        return
    if out is None:
        columns = [
            ("run", lambda r: ui.id_text(r["run_id"])),
            ("case", lambda r: ui.id_text(r["case_id"])),
            ("attempt", lambda r: str(r["attempt"])),
        ]
        title = ui.say("executions to label (seed {})", seed)
        stdout.print(ui.table(title, columns, sample.iter_rows(named=True), ("run", "case")))
    counts = ef.judged_counts(ds, cfg).join(
        sample.group_by("run_id").agg(pl.len().alias("drawn")), on="run_id", how="inner"
    )
    for r in counts.sort("run_id").iter_rows(named=True):
        stdout.print(
            ui.say("run {}: {} of {} judged executions drawn", r["run_id"], r["drawn"], r["judged"])
        )
    if out is not None:
        stdout.print(
            ui.say(
                "keys written to {}; add a label_passed column (true/false) and run "
                "[bold]evalframe ingest wide {} --labels --to {}[/bold]",
                out,
                out,
                dataset,
            )
        )
