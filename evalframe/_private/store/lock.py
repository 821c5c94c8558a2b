"""One writer at a time per store: an advisory lock on a file in the store's internals.

The lock is `flock` (POSIX) or `msvcrt.locking` (Windows) on `lock` in the store's hidden
folder; the operating system releases it when the process dies, so a killed writer never
leaves a stale lock. A second writer prints who holds it and waits up to
`EVALFRAME_LOCK_TIMEOUT` seconds (default 600), then fails with StoreError (exit 2).
Readers never take the lock.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from evalframe._private.store.fsops import StoreError

DEFAULT_TIMEOUT = 600.0
POLL = 0.05


def lock_timeout() -> float:
    """Seconds a writer waits for the lock: $EVALFRAME_LOCK_TIMEOUT, default 600."""
    raw = os.environ.get("EVALFRAME_LOCK_TIMEOUT")
    if raw is None:
        return DEFAULT_TIMEOUT
    try:
        return max(0.0, float(raw))
    except ValueError:
        raise StoreError(
            f"EVALFRAME_LOCK_TIMEOUT={raw!r} is not a number of seconds; hint: e.g. 60."
        ) from None


def _try_lock(fd: int) -> bool:
    if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
        import msvcrt

        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _unlock(fd: int) -> None:
    if sys.platform == "win32":  # pragma: no cover
        import msvcrt

        with contextlib.suppress(OSError):
            msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
        return
    import fcntl

    fcntl.flock(fd, fcntl.LOCK_UN)


def _holder(path: Path) -> str:
    try:
        return path.read_text().strip() or "another process"
    except OSError:
        return "another process"


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


@contextlib.contextmanager
def writer_lock(
    folder: Path,
    what: str,
    *,
    timeout: float | None = None,
    label: str = "",
    on_wait: Callable[[str], None] = _say,
) -> Iterator[None]:
    """Hold the writer lock of the store whose internals are `folder` (created if missing)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "lock"
    if path.is_symlink():  # never truncate (or lock) a file through a link
        raise StoreError(
            f"{path} is a link, not the lock file evalframe made; hint: remove the link and re-run."
        )
    fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o666)
    try:
        wait = lock_timeout() if timeout is None else timeout
        deadline = time.monotonic() + wait
        told = False
        while not _try_lock(fd):
            if time.monotonic() >= deadline:
                raise StoreError(
                    f"{what} is being written by {_holder(path)}; gave up after {wait:g} s; "
                    "hint: wait for it to finish, or raise EVALFRAME_LOCK_TIMEOUT."
                )
            if not told:
                on_wait(f"waiting for {_holder(path)} to finish writing {what} ...")
                told = True
            time.sleep(POLL)
        try:
            os.ftruncate(fd, 0)
            os.lseek(fd, 0, os.SEEK_SET)
            os.write(fd, f"pid {os.getpid()} {label}".strip().encode())
            yield
        finally:
            _unlock(fd)
    finally:
        os.close(fd)
