"""A dataset's input tables written all or nothing (what `ingest` and `demo` write through).

The tables stay readable as plain `DATASET/NAME.parquet` paths (load_dataset, DuckDB and
polars read them as before), but each is a link into one version folder:

    DATASET/scores.parquet     -> .evalframe/inputs/current/scores.parquet
    DATASET/executions.parquet -> .evalframe/inputs/current/executions.parquet
    DATASET/.evalframe/inputs/current -> v-<token>          (the one pointer)
    DATASET/.evalframe/inputs/v-<token>/NAME.parquet         (immutable)

A commit writes a complete new version, adds the links of tables that are new (they
dangle, i.e. the table is absent, until the pointer moves), and swaps `current` with one
atomic rename: every table moves from the old version to the new at the same instant, so
`scores` new beside `executions` old cannot happen, whenever the writer is killed.

A dataset of real files (written by hand, or by earlier evalframe versions) is first
converted without changing any content: its files are hard-linked (or copied) into a
version, `current` points there, and each file is replaced by its link, so every table
shows the same bytes throughout.

Leftovers of killed writers (versions no pointer refers to, scratch links, dangling links
of tables a commit never made current, the `.NAME.parquet.*.tmp` files earlier evalframe
versions wrote into the dataset folder, and stale `.report.html.*.tmp` files) are removed
by the next writer under the dataset's lock: `ingest` and `demo` at their start, `score`,
`compare` and `sweep` after their commit (`clean_leftovers`, only when the lock is free).
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import polars as pl

from evalframe._private import schema as S
from evalframe._private.store import fsops
from evalframe._private.store.fsops import INTERNALS
from evalframe._private.store.lock import writer_lock

POINTER = "current"

_TABLE_TEMP = re.compile(rf"^\.({'|'.join(S.STORED_INPUT_TABLES)})\.parquet\..+\.tmp$")
"""A temp file of a table written by an earlier `demo` (it wrote file by file)."""
_REPORT_TEMP = re.compile(r"^\.report\.html\.[0-9a-f]+\.tmp$")
"""A temp file of DATASET/report.html (`demo`, `report`): renamed within milliseconds, so
one older than REPORT_TEMP_AGE seconds belongs to a killed writer. (The report is written
without the dataset's lock, so a younger one may be a live writer's.)"""
REPORT_TEMP_AGE = 60.0


def _internals(root: Path) -> Path:
    return root / INTERNALS / "inputs"


def _link_text(name: str) -> str:
    return f"{INTERNALS}/inputs/{POINTER}/{name}.parquet"


def _current(internals: Path) -> Path | None:
    """The version `current` points to: only ever one of this dataset's own versions."""
    return fsops.own_version(internals / POINTER, internals)


def _pointer_is_ours(internals: Path) -> bool:
    """`current` is missing or a link evalframe may replace (into `internals`), and
    `internals` is a real folder (not reached through a link)."""
    ptr = internals / POINTER
    if internals.is_symlink() or internals.parent.is_symlink():
        return False
    return fsops.is_own_link(ptr, internals) or not (ptr.exists() or ptr.is_symlink())


def _check_pointer(root: Path, internals: Path) -> None:
    """Refuse a dataset whose `current` pointer is not evalframe's (nothing is touched)."""
    fsops.check_own_internals(root, internals)
    ptr = internals / POINTER
    if ptr.is_symlink() and not fsops.is_own_link(ptr, internals):
        raise fsops.foreign_link_error(ptr, "the pointer to the input tables,")
    if not ptr.is_symlink() and ptr.exists():
        raise fsops.StoreError(
            f"the pointer to the input tables, {ptr}, is a {'folder' if ptr.is_dir() else 'file'}"
            " (a dataset copied with `cp -rL`?), not the link evalframe writes; evalframe "
            "replaces nothing it did not make and touched nothing; hint: if the tables "
            f"{root}/NAME.parquet are plain files, move {internals} away and re-run."
        )


def _root_temps(root: Path) -> list[Path]:
    """Temp files killed writers left in the dataset folder."""
    out = []
    now = time.time()
    with contextlib.suppress(OSError):
        for entry in os.scandir(root):
            if _TABLE_TEMP.match(entry.name) and not entry.is_dir(follow_symlinks=False):
                out.append(Path(entry.path))
            elif _REPORT_TEMP.match(entry.name) and entry.is_file(follow_symlinks=False):
                with contextlib.suppress(OSError):
                    if now - entry.stat(follow_symlinks=False).st_mtime > REPORT_TEMP_AGE:
                        out.append(Path(entry.path))
    return out


def _stale_entries(root: Path, internals: Path) -> list[Path]:
    """What interrupted commits left: scratch links, versions no pointer refers to,
    links of tables the current version does not have, temp files in the dataset folder."""
    out = _root_temps(root)
    if internals.is_dir() and _pointer_is_ours(internals):
        current = _current(internals)
        out += fsops.leftovers(internals, {current.name} if current is not None else set())
    for name in S.STORED_INPUT_TABLES:
        p = root / f"{name}.parquet"
        if _is_our_link(p, name) and not p.exists():
            out.append(p)
    return out


def _cleanup(root: Path, internals: Path) -> None:
    for entry in _stale_entries(root, internals):  # under the dataset's lock
        fsops.remove_tree(entry)


def clean_leftovers(dataset: str | Path | None) -> None:
    """Best effort, for commands that read a dataset but do not write its input tables
    (score, compare, sweep): remove what killed writers left in the dataset folder, under
    the dataset's lock, only when the lock is free at once and there is something to
    remove (nothing is created otherwise). Never raises."""
    if dataset is None:
        return
    root = Path(dataset).absolute()
    internals = _internals(root)
    try:
        if not root.is_dir() or not _stale_entries(root, internals):
            return
        with writer_lock(internals, "cleanup", timeout=0.0, on_wait=lambda _m: None):
            _cleanup(root, internals)
    except (OSError, fsops.StoreError):
        pass


def _is_our_link(path: Path, name: str) -> bool:
    return path.is_symlink() and os.readlink(path) == _link_text(name)


def _convert(root: Path, internals: Path) -> None:
    """Real table files become links into a version with the same bytes."""
    paths = {n: root / f"{n}.parquet" for n in S.STORED_INPUT_TABLES}
    real = [n for n, p in paths.items() if p.is_file() and not _is_our_link(p, n)]
    if not real:
        return
    old = _current(internals)
    version = internals / f"v-{fsops.token()}"
    os.mkdir(version)
    for name, p in paths.items():
        if p.is_file():
            fsops.link_or_copy(p.resolve(), version / f"{name}.parquet")
    fsops.fsync_path(version)
    fsops.swap_link(internals / POINTER, version.name, internals)
    for name in real:
        fsops.swap_link(paths[name], _link_text(name), internals)
    if old is not None:
        with contextlib.suppress(OSError):
            fsops.remove_tree(old)


def _commit(root: Path, internals: Path, tables: Mapping[str, pl.DataFrame]) -> None:
    _convert(root, internals)
    old = _current(internals)
    version = internals / f"v-{fsops.token()}"
    os.mkdir(version)
    for name, frame in tables.items():
        fsops.write_parquet(frame, version / f"{name}.parquet", None)
    for name in S.STORED_INPUT_TABLES:  # tables not given stay as they are
        kept = old / f"{name}.parquet" if old is not None else None
        if name not in tables and kept is not None and kept.is_file():
            fsops.link_or_copy(kept, version / f"{name}.parquet")
    fsops.fsync_path(version)
    for name in tables:  # links of new tables: dangling (absent) until the swap
        link = root / f"{name}.parquet"
        if not link.is_symlink():
            fsops.swap_link(link, _link_text(name), internals)
    fsops.swap_link(internals / POINTER, version.name, internals)  # the commit
    with contextlib.suppress(OSError):  # best effort: else the next writer removes them
        if old is not None:
            fsops.remove_tree(old)
        _cleanup(root, internals)


@contextlib.contextmanager
def input_writer(
    root: str | Path, *, lock_timeout: float | None = None, label: str = "ingest"
) -> Iterator[Callable[[Mapping[str, pl.DataFrame]], None]]:
    """Hold the dataset's writer lock; yield `commit(tables)`, which replaces the input
    tables named in `tables` (others are kept) all or nothing. Read the old tables inside
    the block, so two writers never append on top of the same old state. `label` names
    the command in the lock file (shown to a writer that waits)."""
    root = Path(root).absolute()
    internals = _internals(root)
    fsops.check_writable_folder(root, "dataset")
    _check_pointer(root, internals)
    try:
        root.mkdir(parents=True, exist_ok=True)
        with writer_lock(internals, f"dataset {root}", timeout=lock_timeout, label=label):
            _check_pointer(root, internals)  # again, under the lock
            _cleanup(root, internals)

            def commit(tables: Mapping[str, pl.DataFrame]) -> None:
                unknown = sorted(set(tables) - set(S.STORED_INPUT_TABLES))
                if unknown:
                    raise fsops.StoreError(f"not input tables: {', '.join(unknown)}")
                _commit(root, internals, tables)

            yield commit
    except Exception as exc:
        # an ordinary failure's leftovers go at once (a kill leaves them to the next writer)
        clean_leftovers(root)
        if isinstance(exc, OSError):
            raise fsops.os_error(exc, f"dataset {root}") from exc
        raise
