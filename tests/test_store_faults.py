"""Fault injection for the results store: count every file operation, fail the k-th.

`Killed` derives from BaseException, so no `except Exception` clean-up handler of evalframe
runs when it is raised: the process state on disk is exactly what a `kill -9` at that
instant would leave. `OSError` injections check the ordinary-failure path (disk full).
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest

pytestmark = pytest.mark.slow  # outside the fast lane (pyproject `slow`)

OPERATIONS = (
    (os, "open"),
    (os, "mkdir"),
    (os, "replace"),
    (os, "rename"),
    (os, "symlink"),
    (os, "link"),
    (os, "unlink"),
    (os, "remove"),
    (os, "rmdir"),
    (os, "fsync"),
    (os, "ftruncate"),
    (os, "write"),
    (shutil, "rmtree"),
    (shutil, "copyfile"),
    (pl.DataFrame, "write_parquet"),
)
"""Every function through which a commit touches the disk."""


class Killed(BaseException):
    """The process died at this file operation."""


@contextlib.contextmanager
def faults(
    monkeypatch, at: int | None = None, error: type[BaseException] = Killed
) -> Iterator[dict]:
    """Count file operations; raise `error` at the `at`-th (1-based). Yields the counter."""
    count = {"n": 0, "ops": []}

    def wrap(owner, name, fn):
        def inner(*args, **kwargs):
            count["n"] += 1
            count["ops"].append(name)
            if count["n"] == at:
                raise error(f"injected at operation {at} ({name})")
            return fn(*args, **kwargs)

        return inner

    with monkeypatch.context() as m:
        for owner, name in OPERATIONS:
            m.setattr(owner, name, wrap(owner, name, getattr(owner, name)))
        yield count


def frame_key(frame: pl.DataFrame) -> tuple:
    """The content of a frame (floats to 9 digits: a parallel sum may differ in the last
    bit from run to run, which is not what these tests are about)."""
    rounded = frame.with_columns(pl.selectors.float().round(9))
    return (tuple(frame.columns), frame.height, int(rounded.hash_rows().sum()))


def store_state(results: Path) -> dict[str, dict[str, tuple]]:
    """Every visible set of a store: table -> content key; checks each set is whole."""
    from evalframe._private.store.result_sets import open_results

    out = {}
    for s in open_results(results).sets():
        listed = set(s.manifest.get("tables", {}))
        assert listed == set(s.tables), f"set {s.set_id}: manifest {listed} != files"
        out[s.set_id] = {name: frame_key(s.read(name)) for name in s.tables}
    return out


def dataset_state(root: Path) -> dict[str, tuple]:
    """The input tables as plain paths show them."""
    return {
        name: frame_key(pl.read_parquet(root / f"{name}.parquet"))
        for name in ("scores", "executions", "outcomes", "runs")
        if (root / f"{name}.parquet").is_file()
    }


def leftovers(root: Path) -> list[str]:
    """Files a finished writer must not leave: scratch links, temp files, unreferenced
    versions (anything under .evalframe/ no link points to)."""
    bad = []
    for dirpath, dirnames, filenames in os.walk(root):
        for name in filenames + dirnames:
            p = Path(dirpath) / name
            if name.startswith("link-") or name.endswith(".tmp"):
                bad.append(str(p.relative_to(root)))
    internals = root / ".evalframe"
    if internals.is_dir():
        referenced = set()
        for dirpath, dirnames, filenames in os.walk(root):
            if ".evalframe" in Path(dirpath).parts:
                continue
            for name in filenames + dirnames:
                p = Path(dirpath) / name
                if p.is_symlink():
                    referenced.add(Path(os.path.realpath(p)).name)
        for sub in internals.iterdir():
            ptr = sub / "current"
            if ptr.is_symlink():
                referenced.add(Path(os.path.realpath(ptr)).name)
            for v in sub.glob("v-*"):
                if v.name.removesuffix(".json") not in referenced:
                    bad.append(str(v.relative_to(root)))
    return sorted(bad)


# --- the tests -------------------------------------------------------------------------------
import pytest  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from evalframe._private.data.demo import write_demo  # noqa: E402
from evalframe._private.ingest import ingest  # noqa: E402
from evalframe._private.store.result_sets import ResultStore  # noqa: E402
from evalframe.cli import app  # noqa: E402

runner = CliRunner()
GRID = "grid:\n  threshold: [0.6, 0.7]\n"


def _invoke(args: list[str]) -> int:
    result = runner.invoke(app, args, catch_exceptions=False)
    assert result.exit_code in (0, 1), result.output
    return result.exit_code


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("faults")
    write_demo(root / "ds", n_cases=6)
    (root / "grid.yaml").write_text(GRID)
    return root


# (name, commands run before: the previous set, the command under test)
SCENARIOS = {
    "score": ([["score", "{ds}", "-t", "0.7"]], ["score", "{ds}", "-t", "0.7", "--evaluators"]),
    "compare": ([["score", "{ds}", "-t", "0.7"]], ["compare", "{ds}", "-t", "0.7"]),
    "sweep": (
        [["sweep", "{ds}", "--grid", "{grid}"]],
        ["sweep", "{ds}", "--grid", "{grid}", "--curve"],
    ),
}


def _args(args: list[str], ds: Path, grid: Path) -> list[str]:
    return [a.format(ds=ds, grid=grid) for a in args]


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst, symlinks=True)
    return dst


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_a_kill_at_every_file_operation_leaves_the_old_or_the_new_set(
    name, demo, tmp_path, monkeypatch
):
    before, command = SCENARIOS[name]
    grid = demo / "grid.yaml"
    template = _copy(demo / "ds", tmp_path / "template")
    for args in before:
        _invoke(_args(args, template, grid))
    old = store_state(template / "results")
    clean = _copy(template, tmp_path / "clean")
    with faults(monkeypatch) as count:
        _invoke(_args(command, clean, grid))
    new = store_state(clean / "results")
    assert old != new and count["n"] > 10
    seen = set()
    for k in range(1, count["n"] + 1):
        ds = _copy(template, tmp_path / f"k{k}")
        with faults(monkeypatch, at=k), contextlib.suppress(Killed):
            _invoke(_args(command, ds, grid))
        state = store_state(ds / "results")
        assert state in (old, new), f"{name}: a mix after a kill at operation {k}"
        seen.add("new" if state == new else "old")
        _invoke(_args(command, ds, grid))  # the next run cleans up and commits
        after = store_state(ds / "results")
        assert after == new, f"{name}: the run after a kill at operation {k}"
        assert leftovers(ds) == [], f"{name}: leftovers after a kill at operation {k}"
        shutil.rmtree(ds)
    assert seen == {"old", "new"}


def _wide(path: Path, rows: str) -> Path:
    path.write_text("case_id,a,b\n" + rows)
    return path


@pytest.mark.parametrize("start", ["ingested", "plain files"])
def test_a_kill_at_every_file_operation_of_ingest_leaves_old_or_new_tables(
    start, tmp_path, monkeypatch
):
    one = _wide(tmp_path / "one.csv", "1,0.5,1\n2,1,0\n")
    two = _wide(tmp_path / "two.csv", "1,0.7,1\n2,0.2,1\n3,1,1\n")
    template = tmp_path / "template"
    if start == "ingested":
        ingest("wide", [one], template, run_id="r1")
    else:  # real files, as demo or a user writes them: converted without changing bytes
        ingest("wide", [one], tmp_path / "first", run_id="r1")
        template.mkdir()
        for p in (tmp_path / "first").glob("*.parquet"):
            shutil.copyfile(p, template / p.name)
    old = dataset_state(template)
    clean = _copy(template, tmp_path / "clean")
    with faults(monkeypatch) as count:
        ingest("wide", [two], clean, run_id="r2")
    new = dataset_state(clean)
    assert old != new and count["n"] > 10
    for k in range(1, count["n"] + 1):
        ds = _copy(template, tmp_path / f"k{k}")
        with faults(monkeypatch, at=k), contextlib.suppress(Killed):
            ingest("wide", [two], ds, run_id="r2")
        state = dataset_state(ds)
        assert state in (old, new), f"scores and executions of two versions at operation {k}"
        if state == old:
            ingest("wide", [two], ds, run_id="r2")  # the next run
        else:
            ingest("wide", [_wide(tmp_path / "three.csv", "9,1,1\n")], ds, run_id="r3")
        assert leftovers(ds) == [], f"leftovers after a kill at operation {k}"
        shutil.rmtree(ds)


@pytest.mark.parametrize("start", ["demo", "plain files"])
def test_a_kill_at_every_file_operation_of_demo_leaves_the_old_or_new_dataset(
    start, tmp_path, monkeypatch
):
    template = tmp_path / "template"
    if start == "demo":
        write_demo(template, n_cases=6)
    else:  # what an earlier demo wrote: real files, and the temp file of a kill
        write_demo(tmp_path / "first", n_cases=6)
        template.mkdir()
        for p in (tmp_path / "first").glob("*.parquet"):
            shutil.copyfile(p, template / p.name)
        (template / ".scores.parquet.20260101T000000000000-0badf00d.tmp").write_bytes(b"PAR1")
    old = dataset_state(template)
    clean = _copy(template, tmp_path / "clean")
    with faults(monkeypatch) as count:
        write_demo(clean, n_cases=4)
    new = dataset_state(clean)
    assert old != new and len(new) == 4 and count["n"] > 10
    seen = set()
    for k in range(1, count["n"] + 1):
        ds = _copy(template, tmp_path / f"k{k}")
        with faults(monkeypatch, at=k), contextlib.suppress(Killed):
            write_demo(ds, n_cases=4)
        state = dataset_state(ds)
        assert state in (old, new), f"tables of two demos after a kill at operation {k}"
        seen.add("new" if state == new else "old")
        if k % 4 == 0:  # score cleans the dataset's leftovers too (when its lock is free)
            _invoke(["score", str(ds)])
            assert leftovers(ds) == [], f"score left leftovers of a kill at operation {k}"
            assert dataset_state(ds) == state
        write_demo(ds, n_cases=4)  # the next run
        assert dataset_state(ds) == new
        assert leftovers(ds) == [], f"leftovers after a kill at operation {k}"
        shutil.rmtree(ds)
    assert seen == {"old", "new"}


def test_an_os_error_at_every_operation_of_a_commit_keeps_a_whole_set(tmp_path, monkeypatch):
    store = ResultStore(tmp_path / "results")
    old_tables = {"a": pl.DataFrame({"x": [1]}), "b": pl.DataFrame({"y": [1]})}
    new_tables = {"a": pl.DataFrame({"x": [2, 2]}), "c": pl.DataFrame({"z": [2]})}
    store.commit("score", '{"t": 1}', old_tables)
    old = store_state(store.path)
    with faults(monkeypatch) as count:
        store.commit("score", '{"t": 1}', new_tables)
    new = store_state(store.path)
    store.commit("score", '{"t": 1}', old_tables)
    for k in range(1, count["n"] + 1):
        try:
            with faults(monkeypatch, at=k, error=OSError):
                store.commit("score", '{"t": 1}', new_tables)
        except OSError as exc:  # StoreWriteError: an EvalframeError and an OSError
            assert "previous version is intact" in str(exc)
            assert store_state(store.path) == old
            assert leftovers(tmp_path) == [], f"operation {k}"
        else:  # the failure hit the clean-up after the commit: the new set is whole
            assert store_state(store.path) == new
        store.commit("score", '{"t": 1}', old_tables)
        assert store_state(store.path) == old
