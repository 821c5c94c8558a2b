"""Charts (evalframe.plots): golden Vega-Lite specs for fixed small inputs, the numbers each
chart aggregates checked against plain-Python references, and bad input.

Regenerate the golden specs after an intended change with
`EVALFRAME_REGENERATE_GOLDEN=1 python -m pytest tests/test_plots.py`.
"""

from __future__ import annotations

import json
import math
import os
from datetime import datetime
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import evalframe as ef
import evalframe.plots as efp
from tests import reference_stats as ref_stats

GOLDEN = Path(__file__).parent / "golden" / "charts"
REGENERATE = os.environ.get("EVALFRAME_REGENERATE_GOLDEN") == "1"

# --- fixed small inputs (the columns each chart reads, as in docs/tables.md) ----------
RUN_SUMMARY = pl.DataFrame(
    {
        "config_id": ["c1", "c1", "c1"],
        "run_id": ["r-b", "r-a", "r-c"],
        "created_at": [datetime(2026, 1, 1), datetime(2026, 2, 1), datetime(2026, 3, 1)],
        "pass_rate": [0.9, 0.5, 0.02],
        "pass_rate_se": [0.1, 0.05, None],
        "cases": [10, 10, 5],
        "n_pass": [8, 4, 0],
        "n_borderline": [1, 2, 0],
        "n_fail": [1, 3, 1],
        "errored": [0, 1, 0],
        "unscored": [0, 0, 1],
    }
)
EXECUTION_SCORES = pl.DataFrame(
    {
        "config_id": ["c1"] * 7,
        "run_id": ["r-a", "r-a", "r-a", "r-b", "r-b", "r-b", "r-b"],
        "score": [0.0, 0.55, 1.0, 0.25, 0.26, None, 0.999],
    }
)
CASE_DELTAS = pl.DataFrame(
    {
        "config_id": ["c1"] * 5,
        "baseline_run_id": ["r-a"] * 5,
        "candidate_run_id": ["r-b"] * 5,
        "case_id": ["k1", "k2", "k3", "k4", "k5"],
        "score_delta": [-0.3, 0.2, 0.0, None, -0.01],
        "status": ["regression", "improvement", "unchanged", "error", "unchanged"],
    }
)
EVALUATOR_DELTAS = pl.DataFrame(
    {
        "config_id": ["c1"] * 4,
        "baseline_run_id": ["r-a"] * 4,
        "candidate_run_id": ["r-b"] * 4,
        "case_id": ["k1", "k2", "k1", "k2"],
        "path": ["tone", "tone", "accuracy", "accuracy"],
        "score_delta": [-0.4, 0.2, -0.1, None],
        "status": ["regression", "improvement", "regression", "error"],
    }
)
THRESHOLD_CURVE = pl.DataFrame(
    {
        "config_id": ["c1"] * 4,
        "run_id": ["r-a", "r-a", "r-b", "r-b"],
        "threshold": [0.4, 0.8, 0.5, 0.9],
        "pass_rate": [0.75, 0.5, 1.0, 0.25],
    }
)
SWEEP = pl.DataFrame(
    {
        "config_id": ["s1", "s2", "s3", "s4"],
        "run_id": ["r-a"] * 4,
        "pass_rate": [0.9, 0.8, 0.7, 0.4],
        "sweep_threshold": [0.6, 0.6, 0.8, 0.8],
        "sweep_outcomes": ["gate", "ignore", "gate", "ignore"],
    }
)
SLICE_DELTAS = pl.DataFrame(
    {
        "config_id": ["c1"] * 3,
        "baseline_run_id": ["r-a"] * 3,
        "candidate_run_id": ["r-b"] * 3,
        "slice": ["tag"] * 3,
        "slice_value": ["billing", "refunds", None],
        "mean_delta": [-0.1, 0.02, 0.0],
        "mean_delta_ci_low": [-0.15, -0.01, -0.05],
        "mean_delta_ci_high": [-0.05, 0.05, 0.05],
        "q_value": [0.01, 0.6, 1.0],
        "n_passed_to_failed": [6, 1, 0],
        "n_failed_to_passed": [0, 2, 0],
    }
)
RUN_DELTAS = pl.DataFrame(
    {
        "config_id": ["c1"] * 3,
        "baseline_run_id": ["r-a", "r-b", "r-a"],
        "candidate_run_id": ["r-b", "r-c", "r-c"],
        "n_paired": [40, 1, 12],
        "paired_pass_delta_se": [0.05, None, 0.1],
        "mean_delta_se": [0.01, None, 0.0],
    }
)
LIMITS = ef.config_from_dict(
    {"compare": {"max_pass_rate_drop": 0.1, "max_mean_score_drop": 0.05}}
).compare

CHARTS = {
    "pass_rate": lambda: efp.pass_rate_chart(RUN_SUMMARY),
    "verdicts": lambda: efp.verdict_chart(RUN_SUMMARY),
    "trend": lambda: efp.trend_chart(RUN_SUMMARY),
    "score_distribution": lambda: efp.score_distribution_chart(EXECUTION_SCORES, bins=4),
    "regression_waterfall": lambda: efp.regression_waterfall_chart(CASE_DELTAS),
    "evaluator_heatmap": lambda: efp.evaluator_delta_heatmap(EVALUATOR_DELTAS),
    "threshold_curve": lambda: efp.threshold_curve_chart(THRESHOLD_CURVE),
    "sweep_heatmap": lambda: efp.sweep_heatmap(SWEEP),
    "slice_forest": lambda: efp.slice_forest_chart(SLICE_DELTAS),
    "power_curve": lambda: efp.power_curve_chart(RUN_DELTAS, limits=LIMITS, points=6),
}


def _rows(chart: Any) -> list[dict[str, Any]]:
    """The data rows the chart embeds (every chart here embeds one dataset)."""
    datasets = chart.to_dict(validate=False)[
        "datasets"
    ]  # the spec is validated by the golden tests
    assert len(datasets) == 1
    return next(iter(datasets.values()))


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CHARTS))
def test_chart_spec_matches_golden(name: str) -> None:
    spec = CHARTS[name]().to_dict()
    path = GOLDEN / f"{name}.json"
    if REGENERATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(spec, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
    assert path.exists(), f"no golden spec {path}; run with EVALFRAME_REGENERATE_GOLDEN=1"
    assert spec == json.loads(path.read_text()), (
        f"{name}: chart spec changed; if intended, regenerate with EVALFRAME_REGENERATE_GOLDEN=1"
    )


@pytest.mark.slow
def test_every_chart_has_a_golden_spec_and_the_report_draws_them_all() -> None:
    assert sorted(CHARTS) == sorted(p.stem for p in GOLDEN.glob("*.json"))
    tables = {
        "run_summary": RUN_SUMMARY,
        "execution_scores": EXECUTION_SCORES,
        "case_deltas": CASE_DELTAS,
        "evaluator_deltas": EVALUATOR_DELTAS,
        "threshold_curve": THRESHOLD_CURVE,
        "sweep": SWEEP,
        "slice_deltas": SLICE_DELTAS,
        "run_deltas": RUN_DELTAS,
    }
    assert sorted(efp.charts_for(tables)) == sorted(CHARTS)


@pytest.mark.slow
def test_charts_export_to_svg_and_png_offline(tmp_path: Path) -> None:
    svg = efp.to_svg(efp.pass_rate_chart(RUN_SUMMARY))
    assert svg.lstrip().startswith("<svg") and "role-mark" in svg
    for run in ("r-a", "r-b", "r-c"):
        assert run in svg
    chart = efp.verdict_chart(RUN_SUMMARY)
    chart.save(tmp_path / "verdicts.png")
    chart.save(tmp_path / "verdicts.svg")
    assert (tmp_path / "verdicts.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "<svg" in (tmp_path / "verdicts.svg").read_text()


# --- the numbers behind each chart ------------------------------------------------------
def _wilson(p: float, n: float) -> tuple[float, float]:
    z = 1.96
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def test_pass_rate_interval_is_wilson_with_the_clustered_effective_n() -> None:
    rows = {r["run_id"]: r for r in _rows(efp.pass_rate_chart(RUN_SUMMARY))}
    expected = {  # run: (ci_low, ci_high)
        "r-b": _wilson(0.9, 0.9 * 0.1 / 0.1**2),  # n_eff = p (1 - p) / se^2 = 9
        "r-a": _wilson(0.5, 0.5 * 0.5 / 0.05**2),  # 100
        "r-c": _wilson(0.02, 5),  # no se: the run's 5 cases
    }
    for run, (lo, hi) in expected.items():
        assert rows[run]["ci_low"] == pytest.approx(lo)
        assert rows[run]["ci_high"] == pytest.approx(hi)
    # inside [0, 1] and never collapsed to the point, even at a 100 % run
    perfect = RUN_SUMMARY.with_columns(
        pl.lit(1.0).alias("pass_rate"), pl.lit(0.0).alias("pass_rate_se")
    )
    for r in _rows(efp.pass_rate_chart(perfect)):
        assert r["ci_high"] == 1.0 and r["ci_low"] < 1.0
    assert "Wilson" in json.dumps(efp.pass_rate_chart(RUN_SUMMARY).to_dict())


@pytest.mark.slow
@settings(max_examples=20, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.floats(0, 1, allow_nan=False), st.one_of(st.none(), st.floats(0, 1, allow_nan=False))
        ),
        min_size=1,
        max_size=6,
    )
)
def test_pass_rate_interval_matches_reference(rates: list[tuple[float, float | None]]) -> None:
    frame = pl.DataFrame(
        {
            "config_id": ["c"] * len(rates),
            "run_id": [f"r{i}" for i in range(len(rates))],
            "pass_rate": [p for p, _ in rates],
            "pass_rate_se": [se for _, se in rates],
        },
        schema_overrides={"pass_rate_se": pl.Float64},
    )
    frame = frame.with_columns(pl.lit(20).alias("cases"))
    rows = {r["run_id"]: r for r in _rows(efp.pass_rate_chart(frame))}
    for i, (p, se) in enumerate(rates):
        # n_eff = p (1 - p) / se^2, at least 1 (infinite when se^2 underflows)
        n = max(1.0, p * (1 - p) / se**2 if se**2 else math.inf) if se and 0 < p < 1 else 20
        lo, hi = _wilson(p, n)
        assert rows[f"r{i}"]["ci_low"] == pytest.approx(lo, abs=1e-9)
        assert rows[f"r{i}"]["ci_high"] == pytest.approx(hi, abs=1e-9)
        assert lo - 1e-12 <= p <= hi + 1e-12  # Wilson's interval holds the rate


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.floats(0, 1, allow_nan=False), st.one_of(st.none(), st.floats(0, 1, allow_nan=False))
        ),
        min_size=1,
        max_size=6,
    )
)
def test_pass_rate_interval_matches_reference_many(rates: list[tuple[float, float | None]]) -> None:
    test_pass_rate_interval_matches_reference.hypothesis.inner_test(rates)


def test_verdict_bands_are_the_five_counts_in_order() -> None:
    rows = _rows(efp.verdict_chart(RUN_SUMMARY))
    got = {(r["run_id"], r["verdict"]): (r["band_order"], r["executions"]) for r in rows}
    assert got[("r-a", "pass")] == (0, 4)
    assert got[("r-a", "borderline")] == (1, 2)
    assert got[("r-a", "fail")] == (2, 3)
    assert got[("r-a", "error")] == (3, 1)
    assert got[("r-c", "unscored")] == (4, 1)
    assert len(rows) == 3 * 5


def test_runs_are_ordered_by_created_at() -> None:
    spec = efp.pass_rate_chart(RUN_SUMMARY).to_dict()
    assert spec["layer"][0]["encoding"]["y"]["sort"] == ["r-b", "r-a", "r-c"]


def _reference_bins(scores: list[float | None], bins: int) -> dict[int, int]:
    counts: dict[int, int] = {}
    for s in scores:
        if s is None:
            continue
        b = min(bins - 1, max(0, math.floor(s * bins)))
        counts[b] = counts.get(b, 0) + 1
    return counts


@pytest.mark.slow
@settings(max_examples=20, deadline=None)
@given(
    st.lists(st.one_of(st.none(), st.floats(0, 1, allow_nan=False)), min_size=1, max_size=40),
    st.integers(1, 12),
)
def test_score_histogram_matches_reference(scores: list[float | None], bins: int) -> None:
    frame = pl.DataFrame(
        {"config_id": ["c"] * len(scores), "run_id": ["r"] * len(scores), "score": scores},
        schema_overrides={"score": pl.Float64},
    )
    rows = _rows(efp.score_distribution_chart(frame, bins=bins))
    expected = _reference_bins(scores, bins)
    got = {round(r["bin_start"] * bins): r["executions"] for r in rows}
    assert got == expected
    total = sum(expected.values())
    for r in rows:
        assert r["share"] == pytest.approx(r["executions"] / total)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.one_of(st.none(), st.floats(0, 1, allow_nan=False)), min_size=1, max_size=40),
    st.integers(1, 12),
)
def test_score_histogram_matches_reference_many(scores: list[float | None], bins: int) -> None:
    test_score_histogram_matches_reference.hypothesis.inner_test(scores, bins)


def test_score_histogram_of_many_rows_embeds_only_the_bins() -> None:
    n = 300_000
    frame = pl.DataFrame(
        {
            "config_id": ["c"] * n,
            "run_id": pl.Series(["r1", "r2", "r3"] * (n // 3)),
            "score": (pl.int_range(n, eager=True) % 1000) / 1000,
        }
    )
    rows = _rows(efp.score_distribution_chart(frame.lazy(), bins=20))
    assert len(rows) == 3 * 20
    assert sum(r["executions"] for r in rows) == n


def test_waterfall_sorts_paired_cases_and_keeps_status() -> None:
    rows = _rows(efp.regression_waterfall_chart(CASE_DELTAS))
    assert [(r["case_id"], r["score_delta"], r["status"]) for r in rows] == [
        ("k1", -0.3, "regression"),
        ("k5", -0.01, "unchanged"),
        ("k3", 0.0, "unchanged"),
        ("k2", 0.2, "improvement"),
    ]  # k4 has no delta (status error): not drawn
    assert [r["case_quantile"] for r in rows] == [0.125, 0.375, 0.625, 0.875]


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-1, 1, allow_nan=False), min_size=1, max_size=60), st.integers(1, 10))
def test_waterfall_subsample_matches_reference(deltas: list[float], max_points: int) -> None:
    n = len(deltas)
    frame = pl.DataFrame(
        {
            "config_id": ["c"] * n,
            "baseline_run_id": ["a"] * n,
            "candidate_run_id": ["b"] * n,
            "case_id": [f"k{i:03d}" for i in range(n)],
            "score_delta": deltas,
            "status": ["unchanged"] * n,
        }
    )
    rows = _rows(efp.regression_waterfall_chart(frame, max_points=max_points))
    ordered = sorted(range(n), key=lambda i: (deltas[i], f"k{i:03d}"))
    # the first rank of every bucket floor(rank * max_points / n)
    keep = [r for r in range(n) if r == 0 or r * max_points // n != (r - 1) * max_points // n]
    assert [r["case_id"] for r in rows] == [f"k{ordered[r]:03d}" for r in keep]
    assert len(rows) <= max_points


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.floats(0, 1, allow_nan=False), min_size=3, max_size=40, unique=True),
    st.integers(2, 6),
)
def test_threshold_curve_grid_reads_the_exact_step(points: list[float], max_points: int) -> None:
    ts = sorted(points)
    rates = [1 - k / len(ts) for k in range(len(ts))]
    frame = pl.DataFrame({"config_id": "c", "run_id": "r", "threshold": ts, "pass_rate": rates})
    rows = _rows(efp.threshold_curve_chart(frame, max_points=max_points))
    if len(ts) <= max_points:
        assert [r["threshold"] for r in rows] == ts
        return
    assert len(rows) == max_points
    lo, hi = ts[0], ts[-1]
    for k, r in enumerate(rows):
        x = lo + (hi - lo) * k / (max_points - 1)
        assert r["threshold"] == pytest.approx(x)
        first = next(i for i, t in enumerate(ts) if t >= x - 1e-9)  # first row meeting x
        assert r["pass_rate"] == pytest.approx(rates[first])


def test_evaluator_heatmap_averages_paired_deltas() -> None:
    rows = {r["path"]: r for r in _rows(efp.evaluator_delta_heatmap(EVALUATOR_DELTAS))}
    assert rows["tone"]["mean_delta"] == pytest.approx(-0.1)
    assert rows["tone"]["n_paired"] == 2 and rows["tone"]["n_regression"] == 1
    assert rows["accuracy"]["mean_delta"] == pytest.approx(-0.1)
    assert rows["accuracy"]["n_paired"] == 1
    assert {r["pair"] for r in rows.values()} == {"r-a → r-b"}


def test_sweep_heatmap_with_one_parameter_puts_runs_down() -> None:
    one = SWEEP.filter(pl.col("sweep_outcomes") == "gate").drop("sweep_outcomes")
    spec = efp.sweep_heatmap(one).to_dict()
    assert spec["layer"][0]["encoding"]["y"]["field"] == "run_id"


def test_forest_marks_significant_slices() -> None:
    rows = {r["slice_label"]: r for r in _rows(efp.slice_forest_chart(SLICE_DELTAS))}
    assert rows["tag=billing"]["significance"] == "q < 0.05: more pass → fail (a regression)"
    assert rows["tag=refunds"]["significance"] == "q ≥ 0.05"
    # the legend says which test q comes from: the pass flips, not the x axis's score delta
    point = efp.slice_forest_chart(SLICE_DELTAS).to_dict()["spec"]["layer"][1]
    assert point["encoding"]["color"]["title"] == "pass flips (McNemar), Benjamini–Hochberg q"
    assert "tag=(none)" in rows


def test_forest_never_paints_a_significant_improvement_red() -> None:
    improved = SLICE_DELTAS.with_columns(
        pl.Series("n_passed_to_failed", [0, 1, 0]),
        pl.Series("n_failed_to_passed", [7, 2, 0]),
        pl.Series("mean_delta", [0.1, 0.02, 0.0]),
    )
    chart = efp.slice_forest_chart(improved)
    rows = {r["slice_label"]: r for r in _rows(chart)}
    assert rows["tag=billing"]["significance"] == "q < 0.05: more fail → pass (an improvement)"
    scale = chart.to_dict()["spec"]["layer"][1]["encoding"]["color"]["scale"]
    colour = dict(zip(scale["domain"], scale["range"], strict=True))
    assert colour[rows["tag=billing"]["significance"]] != "#c62828"  # green, not red
    assert colour["q < 0.05: more pass → fail (a regression)"] == "#c62828"
    assert colour["q ≥ 0.05"] != "#c62828"


POWER_TABLE = [
    # true change, se, power (two-sided 5 % z-test)
    (0.0, 0.05, 0.05),  # no change: the test's level
    (2.801585 * 0.05, 0.05, 0.8),  # the MDE: 80 % (the far tail adds < 1e-4)
    (1.959964 * 0.02, 0.02, 0.5),  # at z_.975 · se: half the time
    (0.0, 0.0, 0.05),  # se 0: the level at no change ...
    (0.01, 0.0, 1.0),  # ... and certainty at any change
]


@pytest.mark.parametrize(("delta", "se", "want"), POWER_TABLE)
def test_power_literal(delta: float, se: float, want: float) -> None:
    from evalframe._private.stats.power import power

    assert power(delta, se) == pytest.approx(want, abs=1e-4)
    assert power(delta, se) == pytest.approx(ref_stats.power(delta, se), rel=1e-12, abs=1e-15)


def test_power_curve_draws_each_pair_with_an_se_per_metric() -> None:
    rows = _rows(CHARTS["power_curve"]())
    by = {}
    for r in rows:
        by.setdefault((r["metric"], r["pair"]), []).append(r)
    # r-b → r-c has one paired case: no se, no curve; r-a → r-c has se 0 for the mean score
    assert sorted(by) == [
        ("mean score", "r-a → r-b"),
        ("mean score", "r-a → r-c"),
        ("pass rate", "r-a → r-b"),
        ("pass rate", "r-a → r-c"),
    ]
    # pass rate: 1.5 × the largest MDE (2.801585 · 0.1) beats 1.25 × the 0.1 limit
    assert [r["true_change"] for r in by[("pass rate", "r-a → r-b")]] == pytest.approx(
        [1.5 * 2.801585 * 0.1 * i / 5 for i in range(6)], abs=1e-6
    )
    # mean score: 1.25 × the 0.05 limit beats 1.5 × 2.801585 · 0.01
    assert by[("mean score", "r-a → r-c")][-1]["true_change"] == pytest.approx(0.0625)
    assert [r["power"] for r in by[("mean score", "r-a → r-c")]] == [0.05, 1, 1, 1, 1, 1]
    spec = CHARTS["power_curve"]().to_dict()
    rules = [
        layer["data"]["values"][0]
        for panel in spec["hconcat"]
        for layer in panel["layer"]
        if "values" in layer.get("data", {})
    ]
    assert rules == [{"power": 0.8}, {"limit": 0.1}, {"power": 0.8}, {"limit": 0.05}]


@pytest.mark.slow
@settings(max_examples=10, deadline=None)
@given(
    st.lists(st.one_of(st.just(0.0), st.floats(1e-4, 0.3)), min_size=1, max_size=4),
    st.integers(2, 30),
)
def test_power_curve_matches_reference(ses: list[float], points: int) -> None:
    frame = pl.DataFrame(
        {
            "config_id": "c",
            "baseline_run_id": [f"b{i}" for i in range(len(ses))],
            "candidate_run_id": "c",
            "n_paired": 10,
            "paired_pass_delta_se": ses,
            "mean_delta_se": ses,
        }
    )
    rows = _rows(efp.power_curve_chart(frame, points=points))
    assert len(rows) == 2 * len(ses) * points
    top = min(1.0, max(0.01, 1.5 * 2.801585 * max(ses)))
    for r in rows:
        se = ses[int(r["pair"].split(" ")[0][1:])]
        delta = top * round(r["true_change"] / top * (points - 1)) / (points - 1)  # on the grid
        assert r["true_change"] == pytest.approx(delta, abs=1e-6)
        assert r["power"] == pytest.approx(ref_stats.power(delta, se), abs=1e-6)
    for se in ses:  # every curve crosses 80 % at its MDE (the far tail adds < 1e-4)
        if se > 0:
            assert ref_stats.power(2.801585 * se, se) == pytest.approx(0.8, abs=1e-4)


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.one_of(st.just(0.0), st.floats(1e-4, 0.3)), min_size=1, max_size=4),
    st.integers(2, 30),
)
def test_power_curve_matches_reference_many(ses: list[float], points: int) -> None:
    test_power_curve_matches_reference.hypothesis.inner_test(ses, points)


def test_power_curve_needs_a_pair_with_an_se() -> None:
    with pytest.raises(ef.UsageError, match="no pair has a paired standard error"):
        efp.power_curve_chart(RUN_DELTAS.filter(pl.col("n_paired") == 1))
    with pytest.raises(ef.UsageError, match="points must be at least 2"):
        efp.power_curve_chart(RUN_DELTAS, points=1)


# --- bad input -------------------------------------------------------------------------
def test_missing_columns_name_the_chart_and_the_columns() -> None:
    with pytest.raises(ef.UsageError, match=r"pass_rate_chart needs .* lacks pass_rate_se"):
        efp.pass_rate_chart(RUN_SUMMARY.drop("pass_rate_se"))


def test_several_configs_are_refused_with_a_hint() -> None:
    two = pl.concat([RUN_SUMMARY, RUN_SUMMARY.with_columns(pl.lit("c2").alias("config_id"))])
    with pytest.raises(ef.UsageError, match=r"holds 2 config_ids \(c1, c2\).*filter first"):
        efp.verdict_chart(two)


def test_sweep_heatmap_refuses_cells_with_several_configs() -> None:
    three = SWEEP.with_columns(pl.Series("sweep_borderline", [0.5, 0.5, 0.5, 0.6]))
    three = pl.concat([three, three.with_columns(pl.lit(0.7).alias("sweep_borderline"))])
    with pytest.raises(ef.UsageError, match=r"several configs.*sweep_borderline"):
        efp.sweep_heatmap(three)
    with pytest.raises(ef.UsageError, match="no swept parameter 'gates'"):
        efp.sweep_heatmap(SWEEP, "gates")
    with pytest.raises(ef.UsageError, match="needs at least one sweep_"):
        efp.sweep_heatmap(SWEEP.drop("sweep_threshold", "sweep_outcomes"))


def test_bins_must_be_positive() -> None:
    with pytest.raises(ef.UsageError, match="bins must be at least 1"):
        efp.score_distribution_chart(EXECUTION_SCORES, bins=0)
