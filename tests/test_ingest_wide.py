"""Wide ingestion: one row per execution, one column per metric (CSV, Parquet, JSONL)."""

from __future__ import annotations

import polars as pl
import pytest

import evalframe as ef
from evalframe._private.ingest import IngestError, ingest

CSV = """model,question,seed,faithfulness,relevance,latency_ms,notes
gpt,q1,0,4,0.9,120,hello
gpt,q2,0,5,0.7,100,
claude,q1,0,3,1.0,90,x
claude,q1,1,5,0.5,95,y
"""
ID_COLS = "run_id=model,case_id=question,attempt=seed"


@pytest.fixture
def csv_file(tmp_path):
    path = tmp_path / "metrics.csv"
    path.write_text(CSV)
    return path


@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".jsonl"])
def test_formats_give_the_same_tables(suffix, csv_file, tmp_path):
    src = csv_file
    if suffix != ".csv":
        src = tmp_path / f"metrics{suffix}"
        df = pl.read_csv(csv_file)
        df.write_parquet(src) if suffix == ".parquet" else df.write_ndjson(src)
    report = ingest("wide", [src], tmp_path / "ds", id_cols=ID_COLS, scale_max="faithfulness=5")
    assert report.runs_added == ("claude", "gpt")
    assert report.rows == {"scores": 8, "executions": 4, "runs": 2}
    scores = pl.read_parquet(tmp_path / "ds" / "scores.parquet")
    faith = scores.filter(pl.col("evaluator") == "faithfulness")
    assert faith["scale_max"].unique().to_list() == [5.0]
    ex = pl.read_parquet(tmp_path / "ds" / "executions.parquet")
    assert ex["latency_ms"].dtype == pl.Float64 and "notes" in ex.columns
    assert sorted(ex["attempt"].to_list()) == [0, 0, 0, 1]


def test_scores_normalize_through_the_engine(csv_file, tmp_path):
    ingest("wide", [csv_file], tmp_path / "ds", id_cols=ID_COLS, scale_max="faithfulness=5")
    ds = ef.load_dataset(tmp_path / "ds")
    ex = ef.execution_scores(ds).collect().sort("run_id", "case_id", "attempt")
    # gpt q1: mean(4/5, 0.9) = 0.85
    gpt_q1 = ex.filter((pl.col("run_id") == "gpt") & (pl.col("case_id") == "q1"))
    assert gpt_q1.item(0, "score") == pytest.approx(0.85)


def test_metrics_option_and_default_ids(tmp_path):
    src = tmp_path / "m.csv"
    src.write_text("case_id,a,b,c\n1,0.5,0.25,1\n2,1,0,0\n")
    report = ingest("wide", [src], tmp_path / "ds", metrics="a,b", run_id="base")
    assert report.runs_added == ("base",)
    scores = pl.read_parquet(tmp_path / "ds" / "scores.parquet")
    assert set(scores["evaluator"]) == {"a", "b"}
    ex = pl.read_parquet(tmp_path / "ds" / "executions.parquet")
    assert "c" in ex.columns  # not a chosen metric: passed through on executions


def test_single_scale_max_for_all_metrics(tmp_path):
    src = tmp_path / "m.csv"
    src.write_text("case_id,a,b\n1,10,7\n")
    ingest("wide", [src], tmp_path / "ds", scale_max=10)
    scores = pl.read_parquet(tmp_path / "ds" / "scores.parquet")
    assert scores["scale_max"].to_list() == [10.0, 10.0]


def test_out_of_scale_value_names_line_and_hints(csv_file, tmp_path):
    with pytest.raises(
        IngestError, match=r"metrics\.csv:2: metric 'faithfulness' = 4.*--scale-max"
    ):
        ingest("wide", [csv_file], tmp_path / "ds", id_cols=ID_COLS)
    assert not (tmp_path / "ds").exists()


def test_ragged_csv_names_line(tmp_path):
    src = tmp_path / "bad.csv"
    src.write_text("case_id,a\n1,0.5\n2,0.5,9\n")
    with pytest.raises(IngestError, match=r"bad\.csv:3: 3 fields, the header has 2"):
        ingest("wide", [src], tmp_path / "ds")


def test_malformed_jsonl_names_line(tmp_path):
    src = tmp_path / "bad.jsonl"
    src.write_text('{"case_id": "1", "a": 0.5}\n{"case_id": "2", "a": }\n')
    with pytest.raises(IngestError, match=r"bad\.jsonl:2: not valid JSON"):
        ingest("wide", [src], tmp_path / "ds")


def test_duplicate_execution_names_line(tmp_path):
    src = tmp_path / "dup.csv"
    src.write_text("case_id,a\n1,0.5\n1,0.7\n")
    with pytest.raises(IngestError, match=r"dup\.csv:3: duplicate execution"):
        ingest("wide", [src], tmp_path / "ds")


def test_missing_case_column_hints_id_cols(tmp_path):
    src = tmp_path / "m.csv"
    src.write_text("question,a\n1,0.5\n")
    with pytest.raises(IngestError, match="--id-cols"):
        ingest("wide", [src], tmp_path / "ds")
    with pytest.raises(IngestError, match="'nope' is not in the file"):
        ingest("wide", [src], tmp_path / "ds", id_cols="case_id=nope")


def test_wide_options_refused_for_other_formats(csv_file, tmp_path):
    with pytest.raises(IngestError, match="wide"):
        ingest("agentv", [csv_file], tmp_path / "ds", metrics="a")
    with pytest.raises(IngestError, match="unknown format"):
        ingest("ragas", [csv_file], tmp_path / "ds")


# --- ids stay strings; BOM, U+2028 and line breaks inside quoted fields ---


def test_id_columns_are_read_as_strings(tmp_path):
    src = tmp_path / "ids.csv"
    src.write_text("model,version,question,seed,a\nm,2024.10,001,0,1\nm,2024.10,010,1,0\n")
    report = ingest(
        "wide", [src], tmp_path / "ds", id_cols="run_id=version,case_id=question,attempt=seed"
    )
    assert report.runs_added == ("2024.10",)
    ex = pl.read_parquet(tmp_path / "ds" / "executions.parquet").sort("case_id")
    assert ex["case_id"].to_list() == ["001", "010"]
    assert ex["attempt"].to_list() == [0, 1]
    assert ex["model"].to_list() == ["m", "m"]  # a pass-through column, as is


def test_csv_with_utf8_bom_ingests(tmp_path):
    src = tmp_path / "bom.csv"
    src.write_bytes("\ufeffcase_id,a\nq1,0.5\n".encode())
    ingest("wide", [src], tmp_path / "ds", run_id="r")
    scores = pl.read_parquet(tmp_path / "ds" / "scores.parquet")
    assert scores.select("case_id", "evaluator", "score").rows() == [("q1", "a", 0.5)]


def test_quoted_fields_with_line_separators_ingest(tmp_path):
    src = tmp_path / "sep.csv"
    src.write_text(
        'case_id,a,notes\nq1,0.5,"one\u2028two"\nq2,1,"three\nfour"\nq3,0,plain\n',
        newline="",
    )
    ingest("wide", [src], tmp_path / "ds", run_id="r")
    ex = pl.read_parquet(tmp_path / "ds" / "executions.parquet").sort("case_id")
    assert ex["notes"].to_list() == ["one\u2028two", "three\nfour", "plain"]
    jsonl = tmp_path / "sep.jsonl"
    jsonl.write_text('{"case_id": "q1", "a": 0.5, "notes": "one\u2028two"}\n', newline="")
    ingest("wide", [jsonl], tmp_path / "ds2", run_id="r")
    ex = pl.read_parquet(tmp_path / "ds2" / "executions.parquet")
    assert ex["notes"].to_list() == ["one\u2028two"]


@pytest.mark.parametrize("fmt", ["wide", "agentv", "promptfoo", "inspect"])
def test_json_nested_thousands_deep_is_a_clear_error(fmt, tmp_path):
    deep = "[" * 50_000 + "]" * 50_000
    name = "deep.jsonl" if fmt in ("wide", "agentv") else "deep.json"
    src = tmp_path / name
    src.write_text('{"case_id": "q", "test_id": "q", "a": ' + deep + "}\n")
    with pytest.raises(IngestError, match=r"deep\.jsonl?(:1)?: JSON nested deeper than 200"):
        ingest(fmt, [src], tmp_path / "ds")
    # deep enough to break a recursive parser of the tool's structure, shallow enough for json
    medium = '{"test_id": "q", "score": 1, "scores": ' + '[{"name": "g", "scores": ' * 400
    src.write_text(medium + "[]" + "}]" * 400 + "}\n")
    if fmt in ("wide", "agentv"):
        with pytest.raises(IngestError, match="nested deeper than 200"):
            ingest(fmt, [src], tmp_path / "ds")
