"""Golden cases for the slow reference (tests/reference.py), so that it can be trusted."""

from __future__ import annotations

from fractions import Fraction

import pytest

from evalframe._private.config import CONNEXITY_WEIGHTS, config_from_dict, load_config
from tests import reference as ref


def _rows(scores: dict[str, float], scale_max: float = 1.0, **key) -> list[dict]:
    base = {"run_id": "r1", "case_id": "c1", "attempt": 0, **key}
    return [
        {**base, "evaluator": name, "score": s, "scale_max": scale_max}
        for name, s in scores.items()
    ]


def _one(scores, cfg, executions=None, outcomes=None) -> dict:
    rows = ref.execution_scores(scores, executions, outcomes, cfg)
    assert len(rows) == 1
    return rows[0]


def _nodes(scores, cfg) -> dict[str, dict]:
    return {r["path"]: r for r in ref.evaluator_scores(scores, None, None, cfg)}


def approx(x) -> float:
    return pytest.approx(float(x), abs=1e-12)


# --- execution scores ------------------------------------------------------------------


def test_all_threes_on_zero_to_five_is_point_six():
    cfg = config_from_dict({})
    row = _one(_rows({"a": 3, "b": 3, "c": 3}, scale_max=5), cfg)
    assert row["score"] == Fraction(3, 5)
    assert row["verdict"] == "borderline"  # 0.6 meets borderline 0.6, not threshold 0.8
    assert row["passed"] is False


def test_weights_two_to_one_both_point_eight_pass():
    cfg = config_from_dict({"evaluators": {"a": {"weight": 2}, "b": {"weight": 1}}})
    row = _one(_rows({"a": 0.8, "b": 0.8}), cfg)
    assert row["score"] == approx(0.8)
    assert row["verdict"] == "pass"
    assert row["passed"] is True


def test_required_below_threshold_zeroes_execution():
    cfg = config_from_dict({"evaluators": {"safety": {"required": True}, "quality": {}}})
    row = _one(_rows({"safety": 0.7, "quality": 1.0}), cfg)
    assert row["score"] == 0
    assert row["required_failed"] is True
    assert row["verdict"] == "fail"
    assert row["passed"] is False


def test_required_min_score_is_its_boundary():
    cfg = config_from_dict(
        {"evaluators": {"safety": {"required": True, "min_score": 0.6}, "quality": {}}}
    )
    row = _one(_rows({"safety": 0.7, "quality": 0.9}), cfg)
    assert row["score"] == approx(0.8)
    assert row["required_failed"] is False
    assert row["verdict"] == "pass"


def test_outcomes_gate_with_a_failed_outcome_does_not_pass():
    cfg = config_from_dict({})
    scores = _rows({"a": 1.0})
    outcomes = [
        {"run_id": "r1", "case_id": "c1", "attempt": 0, "outcome": "o1", "passed": True},
        {"run_id": "r1", "case_id": "c1", "attempt": 0, "outcome": "o2", "passed": False},
    ]
    row = _one(scores, cfg, outcomes=outcomes)
    assert row["verdict"] == "pass"
    assert row["passed"] is False
    assert (row["outcomes_total"], row["outcomes_passed"]) == (2, 1)
    assert _one(scores, config_from_dict({"outcomes": "ignore"}), outcomes=outcomes)["passed"]
    assert not _one(scores, config_from_dict({"outcomes": "both"}), outcomes=outcomes)["passed"]


def test_outcomes_gate_decides_a_failing_score():
    cfg = config_from_dict({})
    outcomes = [{"run_id": "r1", "case_id": "c1", "outcome": "o1", "passed": True}]
    row = _one(_rows({"a": 0.1}), cfg, outcomes=outcomes)
    assert row["verdict"] == "fail"
    assert row["passed"] is True
    both = _one(_rows({"a": 0.1}), config_from_dict({"outcomes": "both"}), outcomes=outcomes)
    assert both["passed"] is False


def test_connexity_preset_golden():
    cfg = load_config(preset="connexity")
    raw = [5, 4, 5, 4, 5, 4, 4, 4]
    scores = _rows(dict(zip(CONNEXITY_WEIGHTS, raw, strict=True)), scale_max=5)
    row = _one(scores, cfg)
    assert row["score"] == approx(0.885)
    assert row["threshold"] == Fraction(0.75)
    assert row["verdict"] == "pass"
    assert row["passed"] is True
    assert row["judge_error"] is False


def test_connexity_missing_metric_is_a_judge_error():
    cfg = load_config(preset="connexity")
    scores = _rows(dict.fromkeys(list(CONNEXITY_WEIGHTS)[:7], 5), scale_max=5)
    row = _one(scores, cfg)
    assert row["n_missing"] == 1
    assert row["judge_error"] is True
    assert row["score"] == 0
    assert row["verdict"] == "fail"


def test_connexity_ties_exactly_at_point_eight():
    # 0.15*4/5*3 + 0.125*4/5*2 + 0.1*4/5*3 = 0.8 exactly in rationals
    cfg = load_config(preset="connexity", overrides={"threshold": 0.8})
    row = _one(_rows(dict.fromkeys(CONNEXITY_WEIGHTS, 4), scale_max=5), cfg)
    assert row["verdict"] == "pass"


def test_weights_three_one_one():
    cfg = config_from_dict({"evaluators": {"a": {"weight": 3}, "b": {}, "c": {}}})
    row = _one(_rows({"a": 0.9, "b": 0.8, "c": 0.7}), cfg)
    assert row["score"] == approx(0.84)


def test_data_weight_used_without_config_weight():
    cfg = config_from_dict({})
    scores = _rows({"a": 0.9, "b": 0.8, "c": 0.7})
    for row, w in zip(scores, [3, None, 1], strict=True):
        row["weight"] = w
    assert _one(scores, cfg)["score"] == approx(0.84)


def test_zero_weights_give_zero():
    cfg = config_from_dict({"evaluators": {"a": {"weight": 0}, "b": {"weight": 0}}})
    row = _one(_rows({"a": 0.9, "b": 0.8}), cfg)
    assert row["score"] == 0
    assert row["verdict"] == "fail"


def test_composite_weights():
    cfg = config_from_dict(
        {
            "evaluators": {
                "g": {
                    "aggregator": "weighted_average",
                    "children": {
                        "a": {"weight": 0.3},
                        "b": {"weight": 0.5},
                        "c": {"weight": 0.2},
                    },
                }
            }
        }
    )
    row = _one(_rows({"a": 0.9, "b": 0.7, "c": 0.8}), cfg)
    assert row["score"] == approx(0.78)
    nodes = _nodes(_rows({"a": 0.9, "b": 0.7, "c": 0.8}), cfg)
    assert set(nodes) == {"", "g", "g/a", "g/b", "g/c"}
    assert nodes["g"]["score"] == approx(0.78)
    assert nodes["g/b"]["passed"] is False


def _threshold_cfg(t: float, n: int, threshold: float = 0.8) -> object:
    children = {f"k{i}": {} for i in range(n)}
    return config_from_dict(
        {
            "threshold": threshold,
            "borderline": None,
            "evaluators": {"q": {"aggregator": "threshold", "threshold": t, "children": children}},
        }
    )


def test_threshold_aggregator_two_of_four():
    cfg = _threshold_cfg(0.5, 4)
    scores = _rows({"k0": 0.9, "k1": 0.8, "k2": 0.5, "k3": 0.1})
    q = _nodes(scores, cfg)["q"]
    assert q["score"] == Fraction(1, 2)
    assert q["passed"] is True
    assert (q["children_passed"], q["children_present"]) == (2, 4)


def test_threshold_aggregator_one_of_four():
    cfg = _threshold_cfg(0.5, 4)
    scores = _rows({"k0": 0.9, "k1": 0.7, "k2": 0.5, "k3": 0.1})
    q = _nodes(scores, cfg)["q"]
    assert q["score"] == Fraction(1, 4)
    assert q["passed"] is False


def test_threshold_aggregator_zero_of_two_at_zero_passes():
    cfg = _threshold_cfg(0.0, 2)
    q = _nodes(_rows({"k0": 0.1, "k1": 0.2}), cfg)["q"]
    assert q["score"] == 0
    assert q["passed"] is True


def test_safety_gate_with_failing_required_child():
    cfg = config_from_dict(
        {
            "evaluators": {
                "g": {
                    "aggregator": "safety_gate",
                    "required_children": ["safe"],
                    "children": {"safe": {"min_score": 0.9}, "a": {}, "b": {}},
                }
            }
        }
    )
    nodes = _nodes(_rows({"safe": 0.85, "a": 1.0, "b": 1.0}), cfg)
    assert nodes["g"]["score"] == 0
    assert nodes["g"]["passed"] is False
    held = _nodes(_rows({"safe": 0.95, "a": 1.0, "b": 0.8}), cfg)
    assert held["g"]["score"] == approx(0.9)  # average of the remaining children
    assert held["g"]["passed"] is True


def test_root_safety_gate_sets_required_failed():
    cfg = config_from_dict(
        {
            "aggregator": "safety_gate",
            "required_children": ["safe"],
            "evaluators": {"safe": {}, "a": {}},
        }
    )
    row = _one(_rows({"safe": 0.5, "a": 1.0}), cfg)
    assert row["score"] == 0
    assert row["required_failed"] is True
    held = _one(_rows({"safe": 0.9, "a": 0.7}), cfg)
    assert held["score"] == approx(0.7)
    assert held["verdict"] == "borderline"


def test_all_or_nothing_with_one_child_just_below():
    cfg = config_from_dict(
        {
            "evaluators": {
                "g": {
                    "aggregator": "all_or_nothing",
                    "threshold": 0.7,
                    "children": {"a": {}, "b": {}, "c": {}},
                }
            }
        }
    )
    assert _nodes(_rows({"a": 1.0, "b": 0.9, "c": 0.69}), cfg)["g"]["score"] == 0
    assert _nodes(_rows({"a": 1.0, "b": 0.9, "c": 0.7}), cfg)["g"]["score"] == approx(2.6 / 3)


def test_minimum_maximum_ignore_weights():
    for agg, want in [("minimum", 0.2), ("maximum", 0.9)]:
        cfg = config_from_dict(
            {
                "aggregator": agg,
                "evaluators": {"a": {"weight": 5}, "b": {"weight": 0}, "c": {}},
            }
        )
        assert _one(_rows({"a": 0.5, "b": 0.9, "c": 0.2}), cfg)["score"] == approx(want)


def test_nested_required_gate_zeroes_parent_only():
    cfg = config_from_dict(
        {
            "evaluators": {
                "g": {"children": {"a": {"required": True}, "b": {}}, "weight": 1},
                "c": {},
            }
        }
    )
    scores = _rows({"a": 0.5, "b": 1.0, "c": 1.0})
    row = _one(scores, cfg)
    assert row["score"] == approx(0.5)
    assert row["required_failed"] is False
    nodes = _nodes(scores, cfg)
    assert nodes["g"]["score"] == 0
    assert nodes["g"]["passed"] is False


def test_required_gate_applies_even_at_boundary_zero():
    cfg = config_from_dict(
        {
            "threshold": 0.0,
            "borderline": None,
            "evaluators": {"a": {"required": True, "min_score": 0.5}, "b": {}},
        }
    )
    row = _one(_rows({"a": 0.4, "b": 1.0}), cfg)
    assert row["score"] == 0
    assert row["verdict"] == "fail"


def test_on_missing_modes():
    evs = {"a": {}, "b": {}}
    scores = _rows({"a": 0.9})
    skip = _one(scores, config_from_dict({"evaluators": evs}))
    assert (skip["score"], skip["n_missing"], skip["verdict"]) == (approx(0.9), 1, "pass")
    zero = _one(scores, config_from_dict({"evaluators": evs, "on_missing": "zero"}))
    assert zero["score"] == approx(0.45)
    fail = _one(scores, config_from_dict({"evaluators": evs, "on_missing": "fail"}))
    assert (fail["score"], fail["judge_error"], fail["verdict"]) == (0, True, "fail")


def test_missing_required_child_fails():
    cfg = config_from_dict({"evaluators": {"a": {"required": True}, "b": {}}})
    row = _one(_rows({"b": 1.0}), cfg)
    assert row["score"] == 0
    assert row["required_failed"] is True


def test_null_score_counts_as_missing():
    cfg = config_from_dict({})
    scores = _rows({"a": 0.9, "b": None})
    row = _one(scores, cfg)
    assert row["n_missing"] == 1
    assert row["score"] == approx(0.9)


def test_ignored_rows_and_unscored():
    cfg = config_from_dict({"evaluators": {"a": {}}})
    row = _one(_rows({"zzz": 1.0}), cfg)
    assert row["n_ignored"] == 1
    assert row["verdict"] == "unscored"
    assert row["score"] is None
    fail = _one(
        _rows({"zzz": 1.0}), config_from_dict({"evaluators": {"a": {}}, "on_missing": "fail"})
    )
    assert fail["verdict"] == "unscored"
    assert fail["judge_error"] is False


def test_leaf_matched_by_unique_name_or_path():
    cfg = config_from_dict(
        {
            "evaluators": {
                "g": {"children": {"a": {}, "b": {}}},
                "h": {"children": {"b": {}}},
            }
        }
    )
    scores = _rows({"a": 1.0, "b": 0.2, "h/b": 0.6})
    row = _one(scores, cfg)
    assert row["n_ignored"] == 1  # "b" is ambiguous
    nodes = _nodes(scores, cfg)
    assert nodes["g/a"]["score"] == 1
    assert nodes["g/b"]["missing"] is True
    assert nodes["h/b"]["score"] == approx(0.6)


def test_expected_evaluators_without_config_are_per_run():
    cfg = config_from_dict({})
    scores = [
        *_rows({"a": 0.9, "b": 0.9}),
        *_rows({"a": 0.9}, case_id="c2"),
        *_rows({"c": 0.9}, run_id="r2"),
    ]
    rows = {(r["run_id"], r["case_id"]): r for r in ref.execution_scores(scores, None, None, cfg)}
    assert rows[("r1", "c2")]["n_missing"] == 1
    assert rows[("r2", "c1")]["n_missing"] == 0


def test_execution_threshold_and_override():
    scores = _rows({"a": 0.7})
    ex = [{"run_id": "r1", "case_id": "c1", "attempt": 0, "status": "ok", "threshold": 0.7}]
    assert _one(scores, config_from_dict({}), executions=ex)["verdict"] == "pass"
    cfg = load_config(threshold=0.75)
    assert _one(scores, cfg, executions=ex)["verdict"] == "borderline"


def test_error_status_ignores_scores():
    ex = [{"run_id": "r1", "case_id": "c1", "attempt": 0, "status": "error"}]
    row = _one(_rows({"a": 1.0}), config_from_dict({}), executions=ex)
    assert (row["score"], row["verdict"], row["passed"]) == (None, "error", False)


# --- summaries -----------------------------------------------------------------------------


def _ex(case: str, attempt: int, score, passed: bool, status="ok", latency=None, run="r1"):
    return {
        "run_id": run,
        "case_id": case,
        "attempt": attempt,
        "status": status,
        "score": None if score is None else Fraction(score),
        "passed": passed,
        "verdict": "error" if status == "error" else ("pass" if passed else "fail"),
        "latency_ms": latency,
        "cost_usd": None,
        "input_tokens": None,
        "output_tokens": None,
    }


def test_case_summary_attempt_policies():
    rows = [
        _ex("c1", 0, 0.9, True, latency=10),
        _ex("c1", 1, 0.5, False, latency=20),
        _ex("c1", 2, None, False, status="error"),
    ]
    (cs,) = ref.case_summary(rows, config_from_dict({}))
    assert (cs["attempts"], cs["errored"], cs["scored"], cs["n_passed"]) == (3, 1, 2, 1)
    assert cs["score"] == approx(0.7)
    assert cs["pass_rate"] == Fraction(1, 3)
    assert cs["passed"] is False
    assert cs["flaky"] is True
    assert cs["latency_mean"] == 15
    assert cs["cost_usd"] is None
    (cs,) = ref.case_summary(
        rows, config_from_dict({"attempts": {"passed": "any", "score": "min"}})
    )
    assert cs["passed"] is True
    assert cs["score"] == approx(0.5)
    (cs,) = ref.case_summary(rows, config_from_dict({"attempts": {"passed": "majority"}}))
    assert cs["passed"] is False


def test_run_summary_counts_se_and_percentiles():
    rows = [
        _ex("c1", 0, 1.0, True, latency=100),
        _ex("c2", 0, 0.5, False, latency=200),
        _ex("c3", 0, None, False, status="error", latency=300),
        _ex("c4", 0, 0.9, True, latency=400),
    ]
    (rs,) = ref.run_summary(rows, config_from_dict({}), runs=None)
    assert (rs["executions"], rs["cases"], rs["passed"], rs["failed"], rs["errored"]) == (
        4,
        4,
        2,
        1,
        1,
    )
    assert rs["pass_rate"] == Fraction(1, 2)
    assert rs["mean_score"] == approx(0.8)
    # one attempt per case: the ordinary sample standard error
    assert rs["pass_rate_se"] == pytest.approx((1 / 3) ** 0.5 / 2)
    xs = [1.0, 0.5, 0.9]
    m = sum(xs) / 3
    sd = (sum((x - m) ** 2 for x in xs) / 2) ** 0.5
    assert rs["mean_score_se"] == pytest.approx(sd / 3**0.5)
    assert rs["latency_p50"] == 250
    assert rs["latency_p95"] == approx(385)
    assert rs["latency_max"] == 400
    assert rs["mean_score_gate"] is True
    assert rs["pass_rate_gate"] is False
    assert rs["run_passed"] is False


def test_run_summary_empty_run_from_runs_table():
    rows = [_ex("c1", 0, 1.0, True)]
    out = ref.run_summary(rows, config_from_dict({}), runs=[{"run_id": "r0"}])
    empty = next(r for r in out if r["run_id"] == "r0")
    assert (empty["executions"], empty["cases"]) == (0, 0)
    assert empty["pass_rate"] is None
    assert empty["mean_score"] is None
    assert empty["case_pass_rate"] is None
    assert empty["run_passed"] is False


def test_clustered_se_single_case_is_null():
    assert ref.clustered_se([("c1", Fraction(1)), ("c1", Fraction(0))]) is None
