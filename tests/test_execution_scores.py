"""Golden cases for execution scoring (docs/scoring.md) as small literal tables."""

from __future__ import annotations

import polars as pl
import pytest

import evalframe as ef
from evalframe._private.config import CONNEXITY_WEIGHTS


def _scores(rows: list[tuple], scale_max: float = 1.0) -> pl.DataFrame:
    """rows: (case_id, evaluator, score[, weight])."""
    return pl.DataFrame(
        {
            "run_id": "r1",
            "case_id": [r[0] for r in rows],
            "evaluator": [r[1] for r in rows],
            "score": [r[2] for r in rows],
            "scale_max": scale_max,
            "weight": [r[3] if len(r) > 3 else None for r in rows],
        },
        schema_overrides={"score": pl.Float64, "weight": pl.Float64},
    )


def _one(ds: ef.Dataset, config: dict | ef.Config | None = None) -> dict:
    cfg = config if isinstance(config, ef.Config) else ef.config_from_dict(config or {})
    out = ef.execution_scores(ds, cfg).collect()
    assert out.height == 1
    return out.row(0, named=True)


def test_all_threes_on_0_to_5_is_0_6():
    ds = ef.Dataset.from_frames(_scores([("c", f"m{i}", 3.0) for i in range(8)], 5.0))
    row = _one(ds)
    assert row["score"] == pytest.approx(0.6)
    assert row["verdict"] == "borderline"  # meets the 0.6 borderline edge exactly
    assert row["passed"] is False


def test_weights_two_to_one_both_at_threshold_pass():
    ds = ef.Dataset.from_frames(_scores([("c", "a", 0.8, 2.0), ("c", "b", 0.8, 1.0)]))
    row = _one(ds)
    assert row["score"] == pytest.approx(0.8)
    assert (row["verdict"], row["passed"]) == ("pass", True)


def test_required_evaluator_below_threshold_zeroes_the_score():
    ds = ef.Dataset.from_frames(_scores([("c", "safety", 0.7), ("c", "quality", 1.0)]))
    row = _one(ds, {"evaluators": {"safety": {"required": True}, "quality": {}}})
    assert row["score"] == 0.0
    assert row["required_failed"] is True
    assert row["verdict"] == "fail"


def test_outcomes_gate_overrides_a_perfect_score():
    ds = ef.Dataset.from_frames(
        _scores([("c", "a", 1.0)]),
        outcomes=pl.DataFrame(
            {"run_id": "r1", "case_id": "c", "outcome": ["x", "y"], "passed": [True, False]}
        ),
    )
    row = _one(ds)
    assert (row["verdict"], row["passed"]) == ("pass", False)
    assert (row["outcomes_total"], row["outcomes_passed"]) == (2, 1)
    assert _one(ds, {"outcomes": "ignore"})["passed"] is True
    assert _one(ds, {"outcomes": "both"})["passed"] is False


def test_connexity_defaults_golden():
    values = [5, 4, 5, 4, 5, 4, 4, 4]
    rows = [("c", name, float(v)) for name, v in zip(CONNEXITY_WEIGHTS, values, strict=True)]
    ds = ef.Dataset.from_frames(_scores(rows, 5.0))
    row = _one(ds, ef.load_config(preset="connexity"))
    assert row["score"] == pytest.approx(0.885)
    assert (row["threshold"], row["verdict"], row["passed"]) == (0.75, "pass", True)


def test_weighted_sum_landing_a_hair_below_threshold_still_passes():
    # 0.15·(4/5)·... built so float arithmetic gives 0.7999999999999999
    rows = [("c", "a", 4.0, 0.15), ("c", "b", 4.0, 0.125), ("c", "c", 4.0, 0.725)]
    ds = ef.Dataset.from_frames(_scores(rows, 5.0))
    row = _one(ds)
    assert row["score"] == pytest.approx(0.8, abs=1e-12)
    assert row["verdict"] == "pass"


def test_threshold_resolution_cli_beats_execution_beats_config():
    ds = ef.Dataset.from_frames(
        _scores([("c", "a", 0.7)]),
        executions=pl.DataFrame({"run_id": "r1", "case_id": ["c"], "threshold": [0.65]}),
    )
    assert _one(ds, {"threshold": 0.9})["verdict"] == "pass"  # execution 0.65 wins
    forced = ef.load_config(overrides={"threshold": 0.9}, threshold=0.75)
    row = _one(ds, forced)
    assert (row["threshold"], row["verdict"]) == (0.75, "borderline")


def test_errored_execution_has_no_score_and_never_passes():
    ds = ef.Dataset.from_frames(
        _scores([("c", "a", 1.0)]),
        executions=pl.DataFrame({"run_id": "r1", "case_id": ["c"], "status": ["error"]}),
        outcomes=pl.DataFrame({"run_id": "r1", "case_id": "c", "outcome": ["x"], "passed": [True]}),
    )
    row = _one(ds)
    assert (row["score"], row["verdict"], row["passed"]) == (None, "error", False)


def test_unscored_execution_is_decided_by_outcomes_under_gate():
    ds = ef.Dataset.from_frames(
        _scores([("c", "a", 1.0)]),
        executions=pl.DataFrame({"run_id": "r1", "case_id": ["c", "d"]}),
        outcomes=pl.DataFrame({"run_id": "r1", "case_id": "d", "outcome": ["x"], "passed": [True]}),
    )
    out = ef.execution_scores(ds, ef.Config()).collect().sort("case_id")
    assert out["verdict"].to_list() == ["pass", "unscored"]
    assert out["passed"].to_list() == [True, True]
    assert ef.execution_scores(ds, ef.config_from_dict({"outcomes": "both"})).collect().sort(
        "case_id"
    )["passed"].to_list() == [True, False]


@pytest.mark.parametrize(
    ("on_missing", "score", "verdict", "n_missing", "judge_error"),
    [
        ("skip", 1.0, "pass", 1, False),
        ("zero", 0.5, "fail", 1, False),
        ("fail", 0.0, "fail", 1, True),
    ],
)
def test_missing_evaluator_policies(on_missing, score, verdict, n_missing, judge_error):
    ds = ef.Dataset.from_frames(_scores([("c", "a", 1.0), ("c", "b", None)]))
    row = _one(ds, {"on_missing": on_missing})
    assert row["score"] == pytest.approx(score)
    assert (row["verdict"], row["n_missing"], row["judge_error"]) == (
        verdict,
        n_missing,
        judge_error,
    )


def test_evaluator_missing_for_one_execution_is_counted_against_the_run():
    # without a config list, the expected evaluators are those seen in the run
    ds = ef.Dataset.from_frames(_scores([("c1", "a", 1.0), ("c1", "b", 1.0), ("c2", "a", 1.0)]))
    out = (
        ef.execution_scores(ds, ef.config_from_dict({"on_missing": "zero"}))
        .collect()
        .sort("case_id")
    )
    assert out["n_missing"].to_list() == [0, 1]
    assert out["score"].to_list() == pytest.approx([1.0, 0.5])


def test_listed_evaluators_ignore_others_and_count_them():
    ds = ef.Dataset.from_frames(_scores([("c", "a", 0.9), ("c", "noise", 0.0)]))
    row = _one(ds, {"evaluators": {"a": {}}})
    assert (row["score"], row["n_ignored"]) == (pytest.approx(0.9), 1)


def test_all_evaluators_null_under_skip_is_unscored():
    ds = ef.Dataset.from_frames(_scores([("c", "a", None), ("c", "b", None)]))
    row = _one(ds)
    assert (row["score"], row["verdict"], row["passed"]) == (None, "unscored", False)


def test_score_ranges_label_raw_scores():
    ds = ef.Dataset.from_frames(_scores([("c", "accuracy", 7.0)], 10.0))
    cfg = ef.config_from_dict(
        {
            "evaluators": {
                "accuracy": {"score_ranges": {"0-5": "Incomplete", "6-10": "Satisfactory"}}
            }
        }
    )
    ev = ef.evaluator_scores(ds, cfg).collect().filter(pl.col("path") == "accuracy")
    assert ev["score_label"].to_list() == ["Satisfactory"]
    assert ev["score"].to_list() == pytest.approx([0.7])


def test_many_configs_in_one_plan_match_one_at_a_time():
    ds = ef.Dataset.from_frames(_scores([("c1", "a", 0.7), ("c1", "b", 0.9), ("c2", "a", 0.5)]))
    configs = [ef.config_from_dict({"threshold": t}) for t in (0.6, 0.8)]
    together = ef.execution_scores(ds, configs).collect().sort("config_id", "case_id")
    alone = pl.concat([ef.execution_scores(ds, c).collect() for c in configs]).sort(
        "config_id", "case_id"
    )
    assert together.equals(alone)


def test_a_nan_score_never_meets_a_threshold():
    from evalframe._private.scoring.tree_eval import meets

    x = pl.DataFrame({"x": [float("nan"), 0.7 - 1e-9, 0.7 - 2e-9, None]})
    got = x.select(meets(pl.col("x"), 0.7))["x"].to_list()
    assert got == [False, True, False, None]
