"""A cheap fingerprint of a dataset's input tables: which files, their sizes, modification
times and (for single Parquet files) row counts from the footer. No table is read.

A result set records the fingerprint of the inputs it was computed from; `evalframe results`
flags a set as stale when the dataset's fingerprint has changed since.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from evalframe._private import schema as S


def _file_entry(path: Path, *, rows: bool) -> dict[str, Any]:
    st = path.stat()
    entry: dict[str, Any] = {"bytes": st.st_size, "mtime_ns": st.st_mtime_ns}
    if rows:
        try:
            import pyarrow.parquet as pq

            entry["rows"] = pq.read_metadata(path).num_rows
        except Exception:  # an unreadable file: the loader reports it; size+mtime suffice here
            entry["rows"] = None
    return entry


def input_files(dataset: str | Path) -> dict[str, Any]:
    """Per input table: its files' sizes, mtimes and rows (absent tables left out)."""
    root = Path(dataset)
    if root.is_file():  # a DuckDB database file
        return {"database": _file_entry(root, rows=False)}
    out: dict[str, Any] = {}
    for name in S.INPUT_TABLES:
        single = root / f"{name}.parquet"
        folder = root / name
        if single.is_file():
            out[name] = _file_entry(single, rows=True)
        elif folder.is_dir():
            files = sorted(folder.rglob("*.parquet"))
            parts = [_file_entry(f, rows=False) for f in files]
            out[name] = {
                "files": len(files),
                "bytes": sum(p["bytes"] for p in parts),
                "digest": _digest(
                    [[str(f.relative_to(folder)), p] for f, p in zip(files, parts, strict=True)]
                ),
            }
    return out


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:16]


def inputs_fingerprint(dataset: str | Path | None) -> str | None:
    """The fingerprint of the dataset's input tables (None without a dataset, or when
    the dataset does not exist)."""
    if dataset is None or not Path(dataset).exists():
        return None
    return _digest(input_files(dataset))
