"""Lower-is-better metrics (docs/scoring.md#one-scale, evaluator `higher_is_better`): s = 1 − score
/ scale_max before weights, boundaries, aggregators and deltas. The rule (rules/normalize.py) and
its generated SQL macro; the config field; golden values on every engine path (polars flat and
tree, DuckDB, Spark) equal to literal numbers and to the exact reference."""

from __future__ import annotations

import math
import tempfile
from fractions import Fraction
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import evalframe as ef
from evalframe._private.engines.duckdb.sql import sql_text
from evalframe._private.rules.normalize import normalized_score
from tests import reference as ref
from tests.strategies import Scenario, frames, scenarios

EXEC_KEY = ("run_id", "case_id", "attempt")
EVAL_KEY = ("run_id", "case_id", "attempt", "path")

# hallucination: a rate, lower is better; relevance: 0-5, higher is better
SCORES = [
    {"run_id": "r", "case_id": "c1", "evaluator": "hallucination", "score": 0.2},
    {"run_id": "r", "case_id": "c1", "evaluator": "relevance", "score": 4.0, "scale_max": 5.0},
    {"run_id": "r", "case_id": "c2", "evaluator": "hallucination", "score": 0.75},
    {"run_id": "r", "case_id": "c2", "evaluator": "relevance", "score": 5.0, "scale_max": 5.0},
    {"run_id": "r", "case_id": "c3", "evaluator": "hallucination", "score": 0.0},
    {"run_id": "r", "case_id": "c3", "evaluator": "relevance", "score": 2.0, "scale_max": 5.0},
    {"run_id": "r", "case_id": "c4", "evaluator": "hallucination", "score": 0.2},
    {"run_id": "r", "case_id": "c4", "evaluator": "relevance", "score": None, "scale_max": 5.0},
]
LOWER = {"higher_is_better": False}
FLAT = {"evaluators": {"hallucination": LOWER, "relevance": {}}}
# the same leaves under a composite node: the tree path (leaf grid, one level deeper)
TREE = {"evaluators": {"judge": {"children": {"hallucination": LOWER, "relevance": {}}}}}
# s per case — c1 0.8 / 0.8, c2 0.25 / 1.0, c3 1.0 / 0.4, c4 0.8 / missing
WANT = {
    "c1": (0.8, "pass"),
    "c2": (0.625, "borderline"),
    "c3": (0.7, "borderline"),
    "c4": (0.8, "pass"),
}


def _frame(rows: list[dict[str, Any]]) -> pl.DataFrame:
    cols = ("run_id", "case_id", "evaluator", "score", "scale_max")
    return pl.DataFrame(
        {c: [r.get(c, 1.0 if c == "scale_max" else None) for r in rows] for c in cols},
        schema={c: pl.String if c in cols[:3] else pl.Float64 for c in cols},
    )


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    _frame(SCORES).write_parquet(tmp_path / "scores.parquet")
    return tmp_path


def _by_case(frame: pl.DataFrame) -> dict[str, tuple[float | None, str]]:
    return {r["case_id"]: (r["score"], r["verdict"]) for r in frame.iter_rows(named=True)}


def _assert_want(got: dict[str, tuple[float | None, str]], want: dict[str, tuple[float, str]]):
    assert sorted(got) == sorted(want)
    for case, (score, verdict) in want.items():
        assert got[case][0] == pytest.approx(score, abs=1e-12), case
        assert got[case][1] == verdict, case


def _reference(cfg: ef.Config) -> dict[str, tuple[float | None, str]]:
    rows = ref.execution_scores(SCORES, None, None, cfg)
    return {
        r["case_id"]: (None if r["score"] is None else float(r["score"]), r["verdict"])
        for r in rows
    }


# --- the rule --------------------------------------------------------------------------
def test_rule_on_polars_literals():
    df = pl.DataFrame(
        {
            "score": [0.2, 4.0, None, 3.0],
            "mx": [1.0, 5.0, 5.0, None],
            "hib": [False, True, False, None],
        }
    )
    got = df.select(
        normalized_score(pl, pl.col("score"), pl.col("mx"), pl.col("hib")).alias("s"),
        normalized_score(pl, pl.col("score"), pl.col("mx")).alias("up"),
        normalized_score(pl, pl.col("score"), pl.col("mx"), False).alias("down"),
    )
    assert got["s"].to_list() == pytest.approx([0.8, 0.8, None, 3.0])  # null flag: higher
    assert got["up"].to_list() == pytest.approx([0.2, 0.8, None, 3.0])
    assert got["down"].to_list() == pytest.approx([0.8, 0.2, None, -2.0])


def test_sql_macro_keeps_two_argument_calls_and_takes_the_flag():
    con = duckdb.connect()
    con.execute(sql_text("normalize_score"))
    row = con.execute(
        "select normalize_score(4, 5), normalize_score(0.7, null), "
        "normalize_score(0.2, 1, higher_is_better := false), normalize_score(1, 5, false), "
        "normalize_score(null, 5, false), normalize_score(3, 10, null)"
    ).fetchone()
    assert row is not None
    assert row[:4] == pytest.approx((0.8, 0.7, 0.8, 0.8))
    assert row[4] is None
    assert row[5] == pytest.approx(0.3)


# --- the config --------------------------------------------------------------------------
def test_config_field_default_composite_error_and_config_id():
    assert ef.Evaluator().higher_is_better is True
    plain = ef.config_from_dict({"evaluators": {"hallucination": {}}})
    explicit = ef.config_from_dict({"evaluators": {"hallucination": {"higher_is_better": True}}})
    lower = ef.config_from_dict({"evaluators": {"hallucination": LOWER}})
    # a default value is left out of the canonical JSON: config_ids of existing policies hold
    assert "higher_is_better" not in plain.canonical_json()
    assert plain.config_id == explicit.config_id
    assert lower.config_id != plain.config_id
    assert '"higher_is_better":false' in lower.canonical_json()
    nested = ef.config_from_dict(TREE)
    assert '"higher_is_better":false' in nested.canonical_json()
    with pytest.raises(ef.ConfigError, match=r"`evaluators\.judge`: `higher_is_better`"):
        ef.config_from_dict(
            {"evaluators": {"judge": {"higher_is_better": False, "children": {"a": {}}}}}
        )
    # a dumped config validates again (Spark ships configs to its workers as JSON)
    assert ef.Config.model_validate_json(nested.model_dump_json()) == nested
    with pytest.raises(ef.ConfigError, match=r"higher_is_better"):
        ef.config_from_dict({"evaluators": {"a": {"higher_is_better": "sometimes"}}})


# --- golden values: every engine path equals the literal numbers and the reference --------
@pytest.mark.parametrize("shape", [FLAT, TREE], ids=["flat", "tree"])
def test_polars_scores_a_lower_is_better_metric(folder, shape):
    cfg = ef.config_from_dict(shape)
    ex = ef.score_tables(folder, cfg)["execution_scores"]
    _assert_want(_by_case(ex), WANT)
    _assert_want(_reference(cfg), WANT)
    # the same numbers without the flag: the rate read as if higher were better
    plain = ef.config_from_dict(
        {"evaluators": {"hallucination": {}, "relevance": {}}}
        if shape is FLAT
        else {"evaluators": {"judge": {"children": {"hallucination": {}, "relevance": {}}}}}
    )
    got = _by_case(ef.score_tables(folder, plain)["execution_scores"])
    assert got["c1"][0] == pytest.approx(0.5)  # (0.2 + 0.8) / 2


@pytest.mark.slow
def test_duckdb_scores_a_lower_is_better_metric(folder):
    cfg = ef.config_from_dict(FLAT)
    tables = ef.score_tables(folder, cfg, engine="duckdb")
    _assert_want(_by_case(tables["execution_scores"]), WANT)
    polars = ef.score_tables(folder, cfg)
    for name in ("execution_scores", "case_summary", "run_summary"):
        key = [c for c in ("run_id", "case_id", "attempt") if c in tables[name].columns]
        a, b = tables[name].sort(key), polars[name].sort(key)
        assert a.columns == b.columns, name
        for col in a.columns:
            left, right = a[col].to_list(), b[col].to_list()
            if a[col].dtype == pl.Float64:
                assert left == pytest.approx(right, abs=1e-12, nan_ok=True), (name, col)
            else:
                assert left == right, (name, col)
    run = tables["run_summary"].row(0, named=True)
    assert run["mean_score"] == pytest.approx((0.8 + 0.625 + 0.7 + 0.8) / 4)
    assert run["passed"] == 2


@pytest.mark.slow
def test_a_hallucination_rate_of_0_2_passes_as_0_8(folder):
    """0.2 hallucination is s = 0.8: it meets the default threshold 0.8; `max 0.7
    hallucination` is min_score 0.3 on the normalized scale."""
    only = ef.config_from_dict({"evaluators": {"hallucination": {**LOWER, "min_score": 0.3}}})
    for engine in ("polars", "duckdb"):
        ex = _by_case(ef.score_tables(folder, only, engine=engine)["execution_scores"])
        want = {"c1": (0.8, "pass"), "c2": (0.25, "fail"), "c3": (1.0, "pass"), "c4": (0.8, "pass")}
        _assert_want(ex, want)
    leaves = ef.score_tables(folder, only, evaluators=True)["evaluator_scores"]
    rows = {r["case_id"]: r for r in leaves.filter(pl.col("path") == "hallucination").to_dicts()}
    assert rows["c1"]["raw_score"] == pytest.approx(0.2)
    assert rows["c1"]["score"] == pytest.approx(0.8)
    # min_score 0.3 is the tool's `threshold 0.7` (success when the rate <= 0.7)
    assert [rows[c]["passed"] for c in ("c1", "c2", "c3", "c4")] == [True, False, True, True]


@pytest.mark.slow
def test_boundaries_and_required_gate_read_the_normalized_score(folder):
    cfg = ef.config_from_dict(
        {
            "evaluators": {
                "hallucination": {**LOWER, "required": True, "min_score": 0.3},
                "relevance": {},
            }
        }
    )
    want = {**WANT, "c2": (0.0, "fail")}  # 0.75 hallucination: s 0.25 < 0.3, the gate fires
    for engine in ("polars", "duckdb"):
        _assert_want(
            _by_case(ef.score_tables(folder, cfg, engine=engine)["execution_scores"]), want
        )
    _assert_want(_reference(cfg), want)
    # minimum aggregator: the smaller normalized score, not the smaller raw one
    cfg = ef.config_from_dict({**FLAT, "aggregator": "minimum"})
    ex = _by_case(ef.score_tables(folder, cfg)["execution_scores"])
    assert [ex[c][0] for c in ("c1", "c2", "c3", "c4")] == pytest.approx([0.8, 0.25, 0.4, 0.8])
    assert _by_case(ef.score_tables(folder, cfg, engine="duckdb")["execution_scores"]) == ex


@pytest.mark.slow
def test_deltas_see_the_normalized_score(tmp_path):
    """More hallucination in the candidate is a regression (its s fell)."""
    rows = [
        {"run_id": run, "case_id": "c1", "evaluator": "hallucination", "score": score}
        for run, score in (("base", 0.1), ("cand", 0.6))
    ]
    _frame(rows).write_parquet(tmp_path / "scores.parquet")
    cfg = ef.config_from_dict({"evaluators": {"hallucination": LOWER}})
    for engine in ("polars", "duckdb"):
        deltas = ef.compare_tables(tmp_path, cfg, baseline="base", candidate="cand", engine=engine)
        case = deltas["case_deltas"].row(0, named=True)
        assert case["status"] == "regression", engine
        assert case["score_delta"] == pytest.approx(-0.5), engine
        ev = deltas["evaluator_deltas"].row(0, named=True)
        assert ev["score_delta"] == pytest.approx(-0.5), engine


def test_configs_differing_in_direction_are_swept_together(folder):
    """A sweep over both readings of a metric: the direction is part of the tree's shape,
    so the two configs are scored as two plans and each keeps its own numbers; one
    execution_scores call (one plan, one tree) refuses them with a clear message."""
    ds = ef.load_dataset(folder)
    up = ef.config_from_dict({"evaluators": {"hallucination": {}, "relevance": {}}})
    down = ef.config_from_dict(FLAT)
    runs = ef.sweep_tables(ds, [up, down])["sweep"]
    mean = dict(zip(runs["config_id"], runs["mean_score"], strict=True))
    assert mean[down.config_id] == pytest.approx((0.8 + 0.625 + 0.7 + 0.8) / 4)
    # without the flag: c1 (0.2 + 0.8) / 2, c2 (0.75 + 1) / 2, c3 (0 + 0.4) / 2, c4 0.2
    assert mean[up.config_id] == pytest.approx((0.5 + 0.875 + 0.2 + 0.2) / 4)
    with pytest.raises(ef.UsageError, match="higher_is_better"):
        ef.execution_scores(ds, [up, down]).collect()


# --- random scenarios with random directions: engine == exact reference -------------------
def _flip(entries: dict[str, Any], flags: list[bool]) -> None:
    for entry in entries.values():
        if "children" in entry:
            _flip(entry["children"], flags)
        elif flags and not flags.pop():
            entry["higher_is_better"] = False


@st.composite
def directed(draw) -> Scenario:
    sc = draw(scenarios(draw(st.sampled_from(("tree", "connexity")))))
    flags = draw(st.lists(st.booleans(), min_size=12, max_size=12))
    _flip(sc.config.get("evaluators") or {}, flags)
    return sc


def _same(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if isinstance(b, Fraction | float) and not isinstance(b, bool):
        return math.isfinite(a) and abs(float(a) - float(b)) <= 1e-9
    return a == b


def _check(engine: pl.DataFrame, expected: list[dict], key: tuple[str, ...]) -> None:
    want = {tuple(r[k] for k in key): r for r in expected}
    got = {tuple(r[k] for k in key): r for r in engine.iter_rows(named=True)}
    assert sorted(got) == sorted(want)
    columns = sorted({c for r in expected for c in r if not c.startswith("_")} - set(key))
    for k, row in want.items():
        for c in columns:
            assert _same(got[k][c], row[c]), (k, c, got[k][c], row[c])


DIRECTED = settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@pytest.mark.slow
@DIRECTED
@given(directed())
def test_random_directions_match_the_reference(sc: Scenario):
    ds = ef.Dataset.from_frames(**frames(sc))
    cfg = ef.config_from_dict(sc.config)
    expected = ref.execution_scores(sc.scores, sc.executions, sc.outcomes, cfg)
    _check(ef.execution_scores(ds, cfg).collect(), expected, EXEC_KEY)
    leaves = ref.evaluator_scores(sc.scores, sc.executions, sc.outcomes, cfg)
    _check(ef.evaluator_scores(ds, cfg).collect(), leaves, EVAL_KEY)


@pytest.mark.slow
@settings(DIRECTED, max_examples=120)
@given(directed())
def test_random_directions_match_the_reference_many(sc: Scenario):
    test_random_directions_match_the_reference.hypothesis.inner_test(sc)


@pytest.mark.slow
@settings(DIRECTED, max_examples=40)
@given(directed().filter(lambda sc: ef.config_from_dict(sc.config).aggregator != "threshold"))
def test_random_directions_on_duckdb_match_the_reference(sc: Scenario):
    from evalframe._private.scoring.flat import is_flat

    cfg = ef.config_from_dict(sc.config)
    if not is_flat(cfg):
        return
    expected = ref.execution_scores(sc.scores, sc.executions, sc.outcomes, cfg)
    with tempfile.TemporaryDirectory() as tmp:
        for name, frame in frames(sc).items():
            if frame is not None:
                frame.write_parquet(Path(tmp) / f"{name}.parquet")
        got = ef.score_tables(tmp, cfg, engine="duckdb")["execution_scores"]
    _check(got, expected, EXEC_KEY)


# --- Spark runs the polars kernel: the same numbers ----------------------------------------
@pytest.mark.spark
@pytest.mark.slow
def test_spark_scores_a_lower_is_better_metric(spark, folder):
    from evalframe.spark import collect_tables, score_tables

    for shape in (FLAT, TREE):
        cfg = ef.config_from_dict(shape)
        df = spark.read.parquet(str(folder / "scores.parquet"))
        got = collect_tables(score_tables(df, cfg, partitions=2))
        _assert_want(_by_case(got["execution_scores"]), WANT)
