"""A cheap fingerprint of a dataset's input tables, from what is inside the dataset: per
table, its files (paths relative to the dataset), their sizes and a hash of each Parquet
file's footer (which holds the row count, the byte offsets and sizes of every column
chunk and the column statistics); for a DuckDB database file, its size and a hash of its
headers (rewritten at every checkpoint). No table is read, and neither modification
times nor the dataset's absolute path enter it: a copy of a dataset (`cp -r`, `cp -rL`)
has the fingerprint of the original, and a change in either shows.

A result set records the fingerprint of the inputs it was computed from; `evalframe results`
flags a set as stale when the dataset's fingerprint has changed since. Fingerprints
recorded by earlier versions (sizes and modification times, no prefix) are still compared
their way.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from evalframe._private import schema as S

PREFIX = "2:"
"""Marks a content fingerprint (older ones were built from modification times)."""
_FOOTER_MAX = 64 << 20
_DB_HEADER = 3 * 4096
"""DuckDB's main header and its two database headers (the latter change at each checkpoint)."""


def _hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def _footer(path: Path) -> str | None:
    """The hash of a Parquet file's footer (None: not a readable Parquet file)."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            if size < 12:
                return None
            f.seek(size - 8)
            tail = f.read(8)
            length = int.from_bytes(tail[:4], "little")
            if tail[4:] != b"PAR1" or length > min(size - 12, _FOOTER_MAX):
                return None
            f.seek(size - 8 - length)
            return _hash(f.read(length))
    except OSError:
        return None


def _rows(path: Path) -> int | None:
    try:
        import pyarrow.parquet as pq

        return int(pq.read_metadata(path).num_rows)
    except Exception:  # an unreadable file: the loader reports it; size+footer suffice here
        return None


def _file_entry(path: Path, *, rows: bool) -> dict[str, Any]:
    entry: dict[str, Any] = {"bytes": path.stat().st_size, "footer": _footer(path)}
    if rows:
        entry["rows"] = _rows(path)
    return entry


def _legacy_entry(path: Path, *, rows: bool) -> dict[str, Any]:
    """What earlier versions recorded of a file: size, modification time, rows."""
    st = path.stat()
    entry: dict[str, Any] = {"bytes": st.st_size, "mtime_ns": st.st_mtime_ns}
    if rows:
        entry["rows"] = _rows(path)
    return entry


def _database_entry(path: Path) -> dict[str, Any]:
    entry: dict[str, Any] = {"bytes": path.stat().st_size}
    with open(path, "rb") as f:
        entry["header"] = _hash(f.read(_DB_HEADER))
    wal = path.with_name(path.name + ".wal")
    if wal.is_file():
        entry["wal_bytes"] = wal.stat().st_size
    return entry


def input_files(dataset: str | Path, file_entry: Any = _file_entry) -> dict[str, Any]:
    """Per input table: its files' sizes, footer hashes and rows (absent tables left out)."""
    root = Path(dataset)
    if root.is_file():  # a DuckDB database file
        legacy = file_entry is _legacy_entry
        return {"database": _legacy_entry(root, rows=False) if legacy else _database_entry(root)}
    out: dict[str, Any] = {}
    for name in S.STORED_INPUT_TABLES:
        single = root / f"{name}.parquet"
        folder = root / name
        if single.is_file():
            out[name] = file_entry(single, rows=True)
        elif folder.is_dir():
            files = sorted(folder.rglob("*.parquet"))
            parts = [file_entry(f, rows=False) for f in files]
            out[name] = {
                "files": len(files),
                "bytes": sum(p["bytes"] for p in parts),
                "digest": _digest(
                    [[str(f.relative_to(folder)), p] for f, p in zip(files, parts, strict=True)]
                ),
            }
    return out


def _digest(value: Any) -> str:
    return _hash(json.dumps(value, sort_keys=True).encode())


def inputs_fingerprint(dataset: str | Path | None) -> str | None:
    """The fingerprint of the dataset's input tables (None without a dataset, or when
    the dataset does not exist)."""
    if dataset is None or not Path(dataset).exists():
        return None
    return PREFIX + _digest(input_files(dataset))


def matches(dataset: str | Path, recorded: str) -> bool:
    """Whether the dataset's input tables are still the ones `recorded` describes
    (False when the dataset is gone)."""
    root = Path(dataset)
    if not root.exists():
        return False
    try:
        if recorded.startswith(PREFIX):
            return inputs_fingerprint(root) == recorded
        return _digest(input_files(root, _legacy_entry)) == recorded
    except OSError:
        return False
