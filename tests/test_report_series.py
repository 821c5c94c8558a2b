"""The report within a series: `report --series COLUMN` pairs runs within each
value of a runs column, draws the trend one line per value, and says so; without it the
report notes pairs that mix model/target/agent values, as compare does."""

from __future__ import annotations

import re

import polars as pl
import pytest
from typer.testing import CliRunner

import evalframe as ef
import evalframe.plots as efp
from evalframe.cli import app

runner = CliRunner()


def _pairs(tables: dict[str, pl.DataFrame]) -> list[tuple[str, str]]:
    rd = tables["run_deltas"]
    return list(rd.select("baseline_run_id", "candidate_run_id").iter_rows())


@pytest.mark.slow
def test_report_tables_pair_within_the_series(alternating) -> None:
    cfg = ef.load_config(None)
    mixed = efp.report_tables(alternating, cfg, what_if=False)
    assert _pairs(mixed) == [("r1", "r2"), ("r2", "r3"), ("r3", "r4")]
    within = efp.report_tables(alternating, cfg, what_if=False, series="target")
    assert _pairs(within) == [("r1", "r3"), ("r2", "r4")]
    assert not within["run_deltas"]["regression_detected"].any()
    based = efp.report_tables(alternating, cfg, what_if=False, series="target", baseline="r2")
    assert _pairs(based) == [("r2", "r4")]
    with pytest.raises(ef.UsageError, match="not a column of the runs table"):
        efp.report_tables(alternating, cfg, what_if=False, series="modle")


def test_trend_chart_draws_one_line_per_series(alternating) -> None:
    rs = efp.report_tables(alternating, ef.load_config(None), what_if=False)["run_summary"]
    spec = efp.trend_chart(rs, series="target").to_dict()
    line = next(layer for layer in spec["layer"] if layer["mark"]["type"] == "line")
    assert line["encoding"]["color"]["field"] == "run_series"
    data = next(iter(spec["datasets"].values()))
    by_series = {}
    for row in data:
        by_series.setdefault(row["run_series"], []).append(row["run_id"])
    assert by_series == {"claude": ["r1", "r3"], "gpt-5": ["r2", "r4"]}
    plain = efp.trend_chart(rs).to_dict()  # without a series: one line, no colour
    assert all("color" not in layer["encoding"] for layer in plain["layer"])
    with pytest.raises(ef.ChartInputError, match="lacks modle"):
        efp.trend_chart(rs, series="modle")


def test_trend_chart_names_a_null_series_and_shows_odd_values_literally() -> None:
    rs = pl.DataFrame(
        {
            "config_id": ["c"] * 3,
            "run_id": ["a", "b", "c"],
            "pass_rate": [0.5, 1.0, 0.0],
            "pass_rate_se": [0.1, 0.0, 0.0],
            "cases": [10, 10, 10],
            "model": ["x\x1b[31m", None, "x\x1b[31m"],
        }
    )
    data = next(iter(efp.trend_chart(rs, series="model").to_dict()["datasets"].values()))
    assert [r["run_series"] for r in data] == ["x\\x1b[31m", "(none)", "x\\x1b[31m"]


@pytest.mark.slow
def test_report_cli_series_draws_per_series_and_says_so(alternating, tmp_path) -> None:
    out = tmp_path / "series.html"
    result = runner.invoke(
        app,
        ["report", str(alternating), "--series", "target", "--no-what-if", "-o", str(out)],
    )
    assert result.exit_code == 0, result.output
    page = out.read_text()
    assert "r1</bdi> → <bdi>r3" in page and "r2</bdi> → <bdi>r4" in page
    assert "r1</bdi> → <bdi>r2" not in page
    assert "Pairs are formed within each value of the runs column <b><bdi>target" in page
    assert "Mixed series" not in page
    trend = re.search(r"<figure class='chart' id='chart-trend'.*?</figure>", page, re.S)
    assert trend is not None and "One line per value of the runs column target" in trend[0]
    assert "per target" in trend[0]  # the chart's title


@pytest.mark.slow
def test_report_without_series_notes_pairs_that_mix_series(alternating, tmp_path) -> None:
    out = tmp_path / "mixed.html"
    result = runner.invoke(app, ["report", str(alternating), "--no-what-if", "-o", str(out)])
    assert result.exit_code == 0, result.output
    page = out.read_text()
    note = re.search(r"<p class='note series-note mixed'>(.*?)</p>", page, re.S)
    assert note is not None
    text = note[1]
    assert "pairs compare runs of different series: target (3 of 3 pairs" in text
    assert "pass --series target" in text
    # the note sits at the top of the comparison, before the first pair
    assert page.index("series-note mixed") < page.index("<h3>")
    unknown = runner.invoke(app, ["report", str(alternating), "--series", "nope", "-o", str(out)])
    assert unknown.exit_code == 2 and "not a column of the runs table" in unknown.output
