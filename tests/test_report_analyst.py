"""The analyst's view: the report is part of the base install and the demo
writes it; the per-pair evaluator summary with ties; Wilson intervals with the clustered
effective sample size; the policy in the header; every regressed and failing case with its
reasons; counts named so they reconcile."""

from __future__ import annotations

import json
import math
import re
import sys
import tomllib
from datetime import datetime
from pathlib import Path

import narwhals as nw
import polars as pl
import pytest
from polars.testing import assert_frame_equal
from typer.testing import CliRunner

import evalframe as ef
import evalframe.plots as efp
from evalframe._private.compare.evaluator_summary import behind_evaluators, evaluator_summary
from evalframe._private.rules.constants import Z_95
from evalframe._private.rules.wilson import effective_n, wilson_high, wilson_low
from evalframe.cli import app
from evalframe.cli import report as report_command

ROOT = Path(__file__).resolve().parents[1]
runner = CliRunner()


# --- 1. the first command shows the report -------------------------------------------
def test_altair_and_vl_convert_are_base_dependencies_and_the_extra_still_resolves() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    names = {re.split(r"[<>=\[ ;]", d, maxsplit=1)[0] for d in project["dependencies"]}
    assert {"altair", "vl-convert-python"} <= names
    # `pip install 'evalframe[report]'` keeps working: the extra exists (and adds nothing)
    assert project["optional-dependencies"]["report"] == []


@pytest.mark.slow
def test_demo_writes_and_names_the_report(demo_command) -> None:
    result, target = demo_command  # `demo DIR --cases 12`, run once (tests/conftest.py)
    assert result.exit_code == 0, result.output
    report = target / "report.html"
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


# --- 2, 4, 5, 6: the written report -----------------------------------------------------
def _small_dataset() -> ef.Dataset:
    """Two runs × three cases × two evaluators with judge reasons, labels and outcome checks:
    c1 regresses pass → fail (tone and facts fall alike: a tie), c2 regresses score-only,
    c3 is unchanged; in the candidate c1 also fails an outcome check."""
    runs, cases = ["r1", "r2"], ["c1", "c2", "c3"]
    scores = {  # (run, case) -> (tone, facts)
        ("r1", "c1"): (1.0, 1.0),
        ("r1", "c2"): (0.5, 0.5),
        ("r1", "c3"): (0.9, 0.9),
        ("r2", "c1"): (0.4, 0.4),
        ("r2", "c2"): (0.3, 0.4),
        ("r2", "c3"): (0.9, 0.9),
    }
    rows = [
        (run, case, ev, s[i])
        for (run, case), s in scores.items()
        for i, ev in enumerate(("tone", "facts"))
    ]
    frame = pl.DataFrame(rows, schema=["run_id", "case_id", "evaluator", "score"], orient="row")
    frame = frame.with_columns(
        pl.when((pl.col("run_id") == "r2") & (pl.col("case_id") == "c1"))
        .then(pl.format("judge: {} went off topic </script><b>x", pl.col("evaluator")))
        .alias("reason"),
        pl.when(pl.col("score") < 0.5).then(pl.lit("Poor")).alias("label"),
    )
    outcomes = pl.DataFrame(
        {
            "run_id": ["r1", "r2"],
            "case_id": ["c1", "c1"],
            "attempt": [0, 0],
            "outcome": ["refund offered", "refund offered"],
            "passed": [True, False],
            "justification": ["offered a refund", "never mentioned a refund"],
        }
    )
    assert runs and cases
    return ef.Dataset.from_frames(frame, outcomes=outcomes)


def _payload(page: str) -> list[dict]:
    found = re.search(r"<script type='application/json' id='case-data'>(.*?)</script>", page, re.S)
    assert found, "no embedded case data"
    return json.loads(found.group(1))


@pytest.fixture(scope="module")
def small_page() -> str:
    cfg = ef.load_config(None)
    tables = efp.report_tables(_small_dataset(), cfg, what_if=False)
    return efp.build_report(tables, config=cfg, source="small")


@pytest.mark.slow
def test_every_regressed_case_has_a_row_with_reasons_labels_and_checks(small_page) -> None:
    rows = _payload(small_page)
    regressed = {r["case_id"]: r for r in rows if r["kind"] == "regression"}
    assert sorted(regressed) == ["c1", "c2"]
    c1 = regressed["c1"]
    assert c1["flip"] == "pass→fail" and regressed["c2"]["flip"] == "score-only"
    assert c1["behind_paths"] == ["facts", "tone"]  # a tie: both fell 0.6
    by_evaluator = {e["evaluator"]: e for e in c1["evaluators"]}
    assert by_evaluator["tone"]["reasons"] == ["judge: tone went off topic </script><b>x"]
    assert by_evaluator["tone"]["labels"] == ["Poor"]
    assert by_evaluator["tone"]["baseline_score"] == 1.0 and by_evaluator["tone"]["score"] == 0.4
    checks = {(o["side"], o["passed"]): o["justification"] for o in c1["outcomes"]}
    assert checks[("candidate", False)] == "never mentioned a refund"
    assert checks[("baseline", True)] == "offered a refund"
    # a failing case of a run: r2's c1 and c2 (c1 fails its outcome check)
    failing = {(r["run_id"], r["case_id"]) for r in rows if r["kind"] == "fail"}
    assert {("r2", "c1"), ("r2", "c2")} <= failing
    # the page holds an explorer per pair and per run, and the script that fills them
    assert "<div class='cases' data-group=" in small_page and "data-kind='regression'" in small_page
    assert "input type='search' class='case-search'" in small_page
    assert 'tr.addEventListener("click", toggle)' in small_page
    # no text closes the data's script element: <, > and & travel as \u escapes
    assert "off topic </script><b>x" not in small_page
    assert "off topic \\u003c/script\\u003e\\u003cb\\u003ex" in small_page


@pytest.mark.slow
def test_the_embedded_cases_are_capped_with_a_note_saying_how_to_get_the_rest() -> None:
    cfg = ef.load_config(None)
    tables = efp.report_tables(_small_dataset(), cfg, what_if=False, per_pair=1, per_run=1)
    page = efp.build_report(tables, config=cfg, source="small")
    rows = _payload(page)
    assert [r["case_id"] for r in rows if r["kind"] == "regression"] == ["c1"]  # the worst
    assert "The page holds the worst 1 of 2; the other 1 with" in page
    assert "evalframe cases small --run r2 --status regression" in page
    assert "select * from case_deltas where candidate_run_id = 'r2' and status = 'regression'" in (
        page
    )


@pytest.mark.slow
def test_pairs_and_runs_beyond_the_embedded_ones_get_a_note() -> None:
    from evalframe._private.report.cases import CASE_DETAILS, case_details

    three = _small_dataset()
    extra = three.scores.filter(pl.col("run_id") == "r1").with_columns(pl.lit("r0").alias("run_id"))
    ds = ef.Dataset.from_frames(
        pl.concat([extra.collect(), three.scores.collect()]), outcomes=three.outcomes.collect()
    )
    cfg = ef.load_config(None)
    tables = efp.report_tables(ds, cfg, what_if=False)
    tables[CASE_DETAILS] = case_details(tables, pairs=1, runs=1)  # the latest pair and run
    page = efp.build_report(tables, config=cfg, source="three")
    assert "are not embedded: the page holds those of the latest 5 pairs only" not in page
    assert page.count("class='cases' data-group=") == 2  # one pair's, one run's
    assert "Failing cases of 2 earlier runs are not embedded" in page  # r0 and r1 fail c2


def test_case_details_stay_bounded_for_500_runs_of_200_cases() -> None:
    from evalframe._private.report.cases import (
        CASE_PAIRS,
        CASE_RUNS,
        CASES_PER_PAIR,
        CASES_PER_RUN,
        case_details,
    )

    runs = [f"run-{i:03d}" for i in range(500)]
    pairs = pl.DataFrame(
        {"config_id": "c", "baseline_run_id": runs[:-1], "candidate_run_id": runs[1:]}
    )
    cases = pl.DataFrame({"case_id": [f"case-{j:03d}" for j in range(200)]})
    case_deltas = pairs.join(cases, how="cross").with_columns(
        pl.lit(0.9).alias("baseline_score"),
        pl.lit(0.1).alias("candidate_score"),
        pl.lit(-0.8).alias("score_delta"),
        pl.lit(True).alias("baseline_passed"),
        pl.lit(False).alias("candidate_passed"),
        pl.lit("regression").alias("status"),
    )
    case_summary = pl.DataFrame({"config_id": "c", "run_id": runs}).join(cases, how="cross")
    case_summary = case_summary.with_columns(
        pl.lit(0.1).alias("score"), pl.lit(False).alias("passed"), pl.lit(0).alias("errored")
    )
    details = case_details(
        {
            "case_deltas": case_deltas,
            "run_deltas": pairs,
            "case_summary": case_summary,
            "run_summary": pl.DataFrame({"config_id": "c", "run_id": runs}),
        }
    )
    assert details.height == CASE_PAIRS * CASES_PER_PAIR + CASE_RUNS * CASES_PER_RUN
    assert set(details.filter(pl.col("kind") == "fail")["run_id"]) == set(runs[-CASE_RUNS:])


@pytest.mark.slow
def test_the_evaluator_summary_comes_first_and_marks_ties(small_page) -> None:
    pair = small_page[small_page.index("<h3><bdi>r1</bdi> → <bdi>r2</bdi>") :]
    summary = pair.index("Which evaluator moved")
    assert summary < pair.index("pass rate (all executions") < pair.index("Regressed cases</b>")
    table = pair[summary : pair.index("</table>", summary)]
    # both evaluators fell in both regressed cases: a tie, marked on each
    assert table.count("<span class='pill tie'>tie</span>") == 2
    assert "2 of 2" in table and "100.0%" in table
    assert "(1 tied)" in table  # c1's lowest delta is shared by tone and facts


@pytest.mark.slow
def test_the_header_states_the_policy_and_differs_by_threshold(tmp_path: Path) -> None:
    demo = ef.write_demo(tmp_path / "d", n_cases=12)
    pages = {}
    for t in ("0.7", "0.8"):
        out = tmp_path / f"r{t}.html"
        result = runner.invoke(app, ["report", str(demo), "-t", t, "--no-what-if", "-o", str(out)])
        assert result.exit_code == 0, result.output
        page = out.read_text(encoding="utf-8")
        pages[t] = page[page.index("<section id='policy'") : page.index("</section>")]
    assert "<b>threshold 0.7</b> (--threshold: overrides" in pages["0.7"]
    assert "<b>threshold 0.8</b>" in pages["0.8"]
    for policy in pages.values():
        assert "borderline band [0.6," in policy
        assert (
            "Run gates</b>: mean score meets <b>0.8</b> and pass rate meets <b>100.0%</b>" in policy
        )
        assert "pass-rate drop <b>0.0 pts</b>, mean-score drop <b>0.05</b>" in policy
        assert "mean-latency increase <b>20%</b>" in policy and "<b>0.05</b> (case_delta)" in policy
    cfg7 = ef.load_config(None, threshold=0.7)
    assert cfg7.config_id in pages["0.7"] and cfg7.config_id not in pages["0.8"]


@pytest.mark.slow
def test_run_table_rates_use_wilson_and_say_so(small_page) -> None:
    runs = small_page[small_page.index("<h2 id='runs'>") : small_page.index("<h2 id='compare'>")]
    assert "pass rate [95 % Wilson interval]" in runs
    assert "95 % Wilson interval with the clustered effective sample size" in runs
    # r1 passed 2 of 3 cases, se 1/3: n_eff = p (1 - p) / se^2 = 2 trials
    lo, hi = _wilson(2 / 3, 2.0)
    assert f"66.7% <span class='meta'>[{100 * lo:.1f}%, {100 * hi:.1f}%]</span>" in runs
    # a run at 100 %: Wilson over its cases, never [100.0%, 100.0%]
    perfect = ef.Dataset.from_frames(
        pl.DataFrame({"run_id": "r", "case_id": ["a", "b"], "evaluator": "m", "score": 1.0})
    )
    cfg = ef.load_config(None)
    page = efp.build_report(efp.report_tables(perfect, cfg, what_if=False), config=cfg)
    lo, _ = _wilson(1.0, 2)
    assert f"100.0% <span class='meta'>[{100 * lo:.1f}%, 100.0%]</span>" in page
    assert "[100.0%, 100.0%]" not in page


def test_counts_are_named_so_they_reconcile(small_page) -> None:
    assert "passed (after outcome gates)" in small_page
    assert "score verdicts pass / borderline / fail / error / unscored" in small_page
    assert "2 regression = 1 pass→fail + 1 score-only (verdict kept, score fell by more than" in (
        small_page
    )
    assert "pass rate (all executions of each run)" in small_page
    assert "paired pass change (cases in both runs, case passed)" in small_page
    assert "REGRESSION (run-level limits)" in small_page


# --- the rough edges: the demo's reasons, run and date labels, names that say what they are
def test_the_demo_carries_a_judge_reason_for_every_score_and_a_justification_per_check():
    from evalframe._private.data.demo import generate

    tables = generate(40)
    scores, outcomes = tables["scores"], tables["outcomes"]
    assert scores["reason"].null_count() == 0 and outcomes["justification"].null_count() == 0
    timed_out = scores.filter(pl.col("score").is_null())["reason"].unique().to_list()
    assert timed_out == ["judge timed out"]
    graded = scores.filter(pl.col("score").is_not_null())
    assert graded["reason"].n_unique() > 40  # per metric, grade and topic, not one text
    assert not graded["reason"].str.contains("{}", literal=True).any()
    low = graded.filter((pl.col("evaluator") == "tool_routing") & (pl.col("score") <= 2))
    assert low["reason"].str.contains("where the").all()  # a low grade reads as a fault
    assert generate(40)["scores"].equals(scores)  # deterministic


def test_the_history_charts_label_runs_by_id_and_name_their_legend(tmp_path) -> None:
    from evalframe._private.report.history import (
        flaky_strip_chart,
        history_data,
        history_trend_chart,
    )

    data = ef.write_demo(tmp_path / "d", n_cases=8)  # three runs: a history section
    frames = {k: v.lazy().collect() for k, v in ef.score_tables(data).items()}
    hist = history_data(frames)
    assert hist is not None
    trend = history_trend_chart(hist).to_dict()
    x = trend["layer"][0]["encoding"]["x"]
    assert x["type"] == "quantitative" and x["axis"]["values"] == [0, 1, 2]
    for run in hist.points["run_id"]:
        assert json.dumps(run) in x["axis"]["labelExpr"]
    strip = flaky_strip_chart(hist).to_dict()
    assert strip["encoding"]["color"]["title"] == "verdict in the run"
    assert strip["encoding"]["x"]["field"] == "run_id"


def test_trend_dates_carry_their_month() -> None:
    spec = efp.trend_chart(
        pl.DataFrame(
            {
                "config_id": ["c"] * 3,
                "run_id": ["a", "b", "c"],
                "created_at": [datetime(2026, 1, d) for d in (1, 9, 17)],
                "pass_rate": [0.5, 0.6, 0.7],
                "pass_rate_se": [0.05] * 3,
            }
        )
    ).to_dict()
    assert spec["layer"][0]["encoding"]["x"]["axis"]["format"] == "%Y-%m-%d"
