"""The pipeline's aggregate-first pass (`score_tables` on a dataset path) against the slow
reference, on random datasets written to Parquet: exact ties at thresholds, missing
evaluators, attempts, errored and unscored executions, shuffled rows."""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import evalframe as ef
from evalframe._private.scoring.flat import is_flat
from tests import reference as ref
from tests.strategies import Scenario, frames, scenarios
from tests.test_reference_properties import CASE_KEY, EXEC_KEY, RUN_KEY, _compare

SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
)


def _write(sc: Scenario, folder, order=None) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, frame in frames(sc, order).items():
        if frame is not None:
            frame.write_parquet(folder / f"{name}.parquet")


@pytest.mark.slow
@SETTINGS
@given(scenarios(), st.randoms(use_true_random=False))
def test_score_tables_from_files_match_reference(tmp_path_factory, sc: Scenario, rnd):
    order = {}
    for name, rows in sc.tables().items():
        if rows is not None:
            idx = list(range(len(rows)))
            rnd.shuffle(idx)
            order[name] = idx
    folder = tmp_path_factory.mktemp("ds")
    _write(sc, folder, order)
    cfg = ef.config_from_dict(sc.config)
    tables = ef.score_tables(folder, cfg)
    assert tables.path == ("flat" if is_flat(cfg) else "tree")
    ex = ref.execution_scores(sc.scores, sc.executions, sc.outcomes, cfg)
    _compare(tables["execution_scores"], ex, EXEC_KEY, "execution_scores")
    _compare(tables["case_summary"], ref.case_summary(ex, cfg), CASE_KEY, "case_summary")
    _compare(tables["run_summary"], ref.run_summary(ex, cfg, sc.runs), RUN_KEY, "run_summary")


@pytest.mark.slow
@SETTINGS
@given(scenarios())
def test_flat_pass_equals_tree_path_column_for_column(tmp_path_factory, sc: Scenario):
    folder = tmp_path_factory.mktemp("ds")
    _write(sc, folder)
    cfg = ef.config_from_dict(sc.config)
    fast = ef.score_tables(folder, cfg)
    slow = ef.score_tables(ef.load_dataset(folder), cfg)
    for name in ("execution_scores", "case_summary", "run_summary"):
        a, b = fast[name], slow[name]
        assert a.schema == b.schema, name
        key = [c for c in a.columns if c in (*EXEC_KEY, "config_id")]
        assert_frame_equal(
            a.sort(key), b.sort(key), check_exact=False, rel_tol=1e-12, abs_tol=1e-12
        )


def test_flat_pass_folds_validation_into_its_scan(tmp_path):
    folder = tmp_path / "bad"
    folder.mkdir()
    pl.DataFrame(
        {
            "run_id": ["r", "r", "r", None],
            "case_id": ["a", "a", "b", "c"],
            "evaluator": ["m", "m", "m", "m"],
            "score": [1.0, 2.0, 9.0, float("nan")],
            "scale_max": 5.0,
            "weight": [1.0, 1.0, -1.0, 1.0],
        }
    ).write_parquet(folder / "scores.parquet")
    with pytest.raises(ef.ValidationError) as err:
        ef.score_tables(folder, ef.Config())
    text = str(err.value)
    for expected in (
        "scores.run_id: key column is null (1 row)",
        "scores.score: score is NaN or infinite (1 row)",
        "scores.score: score is above scale_max (1 row)",
        "scores.weight: weight is negative or not finite (1 row)",
        "duplicate key (keys listed) (1 row); e.g. run_id=r case_id=a attempt=0 evaluator=m",
    ):
        assert expected in text, text


def test_configs_outside_the_flat_pass_take_the_tree_path(tmp_path):
    ef.write_demo(tmp_path / "d", n_cases=20)
    tree = ef.config_from_dict(
        {"evaluators": {"g": {"aggregator": "minimum", "children": {"tool_routing": {}}}}}
    )
    assert ef.score_tables(tmp_path / "d", tree).path == "tree"
    assert ef.score_tables(tmp_path / "d", ef.Config()).path == "flat"
