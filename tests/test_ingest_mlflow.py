"""MLflow ingestion: mlflow.evaluate's eval_results_table.json (alone or in an mlruns/ file
store, with the run's name, params, tags and logged metrics) and MLflow 3 trace exports
(search_traces() as JSON or Parquet) with judge feedback, human feedback and expectations.
The per-run aggregates MLflow logged are reproduced from the ingested rows."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

import evalframe as ef
from evalframe._private.ingest import IngestError, ingest
from evalframe.cli import app

BUILT = Path(__file__).parent / "fixtures" / "built" / "mlflow"
MLRUNS = BUILT / "mlruns"
EXPERIMENT = MLRUNS / "417360514082214741"
RUN_A, RUN_B = "c0ffee5e1a2b4c3d9e8f7a6b5c4d3e2f", "f00dfeed9a8b4c7d8e6f5a4b3c2d1e0f"
TRACES_JSON = BUILT / "traces" / "search_traces.json"
TRACES_PARQUET = BUILT / "traces" / "search_traces.parquet"
JUDGED = "answer_correctness/v1"


def _read(ds: Path, table: str) -> pl.DataFrame:
    return pl.read_parquet(ds / f"{table}.parquet")


def _logged(run: str) -> dict[str, float]:
    """The run's metrics/ files as MLflow wrote them: key -> last value."""
    folder = EXPERIMENT / run / "metrics"
    return {
        p.relative_to(folder).as_posix(): float(p.read_text().split()[1])
        for p in folder.rglob("*")
        if p.is_file()
    }


# --- mlflow.evaluate: a whole mlruns/ store ----------------------------------------------------
def test_each_run_of_the_store_becomes_a_run_with_name_params_and_tags(tmp_path):
    report = ingest("mlflow", [MLRUNS], tmp_path / "ds")
    assert sorted(report.runs_added) == [RUN_A, RUN_B]
    runs = _read(tmp_path / "ds", "runs").sort("run_id")
    assert runs["label"].to_list() == ["gpt-4o-mini-prompt-v1", "gpt-4o-prompt-v2"]
    assert runs["experiment_id"].to_list() == ["417360514082214741"] * 2
    assert json.loads(runs["params"][0]) == {
        "model": "gpt-4o-mini",
        "prompt_version": "1",
        "temperature": "0.0",
    }
    assert json.loads(runs["run_tags"][1])["team"] == "search"
    assert str(runs["created_at"][0]) == "2025-06-04 08:00:00"  # start_time, UTC
    assert json.loads(runs["reported_metrics"][0]) == pytest.approx(_logged(RUN_A))


def test_metric_scales_justifications_and_a_failed_judge(tmp_path):
    report = ingest("mlflow", [MLRUNS], tmp_path / "ds")
    scores = _read(tmp_path / "ds", "scores")
    scale = dict(scores.group_by("evaluator").agg(pl.col("scale_max").first()).iter_rows())
    assert scale == {JUDGED: 5.0, "toxicity/v1": 1.0}  # a judged metric grades 1-5
    # the grade level (8 to 12) is not on a 0-1 scale: kept, with a note
    assert sum("'flesch_kincaid_grade_level/v1' not scored" in n for n in report.skipped) == 2
    ex = _read(tmp_path / "ds", "executions")
    assert ex["flesch_kincaid_grade_level/v1/score"].null_count() == 0
    assert ex["latency_ms"].to_list()[0] == pytest.approx(1210.0)  # latency is seconds
    assert ex["output_tokens"].to_list()[0] == 18
    judged = scores.filter(pl.col("evaluator") == JUDGED).sort("run_id", "case_id")
    table = json.loads((EXPERIMENT / RUN_A / "artifacts" / "eval_results_table.json").read_text())
    col = table["columns"].index(f"{JUDGED}/justification")
    assert judged["reason"].to_list()[:5] == [row[col] for row in table["data"]]
    failed = judged.filter(pl.col("score").is_null())
    assert failed.height == 1 and failed["reason"][0].startswith("Failed to score model")


def test_the_aggregates_mlflow_logged_are_reproduced_for_each_run(tmp_path):
    """mean, variance (numpy's, over n) and p90 (linear) over the scores that are not
    null, as mlflow.evaluate logs them in metrics/<metric>/<stat>."""
    ingest("mlflow", [MLRUNS], tmp_path / "ds")
    scores = _read(tmp_path / "ds", "scores")
    ex = _read(tmp_path / "ds", "executions")
    for run in (RUN_A, RUN_B):
        logged = _logged(run)
        mine = scores.filter(pl.col("run_id") == run)
        for metric in (JUDGED, "toxicity/v1"):
            values = mine.filter(pl.col("evaluator") == metric)["score"].drop_nulls()
            assert values.mean() == pytest.approx(logged[f"{metric}/mean"]), (run, metric)
            assert values.var(ddof=0) == pytest.approx(logged[f"{metric}/variance"])
            assert values.quantile(0.9, "linear") == pytest.approx(logged[f"{metric}/p90"])
        grade = ex.filter(pl.col("run_id") == run)["flesch_kincaid_grade_level/v1/score"]
        assert grade.mean() == pytest.approx(logged["flesch_kincaid_grade_level/v1/mean"])
        latency = ex.filter(pl.col("run_id") == run)["latency_ms"] / 1000
        assert latency.mean() == pytest.approx(logged["latency/mean"])
    # evalframe's own run mean of the judged metric is MLflow's mean on the 0-1 scale
    cfg = ef.config_from_dict({"evaluators": {JUDGED: {}}})
    ds = ef.load_dataset(tmp_path / "ds")
    summary = ef.run_summary(ef.execution_scores(ds, cfg), cfg, runs=ds.runs).collect()
    for run in (RUN_A, RUN_B):
        mean = summary.filter(pl.col("run_id") == run)["mean_score"][0]
        assert mean == pytest.approx(_logged(run)[f"{JUDGED}/mean"] / 5)


def test_scale_max_scores_an_unbounded_metric(tmp_path):
    ingest("mlflow", [MLRUNS], tmp_path / "ds", scale_max="flesch_kincaid_grade_level/v1=20")
    scores = _read(tmp_path / "ds", "scores")
    grade = scores.filter(pl.col("evaluator") == "flesch_kincaid_grade_level/v1")
    assert grade.height == 10 and grade["scale_max"].unique().to_list() == [20.0]


def test_one_table_file_alone_and_outside_a_store(tmp_path):
    table = EXPERIMENT / RUN_A / "artifacts" / "eval_results_table.json"
    ingest("mlflow", [table], tmp_path / "ds")  # inside its run folder: the run's metadata
    assert _read(tmp_path / "ds", "runs")["label"].to_list() == ["gpt-4o-mini-prompt-v1"]
    bare = tmp_path / "exported" / "eval_results_table.json"
    bare.parent.mkdir()
    shutil.copy(table, bare)
    report = ingest("mlflow", [bare], tmp_path / "ds2", run_id="baseline")
    assert report.runs_added == ("baseline",)
    assert _read(tmp_path / "ds2", "scores").height == 10


def test_the_cases_command_shows_the_justifications(tmp_path):
    ingest("mlflow", [MLRUNS], tmp_path / "ds")
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"evaluators": {JUDGED: {}}}))
    res = CliRunner().invoke(app, ["score", str(tmp_path / "ds"), "--config", str(cfg)])
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(
        app, ["cases", str(tmp_path / "ds"), "--run", RUN_A, "--status", "fail", "--json"]
    )
    assert res.exit_code == 0, res.output
    text = json.dumps(json.loads(res.stdout))
    assert "significant discrepancies with the provided targets" in text


# --- MLflow 3 traces -----------------------------------------------------------------------
@pytest.mark.parametrize("src", [TRACES_JSON, TRACES_PARQUET], ids=["json", "parquet"])
def test_trace_assessments_to_scores_and_labels(tmp_path, src):
    report = ingest("mlflow", [src], tmp_path / "ds")
    assert sorted(report.runs_added) == [RUN_A, RUN_B]  # trace_metadata mlflow.sourceRun
    scores = _read(tmp_path / "ds", "scores")
    assert set(scores["evaluator"]) == {"correctness"}
    # the judge's yes / no as 1 / 0; its failed call unscored with the error as reason
    means = dict(scores.group_by("run_id").agg(pl.col("score").mean()).iter_rows())
    assert means == {RUN_A: pytest.approx(0.75), RUN_B: pytest.approx(0.8)}
    failed = scores.filter(pl.col("score").is_null())
    assert failed["reason"].to_list() == ["429 Too Many Requests"]
    # an overridden verdict (valid: false) is not a second score
    assert scores.group_by("run_id", "case_id").len()["len"].max() == 1
    labels = _read(tmp_path / "ds", "labels").sort("run_id", "case_id")
    assert labels["rater"].unique().to_list() == ["ben@example.com"]
    assert labels["label_passed"].to_list() == [True, False, True, False]
    ex = _read(tmp_path / "ds", "executions")
    assert ex["expectation/expected_response"].null_count() == 0  # text: kept beside
    assert ex["feedback/response_length"].min() > 1  # a count: kept, not scored
    assert any("'response_length' not scored" in n for n in report.skipped)
    assert ex["latency_ms"].to_list()[0] == 800.0


def test_json_and_parquet_exports_give_the_same_tables(tmp_path):
    ingest("mlflow", [TRACES_JSON], tmp_path / "a")
    ingest("mlflow", [TRACES_PARQUET], tmp_path / "b")
    for table in ("scores", "labels"):
        assert _read(tmp_path / "a", table).equals(_read(tmp_path / "b", table)), table


def test_case_ids_from_the_request_line_runs_up(tmp_path):
    ingest("mlflow", [TRACES_JSON], tmp_path / "ds", id_cols="case_id=request")
    scores = _read(tmp_path / "ds", "scores")
    assert scores["case_id"].n_unique() == 5
    assert json.loads(scores["case_id"][0]) == {"question": "What is MLflow?"}


# --- the format is registered, and bad input is exit 2 -------------------------------------
def test_the_cli_ingests_mlflow(tmp_path):
    res = CliRunner().invoke(app, ["ingest", "mlflow", str(MLRUNS), "--to", str(tmp_path / "d")])
    assert res.exit_code == 0, res.output
    assert RUN_A in res.stdout


def _table(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "eval_results_table.json"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        ('{"columns": ["inputs", "m/v1/score"], "data": [["q"]]}', r"rows of 2 values"),
        ('{"columns": ["inputs"], "data": [["q"]]}', r"no `<metric>/score` columns"),
        ('{"columns": ["m/v1/score"], "data": [[Infinity]]}', r"m/v1/score is Infinity"),
        ('{"columns": ["m/v1/score"], "data": [["high"]]}', r"must be a number"),
        ('[{"x": 1}]', r"not an MLflow trace export"),
    ],
)
def test_malformed_files_are_clear_errors(tmp_path, text, pattern):
    path = _table(tmp_path, text)
    with pytest.raises(IngestError, match=pattern):
        ingest("mlflow", [path], tmp_path / "ds")
    assert not (tmp_path / "ds").exists()


def test_a_nan_score_is_pandas_missing_value_counted_in_one_note(tmp_path):
    path = _table(tmp_path, '{"columns": ["m/v1/score"], "data": [[0.5], [NaN], [NaN]]}')
    report = ingest("mlflow", [path], tmp_path / "ds")
    assert _read(tmp_path / "ds", "scores")["score"].null_count() == 2
    [note] = [n for n in report.skipped if "non-finite" in n]
    assert note.startswith(f"{path}: 'scores.score': 2 non-finite values")


def test_a_folder_without_tables_is_a_clear_error(tmp_path):
    (tmp_path / "mlruns" / "0").mkdir(parents=True)
    with pytest.raises(IngestError, match=r"no eval_results_table\.json in this folder"):
        ingest("mlflow", [tmp_path / "mlruns"], tmp_path / "ds")


def test_two_valid_verdicts_of_one_judge_on_one_trace_are_refused(tmp_path):
    rows = json.loads(TRACES_JSON.read_text())
    judge = next(a for a in rows[0]["assessments"] if a["assessment_name"] == "correctness")
    rows[0]["assessments"].append({**judge, "assessment_id": "a-again"})
    src = tmp_path / "traces.json"
    src.write_text(json.dumps(rows))
    with pytest.raises(IngestError, match=r"a second valid 'correctness' feedback on case"):
        ingest("mlflow", [src], tmp_path / "ds")


def test_meta_yaml_is_read_flat_without_expanding_aliases(tmp_path):
    run = tmp_path / "mlruns" / "1" / "abc"
    shutil.copytree(EXPERIMENT / RUN_A, run)
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 9)}]\n" for i in range(8)
    )
    (run / "meta.yaml").write_text("run_id: abc\nrun_name: 'bombed'\n" + bomb)
    ingest("mlflow", [tmp_path / "mlruns"], tmp_path / "ds")
    runs = _read(tmp_path / "ds", "runs")
    assert runs["run_id"].to_list() == ["abc"] and runs["label"].to_list() == ["bombed"]
