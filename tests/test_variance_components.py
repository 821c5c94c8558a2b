"""variance_components (docs/statistics.md#variance-components): a literal table, the exact
reference under hypothesis, every engine's `score`, and the standard errors `plan` prints."""

from __future__ import annotations

import random

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import evalframe as ef
from evalframe._private import schema as S
from evalframe._private.stats.power import design_errors
from tests import reference_stats as ref

EXEC_SCHEMA = {
    S.CONFIG_ID: pl.String,
    S.RUN_ID: pl.String,
    S.CASE_ID: pl.String,
    S.ATTEMPT: pl.Int64,
    S.SCORE: pl.Float64,
    S.PASSED: pl.Boolean,
}
ROWS = [  # run, case, attempt, score, passed
    ("r1", "a", 0, 0.0, False),
    ("r1", "a", 1, 0.0, False),
    ("r1", "b", 0, 1.0, True),
    ("r1", "b", 1, 1.0, True),
    ("r1", "c", 0, None, False),  # unscored: no value for either measure
    ("r2", "a", 0, 0.5, True),  # one case: variances null, counts kept
    ("r2", "a", 1, 0.7, True),
    ("r3", "a", 0, 0.9, True),  # one attempt per case: no within-case spread
    ("r3", "b", 0, 0.1, False),
    ("r4", "a", 0, None, False),  # nothing scored: no row
]
EXPECTED = [  # run, measure, cases, values, mean_attempts, var_within, var_between, icc
    ("r1", "passed", 2, 4, 2.0, 0.0, 0.5, 1.0),
    ("r1", "score", 2, 4, 2.0, 0.0, 0.5, 1.0),
    ("r2", "passed", 1, 2, 2.0, None, None, None),
    ("r2", "score", 1, 2, 2.0, None, None, None),
    ("r3", "passed", 2, 2, 1.0, None, None, None),
    ("r3", "score", 2, 2, 1.0, None, None, None),
]


def _executions(rows: list[tuple]) -> pl.DataFrame:
    return pl.DataFrame([("c", *r) for r in rows], schema=EXEC_SCHEMA, orient="row")


def test_the_literal_table():
    got = ef.variance_components(_executions(ROWS).lazy()).collect()
    want = pl.DataFrame(
        [("c", *r) for r in EXPECTED], schema=S.VARIANCE_COMPONENTS_COLUMNS, orient="row"
    )
    assert_frame_equal(got, want, check_dtypes=False)


def test_the_between_part_is_never_negative_and_icc_is_null_without_spread():
    rows = [("r", "a", 0, 0.0, False), ("r", "a", 1, 1.0, True)]
    rows += [("r", "b", 0, 0.0, False), ("r", "b", 1, 1.0, True)]
    got = ef.variance_components(_executions(rows).lazy()).collect().row(0, named=True)
    assert got[S.VAR_BETWEEN] == 0.0 and got[S.VAR_WITHIN] == pytest.approx(0.5)
    assert got[S.ICC] == 0.0
    same = [("r", c, k, 0.5, True) for c in "ab" for k in range(2)]
    got = ef.variance_components(_executions(same).lazy()).collect().row(0, named=True)
    assert (got[S.VAR_BETWEEN], got[S.VAR_WITHIN], got[S.ICC]) == (0.0, 0.0, None)


def _approx(row: dict) -> dict:
    return {
        k: (pytest.approx(float(v), abs=1e-12) if v is not None and not isinstance(v, str) else v)
        for k, v in row.items()
    }


rows_strategy = st.lists(
    st.tuples(
        st.sampled_from(["r1", "r2"]),
        st.sampled_from(["a", "b", "c", "d"]),
        st.integers(0, 3),
        st.sampled_from([None, 0.0, 0.25, 0.5, 0.8, 1.0]),
        st.booleans(),
    ),
    max_size=40,
    unique_by=lambda r: r[:3],
)


@settings(max_examples=150, deadline=None)
@given(rows_strategy, st.randoms(use_true_random=False))
def test_equals_the_exact_reference_in_any_row_order(rows, rnd):
    want = ref.variance_components(_executions(rows).to_dicts())
    shuffled = list(rows)
    rnd.shuffle(shuffled)
    got = ef.variance_components(_executions(shuffled).lazy()).collect().to_dicts()
    assert got == [_approx(r) for r in want]


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("vc") / "demo"
    ef.write_demo(path, n_cases=30)
    return str(path)


def test_score_writes_the_table_of_its_own_execution_scores_on_every_engine(engine, demo):
    tables = ef.score_tables(demo, engine=engine)
    got = tables[S.VARIANCE_COMPONENTS]
    assert isinstance(got, pl.DataFrame) and got.columns == S.VARIANCE_COMPONENTS_COLUMNS
    scores = tables[S.EXECUTION_SCORES]
    rows = (scores.collect() if isinstance(scores, pl.LazyFrame) else scores).to_dicts()
    assert got.to_dicts() == [_approx(r) for r in ref.variance_components(rows)]
    assert got.height == 2 * 3  # two measures x three runs


def test_design_errors_halve_what_they_should():
    rows = pl.DataFrame(
        {S.VAR_BETWEEN: [0.04, None], S.VAR_WITHIN: [0.09, None], S.CASES: [100, 1]}
    ).with_columns(pl.Series(S.VALUES, [300, 2]))
    got = design_errors(rows).row(0, named=True)
    assert got["se_now"] == pytest.approx((0.04 / 100 + 0.09 / 300) ** 0.5)
    assert got["se_twice_the_cases"] == pytest.approx(got["se_now"] / 2**0.5)
    assert got["se_twice_the_attempts"] == pytest.approx((0.04 / 100 + 0.09 / 600) ** 0.5)
    assert design_errors(rows).row(1, named=True)["se_now"] is None


def test_shuffled_demo_rows_give_the_same_table(demo):
    scores = ef.score_tables(demo)[S.EXECUTION_SCORES]
    frame = scores.collect() if isinstance(scores, pl.LazyFrame) else scores
    order = list(range(frame.height))
    random.Random(7).shuffle(order)
    a = ef.variance_components(frame.lazy()).collect()
    b = ef.variance_components(frame[order].lazy()).collect()
    assert_frame_equal(a, b, abs_tol=1e-12)


def test_plan_says_what_more_cases_and_more_attempts_buy(demo):
    import json

    from typer.testing import CliRunner

    from evalframe.cli import app

    result = CliRunner().invoke(app, ["plan", demo, "--json"])
    assert result.exit_code == 0, result.output
    rows = {r["metric"]: r for r in json.loads(result.output)}
    variance = ef.score_tables(demo)[S.VARIANCE_COMPONENTS]
    newest = rows["pass_rate"]["run_id"]
    for metric, measure in (("pass_rate", "passed"), ("mean_score", "score")):
        vc = variance.filter(pl.col(S.RUN_ID) == newest, pl.col(S.MEASURE) == measure).row(
            0, named=True
        )
        a, n = vc[S.CASES], vc[S.VALUES]
        vb, vw = vc[S.VAR_BETWEEN], vc[S.VAR_WITHIN]
        assert rows[metric]["se_now"] == pytest.approx((vb / a + vw / n) ** 0.5)
        assert rows[metric]["se_twice_the_attempts"] == pytest.approx(
            (vb / a + vw / (2 * n)) ** 0.5
        )
    table = CliRunner(env={"COLUMNS": "200"}).invoke(app, ["plan", demo]).output
    assert "more cases or more attempts?" in table and "twice the attempts" in table
