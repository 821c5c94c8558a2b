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
import errno
import os
import re
import secrets
import shutil
import time
from pathlib import Path

import polars as pl

from evalframe._private.errors import StoreError, StoreWriteError

INTERNALS = ".evalframe"
"""The hidden folder beside a store, `--out` folder or input tables holding the versions."""


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
    A LazyFrame is streamed into the file (never collected whole). A failure of the disk
    is raised as an OSError naming `path` (polars reports it as a ComputeError)."""
    try:
        if isinstance(frame, pl.LazyFrame):
            frame.sink_parquet(path, metadata=metadata)
        else:
            frame.write_parquet(path, metadata=metadata)
    except pl.exceptions.PolarsError as exc:
        disk = disk_error(exc, path)
        if disk is None:
            raise
        raise disk from exc
    fsync_path(path)


_OS_ERROR = re.compile(r"\(os error (\d+)\)")
_IO_WORDS = ("underlying io error", "transport error", "invalid thrift", "i/o error")
LOW_SPACE = 1 << 20
"""Bytes free below which an I/O failure without an errno is taken for a full disk."""


def disk_error(exc: BaseException, path: Path) -> OSError | None:
    """The OSError behind a writer's error message (polars: "... (os error 28)", or
    "Invalid thrift: transport error" when the footer could not be written), else None
    (an error of the computation, not of the disk)."""
    text = str(exc)
    found = _OS_ERROR.search(text)
    if found is not None:
        code = int(found.group(1))
        return OSError(code, os.strerror(code), str(path))
    if not any(w in text.lower() for w in _IO_WORDS):
        return None
    try:
        st = os.statvfs(path.parent)
        full = st.f_bavail * st.f_frsize < LOW_SPACE
    except OSError:
        full = False
    if full:
        return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
    return OSError(errno.EIO, f"write failed ({text})", str(path))


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


def leftovers(internals: Path, referenced: set[str]) -> list[Path]:
    """What interrupted commits left in `internals`: scratch links, and versions (with
    their manifests) whose names are not `referenced`."""
    return [
        entry
        for entry in internals.iterdir()
        if entry.name.startswith("link-")
        or (entry.name.startswith("v-") and entry.name.removesuffix(".json") not in referenced)
    ]


def remove_tree(path: Path) -> None:
    """Remove a folder, a file or a link; missing is fine."""
    if path.is_symlink() or path.is_file():
        path.unlink(missing_ok=True)
    elif path.is_dir():
        shutil.rmtree(path, ignore_errors=False)


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


def os_error(exc: OSError, what: str) -> StoreError:
    """A StoreError for a disk-level failure during a commit (what was half-written has
    been removed by then)."""
    where = f" ({exc.filename})" if exc.filename else ""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return StoreWriteError(
            f"no space left on device: cannot write {what}{where}; what was half-written "
            "was removed and the previous version is intact; hint: free disk space, then "
            "re-run."
        )
    return StoreWriteError(
        f"cannot write {what}: {exc.strerror or exc}{where}; the previous "
        "version is intact; hint: free disk space or fix permissions, then re-run."
    )


def own_version(slot: Path, internals: Path) -> Path | None:
    """The version folder `slot` links to, when it is one of `internals`' own versions
    (`internals/v-*`, a real folder); None when `slot` is not a link."""
    if not slot.is_symlink():
        return None
    target = (slot.parent / os.readlink(slot)).resolve()
    home = internals.resolve()
    if target.parent == home and target.name.startswith("v-") and target.is_dir():
        return target
    return None


def is_own_link(slot: Path, internals: Path) -> bool:
    """`slot` is a link to one of `internals`' versions, or a dangling link whose target
    would be one (a version removed by hand): a link evalframe may replace."""
    if not slot.is_symlink():
        return False
    target = (slot.parent / os.readlink(slot)).resolve()
    ours = target.parent == internals.resolve() and target.name.startswith("v-")
    return ours and (target.is_dir() or not target.exists())


def foreign_link_error(slot: Path, what: str) -> StoreError:
    """Refusing a link evalframe did not write (it is left as it is, and so is its target)."""
    try:
        target = os.readlink(slot)
    except OSError:
        target = "?"
    return StoreError(
        f"{what} {slot} is a link to {target}, not to a version evalframe wrote in its own "
        "folder; evalframe never removes, replaces or writes through such a link, and "
        f"touched nothing; hint: check where the link points, then remove {slot} (the link "
        "only) and re-run."
    )


def check_own_internals(base: Path, internals: Path) -> None:
    """Refuse internals reached through a link: every existing folder from
    `base/.evalframe` down to `internals` must be a real folder (else removing old
    versions or taking the lock would act on another folder)."""
    probe = base / INTERNALS
    parts = internals.relative_to(probe).parts if internals != probe else ()
    for part in ("", *parts):
        probe = probe / part if part else probe
        if probe.is_symlink():
            raise StoreError(
                f"{probe} is a link, not a folder evalframe made; evalframe keeps its "
                "versions and lock there and never works through a link; hint: remove the "
                "link (or replace it with the folder it points to) and re-run."
            )
        if probe.exists() and not probe.is_dir():
            raise StoreError(
                f"{probe} is a file, not evalframe's folder; hint: move it away and re-run."
            )
