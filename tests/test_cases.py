"""`evalframe cases` / `ef.cases`: every regressed (or failing) case, one row each, with its
per-evaluator scores, the judge's labels and reasons and the outcome checks."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

import evalframe as ef
from evalframe._private.pipeline.cases import CASE_COLUMNS
from evalframe.cli import app

runner = CliRunner()
V14, V15, V16 = "2026-10-01-v1.4", "2026-10-15-v1.5", "2026-11-01-v1.6"
ODD_CASE = "[bold]case[/bold]-0003"


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    """The demo (6 cases) with judge labels and reasons, outcome justifications and one
    case id that is rich markup; scored and compared (consecutive pairs)."""
    path = tmp_path_factory.mktemp("cases") / "data"
    ef.write_demo(path, n_cases=6)
    odd = pl.when(pl.col("case_id") == "case-0003").then(pl.lit(ODD_CASE))
    scores = pl.read_parquet(path / "scores.parquet").with_columns(
        odd.otherwise(pl.col("case_id")).alias("case_id"),
        (pl.lit("[red]judge[/red] says ") + pl.col("evaluator") + " of " + pl.col("run_id")).alias(
            "reason"
        ),
        pl.when(pl.col("score") < 0.7 * pl.col("scale_max"))
        .then(pl.lit("Incomplete"))
        .alias("label"),
    )
    scores.write_parquet(path / "scores.parquet")
    for name in ("executions", "outcomes", "labels"):  # the demo labels ~10 % of executions
        frame = pl.read_parquet(path / f"{name}.parquet")
        frame = frame.with_columns(odd.otherwise(pl.col("case_id")).alias("case_id"))
        if name == "outcomes":
            frame = frame.with_columns(
                (pl.lit("checked: ") + pl.col("outcome")).alias("justification")
            )
        frame.write_parquet(path / f"{name}.parquet")
    assert runner.invoke(app, ["score", str(path)]).exit_code == 0
    assert runner.invoke(app, ["compare", str(path), "--pairs", "consecutive"]).exit_code in (0, 1)
    return path


def _deltas(data: Path, name: str) -> pl.DataFrame:
    return ef.read_results(data, name)


@pytest.mark.slow
def test_every_regressed_case_of_the_run_is_one_row(data):
    found = ef.cases(data, V16)
    assert list(found.schema.items()) == list(CASE_COLUMNS.items())
    expected = _deltas(data, "case_deltas").filter(
        (pl.col("candidate_run_id") == V16) & (pl.col("status") == "regression")
    )
    assert expected.height > 0
    assert sorted(found["case_id"]) == sorted(expected["case_id"])
    assert set(found["baseline_run_id"]) == {V15} and set(found["status"]) == {"regression"}
    # worst first, the headline numbers those of case_deltas
    assert found["score_delta"].to_list() == sorted(found["score_delta"].to_list())
    joined = found.join(expected, on="case_id")
    assert (joined["score"] == joined["candidate_score"]).all()
    assert (joined["score_delta"] == joined["score_delta_right"]).all()


def test_per_evaluator_scores_match_evaluator_deltas_and_carry_the_judges_words(data):
    found = ef.cases(data, V16)
    evaluators = (
        found.select("baseline_run_id", "run_id", "case_id", "evaluators")
        .explode("evaluators")
        .unnest("evaluators")
    )
    deltas = _deltas(data, "evaluator_deltas").filter(pl.col("candidate_run_id") == V16)
    joined = evaluators.join(
        deltas,
        left_on=["baseline_run_id", "run_id", "case_id", "evaluator"],
        right_on=["baseline_run_id", "candidate_run_id", "case_id", "path"],
    )
    assert joined.height == evaluators.height > 0
    assert (joined["score_delta"] - joined["score_delta_right"]).abs().max() < 1e-12
    # each case's evaluators worst first
    for ev in found["evaluators"].to_list():
        deltas_of_case = [e["score_delta"] for e in ev]
        assert deltas_of_case == sorted(deltas_of_case)
    row = evaluators.row(0, named=True)
    assert row["reasons"] == [f"[red]judge[/red] says {row['evaluator']} of {V16}"]
    low = evaluators.filter(pl.col("score") < 0.7)
    assert low.height and all(labels == ["Incomplete"] for labels in low["labels"].to_list())
    outcomes = found.select("case_id", "outcomes").explode("outcomes").unnest("outcomes")
    checked = outcomes.drop_nulls("outcome")
    assert checked.height > 0
    assert (checked["justification"] == "checked: " + checked["outcome"]).all()


def test_failing_cases_of_a_run_are_those_of_case_summary(data):
    found = ef.cases(data, V14, status="fail")
    summary = ef.read_results(data, "case_summary").filter(
        (pl.col("run_id") == V14) & ~pl.col("passed")
    )
    assert summary.height > 0
    assert sorted(found["case_id"]) == sorted(summary["case_id"])
    assert found["baseline_run_id"].null_count() == found.height
    assert found["score"].to_list() == sorted(found["score"].to_list())
    every_run = ef.cases(data, status="fail")
    assert set(every_run["run_id"]) <= {V14, V15, V16}
    assert every_run.height >= found.height


@pytest.mark.slow
def test_evaluator_keeps_the_cases_where_it_fell(data):
    every = ef.cases(data, V16)
    deltas = every.select("case_id", "evaluators").explode("evaluators").unnest("evaluators")
    for name in deltas["evaluator"].unique().to_list():
        fell = deltas.filter((pl.col("evaluator") == name) & (pl.col("score_delta") < 0))
        got = ef.cases(data, V16, evaluator=name)
        assert sorted(got["case_id"]) == sorted(fell["case_id"]), name
    with pytest.raises(ef.UsageError, match="unknown evaluator 'nope'"):
        ef.cases(data, V16, evaluator="nope")


def test_cli_prints_every_case_with_reasons_literally(data):
    result = runner.invoke(app, ["cases", str(data), "--run", V16], terminal_width=200)
    assert result.exit_code == 0, result.output
    regressed = ef.cases(data, V16)
    assert f"{regressed.height} regression case" in result.output
    for case in regressed["case_id"]:
        assert case in result.output
    assert f"[red]judge[/red] says tool_routing of {V16}" in result.output
    assert "checked: resolves the customer's request" in result.output
    assert f"{V15} → {V16}" in result.output


def test_cli_prints_a_markup_case_id_literally(data):
    failing = set(ef.cases(data, V14, status="fail")["case_id"])
    status = "fail" if ODD_CASE in failing else "pass"
    assert ODD_CASE in set(ef.cases(data, V14, status=status)["case_id"])
    result = runner.invoke(
        app, ["cases", str(data), "--status", status, "--run", V14], terminal_width=200
    )
    assert result.exit_code == 0, result.output
    assert ODD_CASE in result.output


@pytest.mark.slow
def test_cli_json_and_csv_are_every_row(data):
    as_json = runner.invoke(app, ["cases", str(data), "--run", V16, "--json"])
    rows = json.loads(as_json.stdout)
    frame = ef.cases(data, V16)
    assert [r["case_id"] for r in rows] == frame["case_id"].to_list()
    assert rows[0]["evaluators"][0]["reasons"]
    as_csv = runner.invoke(app, ["cases", str(data), "--run", V16, "--csv"])
    parsed = pl.read_csv(as_csv.stdout.encode())
    assert parsed["case_id"].to_list() == frame["case_id"].to_list()
    assert json.loads(parsed["evaluators"][0]) == rows[0]["evaluators"]


@pytest.mark.slow
def test_cli_errors_name_what_is_missing(data, tmp_path):
    unknown = runner.invoke(app, ["cases", str(data), "--run", "nope"])
    assert unknown.exit_code == 2 and "known run ids" in unknown.output
    first = runner.invoke(app, ["cases", str(data), "--run", V14])
    assert first.exit_code == 2 and "no candidate of the pairs compared" in first.output
    fresh = tmp_path / "fresh"
    ef.write_demo(fresh, n_cases=3)
    assert runner.invoke(app, ["score", str(fresh)]).exit_code == 0
    missing = runner.invoke(app, ["cases", str(fresh)])
    assert missing.exit_code == 2
    assert "has no case_deltas" in missing.output and "evalframe compare" in missing.output
    # a run's statuses need no comparison: computed under the set's config
    assert runner.invoke(app, ["cases", str(fresh), "--status", "fail"]).exit_code == 0
    both = runner.invoke(app, ["cases", str(data), "--csv", "--json"])
    assert both.exit_code == 2
