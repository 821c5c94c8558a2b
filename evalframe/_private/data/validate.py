"""Validation of the input tables: every problem at once, then typed frames with defaults.

Checks (SPEC §1 "Bad input"): missing required columns, wrong types, nulls in key columns,
duplicate keys, NaN/inf/negative/too-large scores, scale_max <= 0, negative weights,
unknown statuses, thresholds outside 0-1, and orphan rows. All value checks over one table
run as one lazy query; all tables' queries are collected together.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl
import polars.selectors as cs

from evalframe._private import schema as S
from evalframe._private.errors import Problem, ValidationError

MAX_EXAMPLES = 5
RAW = "_raw_"
"""Prefix of the raw copy of a column kept while its cast is checked, then dropped."""
RAW_TIME = RAW + "created_at"

MIN_WEIGHT = 1e-300
"""Smallest positive weight (data or config): below it, w·s underflows to subnormals and
the weighted mean loses its digits (5e-324 weights gave every execution 1.0)."""
MAX_WEIGHT = 1e300
"""Largest weight: sums of up to 10^8 such weights stay finite (1e308 overflowed Σw to inf
and made every score NaN)."""
MAX_LATENCY_MS = 1e12
"""Largest latency_ms (about 31 years): a run's latency sum stays finite."""
MAX_COST_USD = 1e12
"""Largest cost_usd of one execution: a run's cost sum stays finite."""
MAX_TOKENS = 10**11
"""Largest input_tokens / output_tokens of one execution: a run of up to 9·10^7
executions sums its tokens without wrapping the 64-bit integer."""
INT64_MAX = 2**63 - 1


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


def _is_numeric(dtype: pl.DataType) -> bool:
    return dtype.is_numeric()


def _type_ok(actual: pl.DataType, wanted: pl.DataType) -> bool:
    if actual == pl.Null:
        return True
    if wanted == pl.String:
        return actual == pl.String or actual.is_integer() or actual == pl.Categorical
    if wanted == pl.Float64:
        return _is_numeric(actual)
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
    from evalframe._private.scoring.execution_scores import EVALUATOR_COLUMNS, EXECUTION_COLUMNS
    from evalframe._private.summaries.run_summary import RUN_COLUMNS

    outputs = {
        S.SCORES: (S.EVALUATOR_SCORES, EVALUATOR_COLUMNS),
        S.EXECUTIONS: (S.EXECUTION_SCORES, [*EXECUTION_COLUMNS, S.SLICE, S.SLICE_VALUE]),
        S.RUNS: (
            S.RUN_SUMMARY,
            [*RUN_COLUMNS, f"run_{S.CONFIG}", S.SLICE, S.SLICE_VALUE, S.MDE_PASS_RATE],
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
        return Problem(
            table,
            col,
            "column names starting with _ are reserved for evalframe's internal columns; "
            "hint: rename the column",
            0,
        )
    clash = reserved_names(table).get(col)
    if (
        clash is None
        and table == S.RUNS
        and (col.startswith(("pass_at_", "pass_all_")) or col.endswith("_se"))
    ):
        clash = S.RUN_SUMMARY
    if clash is None:
        return None
    return Problem(
        table,
        col,
        f"the extra column {col!r} would clash with the output column {clash}.{col}; "
        "hint: rename the column",
        0,
    )


def _key_text(keys: tuple[str, ...]) -> pl.Expr:
    parts: list[pl.Expr | str] = []
    for i, k in enumerate(keys):
        parts += [f"{'' if i == 0 else ' '}{k}=", pl.col(k).cast(pl.String).fill_null("∅")]
    return pl.concat_str([pl.lit(p) if isinstance(p, str) else p for p in parts])


def _examples(lf: pl.LazyFrame, keys: tuple[str, ...], cond: pl.Expr | None) -> tuple[str, ...]:
    """Up to five example keys of the rows where `cond` holds (run only on failure)."""
    rows = lf.filter(cond.fill_null(False)) if cond is not None else lf
    out = rows.select(_key_text(keys).alias("_k")).head(MAX_EXAMPLES).collect()
    return tuple(out["_k"].to_list())


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
                    problems.append(Problem(name, col, "required column is missing", 0))
            elif not _type_ok(actual[col], dtype):
                problems.append(
                    Problem(
                        name,
                        col,
                        f"wrong type {actual[col]}, expected {_expected(dtype)}",
                        0,
                    )
                )
        problems += [p for c in actual if (p := _reserved_problem(name, c)) is not None]
    if problems:
        raise ValidationError(problems)
    return schemas


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
    problems: list[Problem] = []
    check_schemas(tables)
    typed = {name: _typed(lf, name) for name, lf in tables.items() if lf is not None}
    report = None
    if clamp and score_values:
        typed[S.SCORES], report = _clamp(typed[S.SCORES])

    # 2. value checks: the happy path is one pass of boolean sums per table, plus one
    #    group-by (duplicates) and anti-joins (orphans); examples are fetched only for
    #    the checks that fail.
    checks: list[tuple[str, str, str, pl.LazyFrame, tuple[str, ...], pl.Expr | None]] = []
    sc = pl.col(S.SCORE)
    finite = sc.is_finite()
    specs: dict[str, list[tuple[str, str, pl.Expr]]] = {
        S.SCORES: []
        if not score_values
        else [
            *_null_key_specs(S.SCORE_KEY),
            (S.SCORE, "score is NaN or infinite", sc.is_not_null() & ~finite),
            (S.SCORE, "score is negative", finite & (sc < 0)),
            (S.SCORE, "score is above scale_max", finite & (sc > pl.col(S.SCALE_MAX))),
            (
                S.SCALE_MAX,
                "scale_max is not a positive number",
                ~(pl.col(S.SCALE_MAX) > 0).fill_null(False)
                | ~pl.col(S.SCALE_MAX).is_finite().fill_null(False),
            ),
            (
                S.WEIGHT,
                "weight is negative or not finite",
                (pl.col(S.WEIGHT) < 0) | ~pl.col(S.WEIGHT).is_finite(),
            ),
        ],
        S.EXECUTIONS: [
            *_null_key_specs(S.EXECUTION_KEY),
            (
                S.STATUS,
                f"status is not one of {', '.join(S.STATUSES)}",
                ~pl.col(S.STATUS).is_in(S.STATUSES).fill_null(False),
            ),
            (
                S.THRESHOLD,
                "threshold is outside 0-1",
                pl.col(S.THRESHOLD).is_not_null()
                & ~((pl.col(S.THRESHOLD) >= 0) & (pl.col(S.THRESHOLD) <= 1)).fill_null(False),
            ),
            *_bounded_specs(S.LATENCY_MS, MAX_LATENCY_MS, "latency_ms"),
            *_bounded_specs(S.COST_USD, MAX_COST_USD, "cost_usd"),
            *_bounded_specs(S.INPUT_TOKENS, MAX_TOKENS, "input_tokens"),
            *_bounded_specs(S.OUTPUT_TOKENS, MAX_TOKENS, "output_tokens"),
        ],
        S.OUTCOMES: [
            *_null_key_specs(S.TABLE_KEYS[S.OUTCOMES]),
            (S.PASSED, "passed is null", pl.col(S.PASSED).is_null()),
        ],
        S.RUNS: [
            *_null_key_specs((S.RUN_ID,)),
            *_unparsed_time_specs(typed.get(S.RUNS)),
        ],
    }
    # checks of `scores` that run even when the caller checks the score values itself
    # (one more select over the judge rows, in the same collect as the others)
    specs[S.SCORES] = [*specs[S.SCORES], *_scores_always_specs()]
    for name in (S.SCORES, S.EXECUTIONS, S.OUTCOMES):
        if name in typed:
            specs[name] = [*specs[name], *_overflow_specs(typed[name])]
    queries: list[pl.LazyFrame] = []
    for name, table_specs in specs.items():
        if name not in typed or not table_specs:
            continue
        keys = S.TABLE_KEYS[name]
        exprs = []
        for column, message, cond in table_specs:
            exprs.append(cond.fill_null(False).sum().alias(f"c{len(checks)}"))
            checks.append((name, column, message, typed[name], keys, cond))
        queries.append(typed[name].select(exprs))

    # duplicates and orphans: frames whose rows are the offending keys. The score table's
    # own key checks run on integer ids in keyed.py, in the pass that keys the scores.
    for name in typed:
        if name == S.SCORES or (name == S.EXECUTIONS and not execution_duplicates):
            continue
        keys = S.TABLE_KEYS[name]
        dup = typed[name].group_by(keys).agg(pl.len().alias("_n")).filter(pl.col("_n") > 1)
        checks.append((name, ", ".join(keys), "duplicate key (keys listed)", dup, keys, None))
    known = typed.get(S.EXECUTIONS)
    parent = (
        known
        if known is not None
        else (derived_executions if derived_executions is not None else typed[S.SCORES])
    )
    parent_keys = parent.select(S.EXECUTION_KEY).unique()
    children = [S.OUTCOMES]
    for child in children:
        if child not in typed:
            continue
        orphan = (
            typed[child]
            .select(S.EXECUTION_KEY)
            .unique()
            .join(parent_keys, on=S.EXECUTION_KEY, how="anti", nulls_equal=True)
        )
        parent_name = S.EXECUTIONS if known is not None else S.SCORES
        message = f"execution is not in the {parent_name} table"
        checks.append((child, "", message, orphan, S.EXECUTION_KEY, None))
    n_value = sum(len(s) for n, s in specs.items() if n in typed)
    for i, (*_rest, frame, _k, _c) in enumerate(checks[n_value:]):
        queries.append(frame.select(pl.len().alias(f"c{n_value + i}")))

    results = pl.collect_all(queries)
    counts: dict[str, int] = {}
    for res in results:
        counts.update(res.row(0, named=True))
    for i, (table, column, message, frame, keys, cond) in enumerate(checks):  # type: ignore[assignment]
        n = int(counts[f"c{i}"] or 0)
        if n:
            problems.append(Problem(table, column, message, n, _examples(frame, keys, cond)))
    if derived_executions is not None and S.EXECUTIONS not in typed:
        typed[S.EXECUTIONS] = _typed(derived_executions, S.EXECUTIONS)
    return _complete(typed), report, problems


def _unparsed_time_specs(raw: pl.LazyFrame | None) -> list[tuple[str, str, pl.Expr]]:
    """created_at given as text that does not parse as a timestamp (the typed frame holds
    null there, the raw text does not)."""
    if raw is None or RAW_TIME not in raw.collect_schema():
        return []
    unparsed = pl.col(S.CREATED_AT).is_null() & pl.col(RAW_TIME).is_not_null()
    return [(S.CREATED_AT, "created_at is not a timestamp", unparsed)]


def _scores_always_specs() -> list[tuple[str, str, pl.Expr]]:
    w = pl.col(S.WEIGHT)
    return [
        (
            S.EVALUATOR,
            "evaluator name is empty (it would be the evaluator tree's root)",
            pl.col(S.EVALUATOR) == "",
        ),
        (
            S.WEIGHT,
            f"weight is outside [{MIN_WEIGHT:g}, {MAX_WEIGHT:g}] (0 is allowed): weighted "
            "sums would underflow or overflow",
            w.is_finite() & (w > 0) & ((w < MIN_WEIGHT) | (w > MAX_WEIGHT)),
        ),
    ]


def _bounded_specs(column: str, top: float, name: str) -> list[tuple[str, str, pl.Expr]]:
    c = pl.col(column)
    bad = c.is_not_null() & ~((c >= 0) & (c <= top)).fill_null(False)
    if column in (S.LATENCY_MS, S.COST_USD):  # NaN compares as the largest float in polars
        bad = bad | (c.is_not_null() & c.is_nan())
        return [(column, f"{name} is negative, NaN, infinite or above {top:g}", bad)]
    return [(column, f"{name} is negative or above {top:g}", bad)]


def _overflow_specs(typed: pl.LazyFrame) -> list[tuple[str, str, pl.Expr]]:
    """Unsigned 64-bit integers above the largest Int64 (the cast left null there)."""
    out = []
    for col in typed.collect_schema():
        if col.startswith(RAW) and col != RAW_TIME:
            name = col.removeprefix(RAW)
            cond = pl.col(col).is_not_null() & (pl.col(col) > INT64_MAX)
            out.append((name, f"{name} is above {INT64_MAX} (does not fit a 64-bit integer)", cond))
    return out


def _null_key_specs(keys: tuple[str, ...]) -> list[tuple[str, str, pl.Expr]]:
    return [(k, "key column is null", pl.col(k).is_null()) for k in keys]


def _typed(lf: pl.LazyFrame, name: str) -> pl.LazyFrame:
    """Add missing optional columns with their defaults; cast declared columns; fill the
    defaults of `attempt`, `status` and `scale_max` where they are null."""
    present = lf.collect_schema()
    fill = {S.ATTEMPT: 0, S.STATUS: S.STATUS_OK, S.SCALE_MAX: 1.0}
    exprs = []
    for col, (dtype, _required, default) in S.TABLE_COLUMNS[name].items():
        if col not in present:
            exprs.append(pl.lit(default, dtype=dtype).alias(col))
            continue
        if isinstance(dtype, pl.Datetime) and present[col] == pl.String:
            exprs.append(pl.col(col).alias(RAW_TIME))  # checked, then dropped
            expr = pl.col(col).str.to_datetime(time_unit="us", strict=False)
        elif dtype == pl.Int64 and present[col] == pl.UInt64:
            exprs.append(pl.col(col).alias(RAW + col))  # values above INT64_MAX: checked
            expr = pl.col(col).cast(dtype, strict=False)
        else:
            expr = pl.col(col).cast(dtype) if present[col] != dtype else pl.col(col)
        if col in fill:
            expr = expr.fill_null(fill[col])
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
        out[S.EXECUTIONS] = _typed(derived, S.EXECUTIONS)
    for name in (S.OUTCOMES, S.RUNS):
        if name not in out:
            out[name] = pl.LazyFrame(
                schema={c: spec[0] for c, spec in S.TABLE_COLUMNS[name].items()}
            )
    return out
