"""The noise floor (docs/statistics.md#noise-floor): `--replicates COLUMN` writes noise_floor and
marks run_deltas.within_noise; checked on literal tables, against the exact reference under
hypothesis, on every engine and from the command line."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import evalframe as ef
from evalframe._private import schema as S
from evalframe._private.errors import UsageError
from evalframe._private.summaries.noise_floor import (
    noise_floor,
    replicate_groups,
    with_within_noise,
)
from evalframe.cli import app
from tests import reference_stats as ref

CASE_SCHEMA = {
    S.CONFIG_ID: pl.String,
    S.RUN_ID: pl.String,
    S.CASE_ID: pl.String,
    S.PASSED: pl.Boolean,
    S.SCORE: pl.Float64,
}
CASES = [  # run, case, passed, score
    ("r1", "a", True, 0.9),
    ("r1", "b", False, 0.5),
    ("r1", "c", True, None),
    ("r2", "a", True, 0.8),
    ("r2", "b", True, 0.9),
    ("r2", "c", None, 0.7),  # passed null: not a shared case
    ("r3", "a", True, 1.0),  # group of one run: no row
]
GROUPS = {"r1": "seed", "r2": "seed", "r3": "alone"}


def _cases(rows: list[tuple]) -> pl.DataFrame:
    return pl.DataFrame([("c", *r) for r in rows], schema=CASE_SCHEMA, orient="row")


def _groups(groups: dict[str, str]) -> pl.DataFrame:
    return pl.DataFrame(
        [("c", run, g) for run, g in groups.items()],
        schema=[S.CONFIG_ID, S.RUN_ID, S.REPLICATE_GROUP],
        orient="row",
    ).cast(pl.String)


def test_the_literal_table():
    got = noise_floor(_cases(CASES).lazy(), _groups(GROUPS)).collect().to_dicts()
    # one pair (r1, r2) over cases a and b: Δp = 2/2 - 1/2, Δs = 0.85 - 0.7, one flip
    assert got == [
        {
            S.CONFIG_ID: "c",
            S.REPLICATE_GROUP: "seed",
            S.N_RUNS: 2,
            S.PAIRS: 1,
            S.SHARED_CASES: 2,
            S.RMS_PASS_RATE_DELTA: 0.5,
            S.RMS_MEAN_SCORE_DELTA: pytest.approx(0.15),
            S.FLIP_RATE: 0.5,
        }
    ]


def test_within_noise_is_the_larger_floor_of_the_two_groups_at_the_boundary():
    floor = pl.DataFrame(
        {S.CONFIG_ID: "c", S.REPLICATE_GROUP: ["x", "y"], S.RMS_PASS_RATE_DELTA: [0.1, 0.3]}
    )
    groups = _groups({"a": "x", "b": "y", "d": "z"})
    deltas = pl.DataFrame(
        {
            S.CONFIG_ID: "c",
            S.BASELINE_RUN_ID: ["a", "a", "a", "a"],
            S.CANDIDATE_RUN_ID: ["b", "b", "d", "b"],
            S.PASS_RATE_DELTA: [-0.3, 0.31, 0.0, 0.3 - 1e-12],
        }
    )
    got = with_within_noise(deltas, floor, groups)[S.WITHIN_NOISE].to_list()
    assert got == [True, False, None, True]


def test_a_missing_or_list_column_is_refused_naming_the_runs_columns():
    summary = pl.DataFrame({S.CONFIG_ID: ["c"], S.RUN_ID: ["r"], "seed": [1], "tags": [["x"]]})
    with pytest.raises(UsageError, match="runs table has seed, tags"):
        replicate_groups(summary, "sede")
    with pytest.raises(UsageError, match="'tags'"):
        replicate_groups(summary, "tags")
    assert replicate_groups(summary, "seed")[S.REPLICATE_GROUP].to_list() == ["1"]


case_rows = st.lists(
    st.tuples(
        st.sampled_from(["r1", "r2", "r3", "r4"]),
        st.sampled_from(["a", "b", "c"]),
        st.sampled_from([None, True, False]),
        st.sampled_from([None, 0.0, 0.3, 0.75, 1.0]),
    ),
    max_size=12,
    unique_by=lambda r: r[:2],
)
group_maps = st.dictionaries(
    st.sampled_from(["r1", "r2", "r3", "r4"]), st.sampled_from(["g", "h"]), max_size=4
)


@settings(max_examples=200, deadline=None)
@given(case_rows, group_maps)
def test_equals_the_exact_reference(rows, groups):
    want = ref.noise_floor(_cases(rows).to_dicts(), {("c", run): g for run, g in groups.items()})
    got = noise_floor(_cases(rows).lazy(), _groups(groups)).collect().to_dicts()
    assert got == [
        {k: v if v is None or isinstance(v, str) else pytest.approx(float(v)) for k, v in r.items()}
        for r in want
    ]


@pytest.fixture(scope="module")
def reruns(tmp_path_factory) -> Path:
    """Four runs of 6 cases: v1 twice (seeds), v2 twice; v2 fails one more case."""
    path = tmp_path_factory.mktemp("noise") / "data"
    path.mkdir()
    quality = {"r1": 0.9, "r2": 0.85, "r3": 0.7, "r4": 0.72}
    rows = [
        {
            "run_id": run,
            "case_id": f"c{k}",
            "evaluator": "m",
            "score": round(min(1.0, q + 0.05 * (k % 3) - 0.1 * (k == 5)), 4),
        }
        for run, q in quality.items()
        for k in range(6)
    ]
    pl.DataFrame(rows).write_parquet(path / "scores.parquet")
    pl.DataFrame(
        {
            "run_id": list(quality),
            "created_at": [f"2026-10-0{k + 1}T09:00:00" for k in range(4)],
            "system": ["v1", "v1", "v2", "v2"],
        }
    ).with_columns(pl.col("created_at").str.to_datetime()).write_parquet(path / "runs.parquet")
    return path


def test_every_engine_writes_the_floor_of_its_own_case_summary(engine, reruns):
    tables = ef.compare_tables(reruns, pairs="consecutive", engine=engine, replicates="system")
    cases = tables.scored[S.CASE_SUMMARY]
    cases = cases.collect() if isinstance(cases, pl.LazyFrame) else cases
    groups = {
        ("c", r): g for r, g in zip(["r1", "r2", "r3", "r4"], ["v1", "v1", "v2", "v2"], strict=True)
    }
    want = ref.noise_floor(cases.with_columns(pl.lit("c").alias(S.CONFIG_ID)).to_dicts(), groups)
    got = tables[S.NOISE_FLOOR].drop(S.CONFIG_ID).to_dicts()
    assert got == [
        {
            k: v if v is None or isinstance(v, str) else pytest.approx(float(v))
            for k, v in r.items()
            if k != S.CONFIG_ID
        }
        for r in want
    ]
    within = tables[S.RUN_DELTAS].select(S.CANDIDATE_RUN_ID, S.WITHIN_NOISE).rows()
    assert dict(within) == {"r2": True, "r3": False, "r4": True}


def test_the_cli_writes_the_table_and_says_which_changes_are_noise(reruns, tmp_path):
    runner = CliRunner(env={"COLUMNS": "200"})
    out = tmp_path / "out"
    args = ["compare", str(reruns), "--pairs", "consecutive", "--replicates", "system"]
    result = runner.invoke(app, [*args, "-o", str(out)])
    assert result.exit_code in (0, 1), result.output
    assert "r1 → r2: the pass-rate change" in result.output
    assert "within the noise of reruns" in result.output
    assert (out / "noise_floor.parquet").is_file()
    result = runner.invoke(app, [*args, "--json", "-o", str(tmp_path / "j")])
    assert [r["within_noise"] for r in json.loads(result.output)] == [True, False, True]
    score = runner.invoke(
        app, ["score", str(reruns), "--replicates", "system", "-o", str(tmp_path / "s")]
    )
    assert score.exit_code in (0, 1), score.output
    assert pl.read_parquet(tmp_path / "s" / "noise_floor.parquet").height == 2
    bad = runner.invoke(
        app, ["score", str(reruns), "--replicates", "sytem", "-o", str(tmp_path / "b")]
    )
    assert bad.exit_code == 2 and "created_at, system" in bad.output
