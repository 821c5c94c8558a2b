"""`evalframe sample`: a uniform random sample of judged executions to label by hand."""

from __future__ import annotations

from pathlib import Path

import polars as pl
from rich.table import Table

from evalframe import load_config, load_dataset, sample_executions
from evalframe._private import schema as S
from evalframe._private.cli.console import stdout
from evalframe._private.cli.render import id_text, print_json, say
from evalframe._private.pipeline.sample import judged_counts, write_sample


def sample_command(
    dataset: Path,
    *,
    n: int = 200,
    seed: int = 0,
    run: str | None = None,
    out: Path | None = None,
    config: Path | None = None,
    preset: str | None = None,
    threshold: float | None = None,
    as_json: bool = False,
) -> None:
    """The body of `evalframe sample` (its options: evalframe/cli.py): prints the drawn
    keys (run_id, case_id, attempt) or writes them to `out`."""
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
