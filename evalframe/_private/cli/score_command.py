"""`evalframe score`: score every execution, write the tables, print the run table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import typer

from evalframe import load_config, score_tables, write_tables
from evalframe._private import schema as S
from evalframe._private.cli.console import stderr, stdout
from evalframe._private.cli.render import (
    policy_note,
    print_json,
    progress,
    run_table,
    say,
    slice_table,
)
from evalframe._private.display import with_pass_k_cases
from evalframe._private.store.fingerprint import inputs_fingerprint


def default_out(dataset: Path, out: Path | None) -> Path:
    """Where a command writes its tables: --out, else the results store DATASET/results."""
    if out is not None:
        return out
    return (dataset if dataset.is_dir() else dataset.parent) / "results"


def score_and_write(
    dataset: Path,
    config: Path | None,
    preset: str | None,
    threshold: float | None,
    out: Path | None,
    evaluators: bool,
    clamp: bool,
    engine: str = "polars",
    memory_limit: str | None = None,
    by: str | None = None,
    spark_remote: str | None = None,
    bootstrap: int | None = None,
    seed: int = 0,
) -> tuple[pl.DataFrame, Path, int, Any]:
    """Score and commit; returns run_summary, the folder, rows --clamp changed, the tables."""
    cfg = load_config(config, preset=preset, threshold=threshold)
    target = default_out(dataset, out)
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
            bootstrap=bootstrap,
            seed=seed,
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


def score_command(
    dataset: Path,
    *,
    config: Path | None = None,
    preset: str | None = None,
    threshold: float | None = None,
    out: Path | None = None,
    check: bool = False,
    evaluators: bool = False,
    clamp: bool = False,
    engine: str = "polars",
    memory_limit: str | None = None,
    by: str | None = None,
    spark_remote: str | None = None,
    as_json: bool = False,
    bootstrap: int | None = None,
    seed: int = 0,
) -> None:
    """The body of `evalframe score` (its options: evalframe/cli.py)."""
    policy = load_config(config, preset=preset, threshold=threshold)  # stated under the table
    summary, target, _, scored = score_and_write(
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
        bootstrap,
        seed,
    )
    if as_json:
        print_json(summary.to_dicts())
    else:
        # per k of attempts.k, how many cases have >= k attempts (the rule the report's run
        # table uses too: display.with_pass_k_cases)
        stdout.print(run_table(with_pass_k_cases(summary, scored.get(S.CASE_SUMMARY))))
        if summary[S.CONFIG_ID].eq(policy.config_id).all():
            stdout.print(policy_note(policy))
        if by is not None and S.SLICE_SUMMARY in scored:
            stdout.print(slice_table(scored[S.SLICE_SUMMARY]))
        stdout.print(say("tables written to {}/", target))
    if check and not summary[S.RUN_PASSED].all():
        failed = summary.filter(~pl.col(S.RUN_PASSED))[S.RUN_ID].to_list()
        stderr.print(say("run gate failed for: {}", ", ".join(map(str, failed))))
        raise typer.Exit(1)
