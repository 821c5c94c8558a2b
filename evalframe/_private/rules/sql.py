"""The analysts' SQL macros that carry a rule, generated from the rule layer.

`sql/meets.sql`, `sql/exceeds.sql`, `sql/ci_low.sql`, `sql/ci_high.sql`, `sql/mde.sql`,
`sql/wilson_interval.sql` and `sql/case_summary_of.sql` are written by this module, never
by hand: the rule functions of `rules/` are run through narwhals over a DuckDB table of
the macro's parameters (`narwhals.sql`), the query DuckDB would run is read back with
sqlglot, and the parameters are put where the columns were. `tests/test_rules.py` fails
when a file in `sql/` differs from what this module renders. Regenerate with

    python -m evalframe._private.rules.sql

Dev-time only: sqlglot (the test extra) is imported here, never by a command.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalframe._private import schema as S
from evalframe._private.rules import (
    aggregators,
    attempts,
    boundaries,
    intervals,
    normalize,
    run_gates,
    runs,
    verdicts,
)
from evalframe._private.rules import compare as rules_compare
from evalframe._private.rules import decide as rules_decide
from evalframe._private.rules.constants import Z_95

SQL_DIR = Path(__file__).resolve().parents[3] / "sql"
"""The repository's sql/ folder (the wheel ships it as evalframe/sql)."""

GENERATED = (
    "-- GENERATED from evalframe/_private/rules/ by rules/sql.py; do not edit (see the module)."
)


@dataclass(frozen=True)
class ScalarMacro:
    """A scalar macro: `name(params) as <rule expression over the params>`."""

    name: str
    header: str
    params: tuple[str, ...]
    rule: Callable[..., Any]
    casts: tuple[str, ...] = ()
    """Parameters read as double (`cast(p as double)`), as the hand-written macros did."""
    booleans: tuple[str, ...] = ()
    """Parameters of type boolean (the others are doubles)."""
    strings: tuple[str, ...] = ()
    """Parameters of type varchar."""
    defaults: tuple[tuple[str, str], ...] = ()
    """(parameter, SQL default) of the parameters that have one (`name := default`)."""
    with_namespace: bool = False
    """The rule takes the namespace first (`rule(ns, *params)`)."""


def _tables() -> Any:
    import narwhals as nw
    from narwhals.sql import table

    return nw, table


def _table(name: str, columns: dict[str, Any]) -> Any:
    """A narwhals table of `columns` in narwhals.sql's DuckDB connection (made anew)."""
    import narwhals.sql

    narwhals.sql.CONN.execute(f'drop table if exists "{name}"')
    return narwhals.sql.table(name, columns)


def _select_sql(columns: dict[str, Any], build: Callable[[Any], Any]) -> str:
    """The SQL DuckDB runs for `select build(nw) from t(columns)`."""
    nw, _ = _tables()
    return _table("__evalframe_rule", columns).select(build(nw).alias("__value")).to_sql()


def _expression(macro: ScalarMacro) -> str:
    import sqlglot
    from sqlglot import exp

    nw, _ = _tables()

    def build(ns: Any) -> Any:
        args = [ns.col(p) for p in macro.params]
        return macro.rule(ns, *args) if macro.with_namespace else macro.rule(*args)

    def dtype(p: str) -> Any:
        if p in macro.booleans:
            return nw.Boolean
        return nw.String if p in macro.strings else nw.Float64

    sql = _select_sql({p: dtype(p) for p in macro.params}, build)
    tree = sqlglot.parse_one(sql, read="duckdb")
    value = tree.find(exp.Alias)
    assert value is not None
    body = value.this

    def put_params(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Column) and node.name in macro.params:
            ident = exp.column(node.name)
            if node.name in macro.casts:
                return exp.cast(ident, "double")
            return ident
        return node

    return _lowercase(body.transform(put_params).transform(_tidy).sql(dialect="duckdb"))


def _tidy(node: Any) -> Any:
    """The house style of sql/: `count(*)`, no quotes around plain identifiers."""
    from sqlglot import exp

    if isinstance(node, exp.Count) and node.this is None:
        return exp.Count(this=exp.Star())
    if (
        isinstance(node, exp.Identifier)
        and node.quoted
        and re.fullmatch(r"[a-z_][a-z0-9_]*", node.this)
    ):
        return exp.to_identifier(node.this, quoted=False)
    return node


_STRING = re.compile(r"('(?:[^']|'')*')")


def _lowercase(sql: str) -> str:
    """Keywords and function names in lowercase (sql/'s style); string literals kept."""
    parts = _STRING.split(sql)
    return "".join(p if i % 2 else p.lower() for i, p in enumerate(parts))


def _signature(macro: ScalarMacro) -> str:
    defaults = dict(macro.defaults)
    return ", ".join(f"{p} := {defaults[p]}" if p in defaults else p for p in macro.params)


def render_scalar(macro: ScalarMacro) -> str:
    """The text of sql/<name>.sql for a scalar macro."""
    head = "\n".join(f"-- {line}".rstrip() for line in macro.header.strip("\n").splitlines())
    return (
        f"{head}\n{GENERATED}\n"
        f"create or replace macro {macro.name}({_signature(macro)}) as\n"
        f"    {_expression(macro)};\n"
    )


SCALARS: tuple[ScalarMacro, ...] = (
    ScalarMacro(
        "normalize_score",
        """
normalize_score(score, scale_max, higher_is_better := true) — scalar macro: a raw judge
score on the 0–1, higher-is-better scale (rules/normalize.py, SPEC §2).
grain:   one value
inputs:  score (raw judge score, may be null), scale_max (top of the raw scale; null =
         1.0), higher_is_better (boolean; false for a lower-is-better metric such as a
         hallucination rate; null = true)
returns: double, score / scale_max, or 1 − score / scale_max when higher_is_better is
         false; null when score is null
""",
        ("score", "scale_max", "higher_is_better"),
        normalize.normalized_score,
        casts=("score", "scale_max"),
        booleans=("higher_is_better",),
        defaults=(("higher_is_better", "true"),),
        with_namespace=True,
    ),
    ScalarMacro(
        "meets",
        """
meets(x, b) — scalar macro: "x meets the boundary b", x >= b - EPS (rules/boundaries.py).
grain:   one value
inputs:  x, b (numbers on the 0–1 scale)
returns: boolean; null when x or b is null; false when x is NaN (DuckDB orders NaN
         above every number, so a NaN score would otherwise meet every bound)
""",
        ("x", "b"),
        boundaries.meets,
        casts=("x", "b"),
    ),
    ScalarMacro(
        "exceeds",
        """
exceeds(x, limit_value) — scalar macro: "x exceeds the limit", x > limit + EPS
(rules/boundaries.py).
grain:   one value
inputs:  x, limit_value (numbers: drops on 0–1, relative latency increases)
returns: boolean; null when x or limit_value is null
""",
        ("x", "limit_value"),
        boundaries.exceeds,
        casts=("x", "limit_value"),
    ),
    ScalarMacro(
        "run_gate",
        """
run_gate(value, minimum) — scalar macro: a run gate holds when value meets minimum; a
run without a value (null) fails it (rules/run_gates.py).
grain:   one value
inputs:  value (a run's mean_score or pass_rate), minimum (the gate)
returns: boolean, never null
""",
        ("value", "minimum"),
        run_gates.gate,
        casts=("value", "minimum"),
    ),
    ScalarMacro(
        "case_status",
        """
case_status(in_baseline, in_candidate, baseline_scored, candidate_scored,
            baseline_passed, candidate_passed, score_delta, case_delta) — scalar macro:
the status of a case (or case × evaluator) in a (baseline, candidate) pair, the first
rule that applies (rules/compare.py, SPEC §6); null passed flags never flip.
grain:   one value
inputs:  booleans in_baseline, in_candidate, baseline_scored, candidate_scored,
         baseline_passed, candidate_passed; doubles score_delta, case_delta
returns: varchar 'new' | 'removed' | 'error' | 'regression' | 'improvement' | 'unchanged'
""",
        (
            "in_baseline",
            "in_candidate",
            "baseline_scored",
            "candidate_scored",
            "baseline_passed",
            "candidate_passed",
            "score_delta",
            "case_delta",
        ),
        lambda ns, ib, ic, bs, cs, bp, cp, d, lim: rules_compare.case_status(
            ns,
            in_baseline=ib,
            in_candidate=ic,
            baseline_scored=bs,
            candidate_scored=cs,
            baseline_passed=bp,
            candidate_passed=cp,
            score_delta=d,
            case_delta=lim,
        ),
        booleans=(
            "in_baseline",
            "in_candidate",
            "baseline_scored",
            "candidate_scored",
            "baseline_passed",
            "candidate_passed",
        ),
        with_namespace=True,
    ),
    ScalarMacro(
        "drop_regressed",
        """
drop_regressed(drop_value, limit_value, require_significance, ci_high) — scalar macro: a
pair regressed on its pass rate or mean score — the drop exceeds the limit and, with
require_significance, its paired 95 % interval lies below 0 (rules/compare.py).
grain:   one value
inputs:  drop_value (baseline − candidate), limit_value, require_significance (boolean),
         ci_high (upper end of the paired interval of the delta)
returns: boolean, never null
""",
        ("drop_value", "limit_value", "require_significance", "ci_high"),
        rules_compare.drop_regressed,
        booleans=("require_significance",),
    ),
    ScalarMacro(
        "latency_regressed",
        """
latency_regressed(baseline_latency, candidate_latency, limit_value) — scalar macro: a
pair regressed on latency — the relative increase of latency_mean exceeds the limit
(rules/compare.py); false when the baseline's latency is not positive.
grain:   one value
inputs:  baseline_latency, candidate_latency (latency_mean), limit_value (a fraction)
returns: boolean, never null
""",
        ("baseline_latency", "candidate_latency", "limit_value"),
        rules_compare.latency_regressed,
        with_namespace=True,
    ),
    ScalarMacro(
        "decide_part",
        """
decide_part(ci_low, ci_high, margin) — scalar macro: one part of a pair's three-outcome
decision (rules/decide.py, SPEC §12): 'fail' when the paired 95 % interval's high end lies
below −margin (ci_high < −margin − EPS), 'pass' when its low end meets −margin
(ci_low ≥ −margin − EPS), else 'inconclusive' (also when the interval is null).
grain:   one value
inputs:  ci_low, ci_high (the interval of paired_pass_delta or mean_delta), margin
         (decide.pass_rate_margin or decide.mean_score_margin)
returns: varchar 'pass' | 'fail' | 'inconclusive', never null
""",
        ("ci_low", "ci_high", "margin"),
        rules_decide.part_decision,
        with_namespace=True,
    ),
    ScalarMacro(
        "decide_latency",
        """
decide_latency(baseline_latency, candidate_latency, limit_value) — scalar macro: the
latency part of a pair's decision (rules/decide.py, SPEC §12): 'fail' when the latency
rule of SPEC §6 regressed (latency_regressed), else 'pass'.
grain:   one value
inputs:  baseline_latency, candidate_latency (latency_mean), limit_value
         (compare.max_latency_increase, a fraction)
returns: varchar 'pass' | 'fail', never null
""",
        ("baseline_latency", "candidate_latency", "limit_value"),
        rules_decide.latency_decision,
        with_namespace=True,
    ),
    ScalarMacro(
        "decide_pair",
        """
decide_pair(pass_rate_part, mean_score_part, latency_part) — scalar macro: a pair's
decision from its three parts (rules/decide.py, SPEC §12): 'fail' if any part fails, else
'inconclusive' if any is, else 'pass'.
grain:   one value
inputs:  the parts (varchar 'pass' | 'fail' | 'inconclusive'; decide_part, decide_latency)
returns: varchar 'pass' | 'fail' | 'inconclusive'
""",
        ("pass_rate_part", "mean_score_part", "latency_part"),
        rules_decide.pair_decision,
        strings=("pass_rate_part", "mean_score_part", "latency_part"),
        with_namespace=True,
    ),
    ScalarMacro(
        "node_score",
        """
node_score(present, required_failed, aggregator, wavg, s_min, s_max, threshold,
           pass_ratio, safety_gate_fired, wavg_rest) — scalar macro: a composite node's
score from its children's statistics under its aggregator (rules/aggregators.py).
grain:   one value
inputs:  present, required_failed, safety_gate_fired (booleans); aggregator (varchar);
         wavg, s_min, s_max, pass_ratio, wavg_rest (0–1, wavg_rest null when every child
         is required); threshold (the node's t)
returns: double; null when no child is present, 0 when the required gate fired
""",
        (
            "present",
            "required_failed",
            "aggregator",
            "wavg",
            "s_min",
            "s_max",
            "threshold",
            "pass_ratio",
            "safety_gate_fired",
            "wavg_rest",
        ),
        lambda ns, present, failed, agg, wavg, lo, hi, t, ratio, gate, rest: aggregators.node_score(
            ns,
            present=present,
            required_failed=failed,
            raw=aggregators.aggregate(
                ns,
                aggregator=agg,
                wavg=wavg,
                s_min=lo,
                s_max=hi,
                threshold=t,
                pass_ratio=ratio,
                safety_gate_fired=gate,
                wavg_rest=rest,
            ),
        ),
        booleans=("present", "required_failed", "safety_gate_fired"),
        strings=("aggregator",),
        with_namespace=True,
    ),
    ScalarMacro(
        "node_gate_fired",
        """
node_gate_fired(present, aggregator, required_failed, safety_gate_fired) — scalar
macro: a present node's gate fired — its required gate, or a safety_gate whose required
child failed (rules/aggregators.py).
grain:   one value
inputs:  present, required_failed, safety_gate_fired (booleans); aggregator (varchar)
returns: boolean
""",
        ("present", "aggregator", "required_failed", "safety_gate_fired"),
        lambda ns, present, agg, failed, gate: aggregators.gate_fired(
            ns, present=present, aggregator=agg, required_failed=failed, safety_gate_fired=gate
        ),
        booleans=("present", "required_failed", "safety_gate_fired"),
        strings=("aggregator",),
        with_namespace=True,
    ),
    ScalarMacro(
        "verdict_band",
        """
verdict_band(score, threshold, borderline) — scalar macro: the verdict band of a score
(rules/verdicts.py).
grain:   one value
inputs:  score (0–1, may be null), threshold (pass boundary), borderline (lower edge of
         the borderline band; null = no band)
returns: varchar 'pass' | 'borderline' | 'fail'; null when score is null.
         (execution_verdict adds 'error', 'unscored' and the required/judge-error fails.)
""",
        ("score", "threshold", "borderline"),
        verdicts.verdict_band,
        with_namespace=True,
        defaults=(("borderline", "null"),),
    ),
    ScalarMacro(
        "execution_judge_error",
        """
execution_judge_error(is_ok, has_rows, on_missing, n_missing) — scalar macro: an ok
execution with judge rows misses an expected evaluator under on_missing 'fail'
(rules/verdicts.py).
grain:   one value
inputs:  is_ok, has_rows (booleans), on_missing (varchar), n_missing (count)
returns: boolean, never null
""",
        ("is_ok", "has_rows", "on_missing", "n_missing"),
        verdicts.judge_error,
        booleans=("is_ok", "has_rows"),
        strings=("on_missing",),
    ),
    ScalarMacro(
        "execution_unscored",
        """
execution_unscored(is_ok, is_judge_error, has_rows, root_present) — scalar macro: an ok
execution without a judge error whose tree has no score (rules/verdicts.py).
grain:   one value
inputs:  is_ok, is_judge_error, has_rows, root_present (booleans)
returns: boolean
""",
        ("is_ok", "is_judge_error", "has_rows", "root_present"),
        verdicts.unscored,
        booleans=("is_ok", "is_judge_error", "has_rows", "root_present"),
    ),
    ScalarMacro(
        "execution_required_failed",
        """
execution_required_failed(is_ok, has_rows, gate_fired) — scalar macro: the required gate
of the tree fired for an ok execution with judge rows (rules/verdicts.py).
grain:   one value
inputs:  is_ok, has_rows, gate_fired (booleans)
returns: boolean
""",
        ("is_ok", "has_rows", "gate_fired"),
        verdicts.required_failed,
        booleans=("is_ok", "has_rows", "gate_fired"),
    ),
    ScalarMacro(
        "execution_score",
        """
execution_score(is_ok, is_unscored, is_judge_error, root_score) — scalar macro: the
execution's score — null when errored or unscored, 0 on a judge error, else the root
score of its tree (rules/verdicts.py).
grain:   one value
inputs:  is_ok, is_unscored, is_judge_error (booleans), root_score (0–1)
returns: double
""",
        ("is_ok", "is_unscored", "is_judge_error", "root_score"),
        verdicts.execution_score,
        booleans=("is_ok", "is_unscored", "is_judge_error"),
        with_namespace=True,
    ),
    ScalarMacro(
        "execution_verdict",
        """
execution_verdict(is_ok, is_judge_error, is_unscored, is_required_failed, score,
                  threshold, borderline) — scalar macro: the first verdict that applies:
'error', 'fail' (judge error), 'unscored', 'fail' (required gate), then the band of the
score (rules/verdicts.py).
grain:   one value
inputs:  is_ok, is_judge_error, is_unscored, is_required_failed (booleans); score,
         threshold, borderline (0–1; borderline null = no band)
returns: varchar 'error' | 'fail' | 'unscored' | 'pass' | 'borderline'
""",
        (
            "is_ok",
            "is_judge_error",
            "is_unscored",
            "is_required_failed",
            "score",
            "threshold",
            "borderline",
        ),
        lambda ns, ok, je, un, rf, score, t, band: verdicts.verdict(
            ns,
            ok=ok,
            judge_error=je,
            unscored=un,
            required_failed=rf,
            score=score,
            threshold=t,
            borderline=band,
        ),
        booleans=("is_ok", "is_judge_error", "is_unscored", "is_required_failed"),
        with_namespace=True,
    ),
    ScalarMacro(
        "execution_passed",
        """
execution_passed(is_ok, is_judge_error, verdict, outcomes_total, outcomes_passed,
                 outcomes_mode) — scalar macro: passed under the outcomes mode ('gate',
'ignore', 'both'); an errored execution or a judge error never passes
(rules/verdicts.py).
grain:   one value
inputs:  is_ok, is_judge_error (booleans), verdict (varchar), outcomes_total,
         outcomes_passed (counts), outcomes_mode (varchar)
returns: boolean
""",
        (
            "is_ok",
            "is_judge_error",
            "verdict",
            "outcomes_total",
            "outcomes_passed",
            "outcomes_mode",
        ),
        lambda ns, ok, je, v, total, done, mode: verdicts.passed(
            ns,
            ok=ok,
            judge_error=je,
            verdict=v,
            outcomes_total=total,
            outcomes_passed=done,
            mode=mode,
        ),
        booleans=("is_ok", "is_judge_error"),
        strings=("verdict", "outcomes_mode"),
        with_namespace=True,
    ),
    ScalarMacro(
        "ci_low",
        """
ci_low(value, se) — scalar macro: lower end of the 95 % interval, value − z · se
(rules/intervals.py).
grain:   one value
inputs:  value, se (a standard error)
returns: double; null when value or se is null
""",
        ("value", "se"),
        intervals.ci_low,
    ),
    ScalarMacro(
        "ci_high",
        """
ci_high(value, se) — scalar macro: upper end of the 95 % interval, value + z · se
(rules/intervals.py).
grain:   one value
inputs:  value, se (a standard error)
returns: double; null when value or se is null
""",
        ("value", "se"),
        intervals.ci_high,
    ),
    ScalarMacro(
        "mde",
        """
mde(se) — scalar macro: the minimum detectable effect at α 0.05 (two-sided) and power
0.8 of a difference with standard error se (rules/intervals.py, SPEC §10).
grain:   one value
inputs:  se (a standard error)
returns: double; null when se is null
""",
        ("se",),
        intervals.mde,
    ),
)


def render_wilson_interval() -> str:
    """sql/wilson_interval.sql: the Wilson score interval lives only in SQL (no engine
    computes it); its default z is the rule layer's Z_95."""
    return f"""-- wilson_interval(passed, n, z) — scalar macro: Wilson score interval of a pass
-- rate.
-- grain:   one value
-- inputs:  passed (number of passes), n (number of trials), z (normal quantile; the
--          default is the 95 % quantile of rules/constants.py)
-- returns: struct(low double, high double); null when n = 0 or n is null
{GENERATED}
create or replace macro wilson_interval(passed, n, z := {Z_95!r}) as
    case
        when coalesce(n, 0) > 0 then
            list_transform(
                [{{
                    'p': cast(passed as double) / n,
                    'n': cast(n as double),
                    'z': cast(z as double)
                }}],
                lambda w: {{
                    'low': (w.p + w.z * w.z / (2 * w.n)
                            - w.z * sqrt(w.p * (1 - w.p) / w.n + w.z * w.z / (4 * w.n * w.n)))
                           / (1 + w.z * w.z / w.n),
                    'high': (w.p + w.z * w.z / (2 * w.n)
                             + w.z * sqrt(w.p * (1 - w.p) / w.n + w.z * w.z / (4 * w.n * w.n)))
                            / (1 + w.z * w.z / w.n)
                }}
            )[1]
    end;
"""


_SOURCE = "__evalframe_source"
_PARAM = "@param:"
CASE_SUMMARY_INPUTS = {
    S.CONFIG_ID: "String",
    S.RUN_ID: "String",
    S.CASE_ID: "String",
    S.STATUS: "String",
    S.VERDICT: "String",
    S.SCORE: "Float64",
    S.PASSED: "Boolean",
    S.LATENCY_MS: "Float64",
    S.COST_USD: "Float64",
}
"""The execution_scores columns case_summary reads."""


def _table_macro_body(
    build: Callable[[Any, Any], Any],
    inputs: dict[str, str],
    params: Sequence[str],
    prefix: str = "",
) -> str:
    """The query of a table macro over `query_table(source)`: `build(nw, frame)` runs the
    rules on a narwhals table of `inputs`; `nw.lit("@param:NAME")` marks a parameter."""
    import sqlglot
    from sqlglot import exp

    nw, _ = _tables()
    name = _SOURCE
    frame = _table(name, {c: getattr(nw, t) for c, t in inputs.items()})
    tree = sqlglot.parse_one(build(nw, frame).to_sql(), read="duckdb")

    def substitute(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Table) and node.name == name:
            alias = node.args.get("alias")
            call = exp.Anonymous(this="query_table", expressions=[exp.column("source")])
            return exp.Table(this=call, alias=alias)
        if isinstance(node, exp.Identifier) and node.this == name:
            return exp.to_identifier("src")
        if prefix and isinstance(node, exp.Identifier) and node.this.startswith("__duckdb_s"):
            return exp.to_identifier(prefix + node.this[len("__duckdb_") :])
        if isinstance(node, exp.Literal) and node.is_string and node.this.startswith(_PARAM):
            param = node.this[len(_PARAM) :]
            assert param in params, param
            return exp.cast(exp.column(param), "varchar")
        return node

    text = tree.transform(substitute).transform(_tidy).sql(dialect="duckdb", pretty=True)
    return _lowercase(text.replace("AS NOT MATERIALIZED", "AS"))


def param(name: str) -> str:
    """The placeholder literal of a macro parameter in a rule pipeline."""
    return f"{_PARAM}{name}"


def render_case_summary_of() -> str:
    """sql/case_summary_of.sql: `rules.attempts` over execution_scores rows."""

    def build(nw: Any, frame: Any) -> Any:
        keys = (S.CONFIG_ID, S.RUN_ID, S.CASE_ID)
        policy = (nw.lit(param("attempts_score")), nw.lit(param("attempts_passed")))
        return (
            frame.group_by(*keys)
            .agg(*attempts.case_aggregations(nw))
            .with_columns(*attempts.case_columns(nw, *policy))
            .select(*S.CASE_COLUMNS)
            .sort(*keys, nulls_last=True)
        )

    body = _table_macro_body(build, CASE_SUMMARY_INPUTS, ("attempts_score", "attempts_passed"))
    body = "\n".join(f"    {line}".rstrip() for line in body.splitlines())
    return f"""-- case_summary_of(source, ...) — table macro: case_summary from execution_scores
-- rows (SPEC §4): repeated attempts of a case reduced to one row (rules/attempts.py).
-- Over the stored results it is a what-if on the attempts policy:
-- case_summary_of('execution_scores', attempts_passed := 'any').
-- grain:   config × run × case
-- inputs:  source: name of a table, view or CTE shaped like execution_scores
-- params:  source ['execution_scores'], attempts_score ['mean'|'min'|'max'],
--          attempts_passed ['all'|'any'|'majority']
-- columns: {", ".join(S.CASE_COLUMNS[:7])},
--          {", ".join(S.CASE_COLUMNS[7:])}
{GENERATED}
create or replace macro case_summary_of(
    source := 'execution_scores',
    attempts_score := 'mean',
    attempts_passed := 'all'
) as table
{body};
"""


RUN_SUMMARY_INPUTS = {
    **CASE_SUMMARY_INPUTS,
    S.INPUT_TOKENS: "Int64",
    S.OUTPUT_TOKENS: "Int64",
}
"""The execution_scores columns run_summary reads."""
_RUN_KEYS = (S.CONFIG_ID, S.RUN_ID)


def _indent(text: str, by: str = "    ") -> str:
    return "\n".join(f"{by}{line}".rstrip() for line in text.splitlines())


def render_run_summary_of() -> str:
    """sql/run_summary_of.sql: `rules.runs` (statistics) and `rules.run_gates` over
    execution_scores rows; the runs table's rows and columns joined around them."""
    COUNT_COLUMNS, RUN_COLUMNS = S.COUNT_COLUMNS, S.RUN_COLUMNS

    def run_groups(nw: Any, frame: Any) -> Any:
        return frame.group_by(*_RUN_KEYS).agg(
            *runs.execution_aggregations(nw), *runs.cost_aggregations(nw)
        )

    def run_cases(nw: Any, frame: Any) -> Any:
        passed = nw.lit(param("attempts_passed"))
        return (
            frame.group_by(*_RUN_KEYS, S.CASE_ID)
            .agg(*attempts.case_aggregations(nw))
            .select(*_RUN_KEYS, *runs.per_case_columns(nw))
            .with_columns(*runs.case_level_terms(nw, _RUN_KEYS, passed))
            .group_by(*_RUN_KEYS)
            .agg(*runs.case_level_aggregations(nw))
        )

    groups = _table_macro_body(run_groups, RUN_SUMMARY_INPUTS, (), prefix="run_groups_")
    cases = _table_macro_body(
        run_cases, RUN_SUMMARY_INPUTS, ("attempts_passed",), prefix="run_cases_"
    )
    case_level = {S.CASES, S.CASE_PASS_RATE, S.PASS_RATE_SE, S.MEAN_SCORE_SE}
    gates = {
        S.MIN_MEAN_SCORE: "cast(min_mean_score as double)",
        S.MIN_PASS_RATE: "cast(min_pass_rate as double)",
        S.MEAN_SCORE_GATE: "run_gate(g.mean_score, min_mean_score)",
        S.PASS_RATE_GATE: "run_gate(g.pass_rate, min_pass_rate)",
        S.RUN_PASSED: "run_gate(g.mean_score, min_mean_score)\n"
        "        and run_gate(g.pass_rate, min_pass_rate)",
    }
    columns = []
    for c in RUN_COLUMNS:
        if c in _RUN_KEYS:
            columns.append(f"k.{c}")
        elif c in gates:
            columns.append(f"{gates[c]} as {c}")
        else:
            value = f"{'c' if c in case_level else 'g'}.{c}"
            columns.append(f"coalesce({value}, 0)::bigint as {c}" if c in COUNT_COLUMNS else value)
    select = ",\n".join(f"    {c}" for c in columns)
    return f"""-- run_summary_of(source, ...) — table macro: run_summary from execution_scores rows
-- (SPEC §5): counts, rates, clustered standard errors, latency, cost and run gates
-- (rules/runs.py, rules/run_gates.py). Over the stored results it is a what-if on the
-- gates: run_summary_of(min_pass_rate := 0.9).
-- grain:   config × run (runs of the runs table without executions get zero counts)
-- inputs:  source: name of a relation shaped like execution_scores; runs_source: the runs
--          table (its columns are carried onto each row, `config` as run_config)
-- params:  source ['execution_scores'], min_mean_score [0.8], min_pass_rate [1.0],
--          attempts_score ['mean'] (kept for calls that pass it; no column depends on
--          it), attempts_passed ['all'] (for case_pass_rate), runs_source ['runs'],
--          config_name [null] (a config_id to give rows to runs of the runs table even
--          when source holds no execution)
-- columns: {", ".join(RUN_COLUMNS[:8])},
--          {", ".join(RUN_COLUMNS[8:15])},
--          {", ".join(RUN_COLUMNS[15:21])},
--          {", ".join(RUN_COLUMNS[21:])},
--          then the columns of the runs table (created_at, label, run_config, metadata)
{GENERATED}
create or replace macro run_summary_of(
    source := 'execution_scores',
    min_mean_score := 0.8,
    min_pass_rate := 1.0,
    attempts_score := 'mean',
    attempts_passed := 'all',
    runs_source := 'runs',
    config_name := null
) as table
with run_groups as (
{_indent(groups, "    ")}
),
run_cases as (
{_indent(cases, "    ")}
),
config_ids as (
    select distinct config_id from run_groups
    union
    select cast(config_name as varchar) as config_id where config_name is not null
),
run_keys as (
    select config_id, run_id from run_groups
    union
    select c.config_id, r.run_id
    from query_table(runs_source) as r
    cross join config_ids as c
)
select
{select},
    r.* exclude (run_id) rename (config as run_config)
from run_keys as k
left join run_groups as g on g.config_id = k.config_id and g.run_id = k.run_id
left join run_cases as c on c.config_id = k.config_id and c.run_id = k.run_id
left join query_table(runs_source) as r on r.run_id = k.run_id
order by k.config_id, r.created_at nulls last, k.run_id;
"""


def rendered() -> dict[str, str]:
    """Every generated file of sql/: file name → text."""
    files = {f"{m.name}.sql": render_scalar(m) for m in SCALARS}
    files["wilson_interval.sql"] = render_wilson_interval()
    files["case_summary_of.sql"] = render_case_summary_of()
    files["run_summary_of.sql"] = render_run_summary_of()
    return files


def write(folder: Path = SQL_DIR) -> list[str]:
    """Write the generated files into `folder`; the names of those that changed."""
    changed = []
    for name, text in rendered().items():
        path = folder / name
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            changed.append(name)
    return changed


if __name__ == "__main__":  # pragma: no cover - regenerates the files
    for changed_name in write():
        print(f"wrote sql/{changed_name}")
