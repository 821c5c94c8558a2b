"""Slices (docs/statistics.md#slices): slice_summary equals run_summary over each slice's
executions, slice_deltas equals the compare reference over each slice's case summaries, with
Benjamini–Hochberg q-values across the slices of a pair; random data via hypothesis."""

from __future__ import annotations

import math

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import evalframe as ef
from evalframe._private.summaries.slices import (
    significant_regressions,
    slice_deltas,
    slice_summary,
)
from tests import reference as ref
from tests import reference_stats as rs
from tests.reference_compare import reference_compare

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SCHEMA = {
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
    "tags": pl.List(pl.String),
    "model": pl.String,
}


def close(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, bool) or isinstance(b, bool):
        return a == b
    if isinstance(a, (str, list)) or isinstance(b, (str, list)):
        return a == b
    return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-12)


@st.composite
def executions(draw, config_id: str):
    rows = []
    for run in ("r1", "r2"):
        for case in draw(
            st.lists(st.sampled_from(["a", "b", "c", "d", "e"]), min_size=1, unique=True)
        ):
            tags = draw(st.sampled_from([[], ["x"], ["y"], ["x", "y"], ["x", "x"]]))
            model = draw(st.sampled_from([None, "m1", "m2"]))
            for attempt in range(draw(st.integers(1, 3))):
                kind = draw(st.sampled_from("ppfe"))
                score = None if kind == "e" else draw(st.sampled_from([0.2, 0.5, 0.85, 1.0]))
                rows.append(
                    {
                        "run_id": run,
                        "case_id": case,
                        "attempt": attempt,
                        "config_id": config_id,
                        "status": "error" if kind == "e" else "ok",
                        "score": score,
                        "verdict": "error" if kind == "e" else ("pass" if kind == "p" else "fail"),
                        "passed": kind == "p",
                        "latency_ms": draw(st.sampled_from([None, 100.0, 250.0])),
                        "cost_usd": None,
                        "input_tokens": None,
                        "output_tokens": None,
                        "tags": tags,  # case-level tags: every attempt of a case alike
                        "model": model,
                    }
                )
    return rows


CONFIG = ef.config_from_dict({"attempts": {"k": [1, 2]}})


@pytest.mark.slow
@settings(SETTINGS, max_examples=20)
@given(executions(CONFIG.config_id), st.sampled_from(["tag", "model", "attempt"]))
def test_slice_summary_is_run_summary_per_slice(rows, by):
    got = slice_summary(pl.LazyFrame(rows, schema=SCHEMA), CONFIG, by=by).collect()
    expected = []
    for value, members in rs.slice_of(rows, by).items():
        for r in ref.run_summary(members, CONFIG):
            cases = ref.case_summary([m for m in members if m["run_id"] == r["run_id"]], CONFIG)
            pk = rs.pass_k_columns(cases, [1, 2]).get(r["run_id"], {})
            expected.append({**r, **pk, "slice": by, "slice_value": value})
    key = lambda r: (r["run_id"], r["slice_value"] or "\x00")  # noqa: E731
    want = {key(r): r for r in expected}
    have = {key(r): r for r in got.iter_rows(named=True)}
    assert set(have) == set(want)
    for k, w in want.items():
        for col, value in w.items():
            if col in have[k]:
                assert close(have[k][col], value), (k, col, have[k][col], value)
    assert "pass_at_2_se" in got.columns and got.columns[:4] == [
        "config_id",
        "run_id",
        "slice",
        "slice_value",
    ]


@pytest.mark.slow
@settings(SETTINGS, max_examples=150)
@given(executions(CONFIG.config_id), st.sampled_from(["tag", "model", "attempt"]))
def test_slice_summary_is_run_summary_per_slice_many(rows, by):
    test_slice_summary_is_run_summary_per_slice.hypothesis.inner_test(rows, by)


@pytest.mark.slow
@settings(SETTINGS, max_examples=20)
@given(executions(CONFIG.config_id), st.sampled_from(["tag", "model", "attempt"]))
def test_slice_deltas_equal_the_compare_reference_per_slice(rows, by):
    pairs = [("r1", "r2"), ("r2", "r1")]
    if not rows:
        return
    got = slice_deltas(pl.LazyFrame(rows, schema=SCHEMA), pairs, CONFIG, by=by).collect()
    limits = {CONFIG.config_id: CONFIG.compare.model_dump()}
    expected = []
    for value, members in rs.slice_of(rows, by).items():
        cases = ref.case_summary(members, CONFIG)
        for cols in reference_compare(cases, pairs, limits, [], None)["run_deltas"]:
            expected.append({**cols, "slice_value": value})
    for b, c in pairs:
        mine = [r for r in expected if (r["baseline_run_id"], r["candidate_run_id"]) == (b, c)]
        for r, q in zip(mine, rs.bh_q_values([r["mcnemar_p"] for r in mine]), strict=True):
            r["q_value"] = q
    skip = {"baseline_pass_rate", "candidate_pass_rate", "reasons", "regression_detected"}
    key = lambda r: (r["baseline_run_id"], r["slice_value"] or "\x00")  # noqa: E731
    want = {key(r): r for r in expected}
    have = {key(r): r for r in got.iter_rows(named=True)}
    assert set(have) == set(want)
    for k, w in want.items():
        for col in have[k]:
            if col in w and col not in skip:
                assert close(have[k][col], w[col]), (k, col, have[k][col], w[col])


@pytest.mark.slow
@settings(SETTINGS, max_examples=150)
@given(executions(CONFIG.config_id), st.sampled_from(["tag", "model", "attempt"]))
def test_slice_deltas_equal_the_compare_reference_per_slice_many(rows, by):
    test_slice_deltas_equal_the_compare_reference_per_slice.hypothesis.inner_test(rows, by)


def test_slice_values_literal():
    rows = [
        # run, case, tags, passed
        ("r", "a", ["x", "y"], True),
        ("r", "b", ["x"], False),
        ("r", "c", [], True),
        ("r", "d", None, False),
    ]
    frame = pl.LazyFrame(
        [
            {
                "run_id": r,
                "case_id": c,
                "attempt": 0,
                "config_id": ef.Config().config_id,
                "status": "ok",
                "score": 1.0 if p else 0.0,
                "verdict": "pass" if p else "fail",
                "passed": p,
                "latency_ms": None,
                "cost_usd": None,
                "input_tokens": None,
                "output_tokens": None,
                "tags": t,
                "model": None,
            }
            for r, c, t, p in rows
        ],
        schema=SCHEMA,
    )
    got = slice_summary(frame, by="tag").collect()
    assert got.select("slice_value", "executions", "passed", "pass_rate").rows() == [
        ("x", 2, 1, 0.5),
        ("y", 1, 1, 1.0),
        (None, 2, 1, 0.5),
    ]


def test_slicing_by_an_unknown_column_lists_the_choices():
    frame = pl.LazyFrame(schema=SCHEMA)
    with pytest.raises(ef.EvalframeError, match=r"no such executions column.*columns: .*model"):
        slice_summary(frame, by="nope").collect()
    with pytest.raises(ef.EvalframeError, match=r"'verdict': it is computed by scoring"):
        slice_summary(frame, by="verdict").collect()


def test_slicing_by_attempt_gives_one_slice_per_attempt_number():
    rows = [
        {"run_id": "r", "case_id": c, "attempt": a, "config_id": CONFIG.config_id,
         "status": "ok", "score": 1.0 if p else 0.0, "verdict": "pass" if p else "fail",
         "passed": p, "latency_ms": None, "cost_usd": None, "input_tokens": None,
         "output_tokens": None, "tags": [], "model": None}
        for c, a, p in (("a", 0, True), ("a", 1, False), ("b", 0, True), ("b", 1, True))
    ]  # fmt: skip
    got = slice_summary(pl.LazyFrame(rows, schema=SCHEMA), CONFIG, by="attempt").collect()
    assert got.select("slice_value", "executions", "pass_rate").rows() == [
        ("0", 2, 1.0),
        ("1", 2, 0.5),
    ]


def test_significant_regressions_need_q_below_005_and_net_flips_down():
    table = pl.DataFrame(
        {
            "slice_value": ["a", "b", "c"],
            "q_value": [0.01, 0.01, 0.2],
            "n_passed_to_failed": [9, 0, 9],
            "n_failed_to_passed": [0, 9, 0],
        }
    )
    assert significant_regressions(table)["slice_value"].to_list() == ["a"]


@pytest.mark.slow
def test_cli_score_and_compare_write_slice_tables(tmp_path):
    from typer.testing import CliRunner

    from evalframe._private.data.demo import write_demo
    from evalframe.cli import app

    data = write_demo(tmp_path / "d", n_cases=30)
    out = tmp_path / "out"
    score = CliRunner().invoke(app, ["score", str(data), "--by", "tag", "-o", str(out)])
    assert score.exit_code == 0, score.output
    assert pl.read_parquet(out / "slice_summary.parquet")["slice"].unique().to_list() == ["tag"]
    by_status = CliRunner().invoke(
        app, ["score", str(data), "--by", "status", "-o", str(tmp_path / "status")]
    )
    assert by_status.exit_code == 0, by_status.output
    sliced = pl.read_parquet(tmp_path / "status" / "slice_summary.parquet")
    assert sliced["slice"].unique().to_list() == ["status"]  # any executions column
    executions = pl.read_parquet(data / "executions.parquet")
    assert set(sliced["slice_value"]) == set(executions["status"].cast(pl.String))
    out2 = tmp_path / "out2"
    result = CliRunner().invoke(
        app, ["compare", str(data), "--pairs", "consecutive", "--by", "tag", "-o", str(out2)]
    )
    assert result.exit_code in (0, 1), result.output
    deltas = pl.read_parquet(out2 / "slice_deltas.parquet")
    assert deltas["q_value"].is_not_null().all()
    assert "Benjamini" in result.output


SLICED_PAIR = [  # billing: 14 cases pass → fail; refunds: 14 cases unchanged
    *((f"b{i}", "billing", 0.95, 0.3) for i in range(14)),
    *((f"r{i}", "refunds", 0.95, 0.95) for i in range(14)),
]


@pytest.mark.slow
def test_compare_report_names_the_slices_whose_regression_survives_bh(tmp_path):
    from typer.testing import CliRunner

    from evalframe.cli import app
    from tests.test_stats import write_two_runs

    data = write_two_runs(tmp_path / "d", SLICED_PAIR)
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["compare", str(data), "--by", "tag", "-o", str(out)])
    assert result.exit_code == 1, result.output
    deltas = pl.read_parquet(out / "slice_deltas.parquet").sort("slice_value")
    assert deltas["slice_value"].to_list() == ["billing", "refunds"]
    # McNemar over 14 flips one way: p = 2 / 2^14; BH over m = 2 slices: q = 2 p / 1
    p = 2 / 2**14
    assert deltas["mcnemar_p"].to_list() == pytest.approx([p, 1.0])
    assert deltas["q_value"].to_list() == pytest.approx([2 * p, 1.0])
    text = " ".join(result.output.split())
    assert (
        f"slices that regressed (tag, Benjamini–Hochberg q < 0.05): a-base → b-cand: "
        f"billing (q {2 * p:.4g})" in text  # 0.0002441: significant digits, never 0.0
    )
    assert "refunds (q" not in text
    # without a regressed slice the report says so
    calm = [(c, t, 0.95, 0.95) for c, t, _, _ in SLICED_PAIR]
    data = write_two_runs(tmp_path / "calm", calm)
    result = CliRunner().invoke(
        app, ["compare", str(data), "--by", "tag", "-o", str(tmp_path / "o2")]
    )
    assert result.exit_code == 0, result.output
    assert "no tag slice of a-base → b-cand regressed beyond chance" in " ".join(
        result.output.split()
    )


def test_score_by_a_column_of_many_values_prints_the_largest_slices_only(tmp_path):
    from typer.testing import CliRunner

    from evalframe.cli import app

    n = 60
    data = tmp_path / "data"
    data.mkdir()
    cases = [f"c{i:02d}" for i in range(n)]
    pl.DataFrame(
        {"run_id": "r", "case_id": cases, "evaluator": "m", "score": [0.9] * n}
    ).write_parquet(data / "scores.parquet")
    # cases c00..c09 share the value "big": the largest slice; 50 more of one execution each
    uid = ["big" if i < 10 else f"u{i:02d}" for i in range(n)]
    pl.DataFrame({"run_id": "r", "case_id": cases, "uid": uid}).write_parquet(
        data / "executions.parquet"
    )
    result = CliRunner().invoke(app, ["score", str(data), "--by", "uid", "-o", str(tmp_path / "o")])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "51 values of uid: the 50 with the most executions are shown" in text
    assert "│ big │ r │ 10 │" in text
    assert sum(f"│ u{i:02d} │" in text for i in range(10, n)) == 49
    slices = pl.read_parquet(tmp_path / "o" / "slice_summary.parquet")
    assert slices.height == 51
