"""Langfuse score exports: the numbers Langfuse reports, human annotations as labels, and
every malformed row an exit-2 error naming file and line."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

import evalframe as ef
from evalframe._private.ingest import IngestError, ingest

BUILT = Path(__file__).parent / "fixtures" / "built" / "langfuse"
STEM = "scores_2026-07-01T09-00-00"
JSONL = BUILT / f"{STEM}.jsonl"
EXPORTS = [JSONL, BUILT / f"{STEM}.csv", BUILT / f"{STEM}.parquet"]
JUDGED = [0.9, 0.4, 1.0, 0.7, 0.2, 0.8]  # the correctness judge, traces 1-6


def _ingest(path: Path, tmp_path: Path, **kw):
    report = ingest("langfuse", [path], tmp_path / "ds", scale_max="helpfulness=5", **kw)
    return report, ef.load_dataset(tmp_path / "ds")


def _means(ds) -> dict[str, tuple[float, int]]:
    nodes = ef.evaluator_scores(ds, ef.config_from_dict({})).filter(pl.col("is_leaf")).collect()
    out = {}
    for name, group in nodes.group_by("evaluator"):
        raw = group["raw_score"].drop_nulls()
        out[str(name[0])] = (raw.mean(), raw.len())
    return out


@pytest.mark.parametrize("path", EXPORTS, ids=lambda p: p.suffix)
def test_means_per_score_name_are_langfuse_numbers(path, tmp_path):
    report, ds = _ingest(path, tmp_path)
    assert report.runs_added == (STEM,)
    means = _means(ds)
    run = ds.runs.collect().row(0, named=True)
    reported = json.loads(run["reported_metrics"])
    # the experiment's run-level score (trace_id null) is the mean the judge gave
    (avg,) = [v["avg_correctness"] for v in reported.values()]
    assert means["correctness"][0] == pytest.approx(avg, abs=1e-6)
    assert means["correctness"] == pytest.approx((sum(JUDGED) / 6, 6))
    assert means["helpfulness"] == pytest.approx((19 / 6, 6))  # the 1-5 rubric, raw
    assert means["user_feedback"] == pytest.approx((0.5, 4))  # 2 True, 2 False
    assert means["conciseness"] == pytest.approx((0.5, 1))
    assert set(means) == {"correctness", "helpfulness", "user_feedback", "conciseness"}
    assert run["created_at"].isoformat() == "2026-07-01T09:00:01.001000"


def test_the_three_file_types_give_the_same_tables(tmp_path):
    tables = []
    for i, path in enumerate(EXPORTS):
        ingest("langfuse", [path], tmp_path / str(i), run_id="r", scale_max="helpfulness=5")
        tables.append(
            {
                t: pl.read_parquet(tmp_path / str(i) / f"{t}.parquet").sort(pl.all())
                for t in ("scores", "executions", "labels")
            }
        )
    for other in tables[1:]:
        for name, df in other.items():
            assert df.equals(tables[0][name]), name


def test_annotations_are_labels_never_judge_scores(tmp_path):
    _report, ds = _ingest(JSONL, tmp_path)
    scores = pl.read_parquet(tmp_path / "ds" / "scores.parquet")
    assert "ANNOTATION" not in scores["score_source"].to_list()
    assert scores.filter(pl.col("evaluator") == "correctness").height == 6
    labels = pl.read_parquet(tmp_path / "ds" / "labels.parquet")
    by_rater = labels.group_by("rater", "evaluator").agg(
        pl.len(), pl.col("label_passed").sum(), pl.col("label_score").sum()
    )
    got = {(r["rater"], r["evaluator"]): r for r in by_rater.iter_rows(named=True)}
    assert got["user_anna", "correctness"]["len"] == 5
    assert got["user_anna", "correctness"]["label_passed"] == 2
    assert got["user_ben", "correctness"]["label_passed"] == 3
    assert got["user_anna", "helpfulness"]["label_score"] == 11.0
    assert labels.filter(pl.col("evaluator") == "helpfulness")["scale_max"].to_list() == [5.0] * 3
    agreement = ef.judge_agreement(ds).judge_agreement
    anna = agreement.filter(pl.col("rater") == "user_anna").row(0, named=True)
    # the judge passes at the default threshold 0.8: traces 1 and 3 of the five anna
    # labeled (0.9, 1.0; 0.4, 0.7, 0.2 fail); anna passes 1 and 3
    assert (anna["n_labeled"], anna["tp"], anna["fp"], anna["fn"], anna["tn"]) == (5, 2, 0, 0, 3)
    ben = agreement.filter(pl.col("rater") == "user_ben").row(0, named=True)
    assert (ben["n_labeled"], ben["tp"], ben["fn"]) == (3, 1, 2)  # passes 1, 2, 4


def test_categorical_scores_are_kept_as_columns_with_a_note(tmp_path):
    report, _ds = _ingest(JSONL, tmp_path)
    ex = pl.read_parquet(tmp_path / "ds" / "executions.parquet").sort("case_id")
    assert ex["topic"].to_list() == ["billing", "shipping", "billing", None, None, None]
    assert any("'topic' not scored" in note for note in report.skipped)


def test_id_cols_name_the_run_column_and_observation_cases(tmp_path):
    report = ingest(
        "langfuse",
        [JSONL],
        tmp_path / "ds",
        scale_max="helpfulness=5",
        id_cols="run_id=environment,case_id=observation_id",
    )
    assert report.runs_added == ("sdk-experiment",)
    cases = pl.read_parquet(tmp_path / "ds" / "scores.parquet")
    concise = cases.filter(pl.col("evaluator") == "conciseness")
    assert concise["case_id"].to_list() == ["a3d9e1f7c5b20486"]
    with pytest.raises(IngestError, match="no value in the run column 'session_id'"):
        ingest("langfuse", [JSONL], tmp_path / "d2", id_cols="run_id=session_id")
    with pytest.raises(IngestError, match="case_id=observation_id"):
        ingest("langfuse", [JSONL], tmp_path / "d3", id_cols="case_id=span")


def test_existing_labels_are_kept_and_replaced_with_their_run(tmp_path):
    ds = tmp_path / "ds"
    ingest("langfuse", [JSONL], ds, run_id="a", scale_max="helpfulness=5")
    ingest("langfuse", [JSONL], ds, run_id="b", scale_max="helpfulness=5")
    labels = pl.read_parquet(ds / "labels.parquet")
    assert labels.group_by("run_id").len().sort("run_id")["len"].to_list() == [11, 11]
    ingest("langfuse", [BUILT / f"{STEM}.csv"], ds, run_id="a", replace=True, scale_max=5)
    labels = pl.read_parquet(ds / "labels.parquet")
    assert labels.height == 22
    assert labels.filter(pl.col("run_id") == "a").height == 11
    ef.load_dataset(ds)  # still valid: no orphan labels


def _lines(tmp_path: Path, edit) -> Path:
    rows = [json.loads(line) for line in JSONL.read_text().splitlines()]
    edit(rows)
    out = tmp_path / "bad.jsonl"
    out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return out


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda r: r[2].update(data_type="TEXT"), r"bad\.jsonl:3: data_type 'TEXT'"),
        (lambda r: r[3].update(source="HUMAN"), r"bad\.jsonl:4: source 'HUMAN'"),
        (
            lambda r: r[4].update(value="high"),
            r"bad\.jsonl:5: value of score 'correctness' is 'high', not a number",
        ),
        (lambda r: r[0].update(value=1.5), r"bad\.jsonl:1: NUMERIC score 'correctness' is 1\.5"),
        (lambda r: r[12].update(value=0.5), r"bad\.jsonl:13: BOOLEAN score 'user_feedback'"),
        (lambda r: r[1].update(name=None), r"bad\.jsonl:2: a score without a `name`"),
        (
            lambda r: r.append(dict(r[0])),
            r"bad\.jsonl:33: a second score 'correctness'.*bad\.jsonl:1\)",
        ),
    ],
)
def test_malformed_rows_name_file_and_line(tmp_path, edit, message):
    bad = _lines(tmp_path, edit)
    with pytest.raises(IngestError, match=message):
        ingest("langfuse", [bad], tmp_path / "ds", scale_max="helpfulness=5")
    assert not (tmp_path / "ds" / "scores.parquet").exists()


def test_rubric_without_scale_max_is_refused_with_a_hint(tmp_path):
    with pytest.raises(IngestError, match=r":7: NUMERIC score 'helpfulness' is 4.*--scale-max"):
        ingest("langfuse", [JSONL], tmp_path / "ds")


def test_bad_csv_and_json_and_other_files(tmp_path):
    csv_bad = tmp_path / "bad.csv"
    lines = (BUILT / f"{STEM}.csv").read_text().splitlines()
    lines[4] = lines[4].replace(",NUMERIC,", ",NUMBER,")
    csv_bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(IngestError, match=r"bad\.csv:5: data_type 'NUMBER'"):
        ingest("langfuse", [csv_bad], tmp_path / "ds")
    broken = tmp_path / "broken.jsonl"
    broken.write_text(JSONL.read_text().replace('"EVAL"', "EVAL", 1))
    with pytest.raises(IngestError, match=r"broken\.jsonl:1: not valid JSON"):
        ingest("langfuse", [broken], tmp_path / "ds")
    other = tmp_path / "traces.jsonl"
    other.write_text('{"id": "t1", "name": "chat", "input": "hi"}\n')
    with pytest.raises(IngestError, match=r"traces\.jsonl:1: not a Langfuse scores export"):
        ingest("langfuse", [other], tmp_path / "ds")


def test_cli_exit_2_with_file_and_line(tmp_path):
    from typer.testing import CliRunner

    from evalframe.cli import app

    bad = _lines(tmp_path, lambda r: r[2].update(data_type="TEXT"))
    result = CliRunner().invoke(app, ["ingest", "langfuse", str(bad), "--to", str(tmp_path / "d")])
    assert result.exit_code == 2
    assert "bad.jsonl:3: data_type 'TEXT'" in result.output
