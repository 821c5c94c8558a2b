"""The shipped SQL macros (sql/*.sql, written for DuckDB) as Spark SQL, transpiled with sqlglot.

A macro call becomes one flat Spark SQL query: the macro's body with its parameters bound
(a table parameter such as `source := 'execution_scores'` names a table or temp view of
the Spark session), the scalar macros it calls inlined (`meets`, `exceeds`, `comb_ratio`,
`mcnemar_p`, `clustered_se`, ...), then DuckDB's list idioms rewritten for Spark: a list
comprehension `[f(x) for x in xs]` becomes `transform(xs, x -> f(x))`, `list_sum` /
`list_product` become `aggregate`, `len(list)` becomes `size`. sqlglot translates the rest
(`count(*) filter (where ...)`, `quantile_cont`, struct literals, `::` casts, 1-based list
indexing, `range`).

    from evalframe._private.engines.spark.sql import spark_query
    spark.sql(spark_query("run_summary_of", source="execution_scores", min_pass_rate=0.9))

Covered: the scalar macros and the `*_of` macros over stored results (case_summary_of,
run_summary_of, pass_at_k_of, case_matches_of, case_deltas_of, run_deltas_of) and the
analyst views (regressions, run_trend); tests/test_spark.py compares each with DuckDB.
The `*_at` macros and `execution_partials` bind DuckDB's session variables and policy
tables and are DuckDB only.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

import sqlglot
from sqlglot import exp

from evalframe._private.engines.duckdb.sql import SCALAR_MACROS, sql_text

SPARK_MACROS = (
    "case_summary_of",
    "run_summary_of",
    "pass_at_k_of",
    "case_matches_of",
    "case_deltas_of",
    "run_deltas_of",
)
"""Table macros that run on Spark SQL."""
SPARK_VIEWS = ("regressions", "run_trend")
"""Analyst views that run on Spark SQL (over the stored result tables)."""

_HEAD = re.compile(r"create\s+or\s+replace\s+macro\s+(\w+)\s*\(", re.I)


@dataclass(frozen=True)
class Macro:
    name: str
    params: tuple[tuple[str, str | None], ...]
    """(name, default as DuckDB SQL text or None), in declaration order."""
    table: bool
    body: str


def _split_top(text: str) -> list[str]:
    """`text` split at commas outside brackets and quotes."""
    parts: list[str] = []
    cur: list[str] = []
    depth, quote = 0, ""
    for ch in text:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
            continue
        cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur))
    return parts


def _strip_comments(text: str) -> str:
    return "\n".join(line.split("--", 1)[0] if "--" in line else line for line in text.splitlines())


@cache
def macro(name: str) -> Macro:
    """The parsed header and body of `sql/NAME.sql`."""
    text = _strip_comments(sql_text(name))
    head = _HEAD.search(text)
    if head is None:
        raise ValueError(f"sql/{name}.sql defines no macro")
    depth, i = 1, head.end()
    while depth:
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        i += 1
    params = []
    for part in _split_top(text[head.end() : i - 1]):
        pname, _, default = part.partition(":=")
        params.append((pname.strip(), default.strip() or None))
    rest = text[i:].lstrip()
    match = re.match(r"as\s+(table\s+)?", rest, re.I)
    if match is None:
        raise ValueError(f"sql/{name}.sql: no AS after the parameters")
    body = rest[match.end() :].strip().rstrip(";")
    return Macro(name, tuple(params), match.group(1) is not None, body)


def _literal(value: Any) -> exp.Expression:
    if value is None:
        return exp.Null()
    if isinstance(value, exp.Expression):
        return value
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, (int, float)):
        return exp.Literal.number(repr(value))
    if isinstance(value, (list, tuple)):
        return exp.Array(expressions=[_literal(v) for v in value])
    return exp.Literal.string(str(value))


def _parse(sql: str) -> exp.Expression:
    tree = sqlglot.parse_one(sql, read="duckdb")
    assert isinstance(tree, exp.Expression)  # a parsed node; sqlglot types it as its base Expr
    return tree


def _bind(m: Macro, args: list[exp.Expression], kwargs: dict[str, exp.Expression]) -> dict:
    bound: dict[str, exp.Expression] = {}
    names = [p for p, _ in m.params]
    for pname, value in zip(names, args, strict=False):
        bound[pname] = value
    for pname, value in kwargs.items():
        if pname not in names:
            raise ValueError(f"{m.name} has no parameter {pname!r}; parameters: {names}")
        bound[pname] = value
    for pname, default in m.params:
        if pname not in bound:
            bound[pname] = _parse(default) if default is not None else exp.Null()
    return bound


def _table_name(value: exp.Expression) -> str:
    if isinstance(value, exp.Literal) and value.is_string:
        return value.this
    raise ValueError(f"a table parameter must be a table name, not {value.sql()}")


def _call_args(call: exp.Expression) -> tuple[list[exp.Expression], dict[str, exp.Expression]]:
    args: list[exp.Expression] = []
    kwargs: dict[str, exp.Expression] = {}
    for a in call.expressions if isinstance(call, exp.Anonymous) else call.args.values():
        if a is None or isinstance(a, list):
            continue
        if isinstance(a, (exp.PropertyEQ, exp.Kwarg)):
            kwargs[a.this.name] = a.expression
        else:
            args.append(a)
    return args, kwargs


def _substitute(tree: exp.Expression, bound: dict[str, exp.Expression]) -> exp.Expression:
    lambda_vars: set[str] = set()
    for node in tree.find_all(exp.Lambda):
        lambda_vars |= {v.name for v in node.expressions}
    for comp in tree.find_all(exp.Comprehension):
        lambda_vars.add(comp.expression.name)

    def swap(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Anonymous) and node.name.lower() == "query_table":
            return exp.to_table(_table_name(bound[node.expressions[0].name]))
        if (
            isinstance(node, exp.Column)
            and not node.table
            and node.name in bound
            and node.name not in lambda_vars
        ):
            return bound[node.name].copy()
        return node

    return tree.transform(swap)


def _prefix_ctes(tree: exp.Expression, prefix: str) -> exp.Expression:
    """Rename the CTEs of an inlined macro body (sqlglot's Spark output moves every CTE to
    the top level, where the caller's CTEs of the same name would clash)."""
    names = {cte.alias for cte in tree.find_all(exp.CTE)}
    if not names:
        return tree

    def swap(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.CTE) and node.alias in names:
            node.set("alias", exp.TableAlias(this=exp.to_identifier(prefix + node.alias)))
        elif isinstance(node, exp.Table) and not node.db and node.name in names:
            renamed = exp.to_table(prefix + node.name)
            renamed.set(
                "alias", node.args.get("alias") or exp.TableAlias(this=exp.to_identifier(node.name))
            )
            return renamed
        return node

    return tree.transform(swap)


def _inline(tree: exp.Expression) -> exp.Expression:
    """Replace calls of the shipped scalar macros by their bodies (recursively)."""

    def swap(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Table) and isinstance(node.this, exp.Anonymous):
            called = node.this.name.lower()
            if called in SPARK_MACROS:  # a table macro in FROM: its query as a subquery
                m = macro(called)
                args, kwargs = _call_args(node.this)
                body = _inline(_substitute(_parse(m.body), _bind(m, args, kwargs)))
                body = _prefix_ctes(body, f"{called}__")
                alias = node.alias or called
                return exp.Subquery(this=body, alias=exp.TableAlias(this=exp.to_identifier(alias)))
        name = node.name.lower() if isinstance(node, exp.Anonymous) else ""
        if name in SCALAR_MACROS:  # the inlined body is inlined itself, recursively
            m = macro(name)
            args, kwargs = _call_args(node)
            body = _substitute(_parse(m.body), _bind(m, args, kwargs))
            return exp.Paren(this=_inline(body))
        return node

    return tree.transform(swap)


def _for_spark(tree: exp.Expression) -> exp.Expression:
    """DuckDB list idioms → Spark higher-order functions."""

    def comprehension(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Array) and len(node.expressions) == 1:
            inner = node.expressions[0]
            if isinstance(inner, exp.Comprehension):
                var = inner.expression
                body = inner.this
                return exp.Anonymous(
                    this="transform",
                    expressions=[
                        inner.args["iterator"],
                        exp.Lambda(this=body, expressions=[exp.to_identifier(var.name)]),
                    ],
                )
        return node

    def functions(node: exp.Expression) -> exp.Expression:
        name = node.name.lower() if isinstance(node, exp.Anonymous) else ""
        if name in ("list_sum", "list_product"):
            op = exp.Add if name == "list_sum" else exp.Mul
            start = exp.Cast(
                this=exp.Literal.number(0 if name == "list_sum" else 1),
                to=exp.DataType.build("double"),
            )
            acc, item = exp.to_identifier("_acc"), exp.to_identifier("_x")
            step = exp.Lambda(
                this=op(this=exp.column("_acc"), expression=exp.column("_x")),
                expressions=[acc, item],
            )
            return exp.Anonymous(this="aggregate", expressions=[node.expressions[0], start, step])
        if isinstance(node, exp.Cast) and isinstance(node.this, exp.Explode):
            # cast(unnest(xs) as T): Spark allows no generator inside an expression
            to = exp.DataType(
                this=exp.DataType.Type.ARRAY, expressions=[node.to.copy()], nested=True
            )
            return exp.Explode(this=exp.Cast(this=node.this.this.copy(), to=to))
        if isinstance(node, exp.PercentileCont) and node.expression is not None:
            # quantile_cont(x, p): Spark's exact `percentile` interpolates the same way
            return exp.Anonymous(
                this="percentile", expressions=[node.this.copy(), node.expression.copy()]
            )
        if name == "lgamma":  # Spark has none; the macros take it of integers: ln((x-1)!)
            x = exp.Cast(this=node.expressions[0].copy(), to=exp.DataType.build("bigint"))
            j, acc = exp.to_identifier("_j"), exp.to_identifier("_a")
            logs = exp.Anonymous(
                this="aggregate",
                expressions=[
                    exp.Anonymous(
                        this="sequence",
                        expressions=[
                            exp.Literal.number(2),
                            exp.Sub(this=x, expression=exp.Literal.number(1)),
                        ],
                    ),
                    exp.Cast(this=exp.Literal.number(0), to=exp.DataType.build("double")),
                    exp.Lambda(
                        this=exp.Add(
                            this=exp.column("_a"),
                            expression=exp.Anonymous(this="ln", expressions=[exp.column("_j")]),
                        ),
                        expressions=[acc, j],
                    ),
                ],
            )
            small = exp.LTE(this=x.copy(), expression=exp.Literal.number(2))
            zero = exp.Cast(this=exp.Literal.number(0), to=exp.DataType.build("double"))
            return exp.If(this=small, true=zero, false=logs)
        if isinstance(node, exp.Length) or name in ("len", "array_length"):
            arg = node.this if isinstance(node, exp.Length) else node.expressions[0]
            return exp.ArraySize(this=arg)
        return node

    # sqlglot's transform does not descend into the children of a node it replaced:
    # repeat until nothing changes
    for step in (comprehension, functions):
        before = None
        while before != tree.sql():
            before = tree.sql()
            tree = tree.transform(step)
    return tree


def _expand_stars(tree: exp.Expression, columns_of: Callable[[str], list[str]]) -> exp.Expression:
    """DuckDB's `alias.* exclude (...) rename (a as b)` → the explicit column list (Spark
    has no star modifiers); `columns_of(table)` gives a table's columns."""
    for select in list(tree.find_all(exp.Select)):
        out: list[exp.Expr] = []
        changed = False
        for e in select.expressions:
            star = e.this if isinstance(e, exp.Column) else e
            if not (
                isinstance(star, exp.Star)
                and (star.args.get("except_") or star.args.get("except") or star.args.get("rename"))
            ):
                out.append(e)
                continue
            alias = e.table if isinstance(e, exp.Column) else ""
            table = next(
                (t.name for t in select.find_all(exp.Table) if t.alias_or_name == alias), alias
            )
            dropped = {c.name for c in (star.args.get("except_") or star.args.get("except") or [])}
            renamed = {r.this.name: r.alias for r in star.args.get("rename") or []}
            for c in columns_of(table):
                if c not in dropped:
                    out.append(exp.column(c, table=alias or None).as_(renamed.get(c, c)))
            changed = True
        if changed:
            select.set("expressions", out)
    return tree


def spark_query(
    name: str, *, columns_of: Callable[[str], list[str]] | None = None, **params: Any
) -> str:
    """Spark SQL of the shipped macro or view `name` with `params` bound (table
    parameters name a table or temp view of the Spark session; values are Python scalars,
    lists, or sqlglot expressions). `columns_of(table)` (the table's column names) expands
    DuckDB's `* exclude / rename`, which Spark lacks (run_summary_of's runs columns)."""
    if name in SPARK_VIEWS:
        tree = _parse(_strip_comments(sql_text(name)))
        assert isinstance(tree, exp.Create)
        query = tree.expression
    else:
        if name not in (*SPARK_MACROS, *SCALAR_MACROS):
            raise ValueError(
                f"{name} does not run on Spark; hint: one of {', '.join(SPARK_MACROS)}, "
                f"{', '.join(SPARK_VIEWS)} or a scalar macro."
            )
        m = macro(name)
        bound = _bind(m, [], {k: _literal(v) for k, v in params.items()})
        query = _substitute(_parse(m.body), bound)
        if not m.table:
            query = exp.select(query.as_("value"))
    tree = _for_spark(_inline(query))
    if columns_of is not None:
        tree = _expand_stars(tree, columns_of)
    return tree.sql(dialect="spark")


def spark_sql(spark: Any, name: str, **params: Any) -> Any:
    """`spark.sql` of `spark_query(name, **params)`, star modifiers expanded from the
    session's tables: a lazy Spark DataFrame."""
    return spark.sql(spark_query(name, columns_of=lambda t: spark.table(t).columns, **params))


def spark_expression(name: str, **args: str) -> str:
    """Spark SQL of one call of the scalar macro `name`, its arguments given as SQL text
    (column names or expressions): `spark_expression("meets", x="score", b="0.8")`."""
    if name not in SCALAR_MACROS:
        raise ValueError(f"{name} is not a scalar macro; hint: one of {', '.join(SCALAR_MACROS)}.")
    m = macro(name)
    bound = _bind(m, [], {k: _parse(v) for k, v in args.items()})
    return _for_spark(_inline(_substitute(_parse(m.body), bound))).sql(dialect="spark")


# --- the flat scoring pass: execution_partials and execution_scores_of on Spark -------------
SCORING_MACROS = ("execution_partials", "execution_scores_of")
"""Table macros of the flat scoring pass that run on Spark SQL (`spark_scoring_query`)."""
FIXED = exp.DataType.build("decimal(38, 0)")
"""DuckDB's HUGEINT on Spark. The fixed-point sums are Σ floor(x · 2^80) over an
execution's leaf rows with x < 2^24 (a weight below 2^24 times a score in [0, 1], or such a
weight alone): each term < 2^104, so a sum fits 38 digits (< 2^126) up to 2^22 leaf rows
of one execution."""
_TWO_52 = 2**52


def _fixed(value: exp.Expression) -> exp.Expression:
    """`try_cast(floor(x) as hugeint)` exactly, in Spark: Spark's floor of a double is a
    BIGINT (saturating beyond 2^63) and its double → DECIMAL cast goes through the
    double's shortest decimal text (17 digits). x = hi · 2^52 + lo with hi = floor(x / 2^52)
    and lo = x − hi · 2^52 — both exact in binary floating point (a power of two scales
    exactly; lo is a multiple of x's ulp below 2^52) — so floor(x) = hi · 2^52 + floor(lo),
    two BIGINTs joined in DECIMAL(38, 0). Null beyond 2^115 (hi would not fit a BIGINT),
    as try_cast is null beyond HUGEINT."""
    x = exp.Paren(this=value.copy())
    two52 = exp.Cast(this=exp.Literal.number(_TWO_52), to=exp.DataType.build("double"))
    hi = exp.Anonymous(this="floor", expressions=[exp.Div(this=x.copy(), expression=two52)])
    lo_val = exp.Sub(this=x.copy(), expression=exp.Mul(this=hi.copy(), expression=two52.copy()))
    lo = exp.Anonymous(this="floor", expressions=[lo_val])
    joined = exp.Add(
        this=exp.Mul(
            this=exp.Cast(this=hi, to=FIXED.copy()),
            expression=exp.Cast(this=exp.Literal.number(_TWO_52), to=FIXED.copy()),
        ),
        expression=exp.Cast(this=lo, to=FIXED.copy()),
    )
    bound = exp.LT(
        this=exp.Abs(this=x.copy()),
        expression=exp.Cast(this=exp.Literal.number(2**115), to=exp.DataType.build("double")),
    )
    return exp.Case(ifs=[exp.If(this=bound, true=exp.Cast(this=joined, to=FIXED.copy()))])


def _is_hugeint(to: exp.Expression | None) -> bool:
    return isinstance(to, exp.DataType) and to.this == exp.DataType.Type.INT128


def _for_spark_scoring(tree: exp.Expression, extra_columns: list[str]) -> exp.Expression:
    """The DuckDB-only constructs of the scoring macros, rewritten for Spark SQL:
    HUGEINT → DECIMAL(38, 0) (floor casts exact: `_fixed`; `1::hugeint << 80` as its
    literal), `as [not] materialized` CTE hints dropped, isfinite(x) → not isnan(x)
    and |x| ≠ ∞ (null stays null), `exists (select 1 from T)` in a select list →
    `(select count(*) > 0 from T)`, and the executions'
    extra columns of execution_scores_of (`columns(e.* exclude ...)` /
    `columns('^evalframe_x_(.*)$')`) as explicit lists of `extra_columns`."""

    def swap(node: exp.Expression) -> exp.Expression:
        if isinstance(node, (exp.Cast, exp.TryCast)) and _is_hugeint(node.to):
            inner = node.this
            if isinstance(inner, exp.Paren):
                inner = inner.this
            if isinstance(inner, exp.Floor):
                return _fixed(inner.this)
            return exp.Cast(this=inner.copy(), to=FIXED.copy())
        if (
            isinstance(node, exp.BitwiseLeftShift)
            and isinstance(node.this, exp.Cast)
            and _is_hugeint(node.this.to)
            and node.expression.is_int
        ):
            value = int(node.this.this.name) << int(node.expression.name)
            return exp.Cast(this=exp.Literal.number(value), to=FIXED.copy())
        name = node.name.lower() if isinstance(node, exp.Anonymous) else ""
        if name == "isfinite" or isinstance(node, getattr(exp, "IsFinite", ())):
            arg = node.expressions[0] if isinstance(node, exp.Anonymous) else node.this
            inf = exp.Cast(this=exp.Literal.string("Infinity"), to=exp.DataType.build("double"))
            return exp.Paren(
                this=exp.And(
                    this=exp.Not(this=exp.Anonymous(this="isnan", expressions=[arg.copy()])),
                    expression=exp.NEQ(this=exp.Abs(this=arg.copy()), expression=inf),
                )
            )
        if isinstance(node, exp.Exists) and isinstance(node.this, exp.Select):
            sub = node.this.copy()
            count = exp.GT(this=exp.Count(this=exp.Star()), expression=exp.Literal.number(0))
            sub.set("expressions", [count])
            return exp.Subquery(this=sub)
        return node

    tree = tree.transform(swap)
    for cte in tree.find_all(exp.CTE):  # `as [not] materialized`: DuckDB's planner hint
        cte.set("materialized", None)
    for select in list(tree.find_all(exp.Select)):
        out: list[exp.Expr] = []
        changed = False
        for e in select.expressions:
            inner = e.this if isinstance(e, exp.Alias) else e
            alias = e.alias if isinstance(e, exp.Alias) else ""
            is_columns = isinstance(inner, exp.Columns) if hasattr(exp, "Columns") else False
            is_columns = is_columns or (
                isinstance(inner, exp.Anonymous) and inner.name.lower() == "columns"
            )
            if is_columns:
                changed = True
                arg = inner.this if not isinstance(inner, exp.Anonymous) else inner.expressions[0]
                if isinstance(arg, exp.Literal):  # columns('^evalframe_x_(.*)$') as '\1'
                    source = next(iter(select.find_all(exp.Table))).alias_or_name
                    out += [
                        exp.column(f"evalframe_x_{c}", table=source).as_(c) for c in extra_columns
                    ]
                else:  # columns(e.* exclude (...)) as 'evalframe_x_\0'
                    table = arg.table if isinstance(arg, exp.Column) else ""
                    out += [
                        exp.column(c, table=table or None).as_(f"evalframe_x_{c}")
                        for c in extra_columns
                    ]
                continue
            if alias == "evalframe_x_evalframe_end":
                changed = True
                continue
            star = inner.this if isinstance(inner, exp.Column) else inner
            if isinstance(star, exp.Star):
                dropped = star.args.get("except_") or star.args.get("except") or []
                if [d.name for d in dropped] == ["evalframe_end"]:
                    star.set("except_", None)
                    star.set("except", None)
            out.append(e)
        if changed:
            select.set("expressions", out)
    return tree


def _rename_tables(tree: exp.Expression, tables: dict[str, str]) -> exp.Expression:
    """Tables the SQL reads by name (scores, evaluator_policy, ...) → the given names."""

    def swap(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Table) and not node.db and node.name in tables:
            renamed = exp.to_table(tables[node.name])
            renamed.set(
                "alias", node.args.get("alias") or exp.TableAlias(this=exp.to_identifier(node.name))
            )
            return renamed
        return node

    return tree.transform(swap)


def spark_scoring_query(
    name: str,
    *,
    tables: dict[str, str] | None = None,
    columns_of: Callable[[str], list[str]] | None = None,
    extra_columns: list[str] | None = None,
    **params: Any,
) -> str:
    """Spark SQL of the scoring macro `name` (execution_partials or execution_scores_of)
    with `params` bound: the DuckDB engine's own SQL, transpiled (see `_for_spark_scoring`
    for what Spark lacks). Table parameters name temp views of the Spark session; the
    tables the macro reads by name (scores, evaluator_policy, executions, outcomes) are
    renamed by `tables`; `columns_of(table)` expands `* exclude`; `extra_columns` are the
    executions' columns beyond the declared ones, which execution_scores carries."""
    if name not in SCORING_MACROS:
        raise ValueError(f"{name} is not a scoring macro; hint: one of {SCORING_MACROS}.")
    m = macro(name)
    bound = _bind(m, [], {k: _literal(v) for k, v in params.items()})
    extra = list(extra_columns or [])
    tree = _for_spark_scoring(_parse(m.body), extra)
    tree = _for_spark(_inline(_substitute(tree, bound)))
    tree = _for_spark_scoring(tree, extra)
    if tables:
        tree = _rename_tables(tree, tables)
    if columns_of is not None:
        tree = _expand_stars(tree, _through_ctes(tree, columns_of))
    return tree.sql(dialect="spark")


def _through_ctes(
    tree: exp.Expression, columns_of: Callable[[str], list[str]]
) -> Callable[[str], list[str]]:
    """`columns_of` that also knows the CTEs of `tree` of the form `select * from T ...`
    (the columns of T)."""
    star_of: dict[str, str] = {}
    for cte in tree.find_all(exp.CTE):
        body = cte.this
        if (
            isinstance(body, exp.Select)
            and len(body.expressions) == 1
            and isinstance(body.expressions[0], exp.Star)
        ):
            clause = body.args.get("from_") or body.args.get("from")
            source = clause.this if isinstance(clause, exp.From) else None
            if isinstance(source, exp.Table):
                star_of[cte.alias] = source.name

    def columns(table: str) -> list[str]:
        return columns_of(star_of.get(table, table))

    return columns


def spark_sql_condition(sql: str) -> str:
    """A DuckDB condition (data/validate.py's ValueCheck.sql) as Spark SQL."""
    tree = _for_spark_scoring(_for_spark(_parse(f"select 1 where {sql}")), [])
    where = tree.args["where"].this
    return where.sql(dialect="spark")
