"""Wide tables: CSV, Parquet or JSONL with one row per execution and one column per
metric. `id_cols` name the key columns, `metrics` the metric columns, `scale_max` the top
of the metrics' raw scale. See docs/ingest.md."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl

import evalframe._private.ingest._common as C
from evalframe._private import schema as S
from evalframe._private.errors import IngestError

SUFFIXES = (".csv", ".parquet", ".jsonl", ".ndjson")
KEY = [S.RUN_ID, S.CASE_ID, S.ATTEMPT]
EXECUTION_COLUMNS = tuple(c for c in S.EXECUTIONS_COLUMNS if c not in KEY)
"""Columns that go to `executions` as they are (status, threshold, latency_ms, ...)."""
ROW = "_row"
_TRUE, _FALSE = ["true", "1", "pass", "yes"], ["false", "0", "fail", "no"]


def _read(path: Path) -> pl.DataFrame:
    """The file as a frame with a 1-based source line (or row) number column."""
    if path.suffix == ".parquet":
        return C.read_parquet(path).with_row_index(ROW, offset=1)
    if path.suffix in (".jsonl", ".ndjson"):
        rows = [{**obj, ROW: n} for n, obj in C.iter_jsonl(path)]
        if not rows:
            raise IngestError(f"{path}: no rows")
        try:
            return pl.DataFrame(rows, infer_schema_length=None)
        except (TypeError, pl.exceptions.PolarsError) as exc:
            raise IngestError(f"{path}: columns with mixed value types ({exc})") from None
    if path.suffix != ".csv":
        raise IngestError(f"{path}: wide input must be .csv, .parquet or .jsonl")
    header, records = C.csv_rows(path)
    if len(set(header)) != len(header) or ROW in header:
        raise IngestError(f"{path}:1: repeated or reserved column names in the header")
    body = [[*(v or None for v in fields), line] for line, fields in records]
    return pl.DataFrame(
        body, schema={**dict.fromkeys(header, pl.String), ROW: pl.Int64}, orient="row"
    )


def _numeric(col: str, df: pl.DataFrame) -> pl.Expr:
    """A CSV text column as a number (or bool) when all its values read as one."""
    values = df.get_column(col).drop_nulls()
    if values.len() and values.str.to_lowercase().is_in(["true", "false"]).all():
        return pl.col(col).str.to_lowercase() == "true"
    if values.len() and values.cast(pl.Float64, strict=False).null_count() == 0:
        as_int = values.cast(pl.Int64, strict=False)
        return pl.col(col).cast(pl.Int64 if as_int.null_count() == 0 else pl.Float64)
    return pl.col(col)


def _text(col: str, df: pl.DataFrame) -> pl.Expr:
    """A column's values as text, as Python writes them (ids stay literal)."""
    dtype = df.schema[col]
    if dtype == pl.String or dtype.is_integer():
        return pl.col(col).cast(pl.String)
    return pl.col(col).map_elements(format, return_dtype=pl.String)  # format(v) == str(v)


def _first(df: pl.DataFrame, bad: pl.Expr) -> dict[str, Any] | None:
    """The first row where `bad` holds (for an error naming its line), else None."""
    hit = df.filter(bad).head(1)
    return hit.row(0, named=True) if hit.height else None


def _where(path: Path, row: dict[str, Any]) -> str:
    return f"{path}: row {row[ROW]}" if path.suffix == ".parquet" else f"{path}:{row[ROW]}"


def _keyed(
    path: Path, opts: C.Options, *, labels: bool
) -> tuple[pl.DataFrame, list[str], set[str]]:
    """The file with its execution key as the columns run_id, case_id, attempt (every row's
    key checked), its own columns and the source columns of the key."""
    df = _read(path)
    columns = [c for c in df.columns if c != ROW]
    if labels and S.LABEL_PASSED not in columns and S.LABEL_SCORE not in columns:
        raise IngestError(
            f"{path}:1: a labels file needs a label_passed or a label_score column; "
            f"columns: {', '.join(columns)}"
        )
    mapping: dict[str, str] = {}
    case_parts: list[str] = []
    for item in C.split_list(opts.id_cols) or [c for c in KEY if c in columns]:
        target, sep, col = item.partition("=")
        target, col = (target.strip(), col.strip()) if sep else (item, item)
        if col not in columns:
            raise IngestError(
                f"{path}: id column {col!r} is not in the file; columns: {', '.join(columns)}"
            )
        if sep and target not in KEY:
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
    if opts.run_id is not None and S.RUN_ID in mapping:
        raise IngestError(f"{path}: the file has a run id column; drop --run-id or --id-cols")
    if path.suffix == ".csv":
        # CSV text becomes numbers except in id columns: ids are strings, always
        # (`001` stays `001`, `2024.10` stays `2024.10`); the attempt is an integer
        ids = {mapping.get(S.RUN_ID), *case_parts}
        numeric = [c for c in columns if c not in ids] if not labels else []
        numeric += [mapping[S.ATTEMPT]] if labels and S.ATTEMPT in mapping else []
        df = df.with_columns(_numeric(c, df) for c in numeric)
    for c in case_parts:
        empty = pl.col(c).is_null() | (pl.col(c) == "" if df.schema[c] == pl.String else False)
        if (row := _first(df, empty)) is not None:
            raise IngestError(f"{_where(path, row)}: empty case id ({', '.join(case_parts)})")
    run = mapping.get(S.RUN_ID)
    if run and (row := _first(df, pl.col(run).is_null() | (_text(run, df) == ""))) is not None:
        raise IngestError(f"{_where(path, row)}: empty run id ({run})")
    attempt = mapping.get(S.ATTEMPT)
    if attempt and (
        row := _first(df, pl.col(attempt).is_null() | (not df.schema[attempt].is_integer()))
    ):
        raise IngestError(f"{_where(path, row)}: attempt must be an integer, got {row[attempt]!r}")
    keyed = df.with_columns(
        (_text(run, df) if run else pl.lit(opts.run_id or path.name.rsplit(".", 1)[0])).alias(
            S.RUN_ID
        ),
        pl.concat_str([_text(c, df) for c in case_parts], separator="/").alias(S.CASE_ID),
        (pl.col(attempt) if attempt else pl.lit(0)).cast(pl.Int64).alias(S.ATTEMPT),
    )
    return keyed, columns, {*mapping.values(), *case_parts}


def _unique(path: Path, df: pl.DataFrame, cols: list[str], message: str) -> None:
    """Refuse a second row with the same `cols`: `message` names its key and first row."""
    row = _first(df, ~pl.struct(cols).is_first_distinct())
    if row is not None:
        same = pl.all_horizontal(pl.col(c).eq_missing(row[c]) for c in cols)
        first = df.filter(same).get_column(ROW)[0]
        k = tuple(row[c] for c in cols)
        raise IngestError(f"{_where(path, row)}: {message.format(k=k, first=first)}")


def parse(path: Path, opts: C.Options) -> C.Parsed:
    df, columns, keys = _keyed(path, opts, labels=False)
    wanted = C.split_list(opts.metrics)
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
    _unique(
        path,
        df,
        KEY,
        "duplicate execution {k} (first at {first}); hint: add an attempt column to --id-cols",
    )
    scales = opts.scales(path)
    for m in chosen:
        dtype, top = df.schema[m], scales.top(m)
        if not (dtype.is_numeric() or dtype in (pl.Boolean, pl.Null)):
            if (row := _first(df, pl.col(m).is_not_null())) is not None:
                raise IngestError(
                    f"{_where(path, row)}: metric {m!r} is not a number: {json.dumps(row[m])}"
                )
            continue
        value = pl.col(m).cast(pl.Float64)
        if (row := _first(df, value.is_nan() | value.is_infinite())) is not None:
            C.finite(row[m], _where(path, row), f"metric {m!r}")
        if (row := _first(df, (value < 0) | (value > top))) is not None:
            raise IngestError(
                f"{_where(path, row)}: metric {m!r} = {float(row[m])} is outside 0-{top:g}; "
                f"hint: pass --scale-max (e.g. --scale-max {m}=5) for metrics on another "
                "scale."
            )
    extras = [c for c in columns if c not in keys and c not in chosen and c not in KEY]
    scores = (
        df.select(ROW, *KEY, *(pl.col(m).cast(pl.Float64) for m in chosen))
        .unpivot(chosen, index=[ROW, *KEY], variable_name=S.EVALUATOR, value_name=S.SCORE)
        .sort(ROW, maintain_order=True)
        .select(
            *KEY,
            S.EVALUATOR,
            S.SCORE,
            pl.col(S.EVALUATOR)
            .replace_strict({m: scales.top(m) for m in chosen}, return_dtype=pl.Float64)
            .alias(S.SCALE_MAX),
        )
    )
    return C.Parsed(
        scores=scores.to_dicts(),
        executions=df.select(*KEY, *extras).to_dicts(),
        runs=df.select(pl.col(S.RUN_ID).unique(maintain_order=True)).to_dicts(),
    )


def _label_number(path: Path, df: pl.DataFrame, col: str) -> pl.Expr:
    """A label column of numbers (label_score, scale_max; empty text: none), checked."""
    if col not in df.columns:
        return pl.lit(None, pl.Float64)
    raw = pl.col(col).cast(pl.String) if df.schema[col].is_numeric() else _text(col, df)
    value = raw.str.strip_chars().cast(pl.Float64, strict=False)
    for bad, what in (
        (value.is_null() & (raw != ""), "a number"),
        (value.is_nan() | value.is_infinite(), "a finite number"),
    ):
        if (row := _first(df, bad)) is not None:
            raise IngestError(f"{_where(path, row)}: {col} must be {what}, got {row[col]!r}")
    return value


def parse_labels(path: Path, opts: C.Options) -> C.Parsed:
    """One wide file of human labels (docs/tables.md#labels) into `labels` rows: the key (run_id,
    case_id, attempt, as for scores: `--id-cols`, `--run-id`), optional `evaluator` (empty:
    the execution's verdict) and `rater` (empty: "human"), and `label_passed` (true / false,
    1 / 0, pass / fail, yes / no) and/or `label_score` (a number on the evaluator's raw
    scale; `scale_max` column or `--scale-max` per evaluator). Other columns are ignored.
    Errors name the file and line."""
    df, _columns, _keys = _keyed(path, opts, labels=True)

    def named(col: str) -> pl.Expr:
        value = _text(col, df) if col in df.columns else pl.lit(None, pl.String)
        return value.replace("", None)

    passed = pl.lit(None, pl.Boolean)
    if S.LABEL_PASSED in df.columns:
        said = _text(S.LABEL_PASSED, df).str.strip_chars().str.to_lowercase()
        passed = pl.when(said.is_in(_TRUE)).then(True).when(said.is_in(_FALSE)).then(False)
        if (row := _first(df, passed.is_null() & (said != ""))) is not None:
            raise IngestError(
                f"{_where(path, row)}: label_passed must be true/false (1/0, pass/fail, "
                f"yes/no), got {row[S.LABEL_PASSED]!r}"
            )
    scales = opts.scales(path)
    top = _label_number(path, df, S.SCALE_MAX)
    if scales:
        default = pl.lit(scales["*"]) if "*" in scales else top
        top = (
            pl.when(named(S.EVALUATOR).is_null())
            .then(top)
            .otherwise(
                named(S.EVALUATOR).replace_strict(scales, default=default, return_dtype=pl.Float64)
            )
        )
    labels = df.select(
        ROW,
        *KEY,
        named(S.EVALUATOR).alias(S.EVALUATOR),
        named(S.RATER).fill_null(S.DEFAULT_RATER).alias(S.RATER),
        passed.alias(S.LABEL_PASSED),
        _label_number(path, df, S.LABEL_SCORE).alias(S.LABEL_SCORE),
        top.alias(S.SCALE_MAX),
    ).filter(  # a row left empty (of `evalframe sample`'s file) is not labeled (yet)
        pl.col(S.LABEL_PASSED).is_not_null() | pl.col(S.LABEL_SCORE).is_not_null()
    )
    bad = pl.col(S.LABEL_SCORE).is_not_null() & pl.col(S.EVALUATOR).is_null()
    if (row := _first(labels, bad)) is not None:
        raise IngestError(
            f"{_where(path, row)}: label_score on a verdict row (empty evaluator); hint: a "
            "score labels one evaluator, name it in the evaluator column."
        )
    _unique(
        path, labels, [*KEY, S.EVALUATOR, S.RATER], "duplicate label {k} (first at line {first})"
    )
    if not labels.height:
        raise IngestError(f"{path}: no labeled rows (every label_passed / label_score empty)")
    return C.Parsed(labels=labels.drop(ROW).to_dicts())
