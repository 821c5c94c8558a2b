"""Property tests: the polars comparison engine equals the exact reference of docs/compare.md on
random case summaries, run summaries, evaluator scores and pairs, with rows shuffled.

Scores come from a grid of twentieths and limits from a grid of 0.05 steps, so no exact
delta lies within float noise of a boundary L + 1e-9: engine and reference must agree on
every status and reason, and on every number up to float rounding.
"""

from __future__ import annotations

import math

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalframe._private.compare.compare import compare
from evalframe._private.config import Compare, Config, Decide
from tests.reference_compare import reference_compare

pytestmark = pytest.mark.slow  # outside the fast lane (pyproject `slow`)

RUN_IDS = ["r1", "r2", "r3"]
CASE_IDS = ["c1", "c2", "c3", "c4"]
PATHS = ["", "acc", "tone", "g/x"]
GRID = st.integers(0, 20).map(lambda k: k / 20)
LIMIT = st.sampled_from([0.0, 0.05, 0.1, 0.2])
LATENCY = st.sampled_from([None, 0.0, 800.0, 1000.0, 1200.0, 1500.0])

CASE_SCHEMA = {
    "config_id": pl.String,
    "run_id": pl.String,
    "case_id": pl.String,
    "attempts": pl.Int64,
    "errored": pl.Int64,
    "scored": pl.Int64,
    "unscored": pl.Int64,
    "score": pl.Float64,
    "n_passed": pl.Int64,
    "pass_rate": pl.Float64,
    "passed": pl.Boolean,
    "flaky": pl.Boolean,
    "latency_mean": pl.Float64,
    "cost_usd": pl.Float64,
}
RUN_SCHEMA = {
    "config_id": pl.String,
    "run_id": pl.String,
    "pass_rate": pl.Float64,
    "mean_score": pl.Float64,
    "latency_mean": pl.Float64,
    "latency_p95": pl.Float64,
    "cost_usd": pl.Float64,
}
EVAL_SCHEMA = {
    "config_id": pl.String,
    "run_id": pl.String,
    "case_id": pl.String,
    "attempt": pl.Int64,
    "path": pl.String,
    "score": pl.Float64,
    "missing": pl.Boolean,
    "depth": pl.Int64,
}


@st.composite
def case_row(draw, cid: str, run: str, case: str) -> dict:
    attempts = draw(st.integers(1, 3))
    scored = draw(st.one_of(st.just(attempts), st.integers(0, attempts)))  # mostly scored
    n_passed = draw(st.integers(0, attempts))
    return {
        "config_id": cid,
        "run_id": run,
        "case_id": case,
        "attempts": attempts,
        "errored": attempts - scored,
        "scored": scored,
        "unscored": 0,
        "score": draw(GRID) if scored else None,
        "n_passed": n_passed,
        "pass_rate": n_passed / attempts,
        "passed": draw(st.booleans()),
        "flaky": 0 < n_passed < attempts,
        "latency_mean": draw(LATENCY),
        "cost_usd": draw(st.sampled_from([None, 0.0, 0.5])),
    }


@st.composite
def inputs(draw):
    limits = [
        Compare(
            max_pass_rate_drop=draw(LIMIT),
            max_mean_score_drop=draw(LIMIT),
            max_latency_increase=draw(LIMIT),
            case_delta=draw(LIMIT),
        )
        for _ in range(draw(st.integers(1, 2)))
    ]
    margins = [Decide(pass_rate_margin=draw(LIMIT), mean_score_margin=draw(LIMIT)) for _ in limits]
    made = [Config(compare=lim, decide=m) for lim, m in zip(limits, margins, strict=True)]
    configs = {c.config_id: c for c in made}
    cids = list(configs)
    cases, runs, evals = [], [], []
    for cid in cids:
        for run in RUN_IDS:
            runs.append(
                {
                    "config_id": cid,
                    "run_id": run,
                    "pass_rate": draw(st.sampled_from([None, 0.0, 0.5, 0.9, 1.0])),
                    "mean_score": draw(st.one_of(st.none(), GRID)),
                    "latency_mean": draw(LATENCY),
                    "latency_p95": draw(LATENCY),
                    "cost_usd": draw(st.sampled_from([None, 1.0, 1.5])),
                }
            )
            for case in draw(
                st.lists(st.sampled_from(CASE_IDS), min_size=1, max_size=4, unique=True)
            ):
                row = draw(case_row(cid, run, case))
                cases.append(row)
                for attempt in range(row["attempts"]):
                    for path in draw(st.lists(st.sampled_from(PATHS), max_size=4, unique=True)):
                        score = draw(st.one_of(st.none(), GRID))
                        evals.append(
                            {
                                "config_id": cid,
                                "run_id": run,
                                "case_id": case,
                                "attempt": attempt,
                                "path": path,
                                "score": score,
                                "missing": score is None,
                                "depth": 0 if path == "" else 1 + path.count("/"),
                            }
                        )
    pairs = draw(
        st.lists(st.tuples(st.sampled_from(RUN_IDS), st.sampled_from(RUN_IDS)), max_size=4)
    )
    config = list(configs.values())
    if len(config) == 1 and draw(st.booleans()):
        config = config[0]  # one Config: its limits apply to every config_id
    shuffled = [draw(st.permutations(rows)) for rows in (cases, runs, evals)]
    return (*shuffled, pairs, config)


def same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    return a == b


def assert_tables_equal(name: str, got: pl.DataFrame, want: list[dict]) -> None:
    rows = got.to_dicts()
    assert len(rows) == len(want), (name, len(rows), len(want))
    for i, (g, w) in enumerate(zip(rows, want, strict=True)):
        assert set(g) == set(w), (name, set(g) ^ set(w))
        bad = {k: (g[k], w[k]) for k in w if not same(g[k], w[k])}
        assert not bad, (name, i, bad, w)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(inputs())
def test_engine_equals_reference(data):
    cases, runs, evals, pairs, config = data
    out = compare(
        pl.LazyFrame(cases, schema=CASE_SCHEMA),
        pairs,
        config,
        run_summary=pl.LazyFrame(runs, schema=RUN_SCHEMA),
        evaluator_scores=pl.LazyFrame(evals, schema=EVAL_SCHEMA),
    )
    got = dict(zip(out, pl.collect_all(list(out.values())), strict=True))
    configs = [config] if isinstance(config, Config) else config
    limits = {c.config_id: {**c.compare.model_dump(), **c.decide.model_dump()} for c in configs}
    want = reference_compare(cases, pairs, limits, runs, evals)
    for name in ("case_deltas", "evaluator_deltas", "run_deltas"):
        assert_tables_equal(name, got[name], want[name])
