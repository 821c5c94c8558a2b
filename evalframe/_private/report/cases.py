"""The report's case explorer: every regressed case of each compared pair and every failing
case of a run, one row each, with what an analyst needs to see why — per-evaluator scores
(both sides and the delta), the judge's labels and reasons (`scores.label`, `reason`), the
outcome checks with their justifications (`outcomes.justification`), and the leaves behind
a regression (every tied one).

`case_details` computes the rows as one polars query over every pair and run (nested
lists of structs per case); the page embeds them as JSON and a small inline script draws,
searches, sorts and expands them (html.py). What is embedded is capped so that a page of
500 runs × 200 cases stays a few MB: the `per_pair` worst regressed cases of the latest
`pairs` pairs and the `per_run` worst failing cases of the latest `runs` runs; the page
says what was left out and how to list it (`evalframe cases`, SQL).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

import polars as pl

from evalframe._private import schema as S
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
"""Pairs whose regressed cases are embedded: the latest ones (in the comparison's order)."""
CASE_RUNS = 5
"""Runs whose failing cases are embedded: the latest ones (in the run table's order)."""
DIGITS = 4
"""Decimals of the scores embedded (the page shows 3)."""
MAX_TEXT = 500
"""Characters of one reason, label or justification embedded (longer ones end in …)."""

KIND = "kind"
KIND_REGRESSION = "regression"
KIND_FAIL = "fail"
FLIP = "flip"
"""How a regressed case regressed: "pass→fail" (its verdict flipped) or "score-only"."""
EVALUATORS = "evaluators"
NOT_PASSED = "not_passed"
"""Leaves that did not pass in every attempt of the case (in `run_id`)."""

_SIDES = ("baseline", "candidate")
_KEY = [S.CONFIG_ID, S.BASELINE_RUN_ID, S.RUN_ID, S.CASE_ID]


_ODD_IN_TEXT = INVISIBLE.replace(r"\x00-\x1f", r"\x00-\x08\x0b-\x1f")
"""`display.INVISIBLE` without tab and newline, which a judge's reason may hold."""


def _clip_text(expr: pl.Expr) -> pl.Expr:
    """Free text for the page (a reason, label, justification, outcome, evaluator path):
    at most MAX_TEXT characters, control, separator and bidi characters other than tab and
    newline replaced by U+FFFD. The page draws text with textContent inside <bdi>, so
    nothing else needs escaping; the top-level ids go through `display.visible`."""
    short = expr.str.replace_all(_ODD_IN_TEXT, "\ufffd")
    return (
        pl.when(short.str.len_chars() > MAX_TEXT)
        .then(short.str.slice(0, MAX_TEXT - 1) + "…")
        .otherwise(short)
    )


def _worst(
    rows: pl.DataFrame, order: pl.DataFrame, key: list[str], by: str, limit: int, per: int
) -> pl.DataFrame:
    """The `per` rows with the lowest `by` of each of the last `limit` distinct `key` values
    of `order` (a pair's or a run's), in that order."""
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
    pair = [S.CONFIG_ID, S.BASELINE_RUN_ID, S.CANDIDATE_RUN_ID]
    b_passed = pl.col("baseline_passed").fill_null(False)
    c_passed = pl.col("candidate_passed").fill_null(False)
    regressed = case_deltas.filter(pl.col(S.STATUS) == "regression")
    return _worst(regressed, run_deltas, pair, S.SCORE_DELTA, pairs, per_pair).select(
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


def node_details(nodes: pl.LazyFrame, rows: pl.DataFrame) -> pl.LazyFrame:
    """Per run × case × evaluator node (root left out) of the runs and cases in `rows`
    (either side): the mean score over the case's attempts, passed in every attempt, the
    leaf flag, and the distinct labels and reasons (clipped to MAX_TEXT)."""
    wanted = pl.concat(
        [
            rows.select(S.CONFIG_ID, S.RUN_ID, S.CASE_ID),
            rows.filter(pl.col(S.BASELINE_RUN_ID).is_not_null()).select(
                S.CONFIG_ID, pl.col(S.BASELINE_RUN_ID).alias(S.RUN_ID), S.CASE_ID
            ),
        ]
    ).unique()
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
    """The `evaluators` list of each row: per node, both sides' score, labels and reasons,
    the delta and whether it passed (in `run_id`), worst delta (else lowest score) first."""
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
    """The outcome checks of each row's case in both runs (side "baseline" / "candidate",
    attempt, outcome, passed, justification), failed checks first."""
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
            pl.lit(_SIDES[1]).alias("side")
        ),
        key.join(
            checks.rename({S.RUN_ID: S.BASELINE_RUN_ID}),
            on=[S.BASELINE_RUN_ID, S.CASE_ID],
            how="inner",
        ).with_columns(pl.lit(_SIDES[0]).alias("side")),
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
    """One row per embedded case: the `per_pair` worst regressed cases of each of the
    latest `pairs` pairs (kind "regression", from case_deltas / run_deltas) and the
    `per_run` worst failing cases of each of the latest `runs` runs (kind "fail", from
    case_summary / run_summary), with `flip`, the leaves behind a regression
    (`behind_paths`, every tied one; `behind_delta`), `evaluators` and `outcomes`.

    `nodes` (evaluator_scores with label and reason; `is_leaf`, or a function of the
    embedded rows returning it for their runs and cases) and `outcomes` (the input
    table) add the per-evaluator scores, reasons and checks; without `nodes` a regressed
    case's evaluators come from evaluator_deltas (scores only) and a failing case has
    none."""
    parts = []
    cd, rd = tables.get(S.CASE_DELTAS), tables.get(S.RUN_DELTAS)
    if cd is not None and rd is not None and per_pair > 0 and pairs > 0:
        parts.append(_regressed_rows(cd, rd, per_pair, pairs))
    cs, rs = tables.get(S.CASE_SUMMARY), tables.get(S.RUN_SUMMARY)
    if cs is not None and rs is not None and per_run > 0 and runs > 0:
        parts.append(_failing_rows(cs.lazy().collect(), rs, per_run, runs))
    rows = pl.concat(parts, how="vertical_relaxed") if parts else _empty_rows()
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
    """`evaluators` of the regressed rows from evaluator_deltas alone (no reasons)."""
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


def _empty_rows() -> pl.DataFrame:
    return pl.DataFrame(
        schema={
            KIND: pl.String,
            S.CONFIG_ID: pl.String,
            S.BASELINE_RUN_ID: pl.String,
            S.RUN_ID: pl.String,
            S.CASE_ID: pl.String,
            "baseline_score": pl.Float64,
            S.SCORE: pl.Float64,
            S.SCORE_DELTA: pl.Float64,
            "baseline_passed": pl.Boolean,
            S.PASSED: pl.Boolean,
            FLIP: pl.String,
        }
    )


EMPTY_FIELD = re.compile(r',"[a-z_]+":(?:null|\[\])(?=[,}])')
"""A field of a JSON object, not its first, whose value is null or []: within a string a
quote is always escaped, so `,"` opens a key."""


def cases_json(details: pl.DataFrame) -> str:
    """The rows as a JSON array for the page (`<script type="application/json">`): fields
    without a value left out (the script reads a missing field as null), `<`, `>` and `&`
    written as \\u escapes, so no text can close the script element."""
    if details.height == 0:
        return "[]"
    text = EMPTY_FIELD.sub("", details.write_json())
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
