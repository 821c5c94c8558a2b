"""AgentV ingestion: results JSONL and run-folder index.jsonl, snake_case and camelCase."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

import evalframe as ef
from evalframe._private.ingest import IngestError, ingest

FIXTURES = Path(__file__).parent / "fixtures" / "agentv"
FEATURES = FIXTURES / "examples" / "features"
CAMEL = FIXTURES / "apps/cli/test/fixtures/results/camel-replay/index.jsonl"
ALL_FILES = sorted(FIXTURES.rglob("*.jsonl"))


def _load(path, tmp_path, **kw):
    report = ingest("agentv", [path], tmp_path / "ds", **kw)
    ds = ef.load_dataset(tmp_path / "ds")
    cfg = ef.config_from_dict(report.suggested_config or {})
    return report, ds, cfg


@pytest.mark.slow
@pytest.mark.parametrize("path", ALL_FILES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_every_fixture_ingests_and_recomputes_the_reported_score(path, tmp_path):
    _report, ds, cfg = _load(path, tmp_path)
    ex = ef.execution_scores(ds, cfg).filter(pl.col("status") == "ok").collect()
    both = ex.filter(pl.col("reported_score").is_not_null() & pl.col("score").is_not_null())
    # each row's score is the weighted mean of its graders (default 1, weight 0 drops one)
    assert both["score"].to_list() == pytest.approx(both["reported_score"].to_list(), abs=1e-3)


def test_compare_example_mean_delta_and_wins(tmp_path):
    ds_path = tmp_path / "ds"
    compare = FEATURES / "compare" / "evals"
    ingest("agentv", [compare / "baseline-results.jsonl"], ds_path)
    ingest("agentv", [compare / "candidate-results.jsonl"], ds_path)
    ds = ef.load_dataset(ds_path)
    cfg = ef.config_from_dict({})
    cases = ef.case_summary(ef.execution_scores(ds, cfg), cfg).collect()
    base = cases.filter(pl.col("run_id") == "baseline-results").select("case_id", b="score")
    cand = cases.filter(pl.col("run_id") == "candidate-results").select("case_id", c="score")
    delta = base.join(cand, on="case_id").with_columns(d=pl.col("c") - pl.col("b"))["d"]
    assert delta.len() == 5
    assert delta.mean() == pytest.approx(0.054, abs=1e-9)
    assert (delta >= 0.1 - 1e-9).sum() == 1  # 1 win
    assert (delta <= -0.1 + 1e-9).sum() == 0  # 0 losses, 4 ties
    runs = ef.run_summary(ef.execution_scores(ds, cfg), cfg, runs=ds.runs).collect()
    means = dict(zip(runs["run_id"], runs["mean_score"], strict=True))
    assert means["candidate-results"] - means["baseline-results"] == pytest.approx(0.054)


def test_trend_run_folders_mean_scores(tmp_path):
    ds_path = tmp_path / "ds"
    report = ingest("agentv", [FEATURES / "trend" / "sample-runs"], ds_path)
    assert len(report.runs_added) == 6  # 3 run folders × 2 targets
    ds = ef.load_dataset(ds_path)
    cfg = ef.config_from_dict({})
    runs = (
        ef.run_summary(ef.execution_scores(ds, cfg), cfg, runs=ds.runs)
        .filter(pl.col("target") == "claude-sonnet")
        .sort("created_at")
        .collect()
    )
    assert runs["mean_score"].to_list() == pytest.approx([0.92, 0.86, 0.80])
    assert runs["run_id"][0] == "2026-03-01T10-00-00-000Z/claude-sonnet"


def test_nested_groups_become_composite_paths(tmp_path):
    report, _ds, _cfg = _load(FEATURES / "assert-set" / "evals" / "suite.baseline.jsonl", tmp_path)
    tree = report.suggested_config["evaluators"]
    nested = tree["comprehensive_evaluation"]["children"]["content_quality"]
    assert nested["aggregator"] == "weighted_average" and nested["weight"] == 0.7
    assert set(nested["children"]) == {"accuracy", "clarity"}
    assert tree["final_decision"] == {}  # judged by an LLM: kept as the group's own score
    evaluators = set(pl.read_parquet(tmp_path / "ds" / "scores.parquet")["evaluator"])
    assert "comprehensive_evaluation/content_quality/accuracy" in evaluators
    assert {"final_decision", "final_decision/conciseness"} <= evaluators


def test_weight_zero_grader_is_kept_with_its_weight(tmp_path):
    _load(FEATURES / "weighted-graders" / "evals" / "suite.baseline.jsonl", tmp_path)
    scores = pl.read_parquet(tmp_path / "ds" / "scores.parquet")
    row = scores.filter(pl.col("evaluator") == "experimental-metric").row(0, named=True)
    assert row["weight"] == 0.0 and row["label"] == "pass"


def test_trials_become_attempts(tmp_path):
    _report, ds, _cfg = _load(FEATURES / "trials" / "evals" / "suite.baseline.jsonl", tmp_path)
    ex = ds.executions.collect()
    assert sorted(ex["attempt"].unique().to_list()) == [0, 1]
    assert ex.height == 4


def test_camel_case_fields(tmp_path):
    _report, ds, _cfg = _load(CAMEL, tmp_path)
    ex = ds.executions.collect().row(0, named=True)
    assert ex["run_id"] == "camel-replay"
    assert ex["case_id"] == "wtg-replay-fail"
    assert ex["latency_ms"] == 1234.0 and ex["cost_usd"] == 0.012
    assert (ex["input_tokens"], ex["output_tokens"]) == (10, 5)
    assert ex["status"] == "ok" and ex["execution_status"] == "quality_failure"
    assert ex["target"] == "codex"


def test_snake_and_camel_case_give_the_same_tables(tmp_path):
    snake = {
        "test_id": "t1",
        "target": "x",
        "score": 0.5,
        "execution_status": "execution_error",
        "duration_ms": 10,
        "cost_usd": 0.1,
        "token_usage": {"input": 3, "output": 4},
        "scores": [{"name": "g", "score": 0.5, "weight": 2}],
    }
    camel = {
        "testId": "t1",
        "target": "x",
        "score": 0.5,
        "executionStatus": "execution_error",
        "durationMs": 10,
        "costUsd": 0.1,
        "tokenUsage": {"input": 3, "output": 4},
        "scores": [{"name": "g", "score": 0.5, "weight": 2}],
    }
    tables = []
    for name, row in (("snake", snake), ("camel", camel)):
        src = tmp_path / name / "index.jsonl"
        src.parent.mkdir()
        src.write_text(json.dumps(row) + "\n")
        ingest("agentv", [src], tmp_path / f"ds_{name}", run_id="r")
        tables.append(
            [
                pl.read_parquet(tmp_path / f"ds_{name}" / f"{t}.parquet")
                for t in ("scores", "executions")
            ]
        )
    for a, b in zip(*tables, strict=True):
        assert a.equals(b)
    assert tables[0][1]["status"].to_list() == ["error"]


def test_malformed_line_names_file_and_line(tmp_path):
    src = tmp_path / "results.jsonl"
    src.write_text('{"test_id": "a", "score": 1}\n{"test_id": "b", "score": \n')
    with pytest.raises(IngestError, match=r"results\.jsonl:2: not valid JSON"):
        ingest("agentv", [src], tmp_path / "ds")
    assert not (tmp_path / "ds").exists()


def test_missing_test_id_names_line(tmp_path):
    src = tmp_path / "results.jsonl"
    src.write_text('{"test_id": "a", "score": 1}\n\n{"score": 1}\n')
    with pytest.raises(IngestError, match=r"results\.jsonl:3: missing `test_id`"):
        ingest("agentv", [src], tmp_path / "ds")


def test_two_sources_with_one_derived_run_id_clash(tmp_path):
    a = FEATURES / "rubric" / "evals" / "suite.baseline.jsonl"
    b = FEATURES / "nlp-metrics" / "evals" / "suite.baseline.jsonl"
    with pytest.raises(IngestError, match="also the run id of"):
        ingest("agentv", [a, b], tmp_path / "ds")
    report = ingest("agentv", [a, b], tmp_path / "ds", run_id="merged")
    assert report.runs_added == ("merged",)


BUNDLES = Path(__file__).parent / "fixtures" / "built" / "agentv" / "results"
RUN_1, RUN_2 = "2026-05-04T09-12-33-120Z", "2026-05-05T09-40-02-887Z"


@pytest.mark.parametrize(
    ("source", "runs"),
    [
        (BUNDLES, (RUN_1, RUN_2)),  # a results folder: one run per run folder
        (BUNDLES / RUN_1, (RUN_1,)),  # one run folder
        (BUNDLES / RUN_1 / "summary.json", (RUN_1,)),  # its summary.json
        (BUNDLES / RUN_1 / ".internal" / "index.jsonl", (RUN_1,)),  # its index
    ],
    ids=["results-root", "run-folder", "summary", "index"],
)
def test_run_bundles_take_the_run_id_from_the_run_folder(source, runs, tmp_path):
    report = ingest("agentv", [source], tmp_path / "ds")
    assert report.runs_added == runs  # never ".internal"; .indexes/runs.jsonl is no run


def test_run_bundles_reproduce_agentv_pass_rates(tmp_path):
    ingest("agentv", [BUNDLES], tmp_path / "ds")
    ds = ef.load_dataset(tmp_path / "ds")
    cfg = ef.load_config(preset="agentv")
    scored = ef.execution_scores(ds, cfg).collect()
    ok = scored.filter(pl.col("status") == "ok")
    assert ok["score"].to_list() == pytest.approx(ok["reported_score"].to_list(), abs=1e-9)
    runs = ef.run_summary(ef.execution_scores(ds, cfg), cfg, runs=ds.runs).collect().sort("run_id")
    assert runs["run_id"].to_list() == [RUN_1, RUN_2]
    assert runs["experiment"].to_list() == ["with-skills", "with-skills"]
    # AgentV leaves execution errors out of the pass rate: 2 of 3, then 4 of 4
    recomputed = (runs["passed"] / (runs["executions"] - runs["errored"])).to_list()
    assert recomputed == pytest.approx(runs["reported_pass_rate"].to_list(), abs=1e-4)
    assert recomputed == pytest.approx([2 / 3, 1.0])
    assert runs["errored"].to_list() == [1, 0]


def test_sample_index_repeats_become_attempts(tmp_path):
    run = tmp_path / "src" / "run-a"
    (run / ".internal").mkdir(parents=True)
    rows = [
        {"test_id": "t1", "target": "x", "score": s, "sample_index": i}
        for i, s in ((1, 0.5), (2, 0.7))
    ]
    (run / ".internal" / "index.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    report = ingest("agentv", [run], tmp_path / "ds")
    assert report.runs_added == ("run-a",)
    ex = pl.read_parquet(tmp_path / "ds" / "executions.parquet").sort("attempt")
    assert ex["attempt"].to_list() == [0, 1] and ex["case_id"].to_list() == ["t1", "t1"]
