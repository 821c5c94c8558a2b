"""Three-outcome decisions (docs/compare.md#decisions): `run_deltas.decision` / `decision_reasons`,
the "more paired cases" count, and `evalframe compare --decide`.

- the rule (rules/decide.py) equals the exact reference (tests/reference_decide.py) on
  intervals drawn around the margin: low end exactly −margin, within and just beyond EPS,
  null intervals; the generated DuckDB macros answer like it;
- literal pairs: latency fail, the order of the reasons, margins from the config;
- the engines agree (polars and DuckDB here, Spark in the slow lane);
- the count of paired cases that settles an open interval equals the exact reference and
  does settle it;
- the CLI's exit codes 0 / 1 / 3 with --decide on literal datasets.
"""

from __future__ import annotations

import functools
import itertools
import math
from pathlib import Path

import duckdb
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import evalframe as ef
from evalframe._private import schema as S
from evalframe._private.compare.compare import compare
from evalframe._private.engines.duckdb.sql import SCALAR_MACROS, sql_text
from evalframe._private.rules import decide as rules_decide
from evalframe._private.rules.constants import EPS, Z_95
from tests import reference_decide as ref

MARGINS = st.sampled_from([0.0, 0.01, 0.05, 0.1, 0.25])


@st.composite
def interval(draw, margin: float):
    """(ci_low, ci_high) around −margin: ends on −margin exactly, on −margin ∓ EPS, a few
    ulps either side of −margin − EPS, anywhere, or null (fewer than two cases)."""
    if draw(st.integers(0, 9)) == 0:
        return None, None
    edge = -margin - EPS
    near = [
        -margin,
        edge,
        math.nextafter(edge, -math.inf),
        math.nextafter(edge, math.inf),
        -margin - 2 * EPS,
        -margin + EPS,
        -margin - EPS / 2,
    ]
    ends = st.one_of(st.sampled_from(near), st.floats(-1.0, 1.0))
    a, b = draw(ends), draw(ends)
    return min(a, b), max(a, b)


def _polars_parts(rows: list[tuple]) -> list[str]:
    frame = pl.DataFrame(rows, schema={c: pl.Float64 for c in ("lo", "hi", "m")}, orient="row")
    expr = rules_decide.part_decision(pl, pl.col("lo"), pl.col("hi"), pl.col("m"))
    return frame.select(expr.alias("d"))["d"].to_list()


@functools.cache
def _duckdb() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    for name in SCALAR_MACROS:
        con.execute(sql_text(name))
    return con


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.data())
def test_part_equals_the_exact_reference_at_the_margin(data):
    rows = []
    for _ in range(data.draw(st.integers(1, 8))):
        m = data.draw(MARGINS)
        lo, hi = data.draw(interval(m))
        rows.append((lo, hi, m))
    want = [ref.part(lo, hi, m) for lo, hi, m in rows]
    assert _polars_parts(rows) == want
    con = _duckdb().cursor()
    con.register(
        "t", pl.DataFrame(rows, schema=dict.fromkeys(("lo", "hi", "m"), pl.Float64), orient="row")
    )
    got = [r[0] for r in con.execute("select decide_part(lo, hi, m) from t").fetchall()]
    assert got == want


def test_part_literal_ties():
    m = 0.05
    rows = [  # (low, high) -> decision
        ((-0.05, 0.02), "pass"),  # low exactly −margin
        ((-0.05 - EPS, 0.02), "pass"),  # low on −margin − EPS: meets
        ((-0.05 - 2 * EPS, 0.02), "inconclusive"),  # just beyond EPS
        ((-0.2, -0.05), "inconclusive"),  # high exactly −margin: not below it
        ((-0.2, -0.05 - EPS), "inconclusive"),  # high on −margin − EPS: not below
        ((-0.2, -0.05 - 2 * EPS), "fail"),
        ((None, None), "inconclusive"),  # no interval (n < 2)
        ((0.0, 0.0), "pass"),  # se 0: a point within the margin
        ((-0.3, -0.3), "fail"),
    ]
    got = _polars_parts([(lo, hi, m) for (lo, hi), _ in rows])
    assert got == [d for _, d in rows]
    assert [ref.part(lo, hi, m) for (lo, hi), _ in rows] == [d for _, d in rows]


def test_a_margin_of_zero_holds_the_interval_to_zero():
    assert _polars_parts([(0.0, 0.1, 0.0), (-0.01, 0.1, 0.0), (-0.2, -0.01, 0.0)]) == [
        "pass",
        "inconclusive",
        "fail",
    ]


def test_pair_decision_every_combination():
    values = list(S.DECISION_VALUES)
    combos = list(itertools.product(values, values, values))
    frame = pl.DataFrame(combos, schema=["p", "m", "l"], orient="row")
    got = frame.select(
        rules_decide.pair_decision(pl, pl.col("p"), pl.col("m"), pl.col("l")).alias("d")
    )["d"].to_list()
    want = [
        "fail" if "fail" in c else "inconclusive" if "inconclusive" in c else "pass" for c in combos
    ]
    assert got == want
    con = _duckdb()
    sql = [con.execute("select decide_pair(?, ?, ?)", list(c)).fetchone()[0] for c in combos]
    assert sql == want


def test_latency_part_literal():
    rows = [  # baseline, candidate, limit -> part
        (100.0, 120.0, 0.2, "pass"),  # +20 %: does not exceed 20 %
        (100.0, 121.0, 0.2, "fail"),
        (0.0, 500.0, 0.2, "pass"),  # no positive baseline: the rule does not apply
        (None, 500.0, 0.2, "pass"),
        (100.0, None, 0.2, "pass"),
    ]
    frame = pl.DataFrame(
        [r[:3] for r in rows], schema={c: pl.Float64 for c in ("b", "c", "lim")}, orient="row"
    )
    got = frame.select(
        rules_decide.latency_decision(pl, pl.col("b"), pl.col("c"), pl.col("lim")).alias("d")
    )["d"].to_list()
    assert got == [r[3] for r in rows] == [ref.latency_part(*r[:3]) for r in rows]
    con = _duckdb()
    sql = [con.execute("select decide_latency(?, ?, ?)", list(r[:3])).fetchone()[0] for r in rows]
    assert sql == got


# --- whole pairs ----------------------------------------------------------------------------
CASE_SCHEMA = {
    "config_id": pl.String,
    "run_id": pl.String,
    "case_id": pl.String,
    "attempts": pl.UInt32,
    "errored": pl.UInt32,
    "scored": pl.UInt32,
    "unscored": pl.UInt32,
    "score": pl.Float64,
    "n_passed": pl.UInt32,
    "pass_rate": pl.Float64,
    "passed": pl.Boolean,
    "flaky": pl.Boolean,
    "latency_mean": pl.Float64,
    "cost_usd": pl.Float64,
}


def _pair(cases: list[tuple], cfg: ef.Config, latency: tuple = (None, None)) -> dict:
    """The run_deltas row of b → c (see `pair_run_deltas`)."""
    return pair_run_deltas(cases, cfg, latency).row(0, named=True)


def pair_run_deltas(
    cases: list[tuple], cfg: ef.Config, latency: tuple = (None, None)
) -> pl.DataFrame:
    """run_deltas of b → c from (baseline passed, candidate passed, baseline score,
    candidate score) per case, run latency means `latency` (tests/test_stats.py too)."""
    rows = []
    for i, (bp, cp, bs, cs) in enumerate(cases):
        for run, p, s in (("b", bp, bs), ("c", cp, cs)):
            rows.append(
                {
                    "config_id": cfg.config_id,
                    "run_id": run,
                    "case_id": f"c{i}",
                    "attempts": 1,
                    "errored": 0,
                    "scored": 1,
                    "unscored": 0,
                    "score": s,
                    "n_passed": int(p),
                    "pass_rate": float(p),
                    "passed": p,
                    "flaky": False,
                    "latency_mean": None,
                    "cost_usd": None,
                }
            )
    cs = pl.DataFrame(rows, schema=CASE_SCHEMA)
    rs = (
        cs.group_by("config_id", "run_id")
        .agg(
            pl.col("passed").cast(pl.Float64).mean().alias("pass_rate"),
            pl.col("score").mean().alias("mean_score"),
            pl.lit(None, dtype=pl.Float64).alias("latency_p95"),
            pl.lit(None, dtype=pl.Float64).alias("cost_usd"),
        )
        .with_columns(
            pl.when(pl.col("run_id") == "b")
            .then(pl.lit(latency[0], dtype=pl.Float64))
            .otherwise(pl.lit(latency[1], dtype=pl.Float64))
            .alias("latency_mean")
        )
    )
    out = compare(cs.lazy(), [("b", "c")], cfg, run_summary=rs.lazy())
    return out["run_deltas"].collect()


SAME = [(True, True, 0.9, 0.9)] * 10
NOISY = [  # the pass rate and the mean score move, by chance, on 6 cases
    (True, True, 0.9, 0.95),
    (True, False, 0.8, 0.6),
    (True, True, 0.85, 0.9),
    (True, False, 0.95, 0.7),
    (False, True, 0.7, 0.8),
    (True, True, 0.9, 0.88),
]


def test_pair_literal_decisions_and_reasons():
    cfg = ef.Config()
    same = _pair(SAME, cfg)
    assert (same["decision"], same["decision_reasons"]) == ("pass", [])
    slower = _pair(SAME, cfg, latency=(100.0, 150.0))
    assert (slower["decision"], slower["decision_reasons"]) == ("fail", ["latency"])
    noisy = _pair(NOISY, cfg)
    assert (noisy["decision"], noisy["decision_reasons"]) == (
        "inconclusive",
        ["pass_rate", "mean_score"],
    )
    # latency fails and both intervals are open: fail, the parts in the documented order
    both = _pair(NOISY, cfg, latency=(100.0, 150.0))
    assert (both["decision"], both["decision_reasons"]) == (
        "fail",
        ["pass_rate", "mean_score", "latency"],
    )
    worse = _pair([(True, False, 0.9, 0.5)] * 10, cfg)
    assert (worse["decision"], worse["decision_reasons"]) == ("fail", ["pass_rate", "mean_score"])
    for row in (same, slower, noisy, both, worse):
        want = ref.decide(row, 0.05, 0.05, cfg.compare.max_latency_increase)
        assert (row["decision"], row["decision_reasons"]) == tuple(want.values())


def test_the_margins_come_from_the_config():
    # one mean-score delta of −0.03 on every case: a point interval at −0.03
    cases = [(True, True, 0.9, 0.87)] * 10
    lax = _pair(cases, ef.config_from_dict({"decide": {"mean_score_margin": 0.05}}))
    strict = _pair(cases, ef.config_from_dict({"decide": {"mean_score_margin": 0.02}}))
    assert (lax["decision"], strict["decision"]) == ("pass", "fail")
    assert strict["decision_reasons"] == ["mean_score"]


def test_grid_configs_are_compared_under_their_own_margins():
    """decide.* are sweep axes: each grid config keeps its margins, its own config_id, and
    compare applies each config's margins to its rows (docs/sweep.md)."""
    grid = ef.grid_from_dict({"grid": {"decide.mean_score_margin": [0.02, 0.05]}})
    configs = list(grid.configs)
    assert [c.decide.mean_score_margin for c in configs] == [0.02, 0.05]
    assert len({c.config_id for c in configs}) == 2
    rows = []
    for cfg in configs:
        for i in range(10):
            for run, s in (("b", 0.9), ("c", 0.87)):
                rows.append(
                    (cfg.config_id, run, f"c{i}", 1, 0, 1, 0, s, 1, 1.0, True, False, None, None)
                )
    cs = pl.DataFrame(rows, schema=CASE_SCHEMA, orient="row")
    rs = cs.group_by("config_id", "run_id").agg(
        pl.col("passed").cast(pl.Float64).mean().alias("pass_rate"),
        pl.col("score").mean().alias("mean_score"),
        *(pl.lit(None, dtype=pl.Float64).alias(c) for c in ("latency_mean", "latency_p95")),
        pl.lit(None, dtype=pl.Float64).alias("cost_usd"),
    )
    rd = compare(cs.lazy(), [("b", "c")], configs, run_summary=rs.lazy())["run_deltas"].collect()
    got = dict(zip(rd["config_id"], rd["decision"], strict=True))
    assert got == {configs[0].config_id: "fail", configs[1].config_id: "pass"}


# --- how many more cases settle an open interval ------------------------------------------
def _settle(rows: list[tuple]) -> list[int | None]:
    schema = {"n": pl.Int64, "d": pl.Float64, "se": pl.Float64, "m": pl.Float64}
    frame = pl.DataFrame(rows, schema=schema, orient="row")
    expr = rules_decide.cases_to_settle(pl, pl.col("n"), pl.col("d"), pl.col("se"), pl.col("m"))
    return [None if v is None else int(v) for v in frame.select(expr.alias("x"))["x"]]


def test_cases_to_settle_literal():
    # n = 10, d = −0.02, se = 0.02, m = 0.05: half-width 1.96·0.02 = 0.0392 must shrink to
    # |d + m| = 0.03: n' = ⌈10 · (0.0392 / 0.03)²⌉ = ⌈17.07⌉ = 18
    rows = [
        (10, -0.02, 0.02, 0.05),
        (10, -0.08, 0.02, 0.05),  # d below −m: the interval would clear it from below
        (10, -0.05, 0.02, 0.05),  # the estimate sits on −m: no n settles it
        (1, -0.02, None, 0.05),  # no interval
        (10, -0.02, 0.0, 0.05),  # a point: settled already
        (10, 0.2, 0.01, 0.05),  # already clear: never fewer than n
    ]
    assert _settle(rows) == [18, 18, None, None, None, 10]
    assert [ref.cases_to_settle(*r) for r in rows] == [18, 18, None, None, None, 10]
    # at 18 cases (same estimate and SD) the interval clears −m: the part passes
    se18 = 0.02 * math.sqrt(10 / 18)
    assert ref.part(-0.02 - Z_95 * se18, -0.02 + Z_95 * se18, 0.05) == "pass"
    se17 = 0.02 * math.sqrt(10 / 17)
    assert ref.part(-0.02 - Z_95 * se17, -0.02 + Z_95 * se17, 0.05) == "inconclusive"


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(
    st.integers(2, 5000),
    st.floats(-1, 1),
    st.floats(1e-4, 0.5),
    MARGINS,
)
def test_cases_to_settle_equals_the_exact_reference(n, d, se, m):
    want = ref.cases_to_settle(n, d, se, m)
    (got,) = _settle([(n, d, se, m)])
    if want is None:
        assert got is None
        return
    exact = n * (Z_95 * se / abs(d + m)) ** 2
    assert got is not None
    if exact < 2**40 and abs(exact - round(exact)) > 1e-6 * max(1.0, exact):
        assert got == want  # float noise only next to an integer, or beyond float's ulps
    else:
        assert abs(got - want) <= max(1, 1e-12 * want)
    # the count settles it: at `want` cases the half-width is at most |d + m|
    assert Z_95 * se * math.sqrt(n / want) <= abs(d + m) * (1 + 1e-12)


def test_decision_parts_table_names_the_open_limit_and_the_cases():
    from evalframe._private.stats.power import decision_part_text, decision_parts_table

    cfg = ef.Config()
    row = _pair(NOISY, cfg, latency=(100.0, 150.0))
    parts = decision_parts_table(pl.DataFrame([row]), cfg.decide, cfg.compare)
    assert parts["part"].to_list() == ["pass_rate", "mean_score", "latency"]
    assert parts["part_decision"].to_list() == ["inconclusive", "inconclusive", "fail"]
    more = parts["more_cases"].to_list()
    want = ref.cases_to_settle(6, row["mean_delta"], row["mean_delta_se"], 0.05)
    assert more[1] == want - 6 and more[2] is None
    texts = [decision_part_text(p) for p in parts.iter_rows(named=True)]
    assert "decide.pass_rate_margin" in texts[0] and "more paired cases" in texts[0]
    assert "decide.mean_score_margin" in texts[1] and f"about {more[1]} more" in texts[1]
    assert texts[2].startswith("latency: latency_mean rose 50 %")


# --- engines ---------------------------------------------------------------------------------
def _write(path: Path, rows: list[tuple], latency: tuple = (None, None)) -> Path:
    """A dataset of runs a-base and b-cand from (case, baseline score, candidate score)."""
    path.mkdir(parents=True)
    scores, executions = [], []
    for case, base, cand in rows:
        for run, score, lat in (("a-base", base, latency[0]), ("b-cand", cand, latency[1])):
            scores.append({"run_id": run, "case_id": case, "evaluator": "quality", "score": score})
            executions.append(
                {"run_id": run, "case_id": case, "attempt": 0, "status": "ok", "latency_ms": lat}
            )
    pl.DataFrame(scores).write_parquet(path / "scores.parquet")
    pl.DataFrame(
        executions,
        schema={
            "run_id": pl.String,
            "case_id": pl.String,
            "attempt": pl.Int64,
            "status": pl.String,
            "latency_ms": pl.Float64,
        },
    ).write_parquet(path / "executions.parquet")
    return path


SAME_ROWS = [(f"c{i}", 0.9, 0.9) for i in range(10)]
WORSE_ROWS = [(f"c{i}", 0.9, 0.5) for i in range(10)]
NOISY_ROWS = [(f"c{i}", b, c) for i, (_bp, _cp, b, c) in enumerate(NOISY)]


@pytest.fixture(scope="module")
def datasets(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("decide")
    return {
        "pass": _write(root / "same", SAME_ROWS),
        "fail": _write(root / "worse", WORSE_ROWS),
        "inconclusive": _write(root / "noisy", NOISY_ROWS),
        "slower": _write(root / "slower", SAME_ROWS, latency=(100.0, 150.0)),
    }


DECISION_COLUMNS = [S.DECISION, S.DECISION_REASONS]


@pytest.mark.slow
@pytest.mark.parametrize("margin", [0.0, 0.05, 0.5])
def test_polars_and_duckdb_decide_alike(datasets, margin):
    cfg = ef.config_from_dict({"decide": {"pass_rate_margin": margin, "mean_score_margin": margin}})
    for name, path in datasets.items():
        got = {
            engine: ef.compare_tables(path, cfg, engine=engine)[S.RUN_DELTAS].select(
                DECISION_COLUMNS
            )
            for engine in ("polars", "duckdb")
        }
        assert got["polars"].equals(got["duckdb"]), (name, got)
    base = ef.compare_tables(datasets["inconclusive"], ef.Config())[S.RUN_DELTAS]
    assert base[S.DECISION].to_list() == ["inconclusive"]


def test_the_literal_datasets_decide_as_named(datasets):
    for name, path in datasets.items():
        rd = ef.compare_tables(path, ef.Config())[S.RUN_DELTAS]
        want = "fail" if name == "slower" else name
        assert rd[S.DECISION].to_list() == [want], name


@pytest.mark.spark
@pytest.mark.slow
def test_spark_decides_like_polars(datasets, spark):
    cfg = ef.config_from_dict({"decide": {"pass_rate_margin": 0.1, "mean_score_margin": 0.02}})
    for name, path in datasets.items():
        want = ef.compare_tables(path, cfg)[S.RUN_DELTAS].select(DECISION_COLUMNS)
        got = ef.compare_tables(path, cfg, engine="spark")[S.RUN_DELTAS].select(DECISION_COLUMNS)
        assert got.equals(want), name


# --- the exit code ---------------------------------------------------------------------------
def test_decide_exit_code_literal():
    from evalframe.cli.compare import decide_exit_code

    def frame(values: list[str]) -> pl.DataFrame:
        return pl.DataFrame({S.DECISION: values}, schema={S.DECISION: pl.String})

    assert decide_exit_code(frame([])) == 0
    assert decide_exit_code(frame(["pass", "pass"])) == 0
    assert decide_exit_code(frame(["pass", "inconclusive"])) == 3
    assert decide_exit_code(frame(["inconclusive", "fail", "pass"])) == 1


# --- evalframe compare --decide ----------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "decided", "undecided"),
    [("pass", 0, 0), ("fail", 1, 1), ("inconclusive", 3, 1), ("slower", 1, 1)],
)
def test_compare_decide_exit_codes(datasets, tmp_path, name, decided, undecided):
    from typer.testing import CliRunner

    from evalframe.cli import app

    path = str(datasets[name])
    runner = CliRunner()
    plain = runner.invoke(app, ["compare", path, "-o", str(tmp_path / "a")])
    assert plain.exit_code == undecided, plain.output  # without --decide: unchanged
    assert "decisions (non-inferiority" not in plain.output
    result = runner.invoke(app, ["compare", path, "--decide", "-o", str(tmp_path / "b")])
    assert result.exit_code == decided, result.output
    want = "fail" if name == "slower" else name
    assert f"  {want}  a-base → b-cand" in result.output
    as_json = runner.invoke(app, ["compare", path, "--decide", "--json", "-o", str(tmp_path / "c")])
    assert as_json.exit_code == decided, as_json.output


@pytest.mark.slow
def test_compare_decide_says_what_left_the_pair_open(datasets, tmp_path):
    from typer.testing import CliRunner

    from evalframe.cli import app

    result = CliRunner().invoke(
        app, ["compare", str(datasets["inconclusive"]), "--decide", "-o", str(tmp_path / "o")]
    )
    assert result.exit_code == 3, result.output
    text = " ".join(result.output.split())
    assert "pass rate: the 95 % interval" in text and "spans −decide.pass_rate_margin" in text
    assert "mean score: the 95 % interval" in text
    assert "more paired case" in text and "would settle it" in text
    slower = CliRunner().invoke(
        app, ["compare", str(datasets["slower"]), "--decide", "-o", str(tmp_path / "s")]
    )
    assert "latency: latency_mean rose 50 %, beyond compare.max_latency_increase = 20 %" in (
        " ".join(slower.output.split())
    )


def test_decide_margins_are_sweep_axes_and_each_grid_config_decides_by_its_own(tmp_path):
    """docs/sweep.md: decide.* change no sweep number; they are axes so that a grid's
    configs can be compared under each margin."""
    path = _write(tmp_path / "shifted", [(f"c{i}", 0.9, 0.87) for i in range(10)])
    grid = ef.grid_from_dict({"grid": {"decide.mean_score_margin": [0.02, 0.05]}})
    swept = ef.sweep(ef.load_dataset(path), grid)
    assert sorted(swept["sweep_decide_mean_score_margin"].to_list()) == [0.02, 0.02, 0.05, 0.05]
    assert swept.filter(pl.col("sweep_decide_mean_score_margin") == 0.02)["mean_score"].equals(
        swept.filter(pl.col("sweep_decide_mean_score_margin") == 0.05)["mean_score"]
    )
    decided = {
        c.decide.mean_score_margin: ef.compare_tables(path, c)[S.RUN_DELTAS].row(0, named=True)
        for c in grid.configs
    }
    assert {m: (r[S.DECISION], r[S.DECISION_REASONS]) for m, r in decided.items()} == {
        0.02: ("fail", ["mean_score"]),
        0.05: ("pass", []),
    }
