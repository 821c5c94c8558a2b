"""Keyed scores: every score row with integer execution and evaluator ids, computed once.

Joining `scores` to `executions` on three string columns is the most expensive step of
scoring, so it happens exactly once, at load time, and its result is materialized with
lean integer keys. The same pass checks the key-level contract: a score row whose
execution is not in `executions` (orphan) and a duplicate (execution, evaluator) — the
latter with a per-execution bitmask of evaluator ids, so no group-by ever has one group
per score row.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from evalframe._private import schema as S
from evalframe._private.data.validate import MAX_EXAMPLES, render_keys
from evalframe._private.errors import Problem

EXEC = "_exec"  # integer execution id (row index of the executions table)
EVAL = "_eval"  # integer evaluator id (index into Keyed.evaluators)
EXEC_T = "_exec_threshold"
OK = "_ok"  # the execution's status is "ok"
MAX_BITMASK = 62  # evaluator ids that fit one Int64 bitmask


@dataclass(frozen=True)
class Keyed:
    """Materialized keyed tables shared by validation and every scoring plan."""

    executions: pl.DataFrame
    """The executions table with EXEC = row index."""
    scores: pl.DataFrame
    """EXEC, EVAL, OK, EXEC_T, SCORE, SCALE_MAX, WEIGHT for rows of known executions."""
    evaluators: tuple[str, ...]
    """Evaluator names by id (sorted)."""


def key_scores(scores: pl.LazyFrame, executions: pl.LazyFrame) -> tuple[Keyed, list[Problem]]:
    """Key the score rows; return the keyed tables and any orphan / duplicate problems."""
    execs = executions.with_row_index(EXEC).with_columns(pl.col(EXEC).cast(pl.Int64)).collect()
    names = tuple(
        sorted(scores.select(pl.col(S.EVALUATOR).unique()).collect()[S.EVALUATOR].drop_nulls())
    )
    keyed = (
        scores.join(
            execs.lazy().select(
                *S.EXECUTION_KEY,
                EXEC,
                (pl.col(S.STATUS) == S.STATUS_OK).alias(OK),
                pl.col(S.THRESHOLD).alias(EXEC_T),
            ),
            on=S.EXECUTION_KEY,
            how="left",
        )
        .select(
            EXEC,
            # an Enum cast maps names to their index in `names` without hashing per row
            pl.col(S.EVALUATOR).cast(pl.Enum(names)).to_physical().cast(pl.Int32).alias(EVAL),
            OK,
            EXEC_T,
            S.SCORE,
            S.SCALE_MAX,
            S.WEIGHT,
        )
        .collect()
    )
    problems = _key_problems(keyed, scores, execs, names)
    unknown = keyed[EXEC].null_count() + keyed[EVAL].null_count()
    known = (
        keyed.filter(pl.col(EXEC).is_not_null() & pl.col(EVAL).is_not_null()) if unknown else keyed
    )  # copying 10^7 rows only when some have no execution or evaluator
    return Keyed(executions=execs, scores=known, evaluators=names), problems


def _key_problems(
    keyed: pl.DataFrame, scores: pl.LazyFrame, execs: pl.DataFrame, names: tuple[str, ...]
) -> list[Problem]:
    problems: list[Problem] = []
    n_orphans = keyed[EXEC].null_count()
    if n_orphans:  # failure path only: find example keys the slow, simple way
        orphan_keys = (
            scores.select(S.EXECUTION_KEY)
            .unique(maintain_order=True)
            .join(execs.lazy().select(S.EXECUTION_KEY), on=S.EXECUTION_KEY, how="anti")
            .head(MAX_EXAMPLES)
            .collect()
        )
        examples = render_keys(orphan_keys, S.EXECUTION_KEY)
        message = "execution is not in the executions table"
        problems.append(Problem(S.SCORES, "", message, n_orphans, examples))
    orphan_dups = _orphan_duplicates(scores, execs) if n_orphans else None
    rows = keyed.lazy().filter(pl.col(EXEC).is_not_null() & pl.col(EVAL).is_not_null())
    if len(names) <= MAX_BITMASK:
        bit = pl.lit(2, dtype=pl.Int64).pow(pl.col(EVAL)).cast(pl.Int64)
        suspects = (
            rows.group_by(EXEC)
            .agg(pl.len().alias("_n"), bit.bitwise_or().alias("_mask"))
            .filter(pl.col("_mask").bitwise_count_ones() != pl.col("_n"))
        )
    else:
        suspects = rows.group_by(EXEC, EVAL).agg(pl.len().alias("_n")).filter(pl.col("_n") > 1)
    dup_execs = suspects.select(EXEC).collect()[EXEC]
    found: list[str] = []
    n_dup = 0
    if dup_execs.len():
        dups = (
            rows.filter(pl.col(EXEC).is_in(dup_execs.implode()))
            .group_by(EXEC, EVAL)
            .agg(pl.len().alias("_n"))
            .filter(pl.col("_n") > 1)
            .sort(EXEC, EVAL)
            .collect()
        )
        named = (
            dups.head(MAX_EXAMPLES)
            .join(execs.select(EXEC, *S.EXECUTION_KEY), on=EXEC, how="left")
            .with_columns(
                pl.col(EVAL)
                .replace_strict(dict(enumerate(names)), return_dtype=pl.String)
                .alias(S.EVALUATOR)
            )
        )
        found += render_keys(named, S.SCORE_KEY)
        n_dup += dups.height
    if orphan_dups is not None and orphan_dups.height:
        found += render_keys(orphan_dups.head(MAX_EXAMPLES), S.SCORE_KEY)
        n_dup += orphan_dups.height
    if n_dup:
        column, examples = ", ".join(S.SCORE_KEY), tuple(found[:MAX_EXAMPLES])
        problems.append(Problem(S.SCORES, column, "duplicate key (keys listed)", n_dup, examples))
    return problems


def _orphan_duplicates(scores: pl.LazyFrame, execs: pl.DataFrame) -> pl.DataFrame:
    """Duplicate keys among score rows with no execution (failure path only: these rows
    have no integer ids, so their keys are compared as text)."""
    return (
        scores.select(*S.SCORE_KEY)
        .join(execs.lazy().select(S.EXECUTION_KEY), on=S.EXECUTION_KEY, how="anti")
        .group_by(S.SCORE_KEY)
        .agg(pl.len().alias("_n"))
        .filter(pl.col("_n") > 1)
        .sort(S.SCORE_KEY)
        .collect()
    )
