"""The rows of the report's case explorer (`case_details`): each regressed case of a pair
and failing case of a run with its per-evaluator scores, the judge's labels and reasons, the
outcome checks and the leaves behind a regression, as one polars query; embedded as JSON.
Capped so that a page of 500 runs × 200 cases stays a few MB."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

import polars as pl

from evalframe._private import schema as S
from evalframe._private.compare.compare import PAIR_KEY
from evalframe._private.compare.evaluator_summary import BEHIND_PATHS, behind_evaluators
from evalframe._private.report.plots import visible_text
from evalframe.format import INVISIBLE

CASE_DETAILS = "case_details"
"""The report's table of embedded case rows (a key of `report_tables`)."""
CASES_PER_PAIR = 200
"""Regressed cases embedded per pair (worst score delta first)."""
CASES_PER_RUN = 200
"""Failing cases embedded per run (lowest score first, unscored and errored last)."""
CASE_PAIRS = 5
"""Pairs whose regressed cases are embedded: the latest (in the comparison's order)."""
CASE_RUNS = 5
"""Runs whose failing cases are embedded: the latest (in the run table's order)."""
DIGITS = 4
MAX_TEXT = 500
"""Characters of one reason, label or justification embedded (longer ones end in …)."""

KIND = "kind"
KIND_REGRESSION = "regression"
KIND_FAIL = "fail"
FLIP = "flip"
EVALUATORS = "evaluators"
NOT_PASSED = "not_passed"
_KEY = [S.CONFIG_ID, S.BASELINE_RUN_ID, S.RUN_ID, S.CASE_ID]
_ODD_IN_TEXT = INVISIBLE.replace(r"\x00-\x1f", r"\x00-\x08\x0b-\x1f")
"""`INVISIBLE` without tab and newline, which a judge's reason may hold."""


def _clip_text(expr: pl.Expr) -> pl.Expr:
    """Free text for the page: at most MAX_TEXT characters, invisible characters other than
    tab and newline as U+FFFD (the page sets it as textContent inside <bdi>)."""
    short = expr.str.replace_all(_ODD_IN_TEXT, "\ufffd")
    return (
        pl.when(short.str.len_chars() > MAX_TEXT)
        .then(short.str.slice(0, MAX_TEXT - 1) + "…")
        .otherwise(short)
    )


def _worst(
    rows: pl.DataFrame, order: pl.DataFrame, key: list[str], by: str, limit: int, per: int
) -> pl.DataFrame:
    """The `per` rows with the lowest `by` of each of the last `limit` `key`s of `order`."""
    kept = order.select(key).unique(maintain_order=True).tail(limit).with_row_index("_order")
    return (
        rows.join(kept, on=key, how="inner")
        .sort("_order", by, S.CASE_ID, nulls_last=True)
        .group_by("_order", maintain_order=True)
        .head(per)
    )


def _regressed_rows(
    case_deltas: pl.DataFrame, run_deltas: pl.DataFrame, per_pair: int, pairs: int
) -> pl.DataFrame:
    b_passed = pl.col("baseline_passed").fill_null(False)
    c_passed = pl.col("candidate_passed").fill_null(False)
    regressed = case_deltas.filter(pl.col(S.STATUS) == "regression")
    return _worst(regressed, run_deltas, list(PAIR_KEY), S.SCORE_DELTA, pairs, per_pair).select(
        pl.lit(KIND_REGRESSION).alias(KIND),
        S.CONFIG_ID,
        S.BASELINE_RUN_ID,
        pl.col(S.CANDIDATE_RUN_ID).alias(S.RUN_ID),
        S.CASE_ID,
        "baseline_score",
        pl.col("candidate_score").alias(S.SCORE),
        S.SCORE_DELTA,
        "baseline_passed",
        pl.col("candidate_passed").alias(S.PASSED),
        pl.when(b_passed & ~c_passed)
        .then(pl.lit("pass→fail"))
        .otherwise(pl.lit("score-only"))
        .alias(FLIP),
    )


def _failing_rows(
    case_summary: pl.DataFrame, run_summary: pl.DataFrame, per_run: int, runs: int
) -> pl.DataFrame:
    failing = case_summary.filter(~pl.col(S.PASSED).fill_null(False))
    return _worst(failing, run_summary, [S.CONFIG_ID, S.RUN_ID], S.SCORE, runs, per_run).select(
        pl.lit(KIND_FAIL).alias(KIND),
        S.CONFIG_ID,
        pl.lit(None, pl.String).alias(S.BASELINE_RUN_ID),
        S.RUN_ID,
        S.CASE_ID,
        pl.lit(None, pl.Float64).alias("baseline_score"),
        pl.col(S.SCORE).cast(pl.Float64),
        pl.lit(None, pl.Float64).alias(S.SCORE_DELTA),
        pl.lit(None, pl.Boolean).alias("baseline_passed"),
        pl.col(S.PASSED),
        pl.when(pl.col(S.ERRORED).fill_null(0) > 0)
        .then(pl.lit("error"))
        .when(pl.col(S.SCORE).is_null())
        .then(pl.lit("unscored"))
        .otherwise(pl.lit("fail"))
        .alias(FLIP),
    )


def both_sides(rows: pl.DataFrame, *key: str) -> pl.DataFrame:
    """The (key, run_id, case_id) of `rows` and of their baseline runs, once each."""
    base = rows.filter(pl.col(S.BASELINE_RUN_ID).is_not_null())
    side = base.select(*key, pl.col(S.BASELINE_RUN_ID).alias(S.RUN_ID), S.CASE_ID)
    return pl.concat([rows.select(*key, S.RUN_ID, S.CASE_ID), side]).unique()


def node_details(nodes: pl.LazyFrame, rows: pl.DataFrame) -> pl.LazyFrame:
    """Per run × case × evaluator node (root left out) of `rows` (either side): the mean
    score over the attempts, passed in every attempt, the leaf flag, labels and reasons."""
    wanted = both_sides(rows, S.CONFIG_ID)
    key = [S.CONFIG_ID, S.RUN_ID, S.CASE_ID]
    return (
        nodes.filter(pl.col(S.PATH) != "")
        .join(wanted.lazy(), on=key, how="semi")
        .sort(*key, S.PATH, S.ATTEMPT)
        .group_by(*key, S.PATH, maintain_order=True)
        .agg(
            pl.col(S.SCORE).cast(pl.Float64).mean(),
            pl.col(S.PASSED).all(ignore_nulls=False).alias(S.PASSED),
            pl.col("is_leaf").first(),
            _clip_text(pl.col(S.LABEL)).drop_nulls().unique(maintain_order=True).alias("labels"),
            _clip_text(pl.col(S.REASON)).drop_nulls().unique(maintain_order=True).alias("reasons"),
        )
    )


def _evaluator_lists(rows: pl.DataFrame, details: pl.LazyFrame) -> pl.LazyFrame:
    """Each row's `evaluators` (per node both sides, the delta, passed; worst first) and
    `not_passed` leaves."""
    key = rows.lazy().select(_KEY)
    side = ["labels", "reasons"]
    run_side = key.join(details, on=[S.CONFIG_ID, S.RUN_ID, S.CASE_ID], how="inner")
    base_side = key.join(
        details.select(
            S.CONFIG_ID,
            pl.col(S.RUN_ID).alias(S.BASELINE_RUN_ID),
            S.CASE_ID,
            S.PATH,
            pl.col(S.SCORE).alias("baseline_score"),
            *(pl.col(c).alias(f"baseline_{c}") for c in side),
        ),
        on=[S.CONFIG_ID, S.BASELINE_RUN_ID, S.CASE_ID],
        how="inner",
    )
    both = run_side.join(
        base_side, on=[*_KEY, S.PATH], how="full", coalesce=True, nulls_equal=True
    ).with_columns((pl.col(S.SCORE) - pl.col("baseline_score")).alias(S.SCORE_DELTA))
    fields = [
        _clip_text(pl.col(S.PATH)).alias("evaluator"),
        *(pl.col(c).round(DIGITS) for c in ("baseline_score", S.SCORE, S.SCORE_DELTA)),
        S.PASSED,
        pl.col("is_leaf").fill_null(True).alias("leaf"),
        *side,
        *(f"baseline_{c}" for c in side),
    ]
    return (
        both.sort(*_KEY, S.SCORE_DELTA, S.SCORE, S.PATH, nulls_last=True)
        .group_by(_KEY, maintain_order=True)
        .agg(
            pl.struct(fields).alias(EVALUATORS),
            _clip_text(pl.col(S.PATH))
            .filter(pl.col("is_leaf").fill_null(True) & ~pl.col(S.PASSED).fill_null(True))
            .sort()
            .alias(NOT_PASSED),
        )
    )


def _outcome_lists(rows: pl.DataFrame, outcomes: pl.LazyFrame) -> pl.LazyFrame:
    """The outcome checks of each row's case in both runs, failed checks first."""
    key = rows.lazy().select(_KEY)
    checks = outcomes.select(
        S.RUN_ID,
        S.CASE_ID,
        S.ATTEMPT,
        _clip_text(pl.col(S.OUTCOME)).alias(S.OUTCOME),
        S.PASSED,
        _clip_text(pl.col(S.JUSTIFICATION)).alias(S.JUSTIFICATION),
    )
    sides = [
        key.join(checks, on=[S.RUN_ID, S.CASE_ID], how="inner").with_columns(
            pl.lit("candidate").alias("side")
        ),
        key.join(
            checks.rename({S.RUN_ID: S.BASELINE_RUN_ID}),
            on=[S.BASELINE_RUN_ID, S.CASE_ID],
            how="inner",
        ).with_columns(pl.lit("baseline").alias("side")),
    ]
    fields = ["side", S.ATTEMPT, S.OUTCOME, S.PASSED, S.JUSTIFICATION]
    return (
        pl.concat(sides, how="diagonal")
        .sort(
            *_KEY,
            S.PASSED,
            "side",
            S.ATTEMPT,
            S.OUTCOME,
            descending=[False, False, False, False, False, True, False, False],
            nulls_last=True,
        )
        .group_by(_KEY, maintain_order=True)
        .agg(pl.struct(fields).alias(S.OUTCOMES))
    )


def case_details(
    tables: Mapping[str, pl.DataFrame],
    *,
    nodes: pl.LazyFrame | Callable[[pl.DataFrame], pl.LazyFrame] | None = None,
    outcomes: pl.LazyFrame | None = None,
    per_pair: int = CASES_PER_PAIR,
    per_run: int = CASES_PER_RUN,
    pairs: int = CASE_PAIRS,
    runs: int = CASE_RUNS,
) -> pl.DataFrame:
    """One row per embedded case: the `per_pair` worst regressed cases of each of the latest
    `pairs` pairs and the `per_run` worst failing cases of each of the latest `runs` runs,
    with `flip`, the leaves behind a regression (`behind_paths`, `behind_delta`),
    `evaluators` and `outcomes`. `nodes` (evaluator_scores, or a function of the embedded
    rows returning it) and `outcomes` add scores, reasons and checks; without `nodes` a
    regressed case's evaluators come from evaluator_deltas and a failing case has none."""
    parts = []
    cd, rd = tables.get(S.CASE_DELTAS), tables.get(S.RUN_DELTAS)
    if cd is not None and rd is not None and per_pair > 0 and pairs > 0:
        parts.append(_regressed_rows(cd, rd, per_pair, pairs))
    cs, rs = tables.get(S.CASE_SUMMARY), tables.get(S.RUN_SUMMARY)
    if cs is not None and rs is not None and per_run > 0 and runs > 0:
        parts.append(_failing_rows(cs.lazy().collect(), rs, per_run, runs))
    if not parts:
        none = pl.DataFrame(schema=dict.fromkeys([S.CONFIG_ID, S.RUN_ID, S.CASE_ID], pl.String))
        none = none.with_columns(
            pl.lit(None, pl.Float64).alias(S.SCORE),
            pl.lit(None, pl.Boolean).alias(S.PASSED),
            pl.lit(None, pl.Int64).alias(S.ERRORED),
        )
        parts.append(_failing_rows(none, none, 1, 1))
    rows = pl.concat(parts, how="vertical_relaxed")
    out = rows.lazy().with_row_index("_row")  # the joins below need not keep the order
    ed = tables.get(S.EVALUATOR_DELTAS)
    if nodes is not None:
        found = nodes(rows) if callable(nodes) else nodes
        out = out.join(
            _evaluator_lists(rows, node_details(found, rows)), on=_KEY, how="left", nulls_equal=True
        )
    elif ed is not None:
        out = out.join(_from_deltas(rows, ed), on=_KEY, how="left", nulls_equal=True)
    if ed is not None:
        regressed = rows.filter(pl.col(KIND) == KIND_REGRESSION)
        behind = (
            behind_evaluators(ed, regressed.rename({S.RUN_ID: S.CANDIDATE_RUN_ID}))
            .rename({S.CANDIDATE_RUN_ID: S.RUN_ID})
            .with_columns(pl.col(BEHIND_PATHS).list.eval(_clip_text(pl.element())))
        )
        out = out.join(behind, on=_KEY, how="left", nulls_equal=True)
    if outcomes is not None:
        out = out.join(_outcome_lists(rows, outcomes), on=_KEY, how="left", nulls_equal=True)
    floats = ["baseline_score", S.SCORE, S.SCORE_DELTA, "behind_delta"]
    out = out.with_columns(pl.col(c).round(DIGITS) for c in floats if c in out.collect_schema())
    return visible_text(out.sort("_row").drop("_row").collect())


def _from_deltas(rows: pl.DataFrame, evaluator_deltas: pl.DataFrame) -> pl.LazyFrame:
    """`evaluators` of the regressed rows from evaluator_deltas (scores only)."""
    ed = evaluator_deltas.lazy().rename({S.CANDIDATE_RUN_ID: S.RUN_ID, "candidate_score": S.SCORE})
    return (
        ed.join(rows.lazy().select(_KEY), on=_KEY, how="semi", nulls_equal=True)
        .sort(*_KEY, S.SCORE_DELTA, S.PATH, nulls_last=True)
        .group_by(_KEY, maintain_order=True)
        .agg(
            pl.struct(
                _clip_text(pl.col(S.PATH)).alias("evaluator"),
                *(pl.col(c).round(DIGITS) for c in ("baseline_score", S.SCORE, S.SCORE_DELTA)),
            ).alias(EVALUATORS)
        )
    )


EMPTY_FIELD = re.compile(r',"[a-z_]+":(?:null|\[\])(?=[,}])')
"""A field, not the first, whose value is null or [] (in a string a quote is escaped)."""


def cases_json(details: pl.DataFrame) -> str:
    """The rows as JSON for the page, fields without a value left out and `<`, `>`, `&` as
    \\u escapes, so no text can close the script element."""
    if details.height == 0:
        return "[]"
    text = EMPTY_FIELD.sub("", details.write_json())
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
