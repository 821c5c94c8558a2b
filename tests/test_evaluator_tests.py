"""Per-evaluator paired tests (docs/statistics.md#per-evaluator-paired-tests): evaluator_tests
on a literal table, against the exact reference under hypothesis, and on every engine's
`compare`."""

from __future__ import annotations

import math

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import evalframe as ef
from evalframe._private import schema as S
from evalframe._private.compare.evaluator_tests import evaluator_tests
from tests import reference_stats as ref

DELTA_SCHEMA = {
    S.CONFIG_ID: pl.String,
    S.BASELINE_RUN_ID: pl.String,
    S.CANDIDATE_RUN_ID: pl.String,
    S.CASE_ID: pl.String,
    S.PATH: pl.String,
    "baseline_score": pl.Float64,
    "candidate_score": pl.Float64,
}


def _deltas(rows: list[tuple]) -> pl.DataFrame:
    """(pair, case, path, baseline, candidate) rows of one config."""
    return pl.DataFrame(
        [("c", *pair, case, path, b, cand) for pair, case, path, b, cand in rows],
        schema=DELTA_SCHEMA,
        orient="row",
    )


AB = ("a", "b")
LITERAL = [
    (AB, "1", "x", 0.5, 0.7),  # +0.2
    (AB, "2", "x", 0.5, 0.5),  # zero: out of the signed ranks
    (AB, "3", "x", 0.2, 0.4),  # +0.2, tied with case 1 within EPS
    (AB, "4", "x", 0.9, 0.8),  # -0.1
    (AB, "1", "q", 0.5, 0.5),  # q is a parent node of q/leaf: no row
    (AB, "1", "q/leaf", 0.25, 0.5),
    (AB, "2", "q/leaf", None, 0.5),  # one side missing: not a paired case
]


def test_the_literal_table():
    got = {r[S.PATH]: r for r in evaluator_tests(_deltas(LITERAL)).to_dicts()}
    assert set(got) == {"x", "q/leaf"}
    x = got["x"]
    # |d| = 0.1 (rank 1), 0.2, 0.2 (ranks 2, 3 → 2.5 each); W+ = 5, n = 3, one tie of two
    sigma = math.sqrt(3 * 4 * 7 / 24 - (8 - 2) / 48)
    assert (x[S.N_CASES], x[S.N_NONZERO]) == (4, 3)
    assert x[S.MEAN_DELTA] == pytest.approx(0.3 / 4)
    assert x[S.WILCOXON_Z] == pytest.approx((5 - 3) / sigma)
    assert x[S.P_VALUE] == pytest.approx(2 * (1 - ref.normal_cdf((5 - 3) / sigma)), abs=1e-6)
    leaf = got["q/leaf"]
    assert (leaf[S.N_CASES], leaf[S.D_Z]) == (1, None)  # one case: no sd
    # Holm over the pair's two p-values
    p_small, p_large = sorted([x[S.P_VALUE], leaf[S.P_VALUE]])
    holm = {p_small: min(1, 2 * p_small), p_large: max(min(1, 2 * p_small), p_large)}
    assert x[S.P_HOLM] == pytest.approx(holm[x[S.P_VALUE]])


def test_no_paired_case_means_no_row():
    rows = [(AB, "1", "x", None, 0.5), (AB, "2", "x", 0.5, None)]
    got = evaluator_tests(_deltas(rows))
    assert got.is_empty() and got.columns == S.EVALUATOR_TESTS_COLUMNS


# 0.1 ± 5e-10 ties with 0.1 (within EPS), 0.1 + 3e-9 does not: clear of the EPS boundary,
# where float subtraction and exact arithmetic may round to different sides
SCORES = st.sampled_from(
    [None, 0.0, 0.1, 0.2, 0.25, 0.3, 0.5, 0.7, 0.75, 1.0, 0.1 + 5e-10, 0.1 + 3e-9]
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from([AB, ("b", "a"), ("a", "c")]),
            st.sampled_from("123456"),
            st.sampled_from(["x", "y", "t", "t/u"]),
            SCORES,
            SCORES,
        ),
        max_size=40,
        unique_by=lambda r: (r[0], r[1], r[2]),
    )
)
def test_matches_the_exact_reference(rows):
    frame = _deltas(rows)
    got = evaluator_tests(frame.sample(fraction=1.0, shuffle=True, seed=1)).to_dicts()
    want = ref.evaluator_tests(frame.to_dicts())
    key = (S.CONFIG_ID, S.BASELINE_RUN_ID, S.CANDIDATE_RUN_ID, S.PATH)
    assert sorted(tuple(r[k] for k in key) for r in got) == [tuple(r[k] for k in key) for r in want]
    by_key = {tuple(r[k] for k in key): r for r in got}
    for w in want:
        g = by_key[tuple(w[k] for k in key)]
        assert (g[S.N_CASES], g[S.N_NONZERO]) == (w["n_cases"], w["n_nonzero"])
        for column, tol in [
            (S.MEAN_DELTA, 1e-12),
            (S.D_Z, 1e-6),  # mean / sd: a tiny sd (just above EPS) loses digits in floats
            (S.WILCOXON_Z, 1e-9),
            (S.P_VALUE, 1e-6),
            (S.P_HOLM, 1e-6),
        ]:
            if w[column] is None:
                assert g[column] is None, column
            else:
                assert g[column] == pytest.approx(w[column], rel=tol, abs=tol), column


@pytest.fixture(scope="module")
def two_metrics(tmp_path_factory):
    """Three runs of 8 cases × 2 attempts, two evaluators; run r3 loses on `tone` only."""
    path = tmp_path_factory.mktemp("evaluator_tests") / "data"
    path.mkdir()
    shift = {"r1": (0.0, 0.0), "r2": (0.0, 0.05), "r3": (0.0, -0.3)}
    rows = [
        {
            "run_id": run,
            "case_id": f"c{k}",
            "attempt": a,
            "evaluator": name,
            "score": round(min(1.0, max(0.0, 0.6 + 0.05 * ((k * 3 + a) % 5) + s)), 4),
        }
        for run, (s_acc, s_tone) in shift.items()
        for k in range(8)
        for a in (1, 2)
        for name, s in (("accuracy", s_acc), ("tone", s_tone))
    ]
    pl.DataFrame(rows).write_parquet(path / "scores.parquet")
    return path


def test_compare_writes_it_on_every_engine(engine, two_metrics):
    tables = ef.compare_tables(two_metrics, engine=engine, pairs="consecutive")
    want = ref.evaluator_tests(tables[S.EVALUATOR_DELTAS].to_dicts())
    got = tables[S.EVALUATOR_TESTS].drop(S.CONFIG_ID).to_dicts()
    assert got == [
        {
            k: v if v is None or isinstance(v, str) else pytest.approx(v, abs=1e-6)
            for k, v in r.items()
        }
        for r in ({k: v for k, v in w.items() if k != S.CONFIG_ID} for w in want)
    ]
    tone = [r for r in got if r[S.PATH] == "tone" and r[S.CANDIDATE_RUN_ID] == "r3"]
    assert tone[0][S.P_HOLM] < 0.05 and tone[0][S.MEAN_DELTA] < 0
