"""compare's evaluator_deltas from the flat pass's per-execution leaf partials (no second
read of the judge rows) equals the tree path's (`evaluator_scores` → `compare`), on
random datasets written to Parquet: attempts, missing and null leaves, on_missing zero,
errored executions, lower-is-better leaves, configs with and without evaluators."""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import HealthCheck, event, given, settings
from polars.testing import assert_frame_equal

import evalframe as ef
from evalframe._private import schema as S
from evalframe._private.compare.compare import compare
from evalframe._private.scoring.execution_scores import evaluator_scores
from evalframe._private.scoring.flat import is_flat
from tests.strategies import Scenario, frames, scenarios

SETTINGS = settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
)


def _write(sc: Scenario, folder) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, frame in frames(sc).items():
        if frame is not None:
            frame.write_parquet(folder / f"{name}.parquet")


def _tree_path_deltas(folder, cfg: ef.Config, pairs) -> dict[str, pl.DataFrame]:
    ds = ef.load_dataset(folder)
    scored = ef.score_tables(ds, cfg)
    nodes = evaluator_scores(ds, cfg, passthrough=False).collect().lazy()
    lazy = compare(
        scored[S.CASE_SUMMARY].lazy(),
        pairs,
        cfg,
        evaluator_scores=nodes,
        run_summary=scored[S.RUN_SUMMARY].lazy(),
    )
    return {name: frame.collect() for name, frame in lazy.items()}


def _all_pairs(folder) -> list[tuple[str, str]]:
    table = "executions" if (folder / "executions.parquet").exists() else "scores"
    ids = pl.read_parquet(folder / f"{table}.parquet")[S.RUN_ID].cast(pl.String)
    runs = ids.drop_nulls().unique().sort().to_list()
    pairs = [(b, c) for b in runs for c in runs if b != c]
    return pairs + [(r, r) for r in runs[:1]]  # a run against itself too


@pytest.mark.slow
@SETTINGS
@given(scenarios())
def test_evaluator_deltas_from_leaf_partials_equal_the_tree_path(tmp_path_factory, sc: Scenario):
    folder = tmp_path_factory.mktemp("ds")
    _write(sc, folder)
    cfg = ef.config_from_dict(sc.config)
    if not is_flat(cfg):
        event("tree config")
        return
    pairs = _all_pairs(folder)
    if not pairs:
        return
    try:
        fast = ef.compare_tables(folder, cfg, pairs=pairs)
    except ef.EvalframeError:
        event("invalid data")
        with pytest.raises(ef.EvalframeError):
            _tree_path_deltas(folder, cfg, pairs)
        return
    assert fast.scored is not None and fast.scored.path == "flat"
    event(f"compared, {'with' if fast[S.EVALUATOR_DELTAS].height else 'no'} evaluator rows")
    slow = _tree_path_deltas(folder, cfg, pairs)
    for name in (S.EVALUATOR_DELTAS, S.CASE_DELTAS, S.RUN_DELTAS):
        assert_frame_equal(fast[name], slow[name], check_exact=False, rel_tol=1e-12, abs_tol=1e-12)


def test_evaluator_deltas_of_a_missing_leaf_and_a_new_evaluator(tmp_path):
    """Literal rows: leaf b is absent in r1's attempt 1 (null there, its mean over the
    other attempt), evaluator c exists only in r2 (`new`: the tree comes from the data)."""
    scores = pl.DataFrame(
        {
            "run_id": ["r1"] * 3 + ["r2"] * 3,
            "case_id": ["k"] * 6,
            "attempt": [0, 0, 1, 0, 0, 0],
            "evaluator": ["a", "b", "a", "a", "b", "c"],
            "score": [0.5, 0.9, 0.7, 0.6, 0.8, 1.0],
        }
    )
    scores.write_parquet(tmp_path / "scores.parquet")
    got = ef.compare_tables(tmp_path, ef.Config(), pairs=[("r1", "r2")])[S.EVALUATOR_DELTAS]
    rows = got.select(S.PATH, "baseline_score", "candidate_score", S.STATUS).rows()
    assert rows == [
        ("a", pytest.approx(0.6), 0.6, "unchanged"),
        ("b", 0.9, 0.8, "regression"),
        ("c", None, 1.0, "new"),
    ]
