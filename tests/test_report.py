"""The HTML report (`evalframe report`, evalframe.plots.build_report): sections, charts,
self-containment, top regressions with the evaluator behind each, and the CLI."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

import evalframe as ef
import evalframe.plots as efp
from evalframe.cli import app

pytestmark = pytest.mark.slow  # outside the fast lane (pyproject `slow`)

runner = CliRunner()

ALL_CHARTS = (
    "pass_rate",
    "verdicts",
    "trend",
    "score_distribution",
    "regression_waterfall",
    "evaluator_heatmap",
    "threshold_curve",
    "sweep_heatmap",
    "slice_forest",
    "power_curve",
    "kappa_curve",
)


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("report") / "demo"
    ef.write_demo(path, n_cases=30)
    return path


@pytest.fixture(scope="module")
def tables(demo: Path) -> dict[str, pl.DataFrame]:
    return efp.report_tables(demo, ef.load_config(None))


@pytest.fixture(scope="module")
def page(tables: dict[str, pl.DataFrame]) -> str:
    return efp.build_report(tables, title="demo report", limits=ef.load_config(None).compare)


def _figures(page: str) -> list[str]:
    return re.findall(r"<figure class='chart' id='chart-(\w+)'", page)


def test_report_tables_hold_every_table_a_chart_draws(tables) -> None:
    assert sorted(tables) == sorted(
        [
            "execution_scores",
            "case_summary",
            "run_summary",
            "case_details",
            "case_deltas",
            "evaluator_deltas",
            "evaluator_tests",
            "run_deltas",
            "slice_deltas",
            "sweep",
            "threshold_curve",
            "judge_agreement",
            "agreement_curve",
        ]
    )
    # consecutive pairs by default: each run against the one before it
    pairs = tables["run_deltas"].select("baseline_run_id", "candidate_run_id").rows()
    assert pairs == [
        ("2026-10-01-v1.4", "2026-10-15-v1.5"),
        ("2026-10-15-v1.5", "2026-11-01-v1.6"),
    ]
    assert tables["sweep"].select("config_id").n_unique() == 7 * 3  # thresholds × outcomes


def test_report_has_every_chart_as_inline_svg(page: str) -> None:
    assert _figures(page) == list(ALL_CHARTS)
    for name in ALL_CHARTS:
        figure = page[page.index(f"id='chart-{name}'") :]
        figure = figure[: figure.index("</figure>")]
        assert "<svg" in figure and "role-mark" in figure, name


def test_report_is_self_contained(page: str) -> None:
    """Nothing is fetched: no external script, style sheet, font, image or frame."""
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", page, re.IGNORECASE)
    assert not re.search(r"<link\b|@import|url\(\s*['\"]?(https?:|//)", page, re.IGNORECASE)
    assert not re.search(r"<(iframe|img|object|embed)\b", page, re.IGNORECASE)
    assert "<script src" not in page.lower()


def test_report_sections_name_runs_gates_reasons_and_statistics(page: str, tables) -> None:
    for run in tables["run_summary"]["run_id"]:
        assert run in page
    assert "score gate" in page and "rate gate" in page and "run gate" in page
    assert "REGRESSION (run-level limits)" in page and "no run-level regression" in page
    rd = tables["run_deltas"].row(1, named=True)
    assert rd["regression_detected"]
    assert f"pass rate fell {-100 * rd['pass_rate_delta']:.1f} pts (allowed 0.0 pts)" in page
    assert f"McNemar p = <b>{rd['mcnemar_p']:.4g}</b>" in page
    assert (
        f"95 % interval [{rd['mean_delta_ci_low']:+.3f}, {rd['mean_delta_ci_high']:+.3f}]" in page
    )
    assert "Which evaluator moved" in page and "evaluators behind it" in page
    assert "1.96 × the standard error clustered by case" in page
    assert "95 % Wilson interval with the clustered effective sample size" in page


TOP_CASE_DELTAS = pl.DataFrame(
    {
        "config_id": ["c"] * 5,
        "baseline_run_id": ["a"] * 5,
        "candidate_run_id": ["b"] * 5,
        "case_id": ["k1", "k2", "k3", "k4", "k5"],
        "baseline_score": [0.9, 0.8, 0.9, 0.7, 0.8],
        "candidate_score": [0.5, 0.7, 0.9, 0.7, None],
        "baseline_passed": [True, True, True, False, True],
        "candidate_passed": [False, True, False, False, None],
        "score_delta": [-0.4, -0.1, 0.0, 0.0, None],
        "status": ["regression", "regression", "regression", "unchanged", "error"],
    }
)
TOP_EVALUATOR_DELTAS = pl.DataFrame(
    {
        "config_id": ["c"] * 6,
        "baseline_run_id": ["a"] * 6,
        "candidate_run_id": ["b"] * 6,
        "case_id": ["k1", "k1", "k1", "k2", "k2", "k3"],
        "path": ["tone", "accuracy", "accuracy/facts", "tone", "accuracy", "tone"],
        "score_delta": [-0.2, -0.6, -0.6, -0.1, -0.3, 0.1],
        "status": ["regression"] * 5 + ["improvement"],
    }
)


def test_top_regressions_name_the_node_with_the_most_negative_delta() -> None:
    top = efp.top_regressions(TOP_CASE_DELTAS, TOP_EVALUATOR_DELTAS, top=2)
    assert top.select("case_id", "score_delta", "behind_path", "behind_delta").rows() == [
        ("k1", -0.4, "accuracy", -0.6),  # tie at -0.6: first path in sort order
        ("k2", -0.1, "accuracy", -0.3),
    ]
    every = efp.top_regressions(TOP_CASE_DELTAS, TOP_EVALUATOR_DELTAS, top=10)
    assert every["case_id"].to_list() == ["k1", "k2", "k3"]  # regressions only, worst first
    assert every.filter(pl.col("case_id") == "k3")["behind_path"].to_list() == [None]
    alone = efp.top_regressions(TOP_CASE_DELTAS, None, top=1)
    assert alone.select("case_id", "behind_path").rows() == [("k1", None)]


def test_report_says_when_a_pair_is_too_small_to_see_the_limits(tmp_path: Path) -> None:
    from tests.test_stats import SMALL_PAIR, write_two_runs

    cfg = ef.load_config(None)
    tables = efp.report_tables(write_two_runs(tmp_path / "d", SMALL_PAIR), cfg, what_if=False)
    rd = tables["run_deltas"].row(0, named=True)
    page = efp.build_report(tables, limits=cfg.compare)
    assert (
        f"Power: the 6 paired cases see a pass-rate change of {100 * rd['mde_pass_rate']:.1f} "
        f"pts or more and a mean-score change of {rd['mde_mean_score']:.3f} or more" in page
    )
    assert "too small</span> This pair is too small to see the mean score limit " in page
    assert f"max_mean_score_drop = 0.050 (detectable: {rd['mde_mean_score']:.3f})" in page
    assert "evalframe plan" in page
    assert "power_curve" in _figures(page)
    # the power curve marks the configured limit (red rule at 0.05 on the mean score panel)
    assert "power_curve" in efp.charts_for(tables)
    # without limits, nothing is judged too small
    assert "too small" not in efp.build_report(tables)


def test_report_names_the_slices_whose_regression_survives_bh(tmp_path: Path) -> None:
    from tests.test_slices import SLICED_PAIR
    from tests.test_stats import write_two_runs

    tables = efp.report_tables(write_two_runs(tmp_path / "d", SLICED_PAIR), what_if=False)
    assert tables["slice_deltas"]["slice"].unique().to_list() == ["tag"]  # tags: sliced by tag
    page = efp.build_report(tables)
    q = tables["slice_deltas"].filter(pl.col("slice_value") == "billing")["q_value"].item()
    assert (
        "Slices by tag that regressed beyond chance (Benjamini–Hochberg q &lt; 0.05 over 2 "
        f"values): <b><bdi>billing</bdi></b> (q {q:.4g})." in page
    )
    assert "<b><bdi>refunds</bdi></b>" not in page


def test_an_unscored_run_reads_a_dash_and_gets_no_paired_statistics() -> None:
    # run r1 scores 0.9 on 4 cases; run r2 has only null scores (its pass_rate is held as 0)
    scores = pl.DataFrame(
        {
            "run_id": ["r1"] * 4 + ["r2"] * 4,
            "case_id": ["c1", "c2", "c3", "c4"] * 2,
            "evaluator": "m",
            "score": [0.9] * 4 + [None] * 4,
        },
        schema_overrides={"score": pl.Float64},
    )
    cfg = ef.load_config(None)
    tables = efp.report_tables(ef.Dataset.from_frames(scores), cfg, what_if=False)
    assert tables["run_summary"].filter(pl.col("run_id") == "r2")["pass_rate"].item() == 0.0
    page = efp.build_report(tables, limits=cfg.compare)
    cells = {
        m.group(1): re.findall(r"<td[^>]*>(.*?)</td>", m.group(0))
        for m in re.finditer(r"<tr><td class='l'><b><bdi>(\w+)</bdi></b>.*?</tr>", page)
    }
    assert cells["r2"][5] == "—" and cells["r2"][8] == "—"  # pass rate, case pass rate
    assert cells["r1"][5].startswith("100.0%")
    assert "[51.0%, 100.0%]" in cells["r1"][5]  # Wilson over its 4 cases: not [100%, 100%]
    text = re.sub(r"<[^>]+>", " ", page.split("<h2 id='charts'>")[0])
    assert not re.search(r"(?<![\d.])0\.0%", text)  # never "0.0% [0.0%, 0.0%]"
    assert "-100.0" not in text and "fell 100.0" not in text
    assert "no execution of r2 has a score" in text
    assert "no paired statistics" in text
    assert "paired pass change" not in text and "Power:" not in text
    # the charts draw no pass rate for r2, and no power curve for a pair with no paired cases
    rows = {
        r["run_id"]: r
        for r in efp.pass_rate_chart(tables["run_summary"]).to_dict()["datasets"].popitem()[1]
    }
    assert rows["r2"]["pass_rate"] is None and rows["r1"]["pass_rate"] == 1.0
    assert "power_curve" not in _figures(page)


def test_single_run_report_has_no_comparison(tmp_path: Path) -> None:
    frames = ef.write_demo(tmp_path / "d", n_cases=10)
    ds = ef.load_dataset(frames)
    one = ef.Dataset.from_frames(
        ds.scores.filter(pl.col("run_id") == "2026-10-01-v1.4").collect(),
        executions=ds.executions.filter(pl.col("run_id") == "2026-10-01-v1.4").collect(),
    )
    tables = efp.report_tables(one, what_if=False)
    assert "run_deltas" not in tables
    page = efp.build_report(tables)
    assert _figures(page) == ["pass_rate", "verdicts", "trend", "score_distribution"]
    assert "id='compare'" not in page


def test_report_without_run_summary_is_a_usage_error() -> None:
    with pytest.raises(ef.UsageError, match="needs the run_summary table"):
        efp.build_report({"case_deltas": TOP_CASE_DELTAS})


def test_cli_report_writes_the_page_and_prints_its_path(demo: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    result = runner.invoke(
        app, ["report", str(demo), "--baseline", "2026-10-01-v1.4", "--top", "3", "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert f"report written to {out}" in result.output
    page = out.read_text()
    assert page.count("2026-10-01-v1.4 → ") >= 2  # both pairs start at the baseline
    assert "The page holds the worst 3 of" in page
    assert _figures(page) == list(ALL_CHARTS)


def test_cli_report_bad_input_exits_2(demo: Path, tmp_path: Path) -> None:
    result = runner.invoke(app, ["report", str(demo), "-b", "nope", "-o", str(tmp_path / "x")])
    assert result.exit_code == 2
    assert "nope" in result.output and "2026-10-01-v1.4" in result.output
    assert not (tmp_path / "x").exists()
    result = runner.invoke(app, ["report", str(demo), "--by", "nosuch", "--no-what-if"])
    assert result.exit_code == 2
    assert "cannot slice by 'nosuch'" in result.output


def test_cli_report_with_a_grid_a_preset_or_a_config_file(demo: Path, tmp_path: Path) -> None:
    grid = tmp_path / "grid.yaml"
    grid.write_text("grid:\n  threshold: [0.6, 0.8]\n")
    out = tmp_path / "g.html"
    result = runner.invoke(
        app, ["report", str(demo), "--grid", str(grid), "--preset", "connexity", "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    page = out.read_text()
    assert "What-if: pass_rate by threshold" in page
    assert f"config {ef.load_config(preset='connexity').config_id}" in page
    policy = tmp_path / "policy.yaml"
    policy.write_text("threshold: 0.6\n")
    out2 = tmp_path / "c.html"
    result = runner.invoke(
        app, ["report", str(demo), "--config", str(policy), "--no-what-if", "-o", str(out2)]
    )
    assert result.exit_code == 0, result.output
    assert f"config {ef.load_config(policy).config_id}" in out2.read_text()


def test_demo_writes_the_report_and_prints_its_path(demo_command) -> None:
    result, target = demo_command  # `demo DIR --cases 12`, run once (tests/conftest.py)
    assert result.exit_code == 0, result.output
    assert f"report written to {target / 'report.html'}" in result.output
    assert _figures((target / "report.html").read_text()) == list(ALL_CHARTS)


def test_run_table_shows_pass_at_k_with_the_cases_it_covers(demo: Path) -> None:
    """With attempts.k the report's run table has a pass@k column per k saying over how many
    of the run's cases (those with >= k attempts), the terminal's cell text exactly."""
    import io

    from rich.console import Console

    from evalframe.cli._render import run_table
    from evalframe.format import with_pass_k_cases

    cfg = ef.config_from_dict({"attempts": {"k": [2, 3]}})
    tables = efp.report_tables(demo, cfg, what_if=False)
    page = efp.build_report(tables, config=cfg)
    runs = page[page.index("<h2 id='runs'>") : page.index("<h2 id='compare'>")]
    assert "pass@2 (cases with ≥ 2 attempts)" in runs
    assert "pass@3 (cases with ≥ 3 attempts)" in runs and "<b>pass@k</b>" in runs
    cases, summary = tables["case_summary"], tables["run_summary"]
    joined = with_pass_k_cases(summary, cases)
    console = Console(record=True, width=400, file=io.StringIO())
    console.print(run_table(joined))
    terminal = console.export_text()
    for r in summary.iter_rows(named=True):
        of_run = cases.filter(pl.col("run_id") == r["run_id"])
        for k in (2, 3):
            counted = of_run.filter(pl.col("attempts") >= k).height
            assert 0 < counted < of_run.height  # the demo repeats some cases only
            shown = f"{100 * r[f'pass_at_{k}']:.1f}% ({counted}/{of_run.height} cases)"
            assert f"<td>{shown}</td>" in runs, shown
            assert shown in terminal, shown
    plain = efp.build_report({"run_summary": summary.drop("pass_at_2", "pass_at_3")})
    assert "pass@" not in plain


def test_report_names_the_pairs_within_the_noise_floor(tmp_path: Path) -> None:
    # four runs of 6 cases, v1 twice and v2 twice (reruns: the runs column `system`)
    quality = {"r1": 0.9, "r2": 0.85, "r3": 0.7, "r4": 0.72}
    scores = pl.DataFrame(
        {
            "run_id": run,
            "case_id": f"c{k}",
            "evaluator": "m",
            "score": round(min(1.0, q + 0.05 * (k % 3) - 0.1 * (k == 5)), 4),
        }
        for run, q in quality.items()
        for k in range(6)
    )
    runs = pl.DataFrame(
        {
            "run_id": list(quality),
            "created_at": [datetime(2026, 10, k + 1, 9) for k in range(4)],
            "system": ["v1", "v1", "v2", "v2"],
        }
    )
    cfg = ef.load_config(None)
    ds = ef.Dataset.from_frames(scores, runs=runs)
    tables = efp.report_tables(ds, cfg, what_if=False, replicates="system")
    assert tables["run_deltas"]["within_noise"].to_list() == [True, False, True]
    text = re.sub(r"<[^>]+>", "", efp.build_report(tables, config=cfg))
    assert (
        "Noise floor: 2 of the 3 pairs whose runs both have a noise floor (noise_floor, "
        "--replicates) changed no more than reruns of one system do: |pass-rate change| ≤ the "
        "larger rms_pass_rate_delta of the two runs' replicate groups: r1 → r2 (+0.0 pts), "
        "r3 → r4 (+0.0 pts)." in text
    )  # threshold 0.8: r1, r2 pass 6 of 6, r3, r4 1 of 6; r2 → r3 (-83.3 pts) is a change
    assert "r2 → r3 (" not in text
    without = efp.build_report({k: v for k, v in tables.items() if k != "noise_floor"})
    assert "Noise floor" not in without
    # the same from the command line
    from typer.testing import CliRunner

    from evalframe.cli import app

    (tmp_path / "ds").mkdir()
    scores.write_parquet(tmp_path / "ds" / "scores.parquet")
    runs.write_parquet(tmp_path / "ds" / "runs.parquet")
    page = tmp_path / "page.html"
    args = ["report", str(tmp_path / "ds"), "--replicates", "system", "--no-what-if"]
    result = CliRunner().invoke(app, [*args, "-o", str(page)])
    assert result.exit_code == 0, result.output
    assert "Noise floor: 2 of the 3 pairs" in re.sub(r"<[^>]+>", "", page.read_text())


def test_report_sets_each_judge_against_the_labels(page: str, tables) -> None:
    section = page[page.index("<h2 id='judges'>") :]
    section = section[: section.index("<h2", 10)]
    admitted = tables["judge_agreement"].filter(pl.col("rater").is_not_null())
    assert section.count("<tr>") >= admitted.height  # one row per judge × run × rater
    assert "corrected by the labels" in section and "(execution verdict)" in section
    moved = tables["evaluator_tests"].filter(pl.col("p_holm") < 0.05)
    assert ("moved beyond chance" in page) == (moved.height > 0)


def test_history_names_the_cases_case_difficulty_flags(page: str, tables) -> None:
    flagged = ef.case_difficulty(tables["case_summary"], tables["run_summary"]).filter(
        pl.col("flag").is_not_null()
    )
    assert ("<b>Case difficulty</b>" in page) == (flagged.height > 0)
    for flag, n in flagged.group_by("flag").len().iter_rows():
        assert f"<li>{flag}: {n} (" in page
