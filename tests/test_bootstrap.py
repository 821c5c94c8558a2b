"""Case bootstrap (docs/statistics.md#case-bootstrap): the generator, the weights and the statistics
against the plain-Python reference (tests/reference_bootstrap.py), ranks with ties, runs left out of
a replicate, all-errored runs, attempts, row order, engines, bad options."""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path
from typing import Any

import narwhals as nw
import polars as pl
import pytest
import reference_bootstrap as ref
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import evalframe as ef
from evalframe._private import schema as S
from evalframe._private.errors import UsageError
from evalframe._private.pipeline.bootstrap import bootstrap_frame, with_bootstrap
from evalframe._private.rules import bootstrap as B

TOL = 1e-12
"""pass_rate is a ratio of exact integer sums: float-exact up to the interpolation."""
FIXED_TOL = 1e-9
"""mean_score and pass@k sum ⌊x · 2^32⌋: within 2^-32 of the exact value."""


def _draws(ns: Any, frame: Any, seed: int) -> Any:
    """draw and weight of every (ordinal, replicate) row of `frame`, by the rule."""
    frame = B.apply(frame, B.case_key_stages(ns, seed, ns.col("o"), "ck"))
    frame = B.apply(frame, B.replicate_key_stages(ns, seed, ns.col("r"), "rk"))
    frame = B.apply(frame, B.draw_stages(ns, ns.col("ck"), ns.col("rk"), "d"))
    return frame.with_columns(B.poisson_weight(ns, ns.col("d")).alias("w"))


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, B.MAX_SEED),
    pairs=st.lists(st.tuples(st.integers(1, 2**31 - 1), st.integers(0, 10**6)), min_size=1),
)
def test_the_generator_and_the_weights_are_the_plain_python_integers(seed, pairs):
    frame = pl.DataFrame({"o": [o for o, _ in pairs], "r": [r for _, r in pairs]})
    out = _draws(pl, frame.lazy(), seed).collect()
    assert out["ck"].to_list() == [ref.case_key(seed, o) for o, _ in pairs]
    assert out["rk"].to_list() == [ref.replicate_key(seed, r) for _, r in pairs]
    assert out["d"].to_list() == [ref.draw(seed, o, r) for o, r in pairs]
    assert out["w"].to_list() == [ref.weight(ref.draw(seed, o, r)) for o, r in pairs]


def test_the_weights_at_every_threshold_and_the_extremes():
    draws = [0, 2**31 - 1] + [t + e for t in B.THRESHOLDS for e in (-1, 0, 1)]
    frame = pl.DataFrame({"d": draws})
    got = frame.select(B.poisson_weight(pl, pl.col("d")))["d"].to_list()
    assert got == [ref.weight(d) for d in draws]
    assert got[:2] == [0, len(B.THRESHOLDS)]


def test_the_poisson_table():
    assert 1 - B.POISSON_CDF[-1] < B.POISSON_TAIL <= 1 - B.POISSON_CDF[-2]
    full = [math.floor(Fraction(f) * 2**31) for f in ref.CDF]
    assert list(B.THRESHOLDS) == [t for t in full if t < 2**31 - 1]


def test_duckdb_draws_the_same_integers():
    duckdb = pytest.importorskip("duckdb")
    pairs = [(o, r) for o in (1, 2, 3, 99_999, 2**31 - 1) for r in (0, 1, 1999)]
    con = duckdb.connect()
    values = ", ".join(f"({o}::BIGINT, {r}::BIGINT)" for o, r in pairs)
    rel = con.sql(f"select * from (values {values}) t(o, r)")
    out = _draws(nw, nw.from_native(rel), 7).to_native().pl()
    got = dict(zip(zip(out["o"], out["r"], strict=True), out["w"], strict=True))
    assert got == {(o, r): ref.weight(ref.draw(7, o, r)) for o, r in pairs}


def test_the_weights_look_like_poisson_1():
    frame = pl.LazyFrame({"o": pl.int_range(1, 2001, eager=True)}).join(
        pl.LazyFrame({"r": pl.int_range(0, 100, eager=True)}), how="cross"
    )
    w = _draws(pl, frame, 0).collect()["w"]
    assert abs(w.mean() - 1) < 0.02 and abs(w.var() - 1) < 0.03  # 200 000 draws
    assert abs((w == 0).mean() - math.exp(-1)) < 0.01


# --- statistics ------------------------------------------------------------------------------
def _executions(rows: list[dict[str, Any]]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            S.CONFIG_ID: ["cfg"] * len(rows),
            S.RUN_ID: [r["run_id"] for r in rows],
            S.CASE_ID: [r["case_id"] for r in rows],
            S.PASSED: [r["passed"] for r in rows],
            S.SCORE: [r["score"] for r in rows],
        },
        schema={
            S.CONFIG_ID: pl.String,
            S.RUN_ID: pl.String,
            S.CASE_ID: pl.String,
            S.PASSED: pl.Boolean,
            S.SCORE: pl.Float64,
        },
    )


def _config(ks: list[int] = (), mean: float = 0.5, rate: float = 0.5) -> ef.Config:  # type: ignore[assignment]
    return ef.config_from_dict(
        {"attempts": {"k": list(ks)}, "run_gates": {"min_mean_score": mean, "min_pass_rate": rate}}
    )


def _check(rows, *, replicates, seed, ks=(), mean=0.5, rate=0.5, engine="polars"):
    got = bootstrap_frame(
        _executions(rows), _config(ks, mean, rate), replicates=replicates, seed=seed, engine=engine
    )
    want = ref.bootstrap(
        rows, replicates=replicates, seed=seed, ks=list(ks), min_mean_score=mean, min_pass_rate=rate
    )
    assert sorted(got[S.RUN_ID].to_list()) == sorted(want)
    assert got.columns == [S.CONFIG_ID, S.RUN_ID, *B.boot_columns(list(ks))]
    for row in got.iter_rows(named=True):
        exp = want[row[S.RUN_ID]]
        for name, value in exp.items():
            tol = (
                TOL if name.startswith(("pass_rate", "rank", "run_passed", "p_best")) else FIXED_TOL
            )
            if value is None:
                assert row[name] is None, (row[S.RUN_ID], name)
            else:
                assert row[name] == pytest.approx(float(value), abs=tol), (row[S.RUN_ID], name)
    return got, want


ROW = st.fixed_dictionaries(
    {
        "run_id": st.sampled_from(["a", "b", "c"]),
        "case_id": st.sampled_from(["c1", "c2", "c3", "c4", "é", "C0"]),
        "passed": st.booleans(),
        "score": st.one_of(st.none(), st.sampled_from([0.0, 0.25, 0.5, 0.8, 1.0]), st.floats(0, 1)),
    }
)


@pytest.mark.slow
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=st.lists(ROW, min_size=1, max_size=14), seed=st.integers(0, 50))
def test_the_statistics_are_their_definition(rows, seed):
    _check(rows, replicates=40, seed=seed, ks=[1, 2])


@pytest.mark.slow
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=st.lists(ROW, min_size=1, max_size=30), seed=st.integers(0, B.MAX_SEED))
def test_the_statistics_are_their_definition_many(rows, seed):
    _check(rows, replicates=60, seed=seed, ks=[1, 2, 3])


def _row(run: str, case: str, passed: bool, score: float | None = 0.5) -> dict[str, Any]:
    return {"run_id": run, "case_id": case, "passed": passed, "score": score}


def test_ties_share_the_best_rank_and_the_next_rank_skips():
    cases = [f"c{i}" for i in range(8)]
    rows = [_row(r, c, i % 2 == 0) for r in ("a", "b") for i, c in enumerate(cases)]
    # run c passes a subset of a's (and b's) cases: it ties them (all rank 1) in the
    # replicates where c2 and c6 both weigh 0, and ranks 3 (not 2) in every other one
    rows += [_row("c", c, i % 4 == 0) for i, c in enumerate(cases)]
    got, _ = _check(rows, replicates=50, seed=1)
    by = {r[S.RUN_ID]: r for r in got.iter_rows(named=True)}
    assert by["a"][B.P_BEST] == by["b"][B.P_BEST] == 1.0
    assert by["a"][B.RANK_LOW] == by["a"][B.RANK_HIGH] == 1.0
    order = ref.ordinals(cases)
    ties = sum(
        1
        for b in range(50)
        if all(ref.weight(ref.draw(1, order[c], b)) == 0 for c in ("c2", "c6"))
        and any(ref.weight(ref.draw(1, order[c], b)) > 0 for c in cases)
    )
    assert 0 < ties < 50
    assert by["c"][B.P_BEST] == ties / 50 and by["c"][B.RANK_HIGH] == 3.0


def test_a_run_of_total_weight_0_is_left_out_of_that_replicate():
    # run "solo" holds one case: in about a third of the replicates its weight is 0
    rows = [_row("solo", "only", True, 1.0)]
    rows += [_row("wide", f"c{i}", i < 5, 0.9) for i in range(10)]
    weights = [
        ref.weight(ref.draw(3, ref.ordinals(["only"] + [f"c{i}" for i in range(10)])["only"], b))
        for b in range(30)
    ]
    assert 0 in weights  # the case exercises the rule
    got, _ = _check(rows, replicates=30, seed=3)
    solo = got.filter(pl.col(S.RUN_ID) == "solo").row(0, named=True)
    assert solo[B.P_BEST] == 1.0 and solo[B.RUN_PASSED_PROB] == 1.0  # alone in its case set


def test_an_all_errored_run():
    rows = [_row("bad", f"c{i}", False, None) for i in range(5)]
    rows += [_row("good", f"c{i}", True, 1.0) for i in range(5)]
    got, _ = _check(rows, replicates=20, seed=0)
    bad = got.filter(pl.col(S.RUN_ID) == "bad").row(0, named=True)
    assert bad[B.boot_low(S.PASS_RATE)] == bad[B.boot_high(S.PASS_RATE)] == 0.0
    assert bad[B.boot_low(S.MEAN_SCORE)] is None and bad[B.boot_high(S.MEAN_SCORE)] is None
    assert bad[B.RUN_PASSED_PROB] == 0.0 and bad[B.P_BEST] == 0.0 and bad[B.RANK_LOW] == 2.0


def test_attempts_share_their_case_weight():
    rows = [
        _row(run, f"c{i}", (i + a) % 3 != 0, (i + a) / 10)
        for run in ("a", "b")
        for i in range(6)
        for a in range(1 + i % 3)
    ]
    _check(rows, replicates=40, seed=9, ks=[1, 2, 3])


@pytest.mark.slow
def test_shuffled_rows_give_identical_output():
    rows = [
        _row(r, f"c{i:02d}", (i * 7 + len(r)) % 3 > 0, ((i * 13) % 10) / 9)
        for r in ("x", "y", "z")
        for i in range(25)
    ]
    ex = _executions(rows)
    cfg = _config([1, 2])
    first = bootstrap_frame(ex, cfg, replicates=64, seed=5)
    for s in (1, 2):
        assert bootstrap_frame(
            ex.sample(fraction=1.0, shuffle=True, seed=s), cfg, replicates=64, seed=5
        ).equals(first)
    # chunks of replicates do not change the result
    assert bootstrap_frame(ex, cfg, replicates=64, seed=5, chunk=7).equals(first)


def test_seeds_differ_and_repeat():
    rows = [_row(r, f"c{i}", i % (2 + (r == "b")) == 0, 0.5) for r in ("a", "b") for i in range(30)]
    ex, cfg = _executions(rows), _config()
    one = bootstrap_frame(ex, cfg, replicates=50, seed=1)
    assert bootstrap_frame(ex, cfg, replicates=50, seed=1).equals(one)
    assert not bootstrap_frame(ex, cfg, replicates=50, seed=2).equals(one)


# --- through the pipeline and the engines ------------------------------------------------------
@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("boot") / "demo"
    ef.write_demo(path)
    return path


KS = {"attempts": {"k": [1, 2]}}


def _boot(demo: Path, engine: str) -> pl.DataFrame:
    cfg = ef.config_from_dict(KS)
    tables = ef.score_tables(demo, cfg, engine=engine)
    with_bootstrap(tables, cfg, replicates=60, seed=11, engine=engine)
    rs = tables[S.RUN_SUMMARY]
    return rs.select(S.RUN_ID, *B.boot_columns([1, 2])).sort(S.RUN_ID)


@pytest.mark.slow
def test_run_summary_gets_the_columns_before_the_runs_metadata(demo):
    cfg = ef.config_from_dict(KS)
    tables = ef.score_tables(demo, cfg)
    before = tables[S.RUN_SUMMARY].columns
    with_bootstrap(tables, cfg, replicates=20, seed=0)
    after = tables[S.RUN_SUMMARY].columns
    boot = B.boot_columns([1, 2])
    assert [c for c in after if c not in boot] == before
    assert after.index(boot[0]) == before.index(S.CREATED_AT)
    rs = tables[S.RUN_SUMMARY]
    assert rs.select((pl.col(B.boot_low(S.PASS_RATE)) <= pl.col(S.PASS_RATE) + 0.2).all()).item()
    with_bootstrap(tables, cfg, replicates=20, seed=0)  # again: replaced, not repeated
    assert tables[S.RUN_SUMMARY].columns == after


@pytest.mark.slow
def test_duckdb_gives_the_polars_columns(demo):
    assert _boot(demo, "duckdb").equals(_boot(demo, "polars"))


@pytest.mark.slow
@pytest.mark.spark
def test_spark_gives_the_polars_columns(spark, demo):
    """On the shared local[2] session (tests/conftest.py `spark`, tuned for tiny data)."""
    assert _boot(demo, "spark").equals(_boot(demo, "polars"))


@pytest.mark.parametrize(
    ("replicates", "seed"),
    [
        (0, 0),
        (-3, 0),
        (B.MAX_REPLICATES + 1, 0),
        (1.5, 0),
        (True, 0),
        (10, -1),
        (10, 2**31),
        (10, "x"),
    ],
)
def test_bad_replicates_or_seed_are_refused(demo, replicates, seed):
    with pytest.raises(UsageError):
        bootstrap_frame(
            _executions([_row("a", "c", True)]), _config(), replicates=replicates, seed=seed
        )


# --- command line, report, docs ------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize(
    "args",
    [
        ["--bootstrap", "0"],
        ["--bootstrap", "-5"],
        ["--bootstrap", "x"],
        ["--bootstrap", "10", "--seed", "-1"],
        ["--bootstrap", "10", "--seed", str(2**31)],
    ],
)
@pytest.mark.parametrize("command", ["score", "compare", "report"])
def test_bad_bootstrap_options_exit_2(demo, tmp_path, command, args):
    from typer.testing import CliRunner

    from evalframe.cli import app

    out = ["--out", str(tmp_path / ("r.html" if command == "report" else "o"))]
    result = CliRunner().invoke(app, [command, str(demo), *args, *out])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output


@pytest.mark.slow
def test_score_and_compare_print_and_write_the_columns(demo, tmp_path):
    from typer.testing import CliRunner

    from evalframe.cli import app

    runner = CliRunner()
    args = ["--bootstrap", "30", "--seed", "2", "--out", str(tmp_path / "s")]
    result = runner.invoke(app, ["score", str(demo), *args], env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    assert "boot 95%" in result.output and "rank" in result.output
    written = pl.read_parquet(tmp_path / "s" / f"{S.RUN_SUMMARY}.parquet")
    assert set(B.boot_columns()) <= set(written.columns)
    # the same numbers through the Python API
    want = ef.score_tables(demo, bootstrap=30, seed=2)[S.RUN_SUMMARY]
    assert written.select(B.boot_columns()).equals(want.select(B.boot_columns()))
    args = ["--bootstrap", "30", "--seed", "2", "--out", str(tmp_path / "c")]
    result = runner.invoke(app, ["compare", str(demo), *args], env={"COLUMNS": "250"})
    assert result.exit_code in (0, 1), result.output
    assert "runs (case bootstrap)" in result.output and "boot 95%" in result.output
    plain = runner.invoke(app, ["score", str(demo), "--out", str(tmp_path / "p")])
    assert "boot 95%" not in plain.output


@pytest.mark.slow
def test_the_report_shows_rank_bands_only_with_bootstrap(demo, tmp_path):
    from typer.testing import CliRunner

    from evalframe.cli import app

    runner = CliRunner()
    base = ["report", str(demo), "--no-what-if", "--out"]
    result = runner.invoke(app, [*base, str(tmp_path / "b.html"), "--bootstrap", "20"])
    assert result.exit_code == 0, result.output
    page = (tmp_path / "b.html").read_text(encoding="utf-8")
    assert "chart-rank_bands" in page and "p best" in page
    result = runner.invoke(app, [*base, str(tmp_path / "p.html")])
    assert "chart-rank_bands" not in (tmp_path / "p.html").read_text(encoding="utf-8")


def test_the_columns_are_documented():
    docs = Path(__file__).resolve().parent.parent / "docs"
    tables = (docs / "tables.md").read_text(encoding="utf-8")
    section = tables.split("## run_summary", 1)[1].split("\n## ", 1)[0]
    templates = [
        c.replace("pass_at_1", "pass_at_<k>").replace("pass_all_1", "pass_all_<k>")
        for c in B.boot_columns([1])
    ]
    missing = [c for c in templates if f"`{c}`" not in section]
    assert not missing, f"docs/tables.md ## run_summary does not mention {missing}"
    statistics = (docs / "statistics.md").read_text(encoding="utf-8")
    assert "## Case bootstrap" in statistics
    for a, c in B.ROUND_CONSTANTS:  # the generator as the page writes it
        assert f"{a}, {c}" in statistics


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_no_executions_give_no_rows(engine):
    out = bootstrap_frame(_executions([]), _config([2]), replicates=5, seed=0, engine=engine)
    assert out.height == 0 and out.columns == [S.CONFIG_ID, S.RUN_ID, *B.boot_columns([2])]


# --- the wide, packed replicate sums ------------------------------------------------------------
def test_packed_words_never_carry_and_unpack_exactly():
    from evalframe._private.summaries import bootstrap as SB

    totals = {"a": 1, "b": 2**40, "c": 0, "d": 2**55, "e": 123_456, "f": 2**47}
    words = SB.packing(totals)
    assert sorted(c for w in words for c, _, _ in w) == sorted(totals)
    for word in words:
        assert sum(b for _, _, b in word) <= SB.WORD_BITS or len(word) == 1
        assert len(word) == 1 or all(b <= SB.SHARED_BITS for _, _, b in word)
    # the largest sums a replicate can reach: every case at the largest weight
    wide = pl.LazyFrame(
        {"_cfg": [1, 1], "_case_key": [5, 6], **{c: [t, 0] for c, t in totals.items()}},
        schema_overrides={c: pl.Int64 for c in totals},
    )
    packed = SB.pack(nw.from_native(wide), words).collect().to_native()
    sums = packed.select(
        pl.lit(1, dtype=pl.Int64).alias("_cfg"),
        pl.lit(0, dtype=pl.Int64).alias(SB.REP),
        *(pl.col(c) * B.MAX_WEIGHT for c in packed.columns if c.startswith("_word")),
    )
    out = SB.unpack(nw.from_native(sums.lazy()), words).collect().to_native()
    assert out.row(0, named=True) == {
        "_cfg": 1,
        SB.REP: 0,
        **{c: t * B.MAX_WEIGHT for c, t in totals.items()},
    }


def test_configs_are_bootstrapped_apart():
    rows = [_row(r, f"c{i}", (i + len(r)) % 3 > 0, i / 10) for r in ("a", "b") for i in range(9)]
    one = _executions(rows)
    two = _executions(rows[:10]).with_columns(pl.lit("other").alias(S.CONFIG_ID))
    cfg = _config([1])
    both = bootstrap_frame(pl.concat([one, two]), cfg, replicates=30, seed=4)
    alone = [bootstrap_frame(f, cfg, replicates=30, seed=4) for f in (one, two)]
    assert both.equals(pl.concat(alone).sort(both.columns[:2]))


def test_equal_columns_are_summed_once():
    from evalframe._private.summaries import bootstrap as SB

    wide = pl.LazyFrame({"a": [1, 1, 0], "b": [1, 1, 0], "c": [0, 1, 1], "d": [1, 1, 0]})
    totals = {"a": 2, "b": 2, "c": 2, "d": 2}
    assert SB.duplicates(nw.from_native(wide), totals) == {"b": "a", "d": "a"}
    assert SB.duplicates(nw.from_native(wide), {"a": 2, "c": 3}) == {}
