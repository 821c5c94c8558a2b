"""The Spark engine (evalframe.spark) equals the local engine, on one shared local[2]
SparkSession (tests/conftest.py `spark`, 3 shuffle partitions). Inputs reach the engine
spread at random over 3 partitions in shuffled order, so every case of more than one row
straddles partitions before the engine repartitions by (run_id, case_id). Each check
collects all of its tables in one Spark job (`collect_tables`): start-up plus all Spark
tests stay within about a minute on 2 cores."""

from __future__ import annotations

import subprocess
import sys
from fractions import Fraction

import polars as pl
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import evalframe as ef
from evalframe._private import schema as S
from tests.strategies import Scenario, frames, scenarios
from tests.test_reference_properties import CASE_KEY, EXEC_KEY, RUN_KEY, _compare

pytestmark = [pytest.mark.spark, pytest.mark.slow]

SETTINGS = settings(
    max_examples=1,
    deadline=None,
    # no shrinking: on Spark one example costs seconds and shrinking ran for minutes;
    # a failure prints its example as drawn
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
)
PAIR_KEY = ("baseline_run_id", "candidate_run_id")
PARTITIONS = 3


def _write(sc: Scenario, folder, seed: int = 0) -> dict[str, str]:
    """The scenario's tables as Parquet files, rows in an order shuffled by `seed`."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = {}
    for name, frame in frames(sc).items():
        if frame is not None:
            frame.sample(fraction=1.0, shuffle=True, seed=seed).write_parquet(
                folder / f"{name}.parquet"
            )
            paths[name] = str(folder / f"{name}.parquet")
    return paths


def _spread(spark, path: str, seed: int):
    """The table's rows each in a pseudo-random one of 3 partitions (a hash of the whole
    row and `seed`: deterministic, so Spark may reuse the shuffle across the tables)."""
    from pyspark.sql import functions as F

    df = spark.read.parquet(path)
    return df.repartition(PARTITIONS, F.xxhash64(*df.columns, F.lit(seed)))


def _spark_tables(spark, paths: dict[str, str], cfg, seed: int = 0):
    from evalframe.spark import score_tables

    inputs = {n: _spread(spark, p, seed + i) for i, (n, p) in enumerate(sorted(paths.items()))}
    return score_tables(
        inputs.pop("scores"),
        cfg,
        executions_df=inputs.get("executions"),
        outcomes_df=inputs.get("outcomes"),
        runs_df=inputs.get("runs"),
        partitions=PARTITIONS,
    )


def _rows(frame: pl.DataFrame) -> list[dict]:
    return frame.to_dicts()


def _spark_frame(spark, frame: pl.DataFrame):
    from evalframe._private.engines.spark.read import narrow_table

    return spark.createDataFrame(narrow_table(frame.to_arrow()))


@SETTINGS
@given(st.lists(st.tuples(scenarios(), st.integers(0, 2**31 - 1)), min_size=4, max_size=4))
def test_spark_tables_equal_the_local_engine(spark, tmp_path_factory, drawn):
    """Four random scenarios, scored in ONE Spark job (independent branches of one plan
    run side by side), then their comparisons in a second job, from Spark DataFrames of
    the collected summaries. (More examples cost ~10 s each on 2 cores; the polars engine's
    property tests against the reference run hundreds.)"""
    from evalframe.spark import collect_tables, compare

    local, lazy, configs, pairs = {}, {}, {}, {}
    for i, (sc, seed) in enumerate(drawn):
        folder = tmp_path_factory.mktemp("ds")
        paths = _write(sc, folder, seed)
        configs[i] = cfg = ef.config_from_dict(sc.config)
        local[i] = ef.score_tables(folder, cfg)
        for name, df in _spark_tables(spark, paths, cfg, seed).items():
            lazy[(i, name)] = df
        runs = sorted(set(local[i]["execution_scores"]["run_id"]))
        pairs[i] = [(runs[0], runs[1]), (runs[-1], runs[0])] if len(runs) >= 2 else []
    got = collect_tables(lazy)  # one Spark job for every table of the four scenarios
    deltas = {}
    for i in local:
        for name, key in (
            ("execution_scores", EXEC_KEY),
            ("case_summary", CASE_KEY),
            ("run_summary", RUN_KEY),
        ):
            assert set(got[(i, name)].columns) == set(local[i][name].columns), name
            _compare(got[(i, name)], _rows(local[i][name]), key, name)
        if pairs[i]:
            cs = _spark_frame(spark, got[(i, "case_summary")])
            rs = _spark_frame(spark, got[(i, "run_summary")])
            for name, df in compare(cs, rs, pairs[i], configs[i]).items():
                deltas[(i, name)] = df
    mine = collect_tables(deltas)  # one Spark job for every comparison
    for i in local:
        if not pairs[i]:
            continue
        want = ef.compare(
            local[i]["case_summary"].lazy(),
            pairs[i],
            configs[i],
            run_summary=local[i]["run_summary"].lazy(),
        )
        cd = want["case_deltas"].collect()
        _compare(mine[(i, "case_deltas")], _rows(cd), (*PAIR_KEY, "case_id"), "case_deltas")
        rd = want["run_deltas"].collect()
        _compare(mine[(i, "run_deltas")], _rows(rd), PAIR_KEY, "run_deltas")


# --- float summation order: no verdict flips ------------------------------------------
WEIGHTS = {"a": 0.1, "b": 0.2, "c": 0.3, "d": 0.4}
COMBOS = [  # weighted means, in exact arithmetic:
    (0.8, 0.8, 0.8, 0.8),  # 0.8: on the threshold (pass)
    (0.2, 1.0, 0.6, 1.0),  # 0.8: on the threshold (pass)
    (0.6, 0.6, 0.6, 0.6),  # 0.6: on the borderline edge (borderline)
    (1.0, 0.9, 0.7, 0.75),  # 0.79: borderline
    (1.0, 0.5, 0.5, 0.6),  # 0.59: fail
]


def _exact_verdict(combo: tuple[float, ...]) -> str:
    ws = [Fraction(str(w)) for w in WEIGHTS.values()]
    mean = sum(w * Fraction(str(s)) for w, s in zip(ws, combo, strict=True)) / sum(ws)
    return (
        "pass" if mean >= Fraction("0.8") else "borderline" if mean >= Fraction("0.6") else "fail"
    )


@pytest.fixture(scope="module")
def boundary(tmp_path_factory):
    """2 runs × 60 cases × 3 attempts × 4 weighted evaluators (1 440 judge rows, 360
    executions) whose weighted means land exactly on 0.8 or 0.6 in exact arithmetic, and
    the verdict exact arithmetic gives each execution."""
    rows, expected = [], []
    for run in ("r1", "r2"):
        for i in range(60):
            for attempt in range(3):
                combo = COMBOS[(i + attempt) % len(COMBOS)]
                expected.append((run, f"c{i:03d}", attempt, _exact_verdict(combo)))
                for (name, w), s in zip(WEIGHTS.items(), combo, strict=True):
                    rows.append((run, f"c{i:03d}", attempt, name, s, w))
    scores = pl.DataFrame(
        rows, schema=["run_id", "case_id", "attempt", "evaluator", "score", "weight"], orient="row"
    )
    folder = tmp_path_factory.mktemp("boundary")
    scores.write_parquet(folder / "scores.parquet")
    want = pl.DataFrame(expected, schema=[*EXEC_KEY, "verdict_exact"], orient="row")
    return folder, want


@settings(
    max_examples=1,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
)
@given(st.lists(st.integers(0, 2**31 - 1), min_size=3, max_size=3, unique=True))
def test_shuffled_order_flips_no_verdict(spark, boundary, seeds: list[int]):
    """Each seed: the judge rows in another order, spread over other partitions; all
    seeds of an example scored in one Spark job."""
    from evalframe.spark import collect_tables

    folder, want = boundary
    cfg = ef.config_from_dict({"threshold": 0.8, "borderline": 0.6})
    scores = pl.read_parquet(folder / "scores.parquet")
    lazy = {}
    for seed in seeds:
        shuffled = folder / f"shuffled-{seed}.parquet"
        scores.sample(fraction=1.0, shuffle=True, seed=seed).write_parquet(shuffled)
        tables = _spark_tables(spark, {"scores": str(shuffled)}, cfg, seed)
        lazy[seed] = tables["execution_scores"]
    got = collect_tables(lazy)
    local = ef.score_tables(folder, cfg)["execution_scores"]
    for seed in seeds:
        joined = (
            got[seed].join(local, on=list(EXEC_KEY), suffix="_local").join(want, on=list(EXEC_KEY))
        )
        assert got[seed].height == local.height == joined.height == 360
        assert (joined["verdict"] == joined["verdict_exact"]).all()
        assert (joined["verdict_local"] == joined["verdict_exact"]).all()
        assert (joined["passed"] == joined["passed_local"]).all()
        assert set(joined["verdict"]) == {"pass", "fail", "borderline"}


# --- the command line -------------------------------------------------------------------
def test_core_evalframe_never_imports_pyspark():
    code = "import evalframe, evalframe.cli, sys; assert 'pyspark' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_score_on_spark_from_the_cli(spark, tmp_path):
    from typer.testing import CliRunner

    from evalframe.cli import app

    demo = ef.write_demo(tmp_path / "demo", n_cases=40)
    result = CliRunner().invoke(app, ["score", str(demo), "--engine", "spark", "--json"])
    assert result.exit_code in (0, 1), result.output
    local = ef.score_tables(demo)
    for name, key in (
        ("execution_scores", EXEC_KEY),
        ("case_summary", CASE_KEY),
        ("run_summary", RUN_KEY),
    ):  # committed as one result set of the dataset's results store, as other engines do
        _compare(ef.read_results(demo, name), _rows(local[name]), key, name)
    # docs/results.md's one-line Spark read of a table of every set
    again = CliRunner().invoke(app, ["score", str(demo), "-t", "0.7", "--json"])
    assert again.exit_code in (0, 1), again.output
    every = spark.read.option("basePath", f"{demo}/results").parquet(
        f"{demo}/results/result_set=*/run_summary.parquet"
    )
    counts = {r["result_set"]: r["count"] for r in every.groupBy("result_set").count().collect()}
    assert counts == {
        c: n
        for c, n in ef.read_results(demo, "run_summary", config_id="all")
        .group_by("result_set")
        .len()
        .iter_rows()
    }
    assert len(counts) == 2


TREE = {
    "evaluators": {
        "quality": {
            "aggregator": "minimum",
            "children": {"grounding_fidelity": {}, "instruction_compliance": {"weight": 2}},
        },
        "tool_routing": {"required": True},
        "response_delivery": {"min_score": 0.5},
    }
}
"""A composite config over demo evaluators: evaluator_scores then has tree nodes."""
EVALUATOR_KEY = ("config_id", "run_id", "case_id", "attempt", "path")


def _same(got: pl.DataFrame, want: pl.DataFrame, key, what: str) -> None:
    """Same columns and dtypes; the same rows by `key` (floats within 1e-9)."""
    from polars.testing import assert_frame_equal

    assert got.schema == want.schema, what
    key = list(key)
    assert_frame_equal(
        got.sort(key, nulls_last=True),
        want.sort(key, nulls_last=True),
        check_exact=False,
        rel_tol=1e-9,
        abs_tol=1e-12,
    )


def test_spark_writes_the_evaluator_tables_of_the_polars_engine(spark, tmp_path):
    """evaluator_scores (score --evaluators) and evaluator_deltas (compare) on Spark equal
    the polars engine's on the demo data, for the preset config (flat, no evaluator list:
    each run's own evaluators) and a composite tree."""
    from evalframe._private.engines.spark.compare import compare_dataset
    from evalframe._private.engines.spark.run import score_dataset

    demo = ef.write_demo(tmp_path / "demo", n_cases=12)
    (demo / f"{S.LABELS}.parquet").unlink()  # judge agreement is the pipeline's, not Spark's
    for cfg in (ef.Config(), ef.config_from_dict(TREE)):
        got = score_dataset(demo, cfg, evaluators=True, partitions=PARTITIONS)
        want = ef.score_tables(demo, cfg, evaluators=True)
        # variance_components is the pipeline's (from execution_scores, whatever the engine)
        assert list(got) == [n for n in want if n != S.VARIANCE_COMPONENTS]
        assert got["evaluator_scores"].height == want["evaluator_scores"].height > 0
        _same(got["evaluator_scores"], want["evaluator_scores"], EVALUATOR_KEY, "evaluators")
        _same(got["execution_scores"], want["execution_scores"], EXEC_KEY, "execution")
        deltas, scored, pairs = compare_dataset(
            demo, cfg, lambda rs: ef.pairs_for(rs, mode="consecutive"), partitions=PARTITIONS
        )
        expected = ef.compare_tables(demo, cfg, pairs="consecutive")
        # evaluator_tests is the pipeline's (from evaluator_deltas, whatever the engine)
        assert pairs == expected.pairs
        assert list(deltas) == [n for n in expected if n != S.EVALUATOR_TESTS]
        assert deltas["evaluator_deltas"].height > 0
        for name in ("case_deltas", "evaluator_deltas", "run_deltas"):  # row order too
            _same(deltas[name].with_row_index(), expected[name].with_row_index(), ["index"], name)
        _same(scored["run_summary"], expected.scored["run_summary"], RUN_KEY, "run_summary")


def test_compare_on_spark_from_the_cli(spark, tmp_path):
    """`evalframe compare DATASET --engine spark` writes the polars engine's case_deltas,
    evaluator_deltas and run_deltas as one result set, and exits as it does."""
    from typer.testing import CliRunner

    from evalframe.cli import app

    demo = ef.write_demo(tmp_path / "demo", n_cases=20)
    args = ["compare", str(demo), "--pairs", "consecutive", "--json"]
    result = CliRunner().invoke(app, [*args, "--engine", "spark"])
    local = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "local")])
    assert result.exit_code == local.exit_code, result.output
    assert result.exit_code in (0, 1), result.output
    for name in ("case_deltas", "evaluator_deltas", "run_deltas"):
        got = ef.read_results(demo, name)
        want = ef.read_results(tmp_path / "local", name)
        assert got.height == want.height > 0, name
        _same(got.with_row_index(), want.with_row_index(), ["index"], name)
    spark_remote = CliRunner().invoke(app, [*args, "--spark-remote", "sc://h:15002"])
    assert spark_remote.exit_code == 2 and "--engine spark" in spark_remote.output


def test_bad_input_on_spark_exits_2_naming_the_problem(spark, tmp_path):
    from typer.testing import CliRunner

    from evalframe.cli import app

    pl.DataFrame(
        {
            "run_id": ["r1", "r1", "r1"],
            "case_id": ["c1", "c1", "c2"],
            "evaluator": ["a", "b", "a"],
            "score": [0.5, 1.7, 0.9],
        }
    ).write_parquet(tmp_path / "scores.parquet")
    result = CliRunner().invoke(app, ["score", str(tmp_path), "--engine", "spark"])
    assert result.exit_code == 2, result.output
    assert "scores.score" in result.output and "c1" in result.output, result.output
    assert "Traceback" not in result.output


def test_created_at_text_on_spark_is_read_by_the_local_rule(spark, tmp_path):
    from typer.testing import CliRunner

    from evalframe.cli import app

    pl.DataFrame(
        {"run_id": ["a", "a", "b", "b"], "case_id": ["x", "y"] * 2, "evaluator": "m",
         "score": [0.9, 0.5, 0.8, 0.7]}
    ).write_parquet(tmp_path / "scores.parquet")  # fmt: skip
    runs = {"run_id": ["b", "a"], "created_at": ["2026-01-02T02:00:00Z", "2026-01-02T03:00+02:00"]}
    pl.DataFrame(runs).write_parquet(tmp_path / "runs.parquet")
    result = CliRunner().invoke(app, ["score", str(tmp_path), "--engine", "spark", "--json"])
    assert result.exit_code in (0, 1), result.output
    got = ef.read_results(tmp_path, "run_summary").select("run_id", "created_at").rows()
    local = ef.score_tables(tmp_path)["run_summary"]
    local = local.collect() if isinstance(local, pl.LazyFrame) else local
    assert got == local.select("run_id", "created_at").rows()
    assert [r[0] for r in got] == ["a", "b"]  # a: 01:00 UTC, b: 02:00 UTC
    runs["created_at"][0] = "02/01/2026"
    pl.DataFrame(runs).write_parquet(tmp_path / "runs.parquet")
    result = CliRunner().invoke(app, ["score", str(tmp_path), "--engine", "spark"])
    assert result.exit_code == 2, result.output
    assert "created_at is not a timestamp" in result.output and "02/01/2026" in result.output
    assert "Traceback" not in result.output


def test_spark_remote_needs_the_spark_engine(tmp_path):
    from typer.testing import CliRunner

    from evalframe.cli import app

    demo = ef.write_demo(tmp_path / "demo", n_cases=5)
    result = CliRunner().invoke(app, ["score", str(demo), "--spark-remote", "sc://h:15002"])
    assert result.exit_code == 2
    assert "--engine spark" in result.output


# --- a dataset path: `score --engine spark` ---------------------------------------------
@SETTINGS
@given(st.lists(st.tuples(scenarios(), st.integers(0, 2**31 - 1)), min_size=2, max_size=2))
def test_score_dataset_equals_the_local_engine(spark, tmp_path_factory, drawn):
    """`score --engine spark` on random datasets (bad ones too): the local engine's
    tables, or its validation problems over the whole dataset (each partition's merged)."""
    from evalframe._private.engines.spark.run import score_dataset
    from evalframe._private.errors import ValidationError

    for sc, seed in drawn:
        folder = tmp_path_factory.mktemp("dataset")
        _write(sc, folder, seed)
        cfg = ef.config_from_dict(sc.config)
        try:
            local = ef.score_tables(folder, cfg)
        except ValidationError as e:
            with pytest.raises(ValidationError) as got:
                score_dataset(folder, cfg, partitions=PARTITIONS)
            assert sorted((p.table, p.column, p.message, p.count) for p in got.value.problems) == (
                sorted((p.table, p.column, p.message, p.count) for p in e.problems)
            )
            continue
        tables = score_dataset(folder, cfg, partitions=PARTITIONS)
        for name, key in (
            ("execution_scores", EXEC_KEY),
            ("case_summary", CASE_KEY),
            ("run_summary", RUN_KEY),
        ):
            assert tables[name].columns == local[name].columns, name
            _compare(tables[name], _rows(local[name]), key, name)
