"""NaN and infinities in other tools' files, one rule for every format: a value that becomes
a score must be finite (exit 2 naming file, line and field); a non-finite value anywhere
else keeps its row, is left null (or stays text inside a JSON text field) and is counted
in one note per file and field; the rest of the run is ingested."""

from __future__ import annotations

import json
import math
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

import evalframe as ef
from evalframe._private.ingest import ingest
from evalframe.cli import app

FIXTURES = Path(__file__).parent / "fixtures"
REGRESSION = FIXTURES / "built" / "lmeval" / "Qwen__Qwen2.5-0.5B"
REG_TS = "2025-03-11T08-15-42.902117"
REG_SAMPLES = REGRESSION / f"samples_stsb_regression_{REG_TS}.jsonl"
INSPECT_DICT = FIXTURES / "built/inspect_ai/2025-06-03T14-02-11+00-00_capitals_dict-scores.json"


def _cli(fmt: str, src: Path, to: Path, *extra: str) -> tuple[int, str, str]:
    res = CliRunner().invoke(app, ["ingest", fmt, str(src), "--to", str(to), *extra])
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    return res.exit_code, " ".join(res.stdout.split()), " ".join(res.stderr.split())


def _notes(report, field: str) -> list[str]:
    return [n for n in report.skipped if f"'{field}'" in n and "non-finite" in n]


# --- lm-evaluation-harness: a regression task whose mae is Infinity in 17 of 24 lines ----------
def test_lmeval_regression_run_with_infinite_mae_ingests(tmp_path):
    lines = REG_SAMPLES.read_text().splitlines()
    assert sum('"mae": Infinity' in line for line in lines) == 17 and len(lines) == 24
    report = ingest("lmeval", [REGRESSION], tmp_path / "ds")
    ex = pl.read_parquet(tmp_path / "ds" / "executions.parquet")
    assert ex.height == 24  # every document keeps its execution
    assert ex["mae"].null_count() == 17
    finite = [json.loads(line)["mae"] for line in lines]
    assert sorted(ex["mae"].drop_nulls()) == sorted(v for v in finite if math.isfinite(v))
    [note] = _notes(report, "executions.mae")
    assert note.startswith(f"{REG_SAMPLES}: 'executions.mae': 17 non-finite values")
    assert any("'mae' not scored" in n for n in report.skipped)
    # the scored metric is the tool's number
    results = json.loads((REGRESSION / f"results_{REG_TS}.json").read_text())["results"]
    scores = pl.read_parquet(tmp_path / "ds" / "scores.parquet")
    assert set(scores["evaluator"]) == {"exact_match"}
    assert scores["score"].mean() == pytest.approx(results["stsb_regression"]["exact_match,none"])
    # the tool's own aggregate (mae Infinity, stderr NaN) stays valid JSON text, counted
    runs = pl.read_parquet(tmp_path / "ds" / "runs.parquet")
    reported = json.loads(runs["reported_metrics"][0], parse_constant=pytest.fail)
    assert reported["stsb_regression"]["mae,none"] == "Infinity"
    [agg] = _notes(report, "runs.reported_metrics")
    assert "2 non-finite values" in agg and "kept as text" in agg


def test_lmeval_regression_run_on_the_cli_prints_one_note_per_field(tmp_path):
    code, out, err = _cli("lmeval", REGRESSION, tmp_path / "ds")
    assert code == 0, err
    assert out.count("'executions.mae': 17 non-finite values") == 1


def test_lmeval_infinite_mae_that_would_be_scored_is_refused_naming_the_line(tmp_path):
    """Without the results file, mae's direction is unknown: its finite values are all
    within 0-5 under --scale-max, so it is scored, and its first Infinity is refused."""
    folder = tmp_path / "org__m"
    folder.mkdir()
    (folder / REG_SAMPLES.name).write_text(REG_SAMPLES.read_text())
    code, _out, err = _cli("lmeval", folder, tmp_path / "ds", "--scale-max", "mae=5")
    assert code == 2
    assert f"{folder / REG_SAMPLES.name}:1" in err and "'mae' is Infinity" in err
    assert not (tmp_path / "ds").exists()


# --- the other formats -------------------------------------------------------------------------
def _deepeval(tmp_path: Path, case: str) -> Path:
    path = tmp_path / "test_run.json"
    path.write_text(
        '{"testCases": [\n'
        '  {"name": "a", "success": true, "metricsData": [\n'
        '    {"name": "m", "score": 0.5, "threshold": 0.5, "success": true}]},\n'
        f"  {case}\n"
        "]}\n"
    )
    return path


@pytest.mark.parametrize(
    ("case", "field", "column"),
    [
        ('{"name": "b", "completionTime": NaN, "metricsData": []}', "completionTime", "latency_ms"),
        ('{"name": "b", "tokenCost": Infinity, "metricsData": []}', "tokenCost", "cost_usd"),
        ('{"name": "b", "completionTime": 1e400, "metricsData": []}', "", "latency_ms"),
    ],
)
def test_deepeval_non_finite_metadata_is_null_with_a_note(tmp_path, case, field, column):
    src = _deepeval(tmp_path, case)
    report = ingest("deepeval", [src], tmp_path / "ds")
    ex = pl.read_parquet(tmp_path / "ds" / "executions.parquet")
    assert ex.height == 2 and ex[column].null_count() == 2
    [note] = _notes(report, f"executions.{column}")
    assert note.startswith(f"{src}: ") and "1 non-finite value " in note


def test_deepeval_non_finite_score_is_refused(tmp_path):
    src = _deepeval(tmp_path, '{"name": "b", "metricsData": [{"name": "m", "score": NaN}]}')
    code, _out, err = _cli("deepeval", src, tmp_path / "ds")
    assert code == 2 and str(src) in err and "line 4" in err and "not a finite number" in err


def test_promptfoo_non_finite_reported_score_and_latency_are_null_with_notes(tmp_path):
    """A row's own `score` is the tool's aggregate (reported_score), not a score."""
    src = tmp_path / "p.json"
    src.write_text(
        '{"results": {"results": [\n'
        '{"score": -Infinity, "latencyMs": NaN, "testIdx": 0, "success": false,\n'
        ' "gradingResult": {"componentResults": [{"score": 0, "pass": false,\n'
        '   "assertion": {"type": "equals"}}]}}]}}'
    )
    report = ingest("promptfoo", [src], tmp_path / "ds")
    ex = pl.read_parquet(tmp_path / "ds" / "executions.parquet")
    assert ex["reported_score"].to_list() == [None] and ex["latency_ms"].to_list() == [None]
    assert _notes(report, "executions.reported_score") and _notes(report, "executions.latency_ms")
    assert pl.read_parquet(tmp_path / "ds" / "scores.parquet")["score"].to_list() == [0.0]


def test_promptfoo_non_finite_assertion_score_is_refused(tmp_path):
    src = tmp_path / "p.json"
    src.write_text(
        '{"results": {"results": [\n{"score": 0, "testIdx": 0, "gradingResult":\n'
        ' {"componentResults": [{"score": NaN, "assertion": {"type": "equals"}}]}}]}}'
    )
    code, _out, err = _cli("promptfoo", src, tmp_path / "ds")
    assert code == 2 and str(src) in err and "line 3" in err


def test_agentv_non_finite_duration_is_null_and_score_is_refused(tmp_path):
    ok = tmp_path / "ok.jsonl"
    ok.write_text(
        '{"test_id": "a", "score": 0.5, "duration_ms": Infinity}\n'
        '{"test_id": "b", "score": 1.0, "duration_ms": 12}\n'
    )
    report = ingest("agentv", [ok], tmp_path / "ds")
    ex = pl.read_parquet(tmp_path / "ds" / "executions.parquet").sort("case_id")
    assert ex["latency_ms"].to_list() == [None, 12.0]
    [note] = _notes(report, "executions.latency_ms")
    assert note.startswith(f"{ok}: ")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"test_id": "a", "score": 0.5}\n{"test_id": "b", "score": NaN}\n')
    code, _out, err = _cli("agentv", bad, tmp_path / "ds2")
    assert code == 2 and f"{bad}:2" in err


def _inspect_with(tmp_path: Path, old: str, new: str) -> Path:
    text = json.dumps(json.loads(INSPECT_DICT.read_text()), indent=2)
    assert old in text
    path = tmp_path / INSPECT_DICT.name
    path.write_text(text.replace(old, new, 1))
    return path


@pytest.mark.parametrize(
    ("old", "new", "column"),
    [
        ('"words": 12', '"words": Infinity', "answer_quality/words"),
        ('"total_time": 0.812', '"total_time": NaN', "latency_ms"),
        ('"input_tokens": 52', '"input_tokens": 1e999', "input_tokens"),
    ],
)
def test_inspect_non_finite_unscored_values_are_null_with_a_note(tmp_path, old, new, column):
    src = _inspect_with(tmp_path, old, new)
    report = ingest("inspect", [src], tmp_path / "ds")
    ex = pl.read_parquet(tmp_path / "ds" / "executions.parquet")
    assert ex[column].null_count() == 1
    [note] = _notes(report, f"executions.{column}")
    assert note.startswith(f"{src}: ") and "1 non-finite value " in note
    assert report.rows["scores"] > 0


def test_inspect_non_finite_scored_value_is_refused(tmp_path):
    src = _inspect_with(tmp_path, '"correct": 1', '"correct": NaN')
    code, _out, err = _cli("inspect", src, tmp_path / "ds")
    assert code == 2 and str(src) in err and "not a finite number" in err


def test_wide_non_finite_extra_column_is_null_and_metric_is_refused(tmp_path):
    src = tmp_path / "w.jsonl"
    src.write_text(
        '{"run_id": "r", "case_id": "a", "m": 0.5, "latency_ms": NaN}\n'
        '{"run_id": "r", "case_id": "b", "m": 1.0, "latency_ms": 20}\n'
    )
    report = ingest("wide", [src], tmp_path / "ds", metrics="m")
    ex = pl.read_parquet(tmp_path / "ds" / "executions.parquet").sort("case_id")
    assert ex["latency_ms"].to_list() == [None, 20.0]
    assert _notes(report, "executions.latency_ms")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"run_id": "r", "case_id": "a", "m": 1e999}\n')
    code, _out, err = _cli("wide", bad, tmp_path / "ds2")
    assert code == 2 and f"{bad}:1" in err and "not a finite number" in err


def test_langfuse_non_finite_score_value_is_refused(tmp_path):
    src = tmp_path / "scores.jsonl"
    src.write_text(
        '{"id": "s1", "trace_id": "t1", "name": "c", "value": NaN, "data_type": "NUMERIC",'
        ' "source": "EVAL", "dataset_run_id": "r"}\n'
    )
    code, _out, err = _cli("langfuse", src, tmp_path / "ds")
    assert code == 2 and str(src) in err and "not a finite number" in err


def test_scores_read_back_are_finite(tmp_path):
    ingest("lmeval", [REGRESSION], tmp_path / "ds")
    cfg = ef.config_from_dict({})
    ds = ef.load_dataset(tmp_path / "ds")
    run = ef.run_summary(ef.execution_scores(ds, cfg), cfg, runs=ds.runs).collect()
    assert run["executions"][0] == 24 and math.isfinite(run["mean_score"][0])
