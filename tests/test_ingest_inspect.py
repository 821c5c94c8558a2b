"""Inspect AI ingestion: .eval (zip) and .json logs; accuracy and stderr recomputed."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import polars as pl
import pytest

import evalframe as ef
from evalframe._private.ingest import IngestError, ingest

FIXTURES = Path(__file__).parent / "fixtures" / "inspect_ai" / "tests"
SCORER_LOGS = FIXTURES / "scorer" / "logs"
UNSCORED = next(SCORER_LOGS.glob("*dPiJ*.eval"))
SCORED = next(SCORER_LOGS.glob("*mj7k*.eval"))
STREAMING = FIXTURES / "log" / "test_eval_log" / "log_streaming.eval"
ANALYSIS = FIXTURES / "analysis" / "test_logs"
ERROR_LOG = next((FIXTURES / "test_eval_set").glob("*popularity*.json"))


def _summary(path: Path, tmp_path: Path) -> dict:
    ingest("inspect", [path], tmp_path / "ds")
    ds = ef.load_dataset(tmp_path / "ds")
    cfg = ef.config_from_dict({})
    runs = ef.run_summary(ef.execution_scores(ds, cfg), cfg, runs=ds.runs).collect()
    assert runs.height == 1
    return runs.row(0, named=True)


def test_scored_popularity_accuracy_and_stderr(tmp_path):
    run = _summary(SCORED, tmp_path)
    assert run["mean_score"] == pytest.approx(0.8)
    assert run["mean_score_se"] == pytest.approx(0.13333333333333333)
    assert run["executions"] == 10
    reported = json.loads(run["reported_metrics"])[0]["metrics"]
    assert reported["accuracy"]["value"] == pytest.approx(run["mean_score"])
    assert reported["stderr"]["value"] == pytest.approx(run["mean_score_se"])


def test_unscored_log_has_unscored_executions(tmp_path):
    run = _summary(UNSCORED, tmp_path)
    assert run["executions"] == 10 and run["unscored"] == 10
    assert run["mean_score"] is None


def test_epochs_are_attempts_averaged_per_sample(tmp_path):
    run = _summary(STREAMING, tmp_path)
    assert run["mean_score"] == pytest.approx(0.75)
    assert run["mean_score_se"] == pytest.approx(0.25)
    assert (run["executions"], run["cases"]) == (4, 2)
    ex = pl.read_parquet(tmp_path / "ds" / "executions.parquet")
    assert sorted(ex["attempt"].unique()) == [0, 1] and sorted(ex["epoch"].unique()) == [1, 2]


@pytest.mark.parametrize(
    ("pattern", "accuracy", "stderr"),
    [("*popularity.json", 2 / 3, 1 / 3), ("*security-guide.json", 1.0, 0.0)],
)
def test_json_logs_with_time_and_tokens(pattern, accuracy, stderr, tmp_path):
    path = next(ANALYSIS.glob(pattern))
    run = _summary(path, tmp_path)
    assert run["mean_score"] == pytest.approx(accuracy)
    assert run["mean_score_se"] == pytest.approx(stderr)
    ex = pl.read_parquet(tmp_path / "ds" / "executions.parquet")
    assert ex["latency_ms"].null_count() == 0 and ex["input_tokens"].sum() > 0
    raw = json.loads(path.read_text())
    assert ex["latency_ms"].sum() == pytest.approx(
        1000 * sum(s["total_time"] for s in raw["samples"])
    )


def test_error_run_without_samples_is_an_empty_run(tmp_path):
    report = ingest("inspect", [ERROR_LOG], tmp_path / "ds")
    assert report.rows["executions"] == 0 and report.rows["runs"] == 1
    ds = ef.load_dataset(tmp_path / "ds")
    runs = ds.runs.collect()
    assert runs["eval_status"].to_list() == ["error"]
    summary = ef.run_summary(ef.execution_scores(ds), runs=ds.runs).collect()
    assert summary["executions"].to_list() == [0]


def test_letters_map_to_one_zero_half(tmp_path):
    log = json.loads(next(ANALYSIS.glob("*popularity.json")).read_text())
    values = ["C", "I", "P"]
    for sample, value in zip(log["samples"], values, strict=True):
        sample["scores"]["match"]["value"] = value
    src = tmp_path / "letters.json"
    src.write_text(json.dumps(log))
    ingest("inspect", [src], tmp_path / "ds")
    scores = pl.read_parquet(tmp_path / "ds" / "scores.parquet").sort("case_id")
    assert scores["score"].to_list() == [1.0, 0.0, 0.5]
    assert scores["label"].to_list() == values
    assert scores["scale_max"].to_list() == [1.0, 1.0, 1.0]


def test_malformed_sample_in_eval_zip_names_member(tmp_path):
    bad = tmp_path / "bad.eval"
    with zipfile.ZipFile(SCORED) as src, zipfile.ZipFile(bad, "w") as dst:
        for name in src.namelist():
            data = src.read(name)
            if name == "samples/1_epoch_1.json":
                data = b'{"id": 1,\n "epoch": 1,\n "scores": {'
            dst.writestr(name, data)
    with pytest.raises(IngestError, match=r"bad\.eval!samples/1_epoch_1\.json:3:"):
        ingest("inspect", [bad], tmp_path / "ds")
    assert not (tmp_path / "ds").exists()


def test_not_a_zip(tmp_path):
    bad = tmp_path / "x.eval"
    bad.write_text("hello")
    with pytest.raises(IngestError, match=r"x\.eval: not a readable Inspect \.eval"):
        ingest("inspect", [bad], tmp_path / "ds")


BUILT = Path(__file__).parent / "fixtures" / "built" / "inspect_ai"
DICT_LOG = BUILT / "2025-06-03T14-02-11+00-00_capitals_dict-scores.json"


def test_dict_scores_mixing_metrics_and_counts_score_what_is_on_scale(tmp_path):
    report = ingest("inspect", [DICT_LOG], tmp_path / "ds")
    assert len(report.skipped) == 1
    assert "'answer_quality/words' not scored" in report.skipped[0]
    assert "12 to 75" in report.skipped[0] and "--scale-max" in report.skipped[0]
    scores = pl.read_parquet(tmp_path / "ds" / "scores.parquet")
    assert set(scores["evaluator"]) == {"answer_quality/correct", "answer_quality/concise"}
    # the count is kept on executions, as is
    ex = pl.read_parquet(tmp_path / "ds" / "executions.parquet").sort("case_id")
    assert ex["answer_quality/words"].to_list() == [12.0, 40.0, 75.0, 20.0]
    # Inspect's numbers per key: correct mean 0.75 ± 0.25, concise 0.75, words 36.75
    reported = {
        s["name"]: {k: m["value"] for k, m in s["metrics"].items()}
        for s in json.loads(DICT_LOG.read_text())["results"]["scores"]
    }
    means = dict(scores.group_by("evaluator").agg(pl.col("score").mean()).iter_rows())
    assert means["answer_quality/correct"] == pytest.approx(reported["correct"]["mean"])
    assert means["answer_quality/concise"] == pytest.approx(reported["concise"]["mean"])
    assert ex["answer_quality/words"].mean() == pytest.approx(reported["words"]["mean"])
    ds = ef.load_dataset(tmp_path / "ds")
    cfg = ef.config_from_dict(
        {"evaluators": {"answer_quality": {"children": {"correct": {}}}}, "borderline": None}
    )
    run = (
        ef.run_summary(ef.execution_scores(ds, cfg), cfg, runs=ds.runs).collect().row(0, named=True)
    )
    assert run["mean_score"] == pytest.approx(reported["correct"]["mean"])
    assert run["mean_score_se"] == pytest.approx(reported["correct"]["stderr"])


def test_dict_count_is_scored_with_its_scale_max(tmp_path):
    report = ingest("inspect", [DICT_LOG], tmp_path / "ds", scale_max="answer_quality/words=100")
    assert report.skipped == ()
    scores = pl.read_parquet(tmp_path / "ds" / "scores.parquet")
    words = scores.filter(pl.col("evaluator") == "answer_quality/words").sort("case_id")
    assert words["score"].to_list() == [12.0, 40.0, 75.0, 20.0]
    assert words["scale_max"].unique().to_list() == [100.0]


def test_dict_keys_the_logs_metrics_do_not_report_are_passthrough(tmp_path):
    """A pairwise scorer's dict `{winrate, winrate_low, winrate_high}` with metrics for
    `winrate` only: the interval bounds are not scores."""
    log = json.loads(DICT_LOG.read_text())
    spans = [(0.5, 0.9), (0.1, 0.6), (0.4, 1.0), (0.0, 0.3)]
    bounds = {str(s["id"]): span for s, span in zip(log["samples"], spans, strict=True)}
    for sample in log["samples"]:
        lo, hi = bounds[str(sample["id"])]
        sample["scores"]["answer_quality"]["value"] |= {"winrate_low": lo, "winrate_high": hi}
    src = tmp_path / "winrate.json"
    src.write_text(json.dumps(log))
    report = ingest("inspect", [src], tmp_path / "ds")
    notes = " ".join(report.skipped)
    for key in ("winrate_low", "winrate_high"):
        assert f"'answer_quality/{key}' not scored: the log's own metrics do not report" in notes
    scores = pl.read_parquet(tmp_path / "ds" / "scores.parquet")
    assert set(scores["evaluator"]) == {"answer_quality/correct", "answer_quality/concise"}
    ex = pl.read_parquet(tmp_path / "ds" / "executions.parquet").sort("case_id")
    assert ex["answer_quality/winrate_low"].to_list() == [bounds[c][0] for c in ex["case_id"]]
    # the tool's numbers are unchanged by the bounds
    plain = ingest("inspect", [DICT_LOG], tmp_path / "plain")
    assert plain.rows["scores"] == report.rows["scores"]
    # named in --scale-max, a key is scored after all
    again = ingest("inspect", [src], tmp_path / "ds2", scale_max="answer_quality/winrate_low=1")
    assert not any("'answer_quality/winrate_low'" in n for n in again.skipped)


def test_plain_score_out_of_scale_is_still_an_error(tmp_path):
    log = json.loads(DICT_LOG.read_text())
    log["samples"][0]["scores"]["answer_quality"]["value"] = 7
    src = tmp_path / "plain.json"
    src.write_text(json.dumps(log))
    with pytest.raises(IngestError, match=r"'answer_quality' = 7 is outside 0-1.*--scale-max"):
        ingest("inspect", [src], tmp_path / "ds")


def test_cli_prints_what_was_skipped(tmp_path):
    from typer.testing import CliRunner

    from evalframe.cli import app

    result = CliRunner().invoke(app, ["ingest", "inspect", str(DICT_LOG), "--to", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "skipped:" in result.output and "answer_quality/words" in result.output
    result = CliRunner().invoke(
        app, ["ingest", "inspect", str(DICT_LOG), "--to", str(tmp_path / "b"), "--json"]
    )
    assert "answer_quality/words" in json.loads(result.output)["skipped"][0]


# --- Zstandard members (ZIP method 93), as Inspect AI writes them since 0.3.206 ------------
ZSTD = Path(__file__).parent / "fixtures" / "built" / "inspect_ai" / "zstd"
"""The deflate fixtures re-packed member by member with Zstandard (repack_zstd.py there)."""


@pytest.mark.slow
@pytest.mark.parametrize(
    ("zstd_name", "deflate"),
    [("popularity_mj7k_zstd.eval", SCORED), ("log_streaming_zstd.eval", STREAMING)],
)
def test_zstd_eval_gives_the_deflate_logs_numbers(tmp_path, zstd_name, deflate):
    src = ZSTD / zstd_name
    with zipfile.ZipFile(src) as zf:  # the fixture really is method 93
        assert {i.compress_type for i in zf.infolist()} == {93}
    got = _summary(src, tmp_path / "zstd")
    want = _summary(deflate, tmp_path / "deflate")
    keep = [k for k in want if k not in ("run_id", "label", "source_file")]
    assert {k: got[k] for k in keep} == {k: want[k] for k in keep}
    for table in ("scores", "executions"):
        a = pl.read_parquet(tmp_path / "zstd" / "ds" / f"{table}.parquet").drop("run_id")
        b = pl.read_parquet(tmp_path / "deflate" / "ds" / f"{table}.parquet").drop("run_id")
        assert a.sort(a.columns[:3]).equals(b.sort(b.columns[:3]))
    if deflate == SCORED:
        assert got["mean_score"] == pytest.approx(0.8)
        assert got["mean_score_se"] == pytest.approx(0.13333333333333333)
    else:
        assert (got["mean_score"], got["mean_score_se"]) == pytest.approx((0.75, 0.25))


def _corrupt(src: Path, dst: Path, member: str, edit) -> None:
    data = bytearray(src.read_bytes())
    with zipfile.ZipFile(src) as zf:
        info = zf.getinfo(member)
    start = info.header_offset + 30 + len(info.filename.encode())
    edit(data, start, info)
    dst.write_bytes(bytes(data))


def _flip(data, start, info):
    data[start + info.compress_size // 2] ^= 0xFF


def _truncate(data, start, info):
    del data[start + info.compress_size // 2 :]


@pytest.mark.parametrize("edit", [_flip, _truncate], ids=["corrupt", "truncated"])
def test_unreadable_zstd_member_is_exit_2_naming_file_and_member(tmp_path, edit):
    from typer.testing import CliRunner

    from evalframe.cli import app

    bad = tmp_path / "bad.eval"
    _corrupt(ZSTD / "popularity_mj7k_zstd.eval", bad, "samples/3_epoch_1.json", edit)
    res = CliRunner().invoke(app, ["ingest", "inspect", str(bad), "--to", str(tmp_path / "ds")])
    assert res.exit_code == 2, res.output
    assert res.exception is None or isinstance(res.exception, SystemExit)
    err = " ".join(res.stderr.split())
    assert err.startswith("error:") and str(bad) in err
    assert "samples/3_epoch_1.json" in err or "not a readable Inspect .eval" in err
    assert not (tmp_path / "ds").exists()


def test_unsupported_zip_method_is_exit_2_naming_member(tmp_path):
    """A member in a method zipfile cannot read (here 99, AES) is an error, not a crash."""
    bad = tmp_path / "aes.eval"
    data = bytearray(SCORED.read_bytes())
    with zipfile.ZipFile(SCORED) as zf:
        info = zf.getinfo("samples/2_epoch_1.json")
    name = b"samples/2_epoch_1.json"
    eocd = data.rfind(b"PK\x05\x06")
    cd_start = int.from_bytes(data[eocd + 16 : eocd + 20], "little")
    entry = data.find(name, cd_start) - 46  # the central header precedes the name
    assert data[entry : entry + 4] == b"PK\x01\x02"
    # the method field: 8 bytes into the local header, 10 into the central one
    data[info.header_offset + 8 : info.header_offset + 10] = (99).to_bytes(2, "little")
    data[entry + 10 : entry + 12] = (99).to_bytes(2, "little")
    bad.write_bytes(bytes(data))
    with pytest.raises(IngestError, match=r"aes\.eval: member samples/2_epoch_1\.json"):
        ingest("inspect", [bad], tmp_path / "ds")


@pytest.mark.parametrize("epoch", [0, -3])
def test_an_epoch_below_1_is_refused_naming_file_and_sample(tmp_path, epoch):
    """Inspect counts epochs from 1; epoch 0 used to become attempt -1."""
    log = json.loads(next(ANALYSIS.glob("*popularity.json")).read_text())
    log["samples"][1]["epoch"] = epoch
    src = tmp_path / "log.json"
    src.write_text(json.dumps(log))
    sample = log["samples"][1]["id"]
    with pytest.raises(IngestError, match=rf"log\.json: sample {sample!r} has epoch {epoch}"):
        ingest("inspect", [src], tmp_path / "ds")
    assert not (tmp_path / "ds").exists()
