"""The polars engine's aggregate-first kernel: `flat_execution_scores`, execution_scores
of a flat config from the raw input scans in one streaming pass over the judge rows
(validation folded in).

It is also the kernel the Spark engine runs on each partition of whole cases
(engines/spark/kernel.py): it lives here, below both `pipeline/` and the Spark engine.
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from evalframe._private import schema as S
from evalframe._private.config import Config
from evalframe._private.data.validate import (
    ClampReport,
    check_schemas,
    typed_frame,
    validate_tables,
)
from evalframe._private.errors import Problem, ValidationError
from evalframe._private.scoring import flat
from evalframe._private.scoring.execution_scores import (
    EXECUTION_COLUMNS,
    apply_policy,
)

Frame = pl.DataFrame | pl.LazyFrame


def flat_execution_scores(
    tables: Mapping[str, pl.LazyFrame | None],
    config: Config,
    *,
    clamp: bool = False,
    leaf_scores: list[pl.DataFrame] | None = None,
) -> tuple[pl.DataFrame, pl.LazyFrame, ClampReport | None] | None:
    """execution_scores of a flat config from the raw input scans in one streaming pass
    over the judge rows (validation folded in). Returns (execution_scores, typed runs,
    clamp report), or None when the data has more evaluators than the pass handles.
    A `leaf_scores` list receives the per-execution leaf partials of the same pass: the
    execution key, the rows counted (`flat.N_ROWS`), the evaluator bitmask (`flat.MASK`)
    and one `flat.LEAF_SCORE` column per leaf (what compare's evaluator_deltas reads)."""
    raw = dict(tables)
    check_schemas(raw)
    scores = typed_frame(raw[S.SCORES], S.SCORES)  # type: ignore[arg-type]
    names = flat.evaluator_names(scores)
    if len(names) > flat.MAX_EVALUATORS:
        return None
    leaves = flat.Leaves.of(config, names)
    paths = flat.paths_of_leaves(leaves, config) if leaf_scores is not None else None
    partials = flat.execution_partials(scores, leaves, clamp=clamp, leaf_paths=paths).collect(
        engine="streaming"
    )
    problems, report = flat.score_problems(partials, scores, clamp=clamp)
    known = partials.filter(pl.col(S.RUN_ID).is_not_null() & pl.col(S.CASE_ID).is_not_null())
    given = raw.get(S.EXECUTIONS) is not None
    derived = None if given else known.select(S.EXECUTION_KEY).lazy()
    typed, _report, side = validate_tables(
        raw, score_values=False, derived_executions=derived, execution_duplicates=False
    )
    problems += side
    leaf_cols = [flat.LEAF_SCORE + p for p in paths or ()]
    # only what the root statistics read joins the executions: not the leaf columns nor
    # the value-check counts (score_problems has read them)
    lean = known.drop(*leaf_cols, *flat.CHECK_COUNTS, strict=False)
    ex, n_joined = _execution_scores(typed, lean, leaves, config)
    if given:
        problems = _execution_problems(problems, side, ex, known, n_joined)
    dup = flat.duplicate_problem(known, scores)
    if dup is not None:
        problems.append(dup)
    if problems:
        raise ValidationError(problems)
    if leaf_scores is not None:
        leaf_scores.append(known.select(*S.EXECUTION_KEY, flat.N_ROWS, flat.MASK, *leaf_cols))
    return ex, typed[S.RUNS], report


def _execution_scores(
    typed: Mapping[str, pl.LazyFrame], lean: pl.DataFrame, leaves: flat.Leaves, config: Config
) -> tuple[pl.DataFrame, int]:
    """execution_scores from the typed executions and outcomes and the partial sums, and
    how many judge rows matched an execution."""
    executions = typed[S.EXECUTIONS].collect()
    outcomes = (
        typed[S.OUTCOMES]
        .group_by(S.EXECUTION_KEY)
        .agg(
            pl.len().cast(pl.Int64).alias(S.OUTCOMES_TOTAL),
            pl.col(S.PASSED).sum().cast(pl.Int64).alias(S.OUTCOMES_PASSED),
        )
    )
    frame = flat.execution_frame(executions.lazy(), lean, outcomes, leaves, config).collect()
    extra = [c for c in executions.columns if c not in S.EXECUTIONS_COLUMNS]
    del executions
    # sorted once, at the end: execution_scores comes out in key order (deterministic sums
    # downstream, whatever the input order) and duplicate execution keys are neighbours
    ex = (
        apply_policy(frame.lazy())
        .with_columns(pl.col(S.VERDICT).cast(pl.String))
        .select(*EXECUTION_COLUMNS, *extra)
        .sort(S.EXECUTION_KEY, nulls_last=True)
        .collect()
    )
    return ex, int(frame[flat.N_ALL].sum())


def _execution_problems(
    problems: list[Problem],
    side: list[Problem],
    ex: pl.DataFrame,
    known: pl.DataFrame,
    n_joined: int,
) -> list[Problem]:
    """`problems` with the given executions table's duplicate keys (where validate_tables
    lists them: before the other tables' duplicate keys and the outcome orphans, after
    every value check; `side` is validate_tables' part) and the judge rows of unknown
    executions."""
    dup_exec = flat.neighbour_duplicates(ex, S.EXECUTIONS, S.EXECUTION_KEY)
    if dup_exec is not None:
        later = ("duplicate key (keys listed)", "execution is not in")
        at = next((i for i, p in enumerate(side) if p.message.startswith(later)), len(side))
        problems.insert(len(problems) - len(side) + at, dup_exec)
    # some rows matched no execution (with duplicate executions the sums can balance)
    if dup_exec is not None or n_joined < known[flat.N_ALL].sum():
        orphan = flat.orphan_problem(known, ex.select(S.EXECUTION_KEY))
        if orphan is not None:
            problems.append(orphan)
    return problems
