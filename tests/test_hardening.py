"""Issue 13 (hardening): every bad input file is exit 2 with a message naming it, never a
traceback; every number that reaches an output is finite; paths are literal; verdicts at
the boundary do not depend on row order, thread count or engine.

Each test below failed (traceback, wrong number or exit 0 on bad input) before the fix."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

import evalframe as ef
from evalframe._private.data.demo import write_demo
from evalframe.cli import app

runner = CliRunner()


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("base") / "demo"
    write_demo(root, n_cases=3)
    return root


@pytest.fixture
def ds(base, tmp_path) -> Path:
    target = tmp_path / "ds"
    shutil.copytree(base, target)
    return target


def _run(*args: str | Path) -> tuple[int, str]:
    """Exit code and output (stdout + stderr, whitespace folded) of an in-process CLI run;
    fails the test on any exception other than the CLI's own exit."""
    result = runner.invoke(app, [str(a) for a in args])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"traceback: {result.exception!r}\n{result.output}")
    return result.exit_code, " ".join(result.output.split())


def _both(dataset: Path, tmp_path: Path, *extra: str) -> list[tuple[int, str]]:
    return [
        _run("validate", dataset),
        _run("score", dataset, "--out", tmp_path / "out", *extra),
    ]


def _rewrite(path: Path, fn) -> None:
    fn(pl.read_parquet(path)).write_parquet(path)


def _approx(rows: list[dict]) -> list[dict]:
    """Rows with floats compared to 1e-12 (summation order may move the last digit)."""
    return [
        {k: pytest.approx(v, rel=1e-12) if isinstance(v, float) else v for k, v in r.items()}
        for r in rows
    ]


def _summary(dataset: Path, tmp_path: Path) -> list[dict]:
    code, text = _run("score", dataset, "--out", tmp_path / "summary_out", "--json")
    assert code == 0, text
    return pl.read_parquet(tmp_path / "summary_out" / "run_summary.parquet").to_dicts()


# --- files that are not (whole) Parquet -----------------------------------------------------


def _truncated(b: bytes) -> bytes:
    return b[: len(b) // 2]


UNREADABLE = {
    "zero-byte": (lambda b: b"", "is empty: 0 bytes"),
    "truncated": (_truncated, "truncated?"),
    "random bytes": (lambda b: bytes(range(256)) * 8, "magic bytes PAR1"),
    "csv named .parquet": (None, "looks like CSV text"),
}


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(UNREADABLE))
def test_unreadable_parquet_is_exit_2_naming_the_file(kind, ds, tmp_path):
    make, message = UNREADABLE[kind]
    target = ds / "scores.parquet"
    if make is None:
        pl.read_parquet(target).write_csv(target)
    else:
        target.write_bytes(make(target.read_bytes()))
    for code, text in _both(ds, tmp_path):
        assert code == 2 and "scores.parquet is not a Parquet file" in text and message in text


@pytest.mark.slow
def test_a_damaged_data_page_is_exit_2_naming_the_file(ds, tmp_path):
    """The footer reads, a page does not: polars raises (or panics) mid-scan; the CLI then
    reads every file in full to name the corrupt one."""
    target = ds / "scores.parquet"
    meta = pq.read_metadata(target).row_group(0).column(4)  # score
    raw = bytearray(target.read_bytes())
    offset = meta.dictionary_page_offset or meta.data_page_offset
    raw[offset : offset + 8] = b"\xff" * 8
    target.write_bytes(bytes(raw))
    for code, text in _both(ds, tmp_path):
        assert code == 2 and "scores.parquet is corrupt" in text, text


def test_two_columns_with_one_name_are_exit_2(ds, tmp_path):
    table = pq.read_table(ds / "scores.parquet")
    pq.write_table(table.append_column("score", table.column("score")), ds / "scores.parquet")
    for code, text in _both(ds, tmp_path):
        assert code == 2 and "has 2 columns named 'score'" in text


# --- hive folders whose files differ --------------------------------------------------------


def _split(ds: Path, change=None, extra_file: str | None = None) -> None:
    scores = pl.read_parquet(ds / "scores.parquet")
    (ds / "scores.parquet").unlink()
    folder = ds / "scores"
    folder.mkdir()
    scores.head(30).write_parquet(folder / "part-0.parquet")
    tail = scores.tail(scores.height - 30)
    (change(tail) if change else tail).write_parquet(folder / "part-1.parquet")
    if extra_file:
        (folder / extra_file).write_text("not data")


HIVE_OK = {
    "f64 vs int64": lambda f: f.with_columns(pl.col("score").cast(pl.Int64)),
    "f64 vs f32": lambda f: f.with_columns(pl.col("score").cast(pl.Float32)),
    "one extra column": lambda f: f.with_columns(pl.lit("x").alias("note")),
    "one missing optional column": lambda f: f.drop("reason"),
    "categorical vs string": lambda f: f.with_columns(pl.col("evaluator").cast(pl.Categorical)),
}


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(HIVE_OK))
def test_hive_files_that_widen_read_as_one_table(kind, ds, base, tmp_path):
    _split(ds, HIVE_OK[kind])
    assert _summary(ds, tmp_path / "a") == _approx(_summary(base, tmp_path / "b"))


@pytest.mark.slow
@pytest.mark.parametrize("stray", ["README.txt", "_SUCCESS", ".part-2.parquet.crc"])
def test_stray_files_in_a_table_folder_are_ignored(stray, ds, base, tmp_path):
    _split(ds, extra_file=stray)
    assert _summary(ds, tmp_path / "a") == _approx(_summary(base, tmp_path / "b"))


HIVE_BAD = {
    "f64 vs string": (
        lambda f: f.with_columns(pl.col("score").cast(pl.String)),
        "scores.score: the files in scores/ disagree on its type: Float64 in part-0.parquet; "
        "String in part-1.parquet",
    ),
    "required column missing from one file": (
        lambda f: f.drop("evaluator"),
        "scores.evaluator: required column is missing from 1 of the 2 files in scores/; "
        "e.g. part-1.parquet",
    ),
}


@pytest.mark.parametrize("kind", sorted(HIVE_BAD))
def test_hive_files_that_disagree_are_exit_2_naming_them(kind, ds, tmp_path):
    change, message = HIVE_BAD[kind]
    _split(ds, change)
    for code, text in _both(ds, tmp_path):
        assert code == 2 and message in text, text


def test_hive_partition_values_of_id_columns_stay_strings(tmp_path):
    for case in ("001", "010"):
        part = tmp_path / "ds" / "scores" / "run_id=2024.10" / f"case_id={case}"
        part.mkdir(parents=True)
        pl.DataFrame({"evaluator": ["m"], "score": [1.0]}).write_parquet(part / "p.parquet")
    out = ef.execution_scores(ef.load_dataset(tmp_path / "ds")).collect().sort("case_id")
    assert out.select("run_id", "case_id").rows() == [("2024.10", "001"), ("2024.10", "010")]


# --- extra columns named like output or internal columns -----------------------------------

CLASHES = [
    ("executions", "verdict", "execution_scores.verdict"),
    ("executions", "score", "execution_scores.score"),
    ("executions", "passed", "execution_scores.passed"),
    ("executions", "config_id", "execution_scores.config_id"),
    ("scores", "config_id", "evaluator_scores.config_id"),
    ("scores", "path", "evaluator_scores.path"),
    ("runs", "mean_score", "run_summary.mean_score"),  # came back as mean_score_right
    ("runs", "executions", "run_summary.executions"),
    ("runs", "run_config", "run_summary.run_config"),
    ("runs", "pass_at_3", "run_summary.pass_at_3"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("table", "column", "clash"), CLASHES)
def test_extra_columns_clashing_with_output_columns_are_exit_2(table, column, clash, ds, tmp_path):
    _rewrite(ds / f"{table}.parquet", lambda f: f.with_columns(pl.lit("x").alias(column)))
    for code, text in _both(ds, tmp_path, "--evaluators"):
        assert code == 2 and f"would clash with the output column {clash}" in text, text


@pytest.mark.slow
@pytest.mark.parametrize("table", ["scores", "executions", "outcomes", "runs"])
def test_extra_columns_starting_with_underscore_are_exit_2(table, ds, tmp_path):
    _rewrite(ds / f"{table}.parquet", lambda f: f.with_columns(pl.lit(1).alias("_exec")))
    for code, text in _both(ds, tmp_path):
        assert code == 2 and f"{table}._exec: column names starting with _ are reserved" in text


def test_harmless_extra_runs_columns_still_reach_run_summary(ds, tmp_path):
    _rewrite(ds / "runs.parquet", lambda f: f.with_columns(pl.lit("gpu").alias("hardware")))
    rows = _summary(ds, tmp_path)
    assert {r["hardware"] for r in rows} == {"gpu"}
    assert not any(c.endswith("_right") for c in rows[0])


# --- types the docs accept or refuse --------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    ("value", "ok"),
    [
        (dt.time(9, 0), False),
        (dt.timedelta(hours=1), False),
        (dt.date(2026, 10, 1), True),
        (dt.datetime(2026, 10, 1, 9, tzinfo=dt.UTC), True),
        ("2026-10-01T09:00:00", True),
    ],
    ids=["time", "duration", "date", "datetime-tz", "iso-text"],
)
def test_created_at_types(value, ok, ds, tmp_path):
    _rewrite(ds / "runs.parquet", lambda f: f.with_columns(pl.lit(value).alias("created_at")))
    for code, text in _both(ds, tmp_path):
        if ok:
            assert code == 0, text
        else:
            assert code == 2 and "runs.created_at: wrong type" in text and "a timestamp" in text


@pytest.mark.parametrize(
    ("table", "column"), [("scores", "attempt"), ("executions", "input_tokens")]
)
def test_uint64_above_int64_is_exit_2(table, column, ds, tmp_path):
    big = pl.lit(2**63 + 5, dtype=pl.UInt64)
    _rewrite(ds / f"{table}.parquet", lambda f: f.with_columns(big.alias(column)))
    for code, text in _both(ds, tmp_path):
        assert code == 2 and f"{column} is above 9223372036854775807" in text, text


@pytest.mark.slow
def test_uint64_in_range_reads(ds, base, tmp_path):
    _rewrite(ds / "scores.parquet", lambda f: f.with_columns(pl.col("attempt").cast(pl.UInt64)))
    assert _summary(ds, tmp_path / "a") == _approx(_summary(base, tmp_path / "b"))


# --- DuckDB database files ------------------------------------------------------------------


def _duckdb(path: Path, base: Path, *statements: str) -> Path:
    con = duckdb.connect(str(path))
    con.execute(f"create table base as select * from '{base}/scores.parquet'")
    for sql in statements:
        con.execute(sql)
    con.close()
    return path


def test_duckdb_broken_view_is_exit_2(base, tmp_path):
    db = _duckdb(
        tmp_path / "b.duckdb",
        base,
        "create table t as select * from base",
        "create view scores as select * from t",
        "drop table t",
    )
    for code, text in _both(db, tmp_path):
        assert code == 2 and "scores: cannot be read from b.duckdb" in text, text


@pytest.mark.slow
def test_duckdb_union_and_interval_columns_read_as_text(base, tmp_path):
    db = _duckdb(
        tmp_path / "u.duckdb",
        base,
        "create table scores as select *, union_value(n := 1) as u, interval 1 hour as span, "
        "[interval 1 day] as spans, '\\x00'::blob as raw, time '10:00' as t from base",
    )
    for code, text in _both(db, tmp_path):
        assert code == 0, text
    db2 = _duckdb(
        tmp_path / "s.duckdb",
        base,
        "create table scores as select * replace (union_value(n := score) as score) from base",
    )
    for code, text in _both(db2, tmp_path):
        assert code == 2 and "scores.score: wrong type String" in text, text


# --- --out locations (file / under a file: tests/test_store.py) -----------------------------


def test_out_dangling_symlink_is_exit_2(ds, tmp_path):
    link = tmp_path / "dangling"
    link.symlink_to(tmp_path / "nowhere")
    code, text = _run("score", ds, "--out", link)
    assert code == 2 and "is a broken link" in text


def test_out_not_writable_is_exit_2_even_as_root(ds, tmp_path, monkeypatch):
    from evalframe._private.store import fsops

    locked = tmp_path / "locked"
    locked.mkdir()
    access = os.access
    monkeypatch.setattr(
        fsops.os, "access", lambda path, mode, **k: Path(path) != locked and access(path, mode)
    )
    code, text = _run("score", ds, "--out", locked / "x")
    assert code == 2 and "is not writable" in text


# --- silently wrong before ------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("pattern", ["d[1]", "d?", "d*"])
def test_dataset_paths_are_literal_not_globs(pattern, tmp_path):
    write_demo(tmp_path / pattern, n_cases=2)
    write_demo(tmp_path / "d1", n_cases=5)  # what the glob would also match
    rows = _summary(tmp_path / pattern, tmp_path)
    assert {r["cases"] for r in rows} == {2}
    folder = tmp_path / f"{pattern}x"  # a table folder under a glob-like name
    write_demo(folder, n_cases=2)
    scores = pl.read_parquet(folder / "scores.parquet", glob=False)
    (folder / "scores.parquet").unlink()
    (folder / "scores").mkdir()
    scores.write_parquet(folder / "scores" / "a.parquet")
    assert {r["cases"] for r in _summary(folder, tmp_path / "f")} == {2}


@pytest.mark.slow
@pytest.mark.parametrize(
    "weight", [1e308, 5e-324, 1e-310], ids=["overflow", "min-subnormal", "subnormal"]
)
def test_weights_that_overflow_or_underflow_are_exit_2(weight, ds, tmp_path):
    _rewrite(ds / "scores.parquet", lambda f: f.with_columns(pl.lit(weight).alias("weight")))
    for code, text in _both(ds, tmp_path):
        assert code == 2 and "scores.weight: weight is outside [1e-300, 1e+300]" in text, text


def test_weights_at_the_limits_give_finite_scores_that_do_not_pass_by_accident(ds, tmp_path):
    _rewrite(
        ds / "scores.parquet",
        lambda f: f.with_columns(
            pl.when(pl.col("evaluator") == "tool_routing")
            .then(1e300)
            .otherwise(1e-300)
            .alias("weight")
        ),
    )
    code, text = _run("score", ds, "--out", tmp_path / "o", "--evaluators")
    assert code == 0, text
    ex = pl.read_parquet(tmp_path / "o" / "execution_scores.parquet")
    assert ex["score"].drop_nulls().is_finite().all()
    raw = pl.read_parquet(ds / "scores.parquet").filter(pl.col("evaluator") == "tool_routing")
    want = dict(
        zip(
            raw["run_id"] + raw["case_id"],
            (raw["score"] / raw["scale_max"]).to_list(),
            strict=True,
        )
    )
    for row in ex.filter(pl.col("score").is_not_null()).iter_rows(named=True):
        assert row["score"] == pytest.approx(want[row["run_id"] + row["case_id"]])


def test_evaluator_named_empty_is_exit_2(ds, tmp_path):
    _rewrite(
        ds / "scores.parquet",
        lambda f: f.with_columns(
            pl.when(pl.col("evaluator") == "tool_routing")
            .then(pl.lit(""))
            .otherwise("evaluator")
            .alias("evaluator")
        ),
    )
    for code, text in _both(ds, tmp_path, "--evaluators"):
        assert code == 2 and "scores.evaluator: evaluator name is empty" in text, text


EXEC_VALUES = [
    ("latency_ms", 1e308, "latency_ms is negative, NaN, infinite or above 1e+12"),
    ("latency_ms", float("nan"), "latency_ms is negative, NaN, infinite or above 1e+12"),
    ("latency_ms", float("inf"), "latency_ms is negative, NaN, infinite or above 1e+12"),
    ("latency_ms", -1.0, "latency_ms is negative, NaN, infinite or above 1e+12"),
    ("cost_usd", float("nan"), "cost_usd is negative, NaN, infinite or above 1e+12"),
    ("input_tokens", 2**62, "input_tokens is negative or above 1e+11"),
    ("output_tokens", -5, "output_tokens is negative or above 1e+11"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("column", "value", "message"), EXEC_VALUES)
def test_execution_numbers_that_would_make_sums_non_finite_or_wrap(
    column, value, message, ds, tmp_path
):
    _rewrite(
        ds / "executions.parquet",
        lambda f: f.with_columns(
            pl.when(pl.col("case_id") == "case-0001")
            .then(pl.lit(value))
            .otherwise(pl.col(column))
            .cast(f.schema[column])
            .alias(column)
        ),
    )
    for code, text in _both(ds, tmp_path):
        assert code == 2 and f"executions.{column}: {message} (3 rows)" in text, text


def test_largest_accepted_numbers_give_finite_sums(ds, tmp_path):
    _rewrite(
        ds / "executions.parquet",
        lambda f: f.with_columns(
            pl.lit(1e12).alias("latency_ms"),
            pl.lit(1e12).alias("cost_usd"),
            pl.lit(10**11).alias("input_tokens"),
        ),
    )
    for row in _summary(ds, tmp_path):
        assert row["latency_mean"] == row["latency_p95"] == 1e12
        assert row["input_tokens"] == 3 * 10**11 and row["cost_usd"] == 3e12


# --- determinism at the boundary ------------------------------------------------------------
# docs/scoring.md#boundaries: results do not depend on the engine, the thread count or the row
# order. The sums that decide a verdict are exact fixed-point sums (docs/architecture.md,
# "Order-independent sums"), so the flat pass, the tree path and DuckDB give the same score to the
# last bit.

THRESHOLD = 0.8
WEIGHT_SETS = ((0.15, 0.125, 0.1, 0.625), (0.3, 0.3, 0.3, 0.1), (1.0, 1.0, 1.0, 1.0))


def _boundary_scores() -> pl.DataFrame:
    """Cases whose weighted mean lands within a few ulps of threshold - 1e-9: every leaf at
    the same value x, x stepping ulp by ulp across the boundary; and cases whose leaves
    straddle the boundary so that the rounding of the sum decides."""
    import math

    edge = THRESHOLD - 1e-9
    xs = [edge]
    for _ in range(3):
        xs = [math.nextafter(xs[0], 0.0), *xs, math.nextafter(xs[-1], 1.0)]
    rows = []
    for w_i, weights in enumerate(WEIGHT_SETS):
        for x_i, x in enumerate(xs):
            for e_i, w in enumerate(weights):
                spread = (-1) ** e_i * 2**-30 * (e_i % 2)  # some leaves off the boundary
                for case, value in ((f"u{w_i}-{x_i}", x), (f"s{w_i}-{x_i}", x + spread)):
                    rows.append(("r", case, f"m{e_i}", value, w))
    return pl.DataFrame(
        rows, schema=["run_id", "case_id", "evaluator", "score", "weight"], orient="row"
    )


def _verdicts(
    path: Path, engine: str = "polars", tree: bool = False, config: dict | None = None
) -> dict[str, tuple]:
    cfg = ef.config_from_dict(config or {"threshold": THRESHOLD, "borderline": None})
    # a loaded Dataset takes the tree path (one group-by per level), a path the flat pass
    tables = ef.score_tables(ef.load_dataset(path) if tree else path, cfg, engine=engine)
    ex = tables["execution_scores"]
    ex = ex.collect() if isinstance(ex, pl.LazyFrame) else ex
    return {r["case_id"]: (r["verdict"], r["passed"], r["score"]) for r in ex.iter_rows(named=True)}


VERDICT_SCRIPT = """
import json, sys
import evalframe as ef
cfg = ef.config_from_dict({"threshold": %r, "borderline": None})
ex = ef.score_tables(sys.argv[1], cfg)["execution_scores"]
rows = ex.iter_rows(named=True)
print(json.dumps({r["case_id"]: [r["verdict"], r["passed"], r["score"]] for r in rows}))
"""


def _shuffled(tmp_path: Path, seed: int) -> Path:
    folder = tmp_path / f"order{seed}"
    folder.mkdir(exist_ok=True)
    _boundary_scores().sample(fraction=1.0, shuffle=True, seed=seed).write_parquet(
        folder / "scores.parquet", row_group_size=7
    )
    return folder


def _assert_same(runs: dict[str, dict[str, tuple]], n_cases: int | None = None) -> None:
    """Every run gives every case the same verdict, passed flag and score (to the bit)."""
    first_name, first = next(iter(runs.items()))
    assert len(first) == (n_cases or _boundary_scores()["case_id"].n_unique())
    assert {v[0] for v in first.values()} == {"pass", "fail"}  # the cases straddle it
    for name, got in runs.items():
        differ = sorted(k for k in first if got[k] != first[k])
        assert not differ, f"{name} vs {first_name}: {[(k, got[k], first[k]) for k in differ[:3]]}"


@pytest.mark.slow
def test_boundary_verdicts_ignore_row_order_threads_and_engine(tmp_path):
    runs = {}
    for seed in range(3):
        folder = _shuffled(tmp_path, seed)
        runs[f"flat order {seed}"] = _verdicts(folder)
        runs[f"tree order {seed}"] = _verdicts(folder, tree=True)
        runs[f"duckdb order {seed}"] = _verdicts(folder, engine="duckdb")
    for threads in ("1", "4"):
        env = {**os.environ, "POLARS_MAX_THREADS": threads}
        out = subprocess.run(
            [sys.executable, "-c", VERDICT_SCRIPT % THRESHOLD, str(_shuffled(tmp_path, 0))],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        runs[f"flat {threads} thread(s)"] = {k: tuple(v) for k, v in json.loads(out.stdout).items()}
    _assert_same(runs)
    # the exact sum, rounded once: four leaves at x with weight 1 give exactly x (4x / 4)
    for case, (_v, _p, score) in runs["flat order 0"].items():
        if case.startswith("u2-"):
            want = _boundary_scores().filter(pl.col("case_id") == case)["score"][0]
            assert score == want, (case, score, want)


@pytest.mark.slow
@pytest.mark.parametrize("on_missing", ["skip", "zero"])
def test_boundary_scores_with_missing_leaves_and_a_gate_agree_to_the_bit(tmp_path, on_missing):
    """Listed leaves with configured and data weights, null and absent leaves (their weight
    joins the denominator under on_missing: zero, from the configured weights), and a
    safety_gate root (DuckDB's sums without the gate's children): the same scores on every
    path and row order."""
    base = _boundary_scores()
    drop = pl.col("case_id").str.ends_with("-1") & (pl.col("evaluator") == "m1")
    null = pl.col("case_id").str.ends_with("-2") & (pl.col("evaluator") == "m2")
    scores = base.filter(~drop).with_columns(
        pl.when(null).then(None).otherwise(pl.col("score")).alias("score")
    )
    leaf = {"m0": {"weight": 0.15}, "m1": {"weight": 0.3}, "m2": {}, "m3": {"weight": 0.1}}
    configs = {
        "weighted_average": {"evaluators": leaf},
        "safety_gate": {
            "aggregator": "safety_gate",
            "required_children": ["m3"],
            "evaluators": {**leaf, "m3": {"weight": 0.1, "min_score": 0.0}},
        },
    }
    for name, body in configs.items():
        config = {"threshold": THRESHOLD, "borderline": None, "on_missing": on_missing, **body}
        runs = {}
        for seed in range(2):
            folder = tmp_path / f"{name}-{seed}"
            folder.mkdir()
            scores.sample(fraction=1.0, shuffle=True, seed=seed).write_parquet(
                folder / "scores.parquet", row_group_size=5
            )
            if name != "safety_gate":  # the flat pass takes flat aggregators only
                runs[f"flat {seed}"] = _verdicts(folder, config=config)
            runs[f"tree {seed}"] = _verdicts(folder, tree=True, config=config)
            runs[f"duckdb {seed}"] = _verdicts(folder, engine="duckdb", config=config)
        _assert_same(runs, scores["case_id"].n_unique())


def test_weights_outside_the_exact_band_keep_float_sums(tmp_path):
    """A weight outside [2^-24, 2^24) sends its execution to the float sums: still finite
    and the weighted mean of the reference (within 1e-9), on every path."""
    rows = [("r", "big", "a", 0.5, 2.0**30), ("r", "big", "b", 1.0, 1.0)]
    rows += [("r", "tiny", "a", 0.25, 2.0**-40), ("r", "tiny", "b", 0.75, 2.0**-40)]
    rows += [("r", "mixed", "a", 0.25, 2.0**-40), ("r", "mixed", "b", 0.75, 1.0)]
    scores = pl.DataFrame(
        rows, schema=["run_id", "case_id", "evaluator", "score", "weight"], orient="row"
    )
    folder = tmp_path / "band"
    folder.mkdir()
    scores.write_parquet(folder / "scores.parquet")
    want = {"big": (0.5 * 2**30 + 1.0) / (2**30 + 1), "tiny": 0.5, "mixed": 0.75}
    for kwargs in ({}, {"tree": True}, {"engine": "duckdb"}):
        got = _verdicts(folder, **kwargs)
        for case, value in want.items():
            assert abs(got[case][2] - value) <= 1e-9, (kwargs, case, got[case], value)


def test_invalid_extra_combinations_report_every_problem_at_once(ds, tmp_path):
    """Several of the new classes in one dataset: one exit 2 listing them all."""
    _rewrite(ds / "runs.parquet", lambda f: f.with_columns(pl.lit(dt.time(1)).alias("created_at")))
    _rewrite(ds / "executions.parquet", lambda f: f.with_columns(pl.lit(1).alias("verdict")))
    code, text = _run("validate", ds)
    assert code == 2 and "runs.created_at" in text and "executions.verdict" in text


def test_arrow_tables_with_odd_types_through_the_python_api():
    """Dataset.from_frames gets the same checks: a Time created_at is a ValidationError."""
    runs = pl.from_arrow(
        pa.table({"run_id": ["r"], "created_at": pa.array([dt.time(1)], pa.time64("us"))})
    )
    scores = pl.DataFrame({"run_id": ["r"], "case_id": ["c"], "evaluator": ["m"], "score": [1.0]})
    with pytest.raises(ef.ValidationError, match=r"runs\.created_at: wrong type Time"):
        ef.Dataset.from_frames(scores, runs=runs)  # type: ignore[arg-type]
