"""The analyst's view (issue 21): the report is part of the base install and the demo
writes it; the per-pair evaluator summary with ties; Wilson intervals with the clustered
effective sample size; the policy in the header; every regressed and failing case with its
reasons; counts named so they reconcile."""

from __future__ import annotations

import math
import re
import sys
import tomllib
from pathlib import Path

import narwhals as nw
import polars as pl
import pytest
from polars.testing import assert_frame_equal
from typer.testing import CliRunner

from evalframe._private.cli import report_command
from evalframe._private.compare.evaluator_summary import behind_evaluators, evaluator_summary
from evalframe._private.rules.constants import Z_95
from evalframe._private.rules.wilson import effective_n, wilson_high, wilson_low
from evalframe.cli import app

ROOT = Path(__file__).resolve().parents[1]
runner = CliRunner()


# --- 1. the first command shows the report -------------------------------------------
def test_altair_and_vl_convert_are_base_dependencies_and_the_extra_still_resolves() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    names = {re.split(r"[<>=\[ ;]", d, maxsplit=1)[0] for d in project["dependencies"]}
    assert {"altair", "vl-convert-python"} <= names
    # `pip install 'evalframe[report]'` keeps working: the extra exists (and adds nothing)
    assert project["optional-dependencies"]["report"] == []


def test_demo_writes_and_names_the_report(tmp_path: Path) -> None:
    result = runner.invoke(app, ["demo", str(tmp_path / "demo"), "--cases", "12"])
    assert result.exit_code == 0, result.output
    report = tmp_path / "demo" / "report.html"
    assert report.is_file()
    assert "report written to" in result.output and "report.html" in result.output
    assert "no report" not in result.output


def test_demo_report_says_why_when_the_install_is_broken(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setitem(sys.modules, "vl_convert", None)  # import raises ImportError
    assert report_command.demo_report(tmp_path) is None
    err = capsys.readouterr().err
    assert "no report" in err and "reinstall evalframe" in err and "vl_convert" in err
    assert not (tmp_path / "report.html").exists()


# --- 3. which metric moved: evaluator summary ----------------------------------------
PAIR = {"config_id": "c", "baseline_run_id": "b", "candidate_run_id": "n"}


def _ed(rows: list[tuple[str, str, float | None, str]]) -> pl.DataFrame:
    """evaluator_deltas rows (case, path, delta, status) of one pair."""
    return pl.DataFrame(
        {
            **{k: [v] * len(rows) for k, v in PAIR.items()},
            "case_id": [r[0] for r in rows],
            "path": [r[1] for r in rows],
            "baseline_score": [None if r[2] is None else 0.9 for r in rows],
            "candidate_score": [None if r[2] is None else 0.9 + r[2] for r in rows],
            "score_delta": [r[2] for r in rows],
            "status": [r[3] for r in rows],
        }
    )


CASE_DELTAS = pl.DataFrame(
    {
        **{k: [v] * 4 for k, v in PAIR.items()},
        "case_id": ["c1", "c2", "c3", "c4"],
        "score_delta": [-0.4, -0.3, 0.0, -0.02],
        "status": ["regression", "regression", "unchanged", "regression"],
    }
)
EVALUATOR_DELTAS = _ed(
    [
        # c1: tool and param tie at -0.4 (the case has a tie)
        ("c1", "tool", -0.4, "regression"),
        ("c1", "param", -0.4, "regression"),
        ("c1", "tone", 0.0, "unchanged"),
        # c2: tool alone is the worst
        ("c2", "tool", -0.6, "regression"),
        ("c2", "param", -0.1, "regression"),
        ("c2", "tone", 0.2, "improvement"),
        # c3: unchanged case; tool fell but the case did not regress
        ("c3", "tool", -0.2, "regression"),
        ("c3", "param", 0.2, "improvement"),
        ("c3", "tone", None, "error"),
        # c4: a pass -> fail flip with drops below case_delta: nothing fell beyond it
        ("c4", "tool", -0.02, "unchanged"),
        ("c4", "param", 0.0, "unchanged"),
        ("c4", "tone", -0.01, "unchanged"),
    ]
)


def test_evaluator_summary_against_a_literal_table() -> None:
    got = evaluator_summary(EVALUATOR_DELTAS, CASE_DELTAS)
    tool = [-0.4, -0.6, -0.2, -0.02]
    tool_mean = sum(tool) / 4
    tool_se = math.sqrt(sum((x - tool_mean) ** 2 for x in tool) / 3) / 2
    expected = pl.DataFrame(
        {
            **{k: [v] * 3 for k, v in PAIR.items()},
            "path": ["tool", "param", "tone"],
            "rank": [1, 2, 3],
            "n_paired": [4, 4, 3],
            "n_fell": [3, 2, 0],
            "n_fell_in_regressions": [2, 2, 0],
            "n_regression": [3, 3, 3],
            "share_of_regressions": [2 / 3, 2 / 3, 0.0],
            # c1 tie (tool, param), c2 tool, c4 tool (-0.02 < -0.01)
            "n_worst": [3, 1, 0],
            "n_worst_tied": [1, 1, 0],
            "mean_delta": [tool_mean, (-0.4 - 0.1 + 0.2 + 0.0) / 4, (0.0 + 0.2 - 0.01) / 3],
        },
        schema_overrides={c: pl.UInt32 for c in ("rank", "n_paired", "n_fell")}
        | {c: pl.UInt32 for c in ("n_fell_in_regressions", "n_regression", "n_worst")}
        | {"n_worst_tied": pl.UInt32},
    )
    assert_frame_equal(got.select(expected.columns), expected, abs_tol=1e-12)
    tool_row = got.row(0, named=True)
    assert tool_row["mean_delta_se"] == pytest.approx(tool_se)
    assert tool_row["mean_delta_ci_low"] == pytest.approx(tool_mean - Z_95 * tool_se)
    assert tool_row["mean_delta_ci_high"] == pytest.approx(tool_mean + Z_95 * tool_se)
    # tool and param explain the same number of regressions: a tie, marked on both
    assert got["tied"].to_list() == [True, True, False]
    assert got["is_leaf"].all()


def test_evaluator_summary_tie_breaks_by_mean_delta_and_has_no_share_without_regressions():
    no_regression = CASE_DELTAS.with_columns(pl.lit("unchanged").alias("status"))
    got = evaluator_summary(EVALUATOR_DELTAS, no_regression)
    assert got["share_of_regressions"].is_null().all()
    assert got["n_regression"].to_list() == [0, 0, 0]
    assert not got["tied"].any()
    assert got["path"].to_list() == ["tool", "param", "tone"]  # mean delta, lowest first


def test_behind_evaluators_keeps_every_tied_leaf_and_skips_composites() -> None:
    tree = pl.concat(
        [
            EVALUATOR_DELTAS,
            # a composite over tool and param with the same -0.4 for c1 is not a leaf
            _ed([("c1", "routing", -0.4, "regression"), ("c1", "routing/x", -0.4, "regression")]),
        ]
    )
    got = behind_evaluators(tree, CASE_DELTAS).collect().sort("case_id")
    assert got["case_id"].to_list() == ["c1", "c2", "c3", "c4"]
    assert got["behind_paths"].to_list() == [
        ["param", "routing/x", "tool"],
        ["tool"],
        ["tool"],
        ["tool"],
    ]
    assert got["behind_delta"].to_list() == pytest.approx([-0.4, -0.6, -0.2, -0.02])
    # a case where nothing fell has no row
    risen = CASE_DELTAS.filter(pl.col("case_id") == "c3")
    only_rises = EVALUATOR_DELTAS.filter(pl.col("score_delta").fill_null(0) >= 0)
    assert behind_evaluators(only_rises, risen).collect().height == 0


# --- 5. Wilson interval with the clustered effective sample size ----------------------
def _wilson(p: float, n: float) -> tuple[float, float]:
    z = Z_95
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


WILSON_INPUT = pl.DataFrame(
    {
        "p": [1.0, 0.0, 0.5, 0.9, None],
        "se": [0.0, None, 0.05, 0.02, None],
        "cases": [200, 50, 200, 200, 0],
    }
)


@pytest.mark.parametrize("ns", [pl, nw], ids=["polars", "narwhals-duckdb"])
def test_wilson_rule_does_not_collapse_at_the_edges(ns) -> None:
    import duckdb

    frame = WILSON_INPUT
    if ns is nw:
        con = duckdb.connect()
        con.register("wilson_input", WILSON_INPUT.to_arrow())
        frame = nw.from_native(con.sql("select * from wilson_input"))
    n = effective_n(ns, ns.col("p"), ns.col("se"), ns.col("cases"))
    out = frame.with_columns(n.alias("n")).with_columns(
        wilson_low(ns, ns.col("p"), ns.col("n")).alias("lo"),
        wilson_high(ns, ns.col("p"), ns.col("n")).alias("hi"),
    )
    got = pl.DataFrame(out.to_native().pl() if ns is nw else out).sort("cases", "p")
    by_p = {r["p"]: r for r in got.iter_rows(named=True)}
    # 100 %: n_eff falls back to the cases; the interval is not [100 %, 100 %]
    assert by_p[1.0]["n"] == 200
    assert (by_p[1.0]["lo"], by_p[1.0]["hi"]) == pytest.approx(_wilson(1.0, 200))
    assert by_p[1.0]["lo"] < 0.99 and by_p[1.0]["hi"] == 1.0
    assert (by_p[0.0]["lo"], by_p[0.0]["hi"]) == pytest.approx(_wilson(0.0, 50))
    assert by_p[0.0]["hi"] > 0.05
    # inside: n_eff = p (1 - p) / se^2 (a clustered se of 0.05 at p 0.5 is 100 trials)
    assert by_p[0.5]["n"] == pytest.approx(100.0)
    assert (by_p[0.5]["lo"], by_p[0.5]["hi"]) == pytest.approx(_wilson(0.5, 100.0))
    assert by_p[0.9]["n"] == pytest.approx(225.0)
    assert by_p[None]["lo"] is None and by_p[None]["hi"] is None


def test_wilson_rule_answers_like_the_sql_macro() -> None:
    import duckdb

    con = duckdb.connect()
    con.execute((ROOT / "sql" / "wilson_interval.sql").read_text(encoding="utf-8"))
    for passed, n in ((200, 200), (0, 200), (180, 200), (3, 7)):
        lo, hi = con.execute(f"select unnest(wilson_interval({passed}, {n}))").fetchone()
        got = pl.select(
            wilson_low(pl, pl.lit(passed / n), pl.lit(float(n))).alias("lo"),
            wilson_high(pl, pl.lit(passed / n), pl.lit(float(n))).alias("hi"),
        ).row(0)
        assert got == pytest.approx((lo, hi))
