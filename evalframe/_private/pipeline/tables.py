"""`Tables`: what `score_tables`, `compare_tables` and `sweep_tables` return."""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from typing import Any, TypeVar

import polars as pl

from evalframe._private.data.validate import ClampReport

Frame = pl.DataFrame | pl.LazyFrame
FrameT = TypeVar("FrameT", bound=Frame)


class Tables(dict[str, FrameT]):
    """Result tables keyed by table name (docs/tables.md), as `evalframe` writes them.

    - `score_tables`: execution_scores, case_summary, run_summary; evaluator_scores with
      `evaluators=True`; slice_summary with `by=`.
    - `compare_tables`: case_deltas, evaluator_deltas, run_deltas; slice_deltas with `by=`.
    - `sweep_tables`: sweep, sweep_configs; threshold_curve with `curve=True`.

    Values are polars DataFrames, except that execution_scores and case_summary of
    `score_tables` are LazyFrames over spill files when the input is larger than the
    memory budget (scored batch by batch of runs); `.lazy()` reads either kind. A
    `Tables` is a `dict`: `tables["run_summary"]` is one table and
    `write_tables(tables, out)` writes them all as one result set. For type checkers the
    class is generic in its values: `compare_tables` and `sweep_tables` return
    `Tables[pl.DataFrame]`.
    """

    clamped: ClampReport | None
    """What `clamp=True` changed in the scores (None without clamp)."""
    path: str
    """Which pass computed execution_scores: "flat", "tree", "duckdb" or "spark"."""
    spill: tempfile.TemporaryDirectory[str] | None
    """Spill files behind lazy tables; they live as long as this object."""
    pairs: list[tuple[str, str]]
    """`compare_tables`: the (baseline, candidate) run ids compared, in order."""
    scored: Tables[Any] | None
    """`compare_tables`: the `score_tables` result the deltas came from."""
    notes: list[str]
    """What a reader of the tables should know (the CLI prints each on stderr), e.g. that
    `history_tables` fitted one trend across runs of different models."""

    def __init__(self, tables: Mapping[str, FrameT] | None = None) -> None:
        super().__init__(tables or {})
        self.clamped = None
        self.path = "tree"
        self.spill = None
        self.pairs = []
        self.scored = None
        self.notes = []


ScoreTables = Tables
"""Former name of `Tables` as returned by `score_tables` (kept for user code)."""
CompareTables = Tables
"""Former name of `Tables` as returned by `compare_tables` (kept for user code)."""
