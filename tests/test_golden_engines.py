"""One golden suite, every engine: execution_scores, case_summary, run_summary and the
comparison tables of a small literal dataset, computed by polars, DuckDB and Spark through
the public pipeline (`score_tables` / `compare_tables` with `engine=`), against literal
expected rows that tests/reference.py reproduces exactly.

The dataset is small enough to read: 2 runs × 3 cases × 3 evaluators on a 0–5 scale,
one errored execution, one failed outcome check, a required evaluator with min_score, a
weighted mean landing exactly on the threshold and one in the borderline band.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import polars as pl
import pytest

import evalframe as ef
from evalframe._private import schema as S
from tests import reference as ref
from tests import reference_decide as ref_decide

SCORES = [  # run, case, evaluator, raw score (0–5)
    ("r1", "c1", "correctness", 5), ("r1", "c1", "tone", 4), ("r1", "c1", "safety", 5),
    ("r1", "c2", "correctness", 2), ("r1", "c2", "tone", 5), ("r1", "c2", "safety", 5),
    ("r2", "c1", "correctness", 4), ("r2", "c1", "tone", 4), ("r2", "c1", "safety", 4),
    ("r2", "c2", "correctness", 5), ("r2", "c2", "tone", 5), ("r2", "c2", "safety", 5),
    ("r2", "c3", "correctness", 3), ("r2", "c3", "tone", 3), ("r2", "c3", "safety", 4),
]  # fmt: skip
EXECUTIONS = [  # run, case, status
    ("r1", "c1", "ok"), ("r1", "c2", "ok"), ("r1", "c3", "error"),
    ("r2", "c1", "ok"), ("r2", "c2", "ok"), ("r2", "c3", "ok"),
]  # fmt: skip
OUTCOMES = [("r2", "c2", "refund issued", False), ("r2", "c1", "greeting", True)]
CONFIG = {
    "threshold": 0.8,
    "borderline": 0.6,
    "evaluators": {
        "correctness": {"weight": 3, "required": True, "min_score": 0.5},
        "tone": {"weight": 1},
        "safety": {"weight": 1},
    },
}

EXPECTED_EXECUTIONS = [  # run, case, score, verdict, passed, required_failed
    ("r1", "c1", 0.96, "pass", True, False),  # (3·1 + 0.8 + 1) / 5
    ("r1", "c2", 0.0, "fail", False, True),  # correctness 0.4 < min_score 0.5: the gate
    ("r1", "c3", None, "error", False, False),
    ("r2", "c1", 0.8, "pass", True, False),  # lands on the threshold: meets
    ("r2", "c2", 1.0, "pass", False, False),  # its outcome check failed (gate mode)
    ("r2", "c3", 0.64, "borderline", False, False),  # (3·0.6 + 0.6 + 0.8) / 5
]
EXPECTED_RUNS = [  # run, executions, passed, failed, errored, pass_rate, mean_score
    ("r1", 3, 1, 1, 1, 1 / 3, 0.48),
    ("r2", 3, 1, 2, 0, 1 / 3, (0.8 + 1.0 + 0.64) / 3),
]
EXPECTED_CASE_DELTAS = [  # case, score_delta, status (baseline r1, candidate r2)
    ("c1", 0.8 - 0.96, "regression"),  # both passed; the score fell more than 0.05
    ("c2", 1.0, "improvement"),  # neither passed; the score rose
    ("c3", None, "error"),  # the baseline has no scored attempt
]

# run_deltas r1 → r2 (docs/compare.md#decisions)
EXPECTED_DECISION = ("inconclusive", ["mean_score"])


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("golden")
    pl.DataFrame(
        SCORES, schema=[S.RUN_ID, S.CASE_ID, S.EVALUATOR, S.SCORE], orient="row"
    ).with_columns(pl.col(S.SCORE).cast(pl.Float64), pl.lit(5.0).alias(S.SCALE_MAX)).write_parquet(
        root / "scores.parquet"
    )
    pl.DataFrame(EXECUTIONS, schema=[S.RUN_ID, S.CASE_ID, S.STATUS], orient="row").write_parquet(
        root / "executions.parquet"
    )
    pl.DataFrame(
        OUTCOMES, schema=[S.RUN_ID, S.CASE_ID, "outcome", "passed"], orient="row"
    ).write_parquet(root / "outcomes.parquet")
    pl.DataFrame(
        {S.RUN_ID: ["r1", "r2"], "created_at": ["2026-01-01T00:00:00", "2026-01-02T00:00:00"]}
    ).with_columns(pl.col("created_at").str.to_datetime()).write_parquet(root / "runs.parquet")
    return root


def _config() -> ef.Config:
    return ef.config_from_dict(CONFIG)


def _frame(table) -> pl.DataFrame:
    return table.collect() if isinstance(table, pl.LazyFrame) else table


def _rounded(values: list) -> list:
    return [None if v is None else round(v, 12) for v in values]


def test_execution_scores_golden(dataset, engine):
    tables = ef.score_tables(dataset, _config(), engine=engine)
    ex = _frame(tables[S.EXECUTION_SCORES]).sort(S.RUN_ID, S.CASE_ID)
    got = list(
        zip(
            ex[S.RUN_ID],
            ex[S.CASE_ID],
            _rounded(ex[S.SCORE].to_list()),
            [str(v) for v in ex[S.VERDICT]],
            ex[S.PASSED],
            ex[S.REQUIRED_FAILED],
            strict=True,
        )
    )
    want = [(r, c, None if s is None else round(s, 12), v, p, g) for r, c, s, v, p, g in
            EXPECTED_EXECUTIONS]  # fmt: skip
    assert got == want


def test_run_summary_golden(dataset, engine):
    tables = ef.score_tables(dataset, _config(), engine=engine)
    rs = _frame(tables[S.RUN_SUMMARY]).sort(S.RUN_ID)
    got = rs.select(
        S.RUN_ID, S.N_EXECUTIONS, S.PASSED, S.FAILED, S.ERRORED, S.PASS_RATE, S.MEAN_SCORE
    ).rows()
    assert [g[:5] for g in got] == [w[:5] for w in EXPECTED_RUNS]
    assert [round(g[5], 12) for g in got] == [round(w[5], 12) for w in EXPECTED_RUNS]
    assert [round(g[6], 12) for g in got] == [round(w[6], 12) for w in EXPECTED_RUNS]


@pytest.mark.slow
def test_compare_golden(dataset, engine):
    tables = ef.compare_tables(dataset, _config(), baseline="r1", candidate="r2", engine=engine)
    cd = _frame(tables[S.CASE_DELTAS]).sort(S.CASE_ID)
    got = list(zip(cd[S.CASE_ID], _rounded(cd[S.SCORE_DELTA].to_list()), cd[S.STATUS], strict=True))
    want = [(c, None if d is None else round(d, 12), s) for c, d, s in EXPECTED_CASE_DELTAS]
    assert got == want
    rd = _frame(tables[S.RUN_DELTAS]).row(0, named=True)
    assert (rd[S.REASONS] or []) == []  # the pass rate held (1/3 → 1/3); the mean rose
    assert not rd[S.REGRESSION_DETECTED]
    # docs/compare.md#decisions: the pass rate is settled (every paired pass delta is 0: the
    # interval is
    # [0, 0], within the 0.05 margin); two paired score deltas (−0.16, +1.0) leave the
    # mean score's interval across −0.05; no latency: that part passes
    assert (rd[S.DECISION], rd[S.DECISION_REASONS]) == EXPECTED_DECISION
    assert (rd[S.DECISION], rd[S.DECISION_REASONS]) == tuple(
        ref_decide.decide(rd, 0.05, 0.05, 0.2).values()
    )


def _reference_rows() -> tuple[list[dict], list[dict], list[dict]]:
    scores = [
        {
            "run_id": r, "case_id": c, "attempt": 0, "evaluator": e, "score": s,
            "scale_max": 5.0, "weight": None,
        }
        for r, c, e, s in SCORES
    ]  # fmt: skip
    executions = [
        {"run_id": r, "case_id": c, "attempt": 0, "status": st, "threshold": None}
        for r, c, st in EXECUTIONS
    ]
    outcomes = [
        {"run_id": r, "case_id": c, "attempt": 0, "outcome": o, "passed": p}
        for r, c, o, p in OUTCOMES
    ]
    return scores, executions, outcomes


def test_the_golden_rows_are_the_exact_reference():
    scores, executions, outcomes = _reference_rows()
    rows = ref.execution_scores(scores, executions, outcomes, _config())
    got = sorted(
        (
            r["run_id"],
            r["case_id"],
            None if r["score"] is None else Fraction(r["score"]),
            r["verdict"],
            r["passed"],
            r["required_failed"],
        )
        for r in rows
    )
    want = [
        (r, c, None if s is None else Fraction(s).limit_denominator(1000), v, p, g)
        for r, c, s, v, p, g in EXPECTED_EXECUTIONS
    ]
    assert got == want
