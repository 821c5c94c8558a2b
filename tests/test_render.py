"""Terminal rendering (evalframe/cli/): golden output, ids never cut
ambiguously, unscored runs, the ± footnote, the evaluator behind a regression, --top,
progress displays, JSON values."""

from __future__ import annotations

import io
import math
import re
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from pathlib import Path

import polars as pl
import pytest
from rich.console import Console

from evalframe._private import schema as S
from evalframe._private.config import Config
from evalframe._private.data.dataset import Dataset
from evalframe._private.pipeline.compare import compare_tables
from evalframe._private.pipeline.score import score_tables
from evalframe.cli._render import (
    UNSCORED_FOOTNOTE,
    iso_duration,
    json_value,
    prose,
    run_table,
    steps,
)
from evalframe.cli.compare import (
    admission_note,
    compare_report,
    evaluator_rollup,
    listed,
    power_notes,
    slice_notes,
    worst_evaluators,
)
from evalframe.cli.sweep import sweep_progress
from evalframe.format import INTERVALS_NOTE as SE_FOOTNOTE
from evalframe.format import case_counts, p_value, pass_rate_delta, run_rate

GOLDEN = Path(__file__).parent / "golden"


def _text(*renderables, width: int = 160) -> str:
    console = Console(record=True, width=width, color_system=None, file=io.StringIO())
    for r in renderables:
        console.print(r)
    return console.export_text()


def _golden(name: str) -> pl.DataFrame:
    return pl.read_parquet(GOLDEN / f"{name}.parquet")


# --- golden output (tests/golden/regenerate.py writes inputs and expected text) -----------


def test_run_table_golden():
    assert _text(run_table(_golden(S.RUN_SUMMARY))) == (GOLDEN / "run_table.txt").read_text()


def test_compare_report_golden():
    parts = compare_report(
        _golden(S.RUN_DELTAS),
        _golden(S.CASE_DELTAS),
        limits=Config().compare,
        evaluator_deltas=_golden(S.EVALUATOR_DELTAS),
    )
    assert _text(*parts) == (GOLDEN / "compare_report.txt").read_text()


def test_long_lines_never_break_inside_numbers_at_80_columns():
    """The consoles print with soft_wrap, so a terminal would break a long line at column 80
    wherever it falls (`McNemar p = 7` / `.523e-37`): the compare lines wrap between words,
    and a p-value stays with its name."""
    parts = compare_report(
        _golden(S.RUN_DELTAS),
        _golden(S.CASE_DELTAS),
        limits=Config().compare,
        evaluator_deltas=_golden(S.EVALUATOR_DELTAS),
    )
    console = Console(record=True, width=80, color_system=None, soft_wrap=True, file=io.StringIO())
    for part in parts:
        console.print(part)
    text = console.export_text()
    lines = [line for line in text.splitlines() if "McNemar" in line or line.startswith("cases")]
    assert lines and max(len(line) for line in lines) <= 80, lines
    assert "McNemar p = 7.451e-09 (28 pass→fail, 0 fail→pass)" in text
    assert re.search(r"95% CI \[-0\.165, -0\.121\]", text)
    # every number of the golden lines comes back whole
    golden = (GOLDEN / "compare_report.txt").read_text()
    numbers = re.compile(r"[-+]?\d[\d.,]*(?:e[-+]\d+)?")
    for line in golden.splitlines():
        if line.startswith(("cases", "paired")):
            for n in numbers.findall(line):
                assert n in text, n


def test_prose_wraps_between_words_only():
    console = Console(record=True, width=20, color_system=None, soft_wrap=True, file=io.StringIO())
    console.print(prose("alpha beta gamma 7.523e-37 delta epsilon zeta"))
    lines = [line.rstrip() for line in console.export_text().splitlines()]
    assert lines == ["alpha beta gamma", "7.523e-37 delta", "epsilon zeta"]


def test_case_counts_reconcile_with_mcnemar_flips():
    """ "N regression" beside "M pass→fail": every regression and improvement count is split
    into flips and score-only cases, and the flips of every status add up to McNemar's."""
    run_deltas, case_deltas = _golden(S.RUN_DELTAS), _golden(S.CASE_DELTAS)
    for r in run_deltas.iter_rows(named=True):
        pair = case_deltas.filter(
            (pl.col("baseline_run_id") == r["baseline_run_id"])
            & (pl.col("candidate_run_id") == r["candidate_run_id"])
        )
        line = case_counts(r, pair, Config().compare)
        for status, arrow, n_flips in (
            ("regression", "pass→fail", r["n_passed_to_failed"]),
            ("improvement", "fail→pass", r["n_failed_to_passed"]),
        ):
            n = r[f"n_{status}"]
            if n:
                split = re.search(rf"{n} {status} = (\d+) {arrow} \+ (\d+) score-only", line)
                assert split, line
                assert int(split[1]) + int(split[2]) == n
            flips = sum(int(x) for x in re.findall(rf"(\d+) {arrow}", line))
            assert flips == n_flips, (line, n_flips)
    # the golden pairs hold both kinds, so the split is not vacuous
    assert (
        "4 regression = 0 pass→fail + 4 score-only" in (GOLDEN / "compare_report.txt").read_text()
    )


# --- ids ------------------------------------------------------------------------------


def _first_column(text: str) -> str:
    """The body cells of a table's first column, joined (folded ids come back whole)."""
    cells = [
        line.split("│")[1].strip()
        for line in text.splitlines()
        if line.startswith("│") and line.count("│") > 2
    ]
    return "".join(cells)


def test_run_ids_sharing_a_long_prefix_are_never_cut_with_an_ellipsis():
    ids = ["2026-10-01-support-agent-experiment-alpha", "2026-10-01-support-agent-experiment-beta"]
    summary = _golden(S.RUN_SUMMARY).head(2).with_columns(pl.Series(S.RUN_ID, ids))
    for width in (60, 80, 120):
        text = _text(run_table(summary), width=width)
        # other columns may be squeezed at 60; the ids come back whole, in order
        assert _first_column(text) == "".join(ids), width
    assert "…" not in _text(run_table(summary), width=160)


@pytest.mark.parametrize("width", [60, 80, 100, 120])
def test_a_narrow_run_table_leaves_out_columns_and_cuts_no_cell(width):
    summary = _golden(S.RUN_SUMMARY)
    text = _text(run_table(summary), width=width)
    lines = text.splitlines()
    assert max(len(line.rstrip()) for line in lines) <= width
    assert "…" not in text
    body = [line for line in lines if line.startswith("│")]
    assert [line.split("│")[1].strip() for line in body] == summary[S.RUN_ID].to_list()
    for r in summary.iter_rows(named=True):  # the pass rate with its interval: always whole
        assert _wilson_cell(r) in text
    # the least important columns go first, and a line names them
    dropped = re.search(
        r"not shown on this narrow terminal: (.*?) \(widen it", " ".join(text.split())
    )
    assert dropped, text
    assert "cost" in dropped.group(1).split(", ")
    header = " ".join(line for line in lines if line.startswith("┃"))
    assert "cost" not in header and "pass" in header
    assert SE_FOOTNOTE.split(";")[0] in " ".join(text.split())


def test_case_ids_in_the_compare_report_fold_instead_of_being_cut():
    cases = _golden(S.CASE_DELTAS).with_columns(
        ("a-very-long-shared-case-id-prefix-" + pl.col(S.CASE_ID)).alias(S.CASE_ID)
    )
    text = _text(*compare_report(_golden(S.RUN_DELTAS), cases, top=3), width=50)
    assert "…" not in text
    assert "0002" in text


# --- unscored runs and the ± footnote ------------------------------------------------


def _unscored_summary() -> pl.DataFrame:
    """A real run_summary: run `good` is scored, run `blank` has only null scores."""
    scores = pl.DataFrame(
        {
            S.RUN_ID: ["good", "good", "blank", "blank"],
            S.CASE_ID: ["c1", "c2", "c1", "c2"],
            S.EVALUATOR: "m",
            S.SCORE: [0.9, 0.5, None, None],
        },
        schema_overrides={S.SCORE: pl.Float64},
    )
    return score_tables(Dataset.from_frames(scores), Config())[S.RUN_SUMMARY].sort(S.RUN_ID)


def test_an_unscored_run_reads_a_dash_not_zero_percent():
    summary = _unscored_summary()
    blank = summary.filter(pl.col(S.RUN_ID) == "blank").row(0, named=True)
    assert blank[S.PASS_RATE] == 0.0 and blank[S.MEAN_SCORE] is None  # what the table holds
    text = _text(run_table(summary))
    rows = {line.split("│")[1].strip(): line for line in text.splitlines() if "│" in line}
    assert "0.0%" not in rows["blank"] and "[" not in rows["blank"]
    assert rows["blank"].split("│")[3].strip() == "—"  # pass rate
    good = summary.filter(pl.col(S.RUN_ID) == "good").row(0, named=True)
    assert _wilson_cell(good) in rows["good"]
    assert UNSCORED_FOOTNOTE in text


def _unscored_pair() -> dict[str, pl.DataFrame]:
    """Real compare tables: run r1 scores 0.9 on 4 cases, run r2 has only null scores."""
    scores = pl.DataFrame(
        {
            S.RUN_ID: ["r1"] * 4 + ["r2"] * 4,
            S.CASE_ID: ["c1", "c2", "c3", "c4"] * 2,
            S.EVALUATOR: "m",
            S.SCORE: [0.9] * 4 + [None] * 4,
        },
        schema_overrides={S.SCORE: pl.Float64},
    )
    return dict(compare_tables(Dataset.from_frames(scores), Config(), pairs="consecutive"))


def test_compare_shows_an_unscored_run_as_a_dash_with_no_paired_statistics():
    tables = _unscored_pair()
    rd = tables[S.RUN_DELTAS]
    r = rd.row(0, named=True)
    # what run_deltas holds: a pass rate of 0 for the run without scores, and paired pass
    # numbers over its unscored (not passed) cases, though no case is scored on both sides
    assert r["candidate_pass_rate"] == 0.0 and r["candidate_mean_score"] is None
    assert r[S.N_PAIRED] == 0 and r[S.PAIRED_PASS_DELTA] == -1.0
    assert run_rate(r, prefix="candidate_") is None and pass_rate_delta(r) is None
    assert run_rate(r, prefix="baseline_") == 1.0
    text = _text(*compare_report(rd, tables[S.CASE_DELTAS], limits=Config().compare))
    rows = {line.split()[0]: line for line in text.splitlines() if line.startswith("pass rate")}
    assert rows["pass"].split()[2:] == ["100.0%", "—", "—"]
    assert not re.search(r"(?<![\d.])0\.0%", text)  # 100.0% is there; 0.0% is not
    assert "fell 100.0" not in text and "-100.0" not in text
    assert "no execution of r2 has a score (unscored or errored); r1 passed 100.0%" in text
    assert UNSCORED_FOOTNOTE in " ".join(text.split())
    assert "McNemar" not in text and "paired" not in text
    assert power_notes(rd, Config().compare) == []  # no power line without paired cases


def test_p_and_q_values_keep_significant_digits():
    assert p_value(1.4e-13) == "1.4e-13"
    assert p_value(2.7105e-20) == "2.71e-20"
    assert p_value(0.03125) == "0.03125" and p_value(1.0) == "1" and p_value(None) == "—"
    slices = pl.DataFrame(
        {
            S.CONFIG_ID: "cfg",
            S.BASELINE_RUN_ID: "b",
            S.CANDIDATE_RUN_ID: "c",
            S.SLICE: "tag",
            S.SLICE_VALUE: ["account", "billing"],
            S.N_PASSED_TO_FAILED: [60, 0],
            S.N_FAILED_TO_PASSED: [0, 0],
            S.MCNEMAR_P: [7e-14, 1.0],
            S.Q_VALUE: [1.4e-13, 1.0],
        }
    )
    (note,) = slice_notes(slices)
    note = _text(note)
    assert "account (q 1.4e-13)" in note and "q 0.0" not in note


Z = 1.959963984540054


def _wilson_cell(r: dict) -> str:
    """The run table's pass-rate cell computed here from its definition: the 95 % Wilson
    interval over n_eff = p (1 - p) / se^2 (se clustered by case), or the number of cases
    when p is 0 or 1 or se is 0 or missing."""
    p, se, n = r[S.PASS_RATE], r[S.PASS_RATE_SE], r[S.CASES]
    if se and 0 < p < 1:
        n = max(p * (1 - p) / se**2, 1.0)
    centre = (p + Z * Z / (2 * n)) / (1 + Z * Z / n)
    half = Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n)) / (1 + Z * Z / n)
    low, high = max(centre - half, 0.0), min(centre + half, 1.0)
    return f"{100 * p:.1f}% [{100 * low:.1f}%, {100 * high:.1f}%]"


def test_pass_rates_show_the_wilson_interval_and_the_note_says_so():
    summary = _golden(S.RUN_SUMMARY)
    text = _text(run_table(summary))
    flat = " ".join(text.split())
    assert SE_FOOTNOTE in flat
    assert "95 % Wilson interval with the clustered effective sample size" in SE_FOOTNOTE
    assert "± after a mean score: one standard error, clustered by case" in SE_FOOTNOTE
    for r in summary.iter_rows(named=True):
        assert _wilson_cell(r) in text
        assert f"{r[S.MEAN_SCORE]:.3f} ± {r[S.MEAN_SCORE_SE]:.3f}" in text
    full = summary.filter(pl.col(S.PASS_RATE) == 1.0).row(0, named=True)
    assert "100.0% [100.0%, 100.0%]" not in text  # does not collapse at 1
    assert _wilson_cell(full).startswith("100.0% [9") and _wilson_cell(full) in text


def test_slice_table_shows_the_same_wilson_interval():
    from evalframe.cli.score import slice_table

    scores = pl.DataFrame(
        {
            S.RUN_ID: ["r"] * 6,
            S.CASE_ID: ["c1", "c2", "c3", "c4", "c5", "c6"],
            S.EVALUATOR: "m",
            S.SCORE: [0.9, 0.9, 0.9, 0.2, 0.95, 0.99],
        }
    )
    executions = pl.DataFrame(
        {
            S.RUN_ID: ["r"] * 6,
            S.CASE_ID: ["c1", "c2", "c3", "c4", "c5", "c6"],
            "lang": ["en", "en", "en", "en", "de", "de"],
        }
    )
    ds = Dataset.from_frames(scores, executions=executions)
    slices = score_tables(ds, Config(), by="lang")[S.SLICE_SUMMARY]
    text = _text(slice_table(slices))
    for r in slices.iter_rows(named=True):
        assert _wilson_cell(r) in text, r
    assert "100.0% [100.0%, 100.0%]" not in text
    assert SE_FOOTNOTE in " ".join(text.split())


# --- the evaluator behind a regression, --top --------------------------------------


def _deltas(rows: list[tuple[str, str, float | None]]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            S.CONFIG_ID: "cfg",
            "baseline_run_id": "b",
            "candidate_run_id": "c",
            S.CASE_ID: [r[0] for r in rows],
            S.PATH: [r[1] for r in rows],
            S.SCORE_DELTA: [r[2] for r in rows],
        },
        schema_overrides={S.SCORE_DELTA: pl.Float64},
    )


def test_worst_evaluator_is_the_leaf_that_fell_most_with_ties_counted():
    frame = _deltas(
        [
            # case x: the composite "quality" falls with its leaves; the leaf names it
            ("x", "quality", -0.5),
            ("x", "quality/grounding", -0.5),
            ("x", "quality/tone", -0.1),
            ("x", "safety", 0.2),
            # case y: two leaves tie (up to float noise); both are named
            ("y", "quality/tone", 0.6 - 1.0),
            ("y", "quality/grounding", 0.4 - 0.8),
            ("y", "safety", None),
            # case z: nothing fell
            ("z", "safety", 0.0),
        ]
    )
    got = worst_evaluators(frame).sort(S.CASE_ID)
    assert got.select(S.CASE_ID, "evaluators").rows() == [
        ("x", ["quality/grounding"]),
        ("y", ["quality/grounding", "quality/tone"]),
    ]
    assert got["evaluator_delta"].to_list() == pytest.approx([-0.5, -0.4])
    assert worst_evaluators(None).height == 0


@pytest.mark.parametrize(
    ("paths", "most", "text"),
    [
        (["a"], 3, "a"),
        (["a", "b"], 3, "a and b"),
        (["a", "b", "c"], 3, "a, b and c"),
        (["a", "b", "c", "d", "e"], 3, "a, b, c and 2 more"),
        (["a", "b", "c"], 2, "a, b and 1 more"),
    ],
)
def test_tied_evaluators_are_listed_as_a_reader_lists_them(paths, most, text):
    assert listed(paths, most) == text


def test_compare_says_which_evaluator_fell_in_how_many_regressed_cases():
    frame = _deltas(
        [
            ("x", "facts", -0.5),
            ("x", "tone", -0.5),
            ("y", "facts", -0.5),
            ("y", "tone", 0.0),
            ("z", "tone", -0.5),
            ("z", "facts", 0.0),
        ]
    )
    fell = pl.when(pl.col(S.SCORE_DELTA) < -0.05).then(pl.lit("regression"))
    frame = frame.with_columns(fell.otherwise(pl.lit("unchanged")).alias(S.STATUS))
    cases = pl.DataFrame(
        {
            "config_id": "cfg",
            "baseline_run_id": "b",
            "candidate_run_id": "c",
            S.CASE_ID: ["x", "y", "z", "w"],
            S.STATUS: ["regression", "regression", "regression", "unchanged"],
        }
    )
    assert evaluator_rollup(frame, cases) == {
        ("cfg", "b", "c"): "which evaluator moved (the regressed cases it fell in, of 3): "
        "facts and tone 2 each"
    }
    assert evaluator_rollup(None, cases) == {}


def test_compare_report_names_the_evaluator_and_honours_top():
    run_deltas, cases = _golden(S.RUN_DELTAS), _golden(S.CASE_DELTAS)
    nodes = _golden(S.EVALUATOR_DELTAS)
    regressed = run_deltas.filter("regression_detected").row(0, named=True)
    n = regressed["n_regression"]
    for top in (0, 3, n + 5):
        text = _text(*compare_report(run_deltas, cases, top=top, evaluator_deltas=nodes))
        listed = re.findall(r"^ case-\d+ .*$", text, re.MULTILINE)
        # both pairs list their regressions, at most `top` each
        per_pair = [min(top, int(r["n_regression"])) for r in run_deltas.iter_rows(named=True)]
        assert len(listed) == sum(per_pair), top
        if 0 < top < n:
            assert f"worst {top} of {n}; --top N shows more" in text
        if top:
            assert "evaluator behind it" in text
            # every listed case names an evaluator of the tree with its delta
            assert all(re.search(r"  [a-z0-9_, ]+ -\d\.\d{3}", line) for line in listed)


# --- progress displays --------------------------------------------------------------


def _terminal() -> tuple[Console, io.StringIO]:
    buffer = io.StringIO()
    return Console(file=buffer, force_terminal=True, width=100, color_system=None), buffer


def test_sweep_progress_bar_has_its_total_from_the_start():
    console, buffer = _terminal()
    with sweep_progress(4, console=console) as on_chunk:
        assert on_chunk is not None
        console.file.flush()
        first = buffer.getvalue()
        on_chunk(2, 4)
        on_chunk(4, 4)
    out = buffer.getvalue()
    assert "0/4 configs" in first
    assert "None" not in out


def test_sweep_progress_is_silent_off_a_terminal():
    console = Console(file=io.StringIO(), force_terminal=False)
    with sweep_progress(3, console=console) as on_chunk:
        assert on_chunk is None


def test_steps_show_each_step_out_of_the_total():
    console, buffer = _terminal()
    with steps(2, console=console) as step:
        step("writing the demo dataset")
        step("scoring")
    out = buffer.getvalue()
    assert "0/2 steps" in out and "1/2 steps" in out and "scoring" in out


# --- JSON values --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (timedelta(0), "PT0S"),
        (timedelta(days=2, hours=3, minutes=4, seconds=5, microseconds=250000), "P2DT3H4M5.25S"),
        (timedelta(days=1), "P1D"),
        (timedelta(minutes=-90), "-PT1H30M"),
    ],
)
def test_iso_duration(value, expected):
    assert iso_duration(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (datetime(2026, 10, 1, 9, 30), "2026-10-01T09:30:00"),
        (date(2026, 10, 1), "2026-10-01"),
        (time(12, 34, 56, 500000), "12:34:56.500000"),
        (timedelta(hours=1), "PT1H"),
        (b"\xaa\xbb", "qrs="),
        (Decimal("1.25"), 1.25),
        (Decimal("12345678901234567890"), 12345678901234567890),
        (float("nan"), None),
    ],
)
def test_json_value(value, expected):
    assert json_value(value) == expected


def test_compare_decide_names_the_judges_not_admitted_of_each_candidate():
    run_deltas = pl.DataFrame(
        {
            "baseline_run_id": ["a", "b"],
            "candidate_run_id": ["b", "c"],
            "decision_reasons": [["pass_rate", "tone", "verdict"], ["latency"]],
        }
    )
    (note,) = admission_note(run_deltas)
    assert note.plain == (
        "note: a → b rests on judges not admitted to gate a release against the human labels "
        "(judge_agreement.admitted): tone and verdict; `evalframe agree --check` says why."
    )
