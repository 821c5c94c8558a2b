"""Judges measured too (docs/judges.md): the labels table, judge_agreement,
agreement_curve and the prediction-powered pass rate, against the exact reference
(tests/reference_agreement.py) on hand-made cases and on random datasets and label
subsets (hypothesis, slow)."""

from __future__ import annotations

import contextlib
import json
import math
import warnings
from fractions import Fraction
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal
from typer.testing import CliRunner

import evalframe as ef
from evalframe._private import schema as S
from evalframe.cli import app
from tests import reference as ref
from tests import reference_agreement as refa
from tests.strategies import Scenario, frames, scenarios

with warnings.catch_warnings(), contextlib.suppress(ImportError):
    warnings.simplefilter("ignore", DeprecationWarning)
    import hypothesis.extra._patching  # noqa: F401

runner = CliRunner()

LABEL_SCHEMA = {
    S.RUN_ID: pl.String,
    S.CASE_ID: pl.String,
    S.ATTEMPT: pl.Int64,
    S.EVALUATOR: pl.String,
    S.RATER: pl.String,
    S.LABEL_PASSED: pl.Boolean,
    S.LABEL_SCORE: pl.Float64,
    S.SCALE_MAX: pl.Float64,
}


def _labels(rows: list[dict[str, Any]]) -> pl.DataFrame:
    full = [{c: r.get(c) for c in LABEL_SCHEMA} for r in rows]
    return pl.DataFrame(full, schema=LABEL_SCHEMA)


def _same(a: Any, b: Any) -> bool:
    """Engine value a vs reference value b: floats within 1e-9, everything else exact."""
    if a is None or b is None:
        return a is None and b is None
    if isinstance(b, bool) or isinstance(a, bool):
        return a == b and type(a) is type(b)
    if isinstance(b, (Fraction, float)) or isinstance(a, float):
        return math.isfinite(a) and abs(float(a) - float(b)) <= 1e-9
    return a == b


def _check(engine: pl.DataFrame, expected: list[dict], key: tuple[str, ...], what: str) -> None:
    columns = sorted({c for row in expected for c in row} - set(key))
    got = {tuple(r[k] for k in key): r for r in engine.iter_rows(named=True)}
    want = {tuple(r[k] for k in key): r for r in expected}
    assert len(got) == engine.height, f"{what}: duplicate keys"
    assert set(got) == set(want), f"{what}: keys {sorted(got, key=str)} != {sorted(want, key=str)}"
    bad = [
        f"{k} {c}: engine {got[k][c]!r} != reference {want[k][c]!r}"
        for k in want
        for c in columns
        if not _same(got[k][c], want[k][c])
    ]
    assert not bad, f"{what}:\n" + "\n".join(bad[:20])


def _curve_key(rows: list[dict]) -> list[dict]:
    return [{**r, "threshold": float(r["threshold"])} for r in rows]


def check_against_reference(sc: Scenario, labels: list[dict]) -> ef.JudgeAgreement:
    """judge_agreement, agreement_curve and the PPI columns equal the reference."""
    cfg = ef.config_from_dict(sc.config)
    ds = ef.Dataset.from_frames(**frames(sc), labels=_labels(labels))
    result = ef.judge_agreement(ds, cfg)
    ex = ref.execution_scores(sc.scores, sc.executions, sc.outcomes, cfg)
    rows = refa.labeled_rows(ex, sc.scores, labels, cfg)
    key = (S.RUN_ID, S.EVALUATOR, S.RATER)
    want = refa.judge_agreement(rows, cfg.judges)
    _check(result.judge_agreement, want, key, "judge_agreement")
    _check(
        result.agreement_curve.with_columns(pl.col(S.THRESHOLD)),
        _curve_key(refa.curve(rows)),
        (*key, S.THRESHOLD),
        "agreement_curve",
    )
    ppi = refa.ppi(ex, labels)
    runs = result.run_summary
    want = [
        {S.RUN_ID: r, **ppi.get(r, {S.N_LABELED: 0, **dict.fromkeys(S.PPI_COLUMNS[1:])})}
        for r in runs[S.RUN_ID].to_list()
    ]
    _check(runs.select(S.RUN_ID, *S.PPI_COLUMNS), want, (S.RUN_ID,), "run_summary PPI")
    return result


# --- hand-made cases -------------------------------------------------------------------
def _one_metric(scores: list[float], runs: list[str] | None = None) -> Scenario:
    """One evaluator q on 0–1, one execution per case c0, c1, ... (threshold 0.8)."""
    runs = runs or ["r"] * len(scores)
    rows = [
        {"run_id": r, "case_id": f"c{i}", "attempt": 0, "evaluator": "q", "score": s}
        for i, (r, s) in enumerate(zip(runs, scores, strict=True))
    ]
    return Scenario(
        config={},
        scores=rows,
        executions=None,
        outcomes=None,
        runs=None,
        scores_columns=("run_id", "case_id", "attempt", "evaluator", "score"),
        executions_columns=(),
    )


def test_kappa_of_a_textbook_table():
    """tp 20, fp 5, fn 10, tn 15: p_o = 0.7, p_e = 0.5, κ = 0.4; on the verdict and on
    the leaf (one metric: the same decisions)."""
    judge = [0.9] * 25 + [0.5] * 25
    human = [True] * 20 + [False] * 5 + [True] * 10 + [False] * 15
    sc = _one_metric(judge)
    labels = [
        {"run_id": "r", "case_id": f"c{i}", "evaluator": ev, "label_passed": h}
        for i, h in enumerate(human)
        for ev in (None, "q")
    ]
    result = check_against_reference(sc, labels)
    rows = result.judge_agreement.filter(pl.col(S.RATER).is_not_null())
    assert rows[S.KAPPA].to_list() == pytest.approx([0.4, 0.4])
    assert rows[S.SENSITIVITY].to_list() == pytest.approx([2 / 3, 2 / 3])
    assert rows[S.SPECIFICITY].to_list() == pytest.approx([0.75, 0.75])
    assert rows[S.AGREEMENT].to_list() == pytest.approx([0.7, 0.7])


def test_admission_reads_the_lower_bounds_and_the_threshold_keeps_the_false_pass_risk():
    """The textbook table (sensitivity 20/30, specificity 15/20): the Wilson lower bounds
    are 0.4878 and 0.5313, so the default limits (0.8, 100 labels) do not admit the judge;
    limits of 0.45 / 0.5 with 50 labels do. A judge scoring 40 label fails 0.1 and 10
    label passes 0.9 (one fail at 0.9): at 0.9 the false passes are 1 of 40, upper bound
    0.1288; at 1.0 none — so with max_false_pass 0.15 the threshold is 0.9, with 0.1
    it is 1.0, and with 0.01 there is none."""
    judge = [0.9] * 25 + [0.5] * 25
    human = [True] * 20 + [False] * 5 + [True] * 10 + [False] * 15
    sc = _one_metric(judge)
    labels = [
        {"run_id": "r", "case_id": f"c{i}", "evaluator": ev, "label_passed": h}
        for i, h in enumerate(human)
        for ev in (None, "q")
    ]
    rows = check_against_reference(sc, labels).judge_agreement.filter(pl.col(S.RATER).is_not_null())
    assert rows[S.SENSITIVITY_LOW].to_list() == pytest.approx([0.487797, 0.487797], abs=1e-6)
    assert rows[S.SPECIFICITY_LOW].to_list() == pytest.approx([0.531295, 0.531295], abs=1e-6)
    assert rows[S.ADMITTED].to_list() == [False, False]
    lenient = {"min_labeled": 50, "min_sensitivity": 0.45, "min_specificity": 0.5}
    sc.config = {"judges": lenient}
    rows = check_against_reference(sc, labels).judge_agreement
    assert rows.filter(pl.col(S.RATER).is_not_null())[S.ADMITTED].to_list() == [True, True]
    assert rows.filter(pl.col(S.RATER).is_null())[S.ADMITTED].to_list() == [None, None]  # α rows
    sc.config = {"judges": {**lenient, "min_kappa": 0.41}}
    rows = check_against_reference(sc, labels).judge_agreement
    assert rows.filter(pl.col(S.RATER).is_not_null())[S.ADMITTED].to_list() == [False, False]

    spread = _one_metric([0.1] * 39 + [0.9] * 11 + [1.0])
    human = [False] * 39 + [False] + [True] * 10 + [True]
    labels = [
        {"run_id": "r", "case_id": f"c{i}", "evaluator": "q", "label_passed": h}
        for i, h in enumerate(human)
    ]
    for limit, want in ((0.15, 0.9), (0.1, 1.0), (0.01, None)):
        spread.config = {"judges": {"max_false_pass": limit}}
        leaf = check_against_reference(spread, labels).judge_agreement.filter(
            pl.col(S.EVALUATOR) == "q", pl.col(S.RATER).is_not_null()
        )
        assert leaf[S.RECOMMENDED_THRESHOLD].to_list() == [want]
        verdict = check_against_reference(spread, labels).judge_agreement.filter(
            pl.col(S.EVALUATOR).is_null()
        )
        assert verdict[S.RECOMMENDED_THRESHOLD].to_list() in ([], [None])


def test_kappa_is_null_when_p_e_is_1_and_alpha_is_4_9():
    """Every decision and label pass: p_e = 1, κ null, specificity null. Two raters on
    three items ([T, T], [F, F], [T, F]): α = 1 − (n − 1)·o_TF/(n_T·n_F) = 4/9."""
    sc = _one_metric([0.9, 0.9, 0.9])
    labels = [
        {"run_id": "r", "case_id": f"c{i}", "rater": "a", "label_passed": True} for i in range(3)
    ] + [
        {"run_id": "r", "case_id": "c0", "rater": "b", "label_passed": True},
        {"run_id": "r", "case_id": "c1", "rater": "b", "label_passed": False},
        {"run_id": "r", "case_id": "c2", "rater": "b", "label_passed": False},
    ]
    # rater a: [T, T, T]; b: [T, F, F] -> items [T, T], [T, F], [T, F]
    result = check_against_reference(sc, labels)
    a = result.judge_agreement.filter(pl.col(S.RATER) == "a").row(0, named=True)
    assert a[S.KAPPA] is None and a[S.SPECIFICITY] is None and a[S.SENSITIVITY] == 1.0
    alpha = result.judge_agreement.filter(pl.col(S.RATER).is_null())[S.KRIPPENDORFF_ALPHA]
    # values: T×4, F×2; o_TF = 2 (two items with one of each); α = 1 − 5·2/(4·2) = −1/4
    assert alpha.to_list() == pytest.approx([-0.25])
    assert refa.krippendorff_alpha([[True, True], [False, False], [True, False]]) == Fraction(4, 9)


def test_curve_and_best_threshold():
    """Scores 0.2 (label fail), 0.6 (pass), 1.0 (fail): at 0.6 tp 1 fp 1 tn 1 → κ 0.4,
    the best; at 0.2 κ 0; at 1.0 κ −0.5."""
    sc = _one_metric([0.2, 0.6, 1.0])
    labels = [
        {"run_id": "r", "case_id": f"c{i}", "evaluator": "q", "label_passed": h}
        for i, h in enumerate([False, True, False])
    ]
    result = check_against_reference(sc, labels)
    curve = result.agreement_curve
    assert curve[S.THRESHOLD].to_list() == [0.2, 0.6, 1.0]
    assert curve[S.KAPPA].to_list() == pytest.approx([0.0, 0.4, -0.5])
    assert result.judge_agreement[S.BEST_KAPPA_THRESHOLD].to_list()[0] == 0.6


def test_curve_thresholds_meet_within_eps():
    """A judge score a hair below a threshold (within EPS) meets it (docs/scoring.md#boundaries)."""
    sc = _one_metric([0.7999999999999999, 0.8, 0.5])
    labels = [
        {"run_id": "r", "case_id": f"c{i}", "evaluator": "q", "label_passed": h}
        for i, h in enumerate([True, True, False])
    ]
    result = check_against_reference(sc, labels)
    at = result.agreement_curve.filter(pl.col(S.THRESHOLD) == 0.8).row(0, named=True)
    assert (at[S.TP], at[S.FP], at[S.FN], at[S.TN]) == (2, 0, 0, 1)


def test_ppi_by_hand():
    """Four judged executions, J = 1, 0, 0, 1 (scores 0.9, 0.5, 0.5, 0.9); two labeled
    with H = 1 (a judge fail a person passes) and H = 1 (agreeing): mean_U(J) = 1/2,
    mean_L(H − J) = 1/2 → 1.0; se = sqrt(var_U/2 + var_L/2) = sqrt(1/4 + 1/4)."""
    sc = _one_metric([0.9, 0.5, 0.5, 0.9])
    labels = [
        {"run_id": "r", "case_id": "c1", "label_passed": True},
        {"run_id": "r", "case_id": "c3", "label_passed": True},
    ]
    result = check_against_reference(sc, labels)
    row = result.run_summary.row(0, named=True)
    assert row[S.PASS_RATE] == 0.5 and row[S.N_LABELED] == 2
    assert row[S.PPI_PASS_RATE] == pytest.approx(1.0)
    assert row[S.PPI_PASS_RATE_SE] == pytest.approx(math.sqrt(0.5))


def test_ppi_edge_cases():
    """n = 1: estimate, no se; every execution labeled (N_u = 0): mean_L(H) and
    sd_L(H)/√n; two raters on one execution: H is their mean; a run without labels:
    n_labeled 0, the rest null."""
    sc = _one_metric([0.9, 0.5, 0.9, 0.5, 0.9], runs=["r1", "r1", "r2", "r2", "r3"])
    labels = [
        {"run_id": "r1", "case_id": "c0", "label_passed": False},
        {"run_id": "r2", "case_id": "c2", "label_passed": True, "rater": "a"},
        {"run_id": "r2", "case_id": "c2", "label_passed": False, "rater": "b"},
        {"run_id": "r2", "case_id": "c3", "label_passed": False},
    ]
    result = check_against_reference(sc, labels)
    by_run = {r[S.RUN_ID]: r for r in result.run_summary.iter_rows(named=True)}
    # mean_U(J) = 0 (c1 fails), mean_L(H − J) = 0 − 1: −1, outside 0–1 (clipped in display)
    assert by_run["r1"][S.PPI_PASS_RATE] == pytest.approx(-1.0)
    assert by_run["r1"][S.PPI_PASS_RATE_SE] is None
    assert by_run["r2"][S.PPI_PASS_RATE] == pytest.approx(0.25)  # mean(1/2, 0)
    assert by_run["r2"][S.PPI_PASS_RATE_SE] == pytest.approx(math.sqrt(0.125 / 2))
    assert by_run["r3"][S.N_LABELED] == 0 and by_run["r3"][S.PPI_PASS_RATE] is None


def test_labels_outside_the_tree_and_unjudged_executions_are_left_out():
    """A composite node, an evaluator outside the listed tree, an errored execution and a
    leaf the judge did not score get no row; the first two are counted."""
    sc = Scenario(
        config={
            "evaluators": {
                "g": {"aggregator": "minimum", "children": {"a": {}, "b": {"min_score": 0.5}}}
            }
        },
        scores=[
            {"run_id": "r", "case_id": "c0", "attempt": 0, "evaluator": "a", "score": 0.9},
            {"run_id": "r", "case_id": "c0", "attempt": 0, "evaluator": "b", "score": 0.6},
            {"run_id": "r", "case_id": "c0", "attempt": 0, "evaluator": "x", "score": 0.6},
            {"run_id": "r", "case_id": "c1", "attempt": 0, "evaluator": "a", "score": 0.9},
        ],
        executions=[
            {"run_id": "r", "case_id": "c0", "attempt": 0, "status": "ok"},
            {"run_id": "r", "case_id": "c1", "attempt": 0, "status": "error"},
        ],
        outcomes=None,
        runs=None,
        scores_columns=("run_id", "case_id", "attempt", "evaluator", "score"),
        executions_columns=("run_id", "case_id", "attempt", "status"),
    )
    labels = [
        {"run_id": "r", "case_id": "c0", "evaluator": ev, "label_passed": True}
        for ev in ("g", "x", "b", "a")
    ] + [{"run_id": "r", "case_id": "c1", "evaluator": "a", "label_passed": True}]
    result = check_against_reference(sc, labels)
    got = result.judge_agreement.filter(pl.col(S.RATER).is_not_null())
    assert sorted(got[S.EVALUATOR].to_list()) == ["a", "b"]
    assert result.ignored_labels == 2
    # b passes on its own min_score 0.5, below the execution threshold 0.8
    assert got.filter(pl.col(S.EVALUATOR) == "b")[S.TP].item() == 1


def test_label_score_normalization_and_errors():
    """label_score on the judge's scale (5) or the row's own; MAE and bias on 0–1."""
    sc = Scenario(
        config={},
        scores=[
            {"run_id": "r", "case_id": "c0", "evaluator": "q", "score": 4.0, "scale_max": 5.0},
            {"run_id": "r", "case_id": "c1", "evaluator": "q", "score": 5.0, "scale_max": 5.0},
        ],
        executions=None,
        outcomes=None,
        runs=None,
        scores_columns=("run_id", "case_id", "evaluator", "score", "scale_max"),
        executions_columns=(),
    )
    labels = [
        {
            "run_id": "r",
            "case_id": "c0",
            "evaluator": "q",
            "label_passed": True,
            "label_score": 3.0,
        },
        {
            "run_id": "r",
            "case_id": "c1",
            "evaluator": "q",
            "label_passed": True,
            "label_score": 0.5,
            "scale_max": 1.0,
        },
    ]
    result = check_against_reference(sc, labels)
    row = result.judge_agreement.filter(pl.col(S.RATER).is_not_null()).row(0, named=True)
    assert row[S.SCORE_MAE] == pytest.approx((0.2 + 0.5) / 2)
    assert row[S.SCORE_BIAS] == pytest.approx((0.2 + 0.5) / 2)


def test_bad_labels_are_input_errors_with_examples():
    scores = pl.DataFrame(
        {"run_id": ["r"], "case_id": ["c0"], "evaluator": ["q"], "score": [1.0]},
    )
    bad = _labels(
        [
            {"run_id": "r", "case_id": "c0", "evaluator": "q", "label_passed": True},
            {"run_id": "r", "case_id": "c0", "evaluator": "q", "label_passed": False},
            {"run_id": "r", "case_id": "nope", "label_passed": True},
            {"run_id": "r", "case_id": "c0", "label_score": 0.5, "rater": "v"},
            {"run_id": "r", "case_id": "c0", "evaluator": "z", "label_score": 0.5, "rater": "w"},
            {"run_id": "r", "case_id": "c0", "evaluator": "q", "label_score": 2.0, "rater": "x"},
            {"run_id": "r", "case_id": "c0", "evaluator": "q", "label_score": -1.0, "rater": "y"},
            {"run_id": None, "case_id": "c0", "label_passed": True},
        ]
    )
    with pytest.raises(ef.ValidationError) as info:
        ef.Dataset.from_frames(scores, labels=bad)
    messages = {p.message.split(";")[0].split(" (")[0] for p in info.value.problems}
    assert messages == {
        "key column is null",
        "label_score is negative",
        "label_score on an execution verdict row",
        "duplicate key",
        "execution is not in the dataset",
        "label_score has no scale: no scale_max on the label row and no judge score row "
        "for this execution × evaluator",
        "label_score is above its scale_max",
    }
    assert all(p.table == S.LABELS for p in info.value.problems)
    dup = next(p for p in info.value.problems if p.message.startswith("duplicate"))
    assert dup.examples == ("run_id=r case_id=c0 attempt=0 evaluator=q rater=human",)
    wrong = pl.DataFrame({"run_id": ["r"], "case_id": ["c0"], "label_passed": ["yes"]})
    with pytest.raises(ef.ValidationError, match="label_passed: wrong type"):
        ef.Dataset.from_frames(scores, labels=wrong)


# --- score, the CLI and the demo ----------------------------------------------------------
@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return ef.write_demo(tmp_path_factory.mktemp("agree") / "data", n_cases=60)


def test_demo_labels_a_random_tenth_and_a_lenient_judge(demo: Path):
    labels = pl.read_parquet(demo / "labels.parquet")
    executions = pl.read_parquet(demo / "executions.parquet")
    labeled = labels.select(S.EXECUTION_KEY).unique().height
    assert 0.05 < labeled / executions.height < 0.2
    result = ef.judge_agreement(demo)
    rows = result.judge_agreement.filter(pl.col(S.RATER) == "human")
    bias = rows.group_by(S.EVALUATOR).agg(pl.col(S.SCORE_BIAS).mean())
    worst = bias.sort(S.SCORE_BIAS, descending=True, nulls_last=True).row(0, named=True)
    assert worst[S.EVALUATOR] == "grounding_fidelity" and worst[S.SCORE_BIAS] > 0.1
    alpha = result.judge_agreement.filter(pl.col(S.RATER).is_null() & pl.col(S.EVALUATOR).is_null())
    assert alpha[S.KRIPPENDORFF_ALPHA].is_not_null().any()


@pytest.mark.slow
def test_score_writes_the_label_tables_and_the_ppi_columns(demo: Path):
    """With labels: judge_agreement and agreement_curve, run_summary with the PPI columns
    after its own (every engine that writes tables gets them from the same module);
    without: run_summary exactly as before, no new tables."""
    with_labels = ef.score_tables(demo)
    assert {S.JUDGE_AGREEMENT, S.AGREEMENT_CURVE} <= set(with_labels)
    rs = with_labels[S.RUN_SUMMARY]
    assert rs.columns[: len(S.RUN_COLUMNS)] == S.RUN_COLUMNS
    assert all(c in rs.columns for c in S.PPI_COLUMNS)
    agree = ef.judge_agreement(demo)
    assert agree.judge_agreement.equals(with_labels[S.JUDGE_AGREEMENT])
    assert agree.agreement_curve.equals(with_labels[S.AGREEMENT_CURVE])
    assert agree.run_summary.select(S.PPI_COLUMNS).equals(rs.select(S.PPI_COLUMNS))
    duck = ef.score_tables(demo, engine="duckdb")
    assert duck[S.JUDGE_AGREEMENT].equals(with_labels[S.JUDGE_AGREEMENT])

    plain = demo.parent / "plain"
    plain.mkdir()
    for name in S.INPUT_TABLES:
        (plain / f"{name}.parquet").write_bytes((demo / f"{name}.parquet").read_bytes())
    without = ef.score_tables(plain)
    assert set(without) == {
        S.EXECUTION_SCORES,
        S.CASE_SUMMARY,
        S.RUN_SUMMARY,
        S.VARIANCE_COMPONENTS,
    }
    # two scoring runs: floating-point means may differ in the last bit (thread order)
    assert_frame_equal(without[S.RUN_SUMMARY], rs.drop(S.PPI_COLUMNS), rel_tol=1e-12)
    with pytest.raises(ef.UsageError, match="no labels table"):
        ef.judge_agreement(plain)


def test_score_refuses_bad_labels_and_writes_nothing(demo: Path, tmp_path: Path):
    data = tmp_path / "data"
    data.mkdir()
    for name in S.INPUT_TABLES:
        (data / f"{name}.parquet").write_bytes((demo / f"{name}.parquet").read_bytes())
    _labels([{"run_id": "ghost", "case_id": "c", "label_passed": True}]).write_parquet(
        data / "labels.parquet"
    )
    out = tmp_path / "out"
    result = runner.invoke(app, ["score", str(data), "-o", str(out)])
    assert result.exit_code == 2
    assert "labels: execution is not in the dataset" in result.output
    assert "run_id=ghost" in result.output
    assert not out.exists() or not any(out.iterdir())
    result = runner.invoke(app, ["agree", str(data)])
    assert result.exit_code == 2 and "run_id=ghost" in result.output


@pytest.mark.slow
def test_agree_command_prints_and_json(demo: Path):
    result = runner.invoke(app, ["agree", str(demo)])
    assert result.exit_code == 0, result.output
    assert "grounding_fidelity" in result.output and "corrected (PPI)" in result.output
    result = runner.invoke(app, ["agree", str(demo), "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    assert set(payload) == {
        "config_id",
        "judge_agreement",
        "agreement_curve",
        "runs",
        "ignored_labels",
    }
    assert {r[S.RUN_ID] for r in payload["runs"]} == set(
        pl.read_parquet(demo / "runs.parquet")[S.RUN_ID]
    )


def test_agree_check_exits_1_naming_each_judge_that_is_not_admitted(tmp_path: Path):
    """Ten labeled executions, all agreeing: admitted with min_labeled 10 and lenient
    bounds (exit 0), refused with the default 100 labels (exit 1, each row named)."""
    sc = _one_metric([0.9] * 5 + [0.5] * 5)
    data = tmp_path / "data"
    data.mkdir()
    for name, frame in frames(sc).items():
        if frame is not None:
            frame.write_parquet(data / f"{name}.parquet")
    _labels(
        [{"run_id": "r", "case_id": f"c{i}", "label_passed": i < 5} for i in range(10)]
    ).write_parquet(data / "labels.parquet")
    refused = runner.invoke(app, ["agree", str(data), "--check"])
    assert refused.exit_code == 1
    assert "not admitted: (verdict) rated by human in run r" in refused.output
    lenient = tmp_path / "judges.yaml"
    lenient.write_text("judges: {min_labeled: 10, min_sensitivity: 0.5, min_specificity: 0.5}\n")
    admitted = runner.invoke(app, ["agree", str(data), "--check", "-c", str(lenient)])
    assert admitted.exit_code == 0, admitted.output
    assert "not admitted" not in admitted.output


def test_agree_prints_ids_literally(tmp_path: Path):
    sc = _one_metric([0.9, 0.5], runs=["[bold]r[/bold]", "[bold]r[/bold]"])
    data = tmp_path / "data"
    data.mkdir()
    for name, frame in frames(sc).items():
        if frame is not None:
            frame.write_parquet(data / f"{name}.parquet")
    _labels([{"run_id": "[bold]r[/bold]", "case_id": "c0", "label_passed": True}]).write_parquet(
        data / "labels.parquet"
    )
    result = runner.invoke(app, ["agree", str(data)])
    assert result.exit_code == 0, result.output
    assert "[bold]r[/bold]" in result.output


# --- random datasets and label subsets (slow) ---------------------------------------------
RATERS = ("h1", "h2", "h3")


@st.composite
def labeled_scenarios(draw) -> tuple[Scenario, list[dict]]:
    """A random dataset (tests/strategies.py) and a random labels table over its
    executions: none, one, every execution, labels that copy the judge, or random ones;
    one to three raters; verdict and evaluator rows, label scores on the judge's scale."""
    sc = draw(scenarios())
    keys = sorted(
        {ref._key(r) for r in (sc.executions if sc.executions is not None else sc.scores)}
    )
    judge = {(*ref._key(r), r["evaluator"]): r for r in sc.scores}
    evaluators = sorted({r["evaluator"] for r in sc.scores} | {"zz"})
    mode = draw(st.sampled_from(("none", "one", "all", "agree", "random", "random")))
    if not keys:
        mode = "none"
    if mode == "none":
        chosen: list[tuple] = []
    elif mode == "one":
        chosen = [draw(st.sampled_from(keys))]
    elif mode in ("all", "agree"):
        chosen = keys
    else:
        chosen = draw(st.lists(st.sampled_from(keys), unique=True, max_size=len(keys)))
    raters = RATERS[: draw(st.integers(1, 3))]
    cfg = ef.config_from_dict(sc.config)
    ex = {ref._key(r): r for r in ref.execution_scores(sc.scores, sc.executions, sc.outcomes, cfg)}
    labels: list[dict] = []
    for k in chosen:
        for rater in raters:
            if rater != raters[0] and not draw(st.booleans()):
                continue
            targets = [None] + [e for e in evaluators if draw(st.integers(0, 2)) == 0]
            for ev in targets:
                row: dict[str, Any] = {
                    "run_id": k[0],
                    "case_id": k[1],
                    "attempt": k[2],
                    "evaluator": ev,
                    "rater": rater,
                }
                if mode == "agree" and ev is None:
                    row["label_passed"] = ex[k]["passed"]
                else:
                    row["label_passed"] = draw(st.sampled_from((True, False, None)))
                j = judge.get((*k, ev)) if ev is not None else None
                if j is not None and draw(st.booleans()):
                    scale = j.get("scale_max") or 1.0
                    row["label_score"] = draw(st.sampled_from((0.0, 0.5, 1.0))) * scale
                labels.append(row)
    return sc, labels


@pytest.mark.slow
@settings(
    max_examples=50,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(labeled_scenarios())
def test_engine_equals_the_reference_on_random_label_subsets(case):
    sc, labels = case
    check_against_reference(sc, labels)


@pytest.mark.slow
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(labeled_scenarios())
def test_engine_equals_the_reference_a_few_random_cases(case):
    """The fast lane's share of the random cases above (the slow test runs 50)."""
    sc, labels = case
    check_against_reference(sc, labels)


def test_a_lower_is_better_leaf_is_compared_on_the_normalized_scale(tmp_path: Path):
    """docs/judges.md: higher_is_better applies to the judge and the label alike. A
    hallucination rate of 0.2 judged (s = 0.8, passes 0.7) against a human 0.1 (s = 0.9):
    agreement, and an MAE of 0.1, not of the raw rates read as higher-is-better."""
    ds = tmp_path / "ds"
    ds.mkdir()
    pl.DataFrame(
        {S.RUN_ID: ["r"] * 2, S.CASE_ID: ["a", "b"], S.EVALUATOR: ["hallucination"] * 2,
         S.SCORE: [0.2, 0.6]}
    ).write_parquet(ds / "scores.parquet")  # fmt: skip
    pl.DataFrame(
        {S.RUN_ID: ["r"] * 2, S.CASE_ID: ["a", "b"], S.EVALUATOR: ["hallucination"] * 2,
         S.RATER: ["human"] * 2, S.LABEL_SCORE: [0.1, 0.7],
         S.LABEL_PASSED: [True, False]}
    ).write_parquet(ds / "labels.parquet")  # fmt: skip
    cfg = ef.config_from_dict(
        {"threshold": 0.7, "evaluators": {"hallucination": {"higher_is_better": False}}}
    )
    got = ef.judge_agreement(ds, cfg).judge_agreement.filter(
        (pl.col(S.EVALUATOR) == "hallucination") & (pl.col(S.RATER) == "human")
    )
    row = got.row(0, named=True)
    assert (row["tp"], row["tn"], row["fp"], row["fn"]) == (1, 1, 0, 0)  # judge: 0.8, 0.4
    assert row[S.SCORE_MAE] == pytest.approx(0.1)  # |0.8 - 0.9|, |0.4 - 0.3|
    assert row[S.SCORE_BIAS] == pytest.approx(0.0)  # +0.1 - 0.1 (judge minus human) / 2


@pytest.mark.slow
def test_decision_reasons_name_the_judges_not_admitted_for_the_candidate(tmp_path, engine):
    """Runs a → b, ten cases; b's executions labeled for q and the verdict. With the default
    100 labels neither judge is admitted: decision_reasons gain "q" and "verdict" after the
    decision's own parts, the decision itself unchanged; with lenient limits, nothing."""
    data = tmp_path / "data"
    data.mkdir()
    pl.DataFrame(
        {
            "run_id": ["a"] * 10 + ["b"] * 10,
            "case_id": [f"c{i}" for i in range(10)] * 2,
            "evaluator": "q",
            "score": [0.9] * 10 + [0.9] * 5 + [0.5] * 5,
        }
    ).write_parquet(data / "scores.parquet")
    labels = [
        {"run_id": "b", "case_id": f"c{i}", "evaluator": ev, "label_passed": i < 5}
        for i in range(10)
        for ev in (None, "q")
    ]
    _labels(labels).write_parquet(data / "labels.parquet")
    refused = ef.compare_tables(data, engine=engine)[S.RUN_DELTAS]
    (reasons,) = refused[S.DECISION_REASONS].to_list()
    assert reasons[-2:] == ["q", "verdict"]
    assert [r for r in reasons if r in S.DECISION_PARTS] == reasons[:-2]
    lenient = ef.config_from_dict(
        {"judges": {"min_labeled": 10, "min_sensitivity": 0.5, "min_specificity": 0.5}}
    )
    admitted = ef.compare_tables(data, lenient, engine=engine)[S.RUN_DELTAS]
    assert admitted[S.DECISION_REASONS].to_list() == [reasons[:-2]]
    assert admitted[S.DECISION].to_list() == refused[S.DECISION].to_list()


def test_judge_only_and_corrected_changes_that_disagree_are_named():
    run_summary = pl.DataFrame(
        {
            "config_id": "k",
            "run_id": ["a", "b", "c", "d", "e"],
            "ppi_pass_rate": [0.5, 0.55, 0.3, None, 0.25],
            "ppi_pass_rate_se": [0.1, 0.1, 0.01, None, 0.01],
        }
    )
    run_deltas = pl.DataFrame(
        {
            "config_id": "k",
            "baseline_run_id": ["a", "b", "c", "c"],
            "candidate_run_id": ["b", "c", "d", "e"],
            "paired_pass_delta": [0.2, -0.1, 0.0, 0.05],
            "paired_pass_delta_ci_low": [0.1, -0.2, -0.1, -0.05],
            "paired_pass_delta_ci_high": [0.3, -0.01, 0.1, 0.15],
        }
    )
    got = ef.ppi_disagreements(run_summary, run_deltas)
    # a → b: judge +0.2 significant, corrected +0.05 ± 0.277 not: disagree in significance;
    # b → c: both fall significantly (corrected -0.25 ± 0.197): agree; c → d: d has no
    # corrected rate; c → e: judge +0.05 not significant, corrected -0.05 ± 0.028 falls
    assert got.select("baseline_run_id", "candidate_run_id").rows() == [("a", "b"), ("c", "e")]
    assert got["judge_significant"].to_list() == [True, False]
    assert got["corrected_significant"].to_list() == [False, True]
    assert got["corrected_delta"].to_list() == pytest.approx([0.05, -0.05])
    assert ef.ppi_disagreements(run_summary.drop("ppi_pass_rate"), run_deltas).is_empty()
