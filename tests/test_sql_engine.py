"""The DuckDB engine (sql/ macros driven by evalframe._private.duckdb_engine) returns the
polars engine's tables — same columns, dtypes, row order, booleans and strings exactly,
floats within 1e-9 — for random flat datasets and configs, whatever the input row order.
Also: composite configs are refused, and ids and config strings never become SQL text.
"""

from __future__ import annotations

import itertools
import math

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import evalframe as ef
from evalframe._private import schema as S
from evalframe._private.compare import compare
from evalframe._private.duckdb_engine import compare_duckdb, score_duckdb
from tests.sql_strategies import flat_scenarios, shuffles
from tests.strategies import frames

SETTINGS = settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
    ],
)


def assert_same(got: pl.DataFrame, want: pl.DataFrame, what: str) -> None:
    """Same columns in the same order, same dtypes, same rows in the same order; floats
    within 1e-9, everything else exactly."""
    assert got.columns == want.columns, f"{what}: columns {got.columns} != {want.columns}"
    assert got.schema == want.schema, f"{what}: dtypes {got.schema} != {want.schema}"
    assert got.height == want.height, f"{what}: {got.height} rows != {want.height}"
    for column in want.columns:
        for i, (a, b) in enumerate(zip(got[column].to_list(), want[column].to_list(), strict=True)):
            if isinstance(b, float) and isinstance(a, float):
                ok = (math.isnan(a) and math.isnan(b)) or abs(a - b) <= 1e-9
            else:
                ok = a == b and (a is None) == (b is None)
            assert ok, f"{what}.{column} row {i}: duckdb {a!r} != polars {b!r}\n{want[i]}"


def polars_tables(ds: ef.Dataset, cfg: ef.Config) -> dict[str, pl.DataFrame]:
    ex = ef.score(ds, cfg).sort(S.RUN_ID, S.CASE_ID, S.ATTEMPT).collect()
    return {
        S.EXECUTION_SCORES: ex,
        S.CASE_SUMMARY: ef.case_summary(ex.lazy(), cfg).collect(),
        S.RUN_SUMMARY: ef.run_summary(ex.lazy(), cfg, runs=ds.runs).collect(),
    }


@SETTINGS
@given(data=st.data())
def test_duckdb_scoring_equals_polars_on_random_flat_inputs(data):
    sc = data.draw(flat_scenarios())
    cfg = ef.config_from_dict(sc.config)
    want = polars_tables(ef.Dataset.from_frames(**frames(sc)), cfg)
    shuffled = ef.Dataset.from_frames(**frames(sc, data.draw(shuffles(sc))))
    got = score_duckdb(shuffled, cfg)
    assert list(got) == [S.EXECUTION_SCORES, S.CASE_SUMMARY, S.RUN_SUMMARY]
    for name, frame in want.items():
        assert_same(got[name], frame, name)


@SETTINGS
@given(data=st.data())
def test_duckdb_compare_equals_polars_on_random_flat_inputs(data):
    sc = data.draw(flat_scenarios())
    cfg = ef.config_from_dict(sc.config)
    want = polars_tables(ef.Dataset.from_frames(**frames(sc)), cfg)
    runs = want[S.RUN_SUMMARY][S.RUN_ID].to_list()
    every = list(itertools.product(runs, runs))
    pairs = data.draw(st.lists(st.sampled_from(every), max_size=4)) if every else []
    expected = compare(
        want[S.CASE_SUMMARY].lazy(), pairs, cfg, run_summary=want[S.RUN_SUMMARY].lazy()
    )
    got = compare_duckdb(
        want[S.CASE_SUMMARY].sample(fraction=1.0, shuffle=True, seed=1),
        pairs,
        cfg,
        run_summary=want[S.RUN_SUMMARY].sample(fraction=1.0, shuffle=True, seed=2),
    )
    for name, frame in expected.items():
        assert_same(got[name], frame.collect(), name)


def test_compare_duckdb_applies_each_configs_limits():
    scores = pl.DataFrame(
        {
            "run_id": ["a", "a", "b", "b"],
            "case_id": ["c1", "c2", "c1", "c2"],
            "evaluator": ["q"] * 4,
            "score": [0.9, 0.9, 0.85, 0.6],
        }
    )
    ds = ef.Dataset.from_frames(scores)
    strict = ef.config_from_dict({"compare": {"max_mean_score_drop": 0.0}})
    loose = ef.config_from_dict({"compare": {"max_mean_score_drop": 0.5, "case_delta": 0.2}})
    tables = [ef.score(ds, c).collect() for c in (strict, loose)]
    ex = pl.concat(tables)
    cases = ef.case_summary(ex.lazy(), [strict, loose]).collect()
    runs = ef.run_summary(ex.lazy(), [strict, loose]).collect()
    want = compare(cases.lazy(), [("a", "b")], [strict, loose], run_summary=runs.lazy())
    got = compare_duckdb(cases, [("a", "b")], [strict, loose], run_summary=runs)
    for name, frame in want.items():
        assert_same(got[name], frame.collect(), name)
    rows = got[S.RUN_DELTAS].select(S.CONFIG_ID, "reasons").rows()
    reasons = dict(rows)
    assert reasons[strict.config_id] == ["pass_rate_drop", "mean_score_drop"]
    assert reasons[loose.config_id] == ["pass_rate_drop"]


def test_composite_configs_are_refused_with_a_clear_message():
    ds = ef.Dataset.from_frames(
        pl.DataFrame({"run_id": ["r"], "case_id": ["c"], "evaluator": ["a"], "score": [1.0]})
    )
    cfg = ef.config_from_dict(
        {"evaluators": {"group": {"aggregator": "minimum", "children": {"a": {}}}}}
    )
    with pytest.raises(ef.UsageError, match=r"flat configs only.*group.*composite"):
        score_duckdb(ds, cfg)


def test_unknown_run_ids_raise_like_polars():
    scores = pl.DataFrame({"run_id": ["r"], "case_id": ["c"], "evaluator": ["a"], "score": [1.0]})
    tables = score_duckdb(ef.Dataset.from_frames(scores), ef.Config())
    with pytest.raises(ef.UsageError, match="unknown run id"):
        compare_duckdb(
            tables[S.CASE_SUMMARY], [("r", "nope")], ef.Config(), run_summary=tables[S.RUN_SUMMARY]
        )


HOSTILE = "x'); drop table scores; --"
HOSTILE_EVALUATOR = "q'uality\"; drop table outcomes; --"


def test_hostile_ids_and_config_strings_are_data_not_sql():
    """Run ids, case ids and evaluator names with quotes and statements reach SQL only
    as bound parameters or registered relations: they are scored like any other id."""
    scores = pl.DataFrame(
        {
            "run_id": [HOSTILE, HOSTILE, "base", "base"],
            "case_id": ["c'1", "c2", "c'1", "c2"],
            "evaluator": [HOSTILE_EVALUATOR, "plain"] * 2,
            "score": [0.9, 0.4, 0.95, 0.9],
        }
    )
    outcomes = pl.DataFrame(
        {
            "run_id": ["base"],
            "case_id": ["c2"],
            "attempt": [0],
            "outcome": ["o'); drop table runs; --"],
            "passed": [True],
        }
    )
    runs = pl.DataFrame({"run_id": [HOSTILE, "base"], "label": ["'; select 1; --", "ok"]})
    ds = ef.Dataset.from_frames(scores, outcomes=outcomes, runs=runs)
    cfg = ef.config_from_dict(
        {
            "aggregator": "safety_gate",
            "required_children": [HOSTILE_EVALUATOR],
            "evaluators": {HOSTILE_EVALUATOR: {"weight": 2, "required": True}, "plain": {}},
        }
    )
    got = score_duckdb(ds, cfg)
    want = polars_tables(ds, cfg)
    for name, frame in want.items():
        assert_same(got[name], frame, name)
    assert HOSTILE in got[S.RUN_SUMMARY][S.RUN_ID].to_list()
    pairs = [("base", HOSTILE), (HOSTILE, "base")]
    deltas = compare_duckdb(got[S.CASE_SUMMARY], pairs, cfg, run_summary=got[S.RUN_SUMMARY])
    expected = compare(
        want[S.CASE_SUMMARY].lazy(), pairs, cfg, run_summary=want[S.RUN_SUMMARY].lazy()
    )
    for name, frame in expected.items():
        assert_same(deltas[name], frame.collect(), name)
    assert deltas[S.RUN_DELTAS]["candidate_run_id"][0] == HOSTILE
    # the tables are still there and whole after all of that
    again = score_duckdb(ds, cfg)
    assert again[S.EXECUTION_SCORES].height == 4
