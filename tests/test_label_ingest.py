"""Label ingest (docs/judges.md): `ingest wide FILE --labels` and promptfoo's manual ratings."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

import evalframe as ef
from evalframe._private import schema as S
from evalframe.cli import app

runner = CliRunner()


def _dataset(root: Path) -> Path:
    rows = [
        {"run_id": "r1", "case_id": f"c{i}", "attempt": 0, "q": i / 4, "faith": (4 - i) / 4}
        for i in range(5)
    ]
    src = root.parent / "runs.csv"
    pl.DataFrame(rows).write_csv(src)
    ef.ingest("wide", [src], root, run_id=None)
    return root


def _tables(root: Path) -> dict[str, pl.DataFrame]:
    return {
        n: pl.read_parquet(root / f"{n}.parquet")
        for n in S.STORED_INPUT_TABLES
        if (root / f"{n}.parquet").exists()
    }


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


@pytest.mark.slow
def test_wide_labels_are_added_and_the_other_tables_kept(tmp_path: Path):
    ds = _dataset(tmp_path / "ds")
    before = _tables(ds)
    f = _write(
        tmp_path / "labels.csv",
        "run_id,case_id,attempt,evaluator,rater,label_passed,label_score,note\n"
        "r1,c0,0,,,true,,looks fine\n"
        "r1,c1,0,,bob,0,,\n"
        "r1,c2,0,q,,,0.5,\n"
        "r1,c3,0,,,,,\n",  # left empty: not labeled yet
    )
    res = runner.invoke(app, ["ingest", "wide", str(f), "--labels", "--to", str(ds)])
    assert res.exit_code == 0, res.output
    after = _tables(ds)
    for name, frame in before.items():
        assert after[name].equals(frame), name
    got = (
        after[S.LABELS]
        .sort(S.CASE_ID)
        .select(S.CASE_ID, S.ATTEMPT, S.EVALUATOR, S.RATER, S.LABEL_PASSED, S.LABEL_SCORE)
    )
    assert got.rows() == [
        ("c0", 0, None, "human", True, None),
        ("c1", 0, None, "bob", False, None),
        ("c2", 0, "q", "human", None, 0.5),
    ]
    # a second file adds to them; a repeated key is refused unless --replace
    g = _write(tmp_path / "more.csv", "run_id,case_id,label_passed\nr1,c4,fail\n")
    assert (
        runner.invoke(app, ["ingest", "wide", str(g), "--labels", "--to", str(ds)]).exit_code == 0
    )
    assert pl.read_parquet(ds / "labels.parquet").height == 4
    again = _write(tmp_path / "again.csv", "run_id,case_id,label_passed\nr1,c0,false\n")
    res = runner.invoke(app, ["ingest", "wide", str(again), "--labels", "--to", str(ds)])
    assert res.exit_code == 2 and "duplicate" in res.output
    res = runner.invoke(
        app, ["ingest", "wide", str(again), "--labels", "--replace", "--to", str(ds)]
    )
    assert res.exit_code == 0, res.output
    lab = pl.read_parquet(ds / "labels.parquet")
    assert lab.height == 4
    assert lab.filter(pl.col(S.CASE_ID) == "c0")[S.LABEL_PASSED].to_list() == [False]
    # the labels reach the judge agreement
    agreement = ef.judge_agreement(ds).judge_agreement
    verdict = agreement.filter(pl.col(S.EVALUATOR).is_null() & (pl.col(S.RATER) == "human"))
    assert verdict[S.N_LABELED].to_list() == [2]  # c0 and c4


@pytest.mark.slow
@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("run_id,case_id,label_passed\nr1,c0,true\nr1,c1,maybe\n", "labels.csv:3: label_passed"),
        ("run_id,case_id,label_score\nr1,c0,0.5\n", "labels.csv:2: label_score on a verdict"),
        ("run_id,case_id,evaluator,label_score\nr1,c0,q,high\n", "labels.csv:2: label_score"),
        ("run_id,case_id,label_passed\nr1,c0,true\nr1,c0,false\n", "labels.csv:3: duplicate"),
        ("run_id,case_id,verdict\nr1,c0,true\n", "labels.csv:1: a labels file needs"),
        ("run_id,case_id,label_passed\nr1,nope,true\n", "invalid"),  # an orphan label
    ],
)
def test_bad_label_files_exit_2_naming_file_and_line(tmp_path: Path, text: str, message: str):
    ds = _dataset(tmp_path / "ds")
    before = _tables(ds)
    f = _write(tmp_path / "labels.csv", text)
    res = runner.invoke(app, ["ingest", "wide", str(f), "--labels", "--to", str(ds)])
    assert res.exit_code == 2, res.output
    assert message in res.output.replace("\n", " ") or message in res.output
    assert _tables(ds).keys() == before.keys()


def test_labels_need_an_existing_dataset_and_the_wide_format(tmp_path: Path):
    f = _write(tmp_path / "labels.csv", "run_id,case_id,label_passed\nr1,c0,true\n")
    res = runner.invoke(app, ["ingest", "wide", str(f), "--labels", "--to", str(tmp_path / "x")])
    assert res.exit_code == 2 and "no dataset to label" in res.output
    with pytest.raises(ef.IngestError, match="wide"):
        ef.ingest("promptfoo", [f], tmp_path / "x", labels=True)


def _promptfoo(path: Path, human: dict | None) -> Path:
    comps = [
        {"pass": True, "score": 0.9, "reason": "ok", "assertion": {"type": "llm-rubric"}},
    ]
    if human is not None:
        comps.append({**human, "assertion": {"type": "human"}})
    results = [
        {
            "testIdx": i,
            "promptIdx": 0,
            "provider": {"id": "openai:gpt"},
            "testCase": {"description": f"t{i}", "assert": [{"type": "llm-rubric"}]},
            "success": True,
            "score": 0.9,
            "gradingResult": {"pass": True, "score": 0.9, "componentResults": comps},
        }
        for i in range(2)
    ]
    data = {"evalId": "eval-1", "results": {"version": 3, "results": results}}
    path.write_text(json.dumps(data))
    return path


def test_promptfoo_manual_ratings_become_labels_not_scores(tmp_path: Path):
    f = _promptfoo(tmp_path / "pf.json", {"pass": False, "score": 0, "reason": "Manual result"})
    report = ef.ingest("promptfoo", [f], tmp_path / "ds")
    assert report.rows[S.LABELS] == 2
    tables = _tables(tmp_path / "ds")
    assert tables[S.SCORES][S.EVALUATOR].unique().to_list() == ["llm-rubric"]
    assert "human" not in tables[S.OUTCOMES][S.OUTCOME].to_list()
    labels = tables[S.LABELS].sort(S.CASE_ID)
    assert labels.select(S.CASE_ID, S.EVALUATOR, S.RATER, S.LABEL_PASSED).rows() == [
        ("t0", None, "human", False),
        ("t1", None, "human", False),
    ]
    plain = _promptfoo(tmp_path / "plain.json", None)
    ef.ingest("promptfoo", [plain], tmp_path / "ds2")
    assert not (tmp_path / "ds2" / "labels.parquet").exists()
    bad = _promptfoo(tmp_path / "bad.json", {"pass": "yes"})
    res = runner.invoke(app, ["ingest", "promptfoo", str(bad), "--to", str(tmp_path / "ds3")])
    assert res.exit_code == 2
    assert "results.results[0]" in res.output and "manual rating" in res.output
