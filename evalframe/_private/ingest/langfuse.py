"""Langfuse score exports: the blob storage integration's `scores/` files (JSONL, JSON,
CSV or Parquet), one row per score. Judge and API scores become `scores`; human
ANNOTATION scores become `labels` (docs/judges.md). See docs/ingest.md."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import evalframe._private.ingest._common as C
from evalframe._private import schema as S
from evalframe._private.errors import IngestError
from evalframe._private.ingest._common import key

SUFFIXES = (".jsonl", ".ndjson", ".json", ".csv", ".parquet")
DATA_TYPES = ("NUMERIC", "BOOLEAN", "CATEGORICAL")
SOURCES = ("API", "EVAL", "ANNOTATION")
TRACE_ID = "trace_id"
OBSERVATION_ID = "observation_id"


def _options(id_cols: str | Sequence[str] | None, where: str) -> tuple[str | None, str]:
    """(run column, case column) from `--id-cols run_id=COL,case_id=observation_id`."""
    hint = (
        "'run_id=COLUMN' (e.g. run_id=dataset_run_id, run_id=session_id) and/or "
        "'case_id=observation_id'"
    )
    cols = C.id_columns(id_cols, where, "langfuse", (S.RUN_ID, S.CASE_ID), hint)
    case_col = cols.get(S.CASE_ID, TRACE_ID)
    if case_col not in (TRACE_ID, OBSERVATION_ID):
        raise IngestError(
            f"{where}: --id-cols case_id={case_col!r}: a Langfuse case is a trace or an "
            "observation; hint: case_id=trace_id (default) or case_id=observation_id."
        )
    return cols.get(S.RUN_ID), case_col


def _records(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """The score rows of a Langfuse scores export, refused when it is not one."""
    records = C.read_records(path)
    if not records:
        raise IngestError(f"{path}: no score rows")
    missing = [k for k in ("name", "value", "data_type", "source") if k not in records[0][1]]
    if missing:
        raise IngestError(
            f"{records[0][0]}: not a Langfuse scores export (no {', '.join(missing)}); hint: "
            "pass the files of the blob storage export's `scores/` folder."
        )
    return records


def parse(path: Path, opts: C.Options) -> C.Parsed:
    run_col, case_col = _options(opts.id_cols, str(path))
    scales = opts.scales(path)
    records = _records(path)
    out = C.Parsed()
    executions: dict[tuple[str, str], dict[str, Any]] = {}
    seen: dict[tuple[str, ...], str] = {}
    run_level: dict[str, dict[str, Any]] = {}
    times: dict[str, datetime | None] = {}
    categorical: set[str] = set()
    skipped_annotations: set[str] = set()
    for where, row in records:
        name, dtype, source, value = _fields(row, where)
        trace = C.text(row.get(TRACE_ID))
        if trace is None:
            # a score on a dataset run or a session: no case to attach it to
            scope = C.text(row.get("dataset_run_id")) or C.text(row.get("session_id")) or "?"
            run_level.setdefault(scope, {})[name] = value
            continue
        rid = opts.run_id or (C.text(row.get(run_col)) if run_col else path.stem)
        if rid is None:
            raise IngestError(
                f"{where}: no value in the run column {run_col!r} (--id-cols run_id="
                f"{run_col}); hint: name a column every trace score has, or pass --run-id."
            )
        observation = C.text(row.get(OBSERVATION_ID))
        case = observation if case_col == OBSERVATION_ID and observation else trace
        C.earliest(times, rid, C.parse_time(row.get("timestamp")))
        ex = executions.setdefault(
            (rid, case), {**key(rid, case), S.STATUS: S.STATUS_OK, TRACE_ID: trace}
        )
        top = 1.0 if dtype == "BOOLEAN" else scales.top(name)
        if dtype == "BOOLEAN" and value not in (0.0, 1.0):
            raise IngestError(f"{where}: BOOLEAN score {name!r} has value {value!r}, not 0 or 1")
        rater = C.text(row.get("author_user_id")) or S.DEFAULT_RATER
        label = source == "ANNOTATION"  # a human's: a label (docs/judges.md)
        what = f"annotation {name!r} by {rater!r}" if label else f"score {name!r}"
        first = seen.setdefault((str(label), rid, case, name, rater if label else ""), where)
        if first != where:
            raise IngestError(
                f"{where}: a second {what} of {case!r} in run {rid!r} (the first is at {first}); "
                "hint: scores on different observations of one trace are separate cases with "
                "--id-cols case_id=observation_id."
            )
        if dtype == "CATEGORICAL" or (label and value is None):
            (skipped_annotations if label else categorical).add(name)
            if not label:
                ex[name] = C.text(row.get("string_value"))
            continue
        if dtype == "NUMERIC" and value is not None and not 0 <= value <= top:
            raise IngestError(
                f"{where}: NUMERIC score {name!r} is {value:g}, outside 0-{top:g}; hint: "
                f"--scale-max '{name}=N' gives the top of its scale."
            )
        fields = {S.REASON: C.text(row.get("comment")), "score_id": C.text(row.get("id"))}
        if label:
            numeric = dtype == "NUMERIC"
            out.labels.append(
                {
                    **key(rid, case),
                    S.EVALUATOR: name,
                    S.RATER: rater,
                    S.LABEL_PASSED: value == 1.0 if dtype == "BOOLEAN" else None,
                    S.LABEL_SCORE: value if numeric else None,
                    S.SCALE_MAX: top if numeric else None,
                    **fields,
                }
            )
            continue
        boolean = C.text(row.get("string_value")) if dtype == "BOOLEAN" else None
        score = {S.SCORE: value, S.SCALE_MAX: top, S.LABEL: boolean, S.REASON: fields[S.REASON]}
        out.scores.append(
            {**key(rid, case), S.EVALUATOR: name, **score, "score_source": source,
             "score_id": fields["score_id"], OBSERVATION_ID: observation}
        )  # fmt: skip
    return _finish(path, out, executions, run_level, times, categorical, skipped_annotations)


def _finish(
    path: Path,
    out: C.Parsed,
    executions: dict[tuple[str, str], dict[str, Any]],
    run_level: dict[str, dict[str, Any]],
    times: dict[str, datetime | None],
    categorical: set[str],
    skipped_annotations: set[str],
) -> C.Parsed:
    """The executions, the notes on what was not kept and the runs rows of a parsed file."""
    if not executions:
        raise IngestError(
            f"{path}: no score is on a trace (every row is a dataset-run or session score); "
            "nothing to ingest as cases."
        )
    out.executions = list(executions.values())
    for name in sorted(categorical):
        out.notes.append(
            f"{path}: CATEGORICAL score {name!r} not scored (a category is not a 0-1 "
            f"score); its string_value is kept as the executions column {name!r}."
        )
    for name in sorted(skipped_annotations):
        out.notes.append(
            f"{path}: ANNOTATION {name!r} with a CATEGORICAL or empty value not kept as a "
            "label (labels are pass/fail or a number)."
        )
    # dataset-run and session scores: the run's reported metrics when the file holds one run
    run_names = list(dict.fromkeys(rid for rid, _case in executions))
    if run_level and len(run_names) > 1:
        out.notes.append(
            f"{path}: {sum(len(v) for v in run_level.values())} dataset-run / session "
            "score(s) not kept: the file holds several runs, which one they belong to is "
            "not in the export."
        )
    reported = C.dump_json(run_level) if run_level and len(run_names) == 1 else None
    out.runs += [C.run_row(rid, times.get(rid), reported_metrics=reported) for rid in run_names]
    return out


def _fields(row: Mapping[str, Any], where: str) -> tuple[str, str, str, float | None]:
    """(name, data type, source, value) of a score row, checked."""
    name = C.text(row.get("name"))
    if name is None:
        raise IngestError(f"{where}: a score without a `name`")
    dtype = (C.text(row.get("data_type")) or "").upper()
    if dtype not in DATA_TYPES:
        raise IngestError(
            f"{where}: data_type {row.get('data_type')!r} of score {name!r} is not one of "
            f"{', '.join(DATA_TYPES)}"
        )
    source = (C.text(row.get("source")) or "").upper()
    if source not in SOURCES:
        raise IngestError(
            f"{where}: source {row.get('source')!r} of score {name!r} is not one of "
            f"{', '.join(SOURCES)}"
        )
    raw = row.get("value")
    if isinstance(raw, str):  # CSV text
        try:
            raw = float(raw)
        except ValueError:
            raise IngestError(
                f"{where}: value of score {name!r} is {raw!r}, not a number"
            ) from None
    if raw is not None and (isinstance(raw, bool) or not isinstance(raw, int | float)):
        raise IngestError(f"{where}: value of score {name!r} must be a number, got {raw!r}")
    value = None if raw is None else C.finite(raw, where, f"value of score {name!r}")
    return name, dtype, source, value
