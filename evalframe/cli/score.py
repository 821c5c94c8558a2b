"""`evalframe score`: score every execution, write the tables, print the run table."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

import evalframe as ef
from evalframe.cli._console import Lazy, stderr, stdout
from evalframe.cli._options import (
    BOOT,
    ENGINE,
    POLICY,
    DatasetArg,
    compute_and_write,
    policy,
    shared,
)

if TYPE_CHECKING:
    import polars as pl

    import evalframe.cli._render as ui
    from evalframe import format as fmt
else:
    pl, ui, fmt = Lazy("polars"), Lazy("evalframe.cli._render"), Lazy("evalframe.format")


def score_and_write(
    dataset: Path, cfg: Any, out: Path | None, engine: str = "polars", **options: Any
) -> tuple[pl.DataFrame, Path, Any]:
    """Score `dataset` under `cfg` and commit the tables (`options`: score_tables'
    keywords); returns run_summary, the folder and the tables."""
    tables, target, _ = compute_and_write(
        dataset,
        out,
        "score",
        cfg,
        f"scoring {dataset} under config {cfg.config_id} ({engine})",
        lambda: ef.score_tables(dataset, cfg, engine=engine, **options),
    )
    clamped = tables.clamped
    if clamped is not None and clamped.changed:
        stderr.print(
            f"--clamp changed {clamped.changed} score rows ({clamped.clamped} clamped, "
            f"{clamped.nulled} NaN/inf set to null)"
        )
    return tables["run_summary"], target, tables


@shared(*POLICY, "out", *ENGINE, "by", "as_json", *BOOT)
def score(
    dataset: DatasetArg,
    check: Annotated[
        bool, typer.Option("--check", help="Exit 1 when any run fails a run gate.")
    ] = False,
    evaluators: Annotated[
        bool, typer.Option("--evaluators", help="Also write evaluator_scores (input-sized).")
    ] = False,
    **options: Any,
) -> None:
    """Score every execution; write execution_scores, case_summary, run_summary and
    variance_components (and slice_summary with --by, noise_floor with --replicates).

    Example: [bold]evalframe score runs/ --preset connexity --threshold 0.75 --check[/bold]
    """
    cfg, as_json, out = policy(options), options.pop("as_json"), options.pop("out")
    summary, target, scored = score_and_write(dataset, cfg, out, evaluators=evaluators, **options)
    if as_json:
        ui.print_json(summary.to_dicts())
    else:
        # per k of attempts.k, how many cases have >= k attempts (the report's rule too)
        stdout.print(ui.run_table(fmt.with_pass_k_cases(summary, scored.get("case_summary"))))
        if summary["config_id"].eq(cfg.config_id).all():
            stdout.print(ui.policy_note(cfg))
        if options["by"] is not None and "slice_summary" in scored:
            stdout.print(slice_table(scored["slice_summary"]))
        stdout.print(ui.say("tables written to {}/", target))
    if check and not summary["run_passed"].all():
        failed = summary.filter(~pl.col("run_passed"))["run_id"].to_list()
        stderr.print(ui.say("run gate failed for: {}", ", ".join(map(str, failed))))
        raise typer.Exit(1)


MAX_SLICES = 50
"""How many slice values `score --by` prints (the rest: the slice_summary table)."""


def slice_table(slices: pl.DataFrame | pl.LazyFrame) -> ui.FitTable:
    """`score --by`: per slice value × run, executions, pass rate ± se and mean score ± se
    (slice_summary), slice values and ids shown literally; a null value reads "(none)"."""
    frame = slices.lazy().collect()
    name = str(frame["slice"][0]) if frame.height else "slice"
    values = frame["slice_value"].n_unique()
    notes = []
    if values > MAX_SLICES:  # the largest slices; slice_summary holds them all
        largest = (
            frame.group_by("slice_value")
            .agg(pl.col("executions").sum())
            .sort("executions", "slice_value", descending=[True, False], nulls_last=True)
            .head(MAX_SLICES)
        )
        frame = frame.join(largest.select("slice_value"), on="slice_value", nulls_equal=True)
        notes.append(
            f"{values:,} values of {name}: the {MAX_SLICES} with the most executions are shown; "
            "all are in the slice_summary table (evalframe sql DATASET "
            '"select * from slice_summary")'
        )
    frame = frame.sort("slice_value", "run_id", nulls_last=True)
    columns: list[ui.Column] = [
        (
            name,
            lambda r: ui.id_text("(none)" if r["slice_value"] is None else r["slice_value"]),
            "left",
            0,
        ),
        ("run", lambda r: ui.id_text(r["run_id"]), "left", 0),
        ("execs", lambda r: str(r["executions"]), "right", 2),
        ("pass rate", ui.rate_cell, "right", 2),
        (
            "mean score",
            lambda r: fmt.with_se(fmt.num(r["mean_score"]), r["mean_score_se"]),
            "right",
            2,
        ),
        ("case pass", lambda r: fmt.pct(fmt.run_rate(r, "case_pass_rate")), "right", 2),
    ]
    if frame["config_id"].n_unique() > 1:
        columns.insert(0, ("config", lambda r: ui.id_text(r["config_id"]), "left", 0))
    records = fmt.with_wilson(frame).to_dicts()
    return ui.FitTable(f"slices by {name}", columns, records, notes + ui.interval_notes(records))
