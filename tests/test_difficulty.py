"""Case difficulty (docs/statistics.md#case-difficulty): case_difficulty and run_ability on a
literal matrix and against the exact reference (full Newton) under hypothesis."""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalframe._private import schema as S
from evalframe._private.summaries.difficulty import difficulty_tables
from tests import reference_stats as ref


def _tables(y: dict[tuple[str, str], int | None], series: dict[str, str] | None = None):
    cases = pl.DataFrame(
        [("c", r, c, None if v is None else bool(v)) for (r, c), v in y.items()],
        schema=[S.CONFIG_ID, S.RUN_ID, S.CASE_ID, S.PASSED],
        orient="row",
    )
    run_ids = sorted({r for r, _ in y})
    runs = pl.DataFrame({S.CONFIG_ID: "c", S.RUN_ID: run_ids}).with_columns(
        pl.lit(None, pl.Float64).alias(c)
        for c in (S.PASS_RATE, S.PASS_RATE_SE, S.MEAN_SCORE, S.MEAN_SCORE_SE)
    )
    if series is not None:
        runs = runs.with_columns(pl.col(S.RUN_ID).replace_strict(series).alias("model"))
    return difficulty_tables(cases, runs, series=None if series is None else "model")


MATRIX = {  # run → passed per case a..e
    "r1": [1, 1, 0, 1, 0],
    "r2": [1, 0, 0, 1, 1],
    "r3": [1, 1, 0, 0, 1],
    "r4": [1, 0, 1, 0, 1],
    "r5": [1, 1, 1, 1, 1],
}


def test_flags_the_always_and_never_passing_and_fits_the_rest():
    y = {(r, c): v for r, row in MATRIX.items() for c, v in zip("abcde", row, strict=True)}
    y[("r1", "f")] = None  # a null passed is left out: case f has no row
    out = _tables(y)
    cases = {r[S.CASE_ID]: r for r in out[S.CASE_DIFFICULTY].to_dicts()}
    runs = {r[S.RUN_ID]: r for r in out[S.RUN_ABILITY].to_dicts()}
    assert set(cases) == set("abcde")
    # case a passes everywhere; run r5 too; then nothing else is constant
    assert (cases["a"][S.FLAG], cases["a"][S.DIFFICULTY]) == (S.FLAG_ALWAYS, None)
    assert (runs["r5"][S.FLAG], runs["r5"][S.ABILITY]) == (S.FLAG_ALWAYS, None)
    assert (cases["a"][S.N_RUNS], cases["a"][S.PASSES]) == (5, 5)
    want_cases, want_runs = ref.case_difficulty({k: v for k, v in y.items() if v is not None})
    for c in "bcde":
        assert cases[c][S.DIFFICULTY] == pytest.approx(want_cases[c]["difficulty"], abs=1e-7)
    assert runs["r1"][S.ABILITY] == pytest.approx(want_runs["r1"]["ability"], abs=1e-7)
    # c fails where d passes in the other runs: harder
    assert cases["c"][S.DIFFICULTY] > cases["b"][S.DIFFICULTY]


CELL = st.one_of(st.none(), st.integers(0, 1))


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 6).flatmap(
        lambda n_runs: st.lists(
            st.lists(CELL, min_size=n_runs, max_size=n_runs), min_size=1, max_size=7
        )
    ),
    st.booleans(),
)
def test_matches_the_exact_reference(columns, two_series):
    n_runs = len(columns[0])
    y = {(f"r{r}", f"k{c}"): v for c, col in enumerate(columns) for r, v in enumerate(col)}
    series = {f"r{r}": "ab"[r % 2] for r in range(n_runs)} if two_series else None
    out = _tables(y, series)
    got_cases = {(r[S.SERIES], r[S.CASE_ID]): r for r in out[S.CASE_DIFFICULTY].to_dicts()}
    got_runs = {(r[S.SERIES], r[S.RUN_ID]): r for r in out[S.RUN_ABILITY].to_dicts()}
    groups = sorted(set(series.values())) if series else [None]
    n_case_rows = n_run_rows = 0
    for g in groups:
        part = {k: v for k, v in y.items() if v is not None and (g is None or series[k[0]] == g)}
        want_cases, want_runs = ref.case_difficulty(part)
        n_case_rows += len(want_cases)
        n_run_rows += len(want_runs)
        for key, want, got in [
            *(((g, c), w, got_cases[(g, c)]) for c, w in want_cases.items()),
            *(((g, r), w, got_runs[(g, r)]) for r, w in want_runs.items()),
        ]:
            for column, value in want.items():
                if isinstance(value, float):
                    assert got[column] == pytest.approx(value, abs=1e-7), (key, column)
                else:
                    assert got[column] == value, (key, column)
    assert (len(got_cases), len(got_runs)) == (n_case_rows, n_run_rows)


def test_cases_difficulty_lists_what_trend_flagged(tmp_path):
    from typer.testing import CliRunner

    from evalframe.cli import app

    data = tmp_path / "data"
    data.mkdir()
    y = {(r, c): v for r, row in MATRIX.items() for c, v in zip("abcde", row, strict=True)}
    rows = [
        {"run_id": r, "case_id": c, "evaluator": "m", "score": 1.0 if v else 0.0}
        for (r, c), v in y.items()
    ]
    pl.DataFrame(rows).write_parquet(data / "scores.parquet")
    runner = CliRunner()
    missing = runner.invoke(app, ["cases", str(data), "--difficulty"])
    assert missing.exit_code == 2 and "evalframe trend" in missing.output
    assert runner.invoke(app, ["trend", str(data)]).exit_code == 0
    listed = runner.invoke(app, ["cases", str(data), "--difficulty", "--json"])
    assert listed.exit_code == 0, listed.output
    import json

    flagged = {r[S.CASE_ID]: r[S.FLAG] for r in json.loads(listed.stdout)}
    # r5 and a are removed; every other run then passes two of the four cases, so a case's
    # result mirrors the rest of its run: negative discrimination for each (5 runs)
    assert flagged == {"a": S.FLAG_ALWAYS, **dict.fromkeys("bcde", S.FLAG_NEGATIVE)}
