"""sweep and threshold_curve: many configs in one plan equal one config at a time."""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import evalframe as ef
from evalframe import grid_from_dict, sweep, threshold_curve
from evalframe._private.errors import ConfigError

SCORES = pl.DataFrame(
    {
        "run_id": ["r1"] * 6 + ["r2"] * 6,
        "case_id": ["c1", "c1", "c2", "c2", "c3", "c3"] * 2,
        "evaluator": ["a", "b"] * 6,
        "score": [4.0, 3.0, 5.0, 5.0, 2.0, None, 4.0, 4.0, 3.0, 5.0, 1.0, 2.0],
        "scale_max": 5.0,
    }
)
OUTCOMES = pl.DataFrame(
    {"run_id": "r1", "case_id": "c2", "outcome": ["x", "y"], "passed": [True, False]}
)


def _one_at_a_time(ds: ef.Dataset, configs: list[ef.Config]) -> pl.DataFrame:
    return pl.concat(
        [ef.run_summary(ef.execution_scores(ds, c), c, runs=ds.runs).collect() for c in configs],
        how="diagonal_relaxed",
    )


def _assert_same(a: pl.DataFrame, b: pl.DataFrame) -> None:
    """`a` (a sweep) has every run_summary column of `b` (one config at a time), equal."""
    assert not set(b.columns) - set(a.columns), set(b.columns) - set(a.columns)
    cols = [c for c in a.columns if c in b.columns]
    assert_frame_equal(
        a.select(cols).sort("config_id", "run_id"),
        b.select(cols).sort("config_id", "run_id"),
        check_exact=False,
        rel_tol=1e-12,
        abs_tol=1e-12,
    )


def test_grid_expands_the_cartesian_product_with_weight_sets():
    grid = grid_from_dict(
        {
            "grid": {"threshold": [0.6, 0.8], "run_gates": {"min_pass_rate": [0.5, 1.0]}},
            "weights": {"even": {}, "a_heavy": {"a": 3}},
            "base": {"evaluators": {"a": {}, "b": {}}},
        }
    )
    assert len(grid.configs) == 8
    assert set(grid.params.columns) == {
        "config_id",
        "sweep_threshold",
        "sweep_run_gates_min_pass_rate",
        "sweep_weights",
    }
    heavy = [c for c in grid.configs if c.evaluators["a"].weight == 3]
    assert len(heavy) == 4


def test_grid_rejects_unsweepable_fields_and_unknown_keys():
    with pytest.raises(ConfigError, match="cannot sweep"):
        grid_from_dict({"grid": {"evaluators": [1, 2]}})
    with pytest.raises(ConfigError, match="unknown top-level"):
        grid_from_dict({"thresholds": [0.5]})


@pytest.mark.slow
def test_sweep_equals_scoring_each_config_alone():
    ds = ef.Dataset.from_frames(SCORES, outcomes=OUTCOMES)
    grid = grid_from_dict(
        {
            "grid": {
                "threshold": [0.5, 0.6, 0.8],
                "outcomes": ["gate", "ignore", "both"],
                "on_missing": ["skip", "zero"],
            },
            "weights": {"even": {}, "b_heavy": {"b": 4}},
        },
        evaluators=["a", "b"],
    )
    table = sweep(ds, grid, rows_per_chunk=7)  # tiny chunks: many chunk boundaries
    assert table.height == len(grid.configs) * 2
    _assert_same(table, _one_at_a_time(ds, grid.configs))
    assert {"sweep_threshold", "sweep_outcomes", "sweep_weights"} <= set(table.columns)


def test_sweep_with_threshold_dependent_tree_evaluates_each_threshold():
    ds = ef.Dataset.from_frames(SCORES)
    base = {"evaluators": {"a": {"required": True}, "b": {}}}
    grid = grid_from_dict({"base": base, "grid": {"threshold": [0.5, 0.7, 0.9]}})
    _assert_same(sweep(ds, grid), _one_at_a_time(ds, grid.configs))


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    thresholds=st.lists(
        st.sampled_from([0.0, 0.2, 0.4, 0.5, 0.6, 0.7, 0.8, 1.0]),
        min_size=1,
        max_size=4,
        unique=True,
    ),
    borderline=st.sampled_from([None, 0.2]),
    attempts=st.sampled_from(["all", "any", "majority"]),
    scores=st.lists(
        st.sampled_from([None, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0]), min_size=12, max_size=12
    ),
    perm=st.permutations(list(range(12))),
)
def test_sweep_property_matches_one_at_a_time(thresholds, borderline, attempts, scores, perm):
    frame = SCORES.with_columns(pl.Series("score", scores, dtype=pl.Float64))[perm]
    frame = frame.with_columns(attempt=pl.when(pl.col("case_id") == "c3").then(1).otherwise(0))
    ds = ef.Dataset.from_frames(frame)
    grid = grid_from_dict(
        {
            "base": {"attempts": {"k": [1, 2]}},
            "grid": {
                "threshold": thresholds,
                "borderline": [b for b in [borderline] if b is None or b <= min(thresholds)]
                or [None],
                "attempts": {"passed": [attempts]},
            },
        }
    )
    _assert_same(sweep(ds, grid, rows_per_chunk=5), _one_at_a_time(ds, grid.configs))


def test_threshold_curve_equals_rescoring_at_each_threshold():
    ds = ef.Dataset.from_frames(SCORES, outcomes=OUTCOMES)
    cfg = ef.config_from_dict({"borderline": None})
    curve = threshold_curve(ef.execution_scores(ds, cfg), cfg).collect()
    assert curve.height > 0
    for row in curve.iter_rows(named=True):
        at_t = cfg.model_copy(update={"threshold": row["threshold"]})
        rs = ef.run_summary(ef.execution_scores(ds, at_t), at_t).collect()
        expected = rs.filter(pl.col("run_id") == row["run_id"]).row(0, named=True)
        assert row["pass_rate"] == pytest.approx(expected["pass_rate"])
        assert row["mean_score_gate"] == (expected["mean_score"] >= row["threshold"] - 1e-9)


def test_a_bad_grid_file_is_named_a_grid_file(tmp_path):
    with pytest.raises(ConfigError, match=r"cannot read grid file .*nope\.yaml"):
        ef.load_grid(tmp_path / "nope.yaml")
    (tmp_path / "g.yaml").write_text("- 1\n")
    with pytest.raises(ConfigError, match=r"grid file .*g\.yaml must hold a mapping"):
        ef.load_grid(tmp_path / "g.yaml")
