"""Validation of the input tables: every problem at once, then typed frames with defaults.

Checks (SPEC §1 "Bad input"): missing required columns, wrong types, nulls in key columns,
duplicate keys, NaN/inf/negative/too-large scores, scale_max <= 0, negative weights,
unknown statuses, thresholds outside 0-1, and orphan rows. All value checks over one table
run as one lazy query; all tables' queries are collected together.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from evalframe._private import schema as S
from evalframe._private.errors import Problem, ValidationError

MAX_EXAMPLES = 5
RAW_TIME = "_raw_created_at"


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
    if isinstance(wanted, pl.Datetime):
        return actual.is_temporal() or actual == pl.String
    if isinstance(wanted, pl.List):
        return isinstance(actual, pl.List)
    return True


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


def validate_tables(
    tables: dict[str, pl.LazyFrame | None], *, clamp: bool = False
) -> tuple[dict[str, pl.LazyFrame], ClampReport | None, list[Problem]]:
    """Validate raw tables; return typed frames with defaults and the value problems
    found. Raises ValidationError at once for missing columns and wrong types."""
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
                        f"wrong type {actual[col]}, expected {dtype}",
                        0,
                    )
                )
    if problems:
        raise ValidationError(problems)

    typed = {name: _typed(tables[name], name) for name in schemas}
    report = None
    if clamp:
        typed[S.SCORES], report = _clamp(typed[S.SCORES])

    # 2. value checks: the happy path is one pass of boolean sums per table, plus one
    #    group-by (duplicates) and anti-joins (orphans); examples are fetched only for
    #    the checks that fail.
    checks: list[tuple[str, str, str, pl.LazyFrame, tuple[str, ...], pl.Expr | None]] = []
    sc = pl.col(S.SCORE)
    finite = sc.is_finite()
    specs: dict[str, list[tuple[str, str, pl.Expr]]] = {
        S.SCORES: [
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
    queries: list[pl.LazyFrame] = []
    for name, table_specs in specs.items():
        if name not in typed:
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
        if name == S.SCORES:
            continue
        keys = S.TABLE_KEYS[name]
        dup = typed[name].group_by(keys).agg(pl.len().alias("_n")).filter(pl.col("_n") > 1)
        checks.append((name, ", ".join(keys), "duplicate key (keys listed)", dup, keys, None))
    known = typed.get(S.EXECUTIONS)
    parent = known if known is not None else typed[S.SCORES]
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
    for i, (table, column, message, frame, keys, cond) in enumerate(checks):
        n = int(counts[f"c{i}"] or 0)
        if n:
            problems.append(Problem(table, column, message, n, _examples(frame, keys, cond)))
    return _complete(typed), report, problems


def _unparsed_time_specs(raw: pl.LazyFrame | None) -> list[tuple[str, str, pl.Expr]]:
    """created_at given as text that does not parse as a timestamp (the typed frame holds
    null there, the raw text does not)."""
    if raw is None or RAW_TIME not in raw.collect_schema():
        return []
    unparsed = pl.col(S.CREATED_AT).is_null() & pl.col(RAW_TIME).is_not_null()
    return [(S.CREATED_AT, "created_at is not a timestamp", unparsed)]


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
    out = {name: lf.drop(RAW_TIME, strict=False) for name, lf in typed.items()}
    if S.EXECUTIONS not in out:
        derived = out[S.SCORES].select(S.EXECUTION_KEY).unique(maintain_order=True)
        out[S.EXECUTIONS] = _typed(derived, S.EXECUTIONS)
    for name in (S.OUTCOMES, S.RUNS):
        if name not in out:
            out[name] = pl.LazyFrame(
                schema={c: spec[0] for c, spec in S.TABLE_COLUMNS[name].items()}
            )
    return out
