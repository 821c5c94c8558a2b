"""The row-level macros of sql/ (boundaries, bands, clustered SE, Wilson, McNemar) and
init.sql's defaults for a bare dataset folder, checked against exact arithmetic and the
polars engine."""

from __future__ import annotations

import math
import re
from decimal import Decimal
from fractions import Fraction

import duckdb
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import evalframe as ef
from evalframe._private import schema as S
from evalframe._private.engines.duckdb.sql import INIT_FILE, SCALAR_MACROS, sql_dir, sql_text


@pytest.fixture(scope="module")
def con():
    connection = duckdb.connect()
    for name in SCALAR_MACROS:
        connection.execute(sql_text(name))
    yield connection
    connection.close()


def value(con, expression: str, params: list | None = None):
    return con.sql(f"select {expression}", params=params).fetchall()[0][0]


def test_meets_and_exceeds_use_eps(con):
    assert value(con, "meets(0.7999999999999999, 0.8)") is True
    assert value(con, "meets(0.8 - 2e-9, 0.8)") is False
    assert value(con, "meets(null, 0.8)") is None
    assert value(con, "exceeds(0.85 - 0.80, 0.05)") is False
    assert value(con, "exceeds(0.85 - 0.79, 0.05)") is True
    weighted = value(con, "(0.15 * 0.8 + 0.125 * 0.8 + 0.1 * 0.8) / (0.15 + 0.125 + 0.1)")
    assert weighted < 0.8 or weighted == 0.8
    assert value(con, "meets($1, 0.8)", [weighted]) is True


def test_normalize_score_and_verdict_band(con):
    assert value(con, "normalize_score(4, 5)") == 0.8
    assert value(con, "normalize_score(0.5, null)") == 0.5
    assert value(con, "normalize_score(null, 5)") is None
    bands = con.sql(
        "select verdict_band(s, 0.8, 0.6), verdict_band(s, 0.8) "
        "from (values (0.8), (0.6), (0.59), (null)) t(s)"
    ).fetchall()
    assert bands == [("pass", "pass"), ("borderline", "fail"), ("fail", "fail"), (None, None)]


@pytest.mark.slow
@settings(max_examples=15, deadline=None)
@given(
    rows=st.lists(
        st.tuples(st.sampled_from("abcde"), st.one_of(st.none(), st.floats(0, 1))),
        min_size=1,
        max_size=20,
    )
)
def test_clustered_se_matches_the_spec_formula(rows):
    frame = pl.DataFrame(rows, schema={"case_id": pl.String, "x": pl.Float64}, orient="row")
    want_se = spec_clustered_se(rows)
    con = duckdb.connect()
    con.execute(sql_text("clustered_se"))
    con.register("values_table", frame)
    got = con.sql(
        "with per_case as (select case_id, sum(x) as sum_x, count(x)::double as n "
        "from values_table group by case_id having count(x) > 0) "
        "select clustered_se(list({'sum_x': sum_x, 'n': n})) from per_case"
    ).fetchall()[0][0]
    con.close()
    if want_se is None:
        assert got is None
    else:
        assert got is not None and abs(got - want_se) <= 1e-12


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(
    rows=st.lists(
        st.tuples(st.sampled_from("abcde"), st.one_of(st.none(), st.floats(0, 1))),
        min_size=1,
        max_size=20,
    )
)
def test_clustered_se_matches_the_spec_formula_many(rows):
    test_clustered_se_matches_the_spec_formula.hypothesis.inner_test(rows)


def spec_clustered_se(rows: list[tuple[str, float | None]]) -> float | None:
    """docs/statistics.md#clustered-standard-errors: sqrt(G/(G-1) · Σ_c (Σ_{i∈c} (x_i − x̄))²) / n
    over the non-null x, in exact arithmetic; None when G < 2."""
    xs = [(case, Fraction(x)) for case, x in rows if x is not None]
    cases = sorted({case for case, _ in xs})
    if len(cases) < 2:
        return None
    n = len(xs)
    mean = sum(x for _, x in xs) / n
    ss = sum(sum(x - mean for c, x in xs if c == case) ** 2 for case in cases)
    g = len(cases)
    return math.sqrt(float(Fraction(g, g - 1) * ss)) / n


def test_clustered_se_is_the_ordinary_se_with_one_value_per_case(con):
    got = value(con, "clustered_se([{'sum_x': 1.0, 'n': 1.0}, {'sum_x': 0.0, 'n': 1.0}])")
    assert got == pytest.approx(0.5)  # sd of (1, 0) is sqrt(0.5), / sqrt(2)
    assert value(con, "clustered_se([{'sum_x': 1.0, 'n': 1.0}])") is None


def test_wilson_interval(con):
    low, high = con.sql(
        "select ci.low, ci.high from (select wilson_interval(8, 10) as ci)"
    ).fetchall()[0]
    z = 1.96
    p, n = 0.8, 10
    center = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    assert low == pytest.approx(center - half) and high == pytest.approx(center + half)
    assert low == pytest.approx(0.4902, abs=1e-4) and high == pytest.approx(0.9433, abs=1e-4)
    assert value(con, "wilson_interval(0, 0)") is None


def exact_mcnemar(n01: int, n10: int) -> float:
    n, k = n01 + n10, min(n01, n10)
    if n == 0:
        return 1.0
    tail = sum(Fraction(math.comb(n, i), 2**n) for i in range(k + 1))
    return float(min(Fraction(1), 2 * tail))


@pytest.mark.slow
@settings(max_examples=20, deadline=None)
@given(n01=st.integers(0, 60), n10=st.integers(0, 60))
def test_mcnemar_p_matches_exact_arithmetic(n01, n10):
    con = duckdb.connect()
    con.execute(sql_text("mcnemar_p"))
    got = con.sql("select mcnemar_p($1, $2)", params=[n01, n10]).fetchall()[0][0]
    con.close()
    assert got == pytest.approx(exact_mcnemar(n01, n10), rel=1e-10, abs=1e-300)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(n01=st.integers(0, 60), n10=st.integers(0, 60))
def test_mcnemar_p_matches_exact_arithmetic_many(n01, n10):
    test_mcnemar_p_matches_exact_arithmetic.hypothesis.inner_test(n01, n10)


def test_mcnemar_p_known_values_and_large_counts(con):
    assert value(con, "mcnemar_p(5, 0)") == pytest.approx(0.0625)
    assert value(con, "mcnemar_p(0, 0)") == 1.0
    big = value(con, "mcnemar_p(1000, 1300)")
    assert 0.0 < big < 1e-8 and math.isfinite(big)


@pytest.mark.slow
def test_init_sql_defaults_a_bare_folder_like_the_python_engine(tmp_path, monkeypatch):
    """Only scores, no attempt / scale_max / executions, plus hive-partitioned outcomes:
    the init.sql views fill the defaults and run_summary_at equals the polars engine."""
    scores = pl.DataFrame(
        {
            "run_id": ["r1", "r1", "r1", "r2", "r2", "r2"],
            "case_id": ["c1", "c1", "c2", "c1", "c2", "c2"],
            "evaluator": ["a", "b", "a", "a", "a", "b"],
            "score": [0.9, 0.7, 0.5, None, 0.8, 1.0],
        }
    )
    scores.write_parquet(tmp_path / "scores.parquet")
    outcomes = pl.DataFrame(
        {"run_id": ["r2"], "case_id": ["c2"], "outcome": ["o"], "passed": [False]}
    )
    (tmp_path / "outcomes" / "run_id=r2").mkdir(parents=True)
    outcomes.drop("run_id").write_parquet(tmp_path / "outcomes" / "run_id=r2" / "p.parquet")
    monkeypatch.chdir(tmp_path)
    con = duckdb.connect()
    con.execute((sql_dir() / INIT_FILE).read_text())
    got = con.sql("select * from run_summary_at(config_name := $1)", params=["cfg"]).pl()
    cfg = ef.Config()
    ds = ef.Dataset.from_frames(scores, outcomes=outcomes.with_columns(pl.lit(0).alias("attempt")))
    want = ef.run_summary(ef.execution_scores(ds, cfg), cfg, runs=ds.runs).collect()
    want = want.with_columns(pl.lit("cfg").alias(S.CONFIG_ID))
    assert got.columns == want.columns
    for column in want.columns:
        assert got[column].to_list() == want[column].to_list() or got[column].to_list() == (
            pytest.approx(want[column].to_list(), abs=1e-9)
        ), column
    executions = con.sql("select status, attempt from executions").fetchall()
    assert set(executions) == {("ok", 0)}
    con.close()


# --- macro defaults are the config's ---------------------------------------------------------
def _config_defaults() -> dict[str, object]:
    """A macro parameter -> the default of the config setting it stands for."""
    cfg = ef.Config()
    return {
        "threshold": cfg.threshold,
        "threshold_override": cfg.threshold_override,
        "borderline": cfg.borderline,
        "aggregator": cfg.aggregator,
        "required_children": list(cfg.required_children),
        "on_missing": cfg.on_missing,
        "outcomes_mode": cfg.outcomes,
        "attempts_score": cfg.attempts.score,
        "attempts_passed": cfg.attempts.passed,
        **cfg.run_gates.model_dump(),
        **cfg.compare.model_dump(),
        **cfg.decide.model_dump(),
        "higher_is_better": ef.Evaluator().higher_is_better,
    }


NOT_CONFIG = {
    *("source", "case_source", "run_source", "runs_source", "pairs_source", "partials_source"),
    *("baseline", "candidate", "configured", "config_name", "k_values", "z"),
    *("clamp", "keep_threshold_scores", "keep_leaf_scores", "any_required"),
}
"""Macro parameters that are no config setting (relations, the pair, engine switches)."""
OWN_MEANING = {("verdict_band", "borderline"), ("execution_partials", "on_missing")}
"""Defaults that mean something of their own: no band; every partial sum."""
SIGNATURE = re.compile(r"create or replace macro (\w+)\((.*?)\) as", re.DOTALL)


def test_every_macro_default_is_the_config_default():
    want, checked, drift = _config_defaults(), set(), []
    probe = duckdb.connect()
    for path in sorted(sql_dir().glob("*.sql")):
        code = "\n".join(line.split("--")[0] for line in path.read_text().splitlines())
        for macro, params in SIGNATURE.findall(code):
            for param in params.split(","):
                name, _, default = (part.strip() for part in param.partition(":="))
                if not default or name in NOT_CONFIG or (macro, name) in OWN_MEANING:
                    continue
                assert name in want, f"{macro}.{name}: a default of no known config setting"
                got = probe.execute(f"select {default}").fetchall()[0][0]
                got = float(got) if isinstance(got, Decimal) else got
                checked.add(name)
                if got != want[name]:
                    drift.append(f"{path.name}: {macro}({name} := {default}) ≠ {want[name]!r}")
    assert not drift, "\n".join(drift)
    assert checked == set(want), f"no macro states {sorted(set(want) - checked)}"


def test_judge_agreement_at_equals_the_agreement_curve_at_each_threshold(tmp_path):
    """The SQL what-if on a judge's threshold counts what agreement_curve counts there."""
    ds = ef.write_demo(tmp_path / "demo", n_cases=30)
    ef.write_tables(ef.score_tables(ds), ds / "results")
    con, _ = ef.sql_connection(ds)
    curve = con.sql("select * from agreement_curve where evaluator is not null").pl()
    assert curve.height
    key = ["run_id", "evaluator", "rater"]
    counts = ["n_labeled", "tp", "fp", "fn", "tn"]
    for threshold in curve["threshold"].unique().to_list():
        got = con.sql(
            "select * from judge_agreement_at(threshold := $t)", params={"t": threshold}
        ).pl()
        want = curve.filter(pl.col("threshold") == threshold)
        both = got.join(want, on=key, suffix="_curve")  # the curve's rows at this threshold
        assert both.height == want.height, threshold
        for column in counts:
            assert both[column].to_list() == both[f"{column}_curve"].to_list(), column
        for column in ("kappa", "sensitivity", "specificity"):
            for a, b in zip(both[column], both[f"{column}_curve"], strict=True):
                assert (a is None and b is None) or a == pytest.approx(b, abs=1e-12), column
