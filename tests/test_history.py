"""History across runs (docs/history.md): series_trend and case_history, their rules
(rules/history.py), the engines, the `trend` / `flaky` commands and the report section.

Exact references: tests/reference_history.py (fractions; Φ from math.erf)."""

from __future__ import annotations

import json
import math
import random
import re
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalframe._private import schema as S
from evalframe._private.rules import history as rules
from evalframe._private.rules.constants import EPS
from evalframe._private.summaries.history import case_history, series_trend
from tests import reference_history as ref

DOCS = Path(__file__).resolve().parent.parent / "docs"
T0 = datetime(2026, 10, 1, 9)


def _runs(rows: list[dict[str, Any]]) -> pl.DataFrame:
    """A run_summary of config "c" (with the runs table's created_at and extra columns)."""
    cols = {
        S.CONFIG_ID: pl.String,
        S.RUN_ID: pl.String,
        S.CREATED_AT: pl.Datetime("us"),
        S.PASS_RATE: pl.Float64,
        S.PASS_RATE_SE: pl.Float64,
        S.MEAN_SCORE: pl.Float64,
        S.MEAN_SCORE_SE: pl.Float64,
        "model": pl.String,
    }
    full = [{S.CONFIG_ID: "c", **r} for r in rows]
    return pl.DataFrame(full, schema=cols)


def _cases(rows: dict[tuple[str, str], bool | None]) -> pl.DataFrame:
    return pl.DataFrame(
        [{S.CONFIG_ID: "c", S.RUN_ID: r, S.CASE_ID: c, S.PASSED: p} for (r, c), p in rows.items()],
        schema={
            S.CONFIG_ID: pl.String,
            S.RUN_ID: pl.String,
            S.CASE_ID: pl.String,
            S.PASSED: pl.Boolean,
        },
    )


def _run(i: int, pr: float | None, se: float | None = None, **kw: Any) -> dict[str, Any]:
    return {
        S.RUN_ID: f"r{i}",
        S.CREATED_AT: T0 + timedelta(days=i),
        S.PASS_RATE: pr,
        S.PASS_RATE_SE: se,
        S.MEAN_SCORE: pr,
        S.MEAN_SCORE_SE: se,
        **kw,
    }


def _trend(rows: list[dict[str, Any]], **kw: Any) -> list[dict[str, Any]]:
    return series_trend(_runs(rows), **kw).collect().to_dicts()


def _close(a: Any, b: Any, rel: float = 1e-9) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(float(a), float(b), rel_tol=rel, abs_tol=1e-12)


# --- trend ------------------------------------------------------------------------------
def test_unweighted_slope_by_hand() -> None:
    # x 0..3, y .5 .6 .6 .8: x̄ 1.5, ȳ .625, Σ(x−x̄)(y−ȳ) = .45, Σ(x−x̄)² = 5 → slope .09
    [row] = _trend([_run(i, y) for i, y in enumerate([0.5, 0.6, 0.6, 0.8])])
    assert row[S.N_RUNS] == 4
    assert row[S.PASS_RATE_SLOPE] == pytest.approx(0.09, rel=1e-12)
    # residuals .01 .02 −.07 .04: Σr² = .007; se = sqrt(.007 / (4 − 2) / 5)
    assert row[S.PASS_RATE_SLOPE_SE] == pytest.approx(math.sqrt(0.0007), rel=1e-9)
    se = row[S.PASS_RATE_SLOPE_SE]
    assert row[S.PASS_RATE_SLOPE_CI_LOW] == pytest.approx(0.09 - 1.96 * se, rel=1e-12)
    assert row[S.PASS_RATE_SLOPE_CI_HIGH] == pytest.approx(0.09 + 1.96 * se, rel=1e-12)
    assert row[S.PASS_RATE_DEGRADING] is False
    assert row[S.SERIES] is None and row[S.SERIES_COLUMN] is None
    # no run has a usable se: the change point is null (the trend used weights 1)
    assert row[S.CHANGE_RUN_ID] is None and row[S.CHANGE_Z] is None and row[S.CHANGE_P] is None


def test_weighted_slope_fills_missing_se_with_the_median_weight() -> None:
    # se .1 (w 100), None, .05 (w 400), 0, .2 (w 25): usable 25, 100, 400 → median 100;
    # an even count of usable weights (100, 400) gives their mean 250
    ys = [0.9, 0.8, 0.85, 0.6, 0.7]
    for ses in ([0.1, None, 0.05, 0.0, 0.2], [0.1, None, 0.05, 0.0, None]):
        [row] = _trend([_run(i, y, s) for i, (y, s) in enumerate(zip(ys, ses, strict=True))])
        want = ref.trend(ys, ses)
        assert _close(row[S.PASS_RATE_SLOPE], want["slope"])
        assert _close(row[S.PASS_RATE_SLOPE_SE], want["slope_se"])
    assert float(ref.weights([0.1, None, 0.05, 0.0, None])[0][1]) == pytest.approx(250)


def test_degrading_when_the_interval_lies_below_zero() -> None:
    ys = [0.9, 0.8, 0.7, 0.6, 0.5]
    [row] = _trend([_run(i, y, 0.01) for i, y in enumerate(ys)])
    assert row[S.PASS_RATE_SLOPE] == pytest.approx(-0.1)
    assert row[S.PASS_RATE_DEGRADING] is True and row[S.MEAN_SCORE_DEGRADING] is True


def test_degrading_boundary_is_eps() -> None:
    frame = pl.DataFrame({"h": [-EPS, -2 * EPS, 0.0, None]}, schema={"h": pl.Float64})
    got = frame.select(rules.degrading(pl.col("h")))["h"].to_list()
    assert got == [False, True, False, False]


def test_few_runs_give_nulls() -> None:
    [one] = _trend([_run(0, 0.5, 0.1)])
    assert one[S.PASS_RATE_SLOPE] is None and one[S.PASS_RATE_SLOPE_SE] is None
    assert one[S.CHANGE_RUN_ID] is None and one[S.PASS_RATE_DEGRADING] is False
    [two] = _trend([_run(0, 0.5, 0.1), _run(1, 0.7, 0.1)])
    assert two[S.PASS_RATE_SLOPE] == pytest.approx(0.2)
    assert two[S.PASS_RATE_SLOPE_SE] is None and two[S.PASS_RATE_SLOPE_CI_HIGH] is None
    assert two[S.CHANGE_RUN_ID] == "r1"  # one split: N − 1 = 1, p unadjusted
    z = 0.2 / math.sqrt(0.02)
    assert two[S.CHANGE_Z] == pytest.approx(z)
    assert two[S.CHANGE_P] == pytest.approx(2 * (1 - ref.phi(z)), rel=2e-7)


def test_null_y_runs_are_left_out_of_the_fit_but_keep_their_index() -> None:
    rows = [_run(0, 0.5), _run(1, None), _run(2, 0.7), _run(3, 0.8)]
    [row] = _trend(rows)
    want = ref.trend([0.5, None, 0.7, 0.8], [None] * 4)
    assert row[S.N_RUNS] == 4
    assert _close(row[S.PASS_RATE_SLOPE], want["slope"])
    assert _close(row[S.PASS_RATE_SLOPE_SE], want["slope_se"])


# --- change point -----------------------------------------------------------------------
def test_change_point_and_bonferroni_p() -> None:
    ys = [0.9, 0.92, 0.88, 0.6, 0.62]
    ses = [0.02, 0.03, 0.02, 0.05, None]
    [row] = _trend([_run(i, y, s) for i, (y, s) in enumerate(zip(ys, ses, strict=True))])
    want = ref.change_point([f"r{i}" for i in range(5)], ys, ses)
    assert row[S.CHANGE_RUN_ID] == want["change_run_id"] == "r3"
    assert _close(row[S.CHANGE_Z], want["change_z"])
    assert _close(row[S.CHANGE_P], want["change_p"], rel=2e-7)


def test_change_point_ties_take_the_earliest_split() -> None:
    # 0 1 0 with equal weights: both splits have |z| = 1/sqrt(1.5) — the first wins
    rows = [_run(i, y, 0.5) for i, y in enumerate([0.0, 1.0, 0.0])]
    [row] = _trend(rows)
    assert row[S.CHANGE_RUN_ID] == "r1"
    assert row[S.CHANGE_P] == pytest.approx(min(1.0, 2 * 2 * (1 - ref.phi(abs(row[S.CHANGE_Z])))))


def test_change_p_is_capped_at_one() -> None:
    rows = [_run(i, y, 0.1) for i, y in enumerate([0.5, 0.5, 0.51, 0.5, 0.5])]
    [row] = _trend(rows)
    assert row[S.CHANGE_P] == 1.0


@pytest.mark.parametrize("z", [0.0, 0.5, 1.0, 1.96, 3.0, 5.0, 8.0, -2.5])
def test_normal_tail_matches_erfc(z: float) -> None:
    got = pl.select(rules.normal_sf(pl, pl.lit(z))).item()
    want = 0.5 * math.erfc(z / math.sqrt(2))
    assert got == pytest.approx(want, rel=2e-7)


# --- series, order, window --------------------------------------------------------------
def test_series_order_runs_without_created_at_last_then_run_id() -> None:
    rows = [
        {**_run(0, 0.1), S.RUN_ID: "b", S.CREATED_AT: None},
        {**_run(1, 0.2), S.RUN_ID: "z", S.CREATED_AT: T0 + timedelta(days=2)},
        {**_run(2, 0.3), S.RUN_ID: "a", S.CREATED_AT: None},
        {**_run(3, 0.4), S.RUN_ID: "y", S.CREATED_AT: T0},
    ]
    # order y(.4) z(.2) a(.3) b(.1): the window of 2 keeps a, b
    [row] = _trend(rows, window=2)
    assert row[S.N_RUNS] == 2
    assert row[S.PASS_RATE_SLOPE] == pytest.approx(0.1 - 0.3)
    [full] = _trend(rows)
    assert _close(full[S.PASS_RATE_SLOPE], ref.trend([0.4, 0.2, 0.3, 0.1], [None] * 4)["slope"])


def test_series_values_and_a_null_value_is_a_series_of_its_own() -> None:
    rows = [
        _run(0, 0.5, model="a"),
        _run(1, 0.9, model=None),
        _run(2, 0.7, model="a"),
        _run(3, 0.1, model=None),
        _run(4, 0.2, model="b"),
    ]
    got = {r[S.SERIES]: r for r in _trend(rows, series="model")}
    assert set(got) == {"a", "b", None}
    assert {r[S.SERIES_COLUMN] for r in got.values()} == {"model"}
    assert got["a"][S.PASS_RATE_SLOPE] == pytest.approx(0.2)
    assert got[None][S.PASS_RATE_SLOPE] == pytest.approx(-0.8)
    assert got["b"][S.N_RUNS] == 1


# --- case history -------------------------------------------------------------------------
def _history(cases: dict[str, list[bool | None]], **kw: Any) -> dict[str, dict[str, Any]]:
    n = max(len(v) for v in cases.values())
    runs = _runs([_run(i, 0.5) for i in range(n)])
    summary = _cases({(f"r{i}", c): p for c, h in cases.items() for i, p in enumerate(h)})
    out = case_history(summary.lazy(), runs.lazy(), **kw).collect()
    return {r[S.CASE_ID]: r for r in out.to_dicts()}


def _check(got: dict[str, dict[str, Any]], want: dict[str, dict[str, Any]]) -> None:
    assert set(got) == set(want)
    for case, w in want.items():
        g = got[case]
        for col in (S.N_RUNS, S.PASSES, S.FLIPS, S.LAST_PASSED, S.QUARANTINE):
            assert g[col] == w[col], (case, col)
        for col in (S.PASS_RATE, S.FLIP_RATE, S.SHRUNK_PASS_RATE):
            assert _close(g[col], w[col]), (case, col, g[col], w[col])


def test_flips_flip_rate_and_quarantine_tie_at_the_threshold() -> None:
    cases: dict[str, list[bool | None]] = {
        # 11 runs, 3 flips: flip_rate 3/10 = 0.3 exactly meets flaky_flip_rate 0.3
        "tie": [True] * 4 + [False] * 3 + [True] * 2 + [False] * 2,
        "steady": [True] * 11,
        "flappy": [True, False] * 5 + [True],
        "null_gaps": [True, None, False, None, True] + [None] * 6,
    }
    got = _history(cases)
    _check(got, ref.case_rows(cases, 5, 0.3))
    assert got["tie"][S.FLIP_RATE] == pytest.approx(0.3)
    assert got["tie"][S.QUARANTINE] is True
    assert got["null_gaps"][S.N_RUNS] == 3 and got["null_gaps"][S.FLIPS] == 2
    assert got["null_gaps"][S.QUARANTINE] is False  # 3 runs < min_runs 5
    assert got["flappy"][S.QUARANTINE] and not got["steady"][S.QUARANTINE]


def test_quarantine_boundary_is_eps() -> None:
    frame = pl.DataFrame({"m": [5, 5, 4, 5], "f": [0.3 - EPS, 0.3 - 2 * EPS, 0.9, None]})
    got = frame.select(rules.quarantine(pl.col("m"), pl.col("f"), 5, 0.3))["m"].to_list()
    assert got == [True, False, False, False]


def test_beta_binomial_fit_and_fallbacks() -> None:
    cases: dict[str, list[bool | None]] = {
        "a": [True, True, True, True],
        "b": [False, False, False, False],
        "c": [True, False, True, True],
        "d": [True, True, False, True],
    }
    got = _history(cases, min_runs=3, flaky_flip_rate=0.5)
    want = ref.case_rows(cases, 3, 0.5)
    _check(got, want)
    a, b = ref.beta_binomial([(4, 4), (4, 0), (4, 3), (4, 3)])
    assert (a, b) != (1, 1)  # the fit, not the fallback
    # fallbacks: one case; every run passed; one run each
    for fallback in (
        {"x": [True, False, True]},
        {"x": [True], "y": [True, True]},
        {"x": [True], "y": [False]},
    ):
        got = _history(fallback)
        for case, (m, s, _, _) in {c: ref.flips(h) for c, h in fallback.items()}.items():
            assert got[case][S.SHRUNK_PASS_RATE] == pytest.approx((s + 1) / (m + 2))


def test_window_applies_to_case_history() -> None:
    cases: dict[str, list[bool | None]] = {"x": [False, False, True, False, True]}
    got = _history(cases, window=3)
    assert got["x"][S.N_RUNS] == 3 and got["x"][S.FLIPS] == 2 and got["x"][S.LAST_PASSED]


# --- against the reference, shuffled rows ---------------------------------------------------
values = st.one_of(st.none(), st.integers(0, 8).map(lambda k: k / 8))
ses = st.one_of(st.none(), st.just(0.0), st.integers(1, 8).map(lambda k: k / 32))


@st.composite
def histories(draw: Any) -> tuple[list[dict[str, Any]], dict[tuple[str, str], bool | None]]:
    n = draw(st.integers(1, 7))
    rows = []
    for i in range(n):
        day = draw(st.one_of(st.none(), st.integers(0, 3)))
        rows.append(
            {
                S.RUN_ID: f"r{draw(st.integers(0, 99)):02d}_{i}",
                S.CREATED_AT: None if day is None else T0 + timedelta(days=day),
                S.PASS_RATE: draw(values),
                S.PASS_RATE_SE: draw(ses),
                S.MEAN_SCORE: draw(values),
                S.MEAN_SCORE_SE: draw(ses),
                "model": draw(st.sampled_from(["a", "b", None])),
            }
        )
    cases = {
        (r[S.RUN_ID], f"c{k}"): draw(st.sampled_from([True, False, None]))
        for r in rows
        for k in range(draw(st.integers(1, 4)))
    }
    return rows, cases


def _reference(rows: list[dict[str, Any]], cases: dict, series: str | None, window: int | None):
    trend, hist = {}, {}
    for key, ordered in ref.order(rows, series, window).items():
        ids = [r[S.RUN_ID] for r in ordered]
        row = {S.N_RUNS: len(ordered)}
        for y, se in ((S.PASS_RATE, S.PASS_RATE_SE), (S.MEAN_SCORE, S.MEAN_SCORE_SE)):
            row[y] = ref.trend([r[y] for r in ordered], [r[se] for r in ordered])
        row["change"] = ref.change_point(
            ids, [r[S.PASS_RATE] for r in ordered], [r[S.PASS_RATE_SE] for r in ordered]
        )
        trend[key] = row
        names = sorted({c for (r, c) in cases if r in ids})
        per_case = {c: [cases.get((r, c)) for r in ids] for c in names}
        hist[key] = ref.case_rows(per_case, 5, 0.3)
    return trend, hist


def _check_all(trend_rows, hist_rows, rows, cases, series, window) -> None:
    want_trend, want_hist = _reference(rows, cases, series, window)
    got = {r[S.SERIES]: r for r in trend_rows}
    assert set(got) == set(want_trend)
    for key, w in want_trend.items():
        g = got[key]
        assert g[S.N_RUNS] == w[S.N_RUNS]
        for y in (S.PASS_RATE, S.MEAN_SCORE):
            for part in ("slope", "slope_se", "ci_low", "ci_high"):
                col = f"{y}_{part}" if part.startswith("slope") else f"{y}_slope_{part}"
                assert _close(g[col], w[y][part], rel=1e-7), (key, col, g[col], w[y][part])
            assert g[f"{y}_degrading"] == w[y]["degrading"] or (
                abs(float(w[y]["ci_high"]) + float(EPS)) < 1e-12
            )
        c = w["change"]
        if c["gap"] > 1e-9:  # a near-tie of |z| may fall either way in floats
            assert g[S.CHANGE_RUN_ID] == c["change_run_id"], key
            assert _close(g[S.CHANGE_Z], c["change_z"], rel=1e-7)
            assert _close(g[S.CHANGE_P], c["change_p"], rel=1e-6)
    got_hist: dict[Any, dict[str, Any]] = {}
    for r in hist_rows:
        got_hist.setdefault(r[S.SERIES], {})[r[S.CASE_ID]] = r
    for key, want in want_hist.items():
        _check(got_hist.get(key, {}), want)


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(
    histories(), st.sampled_from([None, "model"]), st.sampled_from([None, 1, 2, 4]), st.randoms()
)
def test_matches_the_reference_on_shuffled_rows(data, series, window, rnd) -> None:
    rows, cases = data
    shuffled = rows[:]
    rnd.shuffle(shuffled)
    case_items = list(cases.items())
    rnd.shuffle(case_items)
    runs = _runs(shuffled)
    summary = _cases(dict(case_items))
    trend = series_trend(runs.lazy(), series=series, window=window).collect().to_dicts()
    hist = case_history(summary.lazy(), runs.lazy(), series=series, window=window).collect()
    _check_all(trend, hist.to_dicts(), rows, cases, series, window)


@pytest.mark.slow
def test_duckdb_relations_give_the_polars_tables() -> None:
    rnd = random.Random(7)
    rows = [
        _run(i, rnd.randint(0, 8) / 8, rnd.choice([None, 0.0, 0.05, 0.1]), model=rnd.choice("ab"))
        for i in range(9)
    ]
    cases = {
        (r[S.RUN_ID], f"c{k}"): rnd.choice([True, False, None]) for r in rows for k in range(5)
    }
    runs, summary = _runs(rows), _cases(cases)
    con = duckdb.connect()
    rel_runs, rel_cases = con.from_arrow(runs.to_arrow()), con.from_arrow(summary.to_arrow())
    for series in (None, "model"):
        want = series_trend(runs.lazy(), series=series).collect()
        got = pl.from_arrow(series_trend(rel_runs, series=series).arrow())
        assert isinstance(got, pl.DataFrame)
        assert got.columns == want.columns == S.SERIES_TREND_COLUMNS
        for a, b in zip(got.to_dicts(), want.to_dicts(), strict=True):
            assert a.keys() == b.keys()
            assert all(_close(a[k], b[k]) if isinstance(b[k], float) else a[k] == b[k] for k in a)
        want_h = case_history(summary.lazy(), runs.lazy(), series=series).collect()
        got_h = pl.from_arrow(case_history(rel_cases, rel_runs, series=series).arrow())
        assert isinstance(got_h, pl.DataFrame)
        assert got_h.columns == want_h.columns == S.CASE_HISTORY_COLUMNS
        assert got_h.height == want_h.height
        for a, b in zip(got_h.to_dicts(), want_h.to_dicts(), strict=True):
            assert all(_close(a[k], b[k]) if isinstance(b[k], float) else a[k] == b[k] for k in a)


def test_empty_inputs_give_empty_tables() -> None:
    runs, summary = _runs([]), _cases({})
    assert series_trend(runs.lazy()).collect().columns == S.SERIES_TREND_COLUMNS
    assert series_trend(runs.lazy()).collect().height == 0
    assert case_history(summary.lazy(), runs.lazy()).collect().height == 0


# --- docs ---------------------------------------------------------------------------------
def _section(text: str, name: str) -> str:
    parts = re.split(r"^(#{1,2} .*)$", text, flags=re.M)
    return next(
        b for h, b in zip(parts[1::2], parts[2::2], strict=True) if h.lstrip("#").strip() == name
    )


@pytest.mark.parametrize(
    ("table", "columns"),
    [(S.SERIES_TREND, S.SERIES_TREND_COLUMNS), (S.CASE_HISTORY, S.CASE_HISTORY_COLUMNS)],
)
def test_tables_are_documented(table: str, columns: list[str]) -> None:
    text = _section((DOCS / "tables.md").read_text(encoding="utf-8"), table)
    missing = [c for c in columns if f"`{c}`" not in text]
    assert not missing, f"docs/tables.md `## {table}` does not mention {missing}"


# --- the report's History section -----------------------------------------------------------
def _flaky_dataset(root: Path, n_runs: int, drift: float = 0.05, noise: float = 0.3) -> Path:
    rnd = random.Random(3)
    root.mkdir(parents=True)
    rows = [
        {
            "run_id": f"run{r}",
            "case_id": f"case{c:02d}",
            "evaluator": "m",
            "score": min(1.0, max(0.0, 0.8 - drift * r + rnd.uniform(-noise, noise))),
        }
        for r in range(n_runs)
        for c in range(12)
    ]
    pl.DataFrame(rows).write_parquet(root / "scores.parquet")
    pl.DataFrame(
        {
            "run_id": [f"run{r}" for r in range(n_runs)],
            "created_at": [T0 + timedelta(days=r) for r in range(n_runs)],
            "model": ["a", "b"] * (n_runs // 2) + ["a"] * (n_runs % 2),
        }
    ).write_parquet(root / "runs.parquet")
    return root


@pytest.mark.slow
@pytest.mark.parametrize(("n_runs", "shown"), [(2, False), (3, True), (6, True)])
def test_report_has_a_history_section_from_three_runs(tmp_path, n_runs, shown) -> None:
    import evalframe as ef
    from evalframe._private.report.html import build_report

    data = _flaky_dataset(tmp_path / "data", n_runs)
    tables = ef.score_tables(data)
    page = build_report({k: v.lazy().collect() for k, v in tables.items()})
    assert ("<h2 id='history'>History</h2>" in page) is shown
    assert ("href='#history'" in page) is shown
    if shown:
        section = page[page.index("<h2 id='history'>") : page.index("<h2 id='charts'>")]
        assert "id='history-history_trend'" in section and "<svg" in section
        assert "role-mark" in section


@pytest.mark.slow
def test_report_history_per_series(tmp_path) -> None:
    import evalframe as ef
    from evalframe._private.report.html import build_report

    data = _flaky_dataset(tmp_path / "data", 6)
    tables = ef.score_tables(data)
    page = build_report({k: v.lazy().collect() for k, v in tables.items()}, series="model")
    section = page[page.index("<h2 id='history'>") : page.index("<h2 id='charts'>")]
    assert "model=a" in section and "model=b" in section


# --- the command line -------------------------------------------------------------------------
def _cli(*args: str) -> Any:
    from typer.testing import CliRunner

    from evalframe.cli import app

    return CliRunner().invoke(app, [*args])


def test_trend_writes_both_tables_as_one_result_set(tmp_path) -> None:
    data = _flaky_dataset(tmp_path / "data", 6)
    out = tmp_path / "out"
    result = _cli("trend", str(data), "--series", "model", "-o", str(out))
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == [
        "case_difficulty.parquet",
        "case_history.parquet",
        "run_ability.parquet",
        "series_trend.parquet",
    ]
    assert pl.read_parquet(out / "case_difficulty.parquet").columns == S.CASE_DIFFICULTY_COLUMNS
    trend = pl.read_parquet(out / "series_trend.parquet")
    assert trend.columns == S.SERIES_TREND_COLUMNS and trend[S.SERIES].to_list() == ["a", "b"]
    assert "model=a — 3 runs" in result.output and "pts/run" in result.output
    assert pl.read_parquet(out / "case_history.parquet").columns == S.CASE_HISTORY_COLUMNS


@pytest.mark.slow
def test_trend_fail_on_degrading_exits_1(tmp_path) -> None:
    data = _flaky_dataset(tmp_path / "data", 6, drift=0.12, noise=0.1)
    trend = series_trend(__import__("evalframe").score_tables(data)["run_summary"].lazy())
    degrading = trend.collect()[S.MEAN_SCORE_DEGRADING].item()
    assert degrading  # the dataset drifts down 12 points a run
    ok = _cli("trend", str(data), "-o", str(tmp_path / "a"))
    assert ok.exit_code == 0, ok.output
    assert "DEGRADING" in ok.output
    failed = _cli("trend", str(data), "--fail-on-degrading", "-o", str(tmp_path / "b"))
    assert failed.exit_code == 1
    assert "degrading (slope interval below 0): (all runs)" in failed.output


def test_unknown_series_column_is_exit_2_naming_the_runs_columns(tmp_path) -> None:
    data = _flaky_dataset(tmp_path / "data", 3)
    for command in ("trend", "flaky"):
        result = _cli(command, str(data), "--series", "modle", "-o", str(tmp_path / command))
        assert result.exit_code == 2
        text = " ".join(result.output.split())
        assert "--series 'modle' is not a column of the runs table" in text
        assert "the runs table has model;" in text
        assert not (tmp_path / command).exists()


def test_flaky_top_lists_the_worst_candidates_and_says_how_many(tmp_path) -> None:
    data = _flaky_dataset(tmp_path / "data", 10, drift=0.0, noise=0.45)
    result = _cli("flaky", str(data), "--top", "2", "-o", str(tmp_path / "out"))
    assert result.exit_code == 0, result.output
    assert "quarantine candidates, the worst 2 of 11" in result.output
    assert "case08" in result.output and "case00" in result.output
    assert result.output.count("(all runs) │ case") == 2
    assert "all 11: --json, or case_history where quarantine" in result.output
    listed = _cli("flaky", str(data), "--top", "2", "--json", "-o", str(tmp_path / "json"))
    assert len(json.loads(listed.stdout)) == 11


def test_list_series_column_is_exit_2_naming_its_type(tmp_path) -> None:
    data = _flaky_dataset(tmp_path / "data", 3)
    runs = pl.read_parquet(data / "runs.parquet").with_columns(tags=pl.lit(["x", "y"]))
    runs.write_parquet(data / "runs.parquet")
    for command in ("trend", "flaky", "compare"):
        result = _cli(command, str(data), "--series", "tags", "-o", str(tmp_path / command))
        assert result.exit_code == 2, result.output
        text = " ".join(result.output.split())
        assert "--series 'tags' is a List(String) column of the runs table" in text
        assert not (tmp_path / command).exists()


@pytest.mark.parametrize("window", ["0", "-1", "2147483648", "9223372036854775808"])
def test_window_out_of_range_is_exit_2_naming_the_option(tmp_path, window) -> None:
    data = _flaky_dataset(tmp_path / "data", 3)
    result = _cli("trend", str(data), "--window", window, "-o", str(tmp_path / "out"))
    assert result.exit_code == 2
    assert f"--window must be a number of runs from 1 to 2,147,483,647, not {window}" in (
        " ".join(result.output.split())
    )
    assert not (tmp_path / "out").exists()


def test_trend_over_alternating_models_notes_the_series(tmp_path) -> None:
    data = _flaky_dataset(tmp_path / "data", 4)
    mixed = _cli("trend", str(data), "-o", str(tmp_path / "a"))
    assert mixed.exit_code == 0, mixed.output
    text = " ".join(mixed.output.split())
    assert "one trend is fitted across runs of different series" in text
    assert "model (3 of 3 pairs, e.g. run0 [a] → run1 [b])" in text
    assert "pass --series model" in text
    split = _cli("trend", str(data), "--series", "model", "-o", str(tmp_path / "b"))
    assert "different series" not in split.output


@pytest.mark.parametrize(
    ("p", "shown"),
    [
        (0.049, "change point: at run r3 (z = -2.50, p = 0.049, Bonferroni)"),
        (
            0.05,
            "change point: none significant (the largest split is at run r3 (z = -2.50, "
            "p = 0.05, Bonferroni))",
        ),
        (
            1.0,
            "change point: none significant (the largest split is at run r3 (z = -2.50, "
            "p = 1, Bonferroni))",
        ),
    ],
)
def test_trend_names_a_change_point_only_below_alpha(p, shown) -> None:
    from evalframe.format import change_point_text

    assert change_point_text({"change_run_id": "r3", "change_z": -2.5, "change_p": p}) == shown


@pytest.mark.slow
def test_flaky_lists_quarantine_candidates_worst_first(tmp_path) -> None:
    data = _flaky_dataset(tmp_path / "data", 8)
    out = tmp_path / "out"
    result = _cli("flaky", str(data), "--json", "-o", str(out))
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    history = pl.read_parquet(out / "case_history.parquet")
    want = history.filter(pl.col(S.QUARANTINE)).height
    assert len(rows) == want > 0
    rates = [(r[S.FLIP_RATE], r[S.N_RUNS]) for r in rows]
    assert rates == sorted(rates, reverse=True)
    text = _cli("flaky", str(data), "-o", str(tmp_path / "o2"))
    assert text.exit_code == 0 and "quarantine candidates, worst first" in text.output


@pytest.mark.slow
def test_history_tables_on_every_engine_agree(tmp_path) -> None:
    import evalframe as ef

    data = _flaky_dataset(tmp_path / "data", 5)
    want = ef.history_tables(data, series="model")
    got = ef.history_tables(data, series="model", engine="duckdb")
    for name in S.HISTORY_TABLES:
        a, b = got[name].to_dicts(), want[name].to_dicts()
        assert len(a) == len(b) > 0
        for x, y in zip(a, b, strict=True):
            assert all(_close(x[k], y[k]) if isinstance(y[k], float) else x[k] == y[k] for k in y)


@pytest.mark.slow
@pytest.mark.spark
def test_history_tables_on_spark_agree(spark, tmp_path) -> None:
    """On the shared local[2] session (tests/conftest.py `spark`, tuned for tiny data)."""
    import evalframe as ef

    data = _flaky_dataset(tmp_path / "data", 5)
    want = ef.history_tables(data, series="model", window=4)
    got = ef.history_tables(data, series="model", window=4, engine="spark")
    for name in S.HISTORY_TABLES:
        a, b = got[name].to_dicts(), want[name].to_dicts()
        assert len(a) == len(b) > 0
        for x, y in zip(a, b, strict=True):
            assert all(_close(x[k], y[k]) if isinstance(y[k], float) else x[k] == y[k] for k in y)
