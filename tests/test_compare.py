"""Golden vectors and unit tests of docs/compare.md (comparing runs):
evalframe._private.compare.compare.

Connexity's rules (seed 000) rescaled to 0–1: 5 points of 100 = 0.05, 20 % latency.
"""

from __future__ import annotations

import datetime as dt

import polars as pl
import pytest

from evalframe._private.compare.compare import (
    CASE_DELTAS_SCHEMA,
    EVALUATOR_DELTAS_SCHEMA,
    RUN_DELTAS_SCHEMA,
    compare,
)
from evalframe._private.compare.paired_stats import mcnemar_p
from evalframe._private.compare.pairs import UnknownRunError, pairs_for
from evalframe._private.config import Compare, Config
from evalframe._private.errors import EvalframeError, UsageError
from tests.reference_compare import mcnemar as mcnemar_exact

CFG = Config()
CID = CFG.config_id


def case(run, case_id, score, passed, *, attempts=1, n_passed=None, latency=1000.0, cid=CID):
    """One case_summary row; `score` None = no scored attempt."""
    n_passed = (attempts if passed else 0) if n_passed is None else n_passed
    return {
        "config_id": cid,
        "run_id": run,
        "case_id": case_id,
        "attempts": attempts,
        "errored": 0 if score is not None else attempts,
        "scored": 0 if score is None else attempts,
        "unscored": 0,
        "score": score,
        "n_passed": n_passed,
        "pass_rate": n_passed / attempts,
        "passed": passed,
        "flaky": 0 < n_passed < attempts,
        "latency_mean": latency,
        "cost_usd": 0.01,
    }


CASE_SCHEMA = {
    "config_id": pl.String,
    "run_id": pl.String,
    "case_id": pl.String,
    "attempts": pl.Int64,
    "errored": pl.Int64,
    "scored": pl.Int64,
    "unscored": pl.Int64,
    "score": pl.Float64,
    "n_passed": pl.Int64,
    "pass_rate": pl.Float64,
    "passed": pl.Boolean,
    "flaky": pl.Boolean,
    "latency_mean": pl.Float64,
    "cost_usd": pl.Float64,
}


def cases(*rows) -> pl.LazyFrame:
    return pl.LazyFrame(list(rows), schema=CASE_SCHEMA)


def runs(*rows, cid=CID) -> pl.LazyFrame:
    """run_summary rows: (run_id, pass_rate, mean_score, latency_mean, latency_p95, cost)."""
    cols = ["run_id", "pass_rate", "mean_score", "latency_mean", "latency_p95", "cost_usd"]
    frame = pl.LazyFrame(
        [dict(zip(cols, r, strict=True)) for r in rows],
        schema={"run_id": pl.String, **{c: pl.Float64 for c in cols[1:]}},
    )
    return frame.with_columns(pl.lit(cid).alias("config_id"), pl.lit(3).alias("executions"))


DEFAULT_RUNS = runs(("A", 1.0, 0.8, 1000.0, 1500.0, 1.0), ("B", 1.0, 0.8, 1000.0, 1500.0, 1.0))


def run_compare(case_rows, pairs=(("A", "B"),), config=CFG, run_summary=DEFAULT_RUNS, **kw):
    out = compare(cases(*case_rows), list(pairs), config, run_summary=run_summary, **kw)
    assert all(isinstance(f, pl.LazyFrame) for f in out.values())
    return {name: frame.collect() for name, frame in out.items()}


def statuses(case_rows, **kw) -> dict[str, str]:
    frame = run_compare(case_rows, **kw)["case_deltas"]
    return dict(zip(frame["case_id"], frame["status"], strict=True))


# --- golden vectors: case status --------------------------------------------------------
def test_pass_flip_is_regression_even_when_score_rose():
    got = statuses([case("A", "c", 0.80, True), case("B", "c", 0.95, False)])
    assert got == {"c": "regression"}


def test_fail_to_pass_is_improvement_even_when_score_fell():
    got = statuses([case("A", "c", 0.95, False), case("B", "c", 0.80, True)])
    assert got == {"c": "improvement"}


def test_score_deltas_against_case_delta():
    got = statuses(
        [
            case("A", "down", 0.85, True),
            case("B", "down", 0.70, True),
            case("A", "up", 0.70, True),
            case("B", "up", 0.85, True),
            case("A", "small", 0.80, True),
            case("B", "small", 0.82, True),
            case("A", "exact", 0.85, True),
            case("B", "exact", 0.80, True),
        ]
    )
    assert got == {
        "down": "regression",
        "up": "improvement",
        "small": "unchanged",
        "exact": "unchanged",  # a drop of exactly case_delta does not exceed it
    }


def test_new_removed_error_statuses_take_precedence():
    got = statuses(
        [
            case("A", "gone", 0.9, True),
            case("B", "added", 0.9, True),
            case("A", "err_b", None, False),
            case("B", "err_b", 0.9, True),
            case("A", "err_c", 0.9, True),
            case("B", "err_c", None, False),
        ]
    )
    assert got == {"added": "new", "err_b": "error", "err_c": "error", "gone": "removed"}


def test_case_deltas_columns_and_values():
    frame = run_compare(
        [case("A", "c", 0.85, True, latency=900.0), case("B", "c", 0.70, False, latency=1100.0)]
    )["case_deltas"]
    assert frame.schema == CASE_DELTAS_SCHEMA
    row = frame.row(0, named=True)
    assert row["config_id"] == CID
    assert (row["baseline_run_id"], row["candidate_run_id"]) == ("A", "B")
    assert (row["baseline_score"], row["candidate_score"]) == (0.85, 0.70)
    assert (row["baseline_passed"], row["candidate_passed"]) == (True, False)
    assert (row["baseline_pass_rate"], row["candidate_pass_rate"]) == (1.0, 0.0)
    assert (row["baseline_latency_mean"], row["candidate_latency_mean"]) == (900.0, 1100.0)
    assert row["score_delta"] == pytest.approx(-0.15)
    assert row["status"] == "regression"


def test_new_case_has_null_baseline_side():
    frame = run_compare([case("A", "x", 0.9, True), case("B", "y", 0.9, True)])["case_deltas"]
    new = frame.filter(pl.col("status") == "new").row(0, named=True)
    assert new["case_id"] == "y"
    assert new["baseline_score"] is None and new["baseline_passed"] is None
    assert new["candidate_score"] == 0.9 and new["score_delta"] is None


def test_repeated_attempts_compare_through_case_summary():
    # 3 attempts: baseline all passed, candidate 2 of 3 (passed = all -> false).
    got = run_compare(
        [
            case("A", "c", 0.9, True, attempts=3),
            case("B", "c", 0.9, False, attempts=3, n_passed=2),
        ]
    )["case_deltas"].row(0, named=True)
    assert got["status"] == "regression"
    assert got["candidate_pass_rate"] == pytest.approx(2 / 3)


def test_custom_case_delta():
    config = Config(compare=Compare(case_delta=0.2))
    got = statuses(
        [case("A", "c", 0.85, True), case("B", "c", 0.70, True)], config=config
    )  # drop 0.15 <= 0.2
    assert got == {"c": "unchanged"}


# --- golden vectors: run_deltas -----------------------------------------------------------
def run_row(case_rows, run_summary, **kw) -> dict:
    frame = run_compare(case_rows, run_summary=run_summary, **kw)["run_deltas"]
    assert frame.schema == RUN_DELTAS_SCHEMA
    assert frame.height == 1
    return frame.row(0, named=True)


ONE_CASE = [case("A", "c", 0.9, True), case("B", "c", 0.9, True)]


def test_mean_score_drop_of_exactly_the_limit_is_not_a_regression():
    row = run_row(
        ONE_CASE, runs(("A", 1.0, 0.85, 1000.0, 1.0, 1.0), ("B", 1.0, 0.80, 1000.0, 1.0, 1.0))
    )
    assert row["mean_score_delta"] == pytest.approx(-0.05)
    assert row["reasons"] == [] and row["regression_detected"] is False


def test_mean_score_drop_beyond_the_limit_is_a_regression():
    row = run_row(
        ONE_CASE, runs(("A", 1.0, 0.85, 1000.0, 1.0, 1.0), ("B", 1.0, 0.79, 1000.0, 1.0, 1.0))
    )
    assert row["reasons"] == ["mean_score_drop"] and row["regression_detected"] is True


def test_latency_increase_of_exactly_20_percent_is_not_a_regression():
    row = run_row(
        ONE_CASE, runs(("A", 1.0, 0.8, 1000.0, 1.0, 1.0), ("B", 1.0, 0.8, 1200.0, 1.0, 1.0))
    )
    assert row["latency_mean_delta"] == 200.0
    assert row["reasons"] == []


def test_latency_increase_beyond_20_percent_is_a_regression():
    row = run_row(
        ONE_CASE, runs(("A", 1.0, 0.8, 1000.0, 1.0, 1.0), ("B", 1.0, 0.8, 1201.0, 1.0, 1.0))
    )
    assert row["reasons"] == ["latency_increase"]


def test_latency_rule_needs_positive_baseline_and_both_sides():
    for base, cand in ((0.0, 5000.0), (None, 5000.0), (1000.0, None)):
        row = run_row(
            ONE_CASE, runs(("A", 1.0, 0.8, base, 1.0, 1.0), ("B", 1.0, 0.8, cand, 1.0, 1.0))
        )
        assert row["reasons"] == [], (base, cand)


def test_pass_rate_drop_with_default_zero_limit_is_a_regression():
    row = run_row(
        ONE_CASE, runs(("A", 1.0, 0.8, 1000.0, 1.0, 1.0), ("B", 0.9, 0.8, 1000.0, 1.0, 1.0))
    )
    assert row["pass_rate_delta"] == pytest.approx(-0.1)
    assert row["reasons"] == ["pass_rate_drop"] and row["regression_detected"] is True


def test_all_three_reasons_in_order():
    row = run_row(
        ONE_CASE, runs(("A", 1.0, 0.9, 1000.0, 1.0, 1.0), ("B", 0.5, 0.5, 2000.0, 1.0, 1.0))
    )
    assert row["reasons"] == ["pass_rate_drop", "mean_score_drop", "latency_increase"]


def test_null_mean_score_gives_no_reason():
    row = run_row(
        ONE_CASE, runs(("A", 1.0, 0.9, 1000.0, 1.0, 1.0), ("B", 1.0, None, 1000.0, 1.0, 1.0))
    )
    assert row["mean_score_delta"] is None and row["reasons"] == []


def test_run_deltas_values_and_counts():
    case_rows = [
        case("A", "reg", 0.9, True),
        case("B", "reg", 0.5, False),
        case("A", "imp", 0.5, False),
        case("B", "imp", 0.9, True),
        case("A", "same", 0.9, True),
        case("B", "same", 0.9, True),
        case("A", "gone", 0.9, True),
        case("B", "new", 0.9, True),
        case("A", "err", None, False),
        case("B", "err", 0.9, True),
    ]
    rs = runs(("A", 0.8, 0.85, 1000.0, 1500.0, 1.0), ("B", 0.8, 0.84, 1100.0, 1400.0, 1.25))
    row = run_row(case_rows, rs)
    assert {k: row[k] for k in row if k.startswith("n_")} == {
        "n_new": 1,
        "n_removed": 1,
        "n_error": 1,
        "n_regression": 1,
        "n_improvement": 1,
        "n_unchanged": 1,
        "n_paired": 3,
        "n_passed_to_failed": 1,
        "n_failed_to_passed": 2,  # the errored case flipped too: matched on both sides
    }
    assert row["latency_mean_delta"] == 100.0
    assert row["latency_p95_delta"] == -100.0
    assert row["cost_delta"] == 0.25
    assert row["mean_delta"] == pytest.approx(0.0)  # -0.4, +0.4, 0
    se = (0.32 / 2) ** 0.5 / 3**0.5
    assert row["mean_delta_se"] == pytest.approx(se)
    assert row["mean_delta_ci_low"] == pytest.approx(-1.96 * se)
    assert row["mean_delta_ci_high"] == pytest.approx(1.96 * se)
    assert row["mcnemar_p"] == pytest.approx(1.0)


def test_mcnemar_five_one_way_flips():
    case_rows = []
    for i in range(5):
        case_rows += [case("A", f"f{i}", 0.9, True), case("B", f"f{i}", 0.9, False)]
    for i in range(3):
        case_rows += [case("A", f"s{i}", 0.9, True), case("B", f"s{i}", 0.9, True)]
    row = run_row(case_rows, DEFAULT_RUNS)
    assert (row["n_passed_to_failed"], row["n_failed_to_passed"]) == (5, 0)
    assert row["mcnemar_p"] == pytest.approx(0.0625, rel=1e-12)
    assert row["n_regression"] == 5


def test_mcnemar_table():
    counts = pl.LazyFrame(
        {"k": [0, 1, 2, 3, 4, 5], "a": [0, 5, 0, 1, 3, 1500], "b": [0, 0, 5, 1, 7, 1400]}
    )
    p = mcnemar_p(pl.col("a"), pl.col("b")).alias("p")
    got = dict(counts.select("k", p).collect().iter_rows())
    assert got[0] == 1.0
    assert got[1] == pytest.approx(0.0625, rel=1e-12)
    assert got[2] == pytest.approx(0.0625, rel=1e-12)
    assert got[3] == 1.0
    assert got[4] == pytest.approx(2 * 176 / 1024, rel=1e-12)  # P(X<=3), n=10
    assert got[5] == pytest.approx(float(mcnemar_exact(1500, 1400)), rel=1e-9)


def test_mcnemar_matches_exact_binomial_tail():
    grid = [(a, b) for a in range(0, 41, 3) for b in range(0, 41, 4)] + [(300, 250), (0, 1100)]
    counts = pl.DataFrame(grid, schema=["a", "b"], orient="row")
    got = counts.select(mcnemar_p(pl.col("a"), pl.col("b")))
    for (a, b), p in zip(grid, got.to_series(), strict=True):
        assert p == pytest.approx(float(mcnemar_exact(a, b)), rel=1e-9, abs=1e-300), (a, b)


def test_paired_stats_null_below_two_pairs():
    row = run_row(ONE_CASE, DEFAULT_RUNS)
    assert row["n_paired"] == 1 and row["mean_delta"] == 0.0
    assert row["mean_delta_se"] is None and row["mean_delta_ci_low"] is None
    row = run_row([case("A", "x", 0.9, True), case("B", "y", 0.9, True)], DEFAULT_RUNS)
    assert row["n_paired"] == 0 and row["mean_delta"] is None
    assert row["mcnemar_p"] == 1.0


# --- many pairs, many configs ----------------------------------------------------------
def test_many_pairs_in_one_pass_keep_pair_order():
    case_rows = [case(r, "c", s, True) for r, s in (("A", 0.9), ("B", 0.7), ("C", 0.9))]
    rs = runs(*[(r, 1.0, 0.8, 1000.0, 1.0, 1.0) for r in "ABC"])
    out = run_compare(case_rows, pairs=[("B", "C"), ("A", "B"), ("B", "C")], run_summary=rs)
    cd = out["case_deltas"]
    assert cd.select("baseline_run_id", "candidate_run_id", "status").rows() == [
        ("B", "C", "improvement"),
        ("A", "B", "regression"),
    ]
    assert out["run_deltas"]["baseline_run_id"].to_list() == ["B", "A"]


def test_configs_are_compared_separately_with_their_own_limits():
    strict = Config(compare=Compare(case_delta=0.0))
    loose = Config(threshold=0.7, compare=Compare(case_delta=0.5))
    s, lo = strict.config_id, loose.config_id
    case_rows = [
        case("A", "c", 0.8, True, cid=s),
        case("B", "c", 0.7, True, cid=s),
        case("A", "c", 0.8, True, cid=lo),
        case("B", "c", 0.7, True, cid=lo),
    ]
    rs = pl.concat(
        [
            runs(("A", 1.0, 0.8, 1.0, 1.0, 1.0), ("B", 1.0, 0.8, 1.0, 1.0, 1.0), cid=c)
            for c in (s, lo)
        ]
    )
    out = run_compare(case_rows, config=[strict, loose], run_summary=rs)
    got = dict(out["case_deltas"].select("config_id", "status").iter_rows())
    assert got == {s: "regression", lo: "unchanged"}
    assert sorted(out["run_deltas"]["config_id"]) == sorted([s, lo])
    with pytest.raises(UsageError, match="not among the configs given"):
        run_compare(case_rows, config=[strict], run_summary=rs)


def test_one_config_applies_its_limits_to_every_config_id():
    case_rows = [case("A", "c", 0.8, True, cid="other"), case("B", "c", 0.7, True, cid="other")]
    got = run_compare(case_rows, config=Config(compare=Compare(case_delta=0.2)))
    assert got["case_deltas"]["status"].to_list() == ["unchanged"]


# --- evaluator_deltas -------------------------------------------------------------------
def test_evaluator_deltas():
    rows = [
        # run, case, attempt, path, score
        ("A", "c", 0, "", 0.9),
        ("A", "c", 0, "acc", 0.6),
        ("A", "c", 1, "acc", 0.8),  # mean 0.7
        ("B", "c", 0, "acc", 0.9),
        ("A", "c", 0, "tone", 0.8),
        ("B", "c", 0, "tone", 0.82),
        ("A", "c", 0, "gate/x", None),
        ("B", "c", 0, "gate/x", 0.5),
        ("B", "c", 0, "fresh", 0.5),
        ("A", "c", 0, "old", 0.5),
        ("A", "c", 0, "drop", 1.0),
        ("B", "c", 0, "drop", 0.5),
    ]
    es = pl.LazyFrame(
        [
            {
                "config_id": CID,
                "run_id": r,
                "case_id": c,
                "attempt": a,
                "path": p,
                "score": s,
                "missing": s is None,
                "depth": p.count("/") + (p != ""),
            }
            for r, c, a, p, s in rows
        ],
        schema_overrides={"score": pl.Float64},
    )
    frame = run_compare(ONE_CASE, evaluator_scores=es)["evaluator_deltas"]
    assert frame.schema == EVALUATOR_DELTAS_SCHEMA
    got = {r["path"]: r for r in frame.iter_rows(named=True)}
    assert {p: r["status"] for p, r in got.items()} == {
        "acc": "improvement",
        "drop": "regression",
        "fresh": "new",
        "gate/x": "error",
        "old": "removed",
        "tone": "unchanged",
    }
    assert got["acc"]["baseline_score"] == pytest.approx(0.7)
    assert got["acc"]["score_delta"] == pytest.approx(0.2)


def test_evaluator_deltas_empty_without_evaluator_scores():
    frame = run_compare(ONE_CASE)["evaluator_deltas"]
    assert frame.height == 0 and frame.schema == EVALUATOR_DELTAS_SCHEMA


# --- errors -----------------------------------------------------------------------------
def test_unknown_run_id_lists_known_ids():
    with pytest.raises(UnknownRunError, match=r"'Z'.*known run ids: A, B") as info:
        run_compare(ONE_CASE, pairs=[("A", "Z")])
    assert isinstance(info.value, EvalframeError)


def test_run_summary_is_required():
    with pytest.raises(UsageError, match="run_summary"):
        compare(cases(*ONE_CASE), [("A", "B")], CFG)


def test_malformed_pair():
    with pytest.raises(UsageError, match="pair"):
        run_compare(ONE_CASE, pairs=[("A", "B", "C")])


def test_no_pairs_gives_empty_tables():
    out = run_compare(ONE_CASE, pairs=[])
    assert all(f.height == 0 for f in out.values())
    assert out["run_deltas"].schema == RUN_DELTAS_SCHEMA


# --- pairs_for --------------------------------------------------------------------------
RUNS = pl.DataFrame(
    {
        "run_id": ["b", "a", "c", "d"],
        "created_at": [
            dt.datetime(2024, 1, 2),
            dt.datetime(2024, 1, 3),
            None,
            dt.datetime(2024, 1, 1),
        ],
    }
)


def test_pairs_for_modes():
    assert pairs_for(RUNS, baseline="b", candidate="a") == [("b", "a")]
    assert pairs_for(RUNS, baseline="b") == [("b", "d"), ("b", "a"), ("b", "c")]
    assert pairs_for(RUNS, mode="consecutive") == [("d", "b"), ("b", "a"), ("a", "c")]
    assert pairs_for(RUNS, candidate="a") == [("b", "a")]
    assert pairs_for(RUNS) == [("a", "c")]


def test_pairs_for_without_created_at_orders_by_run_id():
    frame = pl.DataFrame({"run_id": ["r2", "r1", "r3", "r1"]})
    assert pairs_for(frame, mode="consecutive") == [("r1", "r2"), ("r2", "r3")]


def test_pairs_for_errors():
    with pytest.raises(UnknownRunError, match="known run ids: a, b, c, d"):
        pairs_for(RUNS, baseline="zz")
    with pytest.raises(UsageError, match="first run"):
        pairs_for(RUNS, candidate="d")
    with pytest.raises(UsageError, match="not both"):
        pairs_for(RUNS, baseline="a", mode="consecutive")
    with pytest.raises(UsageError, match="mode"):
        pairs_for(RUNS, mode="latest")
    with pytest.raises(UsageError, match="same run"):
        pairs_for(RUNS, baseline="a", candidate="a")
    with pytest.raises(UsageError, match="at least two runs"):
        pairs_for(pl.DataFrame({"run_id": ["only"]}))


def test_eager_inputs_are_accepted_and_output_is_lazy():
    out = compare(cases(*ONE_CASE).collect(), [("A", "B")], CFG, run_summary=DEFAULT_RUNS.collect())
    assert all(isinstance(f, pl.LazyFrame) for f in out.values())
    assert out["case_deltas"].collect()["status"].to_list() == ["unchanged"]


def test_run_without_cases_is_known_and_its_cases_are_removed():
    rs = runs(("A", 1.0, 0.8, 1.0, 1.0, 1.0), ("E", None, None, None, None, None))
    out = run_compare([case("A", "c", 0.9, True)], pairs=[("A", "E")], run_summary=rs)
    assert out["case_deltas"]["status"].to_list() == ["removed"]
    row = out["run_deltas"].row(0, named=True)
    assert (row["n_removed"], row["reasons"], row["regression_detected"]) == (1, [], False)
