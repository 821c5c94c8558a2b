"""`evalframe compare`: compare runs case by case, write the tables, print the report."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import typer

from evalframe import compare_tables, load_config, write_tables
from evalframe._private import schema as S
from evalframe._private.cli.console import stderr, stdout
from evalframe._private.cli.decide_report import decide_exit_code, decision_lines
from evalframe._private.cli.render import (
    Prose,
    compare_report,
    message_text,
    policy_note,
    print_json,
    progress,
    run_table,
    say,
)
from evalframe._private.cli.score_command import default_out
from evalframe._private.cli.stats_report import power_notes, slice_notes
from evalframe._private.compare.pairs import series_note
from evalframe._private.store.fingerprint import inputs_fingerprint


def compare_command(
    dataset: Path,
    *,
    baseline: str | None = None,
    candidate: str | None = None,
    pairs: str | None = None,
    top: int = 10,
    config: Path | None = None,
    preset: str | None = None,
    threshold: float | None = None,
    out: Path | None = None,
    clamp: bool = False,
    engine: str = "polars",
    memory_limit: str | None = None,
    by: str | None = None,
    series: str | None = None,
    spark_remote: str | None = None,
    as_json: bool = False,
    decide: bool = False,
    bootstrap: int | None = None,
    seed: int = 0,
) -> None:
    """The body of `evalframe compare` (its options: evalframe/cli.py); exit 1 when any
    pair shows a regression. With `decide` (SPEC §12): print each pair's decision and why
    (cli/decide_report.py), and exit 1 if any pair fails, else 3 if any is inconclusive,
    else 0."""
    cfg = load_config(config, preset=preset, threshold=threshold)
    target = default_out(dataset, out)
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
            bootstrap=bootstrap,
            seed=seed,
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
        if decide:
            for line in decision_lines(run_deltas, cfg.decide, cfg.compare):
                stdout.print(line)
        if bootstrap is not None and tables.scored is not None:  # intervals and rank bands
            stdout.print(run_table(tables.scored[S.RUN_SUMMARY], title="runs (case bootstrap)"))
        stdout.print(say("\ntables written to {}/", target))
    if decide:
        code = decide_exit_code(run_deltas)
        if code:
            raise typer.Exit(code)
    elif run_deltas["regression_detected"].any():
        raise typer.Exit(1)


def _series_note(tables: Any) -> str | None:
    """The note that compared pairs join runs of several series (`pairs.series_note`)."""
    summary = tables.scored[S.RUN_SUMMARY]
    return series_note(summary, tables.pairs)
