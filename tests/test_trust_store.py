"""The results store and the input tables never touch what is not theirs, read copies of a
dataset by what is inside them, report corrupt bookkeeping and a full disk clearly.

Each test builds the dataset a colleague might send (a link planted where evalframe keeps a
link, a copy, a damaged manifest) or simulates a full disk, then checks the exit code, the
message and that nothing outside (or half-written) is left."""

from __future__ import annotations

import errno
import json
import os
import shutil
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

import evalframe as ef
from evalframe._private.store import fsops
from evalframe._private.store.fsops import StoreError
from evalframe.cli import app
from tests.test_store_faults import leftovers, store_state

runner = CliRunner()
AT_07 = ef.load_config(threshold=0.7).config_id
DEFAULT = ef.load_config().config_id


def _run(args: list[str]):
    return runner.invoke(app, [str(a) for a in args])


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _tree(path: Path) -> dict[str, bytes | str]:
    """Everything under `path` (files: bytes, links: their text)."""
    out: dict[str, bytes | str] = {}
    for dirpath, dirnames, filenames in os.walk(path):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            key = str(p.relative_to(path))
            if p.is_symlink():
                out[key] = "-> " + os.readlink(p)
            elif p.is_file():
                out[key] = p.read_bytes()
    return out


@pytest.fixture
def ds(tmp_path) -> Path:
    return ef.write_demo(tmp_path / "ds", n_cases=5)


@pytest.fixture
def two_sets(ds) -> Path:
    """A dataset with two result sets: 0.7 (committed first), then the default config."""
    assert _run(["score", ds, "-t", "0.7"]).exit_code in (0, 1)
    assert _run(["score", ds]).exit_code in (0, 1)
    return ds


def _victim(tmp_path: Path, name: str = "victim") -> Path:
    v = tmp_path / name
    v.mkdir()
    (v / "thesis.txt").write_text("years of work")
    (v / "run_summary.parquet").write_bytes(b"not evalframe's")
    return v


# --- 1. links: never remove, rename or write through a link that is not ours -----------------
@pytest.mark.slow
@pytest.mark.parametrize("target", ["../../victim", ".."])
def test_score_refuses_a_set_link_to_a_folder_outside_and_touches_nothing(ds, tmp_path, target):
    victim = _victim(tmp_path)
    (ds / "results").mkdir()
    slot = ds / "results" / f"result_set={DEFAULT}"
    os.symlink(target, slot)
    before, dataset_before = _tree(victim), _tree(ds)
    result = _run(["score", ds])
    assert result.exit_code == 2, result.output
    message = _one_line(result.output)
    assert f"result_set={DEFAULT}" in message and "not to a version evalframe wrote" in message
    assert "Traceback" not in result.output
    assert _tree(victim) == before
    assert _tree(ds) == dataset_before  # the link is kept, nothing was written
    assert os.readlink(slot) == target


def test_a_set_link_to_another_folder_is_never_served(ds, tmp_path):
    victim = _victim(tmp_path)
    (ds / "results").mkdir()
    os.symlink("../../victim", ds / "results" / f"result_set={DEFAULT}")
    with pytest.raises(ef.EvalframeError, match="no result sets"):
        ef.read_results(ds, "run_summary")
    assert victim.is_dir()


def test_score_refuses_store_internals_that_are_a_link(ds, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "v-precious").mkdir(parents=True)
    (elsewhere / "v-precious" / "data.txt").write_text("keep")
    (elsewhere / "lock").write_text("someone's file")
    os.symlink(elsewhere, ds / ".evalframe" / "results.store")
    before = _tree(elsewhere)
    result = _run(["score", ds])
    assert result.exit_code == 2, result.output
    assert "results.store is a link" in _one_line(result.output)
    assert _tree(elsewhere) == before
    assert not (ds / "results").exists() or not any((ds / "results").iterdir())


def test_the_lock_file_is_never_written_through_a_link(ds, tmp_path):
    victim = tmp_path / "notes.txt"
    victim.write_text("do not truncate me")
    internals = ds / ".evalframe" / "results.store"
    internals.mkdir()
    os.symlink(victim, internals / "lock")
    result = _run(["score", ds])
    assert result.exit_code == 2, result.output
    assert "lock" in result.output and "is a link" in _one_line(result.output)
    assert victim.read_text() == "do not truncate me"


def _wide(tmp_path: Path) -> Path:
    src = tmp_path / "new.csv"
    src.write_text("case_id,faithfulness\n1,0.5\n")
    return src


def test_ingest_refuses_a_current_pointer_outside_and_touches_nothing(ds, tmp_path):
    victim = _victim(tmp_path)
    current = ds / ".evalframe" / "inputs" / "current"
    own = os.readlink(current)
    current.unlink()
    os.symlink("../../../victim", current)
    before = _tree(victim)
    versions = sorted(p.name for p in current.parent.glob("v-*"))
    args = ["ingest", "wide", _wide(tmp_path), "--to", ds, "--run-id", "x1", "--scale-max", "1"]
    result = _run(args)
    assert result.exit_code == 2, result.output
    assert "inputs/current is a link to ../../../victim" in _one_line(result.output)
    assert _tree(victim) == before
    assert sorted(p.name for p in current.parent.glob("v-*")) == versions  # own ones kept
    assert os.readlink(current) == "../../../victim"
    # cleanup by a reader's command (score) does not act on a foreign pointer either
    current.unlink()
    os.symlink(own, current)
    assert _run(args).exit_code == 0  # and with its own pointer back, ingest works


# --- 2. copies: latest and staleness come from inside the dataset ----------------------------
def _results(ds: Path) -> list[tuple[str, bool, bool | None]]:
    result = _run(["results", ds, "--json"])
    assert result.exit_code == 0, result.output
    return [(r["result_set"], r["latest"], r["stale"]) for r in json.loads(result.stdout)]


def _set_mtime(path: Path, seconds: float) -> None:
    os.utime(path, (seconds, seconds), follow_symlinks=False)


@pytest.mark.slow
def test_a_copy_with_plain_files_keeps_latest_and_sql_works(two_sets, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(two_sets, copy)  # follows links, like `cp -rL`
    # the set committed first is the folder copied (or touched) last
    _set_mtime(copy / "results" / f"result_set={AT_07}", 4_000_000_000)
    _set_mtime(copy / "results" / f"result_set={DEFAULT}", 1_000_000_000)
    assert ef.read_results(copy, "run_summary")["config_id"].unique().to_list() == [DEFAULT]
    assert _results(copy) == [(AT_07, False, False), (DEFAULT, True, False)]
    query = "select (select any_value(config_id) from run_summary) as latest, "
    query += "(select count(distinct result_set) from run_summary_all) as sets"
    result = _run(["sql", copy, query, "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == [{"latest": DEFAULT, "sets": 2}]
    every = ef.read_results(copy, "run_summary", config_id="all")
    assert sorted(every["result_set"].unique()) == sorted([AT_07, DEFAULT])


@pytest.mark.slow
def test_init_sql_over_a_copied_set_folder_adds_no_result_set_column(two_sets, tmp_path):
    """The DuckDB CLI route (sql/init.sql with evalframe_results = a set folder of a
    `cp -rL` copy): the output views read the files without hive partitions, so the folder
    name `result_set=ID` adds no column (a second `result_set` broke every join)."""
    import duckdb

    from evalframe._private.engines.duckdb.sql import INIT_FILE, sql_dir

    copy = tmp_path / "copy"
    shutil.copytree(two_sets, copy)
    con = duckdb.connect()
    cwd = Path.cwd()
    try:
        os.chdir(copy)
        con.execute(f"set variable evalframe_results = 'results/result_set={DEFAULT}'")
        con.execute((sql_dir() / INIT_FILE).read_text())
        for view in ("execution_scores", "case_summary", "run_summary"):
            columns = con.sql(f"select * from {view} limit 1").columns
            assert "result_set" not in columns, view
            assert con.sql(f"select count(*) from {view}").fetchall()[0][0] > 0, view
    finally:
        os.chdir(cwd)


@pytest.mark.slow
def test_latest_is_the_commit_order_not_the_clock(two_sets):
    """A clock set back between two commits: the later commit is still the latest."""
    store = two_sets / "results"
    first = (store / f"result_set={AT_07}").resolve()
    manifest_path = first.parent / f"{first.name}.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["created_at"] = "2099-01-01T00:00:00.000000+00:00"
    os.chmod(manifest_path, 0o644)
    manifest_path.write_text(json.dumps(manifest))
    assert ef.read_results(two_sets, "run_summary")["config_id"].unique().to_list() == [DEFAULT]


def _copy_like_cp_r(src: Path, dst: Path) -> Path:
    """`cp -r`: links copied as links, files copied without their modification times."""
    shutil.copytree(src, dst, symlinks=True, copy_function=shutil.copyfile)
    return dst


@pytest.mark.slow
def test_a_copy_judges_staleness_by_its_own_tables(two_sets, tmp_path):
    copy = _copy_like_cp_r(two_sets, tmp_path / "copy")
    assert _results(copy) == [(AT_07, False, False), (DEFAULT, True, False)]
    shutil.rmtree(two_sets)  # the original is gone: the unchanged copy is still current
    assert _results(copy) == [(AT_07, False, False), (DEFAULT, True, False)]
    ef.ingest("wide", [_wide(tmp_path)], copy, run_id="x1", scale_max=1.0)
    assert _results(copy) == [(AT_07, False, True), (DEFAULT, True, True)]


@pytest.mark.slow
def test_a_changed_copy_reads_stale_while_the_original_is_current(two_sets, tmp_path):
    copy = _copy_like_cp_r(two_sets, tmp_path / "copy")
    ef.ingest("wide", [_wide(tmp_path)], copy, run_id="x1", scale_max=1.0)
    assert _results(copy) == [(AT_07, False, True), (DEFAULT, True, True)]
    assert _results(two_sets) == [(AT_07, False, False), (DEFAULT, True, False)]


@pytest.mark.slow
def test_a_copy_with_plain_files_keeps_its_manifests_through_a_commit(two_sets, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(two_sets, copy)
    assert _run(["score", copy, "-t", "0.5"]).exit_code in (0, 1)
    at_05 = ef.load_config(threshold=0.5).config_id
    assert _results(copy) == [(AT_07, False, False), (DEFAULT, False, False), (at_05, True, False)]
    result = _run(["score", copy])  # a plain set folder is not replaced: refused, kept
    assert result.exit_code == 2 and "cp -rL" in _one_line(result.output)
    assert (copy / "results" / f"result_set={DEFAULT}" / "run_summary.parquet").is_file()


# --- 3. corrupt bookkeeping ---------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize(
    ("damage", "problem"),
    [
        (lambda m: [], "holds a JSON list"),
        (lambda m: {**m, "tables": {**m["tables"], "run_summary": {"rows": "many"}}}, "'many'"),
        (lambda m: {**m, "tables": {**m["tables"], "run_summary": {"rows": 1.5}}}, "1.5"),
        (lambda m: {**m, "tables": []}, "'tables' that is not an object"),
        (lambda m: "{", "is not valid JSON"),
    ],
)
def test_a_corrupt_manifest_is_a_clear_error_naming_the_file(two_sets, damage, problem):
    version = (two_sets / "results" / f"result_set={DEFAULT}").resolve()
    path = version.parent / f"{version.name}.json"
    damaged = damage(json.loads(path.read_text()))
    os.chmod(path, 0o644)
    path.write_text(damaged if isinstance(damaged, str) else json.dumps(damaged))
    for args in (["results", two_sets], ["sql", two_sets, "select 1"]):
        result = _run(args)
        assert result.exit_code == 2, result.output
        message = _one_line(result.output)
        assert str(path) in message.replace(" ", "") or path.name in message
        assert problem in message and "Traceback" not in result.output
    # the command that wrote the set rewrites it
    assert _run(["score", two_sets]).exit_code in (0, 1)
    assert [s for s, _, _ in _results(two_sets)] == [AT_07, DEFAULT]


# --- 4. a full disk ------------------------------------------------------------------------
@pytest.fixture
def full_disk(monkeypatch):
    """Every Parquet file evalframe writes goes to /dev/full (the device the kernel answers
    every write to with ENOSPC), and the file system reports no free space."""
    if not Path("/dev/full").exists():
        pytest.skip("needs /dev/full")
    write, sink = pl.DataFrame.write_parquet, pl.LazyFrame.sink_parquet

    def full_write(self, file, *args, **kwargs):
        return write(self, "/dev/full", *args, **kwargs)

    def full_sink(self, path, *args, **kwargs):
        return sink(self, "/dev/full", *args, **kwargs)

    statvfs = os.statvfs

    class Full:
        def __init__(self, real):
            self.f_frsize, self.f_bavail = real.f_frsize, 0

    monkeypatch.setattr(pl.DataFrame, "write_parquet", full_write)
    monkeypatch.setattr(pl.LazyFrame, "sink_parquet", full_sink)
    monkeypatch.setattr(os, "statvfs", lambda p: Full(statvfs(p)))


def _no_space(result, folder: Path) -> None:
    assert result.exit_code == 2, result.output
    message = _one_line(result.output)
    assert "no space left on device" in message and str(folder) in message.replace(" ", "")
    assert "this is a bug" not in message and "thrift" not in message.lower()


@pytest.mark.slow
def test_score_on_a_full_disk_says_so_and_leaves_nothing_half_written(two_sets, full_disk):
    before = store_state(two_sets / "results")
    _no_space(_run(["score", two_sets, "--evaluators"]), two_sets / "results")
    assert store_state(two_sets / "results") == before
    assert leftovers(two_sets) == []


@pytest.mark.slow
def test_a_full_disk_at_the_manifest_says_so_and_leaves_nothing(two_sets, monkeypatch):
    before = store_state(two_sets / "results")
    write = fsops.write_bytes

    def full(path: Path, data: bytes) -> None:
        write(path, data[: len(data) // 2])  # half of it made it to the disk
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

    monkeypatch.setattr(fsops, "write_bytes", full)
    _no_space(_run(["score", two_sets, "-t", "0.7"]), two_sets / "results")
    assert store_state(two_sets / "results") == before
    assert leftovers(two_sets) == []


def test_ingest_on_a_full_disk_says_so_and_leaves_nothing(ds, tmp_path, full_disk):
    before = {n: pl.read_parquet(ds / f"{n}.parquet") for n in ("scores", "runs")}
    with pytest.raises(StoreError, match="no space left on device") as info:
        ef.ingest("wide", [_wide(tmp_path)], ds, run_id="x1", scale_max=1.0)
    assert str(ds) in str(info.value)
    for name, frame in before.items():
        assert pl.read_parquet(ds / f"{name}.parquet").equals(frame)
    assert leftovers(ds) == []


@pytest.mark.slow
def test_a_computation_error_while_writing_is_no_disk_error(two_sets, monkeypatch):
    """Only an I/O failure is reported as one: a failing computation keeps its message."""
    before = store_state(two_sets / "results")

    def fails(self, *args, **kwargs):
        raise pl.exceptions.ComputeError("cannot compare string with numeric type")

    monkeypatch.setattr(pl.DataFrame, "write_parquet", fails)
    monkeypatch.setattr(pl.LazyFrame, "sink_parquet", fails)
    result = _run(["score", two_sets, "-t", "0.7", "--evaluators"])
    assert result.exit_code == 2 and "no space" not in result.output
    assert store_state(two_sets / "results") == before
    assert leftovers(two_sets) == []
