"""The command line: documentation, exit codes, outputs written atomically, golden output."""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

import evalframe as ef
from evalframe._private.data.demo import write_demo
from evalframe.cli import app

ROOT = Path(__file__).resolve().parents[1]
runner = CliRunner()


def _commands() -> list[str]:
    return sorted(c.name for c in app.registered_commands)


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("demo") / "data"
    write_demo(path, n_cases=40)
    return path


@pytest.mark.slow
def test_every_command_help_has_an_example():
    for name in _commands():
        result = runner.invoke(app, [name, "--help"])
        assert result.exit_code == 0, name
        assert "Example" in result.output, name


def test_readme_starts_with_the_install_and_test_commands():
    blocks = re.findall(r"```bash\n(.*?)```", (ROOT / "README.md").read_text(), re.DOTALL)
    assert blocks[0].strip() == "pip install -e . && evalframe demo"
    assert blocks[1].strip() == 'pip install -e ".[test]" && python -m pytest'
    ci = (ROOT / ".ci" / "run").read_text()
    assert blocks[1].strip() in ci


def test_score_writes_its_tables_with_metadata(demo, tmp_path):
    out = tmp_path / "out"
    result = runner.invoke(app, ["score", str(demo), "--preset", "connexity", "-o", str(out)])
    assert result.exit_code == 0, result.output
    names = sorted(p.name for p in out.iterdir())
    # the demo has a labels table: judge_agreement and agreement_curve too (docs/judges.md)
    assert names == [
        "agreement_curve.parquet",
        "case_summary.parquet",
        "execution_scores.parquet",
        "judge_agreement.parquet",
        "run_summary.parquet",
        "variance_components.parquet",
    ]
    meta = ef.read_metadata(out / "run_summary.parquet")
    assert meta["evalframe.version"] == ef.__version__
    cfg = ef.load_config(preset="connexity")
    assert json.loads(meta["evalframe.config"]) == json.loads(cfg.canonical_json())
    summary = pl.read_parquet(out / "run_summary.parquet")
    assert summary["config_id"].unique().to_list() == [cfg.config_id]


@pytest.mark.slow
def test_score_check_exits_1_when_a_run_gate_fails(demo, tmp_path):
    result = runner.invoke(app, ["score", str(demo), "--check", "-o", str(tmp_path)])
    assert result.exit_code == 1  # the default min_pass_rate is 1.0
    lenient = tmp_path / "lenient.yaml"
    lenient.write_text("run_gates: {min_mean_score: 0.0, min_pass_rate: 0.0}\n")
    result = runner.invoke(
        app, ["score", str(demo), "--check", "-c", str(lenient), "-o", str(tmp_path)]
    )
    assert result.exit_code == 0, result.output


def test_score_json_is_machine_readable(demo, tmp_path):
    result = runner.invoke(app, ["score", str(demo), "--json", "-o", str(tmp_path)])
    rows = json.loads(result.stdout)
    assert {r["run_id"] for r in rows} == {"2026-10-01-v1.4", "2026-10-15-v1.5", "2026-11-01-v1.6"}


def test_bad_input_exits_2_and_writes_nothing(tmp_path):
    data = tmp_path / "bad"
    data.mkdir()
    pl.DataFrame(
        {"run_id": ["r", "r"], "case_id": ["c", "c"], "evaluator": ["a", "a"], "score": [1.5, 0.5]}
    ).write_parquet(data / "scores.parquet")
    result = runner.invoke(app, ["score", str(data)])
    assert result.exit_code == 2
    assert "duplicate key" in result.output and "score is above scale_max" in result.output
    assert not (data / "results").exists()


def test_a_failed_run_leaves_previous_outputs_intact(demo, tmp_path):
    out = tmp_path / "out"
    assert runner.invoke(app, ["score", str(demo), "-o", str(out)]).exit_code == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    bad_config = tmp_path / "bad.yaml"
    bad_config.write_text("treshold: 0.7\n")
    result = runner.invoke(app, ["score", str(demo), "-c", str(bad_config), "-o", str(out)])
    assert result.exit_code == 2
    assert "did you mean `threshold`" in result.output
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_write_tables_is_all_or_nothing(tmp_path):
    good = pl.LazyFrame({"a": [1]})
    broken = pl.LazyFrame({"a": ["x"]}).select(pl.col("a").cast(pl.Int64, strict=True))
    with pytest.raises(pl.exceptions.InvalidOperationError):
        ef.write_tables({"first": good, "second": broken}, tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_compare_exits_1_on_the_regressed_run(demo, tmp_path):
    result = runner.invoke(
        app,
        [
            "compare",
            str(demo),
            "-b",
            "2026-10-15-v1.5",
            "--candidate",
            "2026-11-01-v1.6",
            "-o",
            str(tmp_path),
        ],
    )
    assert result.exit_code == 1, result.output
    assert "REGRESSION" in result.output
    deltas = pl.read_parquet(tmp_path / "run_deltas.parquet")
    assert deltas["regression_detected"].to_list() == [True]
    assert (tmp_path / "evaluator_deltas.parquet").exists()


def test_compare_unknown_run_lists_known_ones(demo, tmp_path):
    result = runner.invoke(app, ["compare", str(demo), "-b", "nope", "-o", str(tmp_path)])
    assert result.exit_code == 2
    assert "2026-10-01-v1.4" in result.output


def test_validate_reports_rows(demo):
    result = runner.invoke(app, ["validate", str(demo), "--json"])
    assert result.exit_code == 0
    assert json.loads(result.stdout)["rows"]["scores"] > 0


def test_sweep_writes_sweep_and_configs(demo, tmp_path):
    grid = tmp_path / "grid.yaml"
    grid.write_text(
        "grid:\n  threshold: [0.6, 0.8]\nweights:\n  even: {}\n  routing: {tool_routing: 3}\n"
    )
    result = runner.invoke(
        app, ["sweep", str(demo), "--grid", str(grid), "--curve", "-o", str(tmp_path / "out")]
    )
    assert result.exit_code == 0, result.output
    sweep = pl.read_parquet(tmp_path / "out" / "sweep.parquet")
    assert sweep["config_id"].n_unique() == 4
    assert pl.read_parquet(tmp_path / "out" / "sweep_configs.parquet").height == 4
    assert (tmp_path / "out" / "threshold_curve.parquet").exists()


def test_clamp_fixes_out_of_range_scores_and_reports_the_count(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    pl.DataFrame(
        {
            "run_id": "r",
            "case_id": ["a", "b", "c"],
            "evaluator": "m",
            "score": [6.0, -1.0, float("nan")],
            "scale_max": 5.0,
        }
    ).write_parquet(data / "scores.parquet")
    assert runner.invoke(app, ["validate", str(data)]).exit_code == 2
    result = runner.invoke(app, ["validate", str(data), "--clamp", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["clamped"] == 3
    result = runner.invoke(
        app, ["score", str(data), "--clamp", "--json", "-o", str(tmp_path / "o")]
    )
    assert result.exit_code == 0, result.output
    scores = pl.read_parquet(tmp_path / "o" / "execution_scores.parquet").sort("case_id")
    assert scores["score"].to_list() == [1.0, 0.0, None]


@pytest.mark.slow
def test_readme_python_example_runs(tmp_path, monkeypatch):
    """The README's Python API block runs as written in an empty folder: it makes every
    file it reads (the demo dataset, a policy, a grid, a wide CSV to ingest)."""
    readme = (ROOT / "README.md").read_text()
    code = re.search(r"## Python API\n\n```python\n(.*?)```", readme, re.DOTALL).group(1)
    monkeypatch.chdir(tmp_path)
    assert list(tmp_path.iterdir()) == []
    namespace: dict = {}
    exec(compile(code, "README.md", "exec"), namespace)
    assert namespace["table"].height > 0
    assert (tmp_path / "out" / "run_summary.parquet").exists()
    ingested = pl.read_parquet(tmp_path / "data" / "scores.parquet")
    assert set(ingested["run_id"]) == {"v2"} and ingested.height == 4


@pytest.mark.slow
def test_sql_without_a_query_opens_a_prompt(demo):
    result = runner.invoke(
        app,
        ["sql", str(demo)],
        input="select count(*) as n from scores;\nselect 1 as one;\n.quit\n",
    )
    assert result.exit_code == 0, result.output
    assert "evalframe>" in result.output
    n_scores = pl.read_parquet(demo / "scores.parquet").height
    assert f"{n_scores}" in result.output


@pytest.mark.slow
def test_sql_query_as_json(demo):
    result = runner.invoke(
        app, ["sql", str(demo), "select run_id from runs order by run_id", "--json"]
    )
    assert result.exit_code == 0, result.output
    assert [r["run_id"] for r in json.loads(result.stdout)] == [
        "2026-10-01-v1.4",
        "2026-10-15-v1.5",
        "2026-11-01-v1.6",
    ]


@pytest.mark.slow
def test_usage_errors_off_a_terminal_are_plain_lines(tmp_path):
    import subprocess
    import sys

    run = [sys.executable, "-m", "evalframe.cli"]
    long_option = "--no-such-option" + "-with-a-long-name" * 6
    out = subprocess.run(
        [*run, "score", str(tmp_path), long_option],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 2, out.stderr
    assert "╭" not in out.stderr and "Traceback" not in out.stderr
    assert any(
        "No such option" in line and long_option in line for line in out.stderr.splitlines()
    ), out.stderr
    ok = subprocess.run([*run, "--version"], capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0 and ok.stdout.startswith("evalframe ")
    missing = subprocess.run(
        [*run, "score", str(tmp_path / "nope")], capture_output=True, text=True, timeout=120
    )
    assert missing.returncode == 2 and "does not exist" in missing.stderr


# --- pairs within a series -------------------------------------------------------


def test_series_pairs_runs_within_a_target_only(alternating, tmp_path):
    runs = pl.read_parquet(alternating / "runs.parquet")
    assert ef.pairs_for(runs, mode="consecutive") == [("r1", "r2"), ("r2", "r3"), ("r3", "r4")]
    assert ef.pairs_for(runs, mode="consecutive", series="target") == [
        ("r1", "r3"),
        ("r2", "r4"),
    ]
    assert ef.pairs_for(runs, series="target") == [("r1", "r3"), ("r2", "r4")]
    assert ef.pairs_for(runs, candidate="r4", series="target") == [("r2", "r4")]
    assert ef.pairs_for(runs, baseline="r1", series="target") == [("r1", "r3")]
    with pytest.raises(ef.UsageError, match="first run of its series"):
        ef.pairs_for(runs, candidate="r2", series="target")
    with pytest.raises(ef.UsageError, match=r"not a column of the runs table.*target"):
        ef.pairs_for(runs, series="modle")
    tables = ef.compare_tables(alternating, pairs="consecutive", series="target")
    assert tables.pairs == [("r1", "r3"), ("r2", "r4")]
    assert not tables["run_deltas"]["regression_detected"].any()  # same target, same scores


@pytest.mark.slow
def test_compare_says_when_pairs_mix_series(alternating, tmp_path):
    mixed = runner.invoke(
        app, ["compare", str(alternating), "--pairs", "consecutive", "-o", str(tmp_path / "a")]
    )
    assert mixed.exit_code == 1  # claude → gpt-5 looks like a regression ...
    note = " ".join(mixed.stderr.split())
    assert "pairs compare runs of different series: target (3 of 3 pairs" in note, note
    assert "r1 [claude] → r2 [gpt-5]" in note and "pass --series target" in note
    within = runner.invoke(
        app,
        [
            "compare",
            str(alternating),
            "--pairs",
            "consecutive",
            "--series",
            "target",
            "-o",
            str(tmp_path / "b"),
        ],
    )
    assert within.exit_code == 0, within.output  # ... within a target nothing moved
    assert "different series" not in within.stderr
    assert "r1 → r3" in within.stdout and "r2 → r4" in within.stdout
    unknown = runner.invoke(app, ["compare", str(alternating), "--series", "nope"])
    assert unknown.exit_code == 2 and "not a column of the runs table" in unknown.output


# --- computed, now shown ---------------------------------------------------------


def test_score_by_tag_prints_the_slice_table(demo, tmp_path):
    result = runner.invoke(
        app, ["score", str(demo), "--by", "tag", "-o", str(tmp_path / "o")], terminal_width=200
    )
    assert result.exit_code == 0, result.output
    assert "slices by tag" in result.output
    slices = pl.read_parquet(tmp_path / "o" / "slice_summary.parquet")
    table = result.output.split("slices by tag", 1)[1]
    for r in slices.iter_rows(named=True):
        value = r["slice_value"] or "(none)"
        row = f"│ {value}"
        assert row in table, value
    assert table.count("│ ") >= slices.height  # one line per slice value × run


def test_pass_at_k_is_in_the_run_table_with_its_case_count(demo, tmp_path):
    cfg = tmp_path / "k.yaml"
    cfg.write_text("attempts: {k: [3]}\n")
    out = tmp_path / "o"
    result = runner.invoke(
        app, ["score", str(demo), "-c", str(cfg), "-o", str(out)], terminal_width=250
    )
    assert result.exit_code == 0, result.output
    assert "pass@3" in result.output
    cases = pl.read_parquet(out / "case_summary.parquet")
    summary = pl.read_parquet(out / "run_summary.parquet")
    for r in summary.iter_rows(named=True):
        of_run = cases.filter(pl.col("run_id") == r["run_id"])
        counted = of_run.filter(pl.col("attempts") >= 3).height
        assert 0 < counted < of_run.height  # the demo repeats some cases only
        shown = "—" if r["pass_at_3"] is None else f"{100 * r['pass_at_3']:.1f}%"
        assert f"{shown} ({counted}/{of_run.height} cases)" in result.output


def test_engine_help_prints_the_spark_extra_literally():
    """`[spark]` in help text is rich markup unless escaped: the install hint must survive."""
    for name in ("score", "compare", "trend", "flaky"):
        result = runner.invoke(app, [name, "--help"], env={"COLUMNS": "400"})
        assert result.exit_code == 0, result.output
        assert 'pip install "evalframe[spark]"' in result.output, name
        assert "local[2]" in result.output, name
