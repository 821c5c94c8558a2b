"""Odd numbers and one memory-limit grammar: numbers a float cannot hold in
any ingest format are exit 2 naming file and line; attempts.k is bounded in the config;
--memory-limit has one parser for every engine and the CLI, and DuckDB running out of
memory blames the limit, not the input files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import evalframe as ef
from evalframe._private.config import parse_memory_limit
from evalframe._private.engines.duckdb.read import session
from evalframe._private.errors import ConfigError, UsageError
from evalframe._private.ingest import ingest
from evalframe.cli import app

FIXTURES = Path(__file__).parent / "fixtures"
INSPECT_DICT = FIXTURES / "built/inspect_ai/2025-06-03T14-02-11+00-00_capitals_dict-scores.json"
BIG = "9" * 401  # a 401-digit integer: beyond the range of a float


def _ingest_cli(fmt: str, src: Path, to: Path) -> tuple[int, str]:
    res = CliRunner().invoke(app, ["ingest", fmt, str(src), "--to", str(to)])
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    return res.exit_code, " ".join(res.stderr.split())


def _deepeval(tmp_path: Path, case: str) -> Path:
    path = tmp_path / "test_run.json"
    text = (
        '{"testCases": [\n'
        '  {"name": "a", "success": true, "metricsData": [\n'
        '    {"name": "m", "score": 0.5, "threshold": 0.5, "success": true}]},\n'
        f"  {case}\n"
        "]}\n"
    )
    path.write_text(text)
    return path


def _lmeval(tmp_path: Path, value: str) -> Path:
    folder = tmp_path / "out" / "org__model"
    folder.mkdir(parents=True)
    path = folder / "samples_arc_easy_2024-05-13T13-17-32.123456.jsonl"
    path.write_text(
        '{"doc_id": 0, "filter": "none", "metrics": ["acc"], "acc": 1.0}\n'
        f'{{"doc_id": 1, "filter": "none", "metrics": ["acc"], "acc": {value}}}\n'
    )
    return path


# --- ingest: NaN, infinities and 401-digit integers ----------------------------------------
# (NaN and infinities outside scores: tests/test_ingest_nonfinite.py)
@pytest.mark.parametrize(
    "case",
    [
        f'{{"name": "b", "metricsData": [{{"name": "m", "score": {BIG}, "success": true}}]}}',
    ],
)
def test_deepeval_odd_numbers_are_exit_2_with_file_and_line(tmp_path, case):
    src = _deepeval(tmp_path, case)
    code, err = _ingest_cli("deepeval", src, tmp_path / "ds")
    assert code == 2, err
    assert f"{src}:4:" in err  # file, line 4, column
    assert not (tmp_path / "ds").exists()


@pytest.mark.parametrize("value", ["Infinity", "-Infinity", "NaN", "1e400", BIG])
def test_lmeval_odd_metric_values_are_exit_2_with_file_and_line(tmp_path, value):
    """`"acc": Infinity` used to drop acc for every document with a "skipped" note."""
    src = _lmeval(tmp_path, value)
    code, err = _ingest_cli("lmeval", src.parent, tmp_path / "ds")
    assert code == 2, err
    assert f"{src}:2" in err
    assert not (tmp_path / "ds").exists()


@pytest.mark.parametrize(
    ("fmt", "name", "text", "line"),
    [
        ("agentv", "r.jsonl", '{"test_id": "a", "score": 0.5}\n{"test_id": "b", "score": NaN}', 2),
        ("wide", "w.jsonl", '{"run_id": "r", "case_id": "a", "m": 1e999}\n', 1),
        ("wide", "w.jsonl", f'{{"run_id": "r", "case_id": "a", "m": {BIG}}}\n', 1),
        ("promptfoo", "p.json", f'{{"results": {{\n"results": [{{"score": {BIG}}}]}}}}', 2),
    ],
)
def test_every_format_refuses_odd_numbers_naming_file_and_line(tmp_path, fmt, name, text, line):
    src = tmp_path / name
    src.write_text(text)
    code, err = _ingest_cli(fmt, src, tmp_path / "ds")
    assert code == 2, err
    assert f"{src}:{line}" in err
    assert "not a finite number" in err or "beyond the range of a number" in err


def _inspect_with(tmp_path: Path, old: str, new: str) -> tuple[Path, int]:
    text = json.dumps(json.loads(INSPECT_DICT.read_text()), indent=2)
    assert text.count(old) >= 1
    at = text.index(old)
    path = tmp_path / INSPECT_DICT.name
    path.write_text(text[:at] + new + text[at + len(old) :])
    return path, text.count("\n", 0, at) + 1


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ('"correct": 1', '"correct": NaN'),
        ('"words": 12', f'"words": {BIG}'),
    ],
)
def test_inspect_odd_sample_numbers_are_exit_2_with_file_and_line(tmp_path, old, new):
    src, line = _inspect_with(tmp_path, old, new)
    code, err = _ingest_cli("inspect", src, tmp_path / "ds")
    assert code == 2, err
    assert str(src) in err and f"{line}" in err


def test_inspect_nan_in_the_tools_own_aggregates_is_kept_as_valid_json(tmp_path):
    """A NaN stderr in the log's `results` is the tool's business: ingested, and stored
    as the string "NaN" so reported_metrics stays JSON."""
    src, _line = _inspect_with(tmp_path, '"value": 0.25', '"value": NaN')
    report = ingest("inspect", [src], tmp_path / "ds")
    assert report.rows["scores"] > 0
    runs = ef.load_dataset(tmp_path / "ds").runs.collect()
    reported = json.loads(runs["reported_metrics"][0], parse_constant=pytest.fail)
    assert reported[0]["metrics"]["stderr"]["value"] == "NaN"


# --- config: attempts.k --------------------------------------------------------------------
@pytest.mark.parametrize("k", [9223372036854775808, 10**401, 1_000_001])
def test_attempts_k_is_bounded_in_the_config(k):
    with pytest.raises(ConfigError, match=r"attempts\.k.*between 1 and 1000000"):
        ef.config_from_dict({"attempts": {"k": [1, k]}})
    assert ef.config_from_dict({"attempts": {"k": [1_000_000, 1]}}).attempts.k == (1, 1_000_000)


def test_attempts_k_beyond_int64_is_a_config_error_on_the_cli(tmp_path):
    ef.write_demo(tmp_path / "d", n_cases=4)
    cfg = tmp_path / "c.yaml"
    cfg.write_text("attempts:\n  k: [9223372036854775808]\n")
    res = CliRunner().invoke(app, ["score", str(tmp_path / "d"), "--config", str(cfg)])
    assert res.exit_code == 2
    err = " ".join(res.stderr.split())
    assert "attempts.k" in err and "intact Parquet" not in err


# --- --memory-limit: one grammar -------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("3GB", 3 * 10**9),
        ("512MB", 512 * 10**6),
        ("1.5GiB", 3 * 2**29),
        (" 2 gb ", 2 * 10**9),
        ("4000000000", 4 * 10**9),
        ("64MB", 64 * 10**6),
        ("1024TiB", 2**50),
    ],
)
def test_memory_limit_grammar(text, size):
    assert parse_memory_limit(text) == size


BAD_LIMITS = ["3e9", "1e30GB", "", " ", "inf", "1e400", "nan", "-3GB", "1KB", "63MB", "1025TiB"]


@pytest.mark.parametrize("text", BAD_LIMITS)
def test_memory_limit_refused_alike_by_every_engine(tmp_path, text):
    ef.write_demo(tmp_path / "d", n_cases=4)
    for engine in ("polars", "duckdb"):
        with pytest.raises(UsageError, match="--memory-limit"):
            ef.score_tables(tmp_path / "d", engine=engine, memory_limit=text)


@pytest.mark.slow
@pytest.mark.parametrize("text", ["inf", "1e30GB", "", "1KB"])
@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_memory_limit_on_the_cli_is_exit_2_without_traceback(tmp_path, text, engine):
    ef.write_demo(tmp_path / "d", n_cases=4)
    args = ["score", str(tmp_path / "d"), "--engine", engine, "--memory-limit", text]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 2, res.output
    assert res.exception is None or isinstance(res.exception, SystemExit)
    assert "memory-limit" in res.stderr and "intact Parquet" not in res.stderr


def test_duckdb_out_of_memory_blames_the_limit_not_the_inputs():
    query = "select max(len(l)) from (select list(i) l from range(0, 30000000) t(i))"
    with (
        pytest.raises(UsageError, match="the memory limit 64MB is too small"),
        session("64MB") as con,
    ):
        con.execute(query).fetchall()
