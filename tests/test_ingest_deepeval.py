"""DeepEval ingestion: the test-run JSON `deepeval test run` saves; its numbers recomputed."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import polars as pl
import pytest

import evalframe as ef
from evalframe._private.ingest import IngestError, ingest

FIXTURE = Path(__file__).parent / "fixtures/built/deepeval/.deepeval/.latest_test_run.json"
RUN = json.loads(FIXTURE.read_text())["testRunData"]


def test_per_metric_passes_fails_errors_and_average(tmp_path):
    report = ingest("deepeval", [FIXTURE], tmp_path / "ds")
    assert report.runs_added == ("deepeval/latest_test_run",)  # the project folder
    assert report.rows["executions"] == 4 and report.rows["scores"] == 12
    scores = pl.read_parquet(tmp_path / "ds" / "scores.parquet")
    got = {
        r["evaluator"]: r
        for r in scores.group_by("evaluator")
        .agg(
            passes=(pl.col("label") == "pass").sum(),
            fails=(pl.col("label") == "fail").sum(),
            errors=pl.col("score").is_null().sum(),
            average=pl.col("score").mean(),
        )
        .iter_rows(named=True)
    }
    # DeepEval prints, per metric, its pass rate and average score (metricsScores)
    for m in RUN["metricsScores"]:
        row = got[m["metric"]]
        assert (row["passes"], row["fails"], row["errors"]) == (
            m["passes"],
            m["fails"],
            m["errors"],
        )
        assert row["average"] == pytest.approx(sum(m["scores"]) / len(m["scores"]))
        assert row["passes"] / (row["passes"] + row["fails"]) == pytest.approx(
            m["passes"] / (m["passes"] + m["fails"])
        )
    assert got["Answer Relevancy"]["average"] == pytest.approx(0.825)


def test_test_passes_and_fails_through_the_engine(tmp_path):
    ingest("deepeval", [FIXTURE.parent], tmp_path / "ds")  # a folder works too
    ds = ef.load_dataset(tmp_path / "ds")
    # DeepEval passes a test case when every metric succeeded (its own verdict, kept as
    # outcomes; Bias succeeds *below* its threshold): gate on outcomes alone
    cfg = ef.config_from_dict({"threshold": 0.0, "borderline": None, "outcomes": "gate"})
    ex = ef.execution_scores(ds, cfg).collect().sort("case_id")
    assert ex["passed"].sum() == RUN["testPassed"] == 1
    assert (~ex["passed"]).sum() == RUN["testFailed"] == 3
    assert ex["passed"].to_list() == ex["reported_passed"].to_list()
    assert ex["latency_ms"].to_list() == pytest.approx(
        [1000 * c["completionTime"] for c in RUN["testCases"]]
    )


def test_errored_metric_is_unscored_with_its_error(tmp_path):
    ingest("deepeval", [FIXTURE], tmp_path / "ds")
    scores = pl.read_parquet(tmp_path / "ds" / "scores.parquet")
    row = scores.filter(pl.col("score").is_null()).row(0, named=True)
    assert (row["case_id"], row["evaluator"]) == ("test_case_3", "Faithfulness")
    assert "invalid JSON" in row["reason"]


def test_not_a_test_run(tmp_path):
    bad = tmp_path / "x.json"
    bad.write_text('{"results": []}')
    with pytest.raises(IngestError, match=r"x\.json: not a DeepEval test run"):
        ingest("deepeval", [bad], tmp_path / "ds")
    out_of_range = json.loads(FIXTURE.read_text())
    out_of_range["testRunData"]["testCases"][0]["metricsData"][0]["score"] = 7
    bad.write_text(json.dumps(out_of_range))
    with pytest.raises(IngestError, match=r"metricsData\[0\]: score 7\.0 of 'Answer Relevancy'"):
        ingest("deepeval", [bad], tmp_path / "ds")


def test_json_nested_thousands_deep_is_a_clear_error(tmp_path):
    src = tmp_path / "run.json"
    src.write_text('{"testRunData": {"testCases": ' + "[" * 50_000 + "]" * 50_000 + "}}")
    with pytest.raises(IngestError, match=r"run\.json: JSON nested deeper than 200"):
        ingest("deepeval", [src], tmp_path / "ds")


def _accumulated(tmp_path: Path) -> Path:
    """Two evaluate() calls of two unnamed cases each, accumulated into one test run, as
    DeepEval writes it: names restart at test_case_0, `order` keeps counting."""
    run = json.loads(FIXTURE.read_text())
    cases = run["testRunData"]["testCases"]
    for order, case in enumerate(cases):
        case["order"] = order
        case["name"] = f"test_case_{order % 2}"
    src = tmp_path / "proj" / ".deepeval" / ".latest_test_run.json"
    src.parent.mkdir(parents=True)
    src.write_text(json.dumps(run))
    return src


def test_repeated_names_across_evaluate_calls_are_keyed_by_order(tmp_path):
    report = ingest("deepeval", [_accumulated(tmp_path)], tmp_path / "ds")
    assert report.rows["executions"] == 4 and report.rows["scores"] == 12
    assert any("keyed by DeepEval's `order`" in n for n in report.skipped)
    ex = pl.read_parquet(tmp_path / "ds" / "executions.parquet").sort("order")
    assert ex["case_id"].to_list() == [
        "test_case_0#0",
        "test_case_1#1",
        "test_case_0#2",
        "test_case_1#3",
    ]
    # DeepEval's own pass / fail counts still hold under outcome gating
    ds = ef.load_dataset(tmp_path / "ds")
    cfg = ef.config_from_dict({"threshold": 0.0, "borderline": None, "outcomes": "gate"})
    scored = ef.execution_scores(ds, cfg).collect()
    assert (scored["passed"].sum(), (~scored["passed"]).sum()) == (
        RUN["testPassed"],
        RUN["testFailed"],
    )


def test_a_repeated_order_is_an_error(tmp_path):
    src = _accumulated(tmp_path)
    run = json.loads(src.read_text())
    run["testRunData"]["testCases"][3]["order"] = 1
    src.write_text(json.dumps(run))
    with pytest.raises(IngestError, match=r"testCases\[3\]: test case order 1 repeats"):
        ingest("deepeval", [src], tmp_path / "ds")


def test_latest_test_runs_of_two_projects_do_not_collide(tmp_path):
    for project in ("alpha", "beta"):
        src = tmp_path / project / ".deepeval" / ".latest_test_run.json"
        src.parent.mkdir(parents=True)
        src.write_bytes(FIXTURE.read_bytes())
    report = ingest("deepeval", [tmp_path / "alpha", tmp_path / "beta"], tmp_path / "ds")
    assert report.runs_added == ("alpha/latest_test_run", "beta/latest_test_run")


def test_latest_test_run_at_the_root_needs_a_run_id():
    from evalframe._private.ingest import deepeval

    with pytest.raises(IngestError, match="hint: pass --run-id"):
        deepeval.run_id_of(Path("/.latest_test_run.json"), {})
    assert deepeval.run_id_of(Path("/.latest_test_run.json"), {"identifier": "mine"}) == "mine"


def test_saved_test_run_time_is_created_at(tmp_path):
    src = tmp_path / "results" / "test_run_20260722_220100.json"
    src.parent.mkdir()
    src.write_bytes(FIXTURE.read_bytes())
    ingest("deepeval", [src], tmp_path / "ds")
    runs = pl.read_parquet(tmp_path / "ds" / "runs.parquet")
    assert runs["run_id"].to_list() == ["test_run_20260722_220100"]
    assert runs["created_at"].to_list() == [datetime(2026, 7, 22, 22, 1, 0)]


SAFETY = Path(__file__).parent / "fixtures/built/deepeval/safety/.deepeval/.latest_test_run.json"
SAFETY_RUN = json.loads(SAFETY.read_text())["testRunData"]


@pytest.mark.slow
def test_lower_is_better_metrics_reproduce_deepeval_under_the_default_config(tmp_path):
    """Hallucination and Toxicity succeed when score <= threshold: ingest reads the
    direction from each metric's success, score and threshold and writes it, with the
    tool's threshold as min_score on the normalized scale, into the suggested config.
    The default config plus that list reproduces DeepEval's pass counts and averages."""
    report = ingest("deepeval", [SAFETY], tmp_path / "ds")
    assert report.suggested_config == {
        "evaluators": {
            "Answer Relevancy": {"min_score": 0.7},
            "Hallucination": {"higher_is_better": False, "min_score": 0.3},
            "Toxicity": {"higher_is_better": False, "min_score": 0.5},
        }
    }
    cfg = ef.config_from_dict(report.suggested_config)
    for engine in ("polars", "duckdb"):
        tables = ef.score_tables(tmp_path / "ds", cfg, engine=engine)
        ex = tables["execution_scores"].sort("case_id")
        # the tool's verdicts: testPassed / testFailed
        assert ex["passed"].sum() == SAFETY_RUN["testPassed"] == 2
        assert (~ex["passed"]).sum() == SAFETY_RUN["testFailed"] == 2
        # s: relevance as is, 1 - hallucination, 1 - toxicity; c0 (0.9+0.8+1)/3, c1
        # (0.8+0.25+0.9)/3, c2 (0.6+1+0.5)/3, c3 (1+0.6+1)/3
        want = [0.9, 0.65, 0.7, 2.6 / 3]
        assert ex["score"].to_list() == pytest.approx(want, abs=1e-12), engine
        assert ex["verdict"].to_list() == ["pass", "borderline", "borderline", "pass"], engine
        run = tables["run_summary"].row(0, named=True)
        assert run["mean_score"] == pytest.approx(sum(want) / 4, abs=1e-12), engine
    leaves = ef.score_tables(tmp_path / "ds", cfg, evaluators=True)["evaluator_scores"]
    leaves = leaves.filter(pl.col("is_leaf"))
    got = {
        r["path"]: r
        for r in leaves.group_by("path")
        .agg(
            raw=pl.col("raw_score").mean(),
            s=pl.col("score").mean(),
            passes=pl.col("passed").sum(),
            fails=(~pl.col("passed")).sum(),
        )
        .iter_rows(named=True)
    }
    for m in SAFETY_RUN["metricsScores"]:
        row, average = got[m["metric"]], sum(m["scores"]) / len(m["scores"])
        # the tool's per-metric pass / fail counts and average score
        assert (row["passes"], row["fails"]) == (m["passes"], m["fails"]), m["metric"]
        assert row["raw"] == pytest.approx(average)
        lower = m["metric"] in ("Hallucination", "Toxicity")
        assert row["s"] == pytest.approx(1 - average if lower else average)
    assert got["Hallucination"]["s"] == pytest.approx(1 - 0.3375)


def test_bias_of_the_first_fixture_is_lower_is_better(tmp_path):
    report = ingest("deepeval", [FIXTURE], tmp_path / "ds")
    assert report.suggested_config is not None
    assert report.suggested_config["evaluators"]["Bias"] == {
        "higher_is_better": False,
        "min_score": 0.5,
    }
    assert report.suggested_config["evaluators"]["Faithfulness"] == {"min_score": 0.7}


def _one_metric(tmp_path: Path, name: str, rows: list[tuple[float, float, bool]]) -> Path:
    cases = [
        {"name": f"c{i}", "order": i, "success": ok,
         "metricsData": [{"name": name, "threshold": t, "success": ok, "score": s}]}
        for i, (s, t, ok) in enumerate(rows)
    ]  # fmt: skip
    src = tmp_path / f"{name}.json"
    src.write_text(json.dumps({"testCases": cases}))
    return src


def test_direction_of_custom_metrics_from_success_score_and_threshold(tmp_path):
    # a custom metric whose success means score <= threshold (a failure above it)
    src = _one_metric(tmp_path, "Refund Errors", [(0.1, 0.3, True), (0.6, 0.3, False)])
    report = ingest("deepeval", [src], tmp_path / "a")
    assert report.suggested_config == {
        "evaluators": {"Refund Errors": {"higher_is_better": False, "min_score": 0.7}}
    }
    # higher is better (a failure below the threshold): no suggested config is needed
    src = _one_metric(tmp_path, "Tone [GEval]", [(0.9, 0.5, True), (0.2, 0.5, False)])
    assert ingest("deepeval", [src], tmp_path / "b").suggested_config is None
    # a score equal to its threshold reveals nothing: DeepEval's own lower-is-better names
    src = _one_metric(tmp_path, "Toxicity", [(0.5, 0.5, True)])
    report = ingest("deepeval", [src], tmp_path / "c")
    assert report.suggested_config is not None
    assert report.suggested_config["evaluators"]["Toxicity"]["higher_is_better"] is False
    # successes that fit neither direction: the default, with a note
    src = _one_metric(tmp_path, "Odd", [(0.9, 0.5, True), (0.1, 0.5, True)])
    report = ingest("deepeval", [src], tmp_path / "d")
    assert report.suggested_config is None
    assert any("'Odd': its successes fit neither direction" in n for n in report.skipped)
