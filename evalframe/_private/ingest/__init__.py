"""`evalframe ingest`: convert other eval tools' result files into evalframe's tables and
append them to a dataset folder as new runs. See docs/ingest.md for the field mappings."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import evalframe._private.ingest._common as C
from evalframe._private import schema as S
from evalframe._private.errors import IngestError
from evalframe._private.ingest import (
    agentv,
    deepeval,
    inspect_log,
    langfuse,
    lmeval,
    mlflow,
    promptfoo,
    wide,
)
from evalframe._private.ingest.store import append_tables

__all__ = ["INGEST_FORMATS", "IngestError", "IngestReport", "ingest"]


def _files(*suffixes: str, prefix: str = "") -> Callable[[Path], list[Path]]:
    """A file as is; a folder: its files with one of `suffixes` (and names starting with
    `prefix`), recursively, sorted."""

    def found(path: Path) -> list[Path]:
        if not path.is_dir():
            return [path]
        out = sorted(
            p
            for p in path.rglob("*")
            if p.is_file() and p.suffix in suffixes and p.name.startswith(prefix)
        )
        if not out:
            raise IngestError(f"{path}: no {prefix}*{' / *'.join(suffixes)} files in this folder")
        return out

    return found


_ADAPTERS: dict[str, tuple[Callable[[Path], list[Path]], Callable[[Any, C.Options], C.Parsed]]] = {
    "agentv": (agentv.expand, agentv.parse),
    "promptfoo": (_files(".json"), promptfoo.parse),
    "inspect": (_files(".eval", ".json"), inspect_log.parse),
    "deepeval": (_files(".json"), deepeval.parse),
    "lmeval": (_files(".jsonl", prefix="samples_"), lmeval.parse),
    "langfuse": (_files(*langfuse.SUFFIXES), langfuse.parse),
    "mlflow": (mlflow.table_files, mlflow.parse),
    "wide": (_files(*wide.SUFFIXES), wide.parse),
}
"""Per format: the source files of a named file or folder, and the parser of one file
(of one run's files, for lm-eval)."""
INGEST_FORMATS = tuple(_ADAPTERS)
"""The formats `ingest` reads (its `format` argument, any case)."""


@dataclass(frozen=True)
class IngestReport:
    """What one `ingest` call did."""

    dataset: str
    format: str
    runs_added: tuple[str, ...]
    runs_replaced: tuple[str, ...]
    rows: Mapping[str, int] = field(default_factory=dict)
    """Rows added per table."""
    suggested_config: Mapping[str, Any] | None = None
    """A config (`{"evaluators": {...}}`) that scores the source as the tool did: for
    nested evaluator groups their tree; for a flat source with a lower-is-better metric
    (DeepEval's Hallucination, lm-eval's `higher_is_better: false`) every evaluator, that
    one with `higher_is_better: false`. None when the default config already does."""
    skipped: tuple[str, ...] = ()
    """What the source held but was not scored, and why (e.g. raw counts beside 0-1
    metrics in an Inspect score dict, kept as executions columns)."""

    def to_dict(self) -> dict[str, Any]:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}


def _check_request(
    fmt: str,
    format: str,
    sources: Sequence[str | Path],
    *,
    id_cols: Any,
    metrics: Any,
    labels: bool,
) -> None:
    """IngestError for an unknown format, an option the format does not take, or a missing
    source, before anything is read."""
    if fmt not in INGEST_FORMATS:
        raise IngestError(
            f"unknown format {format!r}; hint: choose one of {', '.join(INGEST_FORMATS)}."
        )
    if not sources:
        raise IngestError("no source files given; hint: name at least one file or folder.")
    if fmt != "wide" and metrics is not None:
        raise IngestError("--metrics applies to the `wide` format only.")
    if fmt not in ("wide", "langfuse", "mlflow") and id_cols is not None:
        raise IngestError("--id-cols applies to the `wide`, `langfuse` and `mlflow` formats only.")
    if labels and (fmt != "wide" or metrics is not None):
        raise IngestError("--labels reads the `wide` format (without --metrics) only.")
    missing = next((p for p in map(Path, sources) if not p.exists()), None)
    if missing is not None:
        raise IngestError(f"{missing}: no such file or folder")


def ingest(
    format: str,
    sources: Sequence[str | Path],
    to: str | Path,
    *,
    run_id: str | None = None,
    replace: bool = False,
    id_cols: str | Sequence[str] | None = None,
    scale_max: float | str | Mapping[str, float] | None = None,
    metrics: str | Sequence[str] | None = None,
    labels: bool = False,
) -> IngestReport:
    """Convert `sources` (files or folders) of `format` and append them to the dataset
    folder `to` as new runs.

    Run ids come from the source (AgentV run folder or file name, promptfoo evalId, Inspect
    log file name, DeepEval identifier, project folder (.latest_test_run.json) or file name,
    lm-eval model folder and timestamp, MLflow run id) or
    from `run_id`; a source holding several targets / providers gets one
    run per target, `BASE/TARGET`. Existing run ids are refused unless `replace=True`.
    With `labels=True` (`wide` only) the files hold human labels of the dataset's existing
    executions (docs/tables.md#labels; docs/ingest.md), added to its `labels` table, nothing else
    changed. `id_cols`, `scale_max`, `metrics` apply to the `wide` format (and `scale_max` to
    numeric Inspect, lm-eval, Langfuse and MLflow scores; `id_cols` to Langfuse's run
    column and case choice and MLflow's case column). Langfuse ANNOTATION scores and MLflow
    human assessments are written to the `labels` table. Raises IngestError (file and line
    named) on a malformed source; the dataset is then left unchanged.
    """
    fmt = format.lower()
    _check_request(fmt, format, sources, id_cols=id_cols, metrics=metrics, labels=labels)
    opts = C.Options(run_id, id_cols, scale_max, metrics)
    files = [f for src in sources for f in _ADAPTERS[fmt][0](Path(src))]
    parsed = C.Parsed()
    owners: dict[str, Path] = {}
    for unit in lmeval.runs(files, run_id) if fmt == "lmeval" else [[f] for f in files]:
        if labels:
            parsed.extend(wide.parse_labels(unit[0], opts))
            continue
        new = _ADAPTERS[fmt][1](unit if fmt == "lmeval" else unit[0], opts)
        for row in new.runs:
            row.setdefault(C.SOURCE_FILE, str(unit[0]))
            row["source_format"] = fmt
            # two sources of one call that derive the same run id: an error, unless the
            # user named the run (`run_id`), which merges them into one run
            owner = owners.setdefault(row[S.RUN_ID], unit[0])
            if owner != unit[0] and run_id is None:
                raise IngestError(
                    f"{unit[0]}: its run id {row[S.RUN_ID]!r} is also the run id of {owner}; "
                    "hint: ingest them in separate calls with different --run-id values, or "
                    "pass one --run-id to merge them into one run."
                )
        new.runs = [row for row in new.runs if owners[row[S.RUN_ID]] == unit[0]]
        parsed.extend(new)
    C.settle_nonfinite(parsed)
    tables = {
        name: C.frame(rows, name)
        for name, rows in parsed.tables().items()
        if rows or name in ((S.LABELS,) if labels else (S.SCORES, S.EXECUTIONS, S.RUNS))
    }
    result = append_tables(to, tables, replace=replace)
    return IngestReport(
        str(to),
        fmt,
        result.runs_added,
        result.runs_replaced,
        result.rows,
        suggested_config=None if labels else parsed.suggested_config(),
        skipped=() if labels else tuple(parsed.notes),
    )
