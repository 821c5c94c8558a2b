"""Appending ingested runs to a dataset folder, all or nothing.

Appending reads the dataset's existing tables, refuses run ids that already exist unless
`replace` (which first drops those runs' rows), concatenates (diagonally: extra columns on
either side are kept), validates the combined tables with `Dataset.from_frames`, and only
then commits every table as one new version of the dataset's input tables
(store/input_tables.py): a kill at any instant leaves the old tables or the new ones, never
a mix. The dataset's writer lock is held from the read to the commit, so two ingests into
one folder never append on top of the same old tables.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import polars as pl

from evalframe._private import schema as S
from evalframe._private.data.dataset import Dataset
from evalframe._private.errors import IngestError, ValidationError
from evalframe._private.store.input_tables import input_writer


@dataclass(frozen=True)
class AppendResult:
    runs_added: tuple[str, ...]
    runs_replaced: tuple[str, ...]
    rows: dict[str, int]


def read_existing(root: Path) -> dict[str, pl.DataFrame]:
    """The dataset's current tables (absent tables left out)."""
    if root.exists() and not root.is_dir():
        raise IngestError(
            f"{root} is a file; hint: `--to` names a dataset folder (it is created if missing)."
        )
    out: dict[str, pl.DataFrame] = {}
    for name in S.STORED_INPUT_TABLES:
        if (root / name).is_dir():
            raise IngestError(
                f"{root / name} is a partitioned table folder; hint: ingest appends to "
                f"datasets stored as {name}.parquet files, ingest into a new folder instead."
            )
        path = root / f"{name}.parquet"
        if path.is_file():
            try:
                out[name] = pl.read_parquet(path)
            except Exception as exc:  # polars raises several error types for bad files
                raise IngestError(f"{path}: cannot read the existing table ({exc})") from None
    return out


def _run_ids(frames: dict[str, pl.DataFrame]) -> set[str]:
    columns = (df.get_column(S.RUN_ID) for df in frames.values() if S.RUN_ID in df.columns)
    return {v for col in columns for v in col.cast(pl.String).unique() if v}


def _concat(name: str, old: pl.DataFrame | None, new: pl.DataFrame | None) -> pl.DataFrame:
    parts = [f for f in (old, new) if f is not None]
    try:
        return parts[0] if len(parts) == 1 else pl.concat(parts, how="diagonal_relaxed")
    except (pl.exceptions.SchemaError, pl.exceptions.InvalidOperationError) as exc:
        raise IngestError(
            f"the new {name} rows do not fit the dataset's existing {name} table ({exc}); "
            "hint: a column has a different type in the existing table; ingest into a new "
            "folder."
        ) from None


def append_tables(
    root: str | Path, new: dict[str, pl.DataFrame], *, replace: bool = False
) -> AppendResult:
    """Add the runs in `new` (scores, executions, outcomes, runs and, optionally, labels
    frames) to the dataset; or, when `new` holds labels alone (`ingest wide --labels`), add
    those labels of its existing executions, every other table kept as it is (with
    `replace`, a new label replaces an existing one of the same key). Existing labels are
    kept (those of replaced runs dropped with their runs) and validated with the rest."""
    root = Path(root)
    if root.exists() and not root.is_dir():
        read_existing(root)  # raises: a file
    with input_writer(root) as commit:
        old = read_existing(root)
        if set(new) == {S.LABELS}:
            if S.SCORES not in old:
                raise IngestError(
                    f"{root} holds no dataset to label; hint: ingest the runs first, then "
                    "their labels."
                )
            labels, existing = new[S.LABELS], old.get(S.LABELS)
            if existing is not None and replace:
                key = [c for c in S.LABEL_KEY if c in existing.columns and c in labels.columns]
                existing = existing.join(labels.select(key), on=key, how="anti", nulls_equal=True)
            combined = {S.LABELS: _concat(S.LABELS, existing, labels)}
            _validate(root, {**old, **combined}, "the labels")
            commit(combined)
            return AppendResult(runs_added=(), runs_replaced=(), rows={S.LABELS: labels.height})
        incoming = sorted(_run_ids({k: v for k, v in new.items() if k != S.LABELS}))
        clash = sorted(set(incoming) & _run_ids(old))
        if clash and not replace:
            raise IngestError(
                f"run id(s) already in {root}: {', '.join(clash)}; hint: pass --replace "
                "(replace=True) to overwrite them, or --run-id to ingest under another id."
            )
        dropped = ~pl.col(S.RUN_ID).cast(pl.String).is_in(clash)
        old = {name: df.filter(dropped) for name, df in old.items()} if clash else old
        if S.EXECUTIONS in new and S.EXECUTIONS not in old and S.SCORES in old:
            # the old runs had implicit executions; make them explicit so they are not orphans
            sc = old[S.SCORES]
            attempt = pl.col(S.ATTEMPT) if S.ATTEMPT in sc.columns else pl.lit(0, pl.Int64)
            old[S.EXECUTIONS] = sc.select(
                S.RUN_ID, S.CASE_ID, attempt.cast(pl.Int64).fill_null(0).alias(S.ATTEMPT)
            ).unique(maintain_order=True)
        combined = {
            name: _concat(name, old.get(name), new.get(name))
            for name in S.STORED_INPUT_TABLES
            if name in old or name in new
        }
        if S.OUTCOMES in combined and combined[S.OUTCOMES].height == 0 and S.OUTCOMES not in old:
            del combined[S.OUTCOMES]
        _validate(root, combined, "the ingested rows")
        commit(combined)
    return AppendResult(
        runs_added=tuple(r for r in incoming if r not in clash),
        runs_replaced=tuple(clash),
        rows={name: df.height for name, df in new.items()},
    )


def _validate(root: Path, tables: dict[str, pl.DataFrame], what: str) -> None:
    """The tables as the dataset they would make, checked before anything is written."""
    try:
        Dataset.from_frames(
            tables[S.SCORES],
            tables.get(S.EXECUTIONS),
            tables.get(S.OUTCOMES),
            tables.get(S.RUNS),
            tables.get(S.LABELS),
            source=str(root),
        )
    except ValidationError as exc:
        raise IngestError(
            f"{what} would make {root} invalid; nothing was written.\n{exc}"
        ) from None
