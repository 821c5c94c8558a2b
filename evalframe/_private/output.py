"""Writing output tables atomically, with provenance in the Parquet key-value metadata."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

import polars as pl

from evalframe._private.version import __version__

METADATA_CONFIG = "evalframe.config"
METADATA_VERSION = "evalframe.version"


def write_tables(
    tables: Mapping[str, pl.DataFrame | pl.LazyFrame],
    out_dir: str | Path,
    *,
    config_json: str | None = None,
) -> dict[str, Path]:
    """Write each table as `NAME.parquet` in `out_dir`, all or nothing.

    Every table is first written to a temporary file in `out_dir` (so nothing is visible
    while frames are still being computed); only when all of them are complete are they
    renamed into place. A failure before that leaves the previous outputs untouched.
    `config_json` (one config's JSON, or a JSON list for a sweep) and the evalframe
    version go into the Parquet key-value metadata of every file.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    metadata = {METADATA_VERSION: __version__}
    if config_json is not None:
        metadata[METADATA_CONFIG] = config_json
    temps: dict[str, Path] = {}
    try:
        frames = dict(tables)
        lazy = {name: f for name, f in frames.items() if isinstance(f, pl.LazyFrame)}
        if lazy:
            collected = pl.collect_all(list(lazy.values()))
            frames.update(zip(lazy, collected, strict=True))
        for name, frame in frames.items():
            fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".parquet.tmp", dir=out)
            os.close(fd)
            temps[name] = Path(tmp)
            frame.write_parquet(tmp, metadata=metadata)
    except BaseException:
        for tmp in temps.values():
            tmp.unlink(missing_ok=True)
        raise
    final = {}
    for name, tmp in temps.items():
        target = out / f"{name}.parquet"
        os.replace(tmp, target)
        final[name] = target
    return final


def write_table_atomic(frame: pl.DataFrame, target: str | Path) -> Path:
    """Write one Parquet file via a temporary file in the same folder and a rename."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    try:
        frame.write_parquet(tmp)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def read_metadata(path: str | Path) -> dict[str, str]:
    """The evalframe key-value metadata of a Parquet file written by `write_tables`."""
    import pyarrow.parquet as pq

    raw = pq.read_metadata(path).metadata or {}
    return {
        k.decode(): v.decode()
        for k, v in raw.items()
        if k.decode() in (METADATA_CONFIG, METADATA_VERSION)
    }


def config_metadata(configs: list[str]) -> str:
    """One config's JSON as is; several as a JSON list."""
    if len(configs) == 1:
        return configs[0]
    return json.dumps([json.loads(c) for c in configs], sort_keys=True)
