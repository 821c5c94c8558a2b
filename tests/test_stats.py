"""Statistics of docs/statistics.md#passk-and-passk: binomial ratios, pass@k / pass^k in run_summary
and in SQL, Benjamini–Hochberg, paired pass delta, minimum detectable effects, the significance gate
and `plan` — each against the exact reference in tests/reference_stats.py."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import duckdb
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import evalframe as ef
from evalframe._private.compare.compare import compare
from evalframe._private.engines.duckdb.sql import (
    COMPARE_MACROS,
    call,
    create_macros,
    limit_params,
    sql_text,
)
from evalframe._private.rules.pass_at_k import comb_ratio
from evalframe._private.stats.multiple import bh_q_values
from evalframe._private.stats.power import MDE_FACTOR, Z_80, Z_975, cases_needed, plan_rows
from evalframe._private.summaries.case_summary import case_summary
from evalframe._private.summaries.run_summary import run_summary
from tests import reference_stats as ref
from tests.reference_compare import reference_compare
from tests.test_compare_properties import CASE_SCHEMA, EVAL_SCHEMA, RUN_SCHEMA, inputs
from tests.test_decide import pair_run_deltas

SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def close(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-12)


# --- binomial ratios ---------------------------------------------------------------------
COMB_TABLE = [
    # a, b, k, C(a,k)/C(b,k)
    (2, 5, 2, 0.1),
    (3, 5, 2, 0.3),
    (0, 3, 1, 0.0),
    (1, 3, 2, 0.0),
    (3, 3, 3, 1.0),
    (4, 5, 3, 0.4),
    (5, 10, 5, 1 / 252),
    (2, 1, 2, None),  # b < k: undefined
]


def test_comb_ratio_literal_table():
    got = [pl.select(comb_ratio(pl, pl.lit(a), pl.lit(b), k)).item() for a, b, k, _ in COMB_TABLE]
    for (ai, bi, ki, w), g in zip(COMB_TABLE, got, strict=True):
        assert close(g, w), (ai, bi, ki, g, w)
        if w is not None:
            assert close(g, Fraction(math.comb(ai, ki), math.comb(bi, ki)))


def test_comb_ratio_sql_equals_polars():
    con = duckdb.connect()
    con.execute(sql_text("comb_ratio"))
    for a, b, k, want in COMB_TABLE:
        assert close(con.execute(f"select comb_ratio({a}, {b}, {k})").fetchall()[0][0], want)


def test_mde_factor_is_z975_plus_z80():
    assert abs(Z_975 + Z_80 - MDE_FACTOR) < 1e-6


# --- pass@k / pass^k -----------------------------------------------------------------------
def execution_frame(cases: list[tuple[str, str, list[str]]]) -> pl.DataFrame:
    """execution_scores rows from (run, case, attempt outcomes 'p'/'f'/'e')."""
    rows = []
    for run, case, outcomes in cases:
        for attempt, o in enumerate(outcomes):
            rows.append(
                {
                    "run_id": run,
                    "case_id": case,
                    "attempt": attempt,
                    "config_id": ef.Config().config_id,
                    "status": "error" if o == "e" else "ok",
                    "score": None if o == "e" else (1.0 if o == "p" else 0.2),
                    "verdict": {"e": "error", "p": "pass", "f": "fail"}[o],
                    "passed": o == "p",
                    "latency_ms": None,
                    "cost_usd": None,
                    "input_tokens": None,
                    "output_tokens": None,
                }
            )
    schema = {
        "run_id": pl.String,
        "case_id": pl.String,
        "attempt": pl.Int64,
        "config_id": pl.String,
        "status": pl.String,
        "score": pl.Float64,
        "verdict": pl.String,
        "passed": pl.Boolean,
        "latency_ms": pl.Float64,
        "cost_usd": pl.Float64,
        "input_tokens": pl.Int64,
        "output_tokens": pl.Int64,
    }
    return pl.DataFrame(rows, schema=schema)


ATTEMPT_LISTS = st.lists(st.sampled_from("ppfe"), min_size=1, max_size=7).map(list)
CASES = st.lists(
    st.tuples(st.sampled_from(["r1", "r2"]), st.sampled_from([f"c{i}" for i in range(6)])),
    min_size=1,
    max_size=10,
    unique=True,
)


@st.composite
def attempt_cases(draw):
    keys = draw(CASES)
    return [(run, case, draw(ATTEMPT_LISTS)) for run, case in keys]


@pytest.mark.slow
@SETTINGS
@given(attempt_cases(), st.lists(st.integers(1, 8), min_size=1, max_size=3))
def test_pass_at_k_equals_the_exact_reference(cases, ks):
    ex = execution_frame(cases)
    cfg = ef.config_from_dict({"attempts": {"k": ks}})
    ex = ex.with_columns(pl.lit(cfg.config_id).alias("config_id"))
    got = {r["run_id"]: r for r in run_summary(ex.lazy(), cfg).collect().iter_rows(named=True)}
    case_rows = [
        {"run_id": run, "attempts": len(o), "n_passed": o.count("p")} for run, _, o in cases
    ]
    want = ref.pass_k_columns(case_rows, sorted(set(ks)))
    assert set(got) == set(want)
    for run, cols in want.items():
        for col, value in cols.items():
            assert close(got[run][col], value), (run, col, got[run][col], value)
    # the SQL macro gives the same numbers, one row per run x k
    cs = case_summary(ex.lazy(), cfg).collect()
    con = duckdb.connect()
    create_macros(con, ())
    con.execute(sql_text("pass_at_k_of"))
    con.register("cs", cs)
    long = con.sql("select * from pass_at_k_of('cs', k_values := $k)", params={"k": ks}).pl()
    assert long.height == len(want) * len(set(ks))
    for r in long.iter_rows(named=True):
        k, cols = r["k"], want[r["run_id"]]
        assert close(r["pass_at_k"], cols[f"pass_at_{k}"])
        assert close(r["pass_at_k_se"], cols[f"pass_at_{k}_se"])
        assert close(r["pass_all_k"], cols[f"pass_all_{k}"])
        assert close(r["pass_all_k_se"], cols[f"pass_all_{k}_se"])


PASS_K_TABLE = [
    # attempts of one case, k, pass_at_k, pass_all_k
    ("ppf", 1, 2 / 3, 2 / 3),
    ("ppf", 2, 1.0, 1 / 3),
    ("ppf", 3, 1.0, 0.0),
    ("pfe", 2, 2 / 3, 0.0),  # an errored attempt counts, as not passed
    ("pf", 3, None, None),  # fewer than k attempts: not counted
]


@pytest.mark.parametrize(("outcomes", "k", "at", "all_"), PASS_K_TABLE)
def test_pass_at_k_literal_cases(outcomes, k, at, all_):
    cfg = ef.config_from_dict({"attempts": {"k": [k]}})
    ex = execution_frame([("r", "c", list(outcomes))]).with_columns(
        pl.lit(cfg.config_id).alias("config_id")
    )
    row = run_summary(ex.lazy(), cfg).collect().row(0, named=True)
    assert close(row[f"pass_at_{k}"], at) and close(row[f"pass_all_{k}"], all_)
    assert row[f"pass_at_{k}_se"] is None  # one case: G < 2


def test_pass_k_columns_only_when_configured():
    ex = execution_frame([("r", "c", ["p", "f"])])
    assert not [c for c in run_summary(ex.lazy()).collect().columns if c.startswith("pass_a")]


def test_attempts_k_validation():
    assert ef.config_from_dict({"attempts": {"k": [3, 1, 3]}}).attempts.k == (1, 3)
    for bad in ([0], [-1], [1.5], [True]):
        with pytest.raises(ef.ConfigError):
            ef.config_from_dict({"attempts": {"k": bad}})


def test_new_defaults_keep_config_ids():
    assert ef.Config().config_id == "1c76d198b68d"
    assert ef.config_from_dict({"compare": {"require_significance": True}}).config_id != (
        ef.Config().config_id
    )


# --- Benjamini–Hochberg ------------------------------------------------------------------------
P_GRID = st.sampled_from([0.001, 0.01, 0.02, 0.03, 0.04, 0.05, 0.2, 0.5, 1.0])


@pytest.mark.slow
@SETTINGS
@given(st.lists(st.tuples(st.sampled_from("ab"), P_GRID), min_size=1, max_size=12), st.randoms())
def test_bh_equals_the_definition_in_any_row_order(rows, rnd):
    rnd.shuffle(rows)
    frame = pl.LazyFrame(rows, schema={"g": pl.String, "p": pl.Float64}, orient="row")
    got = bh_q_values(frame, "p", ["g"], "q").collect()
    assert got.select("g", "p").rows() == rows  # input order kept
    for g in "ab":
        idx = [i for i, r in enumerate(rows) if r[0] == g]
        want = ref.bh_q_values([rows[i][1] for i in idx])
        for i, w in zip(idx, want, strict=True):
            assert close(got["q"][i], w)


def test_bh_literal():
    frame = pl.LazyFrame({"g": [1] * 4, "p": [0.01, 0.04, 0.03, 0.2]})
    q = bh_q_values(frame, "p", ["g"], "q").collect()["q"].to_list()
    assert [round(x, 6) for x in q] == [0.04, 0.053333, 0.053333, 0.2]


# --- paired pass delta, MDE and the significance gate ------------------------------------------
@pytest.mark.slow
@settings(max_examples=70, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(inputs(), st.booleans())
def test_run_deltas_with_require_significance_equal_the_reference(data, strict):
    """paired_pass_delta*, mde_* and the reasons under require_significance, from the
    polars engine and from the SQL macro run_deltas_of, equal the exact reference."""
    cases, runs, evals, pairs, config = data
    old = [config] if isinstance(config, ef.Config) else config
    new = [
        c.model_copy(
            update={"compare": c.compare.model_copy(update={"require_significance": strict})}
        )
        for c in old
    ]
    # the flag is part of config_id: move the rows to the new ids
    ids = {o.config_id: n.config_id for o, n in zip(old, new, strict=True)}
    cases, runs, evals = (
        [{**r, "config_id": ids.get(r["config_id"], r["config_id"])} for r in rows]
        for rows in (cases, runs, evals)
    )
    configs = new[0] if isinstance(config, ef.Config) else new
    out = compare(
        pl.LazyFrame(cases, schema=CASE_SCHEMA),
        pairs,
        configs,
        run_summary=pl.LazyFrame(runs, schema=RUN_SCHEMA),
        evaluator_scores=pl.LazyFrame(evals, schema=EVAL_SCHEMA),
    )["run_deltas"].collect()
    # the SQL macro run_deltas_of (DuckDB engine) over the same summaries
    sql = (
        run_deltas_sql(
            pl.DataFrame(cases, schema=CASE_SCHEMA),
            pl.DataFrame(runs, schema=RUN_SCHEMA),
            pairs,
            configs,
        )
        if pairs
        else out
    )
    limits = {c.config_id: c.compare.model_dump() for c in new}
    data_ids = {r["config_id"] for r in cases} | {r["config_id"] for r in runs}
    if isinstance(config, ef.Config):  # one Config applies to every config_id of the data
        limits = dict.fromkeys(data_ids, new[0].compare.model_dump())
    want = reference_compare(cases, pairs, limits, runs, None)["run_deltas"]
    columns = [
        "paired_pass_delta",
        "paired_pass_delta_se",
        "paired_pass_delta_ci_low",
        "paired_pass_delta_ci_high",
        "mde_pass_rate",
        "mde_mean_score",
        "reasons",
        "regression_detected",
    ]
    assert out.height == sql.height == len(want)
    for engine, frame in (("polars", out), ("sql", sql)):
        for g, w in zip(frame.iter_rows(named=True), want, strict=True):
            for c in columns:
                exact = c in ("reasons", "regression_detected")
                same = g[c] == w[c] if exact else close(g[c], w[c])
                assert same, (engine, c, g[c], w[c])


def run_deltas_sql(cases: pl.DataFrame, runs: pl.DataFrame, pairs, configs) -> pl.DataFrame:
    """The SQL macro run_deltas_of over the given summaries: per config_id (in order), that
    config's limits; one Config applies its limits to every config_id."""
    con = duckdb.connect()
    create_macros(con, COMPARE_MACROS)
    unique = list(dict.fromkeys((str(b), str(c)) for b, c in pairs))
    con.register(
        "pairs",
        pl.DataFrame(
            {
                "pair_index": range(len(unique)),
                "baseline_run_id": [b for b, _ in unique],
                "candidate_run_id": [c for _, c in unique],
            },
            schema={
                "pair_index": pl.Int64,
                "baseline_run_id": pl.String,
                "candidate_run_id": pl.String,
            },
        ),
    )
    if isinstance(configs, ef.Config):
        groups = [(configs, cases, runs)]
    else:
        ids = sorted(set(cases["config_id"]) | set(runs["config_id"]))
        by_id = {c.config_id: c for c in configs}
        groups = [
            (
                by_id[i],
                cases.filter(pl.col("config_id") == i),
                runs.filter(pl.col("config_id") == i),
            )
            for i in ids
        ]
    parts = []
    for cfg, cs, rs in groups:
        con.register("cs", cs)
        con.register("rs", rs)
        params = {"case_source": "cs", "run_source": "rs", "pairs_source": "pairs"}
        params |= limit_params(cfg)
        query = call("run_deltas_of", params, ["case_source", "run_source"])
        parts.append(con.sql(query, params=params).pl())
    return pl.concat(parts)


def _pair(b_passed, c_passed, b_score, c_score, limits=None):
    cfg = ef.config_from_dict({"compare": limits or {}})
    cases = list(zip(b_passed, c_passed, b_score, c_score, strict=True))
    return pair_run_deltas(cases, cfg)


def test_paired_pass_delta_literal():
    # 10 cases: 3 pass -> fail, 1 fail -> pass, 6 unchanged
    b = [True] * 3 + [False] + [True] * 6
    c = [False] * 3 + [True] + [True] * 6
    row = _pair(b, c, [0.9] * 10, [0.9] * 10).row(0, named=True)
    d = [-1] * 3 + [1] + [0] * 6
    mean = sum(d) / 10
    sd = math.sqrt(sum((x - mean) ** 2 for x in d) / 9)
    assert close(row["paired_pass_delta"], -0.2)
    assert close(row["paired_pass_delta_se"], sd / math.sqrt(10))
    assert close(row["paired_pass_delta_ci_high"], -0.2 + 1.96 * sd / math.sqrt(10))
    assert close(row["mde_pass_rate"], 2.801585 * sd / math.sqrt(10))
    assert row["mde_mean_score"] == 0.0  # identical scores: se 0


def test_require_significance_keeps_only_drops_whose_interval_is_below_zero():
    # pass rate falls 10 points on 10 cases through one flip: not significant
    b, c = [True] * 10, [False] + [True] * 9
    lax = _pair(b, c, [0.9] * 10, [0.9] * 10).row(0, named=True)
    strict = _pair(b, c, [0.9] * 10, [0.9] * 10, {"require_significance": True}).row(0, named=True)
    assert lax["reasons"] == ["pass_rate_drop"] and strict["reasons"] == []
    # every case drops 0.1 in score: the interval is [-0.1, -0.1], significant
    row = _pair(b, b, [0.9] * 10, [0.8] * 10, {"require_significance": True}).row(0, named=True)
    assert row["reasons"] == ["mean_score_drop"]


# --- power ---------------------------------------------------------------------------------------
def test_plan_rows_literal():
    summary = pl.DataFrame(
        {"run_id": ["r"], "cases": [100], "pass_rate_se": [0.05], "mean_score_se": [None]},
        schema_overrides={"mean_score_se": pl.Float64},
    )
    table = plan_rows(summary, 0.03)
    rate = table.filter(pl.col("metric") == "pass_rate").row(0, named=True)
    assert close(rate["sigma_c"], 0.5)
    assert close(rate["mde"], 2.801585 * 0.05)
    assert rate["cases_needed"] == math.ceil((2.801585 * 0.5 / 0.03) ** 2) == 2181
    assert rate["cases_needed"] == cases_needed(0.5, 0.03)
    score = table.filter(pl.col("metric") == "mean_score").row(0, named=True)
    assert score["cases_needed"] is None and score["mde"] is None


@pytest.mark.slow
def test_plan_command_prints_cases_needed(tmp_path):
    from typer.testing import CliRunner

    from evalframe._private.data.demo import write_demo
    from evalframe.cli import app

    data = write_demo(tmp_path / "d", n_cases=30)
    result = CliRunner().invoke(app, ["plan", str(data), "--detect", "0.05", "--json"])
    assert result.exit_code == 0, result.output
    rows = {r["metric"]: r for r in json.loads(result.stdout)}
    # the newest run's clustered se: sigma_c = se * sqrt(G), n = ceil((2.801585 sigma_c / d)^2)
    summary = ef.score_tables(data, ef.Config())["run_summary"]
    newest = summary.sort("created_at").row(-1, named=True)
    for metric in ("pass_rate", "mean_score"):
        se, g = newest[f"{metric}_se"], newest["cases"]
        assert rows[metric]["run_id"] == newest["run_id"] and rows[metric]["cases"] == g
        assert close(rows[metric]["sigma_c"], se * math.sqrt(g))
        assert close(rows[metric]["mde"], 2.801585 * se)
        assert rows[metric]["cases_needed"] == math.ceil((2.801585 * se * math.sqrt(g) / 0.05) ** 2)
    human = CliRunner().invoke(app, ["plan", str(data), "--detect", "0.05"])
    assert human.exit_code == 0, human.output
    text = " ".join(human.output.split())
    assert (
        "cases needed to see a change of 0.05 (5.0 pts of pass rate, 0.050 of mean score) "
        f"(α 0.05, power 0.8) — run {newest['run_id']}"
    ) in text
    assert "%" not in text  # a change on 0-1 is points of pass rate, not a percent
    assert f"{100 * rows['pass_rate']['mde']:.1f} pts" in text
    assert f"{rows['mean_score']['mde']:.3f}" in text
    assert f"{rows['pass_rate']['cases_needed']:,}" in text
    bad = CliRunner().invoke(app, ["plan", str(data), "--run", "nope"])
    assert bad.exit_code == 2 and "known run ids" in bad.output


# --- the compare report: pairs too small to see the limits, slices that regressed ------------
def write_two_runs(path, rows):
    """A dataset folder with runs `a-base` and `b-cand` (consecutive by run_id) from rows
    (case_id, tag, baseline score, candidate score); one evaluator, one attempt."""
    path.mkdir(parents=True)
    scores, executions = [], []
    for case, tag, base, cand in rows:
        for run, score in (("a-base", base), ("b-cand", cand)):
            scores.append({"run_id": run, "case_id": case, "evaluator": "quality", "score": score})
            executions.append({"run_id": run, "case_id": case, "attempt": 0, "tags": [tag]})
    pl.DataFrame(scores).write_parquet(path / "scores.parquet")
    pl.DataFrame(executions).write_parquet(path / "executions.parquet")
    return path


SMALL_PAIR = [  # 6 noisy cases: the mean score moves by chance, and 6 cases cannot see 0.05
    (f"c{i}", "t", b, c)
    for i, (b, c) in enumerate(
        [(0.9, 0.95), (0.8, 0.6), (0.85, 0.9), (0.95, 0.7), (0.7, 0.8), (0.9, 0.85)]
    )
]


def test_too_small_names_the_limits_a_pair_cannot_see():
    from evalframe._private.stats.power import TooSmall, too_small

    limits = ef.config_from_dict({"compare": {"max_pass_rate_drop": 0.1}}).compare
    row = {"n_paired": 30, "mde_pass_rate": 0.25, "mde_mean_score": 0.05 + 1e-12}
    # 0.05 + 1e-12 does not exceed 0.05 (docs/scoring.md#boundaries EPS); a limit of 0 is never
    # checked
    assert too_small(row, limits) == [TooSmall("pass rate", "max_pass_rate_drop", 0.1, 0.25, 30)]
    assert too_small(row, ef.Config().compare) == []
    assert too_small({**row, "mde_mean_score": 0.06}, ef.Config().compare) == [
        TooSmall("mean score", "max_mean_score_drop", 0.05, 0.06, 30)
    ]
    assert too_small({**row, "mde_pass_rate": None}, limits) == []
    assert too_small(row, None) == []


@pytest.mark.slow
def test_compare_says_when_a_pair_is_too_small_to_see_the_limits(tmp_path):
    from typer.testing import CliRunner

    from evalframe.cli import app

    data = write_two_runs(tmp_path / "small", SMALL_PAIR)
    result = CliRunner().invoke(app, ["compare", str(data), "-o", str(tmp_path / "out")])
    assert result.exit_code in (0, 1), result.output
    rd = pl.read_parquet(tmp_path / "out" / "run_deltas.parquet").row(0, named=True)
    assert rd["mde_mean_score"] > 0.05
    text = " ".join(result.output.split())
    assert (
        f"too small: a-base → b-cand: 6 paired cases see a mean score change of "
        f"{rd['mde_mean_score']:.3f} or more (α 0.05, power 0.8), not the 0.050 of "
        "max_mean_score_drop" in text
    )
    assert "evalframe plan" in text
    # 200 cases that all move alike see 0.05 easily: no note
    big = [(f"c{i}", "t", 0.9, 0.9 - 0.001 * (i % 3)) for i in range(200)]
    data = write_two_runs(tmp_path / "big", big)
    result = CliRunner().invoke(app, ["compare", str(data), "-o", str(tmp_path / "out2")])
    assert result.exit_code in (0, 1), result.output
    assert "too small" not in result.output


def test_require_significance_is_a_sweepable_axis(tmp_path):
    # one case of ten flips pass -> fail: a 10-point drop, not significant on 10 cases
    data = write_two_runs(
        tmp_path / "d", [(f"c{i}", "t", 0.9, 0.5 if i == 0 else 0.9) for i in range(10)]
    )
    grid = ef.grid_from_dict({"grid": {"compare.require_significance": [False, True]}})
    assert [c.compare.require_significance for c in grid.configs] == [False, True]
    swept = ef.sweep(ef.load_dataset(data), grid)
    assert swept["sweep_compare_require_significance"].to_list() == [False, False, True, True]
    reasons = {
        c.compare.require_significance: ef.compare_tables(data, c)["run_deltas"].row(0, named=True)[
            "reasons"
        ]
        for c in grid.configs
    }
    assert reasons == {False: ["pass_rate_drop"], True: []}
