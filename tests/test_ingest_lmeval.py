"""lm-evaluation-harness ingestion: samples_<task>_<time>.jsonl; task metrics recomputed."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from evalframe._private.ingest import IngestError, ingest

FOLDER = Path(__file__).parent / "fixtures" / "built" / "lmeval" / "EleutherAI__pythia-160m"
TS = "2024-05-13T13-17-32.123456"
RESULTS = json.loads((FOLDER / f"results_{TS}.json").read_text())["results"]


def _means(tmp_path: Path) -> dict[tuple[str, str], tuple[float, float, int]]:
    scores = pl.read_parquet(tmp_path / "ds" / "scores.parquet").with_columns(
        task=pl.col("case_id").str.split("/").list.first()
    )
    agg = scores.group_by("task", "evaluator").agg(
        mean=pl.col("score").mean(), se=pl.col("score").std() / pl.len().sqrt(), n=pl.len()
    )
    return {
        (r["task"], r["evaluator"]): (r["mean"], r["se"], r["n"]) for r in agg.iter_rows(named=True)
    }


def test_task_metric_means_match_results_json(tmp_path):
    report = ingest("lmeval", [FOLDER], tmp_path / "ds")
    assert report.runs_added == (f"EleutherAI__pythia-160m/{TS}",)  # two tasks, one run
    means = _means(tmp_path)
    # lm-eval prints acc = mean over samples (and stderr = sample sd / sqrt(n))
    for task, metric, evaluator in [
        ("arc_easy", "acc,none", "acc"),
        ("arc_easy", "acc_norm,none", "acc_norm"),
        ("gsm8k", "exact_match,strict-match", "exact_match,strict-match"),
        ("gsm8k", "exact_match,flexible-extract", "exact_match,flexible-extract"),
    ]:
        mean, se, _n = means[task, evaluator]
        assert mean == pytest.approx(RESULTS[task][metric])
        stderr = metric.replace(",", "_stderr,", 1)
        assert se == pytest.approx(RESULTS[task][stderr])
    assert means["arc_easy", "acc"][0] == pytest.approx(0.6)
    assert means["gsm8k", "exact_match,flexible-extract"][2] == 4


def test_executions_runs_and_ids(tmp_path):
    ingest("lmeval", [FOLDER / f"samples_gsm8k_{TS}.jsonl"], tmp_path / "ds")
    ex = pl.read_parquet(tmp_path / "ds" / "executions.parquet").sort("case_id")
    assert ex["case_id"].to_list() == ["gsm8k/0", "gsm8k/1", "gsm8k/2", "gsm8k/3"]
    assert ex["response"].to_list()[1] == "[invalid]"  # first filter's filtered response
    runs = pl.read_parquet(tmp_path / "ds" / "runs.parquet").row(0, named=True)
    assert runs["model"] == "EleutherAI/pythia-160m" and runs["tasks"] == "gsm8k"
    assert json.loads(runs["reported_metrics"])["gsm8k"]["exact_match,strict-match"] == 0.5
    assert str(runs["created_at"]) == "2024-05-13 13:17:32.123456"


def test_counts_and_lists_are_kept_and_reported(tmp_path):
    src = tmp_path / "m" / f"samples_wiki_{TS}.jsonl"
    src.parent.mkdir()
    rows = [
        {"doc_id": 0, "filter": "none", "metrics": ["acc", "bleu", "word_perplexity"],
         "acc": 1.0, "bleu": 31.5, "word_perplexity": [-12.5, 7]},
        {"doc_id": 1, "filter": "none", "metrics": ["acc", "bleu", "word_perplexity"],
         "acc": 0.0, "bleu": 8.0, "word_perplexity": [-20.0, 9]},
    ]  # fmt: skip
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    report = ingest("lmeval", [src], tmp_path / "ds", run_id="r")
    assert report.runs_added == ("r",)
    assert any("'bleu' not scored" in s and "--scale-max" in s for s in report.skipped)
    assert any("'word_perplexity' not scored" in s for s in report.skipped)
    scores = pl.read_parquet(tmp_path / "ds" / "scores.parquet")
    assert scores["evaluator"].unique().to_list() == ["acc"]
    ex = pl.read_parquet(tmp_path / "ds" / "executions.parquet").sort("case_id")
    assert ex["bleu"].to_list() == [31.5, 8.0]
    report = ingest("lmeval", [src], tmp_path / "ds2", run_id="r", scale_max="bleu=100")
    scores = pl.read_parquet(tmp_path / "ds2" / "scores.parquet")
    assert set(scores["evaluator"]) == {"acc", "bleu"}


def test_malformed_lines_and_names(tmp_path):
    src = tmp_path / f"samples_t_{TS}.jsonl"
    src.write_text('{"doc_id": 0, "acc": 1}\n{"acc": 0}\n')
    with pytest.raises(IngestError, match=r"samples_t_.*\.jsonl:2: missing `doc_id`"):
        ingest("lmeval", [src], tmp_path / "ds")
    other = tmp_path / "results.jsonl"
    other.write_text('{"doc_id": 0}\n')
    with pytest.raises(IngestError, match="not an lm-evaluation-harness samples file"):
        ingest("lmeval", [other], tmp_path / "ds")


def test_json_nested_thousands_deep_is_a_clear_error(tmp_path):
    src = tmp_path / "samples_task_2025.jsonl"
    src.write_text('{"doc_id": 0, "resps": ' + "[" * 50_000 + "]" * 50_000 + "}\n")
    with pytest.raises(IngestError, match=r"samples_task_2025\.jsonl:1: JSON nested deeper"):
        ingest("lmeval", [src], tmp_path / "ds")
