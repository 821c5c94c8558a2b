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


SERIES_CANDIDATES = ("model", "target", "agent", "provider", "agent_name", "model_name")
"""Runs columns that usually tell series apart (AgentV's target, a model): a note names those
whose values differ within a compared pair when no --series is given."""
NO_SERIES = "(none)"
"""How a null series value is named in messages (it is a series of its own)."""


def check_series(schema: pl.Schema, series: str | None) -> None:
    """A UsageError (exit 2) when `series` is not a column of plain values of the runs table
    whose `schema` is given: it names the column and the columns there are."""
    if series is None:
        return
    names = schema.names()
    if series in names and schema[series].is_nested():
        raise UsageError(
            f"--series {series!r} is a {schema[series]} column of the runs table; a series "
            "is one value per run; hint: pass a column of plain values (e.g. model, target)."
        )
    if series not in names:
        usable = [n for n in names if n not in (S.RUN_ID, S.CREATED_AT, S.CONFIG_ID)]
        raise UsageError(
            f"--series {series!r} is not a column of the runs table; the runs table has "
            f"{', '.join(usable) or 'no column besides run_id'}; hint: pass one of those "
            "columns (e.g. model, target), or leave --series out."
        )


def _ordered_runs(frame: pl.LazyFrame, series: str | None) -> pl.DataFrame:
    """run_id, created_at and the series value (text; null its own series) per run, ordered
    by created_at (null last), then run_id."""
    schema = frame.collect_schema()
    check_series(schema, series)
    names = schema.names()
    has_time = S.CREATED_AT in names
    return (
        frame.group_by(S.RUN_ID)
        .agg(
            (pl.col(S.CREATED_AT).min() if has_time else pl.lit(None)).alias(S.CREATED_AT),
            (pl.col(series).cast(pl.String).first() if series else pl.lit(None, pl.String)).alias(
                "_series"
            ),
        )
        .sort(S.CREATED_AT, S.RUN_ID, nulls_last=True)
        .collect()
    )


def pairs_for(
    run_ids_with_created_at: pl.DataFrame | pl.LazyFrame,
    *,
    baseline: str | None = None,
    candidate: str | None = None,
    mode: str | None = None,
    series: str | None = None,
) -> list[tuple[str, str]]:
    """Build (baseline, candidate) pairs from a table of run_id (+ optional created_at).

    Runs are ordered by created_at (null last), then run_id. baseline and candidate: that
    pair; baseline alone: every other run against it; candidate alone: it against the run
    before it; mode "consecutive": each run against the one before it; nothing: the last
    run against the one before it.

    `series` (a column of the frame, e.g. model or target of the runs table): runs are paired
    within a series only (each value, a null value its own series): "the run before it" is
    the one before it in its series, "every other run" those of the baseline's series,
    consecutive pairs never join two series, and with nothing asked, the last run of each
    series (with two runs or more) against the one before it.
    """
    runs_frame = _ordered_runs(run_ids_with_created_at.lazy(), series)
    runs = runs_frame[S.RUN_ID].to_list()
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
    groups = (
        [runs]
        if series is None
        else [
            g[S.RUN_ID].to_list() for g in runs_frame.partition_by("_series", maintain_order=True)
        ]
    )
    of = {run: group for group in groups for run in group}
    if baseline is not None:
        return [(baseline, run) for run in of[baseline] if run != baseline]
    if mode == "consecutive":
        return [pair for group in groups for pair in itertools.pairwise(group)]
    if candidate is None:
        ready = [group for group in groups if len(group) >= 2]
        if not ready:
            where = "" if series is None else f" (in any one series of {series!r})"
            raise UsageError(
                f"comparing needs at least two runs{where}; the data holds {len(runs)}: "
                f"{describe_runs(runs)}."
            )
        return [(group[-2], group[-1]) for group in ready]
    group = of[candidate]
    position = group.index(candidate)
    if position == 0:
        where = "" if series is None else f" of its series ({series})"
        raise UsageError(
            f"run {candidate!r} is the first run{where}, so it has no run before it to "
            "compare with; hint: pass a baseline."
        )
    return [(group[position - 1], candidate)]


def series_note(
    runs_frame: pl.DataFrame | pl.LazyFrame,
    pairs: Sequence[tuple[str, str]],
    lead: str = "these pairs compare runs of different series",
    remedy: str = "to pair runs within a series only",
) -> str | None:
    """Without --series: when compared pairs join runs that differ in a column that usually
    tells series apart (SERIES_CANDIDATES present in the runs frame), a note naming the
    columns, a pair and the --series option; None otherwise."""
    frame = runs_frame.lazy()
    names = frame.collect_schema().names()
    columns = [c for c in SERIES_CANDIDATES if c in names]
    if not columns or not pairs:
        return None
    values = frame.group_by(S.RUN_ID).agg(pl.col(c).cast(pl.String).first() for c in columns)
    chosen = pl.LazyFrame(
        {"_b": [b for b, _c in pairs], "_c": [c for _b, c in pairs]},
        schema={"_b": pl.String, "_c": pl.String},
    )
    joined = (
        chosen.join(values, left_on="_b", right_on=S.RUN_ID, how="left", maintain_order="left")
        .join(
            values,
            left_on="_c",
            right_on=S.RUN_ID,
            how="left",
            suffix="_cand",
            maintain_order="left",
        )
        .collect()
    )
    crossing = []
    for c in columns:
        differs = joined.filter(pl.col(c).ne_missing(pl.col(f"{c}_cand")))
        if differs.height:
            first = differs.row(0, named=True)
            crossing.append(
                f"{c} ({differs.height} of {joined.height} pairs, e.g. {first['_b']} "
                f"[{first[c] or NO_SERIES}] → {first['_c']} [{first[f'{c}_cand'] or NO_SERIES}])"
            )
    if not crossing:
        return None
    options = " or ".join(f"--series {c.split(' ', 1)[0]}" for c in crossing)
    return f"note: {lead}: " + "; ".join(crossing) + f"; {remedy}, pass {options}."
