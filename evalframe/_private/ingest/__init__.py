"""`evalframe ingest`: convert other eval tools' result files into evalframe's tables and
append them to a dataset folder as new runs. See docs/ingest.md for the field mappings."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalframe._private import schema as S
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
from evalframe._private.ingest._common import IngestError, Parsed, frame, settle_nonfinite
from evalframe._private.ingest.store import append_tables

__all__ = ["INGEST_FORMATS", "IngestError", "IngestReport", "ingest"]

INGEST_FORMATS = (
    "agentv",
    "promptfoo",
    "inspect",
    "deepeval",
    "lmeval",
    "langfuse",
    "mlflow",
    "wide",
)
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
        return {
            "dataset": self.dataset,
            "format": self.format,
            "runs_added": list(self.runs_added),
            "runs_replaced": list(self.runs_replaced),
            "rows": dict(self.rows),
            "suggested_config": self.suggested_config,
            "skipped": list(self.skipped),
        }


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
    if labels:
        return _ingest_labels(fmt, sources, to, run_id, replace, id_cols, scale_max, metrics)
    parsed = Parsed()
    owners: dict[str, Path] = {}

    def add(new: Parsed, f: Path) -> None:
        _check_collisions(new, f, owners, merge=run_id is not None)
        parsed.extend(new)

    lm_runs: dict[str, list[Path]] = {}
    for src in sources:
        path = Path(src)
        if not path.exists():
            raise IngestError(f"{path}: no such file or folder")
        if fmt == "lmeval":
            for f in _files(path, (".jsonl",), prefix="samples_"):
                lm_runs.setdefault(run_id or lmeval.run_base(f), []).append(f)
        elif fmt == "deepeval":
            for f in _files(path, (".json",)):
                add(deepeval.parse(f, run_id=run_id), f)
        elif fmt == "agentv":
            for f in agentv.expand(path):
                add(agentv.parse(f, run_id=run_id), f)
        elif fmt == "promptfoo":
            for f in _files(path, (".json",)):
                add(promptfoo.parse(f, run_id=run_id), f)
        elif fmt == "langfuse":
            for f in _files(path, langfuse.SUFFIXES):
                add(langfuse.parse(f, run_id=run_id, id_cols=id_cols, scale_max=scale_max), f)
        elif fmt == "mlflow":
            for f in mlflow.table_files(path):
                add(mlflow.parse(f, run_id=run_id, id_cols=id_cols, scale_max=scale_max), f)
        elif fmt == "inspect":
            for f in _files(path, (".eval", ".json")):
                add(inspect_log.parse(f, run_id=run_id, scale_max=scale_max), f)
        else:
            for f in _files(path, wide.SUFFIXES):
                new = wide.parse(
                    f, run_id=run_id, id_cols=id_cols, scale_max=scale_max, metrics=metrics
                )
                add(new, f)
    for rid, files in lm_runs.items():
        add(lmeval.parse(files, run_id=rid, scale_max=scale_max), files[0])
    settle_nonfinite(parsed)
    tables = {
        S.SCORES: frame(parsed.scores, S.SCORES),
        S.EXECUTIONS: frame(parsed.executions, S.EXECUTIONS),
        S.RUNS: frame(parsed.runs, S.RUNS),
    }
    if parsed.outcomes:
        tables[S.OUTCOMES] = frame(parsed.outcomes, S.OUTCOMES)
    if parsed.labels:
        tables[S.LABELS] = frame(parsed.labels, S.LABELS)
    result = append_tables(to, tables, replace=replace)
    return IngestReport(
        dataset=str(to),
        format=fmt,
        runs_added=result.runs_added,
        runs_replaced=result.runs_replaced,
        rows=result.rows,
        suggested_config=parsed.suggested_config(),
        skipped=tuple(parsed.notes),
    )


def _ingest_labels(fmt, sources, to, run_id, replace, id_cols, scale_max, metrics):
    """`ingest wide --labels`: the files' labels appended to the dataset's labels table."""
    if fmt != "wide" or metrics is not None:
        raise IngestError("--labels reads the `wide` format (without --metrics) only.")
    parsed = Parsed()
    for src in sources:
        path = Path(src)
        if not path.exists():
            raise IngestError(f"{path}: no such file or folder")
        for f in _files(path, wide.SUFFIXES):
            parsed.extend(wide.parse_labels(f, run_id=run_id, id_cols=id_cols, scale_max=scale_max))
    settle_nonfinite(parsed)
    result = append_tables(to, {S.LABELS: frame(parsed.labels, S.LABELS)}, replace=replace)
    return IngestReport(
        dataset=str(to), format=fmt, runs_added=(), runs_replaced=(), rows=result.rows
    )


def _check_collisions(new: Parsed, f: Path, owners: dict[str, Path], *, merge: bool) -> None:
    """Two sources of one call that derive the same run id: an error, unless the user
    named the run (`run_id`), which merges them into one run (one runs row kept)."""
    kept = []
    for row in new.runs:
        rid = row[S.RUN_ID]
        owner = owners.setdefault(rid, f)
        if owner == f:
            kept.append(row)
        elif not merge:
            raise IngestError(
                f"{f}: its run id {rid!r} is also the run id of {owner}; hint: ingest them "
                "in separate calls with different --run-id values, or pass one --run-id to "
                "merge them into one run."
            )
    new.runs = kept


def _files(path: Path, suffixes: tuple[str, ...], prefix: str = "") -> list[Path]:
    """A file as is; a folder: its files with one of `suffixes` (and names starting with
    `prefix`), recursively, sorted."""
    if not path.is_dir():
        return [path]
    found = sorted(
        p
        for p in path.rglob("*")
        if p.is_file() and p.suffix in suffixes and p.name.startswith(prefix)
    )
    if not found:
        raise IngestError(f"{path}: no {prefix}*{' / *'.join(suffixes)} files in this folder")
    return found
