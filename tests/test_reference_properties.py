"""Property tests: the polars engine agrees with the slow reference (tests/reference.py)
on random datasets and configs, and does not depend on input row order."""

from __future__ import annotations

import contextlib
import math
import warnings
from fractions import Fraction
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import evalframe as ef
from tests import reference as ref
from tests.strategies import Scenario, frames, scenarios

pytestmark = pytest.mark.slow  # outside the fast lane (pyproject `slow`)

# Hypothesis imports its patch writer (libcst, which trips a mypy_extensions
# DeprecationWarning) only when reporting a failure, from a pytest hook, where
# `filterwarnings = error` turns the report into an INTERNALERROR. Import it now, quietly.
with warnings.catch_warnings(), contextlib.suppress(ImportError):
    warnings.simplefilter("ignore", DeprecationWarning)
    import hypothesis.extra._patching  # noqa: F401

SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

EXEC_KEY = ("run_id", "case_id", "attempt")
EVAL_KEY = ("run_id", "case_id", "attempt", "path")
CASE_KEY = ("run_id", "case_id")
RUN_KEY = ("run_id",)


def _engine(sc: Scenario, order: dict[str, list[int]] | None = None):
    ds = ef.Dataset.from_frames(**frames(sc, order))
    cfg = ef.config_from_dict(sc.config)
    return ds, cfg


def _ref_tables(sc: Scenario):
    cfg = ef.config_from_dict(sc.config)
    ex = ref.execution_scores(sc.scores, sc.executions, sc.outcomes, cfg)
    return cfg, ex


def _same(a: Any, b: Any) -> bool:
    """Engine value a vs reference value b: floats within 1e-9, everything else exact."""
    if a is None or b is None:
        return a is None and b is None
    if isinstance(b, bool) or isinstance(a, bool):
        return a is b or (a == b and type(a) is type(b))
    if isinstance(b, (Fraction, float)) or isinstance(a, float):
        return math.isfinite(a) and abs(float(a) - float(b)) <= 1e-9
    return a == b


def _compare(engine: pl.DataFrame, expected: list[dict], key: tuple[str, ...], what: str):
    columns = sorted({c for row in expected for c in row if not c.startswith("_")} - set(key))
    missing = [c for c in columns if c not in engine.columns]
    assert not missing, f"{what}: engine lacks columns {missing}"
    got = {tuple(r[k] for k in key): r for r in engine.iter_rows(named=True)}
    want = {tuple(r[k] for k in key): r for r in expected}
    assert len(got) == engine.height, f"{what}: duplicate keys in engine output"
    assert sorted(got) == sorted(want), f"{what}: keys differ: {sorted(got)} != {sorted(want)}"
    problems = []
    for k in sorted(want):
        for c in columns:
            if not _same(got[k][c], want[k][c]):
                problems.append(f"{k} {c}: engine {got[k][c]!r} != reference {want[k][c]!r}")
    assert not problems, f"{what}:\n" + "\n".join(problems[:20])


@SETTINGS
@given(scenarios())
def test_execution_scores_match_reference(sc: Scenario):
    ds, cfg = _engine(sc)
    _, expected = _ref_tables(sc)
    _compare(ef.execution_scores(ds, cfg).collect(), expected, EXEC_KEY, "execution_scores")


@SETTINGS
@given(scenarios())
def test_evaluator_scores_match_reference(sc: Scenario):
    ds, cfg = _engine(sc)
    expected = ref.evaluator_scores(sc.scores, sc.executions, sc.outcomes, cfg)
    _compare(ef.evaluator_scores(ds, cfg).collect(), expected, EVAL_KEY, "evaluator_scores")


@SETTINGS
@given(scenarios())
def test_case_and_run_summary_match_reference(sc: Scenario):
    ds, cfg = _engine(sc)
    _, ex = _ref_tables(sc)
    scored = ef.execution_scores(ds, cfg)
    _compare(ef.case_summary(scored, cfg).collect(), ref.case_summary(ex, cfg), CASE_KEY, "case")
    _compare(
        ef.run_summary(scored, cfg, runs=ds.runs).collect(),
        ref.run_summary(ex, cfg, sc.runs),
        RUN_KEY,
        "run_summary",
    )


def _sorted(df: pl.DataFrame, key: tuple[str, ...]) -> pl.DataFrame:
    return df.sort(list(key)).select(sorted(df.columns))


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(scenarios(), st.randoms(use_true_random=False))
def test_engine_ignores_row_order(sc: Scenario, rnd):
    order = {}
    for name, rows in sc.tables().items():
        if rows is not None:
            idx = list(range(len(rows)))
            rnd.shuffle(idx)
            order[name] = idx
    ds1, cfg = _engine(sc)
    ds2, _ = _engine(sc, order)
    pairs = [
        (ef.execution_scores(ds1, cfg), ef.execution_scores(ds2, cfg), EXEC_KEY),
        (ef.evaluator_scores(ds1, cfg), ef.evaluator_scores(ds2, cfg), EVAL_KEY),
        (
            ef.case_summary(ef.execution_scores(ds1, cfg), cfg),
            ef.case_summary(ef.execution_scores(ds2, cfg), cfg),
            CASE_KEY,
        ),
        (
            ef.run_summary(ef.execution_scores(ds1, cfg), cfg, runs=ds1.runs),
            ef.run_summary(ef.execution_scores(ds2, cfg), cfg, runs=ds2.runs),
            RUN_KEY,
        ),
    ]
    for a, b, key in pairs:
        left, right = _sorted(a.collect(), key), _sorted(b.collect(), key)
        assert left.columns == right.columns
        for col in left.columns:
            x, y = left[col].to_list(), right[col].to_list()
            if left[col].dtype.is_float():
                assert all(_same(p, q) for p, q in zip(x, y, strict=True)), col
            else:
                assert x == y, col


# --- regressions: engine / docs disagreements the property tests found (now fixed) ---------


def _engine_rows(scores: list[dict], config: dict, executions=None) -> list[dict]:
    ds = ef.Dataset.from_frames(
        scores=pl.DataFrame(scores),
        executions=None if executions is None else pl.DataFrame(executions),
    )
    out = ef.execution_scores(ds, ef.config_from_dict(config)).collect()
    return out.sort(list(EXEC_KEY)).to_dicts()


def test_unscored_execution_counts_missing_leaves():
    scores = [{"run_id": "r1", "case_id": "c1", "attempt": 0, "evaluator": "zz", "score": 1.0}]
    config = {"evaluators": {"a": {}, "b": {}}}
    (row,) = _engine_rows(scores, config)
    assert row["verdict"] == "unscored"
    assert row["n_ignored"] == 1
    assert row["n_missing"] == 2  # every expected leaf is missing


def test_required_failed_under_judge_error():
    scores = [{"run_id": "r1", "case_id": "c1", "attempt": 0, "evaluator": "b", "score": 1.0}]
    config = {"on_missing": "fail", "evaluators": {"a": {"required": True}, "b": {}}}
    (row,) = _engine_rows(scores, config)
    assert row["judge_error"] is True
    assert row["required_failed"] is True  # the missing required child fires the gate


def test_derived_executions_are_not_mixed_up():
    n_runs, n_cases = 50, 20
    scores = [
        {
            "run_id": f"r{r}",
            "case_id": f"c{c}",
            "attempt": 0,
            "evaluator": "a",
            "score": (r % 11) / 10,
        }
        for r in range(n_runs)
        for c in range(n_cases)
    ]
    for row in _engine_rows(scores, {}):
        assert row["score"] == pytest.approx(int(row["run_id"][1:]) % 11 / 10)


@settings(max_examples=40, deadline=None)
@given(
    st.integers(0, 5),
    st.lists(st.sampled_from((0.1, 0.125, 0.15, 0.3, 1.0, 2.0)), min_size=1, max_size=8),
)
def test_uniform_scores_meet_their_own_threshold(raw: int, weights: list[float]):
    """Every evaluator at raw k on 0-5 gives k/5 under any weights, which meets a threshold
    of k/5 (0.8 = 4/5 with 0.15 / 0.125 weights is the classic float trap)."""
    names = [f"m{i}" for i in range(len(weights))]
    config = {
        "threshold": raw / 5,
        "borderline": None,
        "evaluators": {n: {"weight": w} for n, w in zip(names, weights, strict=True)},
    }
    scores = [
        {
            "run_id": "r1",
            "case_id": "c1",
            "attempt": 0,
            "evaluator": n,
            "score": float(raw),
            "scale_max": 5.0,
        }
        for n in names
    ]
    (row,) = _engine_rows(scores, config)
    assert abs(row["score"] - raw / 5) <= 1e-9
    assert row["verdict"] == "pass"
