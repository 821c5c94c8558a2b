"""promptfoo ingestion: the tool's own numbers, recomputed through the engine."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import evalframe as ef
from evalframe._private.ingest import IngestError, ingest

FIXTURES = Path(__file__).parent / "fixtures" / "promptfoo"
FRENCH = FIXTURES / "examples/french-greeting-test/output.json"
EXPORT = FIXTURES / "test/__fixtures__/sample-export.json"
LIKERT = FIXTURES / "examples/grok-4-political-bias/sample-likert-results.json"


def _scored(path: Path, tmp_path: Path, config: dict | None = None):
    report = ingest("promptfoo", [path], tmp_path / "ds")
    ds = ef.load_dataset(tmp_path / "ds")
    cfg = ef.config_from_dict(config if config is not None else report.suggested_config or {})
    return report, ds, cfg, ef.execution_scores(ds, cfg).collect()


def test_french_greeting_case_score_and_nested_assert_set(tmp_path):
    report, ds, cfg, ex = _scored(FRENCH, tmp_path)
    assert report.suggested_config is not None
    perf = report.suggested_config["evaluators"]["Performance"]
    assert perf["min_score"] == 0.5
    assert set(perf["children"]) == {"cost", "latency"}
    row = ex.row(0, named=True)
    # (2·1 + 1 + 0.6015 + 0.5) / 5, failing the test's 0.9 threshold
    assert row["score"] == pytest.approx(0.8203, abs=5e-5)
    assert row["score"] == pytest.approx(row["reported_score"], abs=1e-12)
    assert row["threshold"] == 0.9
    assert row["passed"] is False and row["verdict"] != "pass"
    nodes = ef.evaluator_scores(ds, cfg).filter(pl.col("path") != "").collect()
    # promptfoo's assertion counts: 4 pass / 2 fail (the nested set counts as one)
    assert nodes.get_column("passed").sum() == 4
    assert (~nodes.get_column("passed")).sum() == 2
    assert nodes.filter(pl.col("path") == "Performance").item(0, "score") == 0.5


def test_french_greeting_leaf_rows_keep_weights_and_skip_flattened_copies(tmp_path):
    ingest("promptfoo", [FRENCH], tmp_path / "ds")
    scores = pl.read_parquet(tmp_path / "ds" / "scores.parquet")
    assert scores.height == 5  # promptfoo repeats the set's children after it; not here
    weights = dict(zip(scores["evaluator"], scores["weight"], strict=True))
    assert weights["Correctness"] == 2.0 and weights["Tone"] == 1.0
    assert weights["Performance/latency"] is None


def test_sample_export_four_failures_two_runs(tmp_path):
    report, ds, cfg, ex = _scored(EXPORT, tmp_path)
    assert len(report.runs_added) == 2
    assert all(r.endswith(("openai:gpt-5", "openai:gpt-5-mini")) for r in report.runs_added)
    assert ex.height == 4
    assert ex.get_column("passed").sum() == 0  # stats: 0 successes, 4 failures, 0 errors
    assert (ex.get_column("status") == "error").sum() == 0
    assert ex["score"].to_list() == pytest.approx(ex["reported_score"].to_list())
    runs = ef.run_summary(ef.execution_scores(ds, cfg), cfg, runs=ds.runs).collect()
    assert runs.get_column("failed").sum() == 4


def test_likert_provider_errors_are_error_executions(tmp_path):
    _report, ds, cfg, ex = _scored(LIKERT, tmp_path)
    runs = ef.run_summary(ef.execution_scores(ds, cfg), cfg, runs=ds.runs).collect().sort("run_id")
    by_provider = {r["run_id"].rsplit("/", 1)[1]: r for r in runs.iter_rows(named=True)}
    assert by_provider["google:gemini-2.5-pro"]["errored"] == 5
    assert by_provider["xai:grok-4"]["passed"] == 5
    # stats: 5 successes, 0 failures, 5 errors
    assert ex.get_column("passed").sum() == 5
    assert (ex.get_column("verdict") == "error").sum() == 5
    assert set(ex.get_column("case_id")) == {f"Row #{i}" for i in range(1, 6)}


def test_malformed_json_names_file_and_line(tmp_path):
    bad = tmp_path / "bad.json"
    text = FRENCH.read_text()
    bad.write_text(text[: len(text) // 2])
    with pytest.raises(IngestError, match=r"bad\.json:\d+:\d+: not valid JSON"):
        ingest("promptfoo", [bad], tmp_path / "ds")
    assert not (tmp_path / "ds").exists()


def test_not_a_results_file(tmp_path):
    other = tmp_path / "x.json"
    other.write_text('{"results": {"version": 3}}')
    with pytest.raises(IngestError, match="not a promptfoo results file"):
        ingest("promptfoo", [other], tmp_path / "ds")
