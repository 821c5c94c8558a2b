"""Golden cases for composite evaluator trees (docs/scoring.md, seeds 003 and 004)."""

from __future__ import annotations

import polars as pl
import pytest

import evalframe as ef


def _ds(values: dict[str, float | None]) -> ef.Dataset:
    return ef.Dataset.from_frames(
        pl.DataFrame(
            {
                "run_id": "r",
                "case_id": "c",
                "evaluator": list(values),
                "score": list(values.values()),
            },
            schema_overrides={"score": pl.Float64},
        )
    )


def _nodes(ds: ef.Dataset, config: dict) -> dict[str, dict]:
    cfg = ef.config_from_dict(config)
    ev = ef.evaluator_scores(ds, cfg).collect()
    return {row["path"]: row for row in ev.iter_rows(named=True)}


def _score(ds: ef.Dataset, config: dict) -> dict:
    return ef.execution_scores(ds, ef.config_from_dict(config)).collect().row(0, named=True)


def test_weights_3_1_1_give_0_84_not_the_seeds_0_86():
    ds = _ds({"correctness": 0.9, "format": 0.8, "efficiency": 0.7})
    row = _score(ds, {"evaluators": {"correctness": {"weight": 3}, "format": {}, "efficiency": {}}})
    assert row["score"] == pytest.approx(0.84)


def test_nested_composite_weights():
    ds = _ds({"a": 0.9, "b": 0.7, "c": 0.8})
    config = {
        "evaluators": {
            "group": {
                "aggregator": "weighted_average",
                "children": {"a": {"weight": 0.3}, "b": {"weight": 0.5}, "c": {"weight": 0.2}},
            }
        }
    }
    nodes = _nodes(ds, config)
    assert nodes["group"]["score"] == pytest.approx(0.78)
    assert nodes[""]["score"] == pytest.approx(0.78)
    assert (nodes["group/a"]["depth"], nodes["group"]["depth"], nodes[""]["depth"]) == (2, 1, 0)


@pytest.mark.parametrize(
    ("values", "t", "score", "passed"),
    [
        ({"a": 0.9, "b": 0.85, "c": 0.1, "d": 0.2}, 0.5, 0.5, True),
        ({"a": 0.9, "b": 0.1, "c": 0.1, "d": 0.2}, 0.5, 0.25, False),
        ({"a": 0.1, "b": 0.2}, 0.0, 0.0, True),
    ],
)
def test_threshold_aggregator_is_the_pass_ratio(values, t, score, passed):
    ds = _ds(values)
    config = {
        "evaluators": {
            "gate": {
                "aggregator": "threshold",
                "threshold": t,
                "children": {key: {} for key in values},
            }
        }
    }
    gate = _nodes(ds, config)["gate"]
    assert gate["score"] == pytest.approx(score)
    assert gate["passed"] is passed
    assert gate["children_present"] == len(values)


def test_safety_gate_with_failing_required_child_scores_zero():
    ds = _ds({"safety": 0.5, "quality": 1.0, "style": 0.9})
    config = {
        "evaluators": {
            "release": {
                "aggregator": "safety_gate",
                "required_children": ["safety"],
                "children": {"safety": {}, "quality": {}, "style": {}},
            }
        }
    }
    assert _nodes(ds, config)["release"]["score"] == 0.0
    assert _score(ds, config)["required_failed"] is False  # the gate is inside `release`


def test_safety_gate_held_averages_the_remaining_children():
    ds = _ds({"safety": 0.95, "quality": 1.0, "style": 0.8})
    config = {
        "aggregator": "safety_gate",
        "required_children": ["safety"],
        "evaluators": {"safety": {}, "quality": {}, "style": {}},
    }
    row = _score(ds, config)
    assert row["score"] == pytest.approx(0.9)
    assert row["required_failed"] is False


def test_all_or_nothing_with_one_child_below_t_is_zero():
    ds = _ds({"a": 0.9, "b": 0.69})
    config = {
        "evaluators": {
            "g": {"aggregator": "all_or_nothing", "threshold": 0.7, "children": {"a": {}, "b": {}}}
        }
    }
    assert _nodes(ds, config)["g"]["score"] == 0.0
    ds_ok = _ds({"a": 0.9, "b": 0.7})
    assert _nodes(ds_ok, config)["g"]["score"] == pytest.approx(0.8)


def test_minimum_and_maximum_ignore_weights():
    ds = _ds({"a": 0.9, "b": 0.3})
    for agg, expected in (("minimum", 0.3), ("maximum", 0.9)):
        config = {"aggregator": agg, "evaluators": {"a": {"weight": 10}, "b": {}}}
        assert _score(ds, config)["score"] == pytest.approx(expected)


def test_required_child_deep_in_the_tree_zeroes_its_parent_only():
    ds = _ds({"a": 0.5, "b": 1.0, "c": 1.0})
    config = {
        "evaluators": {
            "g": {"children": {"a": {"required": True}, "b": {}}},
            "c": {},
        }
    }
    nodes = _nodes(ds, config)
    assert nodes["g"]["score"] == 0.0
    assert nodes[""]["score"] == pytest.approx(0.5)  # wavg(0, 1)


def test_min_score_sets_a_nodes_own_boundary():
    ds = _ds({"a": 0.85, "b": 1.0})
    config = {"evaluators": {"a": {"required": True, "min_score": 0.9}, "b": {}}}
    assert _score(ds, config)["score"] == 0.0
    config = {"evaluators": {"a": {"required": True, "min_score": 0.85}, "b": {}}}
    assert _score(ds, config)["score"] == pytest.approx(0.925)


def test_leaf_matches_full_path_or_unique_name():
    ds = _ds({"g/a": 0.2, "b": 0.8})
    config = {"evaluators": {"g": {"children": {"a": {}, "b": {}}}}}
    nodes = _nodes(ds, config)
    assert nodes["g/a"]["score"] == pytest.approx(0.2)
    assert nodes["g/b"]["score"] == pytest.approx(0.8)
