"""The few file operations a commit is made of, and the one atomic step: a link swap.

A *slot* is a path (a result-set folder, or the `current` pointer of a dataset's input
tables) that is a symbolic link to an immutable *version* folder. A commit writes a whole
new version, then makes the slot point at it with one `os.replace` of a link: on POSIX a
rename is atomic, so a reader (or a process killed at any instant) sees the old version or
the new one, never a mix. Versions no slot points at are leftovers of an interrupted commit
(or the version just replaced) and are removed by the next writer, under the store's lock.

Every write goes through `os` functions (`os.open`, `os.replace`, `os.symlink`, ...) or
`DataFrame.write_parquet`, so tests can inject a failure at each of them.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import time
from pathlib import Path

import polars as pl

from evalframe._private.errors import EvalframeError

INTERNALS = ".evalframe"
"""The hidden folder beside a store, `--out` folder or input tables holding the versions."""


class StoreError(EvalframeError):
    """A result or input location cannot be written (a file, not writable, inside the
    dataset's input tables, locked by another writer, or the disk failed)."""


def token() -> str:
    """A sortable unique name part: UTC time to the microsecond plus 4 random bytes."""
    now = time.time()
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(now)) + f"{int(now * 1e6) % 1_000_000:06d}"
    return f"{stamp}-{secrets.token_hex(4)}"


def fsync_path(path: Path) -> None:
    """Flush a file's or folder's data to disk (folders: their entries). A file system
    that cannot fsync folders (some network mounts) is not an error."""
    fd = os.open(path, os.O_RDONLY)
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)


def write_bytes(path: Path, data: bytes) -> None:
    """Create `path` (it must not exist) with `data`, flushed; mode 0666 minus the umask."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)


def write_parquet(
    frame: pl.DataFrame | pl.LazyFrame, path: Path, metadata: dict[str, str] | None
) -> None:
    """Write one Parquet file (new path) and flush it; polars creates it with the umask.
    A LazyFrame is streamed into the file (never collected whole)."""
    if isinstance(frame, pl.LazyFrame):
        frame.sink_parquet(path, metadata=metadata)
    else:
        frame.write_parquet(path, metadata=metadata)
    fsync_path(path)


def link_or_copy(src: Path, dst: Path) -> None:
    """Hard-link an immutable file into a new version (a copy where links are refused)."""
    try:
        os.link(src, dst)
    except OSError:
        shutil.copyfile(src, dst)
        fsync_path(dst)


def swap_link(slot: Path, target: str, scratch: Path) -> None:
    """Make `slot` a symbolic link to `target` (relative to slot's folder) atomically: a
    new link is made in `scratch` (same file system) and renamed over the slot."""
    tmp = scratch / f"link-{token()}"
    os.symlink(target, tmp)
    os.replace(tmp, slot)  # the commit point: nothing after it may report a failure
    with contextlib.suppress(OSError):
        fsync_path(slot.parent)


def remove_tree(path: Path) -> None:
    """Remove a folder, a file or a link; missing is fine."""
    if path.is_symlink() or path.is_file():
        path.unlink(missing_ok=True)
    elif path.is_dir():
        shutil.rmtree(path, ignore_errors=False)


def relative_target(slot: Path, version: Path) -> str:
    """The link text that points from `slot`'s folder to `version`."""
    return os.path.relpath(version, slot.parent)


def check_writable_folder(folder: Path, what: str) -> None:
    """Raise StoreError unless `folder` (or the nearest existing ancestor, where it would
    be created) is a writable folder: not a file, not under a file."""
    probe = folder
    while not probe.exists() and not probe.is_symlink():
        if probe.parent == probe:
            break
        probe = probe.parent
    if probe.is_symlink() and not probe.exists():
        raise StoreError(f"{what} {folder}: {probe} is a broken link; hint: remove it.")
    if not probe.is_dir():
        where = "is a file" if probe == folder else f"is under {probe}, which is a file"
        raise StoreError(f"{what} {folder} {where}; hint: pick a folder path.")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise StoreError(
            f"{what} {folder}: {probe} is not writable; hint: pick a folder you can write to."
        )


class StoreWriteError(StoreError, OSError):
    """The disk failed during a commit (full, permissions); the previous version is intact.
    Also an OSError, so `except OSError` keeps working."""


def os_error(exc: OSError, what: str) -> StoreError:
    """A StoreError for a disk-level failure during a commit."""
    return StoreWriteError(
        f"cannot write {what}: {exc.strerror or exc} ({exc.filename or ''}); the previous "
        "version is intact; hint: free disk space or fix permissions, then re-run."
    )
