"""Appending to a dataset folder: run-id clashes, --replace, validation and atomicity."""

from __future__ import annotations

import json

import polars as pl
import pytest
from typer.testing import CliRunner

import evalframe as ef
from evalframe._private.ingest import IngestError, ingest

TABLES = ("scores", "executions", "runs")


def _wide(tmp_path, name: str, rows: str):
    path = tmp_path / name
    path.write_text("case_id,a\n" + rows)
    return path


def _snapshot(folder):
    """The dataset's tables (through their links) and its hidden folder's versions."""
    files = {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.name != ".evalframe"}
    inputs = folder / ".evalframe" / "inputs"
    versions = sorted(p.name for p in inputs.iterdir()) if inputs.is_dir() else []
    return files, versions


def test_append_then_refuse_existing_run_then_replace(tmp_path):
    ds = tmp_path / "ds"
    first = _wide(tmp_path, "one.csv", "1,0.5\n2,1\n")
    ingest("wide", [first], ds, run_id="r1")
    ingest("wide", [_wide(tmp_path, "two.csv", "1,0.1\n")], ds, run_id="r2")
    before = _snapshot(ds)
    with pytest.raises(IngestError, match=r"already in .*: r1; hint: pass --replace"):
        ingest("wide", [_wide(tmp_path, "three.csv", "9,0.9\n")], ds, run_id="r1")
    assert _snapshot(ds) == before
    report = ingest("wide", [tmp_path / "three.csv"], ds, run_id="r1", replace=True)
    assert report.runs_replaced == ("r1",) and report.runs_added == ()
    scores = pl.read_parquet(ds / "scores.parquet")
    assert scores.filter(pl.col("run_id") == "r1")["case_id"].to_list() == ["9"]
    assert scores.filter(pl.col("run_id") == "r2").height == 1
    assert pl.read_parquet(ds / "runs.parquet")["run_id"].sort().to_list() == ["r1", "r2"]
    assert not (ds / "outcomes.parquet").exists()


def test_malformed_source_leaves_dataset_unchanged(tmp_path):
    ds = tmp_path / "ds"
    ingest("wide", [_wide(tmp_path, "one.csv", "1,0.5\n")], ds, run_id="r1")
    before = _snapshot(ds)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"test_id": "x", "score": 1}\n{oops}\n')
    with pytest.raises(IngestError, match=r"bad\.jsonl:2"):
        ingest("agentv", [bad], ds)
    assert _snapshot(ds) == before


def test_invalid_combined_tables_write_nothing(tmp_path):
    ds = tmp_path / "ds"
    ingest("wide", [_wide(tmp_path, "one.csv", "1,0.5\n")], ds, run_id="r1")
    before = _snapshot(ds)
    src = tmp_path / "status.csv"
    src.write_text("case_id,a,status\n1,0.5,crashed\n")
    with pytest.raises(IngestError, match="status is not one of ok, error"):
        ingest("wide", [src], ds, run_id="r2")
    assert _snapshot(ds) == before


def test_failure_while_writing_changes_nothing(tmp_path, monkeypatch):
    ds = tmp_path / "ds"
    ingest("wide", [_wide(tmp_path, "one.csv", "1,0.5\n")], ds, run_id="r1")
    before = _snapshot(ds)
    calls = {"n": 0}
    real = pl.DataFrame.write_parquet

    def flaky(self, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 2:
            raise OSError("disk full")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(pl.DataFrame, "write_parquet", flaky)
    with pytest.raises(OSError, match="disk full"):
        ingest("wide", [_wide(tmp_path, "two.csv", "1,0.7\n")], ds, run_id="r2")
    assert _snapshot(ds) == before  # no temp files left behind either


def test_extra_columns_survive_appends_of_other_formats(tmp_path):
    ds = tmp_path / "ds"
    src = tmp_path / "m.csv"
    src.write_text("case_id,a,notes\n1,0.5,hi\n")
    ingest("wide", [src], ds, run_id="w")
    agentv = tmp_path / "results.jsonl"
    agentv.write_text(json.dumps({"test_id": "t", "target": "x", "score": 0.4}) + "\n")
    ingest("agentv", [agentv], ds)
    ex = pl.read_parquet(ds / "executions.parquet")
    assert {"notes", "target", "reported_score"} <= set(ex.columns)
    assert ex.filter(pl.col("run_id") == "w")["notes"].to_list() == ["hi"]
    assert ef.load_dataset(ds).scores.collect().height == 2


def test_append_to_dataset_without_executions_table(tmp_path):
    ds = tmp_path / "ds"
    ds.mkdir()
    pl.DataFrame(
        {"run_id": ["old"], "case_id": ["c"], "evaluator": ["e"], "score": [1.0]}
    ).write_parquet(ds / "scores.parquet")
    ingest("wide", [_wide(tmp_path, "one.csv", "1,0.5\n")], ds, run_id="new")
    ex = pl.read_parquet(ds / "executions.parquet")
    assert sorted(ex["run_id"].to_list()) == ["new", "old"]
    ef.load_dataset(ds)


def test_partitioned_and_file_targets_are_refused(tmp_path):
    src = _wide(tmp_path, "one.csv", "1,0.5\n")
    (tmp_path / "part" / "scores").mkdir(parents=True)
    with pytest.raises(IngestError, match="partitioned"):
        ingest("wide", [src], tmp_path / "part")
    (tmp_path / "file").write_text("x")
    with pytest.raises(IngestError, match="is a file"):
        ingest("wide", [src], tmp_path / "file")


def test_cli_exit_codes_and_json(tmp_path):
    from evalframe.cli import app

    runner = CliRunner()
    src = _wide(tmp_path, "one.csv", "1,0.5\n")
    args = ["ingest", "wide", str(src), "--to", str(tmp_path / "ds"), "--run-id", "r"]
    ok = runner.invoke(app, [*args, "--json"])
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.stdout)["runs_added"] == ["r"]
    again = runner.invoke(app, args)
    assert again.exit_code == 2
    assert "already in" in again.stderr
