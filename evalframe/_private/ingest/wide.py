"""Wide tables: CSV, Parquet or JSONL with one row per execution and one column per
metric. `id_cols` name the key columns, `metrics` the metric columns, `scale_max` the top
of the metrics' raw scale. See docs/ingest.md."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl

from evalframe._private import schema as S
from evalframe._private.ingest._common import (
    IngestError,
    Options,
    Parsed,
    Scales,
    csv_rows,
    finite,
    iter_jsonl,
    read_parquet,
    split_list,
    text,
)

SUFFIXES = (".csv", ".parquet", ".jsonl", ".ndjson")
KEY_TARGETS = (S.RUN_ID, S.CASE_ID, S.ATTEMPT)
EXECUTION_COLUMNS = tuple(c for c in S.EXECUTIONS_COLUMNS if c not in KEY_TARGETS)
"""Columns that go to `executions` as they are (status, threshold, latency_ms, ...)."""
ROW = "_row"


def _read(path: Path) -> pl.DataFrame:
    """The file as a frame with a 1-based source line (or row) number column."""
    if path.suffix == ".parquet":
        return read_parquet(path).with_row_index(ROW, offset=1)
    if path.suffix in (".jsonl", ".ndjson"):
        pairs = list(iter_jsonl(path))
        rows = [{**obj, ROW: n} for n, obj in pairs]
        if not rows:
            raise IngestError(f"{path}: no rows")
        try:
            return pl.DataFrame(rows, infer_schema_length=None)
        except (TypeError, pl.exceptions.PolarsError) as exc:
            raise IngestError(f"{path}: columns with mixed value types ({exc})") from None
    if path.suffix != ".csv":
        raise IngestError(f"{path}: wide input must be .csv, .parquet or .jsonl")
    header, records = csv_rows(path)
    if len(set(header)) != len(header) or ROW in header:
        raise IngestError(f"{path}:1: repeated or reserved column names in the header")
    body = [[*(v or None for v in fields), line] for line, fields in records]
    return pl.DataFrame(
        body, schema={**dict.fromkeys(header, pl.String), ROW: pl.Int64}, orient="row"
    )


def _numeric(col: str, df: pl.DataFrame) -> pl.Expr:
    """A CSV text column as a number (or bool) when all its values read as one."""
    values = df.get_column(col).replace("", None).drop_nulls()
    if values.len() and values.str.to_lowercase().is_in(["true", "false"]).all():
        return pl.col(col).str.to_lowercase() == "true"
    cast = values.cast(pl.Float64, strict=False)
    if values.len() and cast.null_count() == 0:
        as_int = values.cast(pl.Int64, strict=False)
        dtype = pl.Int64 if as_int.null_count() == 0 else pl.Float64
        return pl.col(col).cast(dtype)
    return pl.col(col)


def _id_map(columns: list[str], id_cols: str | Sequence[str] | None, path: Path):
    """(target -> source column) for run_id / attempt, and the case_id source columns."""
    items = split_list(id_cols) or [c for c in KEY_TARGETS if c in columns]
    mapping: dict[str, str] = {}
    case_parts: list[str] = []
    for item in items:
        target, sep, col = item.partition("=")
        target, col = (target.strip(), col.strip()) if sep else (item, item)
        if col not in columns:
            raise IngestError(
                f"{path}: id column {col!r} is not in the file; columns: {', '.join(columns)}"
            )
        if sep and target not in KEY_TARGETS:
            raise IngestError(
                f"{path}: --id-cols target {target!r} must be run_id, case_id or attempt"
            )
        if target in (S.RUN_ID, S.ATTEMPT):
            mapping[target] = col
        else:
            case_parts.append(col)
    if not case_parts:
        raise IngestError(
            f"{path}: no case id column; hint: name it case_id or pass --id-cols, e.g. "
            "--id-cols 'case_id=question,run_id=model'."
        )
    return mapping, case_parts


def parse(path: Path, opts: Options) -> Parsed:
    """Parse one wide file into row dicts."""
    df = _read(path)
    columns = [c for c in df.columns if c != ROW]
    mapping, case_parts = _id_map(columns, opts.id_cols, path)
    if path.suffix == ".csv":
        # CSV text becomes numbers except in id columns: ids are strings, always
        # (`001` stays `001`, `2024.10` stays `2024.10`); the attempt is an integer
        ids = {mapping.get(S.RUN_ID), *case_parts}
        df = df.with_columns(_numeric(c, df) for c in columns if c not in ids)
    base = _base(path, opts, mapping)
    keys = set(mapping.values()) | set(case_parts)
    wanted = split_list(opts.metrics)
    for m in wanted:
        if m not in columns:
            raise IngestError(
                f"{path}: metric column {m!r} is not in the file; columns: {', '.join(columns)}"
            )
    chosen = wanted or [
        c
        for c in columns
        if c not in keys
        and c not in EXECUTION_COLUMNS
        and (df.schema[c].is_numeric() or df.schema[c] == pl.Boolean)
    ]
    if not chosen:
        raise IngestError(f"{path}: no numeric metric columns; hint: pass --metrics a,b")
    scales = opts.scales(path)
    out = Parsed()
    seen: dict[tuple, int] = {}
    for row in df.iter_rows(named=True):
        where = _where(path, row)
        key = _key(row, mapping, case_parts, base, where)
        k = tuple(key.values())
        if k in seen:
            raise IngestError(
                f"{where}: duplicate execution {k} (first at {seen[k]}); hint: "
                "add an attempt column to --id-cols"
            )
        seen[k] = row[ROW]
        ex = {**key}
        for c in columns:
            if c not in keys and c not in chosen:
                ex[c] = row[c]
        out.executions.append(ex)
        for m in chosen:
            out.scores.append(
                {
                    **key,
                    S.EVALUATOR: m,
                    S.SCALE_MAX: scales.top(m),
                    S.SCORE: _score(row[m], m, scales, where),
                }
            )
    for rid in dict.fromkeys(e[S.RUN_ID] for e in out.executions):
        out.runs.append({S.RUN_ID: rid})
    return out


def _base(path: Path, opts: Options, mapping: dict[str, str]) -> str:
    """The run id of rows without a run id column: --run-id, else the file name."""
    if opts.run_id is not None and S.RUN_ID in mapping:
        raise IngestError(f"{path}: the file has a run id column; drop --run-id or --id-cols")
    return opts.run_id or path.name.rsplit(".", 1)[0]


def _where(path: Path, row: dict[str, Any]) -> str:
    return f"{path}:{row[ROW]}" if path.suffix != ".parquet" else f"{path}: row {row[ROW]}"


def _key(
    row: dict[str, Any], mapping: dict[str, str], case_parts: list[str], base: str, where: str
) -> dict[str, Any]:
    case_vals = [row[c] for c in case_parts]
    if any(v is None or v == "" for v in case_vals):
        raise IngestError(f"{where}: empty case id ({', '.join(case_parts)})")
    rid = row[mapping[S.RUN_ID]] if S.RUN_ID in mapping else base
    if rid is None or rid == "":
        raise IngestError(f"{where}: empty run id ({mapping[S.RUN_ID]})")
    attempt = row[mapping[S.ATTEMPT]] if S.ATTEMPT in mapping else 0
    if isinstance(attempt, bool) or not isinstance(attempt, int):
        raise IngestError(f"{where}: attempt must be an integer, got {attempt!r}")
    return {S.RUN_ID: str(rid), S.CASE_ID: "/".join(str(v) for v in case_vals), S.ATTEMPT: attempt}


def _score(value: Any, metric: str, scales: Scales, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return float(value)
    if not isinstance(value, int | float):
        raise IngestError(f"{where}: metric {metric!r} is not a number: {json.dumps(value)}")
    value = finite(value, where, f"metric {metric!r}")
    top = scales.top(metric)
    if not 0 <= value <= top:
        raise IngestError(
            f"{where}: metric {metric!r} = {value} is outside 0-{top:g}; hint: pass "
            f"--scale-max (e.g. --scale-max {metric}=5) for metrics on another scale."
        )
    return float(value)


_TRUE, _FALSE = ("true", "1", "pass", "yes"), ("false", "0", "fail", "no")


def parse_labels(path: Path, opts: Options) -> Parsed:
    """One wide file of human labels (docs/tables.md#labels) into `labels` rows: the key (run_id,
    case_id, attempt, as for scores: `--id-cols`, `--run-id`), optional `evaluator` (empty:
    the execution's verdict) and `rater` (empty: "human"), and `label_passed` (true / false,
    1 / 0, pass / fail, yes / no) and/or `label_score` (a number on the evaluator's raw
    scale; `scale_max` column or `--scale-max` per evaluator). Other columns are ignored.
    Errors name the file and line."""
    df = _read(path)
    columns = [c for c in df.columns if c != ROW]
    if S.LABEL_PASSED not in columns and S.LABEL_SCORE not in columns:
        raise IngestError(
            f"{path}:1: a labels file needs a label_passed or a label_score column; "
            f"columns: {', '.join(columns)}"
        )
    mapping, case_parts = _id_map(columns, opts.id_cols, path)
    base = _base(path, opts, mapping)
    if path.suffix == ".csv" and S.ATTEMPT in mapping:
        df = df.with_columns(_numeric(mapping[S.ATTEMPT], df))
    scales = opts.scales(path)
    out = Parsed()
    seen: dict[tuple, int] = {}
    for row in df.iter_rows(named=True):
        where = _where(path, row)
        key = _key(row, mapping, case_parts, base, where)
        evaluator = text(row.get(S.EVALUATOR))
        rater = text(row.get(S.RATER)) or S.DEFAULT_RATER
        passed = _passed(row.get(S.LABEL_PASSED), where)
        score = _label_number(row.get(S.LABEL_SCORE), S.LABEL_SCORE, where)
        top = _label_number(row.get(S.SCALE_MAX), S.SCALE_MAX, where)
        if scales and evaluator is not None:
            top = scales.get(evaluator, scales.get("*", top))
        if passed is None and score is None:
            continue  # not labeled (yet): a row of `evalframe sample`'s file left empty
        if score is not None and evaluator is None:
            raise IngestError(
                f"{where}: label_score on a verdict row (empty evaluator); hint: a score "
                "labels one evaluator, name it in the evaluator column."
            )
        k = (*key.values(), evaluator, rater)
        if k in seen:
            raise IngestError(f"{where}: duplicate label {k} (first at line {seen[k]})")
        seen[k] = row[ROW]
        out.labels.append(
            {
                **key,
                S.EVALUATOR: evaluator,
                S.RATER: rater,
                S.LABEL_PASSED: passed,
                S.LABEL_SCORE: score,
                S.SCALE_MAX: top,
            }
        )
    if not out.labels:
        raise IngestError(f"{path}: no labeled rows (every label_passed / label_score empty)")
    return out


def _passed(value: Any, where: str) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE or text in _FALSE:
        return text in _TRUE
    if text == "":
        return None
    raise IngestError(
        f"{where}: label_passed must be true/false (1/0, pass/fail, yes/no), got {value!r}"
    )


def _label_number(value: Any, what: str, where: str) -> float | None:
    if value is None or value == "":
        return None
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise IngestError(f"{where}: {what} must be a number, got {value!r}") from None
    if isinstance(value, bool) or out != out or out in (float("inf"), float("-inf")):
        raise IngestError(f"{where}: {what} must be a finite number, got {value!r}")
    return out
