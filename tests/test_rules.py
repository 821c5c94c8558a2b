"""The rule layer (evalframe/_private/rules/) is the one source of the rules it holds.

- its literals (EPS, the z values, rule names) appear nowhere else in Python; in sql/ only
  in the one macro that states the rule for DuckDB, which answers like the layer;
- one golden suite for the attempts family (case_summary) runs on every engine through
  the `engine` fixture — polars, DuckDB (the `case_summary_of` macro) and Spark —
  against a small literal table that tests/reference.py also reproduces;
- breaking a rule in the layer breaks the engines that run it.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import duckdb
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from evalframe._private import schema as S
from evalframe._private.config import Config, config_from_dict
from evalframe._private.engines.duckdb.sql import SCALAR_MACROS, sql_text
from evalframe._private.rules import attempts, boundaries, intervals
from evalframe._private.rules.constants import EPS, MDE_FACTOR, Z_95
from evalframe._private.summaries.case_summary import CASE_COLUMNS, case_summary
from tests import reference as ref

ROOT = Path(__file__).resolve().parents[1]


def _macros(*table_macros: str) -> duckdb.DuckDBPyConnection:
    """A connection with every scalar macro of sql/ and `table_macros`."""
    con = duckdb.connect()
    for name in (*SCALAR_MACROS, *table_macros):
        con.execute(sql_text(name))
    return con


# --- the SQL statement of a rule answers like the rule ---------------------------------------
def test_sql_macros_answer_like_the_rule():
    x, b = pl.col("x"), pl.col("b")
    frame = pl.DataFrame({"x": [0.8 - 1e-10, 0.79, float("nan"), 0.05, 0.06], "b": [0.8] * 5})
    want = frame.select(
        boundaries.meets(x, b).alias("meets"),
        boundaries.exceeds(x, b - 0.75).alias("exceeds"),
        intervals.ci_low(x, b).alias("ci_low"),
        intervals.ci_high(x, b).alias("ci_high"),
        intervals.mde(b).alias("mde"),
    )
    con = _macros()
    con.register("t", frame)
    got = con.sql(
        "select meets(x, b) as meets, exceeds(x, b - 0.75) as exceeds, ci_low(x, b) as ci_low,"
        " ci_high(x, b) as ci_high, mde(b) as mde from t"
    ).pl()
    assert_frame_equal(got, want)
    edges = con.execute(
        f"select meets(0.8 - {EPS} / 2, 0.8), exceeds(0.05 + {EPS} * 2, 0.05),"
        " ci_high(0.0, 1.0), mde(1.0), (wilson_interval(5, 10)).low"
    ).fetchone()
    z = Z_95
    p, n = 0.5, 10
    wilson_low = (p + z * z / (2 * n) - z * (p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5) / (
        1 + z * z / n
    )
    assert edges == pytest.approx((True, True, Z_95, MDE_FACTOR, wilson_low), abs=1e-15)


# --- literals live in the rule layer only -------------------------------------------------
LITERALS = {
    "EPS": re.compile(r"(?<![\w.])1e-0?9(?![\d])"),
    "Z_95": re.compile(r"(?<![\w.])1\.96(?![\d])"),
    "MDE_FACTOR": re.compile(r"2\.801585"),
    "majority": re.compile(r"[\"']majority[\"']"),
    "all_or_nothing": re.compile(r"[\"']all_or_nothing[\"']"),
    "zero": re.compile(r"[\"']zero[\"']"),
    "fixed point": re.compile(
        r"2(\.0)?\s*\*\*\s*-?(24|80)\b|pow\(2(\.0)?,\s*-?(24|80)\)|<<\s*80\b"
    ),
    "case status": re.compile(r"[\"'](regression|improvement|unchanged|removed)[\"']"),
}
SQL_HOMES = {
    "EPS": {"meets.sql", "exceeds.sql"},
    "Z_95": {"ci_low.sql", "wilson_interval.sql"},
    "MDE_FACTOR": {"mde.sql"},
    "majority": {"case_passed.sql"},
    "all_or_nothing": {"node_score.sql"},
    "zero": {"execution_partials.sql", "execution_scores_of.sql", "evaluator_deltas_of.sql"},
    "fixed point": {"execution_partials.sql", "execution_scores_of.sql"},
    "case status": {"case_status.sql", "run_deltas_of.sql", "regressions.sql"},
}
"""The sql/ objects that state each rule for DuckDB (held to the layer above by this file,
the golden suites and the engine-parity tests); every other object calls them."""
NOT_YET_IN_THE_RULE_LAYER: set[tuple[str, str]] = {
    ("case status", "evalframe/cli/compare.py"),
    ("case status", "evalframe/format.py"),
    ("case status", "evalframe/_private/pipeline/cases.py"),
    ("case status", "evalframe/_private/report/cases.py"),
    ("case status", "evalframe/_private/report/html.py"),
    ("case status", "evalframe/_private/report/plots.py"),
    ("case status", "evalframe/_private/report/sections.py"),
}
"""(literal, file) pairs of rules not moved yet — each one named, none silently."""


def _sources() -> list[Path]:
    files = [*ROOT.joinpath("evalframe").rglob("*.py"), *ROOT.joinpath("sql").glob("*.sql")]
    rules = ROOT / "evalframe" / "_private" / "rules"
    return [f for f in files if rules not in f.parents and f.name != "init.sql"]


def _allowed(name: str, path: Path) -> bool:
    rel = path.relative_to(ROOT).as_posix()
    home = path.parent == ROOT / "sql" and path.name in SQL_HOMES.get(name, ())
    return home or (name, rel) in NOT_YET_IN_THE_RULE_LAYER


def _code(text: str, suffix: str) -> str:
    """The text without comments and docstrings (a rule is code, not prose)."""
    if suffix == ".sql":
        return "\n".join(line.split("--")[0] for line in text.splitlines())
    lines = text.splitlines()
    for node in ast.walk(ast.parse(text)):
        body = getattr(node, "body", None)
        if isinstance(body, list):
            for doc in (s for s in body if isinstance(s, ast.Expr)):
                if isinstance(doc.value, ast.Constant) and isinstance(doc.value.value, str):
                    lines[doc.lineno - 1 : doc.end_lineno] = [""] * (
                        (doc.end_lineno or doc.lineno) - doc.lineno + 1
                    )
    return "\n".join(line.split("#")[0] for line in lines)


@pytest.mark.slow
def test_rule_literals_live_only_in_the_rule_layer():
    found = []
    for path in _sources():
        rel = path.relative_to(ROOT).as_posix()
        code = _code(path.read_text(encoding="utf-8"), path.suffix)
        for name, pattern in LITERALS.items():
            if pattern.search(code) and not _allowed(name, path):
                found.append(f"{rel}: {name}")
    assert not found, "a rule literal outside evalframe/_private/rules/: " + ", ".join(found)


def test_the_allow_list_holds_only_what_is_still_there():
    left = {
        (name, path)
        for name, path in NOT_YET_IN_THE_RULE_LAYER
        if LITERALS[name].search(
            _code((ROOT / path).read_text(encoding="utf-8"), Path(path).suffix)
        )
    }
    assert left == NOT_YET_IN_THE_RULE_LAYER, "drop the moved entries from the allow-list"
    for name, homes in SQL_HOMES.items():
        for home in homes:
            code = _code((ROOT / "sql" / home).read_text(encoding="utf-8"), ".sql")
            assert LITERALS[name].search(code), f"sql/{home} no longer states {name}"


@pytest.mark.slow
def test_the_literal_grep_finds_a_planted_rule(tmp_path, monkeypatch):
    """The grep is no test that cannot fail: a rule restated outside the layer is caught."""
    planted = ROOT / "evalframe" / "_private" / "scoring" / "flat.py"
    text = planted.read_text(encoding="utf-8") + "\nX = 'all_or_nothing'\n"
    monkeypatch.setattr(
        Path,
        "read_text",
        lambda self, encoding=None: (
            text if self == planted else Path.read_bytes(self).decode(encoding or "utf-8")
        ),
    )
    with pytest.raises(AssertionError, match=r"flat\.py: all_or_nothing"):
        test_rule_literals_live_only_in_the_rule_layer()


# --- one golden suite, every engine --------------------------------------------------------
EXECUTIONS = pl.DataFrame(
    {
        S.CONFIG_ID: ["c"] * 7,
        S.RUN_ID: ["r1", "r1", "r1", "r1", "r1", "r2", "r2"],
        S.CASE_ID: ["a", "a", "a", "b", "b", "a", "b"],
        S.ATTEMPT: [0, 1, 2, 0, 1, 0, 0],
        S.STATUS: ["ok", "ok", "error", "ok", "ok", "ok", "ok"],
        S.VERDICT: ["pass", "fail", "error", "pass", "pass", "unscored", "fail"],
        S.SCORE: [0.9, 0.5, None, 0.8, 0.7, None, 0.25],
        S.PASSED: [True, False, False, True, True, False, False],
        S.LATENCY_MS: [100.0, 300.0, None, 50.0, 70.0, 10.0, 20.0],
        S.COST_USD: [0.5, None, None, None, None, None, 0.25],
    }
)
GOLDEN = {  # attempts.passed -> (passed per (run, case)); the rest is shared
    "all": [False, True, False, False],
    "any": [True, True, False, False],
    "majority": [False, True, False, False],
}
SHARED = pl.DataFrame(
    {
        S.CONFIG_ID: ["c"] * 4,
        S.RUN_ID: ["r1", "r1", "r2", "r2"],
        S.CASE_ID: ["a", "b", "a", "b"],
        S.ATTEMPTS: [3, 2, 1, 1],
        S.ERRORED: [1, 0, 0, 0],
        S.SCORED: [2, 2, 0, 1],
        S.UNSCORED: [0, 0, 1, 0],
        S.SCORE: [0.7, 0.75, None, 0.25],
        S.N_PASSED: [1, 2, 0, 0],
        S.PASS_RATE: [1 / 3, 1.0, 0.0, 0.0],
        S.FLAKY: [True, False, False, False],
        S.LATENCY_MEAN: [200.0, 60.0, 10.0, 20.0],
        S.COST_USD: [0.5, None, None, 0.25],
    }
)


def _rows(cfg: Config, rows: pl.DataFrame = EXECUTIONS) -> pl.DataFrame:
    return rows.with_columns(pl.lit(cfg.config_id).alias(S.CONFIG_ID))


def _polars(rows: pl.DataFrame, cfg: Config) -> pl.DataFrame:
    return case_summary(rows.lazy(), cfg).collect()


def _duckdb(rows: pl.DataFrame, cfg: Config) -> pl.DataFrame:
    con = _macros("case_summary_of")
    con.register("execution_scores", rows.to_arrow())
    query = (
        "select * from case_summary_of('execution_scores', "
        f"attempts_score := '{cfg.attempts.score}', attempts_passed := '{cfg.attempts.passed}')"
    )
    return con.sql(query).pl()


def _spark(rows: pl.DataFrame, cfg: Config, spark) -> pl.DataFrame:
    from evalframe._private.engines.spark.run import case_summary as spark_case_summary
    from evalframe._private.engines.spark.run import collect_tables

    frame = spark.createDataFrame(rows.to_arrow())
    got = collect_tables({"t": spark_case_summary(frame, cfg)})["t"]
    return got.sort(S.RUN_ID, S.CASE_ID)


@pytest.fixture
def case_summary_on(engine, request):
    """case_summary on one engine: rows, config -> the table."""
    if engine == "spark":
        spark = request.getfixturevalue("spark")
        return lambda rows, cfg: _spark(rows, cfg, spark)
    return {"polars": _polars, "duckdb": _duckdb}[engine]


def _expected(cfg: Config, rule: str) -> pl.DataFrame:
    return _rows(cfg, SHARED).with_columns(pl.Series(S.PASSED, GOLDEN[rule])).select(CASE_COLUMNS)


def _rounded(values: list) -> list:
    return [None if v is None else round(v, 12) for v in values]


@pytest.mark.parametrize("rule", ["all", "any", "majority"])
def test_case_summary_golden(case_summary_on, rule):
    cfg = config_from_dict({"attempts": {"passed": rule}})
    got = case_summary_on(_rows(cfg), cfg).select(CASE_COLUMNS)
    assert_frame_equal(got, _expected(cfg, rule), check_dtypes=False, abs_tol=1e-12)


@pytest.mark.parametrize("how", ["min", "max"])
def test_case_summary_golden_score_rule(case_summary_on, how):
    cfg = config_from_dict({"attempts": {"score": how}})
    got = case_summary_on(_rows(cfg), cfg)
    want = {"min": [0.5, 0.7, None, 0.25], "max": [0.9, 0.8, None, 0.25]}[how]
    assert _rounded(got[S.SCORE].to_list()) == want


@pytest.mark.parametrize("rule", ["all", "any", "majority"])
def test_golden_table_is_the_exact_reference(rule):
    cfg = config_from_dict({"attempts": {"passed": rule}})
    rows = EXECUTIONS.to_dicts()
    want = ref.case_summary(rows, cfg)
    assert [r[S.PASSED] for r in want] == GOLDEN[rule]
    assert [r[S.N_PASSED] for r in want] == SHARED[S.N_PASSED].to_list()
    scores = [None if r[S.SCORE] is None else float(r[S.SCORE]) for r in want]
    assert _rounded(scores) == _rounded(SHARED[S.SCORE].to_list())


def test_breaking_the_rule_breaks_the_polars_engine(monkeypatch):
    """A wrong `majority` (>= half instead of > half) in rules/attempts.py: the polars
    engine answers differently at once (the golden suite above holds DuckDB's
    `case_passed` to the same table)."""

    def wrong(ns, n, k, rule):
        return (
            ns.when(rule == "any")
            .then(k >= 1)
            .when(rule == "majority")
            .then(2 * k >= n)
            .otherwise(k == n)
        )

    monkeypatch.setattr(attempts, "case_passed", wrong)
    cfg = config_from_dict({"attempts": {"passed": "majority"}})
    rows = _rows(cfg, EXECUTIONS.filter(pl.col(S.ATTEMPT) < 2))  # r1/a: 1 of 2 passed
    assert _polars(rows, cfg).filter(pl.col(S.CASE_ID) == "a")[S.PASSED][0] is True


# --- run_summary: the runs family, every engine --------------------------------------------
RUN_GOLDEN = pl.DataFrame(
    {
        S.RUN_ID: ["r1", "r2"],
        S.N_EXECUTIONS: [5, 2],
        S.CASES: [2, 2],
        S.PASSED: [3, 0],
        S.FAILED: [1, 1],
        S.ERRORED: [1, 0],
        S.UNSCORED: [0, 1],
        S.N_PASS: [3, 0],
        S.N_BORDERLINE: [0, 0],
        S.N_FAIL: [1, 1],
        S.PASS_RATE: [0.6, 0.0],
        S.MEAN_SCORE: [0.725, 0.25],
        S.CASE_PASS_RATE: [1.0, 0.0],  # attempts.passed: any
        # clusters (k, n) = (1, 3), (2, 2): sqrt(2 · (0.64 + 0.64)) / 5
        S.PASS_RATE_SE: [0.32, 0.0],
        # clusters (Σs, n) = (1.4, 2), (1.5, 2): sqrt(2 · 0.005) / 4; r2 has one cluster
        S.MEAN_SCORE_SE: [0.025, None],
        S.LATENCY_MEAN: [130.0, 15.0],
        S.LATENCY_P50: [85.0, 15.0],  # 50, 70 | 100, 300: linear at 1.5
        S.LATENCY_P95: [270.0, 19.5],
        S.LATENCY_MAX: [300.0, 20.0],
        S.COST_USD: [0.5, 0.25],
        S.MEAN_SCORE_GATE: [True, False],
        S.PASS_RATE_GATE: [True, False],
        S.RUN_PASSED: [True, False],
    }
)
RUN_CONFIG = {
    "attempts": {"passed": "any"},
    "run_gates": {"min_mean_score": 0.5, "min_pass_rate": 0.6},  # r1 lands on 0.6
}


def _run_rows(cfg: Config) -> pl.DataFrame:
    tokens = [pl.lit(None, pl.Int64).alias(c) for c in (S.INPUT_TOKENS, S.OUTPUT_TOKENS)]
    return _rows(cfg).with_columns(*tokens)


def _run_polars(rows: pl.DataFrame, cfg: Config) -> pl.DataFrame:
    from evalframe._private.summaries.run_summary import run_summary

    return run_summary(rows.lazy(), cfg).collect()


def _run_duckdb(rows: pl.DataFrame, cfg: Config) -> pl.DataFrame:
    con = _macros("run_summary_of")
    con.register("execution_scores", rows.to_arrow())
    con.execute("create table runs (run_id varchar, created_at timestamp, config varchar)")
    gates = cfg.run_gates
    return con.sql(
        "select * from run_summary_of('execution_scores', "
        f"min_mean_score := {gates.min_mean_score}, min_pass_rate := {gates.min_pass_rate}, "
        f"attempts_passed := '{cfg.attempts.passed}')"
    ).pl()


def _run_spark(rows: pl.DataFrame, cfg: Config, spark) -> pl.DataFrame:
    from evalframe._private.engines.spark.run import collect_tables, run_summary

    frame = spark.createDataFrame(rows.to_arrow())
    return collect_tables({"t": run_summary(frame, cfg)})["t"].sort(S.RUN_ID)


@pytest.fixture
def run_summary_on(engine, request):
    """run_summary on one engine: rows, config -> the table."""
    if engine == "spark":
        spark = request.getfixturevalue("spark")
        return lambda rows, cfg: _run_spark(rows, cfg, spark)
    return {"polars": _run_polars, "duckdb": _run_duckdb}[engine]


def test_run_summary_golden(run_summary_on):
    cfg = config_from_dict(RUN_CONFIG)
    got = run_summary_on(_run_rows(cfg), cfg).select(RUN_GOLDEN.columns)
    assert_frame_equal(got, RUN_GOLDEN, check_dtypes=False, abs_tol=1e-12)


def test_run_golden_table_is_the_exact_reference():
    cfg = config_from_dict(RUN_CONFIG)
    want = {r[S.RUN_ID]: r for r in ref.run_summary(_run_rows(cfg).to_dicts(), cfg)}
    for row in RUN_GOLDEN.to_dicts():
        exact = want[row[S.RUN_ID]]
        for column, value in row.items():
            expected = exact[column]
            if value is None or expected is None:
                assert value is expected, column
            elif isinstance(value, bool | str):
                assert value == expected, column
            else:
                assert float(expected) == pytest.approx(value, abs=1e-12), column
