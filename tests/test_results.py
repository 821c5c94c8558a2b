"""`evalframe results` and `ef.read_results`: listing sets, stale flags, reading one, the
latest or every set."""

from __future__ import annotations

import io
import json

import pytest
from typer.testing import CliRunner

import evalframe as ef
from evalframe._private.store.result_sets import ResultsNotFoundError
from evalframe.cli import app

runner = CliRunner()


@pytest.fixture
def scored(tmp_path):
    ds = ef.write_demo(tmp_path / "ds", n_cases=5)
    for args in (["score", str(ds), "-t", "0.7"], ["compare", str(ds)]):
        assert runner.invoke(app, args).exit_code in (0, 1)
    return ds


def _listing(ds) -> list[dict]:
    result = runner.invoke(app, ["results", str(ds), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.mark.slow
def test_results_lists_the_sets_with_provenance(scored):
    rows = _listing(scored)
    at_07, default = ef.load_config(threshold=0.7).config_id, ef.load_config().config_id
    # (result_set, latest, commands, tables, stale)
    assert [
        (r["result_set"], r["latest"], r["commands"], sorted(r["tables"]), r["stale"]) for r in rows
    ] == [
        (
            at_07,
            False,
            ["score"],
            # the demo has a labels table: judge_agreement and agreement_curve too
            [
                "agreement_curve",
                "case_summary",
                "execution_scores",
                "judge_agreement",
                "run_summary",
                "variance_components",
            ],
            False,
        ),
        (
            default,
            True,
            ["compare"],
            ["case_deltas", "evaluator_deltas", "evaluator_tests", "run_deltas"],
            False,
        ),
    ]
    assert rows[0]["tables"]["run_summary"] == 3
    assert rows[0]["rows"] == sum(rows[0]["tables"].values())
    assert rows[0]["evalframe_version"] == ef.__version__
    text = runner.invoke(app, ["results", str(scored)]).output
    assert at_07 in text and "latest" in text and "current" in text


@pytest.mark.slow
def test_a_set_is_stale_once_the_input_tables_change(scored, tmp_path):
    src = tmp_path / "new.csv"
    src.write_text("case_id,faithfulness\n1,0.5\n")
    ef.ingest("wide", [src], scored, run_id="2026-12-01-v1.7", scale_max=1.0)
    assert [r["stale"] for r in _listing(scored)] == [True, True]
    assert "stale:" in " ".join(runner.invoke(app, ["results", str(scored)]).output.split())
    sql = ["sql", str(scored), "select 1 as x"]
    assert "is stale" in " ".join(runner.invoke(app, sql).output.split())
    assert runner.invoke(app, ["score", str(scored), "-t", "0.7"]).exit_code == 0
    assert "stale" not in runner.invoke(app, sql).output  # the latest set is current again
    by_id = {r["result_set"]: r["stale"] for r in _listing(scored)}
    assert by_id[ef.load_config(threshold=0.7).config_id] is False


@pytest.mark.slow
def test_read_results_reads_the_latest_one_or_every_set(scored):
    at_07 = ef.load_config(threshold=0.7).config_id
    latest = ef.read_results(scored, "run_deltas")
    assert latest["config_id"].unique().to_list() == [ef.load_config().config_id]
    one = ef.read_results(scored, "run_summary", config_id=at_07)
    assert one["config_id"].unique().to_list() == [at_07]
    every = ef.read_results(scored / "results", "run_summary", config_id="all")
    assert every.select("config_id", "result_set").unique().rows() == [(at_07, at_07)]
    assert every.drop("result_set").equals(one)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("table", "config_id", "message"),
    [
        ("run_summary", None, "latest result set .* has no table 'run_summary'.*in set"),
        ("run_summary", "nope", "no result set 'nope'"),
        ("sweep", "all", "no result set in .* has a table 'sweep'"),
    ],
)
def test_read_results_errors_name_the_sets(scored, table, config_id, message):
    with pytest.raises(ResultsNotFoundError, match=message):
        ef.read_results(scored, table, config_id=config_id)


def test_no_results_yet(tmp_path):
    ds = ef.write_demo(tmp_path / "ds", n_cases=3)
    assert _listing(ds) == []
    assert "no result sets" in runner.invoke(app, ["results", str(ds)]).output
    with pytest.raises(ResultsNotFoundError, match="no result sets"):
        ef.read_results(ds, "run_summary")


@pytest.mark.slow
def test_results_never_cuts_a_set_id_on_a_narrow_terminal(scored, monkeypatch):
    from rich.console import Console

    from evalframe.cli import results as results_command

    narrow = Console(width=60, record=True, file=io.StringIO())
    monkeypatch.setattr(results_command, "stdout", narrow)
    results_command.results(scored)
    text = narrow.export_text()
    assert "…" not in text
    for row in _listing(scored):
        assert row["result_set"] in text
