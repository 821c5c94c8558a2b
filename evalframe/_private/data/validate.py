"""Validation of the input tables (docs/tables.md#bad-input): every problem at once, then
typed frames with defaults. The schema checks read no data; the value checks are one
declarative list (`value_checks`: the message, the polars expression and the DuckDB SQL
condition side by side) that the polars passes and the DuckDB engine both read. All value
checks over one table run as one lazy query; all tables' queries are collected together.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl
import polars.selectors as cs

from evalframe._private import schema as S
from evalframe._private.errors import Problem, ValidationError
from evalframe._private.schema import (
    INT64_MAX,
    MAX_COST_USD,
    MAX_LATENCY_MS,
    MAX_TOKENS,
    MAX_WEIGHT,
    MIN_WEIGHT,
)

MAX_EXAMPLES = 5
RAW = "_raw_"
"""Prefix of the raw copy of a column kept while its cast is checked, then dropped."""
RAW_TIME = RAW + "created_at"

TIME_TEXT = (
    r"^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?)?(?:Z|[+-]\d{2}:?\d{2})?$"
)
"""created_at given as text: an ISO 8601 date or date-time (`T` or a space), seconds and a
fraction down to microseconds optional, then optionally a UTC offset (`Z`, `+02:00`,
`-0130`). With an offset the instant is converted to UTC; without one it is read as UTC.
Anything else (`02/01/2026`: day or month first?) is "created_at is not a timestamp".
Polars: `parse_time_text`; DuckDB: `time_text_sql` (its session runs in UTC)."""
_NAIVE_FORMATS = ("%Y-%m-%d %H:%M:%S%.f", "%Y-%m-%d %H:%M", "%Y-%m-%d")
_OFFSET_FORMATS = ("%Y-%m-%d %H:%M:%S%.f%z", "%Y-%m-%d %H:%M%z")


def parse_time_text(text: pl.Expr) -> pl.Expr:
    """TIME_TEXT -> naive UTC Datetime("us"); null where the text is not TIME_TEXT."""
    norm = text.str.replace("T", " ", literal=True).str.replace(r"Z$", "+00:00")
    naive = pl.coalesce(
        [norm.str.strptime(pl.Datetime("us"), f, strict=False) for f in _NAIVE_FORMATS]
    )
    aware = pl.coalesce(
        [norm.str.strptime(pl.Datetime("us", "UTC"), f, strict=False) for f in _OFFSET_FORMATS]
    ).dt.replace_time_zone(None)
    return pl.when(text.str.contains(TIME_TEXT)).then(pl.coalesce(aware, naive))


def time_text_sql(ref: str) -> str:
    """`parse_time_text` in DuckDB SQL (under `set TimeZone = 'UTC'`)."""
    return (
        f"case when regexp_full_match({ref}, '{TIME_TEXT[1:-1]}') "
        f"then try_cast({ref} as timestamptz)::timestamp end"
    )


@dataclass(frozen=True)
class ClampReport:
    """What `clamp=True` changed in `scores`."""

    clamped: int = 0
    """Scores moved into [0, scale_max]."""
    nulled: int = 0
    """NaN / inf scores turned into null."""

    @property
    def changed(self) -> int:
        return self.clamped + self.nulled


def _type_ok(actual: pl.DataType, wanted: pl.DataType) -> bool:
    if actual == pl.Null:
        return True
    if wanted == pl.String:
        return actual == pl.String or actual.is_integer() or actual == pl.Categorical
    if wanted == pl.Float64:
        return actual.is_numeric()
    if wanted == pl.Int64:
        return actual.is_integer()
    if wanted == pl.Boolean:
        return actual == pl.Boolean
    if isinstance(wanted, pl.Datetime):  # a point in time: not a time of day or a duration
        return isinstance(actual, pl.Datetime) or actual in (pl.Date, pl.String)
    if isinstance(wanted, pl.List):
        return isinstance(actual, pl.List)
    return True


def _expected(dtype: pl.DataType) -> str:
    if isinstance(dtype, pl.Datetime):
        return "a timestamp (Datetime, Date or ISO-8601 text; not a Time or Duration)"
    return str(dtype)


def reserved_names(table: str) -> dict[str, str]:
    """Column names an input table may not hold as extra columns, each with the output
    table whose column it would clash with (extra columns pass through to that table)."""

    outputs = {
        S.SCORES: (S.EVALUATOR_SCORES, S.EVALUATOR_COLUMNS),
        S.EXECUTIONS: (S.EXECUTION_SCORES, [*S.EXECUTION_COLUMNS, S.SLICE, S.SLICE_VALUE]),
        S.RUNS: (
            S.RUN_SUMMARY,
            [
                *S.RUN_COLUMNS,
                f"run_{S.CONFIG}",
                S.SLICE,
                S.SLICE_VALUE,
                S.MDE_PASS_RATE,
                *S.PPI_COLUMNS,
            ],
        ),
    }
    if table not in outputs:
        return {}
    out_table, columns = outputs[table]
    return {c: out_table for c in columns if c not in S.TABLE_COLUMNS[table]}


def _reserved_problem(table: str, col: str) -> Problem | None:
    """An extra column whose name clashes with an output or internal column."""
    if col in S.TABLE_COLUMNS[table]:
        return None
    if col.startswith("_"):
        why = "column names starting with _ are reserved for evalframe's internal columns"
        return Problem(table, col, f"{why}; hint: rename the column", 0)
    clash = reserved_names(table).get(col)
    if table == S.RUNS and (col.startswith(("pass_at_", "pass_all_")) or col.endswith("_se")):
        clash = clash or S.RUN_SUMMARY
    if clash is None:
        return None
    why = f"the extra column {col!r} would clash with the output column {clash}.{col}"
    return Problem(table, col, f"{why}; hint: rename the column", 0)


def _key_text(keys: tuple[str, ...]) -> pl.Expr:
    parts: list[pl.Expr | str] = []
    for i, k in enumerate(keys):
        parts += [f"{'' if i == 0 else ' '}{k}=", pl.col(k).cast(pl.String).fill_null("∅")]
    return pl.concat_str([pl.lit(p) if isinstance(p, str) else p for p in parts])


def example_keys(lf: pl.LazyFrame, keys: tuple[str, ...], cond: pl.Expr | None) -> tuple[str, ...]:
    """Up to MAX_EXAMPLES example keys of the rows where `cond` holds (run only on failure)."""
    rows = lf.filter(cond.fill_null(False)) if cond is not None else lf
    return render_keys(rows.head(MAX_EXAMPLES).collect(), keys)


def render_keys(frame: pl.DataFrame, keys: tuple[str, ...]) -> tuple[str, ...]:
    """The first MAX_EXAMPLES rows' `keys` as 'run_id=r case_id=c attempt=0' (null: ∅)."""
    return tuple(frame.head(MAX_EXAMPLES).select(_key_text(keys).alias("_k"))["_k"].to_list())


@dataclass(frozen=True, eq=False)
class Check:
    """One check of a table: the rows of `frame` where `cond` holds, or every row of
    `frame` (a frame of offending keys) when `cond` is None; examples show `keys`."""

    table: str
    column: str
    message: str
    frame: pl.LazyFrame
    keys: tuple[str, ...]
    cond: pl.Expr | None = None


def duplicates(table: str, frame: pl.LazyFrame, keys: tuple[str, ...]) -> Check:
    dup = frame.group_by(keys).agg(pl.len().alias("_n")).filter(pl.col("_n") > 1)
    return Check(table, ", ".join(keys), "duplicate key (keys listed)", dup, keys)


def orphans(table: str, frame: pl.LazyFrame, parent: pl.LazyFrame, message: str) -> Check:
    keys = frame.select(S.EXECUTION_KEY).unique()
    parent_keys = parent.select(S.EXECUTION_KEY).unique()
    orphan = keys.join(parent_keys, on=S.EXECUTION_KEY, how="anti", nulls_equal=True)
    return Check(table, "", message, orphan, S.EXECUTION_KEY)


def run_checks(checks: list[Check]) -> list[Problem]:
    """The problems of `checks`, in order. The happy path is one collect: the row checks
    of a frame as boolean sums of one pass over it, the key frames as row counts;
    examples are fetched only for the checks that fail."""
    by_frame: dict[int, list[int]] = {}
    queries = []
    for i, c in enumerate(checks):
        if c.cond is None:
            queries.append(c.frame.select(pl.len().alias(f"c{i}")))
        else:
            by_frame.setdefault(id(c.frame), []).append(i)
    for idx in by_frame.values():
        sums = [checks[i].cond.fill_null(False).sum().alias(f"c{i}") for i in idx]  # type: ignore[union-attr]
        queries.append(checks[idx[0]].frame.select(sums))
    counts: dict[str, int] = {}
    for res in pl.collect_all(queries):
        counts.update(res.row(0, named=True))
    problems = []
    for i, c in enumerate(checks):
        n = int(counts[f"c{i}"] or 0)
        if n:
            problems.append(
                Problem(c.table, c.column, c.message, n, example_keys(c.frame, c.keys, c.cond))
            )
    return problems


def check_schemas(tables: dict[str, pl.LazyFrame | None]) -> dict[str, pl.Schema]:
    """Step 1 of validation, from the schemas alone (no data read): every missing required
    column and wrong type at once, as a ValidationError."""
    problems: list[Problem] = []
    schemas = {name: lf.collect_schema() for name, lf in tables.items() if lf is not None}

    # 1. columns and types: without them the value checks cannot run
    for name, cols in S.TABLE_COLUMNS.items():
        if name not in schemas:
            continue
        actual = schemas[name]
        for col, (dtype, required, _default) in cols.items():
            if col not in actual:
                if required:
                    found = ", ".join(actual.names()[:12]) or "no columns"
                    message = f"required column is missing (the table has {found})"
                    problems.append(Problem(name, col, message, 0))
            elif not _type_ok(actual[col], dtype):
                message = f"wrong type {actual[col]}, expected {_expected(dtype)}"
                problems.append(Problem(name, col, message, 0))
        problems += [p for c in actual if (p := _reserved_problem(name, c)) is not None]
    if problems:
        raise ValidationError(problems)
    return schemas


# --- the value checks: one declarative list, read by every engine ------------------------
def _fills(*tables: str) -> dict[str, object]:
    return {c: d for t in tables for c, (_, _, d) in S.TABLE_COLUMNS[t].items() if d is not None}


FILLS = _fills(*S.INPUT_TABLES)
"""Declared columns whose nulls the typed table fills with their default (never null after)."""


def raw_copy(column: str, wanted: pl.DataType, actual: pl.DataType) -> str | None:
    """The name of the raw copy of an input column that the typed table keeps while a
    lossy cast is checked (then dropped): created_at given as text, Int64 columns given as
    UInt64. None when the cast cannot lose a value."""
    if isinstance(wanted, pl.Datetime) and actual == pl.String:
        return RAW_TIME
    if wanted == pl.Int64 and actual == pl.UInt64:
        return RAW + column
    return None


def raw_copies(table: str, schema: pl.Schema) -> dict[str, str]:
    """raw copy name -> input column, for an input table of this (raw) schema."""
    out = {}
    for col, (wanted, _required, _default) in S.TABLE_COLUMNS[table].items():
        if col in schema and (raw := raw_copy(col, wanted, schema[col])) is not None:
            out[raw] = col
    return out


def _sql_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _sql_number(value: float) -> str:
    return str(value) if isinstance(value, int) else f"cast({value!r} as double)"


def _sql_text(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


@dataclass(frozen=True, eq=False)
class ValueCheck:
    """One value check of an input table, for every engine: `expr` (polars) and `sql`
    (DuckDB) are the same condition, built side by side from the same constants; it holds
    on a bad row (null = not bad). Both read the typed table (declared columns cast,
    FILLS filled) with the raw copies of `raw_copies`."""

    table: str
    column: str
    message: str
    expr: pl.Expr = field(repr=False)
    sql: str
    fold: str = ""
    """The count the one pass over the judge rows derives from its partials (flat.py
    `_<fold>`, sql/execution_partials.sql `<fold>`); "" = counted by a query of its own."""
    clamped: bool = False
    """`clamp=True` fixes these rows instead of reporting them."""


def null_key_checks(table: str) -> list[ValueCheck]:
    """Nulls in the key columns (not those FILLS fills: never null)."""
    return [
        ValueCheck(
            table,
            k,
            "key column is null",
            pl.col(k).is_null(),
            f"{_sql_ident(k)} is null",
            fold=("" if table != S.SCORES else "null_eval" if k == S.EVALUATOR else f"null_{k}"),
        )
        for k in S.TABLE_KEYS[table]
        if k not in FILLS
    ]


def _finite_checks(table: str, column: str, folds: tuple[str, str] = ("", "")) -> list[ValueCheck]:
    """NaN / infinite and negative values of a score column; `folds`: their fold names in
    the one pass over the judge rows, whose rows `clamp=True` fixes (the scores table's)."""
    c, clamped = pl.col(column), folds != ("", "")
    return [
        ValueCheck(
            table,
            column,
            f"{column} is NaN or infinite",
            c.is_not_null() & ~c.is_finite(),
            f"{column} is not null and not isfinite({column})",
            fold=folds[0],
            clamped=clamped,
        ),
        ValueCheck(
            table,
            column,
            f"{column} is negative",
            c.is_finite() & (c < 0),
            f"isfinite({column}) and {column} < 0",
            fold=folds[1],
            clamped=clamped,
        ),
    ]


def _score_value_checks() -> tuple[ValueCheck, ...]:
    sc, mx, w = pl.col(S.SCORE), pl.col(S.SCALE_MAX), pl.col(S.WEIGHT)
    finite = sc.is_finite()
    return (
        *_finite_checks(S.SCORES, S.SCORE, ("bad_nan", "bad_neg")),
        ValueCheck(
            S.SCORES,
            S.SCORE,
            "score is above scale_max",
            finite & (sc > mx),
            "isfinite(score) and score > scale_max",
            fold="bad_above",
            clamped=True,
        ),
        ValueCheck(
            S.SCORES,
            S.SCALE_MAX,
            "scale_max is not a positive number",
            ~(mx > 0).fill_null(False) | ~mx.is_finite().fill_null(False),
            "not coalesce(scale_max > 0, false) or not coalesce(isfinite(scale_max), false)",
            fold="bad_scale",
        ),
        ValueCheck(
            S.SCORES,
            S.WEIGHT,
            "weight is negative or not finite",
            (w < 0) | ~w.is_finite(),
            "coalesce(weight < 0 or not isfinite(weight), false)",
            fold="bad_weight",
        ),
    )


SCORE_VALUE_CHECKS = _score_value_checks()
"""The checks of the score values the one pass over the judge rows folds in (flat.py,
sql/execution_partials.sql), in report order; the null keys of `scores` come first."""


def folded_score_checks(*, clamp: bool) -> list[ValueCheck]:
    """The checks of `scores` every engine's pass folds in, in report order: the null keys,
    then SCORE_VALUE_CHECKS (without those `clamp` fixes instead of reporting)."""
    checks = (*null_key_checks(S.SCORES), *SCORE_VALUE_CHECKS)
    return [c for c in checks if not (clamp and c.clamped)]


def _scores_always_checks() -> list[ValueCheck]:
    """Checks of `scores` that run even when the caller folds the score values into its
    own pass (one more select over the judge rows)."""
    w = pl.col(S.WEIGHT)
    lo, hi = _sql_number(MIN_WEIGHT), _sql_number(MAX_WEIGHT)
    return [
        ValueCheck(
            S.SCORES,
            S.EVALUATOR,
            "evaluator name is empty (it would be the evaluator tree's root)",
            pl.col(S.EVALUATOR) == "",
            "evaluator = ''",
        ),
        ValueCheck(
            S.SCORES,
            S.WEIGHT,
            f"weight is outside [{MIN_WEIGHT:g}, {MAX_WEIGHT:g}] (0 is allowed): weighted "
            "sums would underflow or overflow",
            w.is_finite() & (w > 0) & ((w < MIN_WEIGHT) | (w > MAX_WEIGHT)),
            f"isfinite(weight) and weight > 0 and (weight < {lo} or weight > {hi})",
        ),
    ]


def _bounded_check(column: str, top: float) -> ValueCheck:
    """A quantity in [0, top]: negative, too large (and, for a float, NaN/inf) is bad."""
    c, q = pl.col(column), _sql_ident(column)
    bad = c.is_not_null() & ~((c >= 0) & (c <= top)).fill_null(False)
    sql = f"not coalesce({q} >= 0 and {q} <= {_sql_number(top)}, false)"
    message = f"{column} is negative or above {top:g}"
    if S.EXECUTIONS_COLUMNS[column][0] == pl.Float64:  # NaN: the largest float in polars
        bad = bad | (c.is_not_null() & c.is_nan())
        sql = f"({sql} or isnan({q}))"
        message = f"{column} is negative, NaN, infinite or above {top:g}"
    return ValueCheck(S.EXECUTIONS, column, message, bad, f"{q} is not null and {sql}")


def _overflow_checks(table: str, schema: pl.Schema) -> list[ValueCheck]:
    """Unsigned 64-bit integers above the largest Int64 (the cast left null there)."""
    return [
        ValueCheck(
            table,
            col,
            f"{col} is above {INT64_MAX} (does not fit a 64-bit integer)",
            pl.col(raw).is_not_null() & (pl.col(raw) > INT64_MAX),
            f"{_sql_ident(raw)} is not null and {_sql_ident(raw)} > {INT64_MAX}",
        )
        for raw, col in raw_copies(table, schema).items()
        if raw != RAW_TIME
    ]


def _unparsed_time_checks(table: str, schema: pl.Schema) -> list[ValueCheck]:
    """created_at given as text that does not parse as a timestamp (the typed table holds
    null there, the raw text does not)."""
    if RAW_TIME not in raw_copies(table, schema):
        return []
    unparsed = pl.col(S.CREATED_AT).is_null() & pl.col(RAW_TIME).is_not_null()
    sql = f"created_at is null and {_sql_ident(RAW_TIME)} is not null"
    return [ValueCheck(table, S.CREATED_AT, "created_at is not a timestamp", unparsed, sql)]


def value_checks(table: str, schema: pl.Schema, *, score_values: bool = True) -> list[ValueCheck]:
    """The value checks of one input table of this (raw) schema, in report order — the
    one list both engines run. `score_values=False` leaves out the checks the one pass
    over the judge rows folds in (the null keys and SCORE_VALUE_CHECKS of `scores`)."""
    if table == S.SCORES:
        checks = [*null_key_checks(table), *SCORE_VALUE_CHECKS] if score_values else []
        checks += _scores_always_checks()
    elif table == S.EXECUTIONS:
        statuses = ", ".join(_sql_text(s) for s in S.STATUSES)
        t = pl.col(S.THRESHOLD)
        checks = [
            *null_key_checks(table),
            ValueCheck(
                table,
                S.STATUS,
                f"status is not one of {', '.join(S.STATUSES)}",
                ~pl.col(S.STATUS).is_in(S.STATUSES).fill_null(False),
                f"not coalesce(status in ({statuses}), false)",
            ),
            ValueCheck(
                table,
                S.THRESHOLD,
                "threshold is outside 0-1",
                t.is_not_null() & ~((t >= 0) & (t <= 1)).fill_null(False),
                "threshold is not null and not coalesce(threshold >= 0 and threshold <= 1, false)",
            ),
            _bounded_check(S.LATENCY_MS, MAX_LATENCY_MS),
            _bounded_check(S.COST_USD, MAX_COST_USD),
            _bounded_check(S.INPUT_TOKENS, MAX_TOKENS),
            _bounded_check(S.OUTPUT_TOKENS, MAX_TOKENS),
        ]
    elif table == S.OUTCOMES:
        checks = [
            *null_key_checks(table),
            ValueCheck(
                table, S.PASSED, "passed is null", pl.col(S.PASSED).is_null(), "passed is null"
            ),
        ]
    elif table == S.LABELS:
        checks = label_value_checks()
    else:
        checks = null_key_checks(table)
    return [*checks, *_overflow_checks(table, schema), *_unparsed_time_checks(table, schema)]


# --- labels (docs/judges.md) ---------------------------------------------------------------------
LABEL_FILLS = _fills(S.LABELS)
"""The labels table's defaults (its scale_max stays null: the judge's scale is used)."""


def label_value_checks() -> list[ValueCheck]:
    """The row checks of `labels` (docs/tables.md#labels); a null evaluator is the
    execution's verdict, rater and attempt have defaults."""
    sc, mx, ev = pl.col(S.LABEL_SCORE), pl.col(S.SCALE_MAX), pl.col(S.EVALUATOR)
    return [
        *(
            ValueCheck(S.LABELS, k, "key column is null", pl.col(k).is_null(), f"{k} is null")
            for k in (S.RUN_ID, S.CASE_ID)
        ),
        *_finite_checks(S.LABELS, S.LABEL_SCORE),
        ValueCheck(
            S.LABELS,
            S.SCALE_MAX,
            "scale_max is not a positive number",
            mx.is_not_null() & ~((mx > 0) & mx.is_finite()).fill_null(False),
            "scale_max is not null and not coalesce(scale_max > 0 and isfinite(scale_max), false)",
        ),
        ValueCheck(
            S.LABELS,
            S.LABEL_SCORE,
            "label_score on an execution verdict row (evaluator is null); hint: a verdict "
            "row holds label_passed only",
            sc.is_not_null() & ev.is_null(),
            "label_score is not null and evaluator is null",
        ),
    ]


LABEL_SCALE = "_label_scale"
"""The scale a label_score is read on: the label row's scale_max, else the judge's."""


def with_label_scale(labels: pl.LazyFrame, scores: pl.LazyFrame) -> pl.LazyFrame:
    """Typed labels with LABEL_SCALE: the row's own scale_max, else the judge's scale_max
    for that execution × evaluator (null when neither exists)."""
    judge = (
        scores.select(*S.SCORE_KEY, pl.col(S.SCALE_MAX).alias("_judge_scale"))
        .join(labels.select(S.SCORE_KEY).unique(), on=S.SCORE_KEY, how="semi")
        .group_by(S.SCORE_KEY)
        .agg(pl.col("_judge_scale").first())
    )
    return (
        labels.join(judge, on=S.SCORE_KEY, how="left")
        .with_columns(pl.coalesce(S.SCALE_MAX, "_judge_scale").alias(LABEL_SCALE))
        .drop("_judge_scale")
    )


def validate_labels(
    labels: pl.LazyFrame,
    scores: pl.LazyFrame,
    executions: pl.LazyFrame,
    *,
    check_schema: bool = True,
) -> tuple[pl.LazyFrame, list[Problem]]:
    """Check the labels table (docs/tables.md#labels) against typed `scores` (for the judge's
    scale_max) and the dataset's `executions` (only the execution key is read): schema
    (raises ValidationError), row checks, duplicate keys, labels of executions not in the
    dataset, a label_score without a scale or above it. Returns the typed labels with
    LABEL_SCALE and the problems found (every one, with examples)."""
    if check_schema:
        check_schemas({S.LABELS: labels})
    schema = labels.collect_schema()
    typed = with_label_scale(typed_frame(labels, S.LABELS), scores)
    keys, lab = S.LABEL_KEY, S.LABELS
    parent = executions.select(S.EXECUTION_KEY).unique()
    sc, scale = pl.col(S.LABEL_SCORE), pl.col(LABEL_SCALE)
    has_score = sc.is_not_null() & pl.col(S.EVALUATOR).is_not_null()
    checks = [
        *(Check(lab, c.column, c.message, typed, keys, c.expr) for c in value_checks(lab, schema)),
        duplicates(lab, typed, keys),
        orphans(lab, typed, parent, "execution is not in the dataset"),
        Check(
            lab,
            S.LABEL_SCORE,
            "label_score has no scale: no scale_max on the label row and no judge score row "
            "for this execution × evaluator; hint: give the row's scale_max",
            typed,
            keys,
            has_score & scale.is_null(),
        ),
        Check(
            lab,
            S.LABEL_SCORE,
            "label_score is above its scale_max (the row's, else the judge's)",
            typed,
            keys,
            has_score & sc.is_finite() & (sc > scale),
        ),
    ]
    problems = run_checks(checks)
    return typed.drop(cs.starts_with(RAW)), problems


def validate_tables(
    tables: dict[str, pl.LazyFrame | None],
    *,
    clamp: bool = False,
    score_values: bool = True,
    derived_executions: pl.LazyFrame | None = None,
    execution_duplicates: bool = True,
) -> tuple[dict[str, pl.LazyFrame], ClampReport | None, list[Problem]]:
    """Validate raw tables; return typed frames with defaults and the value problems
    found. Raises ValidationError at once for missing columns and wrong types.

    `score_values=False` leaves the value checks of `scores` to the caller (the flat
    scoring pass folds them into its one scan of the judge rows); `derived_executions`
    then stands in for an absent executions table (the execution keys that pass found).
    `execution_duplicates=False` leaves the duplicate-key check of executions to the
    caller (the flat pass finds them as equal neighbours of the sorted table)."""
    schemas = check_schemas(tables)
    labels = tables.get(S.LABELS)
    tables = {name: lf for name, lf in tables.items() if name != S.LABELS}
    schemas.pop(S.LABELS, None)
    typed = {name: typed_frame(lf, name) for name, lf in tables.items() if lf is not None}
    report = None
    if clamp and score_values:
        typed[S.SCORES], report = _clamp(typed[S.SCORES])

    checks = [
        Check(name, c.column, c.message, typed[name], S.TABLE_KEYS[name], c.expr)
        for name in S.TABLE_COLUMNS
        if name in schemas and name in typed
        for c in value_checks(name, schemas[name], score_values=score_values)
    ]
    # the score table's own key checks run on integer ids in keyed.py, in the pass that
    # keys the scores
    checks += [
        duplicates(name, frame, S.TABLE_KEYS[name])
        for name, frame in typed.items()
        if name != S.SCORES and (name != S.EXECUTIONS or execution_duplicates)
    ]
    known = typed.get(S.EXECUTIONS)
    parent = known if known is not None else derived_executions
    parent = parent if parent is not None else typed[S.SCORES]
    if S.OUTCOMES in typed:
        parent_name = S.EXECUTIONS if known is not None else S.SCORES
        message = f"execution is not in the {parent_name} table"
        checks.append(orphans(S.OUTCOMES, typed[S.OUTCOMES], parent, message))
    problems = run_checks(checks)
    if derived_executions is not None and S.EXECUTIONS not in typed:
        typed[S.EXECUTIONS] = typed_frame(derived_executions, S.EXECUTIONS)
    out = _complete(typed)
    if labels is not None:
        out[S.LABELS], label_problems = validate_labels(
            labels, out[S.SCORES], out[S.EXECUTIONS], check_schema=False
        )
        problems += label_problems
    return out, report, problems


def typed_frame(lf: pl.LazyFrame, name: str) -> pl.LazyFrame:
    """Add missing optional columns with their defaults; cast declared columns; fill the
    defaults of `attempt`, `status` and `scale_max` where they are null."""
    present = lf.collect_schema()
    fills = LABEL_FILLS if name == S.LABELS else FILLS
    exprs = []
    for col, (dtype, _required, default) in S.TABLE_COLUMNS[name].items():
        if col not in present:
            exprs.append(pl.lit(default, dtype=dtype).alias(col))
            continue
        raw = raw_copy(col, dtype, present[col])
        if raw is not None:
            exprs.append(pl.col(col).alias(raw))  # checked, then dropped
        if raw == RAW_TIME:
            expr = parse_time_text(pl.col(col))
        elif raw is not None:  # values above INT64_MAX become null: checked
            expr = pl.col(col).cast(dtype, strict=False)
        else:
            expr = pl.col(col).cast(dtype) if present[col] != dtype else pl.col(col)
        if col in fills:
            expr = expr.fill_null(fills[col])
        exprs.append(expr.alias(col))
    return lf.with_columns(exprs)


def _clamp(scores: pl.LazyFrame) -> tuple[pl.LazyFrame, ClampReport]:
    sc, mx = pl.col(S.SCORE), pl.col(S.SCALE_MAX)
    bad = sc.is_not_null() & ~sc.is_finite()
    out_of_range = sc.is_finite() & ((sc < 0) | (sc > mx))
    counts = scores.select(
        bad.sum().alias("nulled"), out_of_range.fill_null(False).sum().alias("clamped")
    ).collect()
    fixed = scores.with_columns(pl.when(bad).then(None).otherwise(sc.clip(0.0, mx)).alias(S.SCORE))
    row = counts.row(0, named=True)
    return fixed, ClampReport(clamped=row["clamped"], nulled=row["nulled"])


def _complete(typed: dict[str, pl.LazyFrame]) -> dict[str, pl.LazyFrame]:
    """Derive or empty-fill the optional tables so every later step sees all four."""
    out = {
        name: lf.drop(cs.starts_with(RAW))
        if any(c.startswith(RAW) for c in lf.collect_schema())
        else lf
        for name, lf in typed.items()
    }
    if S.EXECUTIONS not in out:
        derived = out[S.SCORES].select(S.EXECUTION_KEY).unique(maintain_order=True)
        out[S.EXECUTIONS] = typed_frame(derived, S.EXECUTIONS)
    for name in (S.OUTCOMES, S.RUNS):
        if name not in out:
            out[name] = pl.LazyFrame(
                schema={c: spec[0] for c, spec in S.TABLE_COLUMNS[name].items()}
            )
    return out
