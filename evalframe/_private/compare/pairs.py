"""Choosing which runs to compare: (baseline, candidate) pairs, and unknown run ids."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import polars as pl

from evalframe._private import schema as S
from evalframe._private.errors import UnknownRunError, UsageError


def describe_runs(known: Sequence[str], limit: int = 30) -> str:
    shown = ", ".join(known[:limit]) or "(none)"
    return shown + (f", … and {len(known) - limit} more" if len(known) > limit else "")


def check_runs(asked: Sequence[str], known: Sequence[str]) -> None:
    unknown = sorted(set(asked) - set(known))
    if unknown:
        raise UnknownRunError(
            f"unknown run id(s) {', '.join(map(repr, unknown))}; known run ids: "
            f"{describe_runs(sorted(known))}; hint: pick run ids from the list above."
        )


def pairs_for(
    run_ids_with_created_at: pl.DataFrame | pl.LazyFrame,
    *,
    baseline: str | None = None,
    candidate: str | None = None,
    mode: str | None = None,
) -> list[tuple[str, str]]:
    """Build (baseline, candidate) pairs from a table of run_id (+ optional created_at).

    Runs are ordered by created_at (null last), then run_id. baseline and candidate: that
    pair; baseline alone: every other run against it; candidate alone: it against the run
    before it; mode "consecutive": each run against the one before it; nothing: the last
    run against the one before it.
    """
    frame = run_ids_with_created_at.lazy()
    has_time = S.CREATED_AT in frame.collect_schema().names()
    runs = (
        frame.group_by(S.RUN_ID)
        .agg((pl.col(S.CREATED_AT).min() if has_time else pl.lit(None)).alias(S.CREATED_AT))
        .sort(S.CREATED_AT, S.RUN_ID, nulls_last=True)
        .collect()[S.RUN_ID]
        .to_list()
    )
    if mode not in (None, "consecutive"):
        raise UsageError(f"unknown compare mode {mode!r}; hint: use mode='consecutive'.")
    if mode is not None and (baseline is not None or candidate is not None):
        raise UsageError(
            "mode='consecutive' pairs every run with the one before it; "
            "hint: give either a mode or baseline/candidate, not both."
        )
    asked = [r for r in (baseline, candidate) if r is not None]
    check_runs(asked, runs)
    if baseline is not None and baseline == candidate:
        raise UsageError(f"baseline and candidate are the same run {baseline!r}.")
    if baseline is not None and candidate is not None:
        return [(baseline, candidate)]
    if baseline is not None:
        return [(baseline, run) for run in runs if run != baseline]
    if mode == "consecutive":
        return list(itertools.pairwise(runs))
    if candidate is None:
        if len(runs) < 2:
            raise UsageError(
                f"comparing needs at least two runs; the data holds {len(runs)}: "
                f"{describe_runs(runs)}."
            )
        candidate = runs[-1]
    position = runs.index(candidate)
    if position == 0:
        raise UsageError(
            f"run {candidate!r} is the first run, so it has no run before it to compare "
            "with; hint: pass a baseline."
        )
    return [(runs[position - 1], candidate)]
