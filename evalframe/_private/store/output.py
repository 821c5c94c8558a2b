"""Writing output tables as a result set, all or nothing, with provenance.

`write_tables` is what score, compare, sweep and demo call; it commits the tables as one
result set of a results store (`DATASET/results`, see result_sets.py) or, for `--out DIR`,
as the single set of DIR (DIR/NAME.parquet). The config JSON, evalframe version, set id,
command and time go into the Parquet key-value metadata of every file.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import polars as pl

from evalframe._private.store.input_tables import clean_leftovers
from evalframe._private.store.result_sets import (
    METADATA_CONFIG,
    METADATA_VERSION,
    ResultFolder,
    ResultStore,
    default_store,
    is_store,
    normal_path,
    read_metadata,
)

__all__ = [
    "METADATA_CONFIG",
    "METADATA_VERSION",
    "read_metadata",
    "write_tables",
]


def write_tables(
    tables: Mapping[str, pl.DataFrame | pl.LazyFrame],
    out_dir: str | Path,
    *,
    config_json: str | None = None,
    command: str | None = None,
    dataset: str | Path | None = None,
    inputs_fingerprint: str | None = None,
    store: bool | None = None,
    lock_timeout: float | None = None,
) -> dict[str, Path]:
    """Commit `tables` (name -> frame) as one result set, all or nothing.

    `out_dir` is a results store when `store=True`, when it already is one, or when it is
    `dataset`'s default store (DATASET/results): the set goes to
    `out_dir/result_set=<id>/` (id: the config_id of `config_json`; a grid's id for a JSON
    list), replacing `command`'s earlier tables of that set. Otherwise `out_dir` becomes
    the set itself: `out_dir/NAME.parquet` (it must be new, empty, or an earlier set).
    Such an `out_dir` is a link to the set's current version folder in
    `out_dir/../.evalframe/<name>.set/` (ResultFolder): a write makes a new version folder
    and swaps the link in one rename, so a reader or a kill sees the previous set or the
    new one, never a mix (docs/results.md). That is by design, not a leftover; `cp -rL`
    copies the set as plain files.
    `config_json` (one config's JSON, or a JSON list for a sweep) and the evalframe version
    go into every file's Parquet metadata; `dataset` (and `inputs_fingerprint`, computed
    from it when not given) are recorded so `evalframe results` can flag stale sets.
    Returns table name -> file path of the committed set (an immutable file). Then,
    best effort, removes leftovers of killed writers in `dataset`'s folder.
    """
    out = Path(out_dir)
    if store is None:
        store = is_store(out) or (
            dataset is not None
            and normal_path(out) == normal_path(default_store(dataset))
            and not out.is_symlink()
        )
    writer = (ResultStore if store else ResultFolder)(out, lock_timeout=lock_timeout)
    result = writer.commit(
        command, config_json, tables, dataset=dataset, inputs_fingerprint=inputs_fingerprint
    )
    clean_leftovers(dataset)  # what killed writers left in the dataset folder, if any
    return {name: path for name, path in result.tables.items() if name in tables}
