"""The DuckDB engine (engines/duckdb/ over the sql/ macros) returns the polars
engine's tables — same columns, dtypes, row order, booleans and strings exactly, floats
within 1e-9 — for random flat datasets and configs written to files, whatever the input
row order. Also: what it does not run is refused with the capability table's message, and
ids and config strings never become SQL text.
"""

from __future__ import annotations

import itertools
import math
import os
import shutil

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import evalframe as ef
from evalframe._private import schema as S
from evalframe._private.compare.compare import compare
from evalframe._private.engines import capabilities as caps
from evalframe._private.engines.duckdb import read as duckdb_read
from evalframe._private.engines.duckdb import run as duckdb_pipeline
from evalframe._private.engines.duckdb.run import compare_tables_duckdb, score_tables_duckdb
from tests import reference as ref
from tests.sql_strategies import flat_scenarios, shuffles
from tests.strategies import Scenario, frames
from tests.test_reference_properties import CASE_KEY, EXEC_KEY, RUN_KEY, _compare

SETTINGS = settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
    ],
)


def assert_same(got: pl.DataFrame, want: pl.DataFrame, what: str) -> None:
    """Same columns in the same order, same dtypes, same rows in the same order; floats
    within 1e-9, everything else exactly."""
    assert got.columns == want.columns, f"{what}: columns {got.columns} != {want.columns}"
    assert got.schema == want.schema, f"{what}: dtypes {got.schema} != {want.schema}"
    assert got.height == want.height, f"{what}: {got.height} rows != {want.height}"
    for column in want.columns:
        for i, (a, b) in enumerate(zip(got[column].to_list(), want[column].to_list(), strict=True)):
            if isinstance(b, float) and isinstance(a, float):
                ok = (math.isnan(a) and math.isnan(b)) or abs(a - b) <= 1e-9
            else:
                ok = a == b and (a is None) == (b is None)
            assert ok, f"{what}.{column} row {i}: duckdb {a!r} != polars {b!r}\n{want[i]}"


def polars_tables(ds: ef.Dataset, cfg: ef.Config) -> dict[str, pl.DataFrame]:
    ex = ef.execution_scores(ds, cfg).sort(S.RUN_ID, S.CASE_ID, S.ATTEMPT).collect()
    return {
        S.EXECUTION_SCORES: ex,
        S.CASE_SUMMARY: ef.case_summary(ex.lazy(), cfg).collect(),
        S.RUN_SUMMARY: ef.run_summary(ex.lazy(), cfg, runs=ds.runs).collect(),
    }


HOSTILE = "x'); drop table scores; --"
HOSTILE_EVALUATOR = "q'uality\"; drop table outcomes; --"


@pytest.mark.slow
def test_hostile_ids_and_config_strings_are_data_not_sql(tmp_path):
    """Run ids, case ids and evaluator names with quotes and statements reach SQL only
    as bound parameters or registered relations: they are scored like any other id."""
    scores = pl.DataFrame(
        {
            "run_id": [HOSTILE, HOSTILE, "base", "base"],
            "case_id": ["c'1", "c2", "c'1", "c2"],
            "evaluator": [HOSTILE_EVALUATOR, "plain"] * 2,
            "score": [0.9, 0.4, 0.95, 0.9],
        }
    )
    outcomes = pl.DataFrame(
        {
            "run_id": ["base"],
            "case_id": ["c2"],
            "attempt": [0],
            "outcome": ["o'); drop table runs; --"],
            "passed": [True],
        }
    )
    runs = pl.DataFrame({"run_id": [HOSTILE, "base"], "label": ["'; select 1; --", "ok"]})
    for name, frame in (("scores", scores), ("outcomes", outcomes), ("runs", runs)):
        frame.write_parquet(tmp_path / f"{name}.parquet")
    ds = ef.Dataset.from_frames(scores, outcomes=outcomes, runs=runs)
    cfg = ef.config_from_dict(
        {
            "aggregator": "safety_gate",
            "required_children": [HOSTILE_EVALUATOR],
            "evaluators": {HOSTILE_EVALUATOR: {"weight": 2, "required": True}, "plain": {}},
        }
    )
    pairs = [("base", HOSTILE), (HOSTILE, "base")]
    got = compare_tables_duckdb(tmp_path, cfg, pairs)
    assert got.scored is not None
    want = polars_tables(ds, cfg)
    for name, frame in want.items():
        assert_same(*sort_like(got.scored[name], frame), name)
    assert HOSTILE in got.scored[S.RUN_SUMMARY][S.RUN_ID].to_list()
    expected = compare(
        want[S.CASE_SUMMARY].lazy(),
        pairs,
        cfg,
        run_summary=want[S.RUN_SUMMARY].lazy(),
        evaluator_scores=ef.evaluator_scores(ds, cfg),
    )
    for name, frame in expected.items():
        assert_same(got[name], frame.collect(), name)
    assert got[S.RUN_DELTAS]["candidate_run_id"][0] == HOSTILE
    # the files are read, never written: scoring them again gives the same rows
    again = score_tables_duckdb(tmp_path, cfg)
    assert again[S.EXECUTION_SCORES].height == 4


@pytest.mark.slow
def test_unknown_run_ids_raise_like_polars(tmp_path):
    scores = pl.DataFrame({"run_id": ["r"], "case_id": ["c"], "evaluator": ["a"], "score": [1.0]})
    scores.write_parquet(tmp_path / "scores.parquet")
    with pytest.raises(ef.UnknownRunError, match="unknown run id"):
        compare_tables_duckdb(tmp_path, ef.Config(), [("r", "nope")])


# --- end to end from the files: engines/duckdb/ ---------------------------------

FILE_SETTINGS = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
        HealthCheck.function_scoped_fixture,
    ],
)


def write_dataset(sc: Scenario, folder, order=None):
    """The scenario's tables as NAME.parquet files (rows in `order`)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, frame in frames(sc, order).items():
        if frame is not None:
            frame.write_parquet(folder / f"{name}.parquet")
    return folder


def sort_like(got: pl.DataFrame, want: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    key = [c for c in ("config_id", *EXEC_KEY) if c in want.columns]
    return got.sort(key), want.sort(key)


@pytest.mark.slow
@settings(FILE_SETTINGS, max_examples=15)
@given(data=st.data())
def test_duckdb_from_files_equals_reference_and_polars(tmp_path_factory, data):
    """Random flat datasets (boundary ties, missing evaluators, attempts, errored and
    unscored executions, empty runs) written to Parquet with shuffled rows: the DuckDB
    engine equals the slow reference and, column for column, the polars engine."""
    sc = data.draw(flat_scenarios())
    cfg = ef.config_from_dict(sc.config)
    folder = write_dataset(sc, tmp_path_factory.mktemp("ds"), data.draw(shuffles(sc)))
    got = score_tables_duckdb(folder, cfg, memory_limit="500MB")
    assert list(got) == [S.EXECUTION_SCORES, S.CASE_SUMMARY, S.RUN_SUMMARY]
    ex = ref.execution_scores(sc.scores, sc.executions, sc.outcomes, cfg)
    _compare(got[S.EXECUTION_SCORES], ex, EXEC_KEY, "execution_scores")
    _compare(got[S.CASE_SUMMARY], ref.case_summary(ex, cfg), CASE_KEY, "case_summary")
    _compare(got[S.RUN_SUMMARY], ref.run_summary(ex, cfg, sc.runs), RUN_KEY, "run_summary")
    want = polars_tables(ef.Dataset.from_frames(**frames(sc)), cfg)
    for name, frame in want.items():
        assert_same(*sort_like(got[name], frame), name)
    assert_same(got[S.CASE_SUMMARY], want[S.CASE_SUMMARY], "case_summary order")


@pytest.mark.slow
@FILE_SETTINGS
@given(data=st.data())
def test_duckdb_compare_from_files_equals_polars(tmp_path_factory, data):
    """case_deltas, evaluator_deltas (in SQL, from the leaf scores of the same pass) and
    run_deltas equal the polars compare over the polars engine's tables; the score tables
    of that same session equal the slow reference."""
    sc = data.draw(flat_scenarios())
    cfg = ef.config_from_dict(sc.config)
    folder = write_dataset(sc, tmp_path_factory.mktemp("ds"), data.draw(shuffles(sc)))
    ds = ef.Dataset.from_frames(**frames(sc))
    want = polars_tables(ds, cfg)
    runs = want[S.RUN_SUMMARY][S.RUN_ID].to_list()
    every = list(itertools.product(runs, runs))
    pairs = data.draw(st.lists(st.sampled_from(every), max_size=4)) if every else []
    expected = compare(
        want[S.CASE_SUMMARY].lazy(),
        pairs,
        cfg,
        run_summary=want[S.RUN_SUMMARY].lazy(),
        evaluator_scores=ef.evaluator_scores(ds, cfg),
    )
    got = compare_tables_duckdb(folder, cfg, pairs)
    for name, frame in expected.items():
        assert_same(got[name], frame.collect(), name)
    assert got.scored is not None
    ex = ref.execution_scores(sc.scores, sc.executions, sc.outcomes, cfg)
    _compare(got.scored[S.EXECUTION_SCORES], ex, EXEC_KEY, "execution_scores")
    _compare(got.scored[S.CASE_SUMMARY], ref.case_summary(ex, cfg), CASE_KEY, "case_summary")
    _compare(got.scored[S.RUN_SUMMARY], ref.run_summary(ex, cfg, sc.runs), RUN_KEY, "run_summary")


@pytest.mark.slow
def test_duckdb_compare_picks_pairs_from_its_run_summary(tmp_path):
    ef.write_demo(tmp_path / "d", n_cases=15)
    got = compare_tables_duckdb(
        tmp_path / "d", ef.Config(), lambda rs: ef.pairs_for(rs, mode="consecutive")
    )
    assert got.pairs and got.scored is not None
    assert set(got[S.RUN_DELTAS]["candidate_run_id"]) == {c for _b, c in got.pairs}
    assert got[S.EVALUATOR_DELTAS].height > 0


@pytest.mark.slow
def test_duckdb_is_the_only_engine_used(tmp_path, monkeypatch):
    """No polars load, no polars scan of the input files: the DuckDB engine reads them."""
    ef.write_demo(tmp_path / "d", n_cases=10)
    (tmp_path / "d" / "labels.parquet").unlink()  # judge agreement is polars-side (capabilities)
    want = ef.score_tables(tmp_path / "d", ef.Config())

    def refuse(*args, **kwargs):
        raise AssertionError("polars touched the input files")

    import evalframe._private.data.dataset as dataset_module

    monkeypatch.setattr(dataset_module, "load_dataset", refuse)
    monkeypatch.setattr(dataset_module, "open_tables", refuse)
    monkeypatch.setattr(pl, "scan_parquet", refuse)
    monkeypatch.setattr(pl, "read_parquet", refuse)
    got = score_tables_duckdb(tmp_path / "d", ef.Config())
    for name in (S.EXECUTION_SCORES, S.CASE_SUMMARY, S.RUN_SUMMARY):
        assert_same(*sort_like(got[name], want[name]), name)
    deltas = compare_tables_duckdb(
        tmp_path / "d", ef.Config(), [("2026-10-01-v1.4", "2026-10-15-v1.5")]
    )
    assert deltas[S.RUN_DELTAS].height == 1


@pytest.mark.slow
def test_duckdb_reads_folders_of_files_and_duckdb_databases(tmp_path):
    ef.write_demo(tmp_path / "d", n_cases=12)
    (tmp_path / "d" / "labels.parquet").unlink()  # judge agreement is polars-side (capabilities)
    want = ef.score_tables(tmp_path / "d", ef.Config())
    folder = tmp_path / "parts"
    scores = pl.read_parquet(tmp_path / "d" / "scores.parquet")
    for run in scores["run_id"].unique().to_list():
        part = folder / "scores" / f"run_id={run}"
        part.mkdir(parents=True)
        scores.filter(pl.col("run_id") == run).drop("run_id").write_parquet(part / "0.parquet")
    for name in ("executions", "outcomes", "runs"):
        shutil.copy(tmp_path / "d" / f"{name}.parquet", folder / f"{name}.parquet")
    import duckdb

    db = tmp_path / "data.duckdb"
    con = duckdb.connect(str(db))
    for name in ("scores", "executions", "outcomes", "runs"):
        con.register("frame", pl.read_parquet(tmp_path / "d" / f"{name}.parquet"))
        con.execute(f"create table {name} as select * from frame")
        con.unregister("frame")
    con.close()
    for source in (folder, db):
        got = score_tables_duckdb(source, ef.Config())
        for name in (S.EXECUTION_SCORES, S.CASE_SUMMARY, S.RUN_SUMMARY):
            assert_same(*sort_like(got[name], want[name]), f"{source.name} {name}")


@pytest.mark.slow
def test_duckdb_reads_the_files_the_polars_engine_reads(tmp_path):
    """Dataset paths are literal (`[x]` in a folder or file name is no pattern), hidden
    files and folders (`.` / `_`) are skipped, hive keys are typed as the contract says
    (dataset.table_files), and a `KEY=value` folder above the dataset is no partition of
    its tables: both engines score the same rows."""
    ef.write_demo(tmp_path / "d", n_cases=8)
    root = tmp_path / "lake=eval" / "ds[x]"
    scores = pl.read_parquet(tmp_path / "d" / "scores.parquet")
    for (run, attempt), part in scores.group_by("run_id", "attempt", maintain_order=True):
        folder = root / "scores" / f"run_id={run}" / f"attempt={attempt}"
        folder.mkdir(parents=True)
        part.drop("run_id", "attempt").write_parquet(folder / "part[0]?.parquet")
    junk = scores.head(3).with_columns(pl.lit(-1.0).alias("score"))
    for hidden in ("_tmp", ".cache"):
        (root / "scores" / hidden).mkdir()
        junk.write_parquet(root / "scores" / hidden / "part.parquet")
    (root / "scores" / "_SUCCESS").write_text("")
    for name in ("executions", "outcomes", "runs"):
        shutil.copy(tmp_path / "d" / f"{name}.parquet", root / f"{name}.parquet")
    decoy = root.parent / "dsx"  # what the pattern ds[x] would match instead
    shutil.copytree(root, decoy)
    shutil.rmtree(decoy / "scores")
    junk.write_parquet(decoy / "scores.parquet")
    want = ef.score_tables(root, ef.Config())
    got = score_tables_duckdb(root, ef.Config())
    for name in (S.EXECUTION_SCORES, S.CASE_SUMMARY, S.RUN_SUMMARY):
        assert_same(*sort_like(got[name], want[name]), name)
    assert got[S.EXECUTION_SCORES].height == pl.read_parquet(root / "executions.parquet").height
    assert "lake" not in got[S.EXECUTION_SCORES].columns
    assert "lake" not in want[S.EXECUTION_SCORES].collect_schema().names()


def test_duckdb_refuses_what_it_does_not_compute(tmp_path):
    ef.write_demo(tmp_path / "d", n_cases=5)
    tree = ef.config_from_dict(
        {"evaluators": {"g": {"aggregator": "minimum", "children": {"tool_routing": {}}}}}
    )
    with pytest.raises(ef.UsageError) as refused:
        score_tables_duckdb(tmp_path / "d", tree)
    detail = "evaluator(s) g are composite"
    assert str(refused.value) == caps.message("duckdb", caps.COMPOSITE_TREES, detail)
    assert "flat configs only" in str(refused.value)
    with pytest.raises(ef.UsageError) as refused:
        score_tables_duckdb(tmp_path / "d", ef.Config(), evaluators=True)
    assert str(refused.value) == caps.message("duckdb", caps.EVALUATOR_SCORES)
    with pytest.raises(ef.UsageError, match="memory-limit"):
        score_tables_duckdb(tmp_path / "d", ef.Config(), memory_limit="lots")
    with pytest.raises(ef.DatasetNotFoundError):
        score_tables_duckdb(tmp_path / "nowhere", ef.Config())


@pytest.mark.slow
def test_duckdb_spills_into_the_given_temp_directory_and_cleans_its_own(tmp_path, monkeypatch):
    ef.write_demo(tmp_path / "d", n_cases=5)
    made: list[str] = []
    real = duckdb_read.tempfile.mkdtemp

    def spy(*args, **kwargs):
        made.append(real(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(duckdb_read.tempfile, "mkdtemp", spy)
    score_tables_duckdb(tmp_path / "d", ef.Config())
    assert made and not any(os.path.exists(p) for p in made)
    mine = tmp_path / "spill"
    mine.mkdir()
    score_tables_duckdb(tmp_path / "d", ef.Config(), temp_directory=mine)
    assert mine.is_dir()


# --- validation: the same problems as the polars engine -------------------------------------
GOOD_SCORES = {
    "run_id": ["r", "r", "r", "r"],
    "case_id": ["a", "a", "b", "b"],
    "attempt": [0, 0, 0, 0],
    "evaluator": ["m", "n", "m", "n"],
    "score": [4.0, 3.0, 5.0, 1.0],
    "scale_max": [5.0, 5.0, 5.0, 5.0],
    "weight": [1.0, 2.0, 1.0, 2.0],
}
GOOD_EXECUTIONS = {
    "run_id": ["r", "r"],
    "case_id": ["a", "b"],
    "attempt": [0, 0],
    "status": ["ok", "ok"],
    "threshold": [0.5, None],
}
GOOD_OUTCOMES = {
    "run_id": ["r", "r"],
    "case_id": ["a", "b"],
    "attempt": [0, 0],
    "outcome": ["o", "o"],
    "passed": [True, False],
}
GOOD_RUNS = {"run_id": ["r"], "created_at": ["2026-01-02T03:04:05"]}


def _bad(table: str, **columns) -> dict[str, dict]:
    tables = {
        "scores": dict(GOOD_SCORES),
        "executions": dict(GOOD_EXECUTIONS),
        "outcomes": dict(GOOD_OUTCOMES),
        "runs": dict(GOOD_RUNS),
    }
    tables[table].update(columns)
    return tables


BAD_INPUTS = {
    "null keys": _bad("scores", run_id=["r", None, "r", "r"], evaluator=["m", "n", None, "n"]),
    "nan and inf": _bad("scores", score=[float("nan"), 3.0, float("inf"), 1.0]),
    "negative": _bad("scores", score=[-1.0, 3.0, 5.0, -0.5]),
    "above scale_max": _bad("scores", score=[6.0, 3.0, 5.0, 1.0]),
    "scale_max": _bad("scores", scale_max=[0.0, -1.0, 5.0, float("nan")]),
    "weight": _bad("scores", weight=[-1.0, float("inf"), 1.0, 2.0]),
    "duplicate scores": _bad("scores", evaluator=["m", "m", "m", "n"]),
    "orphan scores": _bad("scores", case_id=["a", "a", "zz", "zz"]),
    "status": _bad("executions", status=["ok", "crashed"]),
    "threshold": _bad("executions", threshold=[1.5, -0.1]),
    "duplicate executions": _bad("executions", case_id=["a", "a"]),
    "null execution key": _bad("executions", case_id=["a", None]),
    "outcome orphans": _bad("outcomes", case_id=["a", "q"]),
    "duplicate outcomes": _bad("outcomes", case_id=["a", "a"]),
    "passed null": _bad("outcomes", passed=[True, None]),
    "runs": {**_bad("runs"), "runs": {"run_id": ["r", "r", None], "created_at": ["x", None, None]}},
    "missing column": {
        **_bad("scores"),
        "scores": {k: v for k, v in GOOD_SCORES.items() if k != "score"},
    },
    "wrong type": _bad("scores", score=["4", "3", "5", "1"]),
    # NaN next to finite values only: Parquet min/max statistics leave NaN out
    "score NaN": _bad("scores", score=[float("nan"), 3.0, 5.0, 1.0]),
    "scale_max NaN": _bad("scores", scale_max=[float("nan"), 5.0, 5.0, 5.0]),
    "weight NaN": _bad("scores", weight=[float("nan"), 1.0, 1.0, 2.0]),
    "threshold NaN": _bad("executions", threshold=[float("nan"), 0.5]),
    "weight above MAX_WEIGHT": _bad("scores", weight=[1e305, 1.0, 1e300, 2.0]),
    "weight below MIN_WEIGHT": _bad("scores", weight=[1e-310, 0.0, 1e-300, 5e-324]),
    "empty evaluator": _bad("scores", evaluator=["", "n", "m", ""]),
    "latency_ms": _bad("executions", latency_ms=[-5.0, 2e12]),
    "latency_ms NaN / inf": _bad("executions", latency_ms=[float("nan"), float("inf")]),
    "cost_usd": _bad("executions", cost_usd=[1e20, -0.01]),
    "cost_usd NaN": _bad("executions", cost_usd=[float("nan"), 1e12]),
    "input_tokens": _bad("executions", input_tokens=[-1, 10**11 + 1]),
    "output_tokens": _bad("executions", output_tokens=[10**11, -7]),
    "integer overflow": {
        **_bad("scores", attempt=pl.Series([2**64 - 1, 0, 0, 0], dtype=pl.UInt64)),
        "executions": {
            **GOOD_EXECUTIONS,
            "input_tokens": pl.Series([2**63, 1], dtype=pl.UInt64),
            "output_tokens": pl.Series([3, 2**63 - 1], dtype=pl.UInt64),
        },
        "outcomes": {**GOOD_OUTCOMES, "attempt": pl.Series([0, 2**63 + 1], dtype=pl.UInt64)},
    },
    "reserved column names": {
        **_bad("scores", _hidden=[1, 2, 3, 4], verdict=["a", "b", "c", "d"]),
        "executions": {**GOOD_EXECUTIONS, "verdict": ["x", "y"], "_k": [1, 2]},
        "runs": {**GOOD_RUNS, "pass_at_3": [0.5], "mean_score_se": [0.1], "executions": [3]},
    },
    "every table at once": {
        "scores": {
            **GOOD_SCORES,
            "evaluator": ["m", "", "m", "m"],
            "weight": [1e301, 1.0, 2.0, -1],
        },
        "executions": {
            **GOOD_EXECUTIONS,
            "case_id": ["a", "a"],
            "status": ["ok", "bad"],
            "latency_ms": [-1.0, 5.0],
            "cost_usd": [1.0, float("inf")],
            "output_tokens": [10**12, 1],
        },
        "outcomes": {**GOOD_OUTCOMES, "case_id": ["a", "z"], "passed": [None, True]},
        "runs": {"run_id": ["r", "r"], "created_at": ["2026-01-02T03:04:05", "nope"]},
    },
}


def _problems(fn) -> list[tuple]:
    with pytest.raises(ef.ValidationError) as err:
        fn()
    return [(p.table, p.column, p.message, p.count, sorted(p.examples)) for p in err.value.problems]


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_duckdb_reports_the_problems_of_the_polars_engine(tmp_path, case):
    for name, columns in BAD_INPUTS[case].items():
        pl.DataFrame(columns, strict=False).write_parquet(tmp_path / f"{name}.parquet")
    want = _problems(lambda: ef.score_tables(tmp_path, ef.Config()))
    got = _problems(lambda: score_tables_duckdb(tmp_path, ef.Config()))
    assert got == want


def test_duckdb_clamps_in_sql_and_counts_like_polars(tmp_path):
    for name, columns in _bad("scores", score=[-1.0, float("nan"), 7.0, 1.0]).items():
        pl.DataFrame(columns).write_parquet(tmp_path / f"{name}.parquet")
    want = ef.score_tables(tmp_path, ef.Config(), clamp=True)
    got = score_tables_duckdb(tmp_path, ef.Config(), clamp=True)
    assert got.clamped == want.clamped == duckdb_pipeline.ClampReport(clamped=2, nulled=1)
    for name in (S.EXECUTION_SCORES, S.CASE_SUMMARY, S.RUN_SUMMARY):
        assert_same(*sort_like(got[name], want[name]), name)


# --- sharp literal cases: what random draws reach only sometimes ---------------------------
def _row(run, case, attempt, evaluator, score):
    return {
        "run_id": run,
        "case_id": case,
        "attempt": attempt,
        "evaluator": evaluator,
        "score": score,
        "scale_max": 5.0,
        "weight": None,
    }


EDGE_SCORES = [
    # r1 c1: attempt 0 lands exactly on the threshold (3/5 = 0.6), attempt 1 exactly on
    # the borderline edge (2/5) with c missing; c2: a required leaf at its min_score
    *(_row("r1", "c1", 0, e, 3.0) for e in ("a", "b", "c")),
    *(_row("r1", "c1", 1, e, 2.0) for e in ("a", "b")),
    _row("r1", "c2", 0, "a", 2.5),
    _row("r1", "c2", 0, "b", 0.0),
    _row("r1", "c2", 0, "c", 5.0),
    _row("r1", "c2", 0, "zz", None),  # an evaluator no listed config knows, null score
    # r2: every execution errored (one still has judge rows)
    _row("r2", "c1", 0, "a", 5.0),
    _row("r2", "c1", 0, "b", 5.0),
]
EDGE_EXECUTIONS = [
    {"run_id": r, "case_id": c, "attempt": a, "status": st, "threshold": t}
    for r, c, a, st, t in (
        ("r1", "c1", 0, "ok", None),
        ("r1", "c1", 1, "ok", None),
        ("r1", "c2", 0, "ok", 0.5),  # per-execution threshold
        ("r1", "c3", 0, "error", None),  # errored, never judged
        ("r2", "c1", 0, "error", None),
        ("r2", "c2", 0, "error", None),
        ("r3", "c1", 0, "ok", None),  # r3: executions without one judge row
        ("r3", "c2", 0, "ok", None),
    )
]
EDGE_OUTCOMES = [
    {"run_id": "r1", "case_id": "c1", "attempt": 0, "outcome": "o1", "passed": False},
    {"run_id": "r1", "case_id": "c2", "attempt": 0, "outcome": "o1", "passed": True},
]
EDGE_RUNS = [
    {"run_id": "r0", "label": "only in runs"},
    *({"run_id": r, "label": r.upper()} for r in ("r1", "r2", "r3")),
]
EDGE_CONFIGS = {
    "listed, gate, zero-fill": {
        "threshold": 0.6,
        "borderline": 0.4,
        "aggregator": "safety_gate",
        "required_children": ["a"],
        "on_missing": "zero",
        "attempts": {"score": "min", "passed": "any", "k": [1, 2]},
        "evaluators": {"a": {"weight": 2, "required": True, "min_score": 0.5}, "b": {}, "c": {}},
    },
    "unlisted, defaults, pass@k": {
        "threshold": 0.6,
        "borderline": 0.4,
        "attempts": {"k": [2, 1]},
    },
    "listed, fail on missing, outcomes both": {
        "threshold": 0.6,
        "on_missing": "fail",
        "outcomes": "both",
        "attempts": {"score": "max", "passed": "majority"},
        "evaluators": {"a": {"weight": 0.5}, "b": {"weight": 0.0}, "c": {}},
    },
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(EDGE_CONFIGS))
def test_duckdb_equals_reference_and_polars_on_the_edges(tmp_path, name):
    """Ties on the threshold and the borderline edge, a required leaf at its min_score,
    attempts, errored and unjudged executions, an all-errored run, a run only in `runs`,
    an unknown evaluator with a null score: scored and compared in one DuckDB session."""
    sc = Scenario(
        config=EDGE_CONFIGS[name],
        scores=EDGE_SCORES,
        executions=EDGE_EXECUTIONS,
        outcomes=EDGE_OUTCOMES,
        runs=EDGE_RUNS,
        scores_columns=tuple(EDGE_SCORES[0]),
        executions_columns=tuple(EDGE_EXECUTIONS[0]),
    )
    cfg = ef.config_from_dict(sc.config)
    folder = write_dataset(sc, tmp_path / "ds")
    pairs = [("r1", "r2"), ("r1", "r3"), ("r3", "r1"), ("r1", "r2")]
    got = compare_tables_duckdb(folder, cfg, pairs)
    assert got.scored is not None and got.pairs == pairs
    ex = ref.execution_scores(sc.scores, sc.executions, sc.outcomes, cfg)
    _compare(got.scored[S.EXECUTION_SCORES], ex, EXEC_KEY, "execution_scores")
    _compare(got.scored[S.CASE_SUMMARY], ref.case_summary(ex, cfg), CASE_KEY, "case_summary")
    _compare(got.scored[S.RUN_SUMMARY], ref.run_summary(ex, cfg, sc.runs), RUN_KEY, "run_summary")
    want = ef.score_tables(folder, cfg)
    for table in (S.EXECUTION_SCORES, S.CASE_SUMMARY, S.RUN_SUMMARY):
        assert_same(*sort_like(got.scored[table], want[table]), table)
    assert_same(got.scored[S.RUN_SUMMARY], want[S.RUN_SUMMARY], "run_summary order")
    expected = ef.compare_tables(folder, cfg, pairs=pairs)
    for table in (S.CASE_DELTAS, S.EVALUATOR_DELTAS, S.RUN_DELTAS):
        assert_same(got[table], expected[table], table)


# --- the public pipeline and the CLI: engine="duckdb" is DuckDB, or refused ----------------
@pytest.mark.slow
def test_score_and_compare_tables_with_engine_duckdb_run_the_duckdb_engine(tmp_path, monkeypatch):
    ef.write_demo(tmp_path / "d", n_cases=12)
    cfg = ef.config_from_dict({"attempts": {"k": [1, 2]}})
    want = ef.score_tables(tmp_path / "d", cfg)
    want_deltas = ef.compare_tables(tmp_path / "d", cfg, pairs="consecutive")
    seen: list[tuple] = []
    real = duckdb_pipeline.session

    def spy(memory_limit="3GB", temp_directory=None):
        seen.append((memory_limit, temp_directory))
        return real(memory_limit, temp_directory)

    import evalframe._private.data.dataset as dataset_module
    import evalframe._private.scoring.execution_scores as polars_scoring

    def refuse(*args, **kwargs):
        raise AssertionError("the polars engine ran")

    monkeypatch.setattr(duckdb_pipeline, "session", spy)
    for module, name in (
        (dataset_module, "load_dataset"),
        (dataset_module, "open_tables"),
        (polars_scoring, "score"),
        (polars_scoring, "evaluator_scores"),
    ):
        monkeypatch.setattr(module, name, refuse)
    got = ef.score_tables(tmp_path / "d", cfg, engine="duckdb", memory_limit="700MB")
    assert got.path == "duckdb" and seen == [("700MB", None)]
    for table in (S.EXECUTION_SCORES, S.CASE_SUMMARY, S.RUN_SUMMARY):
        assert_same(*sort_like(got[table], want[table]), table)
    deltas = ef.compare_tables(tmp_path / "d", cfg, pairs="consecutive", engine="duckdb")
    assert len(seen) == 2, "compare scores once, in the session that compares"
    assert deltas.pairs == want_deltas.pairs and deltas.scored.path == "duckdb"
    for table in (S.CASE_DELTAS, S.EVALUATOR_DELTAS, S.RUN_DELTAS):
        assert_same(deltas[table], want_deltas[table], table)
    with pytest.raises(ef.UsageError, match="dataset path"):
        ef.score_tables(ef.Dataset.from_frames(pl.DataFrame(GOOD_SCORES)), engine="duckdb")


def test_the_duckdb_session_holds_the_memory_limit_and_spill_folder(tmp_path):
    with duckdb_pipeline.session("123MB", tmp_path) as con:
        limit, folder = con.execute(
            "select current_setting('memory_limit'), current_setting('temp_directory')"
        ).fetchone()
    assert limit.replace(" ", "") in ("117.3MiB", "123.0MB", "117.3MB") and folder == str(tmp_path)


def test_cli_refuses_trees_under_engine_duckdb_with_exit_2(tmp_path):
    from typer.testing import CliRunner

    from evalframe.cli import app

    ef.write_demo(tmp_path / "d", n_cases=5)
    tree = tmp_path / "tree.json"
    tree.write_text(
        '{"evaluators": {"g": {"aggregator": "minimum", "children": {"tool_routing": {}}}}}'
    )
    for command in ("score", "compare"):
        result = CliRunner().invoke(
            app, [command, str(tmp_path / "d"), "--config", str(tree), "--engine", "duckdb"]
        )
        assert result.exit_code == 2, result.output
        text = " ".join(result.output.split())
        assert "flat configs only" in text and "--engine duckdb" in text
        assert "Traceback" not in result.output
    assert not (tmp_path / "d" / "results").exists()
