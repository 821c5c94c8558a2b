"""sweep_tables: configs with different evaluator trees in one sweep (one pass per tree
shape), each equal to scoring that config alone; the size limit of grids."""

from __future__ import annotations

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import evalframe as ef
from evalframe._private import schema as S

METRICS = ("tool_routing", "parameter_extraction", "result_interpretation")


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    path = tmp_path_factory.mktemp("demo") / "d"
    ef.write_demo(path, n_cases=30)
    return path


@pytest.mark.slow
def test_configs_with_different_trees_sweep_together(demo):
    two = ef.config_from_dict({"evaluators": {m: {} for m in METRICS[:2]}})
    three = ef.config_from_dict({"evaluators": {m: {"weight": 2.0} for m in METRICS}})
    tree = ef.config_from_dict(
        {"evaluators": {"g": {"aggregator": "minimum", "children": {m: {} for m in METRICS}}}}
    )
    configs = [two, three, tree, ef.Config(threshold=0.6)]
    calls: list[tuple[int, int]] = []
    tables = ef.sweep_tables(demo, configs, on_chunk=lambda done, n: calls.append((done, n)))
    # progress counts configs across the tree groups: never backwards, ends at all of them
    done = [d for d, _ in calls]
    assert {n for _, n in calls} == {4} and done == sorted(done) and done[-1] == 4
    swept = tables["sweep"]
    assert set(swept["config_id"]) == {c.config_id for c in configs}
    assert tables["sweep_configs"].height == 4
    for cfg in configs:
        # the corrected pass rate of the demo's labels is not swept (yet): score's columns
        alone = ef.score_tables(demo, cfg)["run_summary"].drop(S.PPI_COLUMNS)
        got = swept.filter(pl.col("config_id") == cfg.config_id).select(alone.columns)
        assert_frame_equal(
            got.sort("run_id"), alone.sort("run_id"), check_exact=False, rel_tol=1e-9
        )


def test_a_grid_over_the_limit_asks_for_max_configs():
    spec = {"grid": {"threshold": [i / 100 for i in range(100)], "borderline": [None, 0.1]}}
    with pytest.raises(ef.ConfigError, match=r"expands to 200 configs.*--max-configs 200"):
        ef.grid_from_dict(spec, max_configs=150)
    assert len(ef.grid_from_dict(spec, max_configs=200).configs) == 200


def test_a_grid_of_millions_is_refused_without_expanding_it():
    axis = [i / 1000 for i in range(1000)]
    spec = {"grid": {"threshold": axis, "borderline": [None, *axis[:999]]}}
    with pytest.raises(ef.ConfigError, match=r"1,000,000 configs"):
        ef.grid_from_dict(spec)
