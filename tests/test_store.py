"""The results store: sets side by side, replacement, provenance, permissions, refusals,
one writer at a time."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import duckdb
import polars as pl
import pytest
from typer.testing import CliRunner

import evalframe as ef
from evalframe._private.store.fsops import StoreError
from evalframe._private.store.lock import writer_lock
from evalframe._private.store.result_sets import (
    ResultsNotFoundError,
    ResultStore,
    SetReplacedError,
    set_id_for,
)
from evalframe.cli import app

runner = CliRunner()


@pytest.fixture
def ds(tmp_path) -> Path:
    return ef.write_demo(tmp_path / "ds", n_cases=6)


def _frame(**cols) -> pl.DataFrame:
    return pl.DataFrame(cols)


def test_sets_live_side_by_side_and_a_rerun_replaces_its_commands_tables(tmp_path):
    store = ResultStore(tmp_path / "results")
    store.commit("score", '{"t":1}', {"run_summary": _frame(x=[1]), "extra": _frame(x=[1])})
    store.commit("score", '{"t":2}', {"run_summary": _frame(x=[2])})
    store.commit("score", '{"t":1}', {"run_summary": _frame(x=[3])})
    sets = {s.set_id: sorted(s.tables) for s in store.sets()}
    assert sets == {set_id_for('{"t":1}'): ["run_summary"], set_id_for('{"t":2}'): ["run_summary"]}
    assert store.read("run_summary", set_id_for('{"t":1}'))["x"].to_list() == [3]
    assert store.latest().set_id == set_id_for('{"t":1}')
    assert sorted(p.name for p in store.path.iterdir()) == sorted(f"result_set={i}" for i in sets)


def test_other_commands_tables_are_kept_only_while_the_inputs_are_unchanged(ds, tmp_path):
    store = ResultStore(ds / "results")
    store.commit("score", '{"t":1}', {"run_summary": _frame(x=[1])}, dataset=ds)
    store.commit("compare", '{"t":1}', {"run_deltas": _frame(d=[1])}, dataset=ds)
    assert sorted(store.latest().tables) == ["run_deltas", "run_summary"]
    assert store.latest().commands == ["compare", "score"]
    ef.write_demo(ds, n_cases=4)  # the inputs change: the deltas no longer describe them
    store.commit("score", '{"t":1}', {"run_summary": _frame(x=[2])}, dataset=ds)
    assert sorted(store.latest().tables) == ["run_summary"]


# rows: (what, expected table names of the latest set, of every set)
@pytest.mark.slow
def test_score_then_compare_never_mixes_configs_in_the_latest_views(ds):
    assert runner.invoke(app, ["score", str(ds), "-t", "0.7"]).exit_code == 0
    assert runner.invoke(app, ["compare", str(ds)]).exit_code in (0, 1)
    from evalframe import sql_connection

    con, opened = sql_connection(ds)
    found = list(opened.views)
    latest = ef.load_config().config_id
    assert found == ["case_deltas", "evaluator_deltas", "evaluator_tests", "run_deltas"]
    for view in ("run_summary", "case_summary", "execution_scores", *found, "run_trend"):
        ids = {r[0] for r in con.sql(f"select distinct config_id from {view}").fetchall()}
        assert ids <= {latest}, view
    assert con.sql("select count(*) from run_summary").fetchall() == [(0,)]
    all_ids = con.sql("select distinct config_id, result_set from run_summary_all").fetchall()
    assert all_ids == [(ef.load_config(threshold=0.7).config_id,) * 2]
    sets = con.sql("select result_set, latest, stale from result_sets order by 2").fetchall()
    assert sets == [(ef.load_config(threshold=0.7).config_id, False, False), (latest, True, False)]
    con.close()


@pytest.mark.slow
def test_a_smaller_demo_drops_the_deltas_of_a_larger_one(tmp_path):
    demo = tmp_path / "demo"
    assert runner.invoke(app, ["demo", str(demo), "--cases", "8"]).exit_code == 0
    assert runner.invoke(app, ["compare", str(demo)]).exit_code in (0, 1)
    assert "case_deltas" in ResultStore(demo / "results").latest().tables
    assert runner.invoke(app, ["demo", str(demo), "--cases", "4"]).exit_code == 0
    latest = ResultStore(demo / "results").latest()
    # the demo has a labels table: score also writes judge_agreement and agreement_curve
    assert sorted(latest.tables) == [
        "agreement_curve",
        "case_summary",
        "execution_scores",
        "judge_agreement",
        "run_summary",
        "variance_components",
    ]
    with pytest.raises(ResultsNotFoundError, match="no table 'case_deltas'"):
        ef.read_results(demo, "case_deltas")


@pytest.mark.slow
@pytest.mark.parametrize("mask", [0o022, 0o027, 0o077], ids=oct)
def test_every_written_file_and_folder_follows_the_umask(mask, tmp_path):
    root = tmp_path / "root"
    wide = tmp_path / "wide.csv"
    wide.write_text("case_id,a\n1,0.5\n2,1\n")
    grid = tmp_path / "grid.yaml"
    grid.write_text("grid:\n  threshold: [0.6, 0.7]\n")
    demo, out = root / "demo", root / "out"
    commands = [
        ["demo", str(demo), "--cases", "4"],  # input tables, score, report.html
        ["ingest", "wide", str(wide), "--to", str(root / "ingested"), "--run-id", "r1"],
        ["ingest", "wide", str(wide), "--to", str(demo), "--run-id", "r9"],
        ["score", str(demo), "-t", "0.7", "--evaluators"],
        ["score", str(demo), "-o", str(out / "score")],
        ["compare", str(demo), "-o", str(out / "compare")],
        ["sweep", str(demo), "--grid", str(grid), "--curve"],
        ["sweep", str(demo), "--grid", str(grid), "-o", str(out / "sweep")],
        ["report", str(demo), "--no-what-if", "-o", str(out / "html" / "report.html")],
    ]
    old = os.umask(mask)
    try:
        root.mkdir()
        for args in commands:
            result = runner.invoke(app, args)
            assert result.exit_code in (0, 1), (args, result.output)
    finally:
        os.umask(old)
    assert (demo / "report.html").is_file() and (out / "html" / "report.html").is_file()
    files, folders = set(), set()
    for p in root.rglob("*"):
        if not p.is_symlink():
            (folders if p.is_dir() else files).add(p.relative_to(root))
    assert len(files) > 30 and len(folders) > 10
    assert any(p.name == "lock" for p in files)
    for p in files | folders:
        want = (0o777 if p in folders else 0o666) & ~mask
        assert stat.S_IMODE((root / p).stat().st_mode) == want, (oct(mask), str(p))


@pytest.mark.slow
def test_a_table_of_every_set_reads_with_one_glob_in_duckdb_and_polars(ds):
    for t in ("0.6", "0.7"):
        assert runner.invoke(app, ["score", str(ds), "-t", t]).exit_code == 0
    glob = str(ds / "results" / "*" / "run_summary.parquet")
    duck = duckdb.sql(f"select distinct config_id, result_set from '{glob}' order by 1").fetchall()
    assert [a == b for a, b in duck] == [True, True] and len(duck) == 2
    lazy = pl.scan_parquet(glob, hive_partitioning=True).select("config_id", "result_set")
    assert lazy.unique().collect().height == 2


def _exit(args: list[str]) -> tuple[int, str]:
    result = runner.invoke(app, args)
    return result.exit_code, " ".join(result.output.split())


@pytest.mark.slow
def test_output_locations_that_would_break_the_dataset_or_cannot_be_written(ds, tmp_path):
    assert runner.invoke(app, ["score", str(ds)]).exit_code == 0
    (result_set,) = (ds / "results").iterdir()
    (ds / "runs").mkdir()  # runs as a partitioned table folder
    pl.read_parquet(ds / "runs.parquet").write_parquet(ds / "runs" / "part-0.parquet")
    (ds / "runs.parquet").unlink()
    (tmp_path / "file").write_text("x")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "notes.txt").write_text("mine")
    cases = [
        (ds / "runs", "inside the dataset's input table runs"),
        (ds / "runs" / "sub", "inside the dataset's input table runs"),
        (ds / "scores.parquet", "inside the dataset's input table scores"),
        (ds, "holds the dataset"),
        (tmp_path, "holds the dataset"),
        (tmp_path / "file", "is a file"),
        (tmp_path / "file" / "sub", "which is a file"),
        (tmp_path / "full", "already holds files not written"),
        (result_set, f"is inside the results store {ds / 'results'}"),
        (result_set / "sub", f"is inside a result set of the results store {ds / 'results'}"),
        (ds / ".evalframe", f"is inside evalframe's internal folder {ds / '.evalframe'}"),
        (ds / ".evalframe" / "inputs" / "current" / "x", "inside the versions of"),
    ]
    for out, message in cases:
        code, text = _exit(["score", str(ds), "-o", str(out)])
        assert (code, message in text) == (2, True), (out, text)
        assert "input table .evalframe" not in text
    assert (tmp_path / "full" / "notes.txt").read_text() == "mine"
    assert ef.load_dataset(ds).runs.collect().height == 3


def test_a_folder_that_cannot_be_written_exits_2(ds, tmp_path):
    if os.geteuid() == 0:  # root writes through mode bits; not into /proc/sys
        locked = Path("/proc/sys")
        assert locked.is_dir()
    else:
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o555)
    code, text = _exit(["score", str(ds), "-o", str(locked / "out")])
    assert code == 2 and "is not writable" in text
    assert not (locked / "out").exists()


@pytest.mark.slow
def test_out_folder_is_one_set_replaced_whole_and_sql_opens_it(ds, tmp_path):
    out = tmp_path / "out"
    assert runner.invoke(app, ["score", str(ds), "-o", str(out), "--evaluators"]).exit_code == 0
    assert runner.invoke(app, ["score", str(ds), "-o", str(out), "-t", "0.6"]).exit_code == 0
    assert sorted(p.name for p in out.iterdir()) == [
        "agreement_curve.parquet",  # the demo has a labels table (docs/judges.md)
        "case_summary.parquet",
        "execution_scores.parquet",
        "judge_agreement.parquet",
        "run_summary.parquet",
        "variance_components.parquet",
    ]
    meta = ef.read_metadata(out / "run_summary.parquet")
    assert json.loads(meta["evalframe.config"]) == json.loads(
        ef.load_config(threshold=0.6).canonical_json()
    )
    for args in (["sql", str(out)], ["sql", str(ds), "--results", str(out)]):
        code, text = _exit([*args, "select distinct config_id from run_summary", "--csv"])
        assert (code, text) == (0, f"config_id {ef.load_config(threshold=0.6).config_id}")


@pytest.mark.slow
def test_sql_registers_every_table_of_every_set(ds, tmp_path):
    grid = tmp_path / "grid.yaml"
    grid.write_text("grid:\n  threshold: [0.6, 0.7]\n")
    assert runner.invoke(app, ["score", str(ds)]).exit_code == 0
    assert runner.invoke(app, ["sweep", str(ds), "--grid", str(grid), "--curve"]).exit_code == 0
    _, text = _exit(
        [
            "sql",
            str(ds),
            "select table_name from information_schema.tables order by 1",
            "--csv",
        ]
    )
    names = set(text.split())
    assert {"sweep", "sweep_configs", "threshold_curve", "sweep_all", "run_summary_all"} <= names
    assert {"threshold_curve_all", "execution_scores_all", "result_sets"} <= names
    _, text = _exit(["sql", str(ds), "select count(distinct config_id) from sweep", "--csv"])
    assert text.split()[-1] == "2"


@pytest.mark.slow
def test_two_writers_never_interleave_and_readers_never_see_a_mix(tmp_path):
    results = tmp_path / "results"
    script = textwrap.dedent(
        f"""
        import sys, polars as pl
        from evalframe._private.store.result_sets import ResultStore
        store = ResultStore({str(results)!r})
        who = sys.argv[1]
        for i in range(8):
            tag = f"{{who}}{{i}}"
            tables = {{n: pl.DataFrame({{"tag": [tag] * 50}}) for n in "abcd"}}
            store.commit(who, '{{"t": 1}}', tables)
        """
    )
    writers = [
        subprocess.Popen([sys.executable, "-c", script, who], stderr=subprocess.PIPE)
        for who in ("w", "v")
    ]
    seen = 0
    while any(w.poll() is None for w in writers):
        store = ResultStore(results)
        for s in store.sets():
            try:
                tags = {t for name in s.tables for t in s.read(name)["tag"].unique().to_list()}
            except SetReplacedError:  # a writer replaced it meanwhile: an error, never a mix
                continue
            assert len(tags) == 1, f"one set shows tables of two commits: {tags}"
            seen += 1
    for w in writers:
        _, err = w.communicate()
        assert w.returncode == 0, err.decode()
    final = ResultStore(results).latest()
    assert {tuple(final.read(n)["tag"].unique()) for n in "abcd"} in ({("w7",)}, {("v7",)})
    assert seen > 0


@pytest.mark.slow
def test_a_second_writer_waits_with_a_message_then_exits_2(ds, tmp_path, monkeypatch):
    monkeypatch.setenv("EVALFRAME_LOCK_TIMEOUT", "0.2")
    internals = ds / ".evalframe" / "results.store"
    with writer_lock(internals, "test", label="holder"):
        code, text = _exit(["score", str(ds)])
    assert code == 2
    assert "waiting for pid" in text and "gave up after 0.2 s" in text
    assert not (ds / "results").exists() or not any((ds / "results").iterdir())
    assert runner.invoke(app, ["score", str(ds)]).exit_code == 0


@pytest.mark.slow
def test_a_second_ingest_or_demo_waits_with_a_message_then_exits_2(ds, tmp_path, monkeypatch):
    monkeypatch.setenv("EVALFRAME_LOCK_TIMEOUT", "0.2")
    wide = tmp_path / "wide.csv"
    wide.write_text("case_id,a\n1,0.5\n")
    ingest = ["ingest", "wide", str(wide), "--to", str(ds), "--run-id", "r9"]
    before = {p.name: p.read_bytes() for p in ds.glob("*.parquet")}
    with writer_lock(ds / ".evalframe" / "inputs", "test", label="holder"):
        code, text = _exit(ingest)
        with pytest.raises(StoreError, match=r"being written by pid \d+ holder"):
            ef.write_demo(ds, n_cases=3)
    assert code == 2
    assert f"waiting for pid {os.getpid()} holder to finish writing dataset" in text
    assert "gave up after 0.2 s" in text and "EVALFRAME_LOCK_TIMEOUT" in text
    assert {p.name: p.read_bytes() for p in ds.glob("*.parquet")} == before
    assert runner.invoke(app, ingest).exit_code == 0
    assert ef.load_dataset(ds).runs.collect().height == 4


_OLD_TEMP = ".scores.parquet.20260101T000000000000-0badf00d.tmp"


@pytest.mark.slow
@pytest.mark.parametrize("command", ["demo", "ingest", "score"])
def test_leftovers_of_killed_writers_in_the_dataset_are_removed_by_the_next_run(
    command, ds, tmp_path
):
    inputs = ds / ".evalframe" / "inputs"
    (ds / _OLD_TEMP).write_bytes(b"PAR1")  # what an earlier demo left when killed
    (inputs / "v-20260101T000000000000-0badf00d").mkdir()  # a killed commit's version
    (inputs / "v-20260101T000000000000-0badf00d" / "scores.parquet").write_bytes(b"PAR1")
    os.symlink("v-x", inputs / "link-20260101T000000000000-0badf00d")
    old_report, new_report = ds / ".report.html.0123456789ab.tmp", ds / ".report.html.ab.tmp"
    old_report.write_text("<html>")
    os.utime(old_report, (1.0e9, 1.0e9))  # long dead; a fresh one may be a live writer's
    new_report.write_text("<html>")
    wide = tmp_path / "wide.csv"
    wide.write_text("case_id,a\n1,0.5\n")
    if command == "demo":  # `evalframe demo` writes its input tables with write_demo
        ef.write_demo(ds, n_cases=3)
    else:
        ingest = ["ingest", "wide", str(wide), "--to", str(ds), "--run-id", "r9"]
        args = ingest if command == "ingest" else ["score", str(ds)]
        assert runner.invoke(app, args).exit_code in (0, 1)
    hidden = sorted(p.name for p in ds.iterdir() if p.name.startswith("."))
    assert hidden == [".evalframe", new_report.name]
    assert [p.name for p in inputs.glob("v-*")] == [os.readlink(inputs / "current")]
    assert not list(inputs.glob("link-*"))


def test_a_bad_lock_timeout_is_a_clear_error(ds, monkeypatch):
    monkeypatch.setenv("EVALFRAME_LOCK_TIMEOUT", "soon")
    with pytest.raises(StoreError, match="EVALFRAME_LOCK_TIMEOUT='soon'"):
        ResultStore(ds / "results").commit("score", "{}", {"a": _frame(x=[1])})


def test_a_loaded_dataset_never_reads_a_newer_commit_of_its_inputs(tmp_path):
    from evalframe._private.data.demo import write_demo

    data = write_demo(tmp_path / "d", n_cases=30)
    ds = ef.load_dataset(data)
    before = ds.scores.select(pl.len()).collect().item()
    again = ef.load_dataset(data).scores.select(pl.len()).collect().item()
    assert before == again
    write_demo(data, n_cases=50)  # a new version of every input table
    with pytest.raises(FileNotFoundError, match=r"\.evalframe/inputs/v-"):
        ds.scores.select(pl.len()).collect()
    assert ef.load_dataset(data).scores.select(pl.len()).collect().item() > before


@pytest.mark.slow
def test_sql_reads_again_when_a_commit_replaced_the_set_it_opened(ds, tmp_path, monkeypatch):
    assert runner.invoke(app, ["score", str(ds)]).exit_code == 0
    real_open = ef.sql_connection
    opened = []

    def open_then_commit(*args, **kwargs):
        con, found = real_open(*args, **kwargs)
        if not opened:  # a writer commits the same set between opening and the query
            assert runner.invoke(app, ["score", str(ds)]).exit_code == 0
        opened.append(found)
        return con, found

    monkeypatch.setattr(ef, "sql_connection", open_then_commit)
    code, text = _exit(["sql", str(ds), "select count(*) as n from run_summary", "--csv"])
    assert (code, text) == (0, "n 3")
    assert len(opened) == 2


@pytest.mark.slow
@pytest.mark.parametrize("damage", ["zero bytes", "wrong columns"])
def test_a_damaged_result_table_is_named_with_its_set_and_file(ds, damage):
    assert runner.invoke(app, ["score", str(ds)]).exit_code == 0
    (slot,) = (ds / "results").glob("result_set=*")
    path = slot.resolve() / "run_summary.parquet"
    path.chmod(0o644)
    if damage == "zero bytes":
        path.write_bytes(b"")
    else:
        pl.DataFrame({"a": [1]}).write_parquet(path)
    code, text = _exit(["sql", str(ds), "select count(*) from run_summary"])
    assert code == 2
    assert "result table run_summary of set" in text and str(path) in text
    assert "hint: re-run `evalframe score`" in text
    if damage == "zero bytes":
        with pytest.raises(ef.ResultsNotFoundError, match=re.escape(str(path))):
            ef.read_results(ds, "run_summary")


@pytest.mark.slow
def test_rescoring_an_out_folder_whose_table_became_a_folder_writes_a_whole_new_set(ds, tmp_path):
    out = tmp_path / "out"
    assert runner.invoke(app, ["score", str(ds), "-o", str(out)]).exit_code == 0
    old = out.resolve()
    old.chmod(0o755)
    (old / "run_summary.parquet").unlink()
    (old / "run_summary.parquet").mkdir()
    assert runner.invoke(app, ["score", str(ds), "-o", str(out), "-t", "0.6"]).exit_code == 0
    config_id = ef.load_config(threshold=0.6).config_id
    for table in ("run_summary", "case_summary", "execution_scores"):
        assert pl.read_parquet(out / f"{table}.parquet")["config_id"].unique().to_list() == [
            config_id
        ]
