"""Issue 18, the HTML report: `report --out` refuses what `score --out` refuses, long
histories render (thinned, with a note under the chart), ids with control or bidi
characters cannot abort the renderer or reorder a heading, and a full disk is a clear
error that leaves nothing half-written."""

from __future__ import annotations

import errno
import re
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

import evalframe as ef
import evalframe.plots as efp
from evalframe._private.report import html as report_html
from evalframe._private.report import plots as report_plots
from evalframe.cli import app
from evalframe.format import INVISIBLE, visible
from tests.test_report import ALL_CHARTS as REPORT_CHARTS

runner = CliRunner()

ALL_CHARTS = set(REPORT_CHARTS) - {"kappa_curve"}  # their data have no labels table


def write_history(path: Path, run_ids: list[str], n_cases: int = 3) -> Path:
    """A dataset folder of plain Parquet files: `run_ids` in created_at order (one day
    apart), `n_cases` cases each, one evaluator, a tag per case (so the report slices)."""
    path.mkdir(parents=True)
    start = datetime(2026, 1, 1)
    scores, executions = [], []
    for i, run in enumerate(run_ids):
        for k in range(n_cases):
            score = ((i * 7 + k * 13) % 10) / 10 + 0.05
            scores.append({"run_id": run, "case_id": f"c{k}", "evaluator": "q", "score": score})
            executions.append(
                {"run_id": run, "case_id": f"c{k}", "attempt": 0, "tags": [f"t{k % 2}"]}
            )
    pl.DataFrame(scores).write_parquet(path / "scores.parquet")
    pl.DataFrame(executions).write_parquet(path / "executions.parquet")
    pl.DataFrame(
        {
            "run_id": run_ids,
            "created_at": [start + timedelta(days=i) for i in range(len(run_ids))],
        }
    ).write_parquet(path / "runs.parquet")
    return path


def _figures(page: str) -> dict[str, str]:
    return dict(
        re.findall(
            r"<figure class='chart' id='chart-(\w+)'.*?(<figcaption>.*?)</figure>", page, re.S
        )
    )


def _invoke(args: list[str]) -> tuple[int, str]:
    result = runner.invoke(app, args)
    return result.exit_code, result.output


# --- display.visible: one rule, shared with the terminal -------------------------------------
@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("a\x1b[31mb", "a\\x1b[31mb"),
        ("\x00\x0b\x0c\x7f\x85\x9f", "\\x00\\x0b\\x0c\\x7f\\x85\\x9f"),
        ("tab\there\nnext", "tab\\x09here\\x0anext"),
        ("line\u2028para\u2029", "line\\u2028para\\u2029"),
        (
            "\u202aLRE\u202bRLE\u202cPDF\u202dLRO\u202eRLO",
            "\\u202aLRE\\u202bRLE\\u202cPDF\\u202dLRO\\u202eRLO",
        ),
        ("\u2066LRI\u2067RLI\u2068FSI\u2069PDI", "\\u2066LRI\\u2067RLI\\u2068FSI\\u2069PDI"),
    ],
)
def test_visible_shows_control_separator_and_bidi_characters_as_escapes(
    text: str, shown: str
) -> None:
    assert visible(text) == shown


def test_visible_keeps_everything_else_literal() -> None:
    text = "[/x] [bold]r2[/bold] <b>&amp; é 日本 עברית \\x1b \u200f \u00a0 🙂"
    assert visible(text) == text


def test_invisible_pattern_finds_in_polars_exactly_what_visible_escapes() -> None:
    chars = pl.Series([chr(c) for c in range(0x3000) if not 0xD800 <= c < 0xE000])
    found = chars.str.contains(INVISIBLE).to_list()
    assert found == [visible(c) != c for c in chars]


# --- report --out: the locations score --out refuses -------------------------------------------
@pytest.fixture
def scored(tmp_path: Path) -> Path:
    """A two-run dataset (plain Parquet input tables) with a committed result set."""
    data = write_history(tmp_path / "d", ["r1", "r2"])
    result = runner.invoke(app, ["score", str(data)])
    assert result.exit_code == 0, result.output
    return data


def test_report_out_refuses_an_input_table(scored: Path) -> None:
    table = scored / "scores.parquet"
    before = table.read_bytes()
    code, out = _invoke(["report", str(scored), "--no-what-if", "--out", str(table)])
    assert code == 2, out
    assert "input table scores" in out and "Traceback" not in out
    assert table.read_bytes() == before


def test_report_out_refuses_a_file_of_an_immutable_result_set(scored: Path) -> None:
    (set_link,) = (scored / "results").iterdir()
    target = set_link / "run_summary.parquet"
    before, listing = target.read_bytes(), sorted(p.name for p in set_link.iterdir())
    code, out = _invoke(["report", str(scored), "--no-what-if", "--out", str(target)])
    assert code == 2, out
    assert "result set" in out and "keeps unchanged" in out
    assert target.read_bytes() == before
    assert sorted(p.name for p in set_link.iterdir()) == listing  # no temp file either


def test_report_out_refuses_the_results_store(scored: Path) -> None:
    code, out = _invoke(
        ["report", str(scored), "--no-what-if", "--out", str(scored / "results" / "r.html")]
    )
    assert code == 2, out
    assert "inside the results store" in out
    assert not (scored / "results" / "r.html").exists()


def test_report_out_naming_a_folder_is_a_clear_error(scored: Path, tmp_path: Path) -> None:
    folder = tmp_path / "reports"
    folder.mkdir()
    (folder / "keep.txt").write_text("mine")
    code, out = _invoke(["report", str(scored), "--no-what-if", "--out", str(folder)])
    assert code == 2, out
    assert "is a folder" in out and f"--out {folder / 'report.html'}" in out.replace("\n", "")
    assert sorted(p.name for p in folder.iterdir()) == ["keep.txt"]
    # the results store: the hint is the default file, not a file inside the store
    code, out = _invoke(["report", str(scored), "--no-what-if", "--out", str(scored / "results")])
    assert code == 2 and "is a folder" in out
    assert f"--out {scored / 'report.html'}" in out.replace("\n", "")


def test_report_out_refuses_a_link_it_did_not_write(scored: Path, tmp_path: Path) -> None:
    mine = tmp_path / "notes.txt"
    mine.write_text("mine")
    link = tmp_path / "report.html"
    link.symlink_to(mine)
    code, out = _invoke(["report", str(scored), "--no-what-if", "--out", str(link)])
    assert code == 2, out
    assert "is a link" in out
    assert link.is_symlink() and mine.read_text() == "mine"


@pytest.mark.slow
def test_report_out_replaces_an_earlier_report(scored: Path, tmp_path: Path) -> None:
    page = tmp_path / "out" / "report.html"
    for _ in range(2):  # new file, then the existing one is replaced
        code, out = _invoke(["report", str(scored), "--no-what-if", "--out", str(page)])
        assert code == 0, out
    assert page.read_text().startswith("<!DOCTYPE html>")
    assert [p.name for p in page.parent.iterdir()] == ["report.html"]


# --- long histories --------------------------------------------------------------------------
@pytest.mark.slow
def test_62_runs_render_every_chart_with_a_note_on_what_was_thinned(tmp_path: Path) -> None:
    # run ids do not sort in time order: the charts keep the latest by created_at
    ids = [f"run-{(i * 37) % 62:02d}" for i in range(62)]
    data = write_history(tmp_path / "d", ids)
    page_path = tmp_path / "report.html"
    code, out = _invoke(["report", str(data), "--out", str(page_path)])
    assert code == 0, out
    page = page_path.read_text()
    figures = _figures(page)
    assert set(figures) == ALL_CHARTS
    assert "Not drawn" not in page
    notes = {name: cap for name, cap in figures.items() if "Thinned" in cap}
    assert set(notes) == ALL_CHARTS - {"trend"}  # the trend draws every run (one point each)
    assert "the latest 40 of 62 runs (by created_at, then run_id)" in notes["pass_rate"]
    assert "The run table lists every run." in notes["pass_rate"]
    assert "the latest 10 of 61 pairs" in notes["power_curve"]
    assert "The Comparison section lists every pair." in notes["power_curve"]
    # the score distribution (execution_scores has no created_at) keeps the latest in time
    dist = re.search(r"id='chart-score_distribution'.*?</figure>", page, re.S).group(0)
    assert ids[-1] in dist and ids[0] not in dist


def test_thinning_keeps_the_latest_runs_by_created_at() -> None:
    n = report_plots.MAX_RUNS + 5
    ids = [f"z{n - i:03d}" for i in range(n)]  # alphabetical order is the reverse of time
    run_summary = pl.DataFrame(
        {
            "config_id": "c",
            "run_id": ids,
            "created_at": [datetime(2026, 1, 1) + timedelta(days=i) for i in range(n)],
            "pass_rate": 0.5,
            "pass_rate_se": 0.1,
        }
    )
    chart = efp.pass_rate_chart(run_summary)
    drawn = {r["run_id"] for r in chart.to_dict()["datasets"].popitem()[1]}
    assert drawn == set(ids[-report_plots.MAX_RUNS :])
    assert efp.chart_note(chart) == (
        f"Thinned: only the latest {report_plots.MAX_RUNS} of {n} runs (by created_at, then "
        "run_id) are drawn."
    )
    assert efp.chart_note(efp.pass_rate_chart(run_summary.head(3))) is None


@pytest.mark.slow
def test_500_runs_render_with_a_sane_page_size(tmp_path: Path) -> None:
    ids = [f"r{i:03d}" for i in range(500)]
    data = write_history(tmp_path / "d", ids, n_cases=2)
    tables = efp.report_tables(data, ef.load_config(None))
    charts = efp.charts_for(tables)
    assert set(charts) == ALL_CHARTS
    for name, chart in charts.items():
        spec = chart.to_dict()  # Altair's max-rows check runs here
        rows = sum(len(v) for v in spec.get("datasets", {}).values())
        assert rows <= report_plots.MAX_CHART_ROWS or name == "trend", (name, rows)
    page = efp.build_report(tables, limits=ef.load_config(None).compare)
    assert set(_figures(page)) == ALL_CHARTS
    assert "Not drawn" not in page
    assert len(page.encode()) < 4_000_000


# --- ids in charts and headings ------------------------------------------------------------
HOSTILE = {
    "nul\x00id": "nul\\x00id",
    "vt\x0bid": "vt\\x0bid",
    "ff\x0cid": "ff\\x0cid",
    "esc\x1b[2Jid": "esc\\x1b[2Jid",
    "sep\u2028id": "sep\\u2028id",
    "rlo\u202eid": "rlo\\u202eid",
}


CONTROLS = ["nul\x00id", "vt\x0bid", "ff\x0cid", "esc\x1b[2Jid"]
"""Before the fix vl-convert aborted the process on these (SIGABRT)."""
SEPARATOR_AND_BIDI = ["sep\u2028id", "rlo\u202eid"]
"""Before the fix U+2028 broke a Vega expression; U+202E reversed a heading."""


@pytest.mark.slow
@pytest.mark.parametrize(
    ("ids", "in_a_subprocess"),
    [(CONTROLS, True), (SEPARATOR_AND_BIDI, False)],
    ids=["controls", "sep-bidi"],
)
def test_hostile_run_ids_render_visible_and_isolated(
    tmp_path: Path, ids: list[str], in_a_subprocess: bool
) -> None:
    data = write_history(tmp_path / "d", ids)
    page_path = tmp_path / "report.html"
    args = ["report", str(data), "--out", str(page_path)]
    if in_a_subprocess:
        # a subprocess: before the fix vl-convert aborted the process (SIGABRT) on these
        done = subprocess.run(
            [sys.executable, "-m", "evalframe", *args], capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr[-2000:]
    else:  # separators and bidi never aborted anything: in-process (no interpreter start-up)
        code, out = _invoke(args)
        assert code == 0, out
    page = page_path.read_text()
    assert set(_figures(page)) == ALL_CHARTS and "Not drawn" not in page
    for raw in ids:
        assert raw not in page
        assert f"<bdi>{HOSTILE[raw]}</bdi>" in page
    for ch in "\x00\x0b\x0c\x1b\u2028\u202e":
        assert ch not in page
    # each comparison heading keeps its arrow between two isolated ids
    first, second = (HOSTILE[r] for r in ids[:2])
    assert f"<h3><bdi>{first}</bdi> → <bdi>{second}</bdi>" in page


def test_chart_data_holds_ids_made_visible() -> None:
    run_summary = pl.DataFrame(
        {
            "config_id": "c",
            "run_id": list(HOSTILE),
            "pass_rate": 0.5,
            "pass_rate_se": 0.1,
        }
    )
    spec = efp.pass_rate_chart(run_summary).to_dict()
    drawn = {r["run_id"] for r in spec["datasets"].popitem()[1]}
    assert drawn == set(HOSTILE.values())
    assert sorted(spec["layer"][0]["encoding"]["y"]["sort"]) == sorted(HOSTILE.values())


# --- disk full -------------------------------------------------------------------------------
def _full_disk(monkeypatch: pytest.MonkeyPatch) -> None:
    def write_half(path: Path, data: bytes) -> None:
        with open(path, "wb") as f:
            f.write(data[: len(data) // 2])
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(report_html, "write_bytes", write_half)


@pytest.mark.slow
def test_full_disk_names_the_folder_and_leaves_nothing_behind(
    scored: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _full_disk(monkeypatch)
    target = tmp_path / "new" / "sub" / "report.html"
    code, out = _invoke(["report", str(scored), "--no-what-if", "--out", str(target)])
    assert code == 2, out
    text = " ".join(out.split())
    assert "no space left on device" in text and str(target.parent) in text
    assert "Traceback" not in out
    assert not (tmp_path / "new").exists()  # the folders this report made are gone too


@pytest.mark.slow
def test_full_disk_keeps_an_earlier_report(
    scored: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "report.html"
    target.write_text("earlier report")
    before = sorted(p.name for p in tmp_path.iterdir())
    _full_disk(monkeypatch)
    code, out = _invoke(["report", str(scored), "--no-what-if", "--out", str(target)])
    assert code == 2, out
    assert target.read_text() == "earlier report"
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_quantile_thinning_is_noted_under_the_chart() -> None:
    case_deltas = pl.DataFrame(
        {
            "config_id": "c",
            "baseline_run_id": "a",
            "candidate_run_id": "b",
            "case_id": [f"k{i}" for i in range(5)],
            "score_delta": [-0.2, -0.1, 0.0, 0.1, 0.2],
            "status": "unchanged",
        }
    )
    note = efp.chart_note(efp.regression_waterfall_chart(case_deltas, max_points=2))
    assert note == "A pair with more than 2 paired cases is drawn at 2 quantile-spaced cases."
    assert efp.chart_note(efp.regression_waterfall_chart(case_deltas)) is None
