"""Bad input (docs/tables.md#bad-input): every class is reported, all at once, with counts and
example keys."""

from __future__ import annotations

import datetime as dt

import polars as pl
import pytest

import evalframe as ef

SCORES = {
    "run_id": ["r", "r", "r"],
    "case_id": ["a", "b", "c"],
    "evaluator": ["m", "m", "m"],
    "score": [1.0, 2.0, 3.0],
    "scale_max": [5.0, 5.0, 5.0],
}


def _problems(**tables) -> dict[str, ef.Problem]:
    with pytest.raises(ef.ValidationError) as info:
        ef.Dataset.from_frames(**tables)
    return {f"{p.table}.{p.column}: {p.message}": p for p in info.value.problems}


def _scores(**changes) -> pl.DataFrame:
    return pl.DataFrame({**SCORES, **changes}, strict=False)


def test_valid_input_passes():
    ds = ef.Dataset.from_frames(_scores())
    assert ds.evaluators == ("m",)


def test_missing_required_column():
    frame = _scores().drop("evaluator")
    problems = _problems(scores=frame)
    assert (
        "scores.evaluator: required column is missing (the table has run_id, case_id, score, "
        "scale_max)" in problems
    )


def test_wrong_type():
    problems = _problems(scores=_scores(score=["1", "2", "3"]))
    (key,) = problems
    assert key.startswith("scores.score: wrong type")


@pytest.mark.parametrize(
    ("score", "scale_max", "weight", "message"),
    [
        (float("nan"), 5.0, None, "score is NaN or infinite"),
        (float("inf"), 5.0, None, "score is NaN or infinite"),
        (-0.5, 5.0, None, "score is negative"),
        (5.5, 5.0, None, "score is above scale_max"),
        (0.0, 0.0, None, "scale_max is not a positive number"),
        (1.0, 5.0, -1.0, "weight is negative or not finite"),
    ],
)
def test_value_problems(score, scale_max, weight, message):
    frame = _scores(
        score=[1.0, score, 1.0], scale_max=[5.0, scale_max, 5.0], weight=[None, weight, None]
    )
    problems = _problems(scores=frame)
    problem = next(p for k, p in problems.items() if message in k)
    assert problem.count == 1
    assert problem.examples == ("run_id=r case_id=b attempt=0 evaluator=m",)


def test_every_problem_is_reported_at_once_with_at_most_five_examples():
    n = 12
    scores = pl.DataFrame(
        {
            "run_id": "r",
            "case_id": [f"c{i:02d}" for i in range(n)] + ["c00"],
            "evaluator": "m",
            "score": [-1.0] * n + [1.0],
        }
    )
    executions = pl.DataFrame(
        {"run_id": "r", "case_id": [f"c{i:02d}" for i in range(1, n)], "status": "done"}
    )
    outcomes = pl.DataFrame({"run_id": "r", "case_id": ["zz"], "outcome": ["x"], "passed": [None]})
    problems = _problems(scores=scores, executions=executions, outcomes=outcomes)
    negative = problems["scores.score: score is negative"]
    assert negative.count == n and len(negative.examples) == 5
    assert problems["executions.status: status is not one of ok, error"].count == n - 1
    assert problems["scores.: execution is not in the executions table"].count == 2
    assert problems["outcomes.: execution is not in the executions table"].count == 1
    assert problems["outcomes.passed: passed is null"].count == 1
    dup = problems["scores.run_id, case_id, attempt, evaluator: duplicate key (keys listed)"]
    assert dup.count == 1 and dup.examples == ("run_id=r case_id=c00 attempt=0 evaluator=m",)


def test_error_message_names_table_column_count_examples_and_ends_with_a_hint():
    with pytest.raises(ef.ValidationError) as info:
        ef.Dataset.from_frames(_scores(score=[1.0, -2.0, 1.0]))
    text = str(info.value)
    assert "scores.score: score is negative (1 row); e.g. run_id=r case_id=b" in text
    assert text.splitlines()[-1].startswith("hint:")
    assert info.value.exit_code == 2


def test_null_keys_and_duplicate_executions():
    executions = pl.DataFrame({"run_id": ["r", "r", "r", None], "case_id": ["a", "b", "c", "c"]})
    executions = pl.concat([executions, executions.head(1)])
    problems = _problems(scores=_scores(), executions=executions)
    assert problems["executions.run_id: key column is null"].count == 1
    assert problems["executions.run_id, case_id, attempt: duplicate key (keys listed)"].count == 1


def test_threshold_outside_unit_interval():
    executions = pl.DataFrame(
        {"run_id": "r", "case_id": ["a", "b", "c"], "threshold": [0.5, 75.0, None]}
    )
    problems = _problems(scores=_scores(), executions=executions)
    assert problems["executions.threshold: threshold is outside 0-1"].count == 1


def test_clamp_moves_scores_into_range_and_reports_counts():
    frame = _scores(score=[7.0, -1.0, float("nan")])
    ds = ef.Dataset.from_frames(frame, clamp=True)
    assert (ds.clamped.clamped, ds.clamped.nulled, ds.clamped.changed) == (2, 1, 3)
    assert ds.scores.collect().sort("case_id")["score"].to_list() == [5.0, 0.0, None]


def test_defaults_fill_optional_columns():
    columns = {k: SCORES[k] for k in ("run_id", "case_id", "evaluator")}
    ds = ef.Dataset.from_frames(pl.DataFrame({**columns, "score": [0.1, 0.5, 1.0]}))
    scores = ds.scores.collect()
    assert scores["attempt"].to_list() == [0, 0, 0]
    assert scores["scale_max"].to_list() == [1.0, 1.0, 1.0]
    execs = ds.executions.collect()
    assert execs["status"].to_list() == ["ok", "ok", "ok"]


def test_extra_columns_pass_through_to_execution_scores():
    executions = pl.DataFrame({"run_id": "r", "case_id": ["a", "b", "c"], "model": ["x", "y", "z"]})
    ds = ef.Dataset.from_frames(_scores(), executions=executions)
    out = ef.execution_scores(ds).collect().sort("case_id")
    assert out["model"].to_list() == ["x", "y", "z"]


def test_load_dataset_reads_hive_partitioned_folders(tmp_path):
    root = tmp_path / "data" / "scores"
    for run in ("r1", "r2"):
        part = root / f"run_id={run}"
        part.mkdir(parents=True)
        pl.DataFrame({"case_id": ["a"], "evaluator": ["m"], "score": [0.9]}).write_parquet(
            part / "part.parquet"
        )
    ds = ef.load_dataset(tmp_path / "data")
    assert sorted(ef.execution_scores(ds).collect()["run_id"].to_list()) == ["r1", "r2"]


def test_missing_dataset_and_missing_scores_table(tmp_path):
    with pytest.raises(ef.DatasetNotFoundError, match="does not exist"):
        ef.load_dataset(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ef.DatasetNotFoundError, match="no `scores` table"):
        ef.load_dataset(tmp_path / "empty")


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_a_csv_file_or_a_folder_of_csv_files_points_to_ingest(tmp_path, engine):
    csv = tmp_path / "scores.csv"
    csv.write_text("case_id,evaluator,score\na,m,0.5\n")
    with pytest.raises(ef.UsageError, match=r"scores\.csv is a \.csv file, not a dataset; hint"):
        ef.score_tables(csv, engine=engine)
    with pytest.raises(ef.DatasetNotFoundError) as caught:
        ef.score_tables(tmp_path, engine=engine)
    assert "hint: it holds scores.csv: evalframe reads Parquet tables" in str(caught.value)
    assert "`evalframe ingest wide FILE --to DATASET`" in str(caught.value)


@pytest.mark.parametrize(
    ("change", "problem", "hint"),
    [
        (
            lambda s: s.drop("score"),
            "scores.score: required column is missing (the table has run_id, case_id, evaluator)",
            "hint: fix the rows above in the source tables.",
        ),
        (
            lambda s: pl.concat([s, s]),
            "scores.run_id, case_id, attempt, evaluator: duplicate key (keys listed) (1 row)",
            "hint: fix the rows above in the source tables; a run ingested twice is replaced "
            "with `evalframe ingest ... --replace`.",
        ),
        (
            lambda s: s.with_columns(score=pl.lit(float("nan"))),
            "scores.score: score is NaN or infinite (1 row)",
            "hint: fix the rows above in the source tables, or pass --clamp (clamp=True) to "
            "clamp out-of-range scores and turn NaN/inf into null.",
        ),
    ],
)
def test_each_problem_gets_the_hint_that_fits_it(tmp_path, change, problem, hint):
    scores = pl.DataFrame({"run_id": ["r"], "case_id": ["c"], "evaluator": ["m"], "score": [0.5]})
    change(scores).write_parquet(tmp_path / "scores.parquet")
    with pytest.raises(ef.ValidationError) as caught:
        ef.load_dataset(tmp_path)
    lines = str(caught.value).splitlines()
    assert lines[1].startswith(f"  - {problem}") and lines[-1] == hint


TIME_TEXTS = [  # created_at text -> the naive UTC timestamp both engines read (None: refused)
    ("2026-01-02", dt.datetime(2026, 1, 2)),
    ("2026-01-02T03:04", dt.datetime(2026, 1, 2, 3, 4)),
    ("2026-01-02 03:04:05", dt.datetime(2026, 1, 2, 3, 4, 5)),
    ("2026-01-02T03:04:05.25", dt.datetime(2026, 1, 2, 3, 4, 5, 250000)),
    ("2026-01-02T03:04:05Z", dt.datetime(2026, 1, 2, 3, 4, 5)),
    ("2026-01-02T03:04:05.123456Z", dt.datetime(2026, 1, 2, 3, 4, 5, 123456)),
    ("2026-01-02T03:04:05+02:00", dt.datetime(2026, 1, 2, 1, 4, 5)),
    ("2026-01-02T03:04:05.5-0130", dt.datetime(2026, 1, 2, 4, 34, 5, 500000)),
    ("2026-01-02T00:30Z", dt.datetime(2026, 1, 2, 0, 30)),
    ("2026-01-02T00:30+01:00", dt.datetime(2026, 1, 1, 23, 30)),
    ("02/01/2026", None),  # day or month first? refused, not guessed
    ("2026-13-02", None),
    ("2026-01-02T25:00:00", None),
    ("2026-01-02T03:04:05.1234567", None),  # below a microsecond
    (" 2026-01-02", None),
    ("garbage", None),
    (None, None),
]


def test_created_at_text_is_iso_8601_read_as_utc_by_both_engines():
    import duckdb

    from evalframe._private.data.validate import parse_time_text, time_text_sql

    texts = [t for t, _ in TIME_TEXTS]
    want = [w for _, w in TIME_TEXTS]
    frame = pl.DataFrame({"c": texts}, schema={"c": pl.String})
    assert frame.select(parse_time_text(pl.col("c")))["c"].to_list() == want
    con = duckdb.connect()
    con.execute("set TimeZone = 'UTC'")
    con.register("t", frame)
    got = con.execute(f"select {time_text_sql('c')} from t").fetchall()
    assert [r[0] for r in got] == want


def test_created_at_with_an_offset_orders_runs_by_the_instant(tmp_path):
    pl.DataFrame(
        {"run_id": ["a", "a", "b", "b"], "case_id": ["x", "y"] * 2, "evaluator": "m",
         "score": [0.9, 0.5, 0.8, 0.7]}
    ).write_parquet(tmp_path / "scores.parquet")  # fmt: skip
    # a is 03:00 at +02:00 = 01:00 UTC, b is 02:00 UTC: a comes first
    pl.DataFrame(
        {"run_id": ["b", "a"], "created_at": ["2026-01-02T02:00:00Z", "2026-01-02T03:00+02:00"]}
    ).write_parquet(tmp_path / "runs.parquet")
    summary = ef.score_tables(tmp_path)["run_summary"]
    summary = summary.collect() if isinstance(summary, pl.LazyFrame) else summary
    assert summary.select("run_id", "created_at").rows() == [
        ("a", dt.datetime(2026, 1, 2, 1)),
        ("b", dt.datetime(2026, 1, 2, 2)),
    ]
