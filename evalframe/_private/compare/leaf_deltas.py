"""`evaluator_deltas` of a flat config from the per-execution leaf partials of the scoring
pass (`flat.execution_partials(leaf_paths=...)`): one row per execution with each leaf's
normalized score, so compare never reads the judge rows a second time.

The rows equal `compare`'s evaluator_deltas over the tree path's `evaluator_scores`
(docs/compare.md): a leaf row exists for every expected leaf of an ok execution that has
score rows (the config's leaves, or the evaluators seen in the run); its score is the
leaf's normalized score, 0 under `on_missing: zero` when null or absent, else null; each
side is the mean over the case's attempts. The pair sides are spread on one row per
case (all leaves side by side) and turned into one row per leaf at the end, in path order,
so the (config, pair, case, path) order needs only a sort of the case rows.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from evalframe._private import schema as S
from evalframe._private.compare.compare import (
    BASELINE,
    CANDIDATE,
    EVALUATOR_DELTAS_SCHEMA,
    IN_BASELINE,
    IN_CANDIDATE,
    PAIR_INDEX,
    pair_sides,
    pair_table,
)
from evalframe._private.config import Config
from evalframe._private.rules import compare as rules
from evalframe._private.rules.verdicts import ON_MISSING_ZERO
from evalframe._private.scoring.flat import LEAF_SCORE, MASK, N_ROWS

_SEEN = "_seen:"
"""Prefix of the per-run flag: the leaf is expected in the run (an unconfigured tree)."""


def leaf_paths_of(frame: pl.DataFrame) -> list[str]:
    """The leaf paths of a frame's `LEAF_SCORE` columns, sorted (the rows' path order).
    For a tree from the data they are the data's evaluator names, sorted as the flat pass
    numbers them: leaf i is evaluator bit i of `MASK`."""
    return sorted(c.removeprefix(LEAF_SCORE) for c in frame.columns if c.startswith(LEAF_SCORE))


def leaf_case_means(
    leaf_scores: pl.DataFrame, execution_scores: pl.DataFrame, config: Config
) -> pl.DataFrame:
    """One row per (run, case) with an ok execution that has score rows: config_id and
    each leaf's mean over those attempts (`LEAF_SCORE` + path) and, for a tree from the
    data, whether the run has the leaf at all (`_SEEN` + path). `leaf_scores` is the
    flat pass's `PolarsTables.leaf_scores`; execution_scores' status leaves executions
    that are not ok out."""
    paths = leaf_paths_of(leaf_scores)
    not_ok = execution_scores.filter(pl.col(S.STATUS) != S.STATUS_OK).select(S.EXECUTION_KEY)
    ok = leaf_scores.filter(pl.col(N_ROWS) > 0).join(not_ok, on=list(S.EXECUTION_KEY), how="anti")
    zero = config.on_missing == ON_MISSING_ZERO
    values = [
        (pl.col(LEAF_SCORE + p).fill_null(0.0) if zero else pl.col(LEAF_SCORE + p))
        .cast(pl.Float64)
        .alias(LEAF_SCORE + p)
        for p in paths
    ]
    single = ok.select((pl.col(S.ATTEMPT).max() == pl.col(S.ATTEMPT).min()).fill_null(True))
    if single.item():  # one attempt per case: the mean over one attempt is that attempt's score
        per_case = ok.select(S.RUN_ID, S.CASE_ID, *values)
    else:
        per_case = ok.group_by(S.RUN_ID, S.CASE_ID).agg(v.mean() for v in values)
    if config.evaluators is None:  # expected leaves: the evaluators seen in the run
        mask = pl.col(MASK)
        seen = leaf_scores.group_by(S.RUN_ID).agg(
            ((mask.bitwise_or() & (1 << i)) != 0).fill_null(False).alias(_SEEN + p)
            for i, p in enumerate(paths)
        )
        per_case = per_case.join(seen, on=S.RUN_ID, how="left")
    return per_case.with_columns(pl.lit(config.config_id, dtype=pl.String).alias(S.CONFIG_ID))


def evaluator_deltas_from_cases(
    per_case: pl.DataFrame, pairs: Sequence[tuple[str, str]], config: Config
) -> pl.DataFrame:
    """evaluator_deltas (docs/compare.md) of one flat config from `leaf_case_means`
    (statuses with the config's `compare.case_delta`)."""
    paths = leaf_paths_of(per_case)
    if not paths or not pairs:
        return pl.DataFrame(schema=EVALUATOR_DELTAS_SCHEMA)
    configured = config.evaluators is not None
    value_cols = [LEAF_SCORE + p for p in paths]
    seen_cols = [] if configured else [_SEEN + p for p in paths]
    sides = pair_sides(
        per_case.lazy(), pair_table(pairs).lazy(), [S.CASE_ID], value_cols + seen_cols
    ).sort(S.CONFIG_ID, PAIR_INDEX, S.CASE_ID)

    def side_in(side: str, flag: str, p: str) -> pl.Expr:
        present = pl.col(flag).fill_null(False)
        return present if configured else present & pl.col(f"{side}_{_SEEN}{p}").fill_null(False)

    def side_score(side: str, flag: str, p: str) -> pl.Expr:
        value = pl.col(f"{side}_{LEAF_SCORE}{p}")
        # under on_missing zero a leaf the run never had reads 0: no row, no score
        return value if configured else pl.when(side_in(side, flag, p)).then(value)

    b_score, c_score = f"{BASELINE}_{S.SCORE}", f"{CANDIDATE}_{S.SCORE}"
    leaf_sides = {  # per leaf, in path order: the four per-side columns of its rows
        b_score: [side_score(BASELINE, IN_BASELINE, p) for p in paths],
        c_score: [side_score(CANDIDATE, IN_CANDIDATE, p) for p in paths],
        IN_BASELINE: [side_in(BASELINE, IN_BASELINE, p) for p in paths],
        IN_CANDIDATE: [side_in(CANDIDATE, IN_CANDIDATE, p) for p in paths],
    }
    case_cols = [S.CONFIG_ID, S.BASELINE_RUN_ID, S.CANDIDATE_RUN_ID, S.CASE_ID]
    wide = sides.select(
        *case_cols,
        *(e.alias(f"{name}{i}") for name, es in leaf_sides.items() for i, e in enumerate(es)),
    ).collect()
    # each side column is its leaves' columns stacked (leaf-major: leaf · n + case); the
    # rows are read case-major with leaves in path order, keeping the (case, path) keys
    # found in either run of the pair
    n, n_leaves = wide.height, len(paths)
    stacked = {
        name: pl.concat([wide[f"{name}{i}"] for i in range(n_leaves)]) for name in leaf_sides
    }
    wide = wide.select(case_cols)
    index = pl.UInt32 if n * n_leaves < 2**32 else pl.Int64
    j = pl.int_range(n * n_leaves, dtype=index, eager=True)
    at = (j % n_leaves) * n + j // n_leaves
    del j
    at = at.filter((stacked[IN_BASELINE] | stacked[IN_CANDIDATE]).gather(at))
    b, c = pl.col(b_score), pl.col(c_score)
    status = rules.case_status(
        pl,
        in_baseline=pl.col(IN_BASELINE),
        in_candidate=pl.col(IN_CANDIDATE),
        baseline_scored=b.is_not_null(),
        candidate_scored=c.is_not_null(),
        baseline_passed=pl.lit(None, dtype=pl.Boolean),
        candidate_passed=pl.lit(None, dtype=pl.Boolean),
        score_delta=c - b,
        case_delta=pl.lit(config.compare.case_delta, dtype=pl.Float64),
    )
    computed = pl.DataFrame(
        [stacked.pop(name).gather(at).alias(name) for name in list(leaf_sides)]
    ).select(b, c, (c - b).alias(S.SCORE_DELTA), status.alias(S.STATUS))
    case_row = at % n
    out = pl.DataFrame(
        [
            *(wide[col].gather(case_row) for col in case_cols),
            pl.Series(S.PATH, paths, dtype=pl.String).gather(at // n),
            *computed.get_columns(),
        ]
    )
    return out.select(EVALUATOR_DELTAS_SCHEMA.names()).cast(EVALUATOR_DELTAS_SCHEMA)
