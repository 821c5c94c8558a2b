"""MLflow evaluations: the `eval_results_table.json` artifact that `mlflow.evaluate` logs (a
`{"columns": [...], "data": [[...]]}` table, one row per example), alone or inside a
file store (`mlruns/<experiment>/<run>/` with meta.yaml, params/, tags/, metrics/), and
MLflow 3 trace exports (`mlflow.search_traces()` saved as JSON, JSONL or Parquet) whose
assessments hold judge feedback, human feedback and expectations. See docs/ingest.md."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import evalframe._private.ingest._common as C
from evalframe._private import schema as S
from evalframe._private.errors import IngestError

TABLE_FILE = "eval_results_table.json"
JUDGE_SCALE = 5.0
"""MLflow's LLM-judged metrics (those with a justification column) grade 1 to 5."""
RUN_FIELDS = ("run_name", "experiment_id", "params", "run_tags", "reported_metrics")
"""The runs columns from a file store run (meta.yaml, params/, tags/, metrics/)."""
Judged = tuple[str, dict[str, Any], Any, dict[str, Any]]
"""A judge's feedback: (where, score row so far, value, the execution row)."""
_SCORE_COL = re.compile(r"^(?P<metric>.+)/score$")
YES_NO = {"yes": 1.0, "no": 0.0, "true": 1.0, "false": 0.0, "pass": 1.0, "fail": 0.0}
"""Feedback values MLflow's built-in judges write (CategoricalRating yes / no), as scores."""


def table_files(path: Path) -> list[Path]:
    """A file as is; a folder (a run, an experiment, a whole `mlruns/` store): every
    eval_results_table.json under it, sorted; deleted runs (in `.trash`) left out."""
    if not path.is_dir():
        return [path]
    found = sorted(p for p in path.rglob(TABLE_FILE) if ".trash" not in p.parts)
    if not found:
        raise IngestError(
            f"{path}: no {TABLE_FILE} in this folder; hint: pass an MLflow file store "
            "(mlruns/) whose runs ran mlflow.evaluate, or a search_traces() export file."
        )
    return found


def parse(path: Path, opts: C.Options) -> C.Parsed:
    """One evaluation table or one trace export file into row dicts."""
    scales = opts.scales(path)
    hint = "'case_id=COLUMN' (e.g. case_id=inputs, case_id=client_request_id)"
    case_col = C.id_columns(opts.id_cols, str(path), "mlflow", (S.CASE_ID,), hint).get(S.CASE_ID)
    if path.suffix == ".json":
        data = C.read_json(path)
        if isinstance(data, dict) and "columns" in data and "data" in data:
            return _parse_table(path, data, opts.run_id, case_col, scales)
    return _parse_traces(path, opts.run_id, case_col, scales)


# --- mlflow.evaluate: eval_results_table.json --------------------------------------------------
def _parse_table(
    path: Path, data: dict[str, Any], run_id: str | None, case_col: str | None, scales: C.Scales
) -> C.Parsed:
    columns, rows = data["columns"], data["data"]
    if not isinstance(columns, list) or not all(isinstance(c, str) for c in columns):
        raise IngestError(f"{path}: `columns` must be a list of column names")
    if not isinstance(rows, list) or not all(
        isinstance(r, list) and len(r) == len(columns) for r in rows
    ):
        raise IngestError(f"{path}: `data` must be a list of rows of {len(columns)} values")
    if case_col is not None and case_col not in columns:
        raise IngestError(
            f"{path}: --id-cols case_id={case_col!r} is not a column; columns: {', '.join(columns)}"
        )
    run_dir = path.parent.parent if path.parent.name == "artifacts" else None
    meta = _run_meta(run_dir) if run_dir is not None else {}
    rid = run_id or meta.get("run_id") or (run_dir or path.parent).name or path.stem
    metrics = [hit["metric"] for c in columns if (hit := _SCORE_COL.match(c))]
    if not metrics:
        raise IngestError(
            f"{path}: no `<metric>/score` columns (e.g. answer_similarity/v1/score); "
            "hint: is this the table mlflow.evaluate logged?"
        )
    out = C.Parsed()
    index = {c: i for i, c in enumerate(columns)}
    # each metric's scale top: --scale-max; else 5 for an LLM-judged metric (it has a
    # justification column: MLflow's judges grade 1-5); else 1 when every value is within
    # 0-1; else None: not scored (a count or grade level), with a note
    tops: dict[str, float | None] = {}
    for m in metrics:
        cells = [r[index[f"{m}/score"]] for r in rows]
        values = [v for v in cells if isinstance(v, int | float) and math.isfinite(v)]
        top = scales.get(m, scales.get("*"))
        if top is None:
            top = JUDGE_SCALE if f"{m}/justification" in index else 1.0
        tops[m] = top if all(0 <= v <= top for v in values) else None
        if tops[m] is None:
            out.notes.append(C.off_scale(str(path), m, min(values), max(values), top, f"{m}/score"))
    taken = {f"{m}/{part}" for m in metrics for part in ("score", "justification")}
    seen: set[str] = set()
    for n, row in enumerate(rows):
        where = f"{path}: data[{n}]"
        case = str(row[index[case_col]]) if case_col else str(n)
        if case in seen:
            raise IngestError(f"{where}: case id {case!r} appears twice (--id-cols)")
        seen.add(case)
        at = C.key(rid, case)
        ex: dict[str, Any] = {**at, S.STATUS: S.STATUS_OK}
        for c, v in zip(columns, row, strict=True):
            if c == "latency":  # seconds, as mlflow.evaluate measures the model call
                secs = C.metadata(v, where, "latency")
                ex[S.LATENCY_MS] = None if secs is None else secs * 1000
            elif c == "token_count":
                ex[S.OUTPUT_TOKENS] = v if C.is_number(v) and isinstance(v, int) else None
            elif c not in taken:
                ex[c] = v if v is None or isinstance(v, str | int | float) else C.dump_json(v)
        for m in metrics:
            value = row[index[f"{m}/score"]]
            if tops.get(m) is None:
                ex[f"{m}/score"] = C.metadata(value, where, f"{m}/score")
                continue
            reason = row[index[f"{m}/justification"]] if f"{m}/justification" in index else None
            score = {S.SCORE: _table_score(value, where, m), S.SCALE_MAX: tops[m]}
            out.scores.append({**at, S.EVALUATOR: m, **score, S.REASON: C.typed(reason, str)})
        out.executions.append(ex)
    label = meta.get("run_name") or rid
    out.runs.append(
        C.run_row(rid, meta.get(S.CREATED_AT), label, **{f: meta.get(f) for f in RUN_FIELDS})
    )
    return out


def _table_score(value: Any, where: str, metric: str) -> float | None:
    """A score cell: a finite number; null or NaN (pandas' missing value, a judge that
    failed) is no score, NaN counted in the non-finite note; an infinity is refused."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return value
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise IngestError(f"{where}: {metric}/score must be a number, got {value!r}")
    return C.finite(value, where, f"{metric}/score")


def _run_meta(run_dir: Path) -> dict[str, Any]:
    """What the file store holds for a run: meta.yaml (run id, name, start time,
    experiment), params/, tags/ and the last value of each metrics/ file, the latter
    three as JSON text. Keys with `/` are nested folders, as MLflow writes them."""
    if not (run_dir / "meta.yaml").is_file():
        return {}
    # the top-level `key: value` lines of meta.yaml (MLflow writes it flat; read without a
    # YAML loader, so a hostile file cannot expand aliases)
    meta = {}
    for line in C.read_text(run_dir / "meta.yaml").splitlines():
        field, sep, value = line.partition(":")
        if sep and field and not field[0].isspace():
            value = value.strip()
            if len(value) > 1 and value[0] == value[-1] and value[0] in "'\"":
                value = value[1:-1]
            meta[field] = value
    tags = _key_files(run_dir / "tags")
    start = meta.get("start_time", "")
    created = None
    if start.isdigit() and 0 < int(start) < 10**14:
        created = datetime.fromtimestamp(int(start) / 1000, UTC).replace(tzinfo=None)
    metrics = {}
    for metric, text in _key_files(run_dir / "metrics").items():
        # a metric file's lines are `timestamp value step`, one per log: the last one counts
        lines = [line.split() for line in text.splitlines() if line.strip()]
        try:
            metrics[metric] = float(lines[-1][1]) if lines else None
        except (IndexError, ValueError):
            raise IngestError(
                f"{run_dir / 'metrics' / metric}:{len(lines)}: not an MLflow metric line "
                "(`timestamp value step`)"
            ) from None
    name = meta.get("run_name") or tags.get("mlflow.runName")
    return {
        "run_id": meta.get("run_id") or None,
        "run_name": str(name) if name else None,
        "experiment_id": meta.get("experiment_id") or None,
        S.CREATED_AT: created,
        "params": C.dump_json(_key_files(run_dir / "params")),
        "run_tags": C.dump_json(tags),
        "reported_metrics": C.dump_json(metrics),
    }


def _key_files(folder: Path) -> dict[str, str]:
    """{key: file text} of a params/, tags/ or metrics/ folder (keys are relative paths)."""
    if not folder.is_dir():
        return {}
    files = (p for p in sorted(folder.rglob("*")) if p.is_file())
    return {p.relative_to(folder).as_posix(): C.read_text(p) for p in files}


# --- MLflow 3 traces: mlflow.search_traces() exports -------------------------------------------
def _field(row: Mapping[str, Any], *names: str) -> Any:
    """The first of `names` the row has (MLflow 3 names first, then MLflow 2's)."""
    return next((row[n] for n in names if row.get(n) is not None), None)


def _decoded(value: Any, where: str, what: str) -> Any:
    """A nested column as objects: as is, or JSON text (Parquet and CSV exports)."""
    if isinstance(value, str) and value[:1] in ("[", "{"):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            raise IngestError(f"{where}: {what} is not valid JSON text") from None
    return value


def _parse_traces(
    path: Path, run_id: str | None, case_col: str | None, scales: C.Scales
) -> C.Parsed:
    records = C.read_records(path)
    if not records:
        raise IngestError(f"{path}: no traces")
    if not any(k in records[0][1] for k in ("trace_id", "request_id")):
        raise IngestError(
            f"{records[0][0]}: not an MLflow trace export (no trace_id column); hint: save "
            "mlflow.search_traces() with DataFrame.to_json(orient='records') or to_parquet()."
        )
    out = C.Parsed()
    judged: dict[str, list[Judged]] = {}
    runs: dict[str, datetime | None] = {}
    seen: dict[tuple[str, str], str] = {}
    for where, row in records:
        trace = _field(row, "trace_id", "request_id")
        meta = C.as_dict(_decoded(_field(row, "trace_metadata", "request_metadata"), where, "meta"))
        rid = run_id or str(meta.get("mlflow.sourceRun") or path.stem)
        case = row.get(case_col) if case_col else trace
        if case_col is not None and case_col not in row:
            raise IngestError(f"{where}: --id-cols case_id={case_col!r} is not a column")
        if case is None:
            raise IngestError(f"{where}: a trace without a {case_col or 'trace_id'}")
        case = case if isinstance(case, str) else json.dumps(case, sort_keys=True)
        first = seen.setdefault((rid, case), where)
        if first != where:
            raise IngestError(f"{where}: case {case!r} of run {rid!r} also at {first}")
        at = C.key(rid, case)
        C.earliest(runs, rid, _trace_time(_field(row, "request_time", "timestamp_ms")))
        state = str(_field(row, "state", "status") or "OK").upper()
        ex: dict[str, Any] = {
            **at,
            S.STATUS: S.STATUS_ERROR if state == "ERROR" else S.STATUS_OK,
            S.LATENCY_MS: _duration_ms(_field(row, "execution_duration", "execution_time_ms")),
            "trace_id": str(trace),
            "trace_state": state,
            "request": _text(row.get("request")),
            "response": _text(row.get("response")),
        }
        found = _decoded(row.get("assessments"), where, "assessments") or []
        if not isinstance(found, list):
            raise IngestError(f"{where}: assessments must be a list")
        for i, a in enumerate(found):
            _assessment(C.as_dict(a), f"{where}: assessments[{i}]", at, ex, judged, out)
        out.executions.append(ex)
    _judge_scores(path, judged, scales, out)
    out.runs += [C.run_row(rid, ts) for rid, ts in runs.items()]
    return out


def _assessment(
    a: dict[str, Any],
    where: str,
    at: dict[str, Any],
    ex: dict[str, Any],
    judged: dict[str, list[Judged]],
    out: C.Parsed,
) -> None:
    """One assessment (Assessment.to_dictionary()): LLM-judge and code feedback to the
    judged list (scored later, once each name's scale is known); human feedback and
    expectations to `labels` when pass / fail or a number, else kept as the executions
    column `expectation/<name>` or `feedback/<name>`. Overridden (valid: false)
    assessments are skipped."""
    if a.get("valid") is False:
        return
    name = a.get("assessment_name", a.get("name"))
    if not isinstance(name, str) or not name:
        raise IngestError(f"{where}: an assessment without a name")
    source = C.as_dict(a.get("source"))
    expected = "expectation" in a
    block = C.as_dict(a.get("expectation") if expected else a.get("feedback"))
    value = block.get("value", a.get("value"))
    if expected or str(source.get("source_type", "")).upper() == "HUMAN":
        # a human value: yes / no / bool, or a number; else (free text, a list of expected
        # facts) not a label
        yes = _yes_no(value)
        if yes is None and not isinstance(value, int | float):
            ex[f"{'expectation' if expected else 'feedback'}/{name}"] = _text(value)
            return
        num = None
        if yes is None and isinstance(value, int | float):
            num = C.finite(value, where, f"value of {name!r}")
        rater = str(source.get("source_id") or S.DEFAULT_RATER)
        passed = None if yes is None else yes == 1.0
        label = {S.EVALUATOR: name, S.RATER: rater, S.LABEL_PASSED: passed, S.LABEL_SCORE: num}
        out.labels.append({**at, **label})
        return
    error = C.as_dict(block.get("error")) or C.as_dict(a.get("error"))
    message = error.get("error_message") or error.get("error_code")
    reason = C.typed(a.get("rationale"), str) or (str(message) if message else None)
    judged.setdefault(name, []).append((where, {**at, S.REASON: reason}, value, ex))


def _yes_no(value: Any) -> float | None:
    """1 or 0 for a bool or a yes / no value (YES_NO), else None."""
    if isinstance(value, bool):
        return float(value)
    return YES_NO.get(value.strip().lower()) if isinstance(value, str) else None


def _judge_scores(
    path: Path, judged: dict[str, list[Judged]], scales: C.Scales, out: C.Parsed
) -> None:
    """Judge feedback to `scores`: yes / no and booleans 1 / 0 on 0-1; numbers on
    --scale-max, else 0-1 when all are within it, else not scored (kept as the
    executions column `feedback/<name>`, with a note); other values (free-text
    categories) kept as the label of an unscored row."""
    for name, items in judged.items():
        first: dict[tuple[str, str], str] = {}
        for where, row, _value, _ex in items:
            case = (row[S.RUN_ID], row[S.CASE_ID])
            if first.setdefault(case, where) != where:
                raise IngestError(
                    f"{where}: a second valid {name!r} feedback on case {case[1]!r} of run "
                    f"{case[0]!r} (the first: {first[case]}); hint: MLflow marks an "
                    "overridden assessment `valid: false`."
                )
        numbers = [v for _w, _k, v, _e in items if C.is_number(v) and math.isfinite(v)]
        top = scales.top(name)
        if numbers and not all(0 <= v <= top for v in numbers):
            for where, _key, value, ex in items:
                ex[f"feedback/{name}"] = (
                    C.metadata(value, where, name) if C.is_number(value) else None
                )
            lo, hi = min(numbers), max(numbers)
            out.notes.append(C.off_scale(str(path), name, lo, hi, top, f"feedback/{name}"))
            continue
        for where, row, value, _ex in items:
            score = _yes_no(value)
            if score is None and C.is_number(value):
                score = C.finite(value, where, f"feedback {name!r}")
            label = C.typed(value, str)
            out.scores.append(
                {**row, S.EVALUATOR: name, S.SCORE: score, S.SCALE_MAX: top, S.LABEL: label}
            )


def _text(value: Any) -> str | None:
    return value if value is None or isinstance(value, str) else C.dump_json(value)


def _trace_time(value: Any) -> datetime | None:
    """request_time (ISO text, MLflow 3) or timestamp_ms (MLflow 2) as naive UTC."""
    if C.is_number(value) and 0 < value < 10**14:
        return datetime.fromtimestamp(value / 1000, UTC).replace(tzinfo=None)
    return C.parse_time(value)


def _duration_ms(value: Any) -> float | None:
    """execution_duration (`"1.840s"` text or milliseconds) or execution_time_ms."""
    if C.is_number(value):
        return float(value) if math.isfinite(value) else value
    if isinstance(value, str) and value.endswith("s"):
        try:
            return float(value[:-1]) * 1000
        except ValueError:
            return None
    return None
