"""sweep over distinct execution states (one attempt per case, no attempts.k): the
configs are crossed with the states and their counts, not with the executions. The
result equals scoring each config alone, on random data with many equal executions,
weight sets, on_missing, outcomes, errored executions and per-execution thresholds."""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import evalframe as ef
from evalframe import grid_from_dict, sweep
from tests.test_sweep import _assert_same, _one_at_a_time

CASES = 14
EVALUATORS = ("a", "b", "c")


@st.composite
def datasets(draw) -> ef.Dataset:
    runs = draw(st.integers(1, 3))
    keys = [(f"r{r}", f"k{c}") for r in range(runs) for c in range(CASES)]
    # few score values: many executions share a state
    value = st.sampled_from([None, 0.0, 2.0, 4.0, 5.0])
    rows = [
        {"run_id": r, "case_id": c, "evaluator": e, "score": draw(value), "scale_max": 5.0}
        for r, c in keys
        for e in EVALUATORS
        if draw(st.integers(0, 9)) > 0  # some leaves absent
    ]
    scores = pl.DataFrame(
        rows,
        schema={
            "run_id": pl.String,
            "case_id": pl.String,
            "evaluator": pl.String,
            "score": pl.Float64,
            "scale_max": pl.Float64,
        },
    )
    executions = pl.DataFrame(
        {
            "run_id": [r for r, _ in keys],
            "case_id": [c for _, c in keys],
            "status": [draw(st.sampled_from(["ok", "ok", "ok", "error"])) for _ in keys],
            "threshold": [draw(st.sampled_from([None, None, 0.5])) for _ in keys],
            "latency_ms": [float(i % 7) for i in range(len(keys))],
        }
    )
    failed = draw(st.lists(st.sampled_from(keys), max_size=5, unique=True))
    outcomes = pl.DataFrame(
        {
            "run_id": [r for r, _ in failed],
            "case_id": [c for _, c in failed],
            "outcome": "check",
            "passed": [draw(st.booleans()) for _ in failed],
        },
        schema={
            "run_id": pl.String,
            "case_id": pl.String,
            "outcome": pl.String,
            "passed": pl.Boolean,
        },
    )
    return ef.Dataset.from_frames(scores, executions=executions, outcomes=outcomes)


@pytest.mark.slow
@settings(
    max_examples=20,  # each example sweeps several configs, each scored alone too
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    ds=datasets(),
    thresholds=st.lists(
        st.sampled_from([0.0, 0.4, 0.6, 0.8, 1.0]), min_size=1, max_size=3, unique=True
    ),
    on_missing=st.lists(
        st.sampled_from(["skip", "zero", "fail"]), min_size=1, max_size=2, unique=True
    ),
    chunk=st.sampled_from([1, 7, 25_000_000]),
)
def test_sweep_over_states_equals_each_config_alone(ds, thresholds, on_missing, chunk):
    grid = grid_from_dict(
        {
            "grid": {
                "threshold": thresholds,
                "on_missing": on_missing,
                "outcomes": ["gate", "both"],
                "attempts": {"passed": ["all", "majority"]},
                "run_gates": {"min_pass_rate": [0.5]},
            },
            "weights": {"even": {}, "a_heavy": {"a": 3.0, "c": 0.5}},
        },
        evaluators=list(EVALUATORS),
    )
    _assert_same(sweep(ds, grid, rows_per_chunk=chunk), _one_at_a_time(ds, grid.configs))
