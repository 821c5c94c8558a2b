"""lm-evaluation-harness ingestion: samples_<task>_<time>.jsonl; task metrics recomputed."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

import evalframe as ef
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
    # the results file's own `date` (epoch seconds, UTC), not the file name's local clock
    assert str(runs["created_at"]) == "2024-05-13 13:17:32"


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


def _mmlu_run(tmp_path: Path) -> Path:
    """Two subtasks of a group, as lm-eval writes them: the group's aggregate in
    `results` (and `groups`), a NaN stderr, a perplexity pair with -Infinity."""
    folder = tmp_path / "out" / "org__model"
    folder.mkdir(parents=True)
    for task, accs in (("mmlu_a", [1.0, 0.0]), ("mmlu_b", [1.0, 1.0])):
        lines = [
            f'{{"doc_id": {i}, "filter": "none", "metrics": ["acc", "ppl"], "acc": {a}, '
            f'"ppl": [{"-Infinity" if task == "mmlu_b" and i == 1 else -3.5}, 4]}}'
            for i, a in enumerate(accs)
        ]
        (folder / f"samples_{task}_{TS}.jsonl").write_text("\n".join(lines) + "\n")
    (folder / f"results_{TS}.json").write_text(
        '{"results": {"mmlu": {"acc,none": 0.75, "acc_stderr,none": NaN},\n'
        '  "mmlu_a": {"acc,none": 0.5, "acc_stderr,none": 0.5},\n'
        '  "mmlu_b": {"acc,none": 1.0, "acc_stderr,none": 0.0},\n'
        '  "other": {"acc,none": 0.1}},\n'
        ' "groups": {"mmlu": {"acc,none": 0.75, "acc_stderr,none": NaN}},\n'
        ' "group_subtasks": {"mmlu": ["mmlu_a", "mmlu_b"], "other": []}}\n'
    )
    return folder


def test_group_aggregate_is_kept_and_non_finite_values_are_valid_json(tmp_path):
    folder = _mmlu_run(tmp_path)
    report = ingest("lmeval", [folder], tmp_path / "ds")
    runs = pl.read_parquet(tmp_path / "ds" / "runs.parquet").row(0, named=True)
    strict = json.loads(runs["reported_metrics"], parse_constant=pytest.fail)
    assert set(strict) == {"mmlu_a", "mmlu_b", "mmlu"}  # the group, not unrelated tasks
    assert strict["mmlu"] == {"acc,none": 0.75, "acc_stderr,none": "NaN"}
    # the group's acc is lm-eval's mean over its subtasks' documents
    scores = pl.read_parquet(tmp_path / "ds" / "scores.parquet")
    assert scores.filter(pl.col("evaluator") == "acc")["score"].mean() == strict["mmlu"]["acc,none"]
    # a perplexity pair holding -Infinity is kept as valid JSON text, with a note
    ex = pl.read_parquet(tmp_path / "ds" / "executions.parquet").sort("case_id")
    pairs = [json.loads(v, parse_constant=pytest.fail) for v in ex["ppl"]]
    assert pairs[-1] == ["-Infinity", 4]
    assert any("'ppl' not scored" in n for n in report.skipped)


def test_skipped_notes_name_the_files_holding_the_metric(tmp_path):
    folder = tmp_path / "m"
    folder.mkdir()
    (folder / f"samples_a_{TS}.jsonl").write_text('{"doc_id": 0, "acc": 1.0}\n')
    (folder / f"samples_b_{TS}.jsonl").write_text('{"doc_id": 0, "bleu": 31.5}\n')
    report = ingest("lmeval", [folder], tmp_path / "ds")
    [note] = [n for n in report.skipped if "'bleu'" in n]
    assert note.startswith(f"samples_b_{TS}.jsonl: 'bleu' not scored")


def test_created_at_from_the_file_name_without_a_results_file(tmp_path):
    folder = tmp_path / "m"
    folder.mkdir()
    (folder / f"samples_a_{TS}.jsonl").write_text('{"doc_id": 0, "acc": 1.0}\n')
    ingest("lmeval", [folder], tmp_path / "ds")
    runs = pl.read_parquet(tmp_path / "ds" / "runs.parquet")
    assert str(runs["created_at"][0]) == "2024-05-13 13:17:32.123456"  # local clock, as named


LOWER = Path(__file__).parent / "fixtures" / "built" / "lmeval" / "EleutherAI__pythia-70m"
LOWER_TS = "2024-06-02T09-41-07.554210"


def test_lower_is_better_metrics_reproduce_lm_eval_under_the_default_config(tmp_path):
    """realtoxicityprompts' toxicity is `higher_is_better: false` in the results file:
    the suggested config says so; wikitext's perplexities (no finite top) stay
    passthrough with a note. The default config plus the suggestion scores s = 1 -
    toxicity: the run's mean is 1 - the tool's number, the raw mean is the tool's."""
    results = json.loads((LOWER / f"results_{LOWER_TS}.json").read_text())["results"]
    report = ingest("lmeval", [LOWER], tmp_path / "ds")
    assert report.suggested_config == {
        "evaluators": {"toxicity_perspective_api": {"higher_is_better": False}}
    }
    for metric in ("word_perplexity", "byte_perplexity", "bits_per_byte"):
        assert any(f"{metric!r} not scored" in n for n in report.skipped), metric
    tool = results["realtoxicityprompts"]["toxicity_perspective_api,none"]
    assert tool == 0.25
    cfg = ef.config_from_dict(report.suggested_config)
    for engine in ("polars", "duckdb"):
        tables = ef.score_tables(tmp_path / "ds", cfg, engine=engine)
        run = tables["run_summary"].row(0, named=True)
        assert run["mean_score"] == pytest.approx(1 - tool), engine
        ex = tables["execution_scores"].filter(pl.col("case_id").str.starts_with("real"))
        # one toxic continuation of four: three pass (s = 1), one fails (s = 0)
        assert sorted(ex["verdict"].to_list()) == ["fail", "pass", "pass", "pass"], engine
        assert run["unscored"] == 3  # the wikitext documents: perplexities only
    means = _means(tmp_path)
    mean, se, n = means["realtoxicityprompts", "toxicity_perspective_api"]
    assert (mean, n) == (pytest.approx(tool), 4)
    assert se == pytest.approx(
        results["realtoxicityprompts"]["toxicity_perspective_api_stderr,none"]
    )


def test_a_scalar_metric_with_no_finite_top_stays_passthrough(tmp_path):
    folder = tmp_path / "m"
    folder.mkdir()
    rows = [
        {"doc_id": i, "filter": "none", "metrics": ["acc", "bits_per_byte"],
         "acc": float(i % 2), "bits_per_byte": 0.5 + i / 10}
        for i in range(3)
    ]  # fmt: skip
    (folder / f"samples_t_{TS}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    table = {"higher_is_better": {"t": {"acc": True, "bits_per_byte": False}}}
    (folder / f"results_{TS}.json").write_text(json.dumps({"results": {}, **table}))
    report = ingest("lmeval", [folder], tmp_path / "ds")
    assert report.suggested_config is None  # acc is higher-is-better: the default scores it
    assert any("'bits_per_byte' not scored: lower is better" in n for n in report.skipped)
    scores = pl.read_parquet(tmp_path / "ds" / "scores.parquet")
    assert scores["evaluator"].unique().to_list() == ["acc"]
    ex = pl.read_parquet(tmp_path / "ds" / "executions.parquet").sort("case_id")
    assert ex["bits_per_byte"].to_list() == pytest.approx([0.5, 0.6, 0.7])
