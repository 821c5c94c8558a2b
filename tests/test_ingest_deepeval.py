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
