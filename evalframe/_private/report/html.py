"""The self-contained HTML report: the policy (threshold, band, gates, limits), run table
with gates and Wilson intervals, comparisons with reasons, the evaluator summary (which
metric moved, ties marked), the paired interval and McNemar p, the pair's power (and
whether it is too small to see the configured limits), the slices whose regression
survives Benjamini–Hochberg, every regressed case of a pair and failing case of a run
(searchable, sortable, expandable to scores, judge reasons and outcome checks: sections.py),
and every chart as inline SVG (rendered offline by vl-convert). One file; no script, style
sheet, font or image is fetched, so it opens with the network off.
"""

from __future__ import annotations

import errno
import os
import uuid
from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path
from string import Template
from typing import Any

import polars as pl

from evalframe._private import schema as S
from evalframe._private.compare.evaluator_summary import evaluator_summary
from evalframe._private.compare.pairs import series_note
from evalframe._private.errors import ReportWriteError
from evalframe._private.report.cases import (
    CASE_DETAILS,
    CASE_RUNS,
    CASES_PER_PAIR,
    KIND_FAIL,
    KIND_REGRESSION,
    case_details,
)
from evalframe._private.report.history import history_section
from evalframe._private.report.plots import (
    BAND_COLUMNS,
    CHARTS,
    VERDICT_BANDS,
    ChartInputError,
    rank_bands_chart,
)
from evalframe._private.report.sections import (
    asset,
    bdi,
    bracket,
    case_data_script,
    case_explorer,
    case_groups,
    decision_notes,
    esc,
    evaluator_summary_table,
    figure,
    ms,
    of_pair,
    policy_section,
    pts,
    signed,
    table,
)
from evalframe._private.rules.constants import Z_95
from evalframe._private.rules.intervals import ci_high, ci_low
from evalframe._private.stats.power import too_small
from evalframe._private.store.fsops import write_bytes
from evalframe._private.summaries.slices import SIGNIFICANCE, significant_regressions
from evalframe._private.version import __version__
from evalframe.format import (
    RATE_INTERVAL,
    case_counts,
    has_paired_cases,
    num,
    p_value,
    pass_at_text,
    pass_k_values,
    pass_rate_delta,
    pct,
    reason_text,
    run_rate,
    visible,
    with_pass_k_cases,
    with_wilson,
)

TOP_REGRESSIONS = 10
"""Regressed cases listed per pair (worst score delta first)."""

BEHIND_PATH = "behind_path"
BEHIND_DELTA = "behind_delta"

CAPTIONS = {
    "pass_rate": f"Pass rate per run; the bar is the {RATE_INTERVAL}.",
    "verdicts": "Share of each run's executions by verdict (pass, borderline, fail, error, "
    "unscored).",
    "trend": "Pass rate over runs in created_at order with its 95 % Wilson band (as the "
    "pass-rate chart).",
    "score_distribution": "Execution scores per run in 20 bins (share of the scored executions).",
    "regression_waterfall": "Each paired case's score delta (candidate − baseline), sorted; "
    "colour = case status.",
    "evaluator_heatmap": "Mean score delta of each evaluator per pair; red = the candidate "
    "scores lower.",
    "threshold_curve": "What the pass rate would be at every execution threshold (exact step "
    "function).",
    "sweep_heatmap": "What-if sweep: pass rate for two swept parameters, per run.",
    "slice_forest": "Paired score delta per slice with its 95 % interval. Colour: the "
    "slice's pass flips (pass → fail against fail → pass, McNemar test) are significant "
    "after Benjamini–Hochberg over the pair's slices (q < 0.05) — red when more went pass → "
    "fail (a regression), green when more went fail → pass (an improvement), grey when not "
    "significant; q tests the pass flips, not the score delta on the x axis.",
    "rank_bands": "Rank bands (case bootstrap): each run's 95 % band of its pass-rate rank "
    "among the runs of its config that share their cases, over the --bootstrap replicates "
    "(1 = best; ties share the best rank). The label is p_best, the share of replicates "
    "ranking the run first. Overlapping bands: the order of those runs is not settled by "
    "these cases.",
    "power_curve": "Chance that each pair's paired cases show a true change of the size on "
    "the x axis (two-sided 5 % test on the paired standard error); a curve crosses the "
    "dashed 80 % line at the pair's minimum detectable effect (mde_pass_rate, "
    "mde_mean_score). Red: the configured drop limit.",
}

CSS = asset("report.css")
"""The page's style (report.css), inlined in the page."""
RENDER_CHECK = asset("render_check.js")
"""Marks each chart and table box with what the browser laid out (read by the browser test)."""
PAGE = Template(asset("page.html"))


def _spts(x: float | None) -> str:
    return pts(x, "+")


def _gate(x: bool | None) -> str:
    if x is None:
        return "—"
    return '<span class="ok">pass</span>' if x else '<span class="bad">FAIL</span>'


# --- sections ------------------------------------------------------------------------
def _rate_cell(rate: float | None, lo: float | None, hi: float | None) -> str:
    return (
        pct(rate)
        if rate is None or lo is None or hi is None
        else bracket(pct(rate), pct(lo), pct(hi))
    )


def _mean_cell(x: float | None, se: float | None) -> str:
    if x is None or se is None:
        return num(x)
    return bracket(num(x), num(max(0.0, ci_low(x, se))), num(min(1.0, ci_high(x, se))))


def _created(x: Any) -> str:
    return esc(x.strftime("%Y-%m-%d %H:%M") if isinstance(x, datetime) else x)


def _count(x: int | None) -> str:
    return "—" if x is None else f"{x:,}"


RUN_COLUMNS: list[tuple[str, Callable[[dict[str, Any]], str]]] = [
    ("run", lambda r: f"<b>{bdi(r[S.RUN_ID])}</b>"),
    ("created", lambda r: _created(r.get(S.CREATED_AT))),
    ("label", lambda r: bdi(r.get(S.LABEL))),
    ("executions", lambda r: _count(r[S.N_EXECUTIONS])),
    ("passed (after outcome gates)", lambda r: _count(r.get(S.PASSED))),
    (
        "pass rate [95 % Wilson interval]",
        lambda r: _rate_cell(run_rate(r), r["ci_low"], r["ci_high"]),
    ),
    ("mean score [95 % interval]", lambda r: _mean_cell(r[S.MEAN_SCORE], r[S.MEAN_SCORE_SE])),
    (
        "score verdicts pass / borderline / fail / error / unscored",
        lambda r: " / ".join(str(r[c]) for c in VERDICT_BANDS),
    ),
    ("case pass rate", lambda r: pct(run_rate(r, S.CASE_PASS_RATE))),
    ("latency p95", lambda r: ms(r[S.LATENCY_P95])),
    ("cost", lambda r: "—" if r[S.COST_USD] is None else f"${r[S.COST_USD]:,.2f}"),
    ("score gate", lambda r: _gate(r[S.MEAN_SCORE_GATE])),
    ("rate gate", lambda r: _gate(r[S.PASS_RATE_GATE])),
    ("run gate", lambda r: _gate(r[S.RUN_PASSED])),
]
"""The run table: header → the cell of a run_summary row (with its rate interval)."""
PASS_K_AT = 7
"""Where the pass@k columns go in the run table: after the mean score, as in the terminal."""

PASS_K_NOTE = (
    " <b>pass@k</b> (config <code>attempts.k</code>): the chance that at least one of k "
    "attempts of a case passes (unbiased, from its n attempts of which c passed), averaged "
    "over the run's cases with at least k attempts; “(20/200 cases)” says how many of the "
    "run's cases those are (— when none has k attempts)."
)


def _rank_bands(rs: pl.DataFrame) -> str:
    """The rank-bands figure (`--bootstrap`), or "" when run_summary has no p_best."""
    if not all(c in rs.columns for c in BAND_COLUMNS) or rs[S.P_BEST].is_null().all():
        return ""
    return figure("rank_bands", rank_bands_chart(rs), CAPTIONS["rank_bands"])


def _failing_explorers(
    groups: dict[tuple, tuple[int, int]], failing: dict[tuple[str, str], int], dataset: str | None
) -> str:
    """The failing cases of each run with any, and a note naming how many runs' are not
    embedded."""
    shown = {k: n for k, n in failing.items() if n and (KIND_FAIL, k[0], None, k[1]) in groups}
    out = "".join(
        f"<h3 class='run-cases'>{bdi(run)}: cases that did not pass</h3>"
        + case_explorer(groups, KIND_FAIL, cid, None, run, n, dataset)
        for (cid, run), n in shown.items()
    )
    left_out = [k for k, n in failing.items() if n and k not in shown]
    if left_out:
        out += (
            f"<p class='note cases-left-out'>Failing cases of {len(left_out)} earlier runs are "
            f"not embedded (the page holds those of the latest {CASE_RUNS} runs); list a "
            f"run's with <code>evalframe cases {esc(dataset or 'DATASET')} --run RUN --status "
            "fail</code>.</p>"
        )
    return out


def _runs_section(
    rs: pl.DataFrame,
    groups: dict[tuple, tuple[int, int]],
    failing: dict[tuple[str, str], int],
    dataset: str | None = None,
) -> str:
    ks = pass_k_values(rs.columns)
    pass_k = [(f"pass@{k} (cases with ≥ {k} attempts)", _pass_at(k)) for k in ks]
    columns = [*RUN_COLUMNS[:PASS_K_AT], *pass_k, *RUN_COLUMNS[PASS_K_AT:]]
    rows = [[cell(r) for _, cell in columns] for r in with_wilson(rs).iter_rows(named=True)]
    first = rs.row(0, named=True) if rs.height else {}
    gates = (
        f"Gates: mean score meets {num(first.get(S.MIN_MEAN_SCORE))} and pass rate meets "
        f"{pct(first.get(S.MIN_PASS_RATE))} (run_gates)."
        if first
        else ""
    )
    return (
        "<h2 id='runs'>Runs</h2>"
        + table([h for h, _ in columns], rows, left=3)
        + f"<p class='note'>{gates} <b>Score verdicts</b> count executions by their score "
        "alone (pass / borderline / fail); <b>passed</b> counts the executions that pass after "
        "the outcome gates (under <code>outcomes: gate</code> an execution with outcome checks "
        "passes when every check passes, whatever its verdict), so passed and “pass” "
        "verdicts may differ. <b>Pass rate</b> = passed / executions (errored executions "
        f"count as not passed), with its {RATE_INTERVAL}. Mean-score brackets: value ± "
        f"{Z_95} × the standard error clustered by case (attempts of one case are not "
        "independent), clipped to 0–1. An unscored run has no pass rate (—), not 0 %."
        f"{PASS_K_NOTE if ks else ''}</p>"
        + _rank_bands(rs)
        + _failing_explorers(groups, failing, dataset)
    )


def _pass_at(k: int) -> Callable[[dict[str, Any]], str]:
    return lambda r: esc(pass_at_text(r, k))


def top_regressions(
    case_deltas: pl.DataFrame, evaluator_deltas: pl.DataFrame | None, top: int = TOP_REGRESSIONS
) -> pl.DataFrame:
    """The `top` regressed cases of each pair (most negative score delta first), each with
    the evaluator-tree node behind it: the node with the most negative score delta for that
    case in evaluator_deltas (`behind_path`, `behind_delta`; null when none is negative)."""
    pair = [S.CONFIG_ID, S.BASELINE_RUN_ID, S.CANDIDATE_RUN_ID]
    worst = (
        case_deltas.filter(pl.col(S.STATUS) == "regression")
        .sort([*pair, S.SCORE_DELTA, S.CASE_ID], nulls_last=True)
        .group_by(pair, maintain_order=True)
        .head(top)
    )
    if evaluator_deltas is None or evaluator_deltas.height == 0:
        return worst.with_columns(
            pl.lit(None, pl.String).alias(BEHIND_PATH), pl.lit(None, pl.Float64).alias(BEHIND_DELTA)
        )
    behind = (
        evaluator_deltas.filter(pl.col(S.SCORE_DELTA) < 0)
        .join(worst.select(*pair, S.CASE_ID), on=[*pair, S.CASE_ID], how="semi")
        .sort([*pair, S.CASE_ID, S.SCORE_DELTA, S.PATH])
        .group_by([*pair, S.CASE_ID], maintain_order=True)
        .first()
        .select(
            *pair,
            S.CASE_ID,
            pl.col(S.PATH).alias(BEHIND_PATH),
            pl.col(S.SCORE_DELTA).alias(BEHIND_DELTA),
        )
    )
    return worst.join(behind, on=[*pair, S.CASE_ID], how="left", maintain_order="left")


def _power_note(r: dict[str, Any], limits: Any) -> str:
    """The pair's minimum detectable effects, and which configured limits it is too small
    to see (docs/statistics.md, power; the same rule as the terminal's compare report)."""
    mde_rate, mde_score = r.get(S.MDE_PASS_RATE), r.get(S.MDE_MEAN_SCORE)
    if mde_rate is None and mde_score is None:
        return (
            "<p class='power'>Power: fewer than 2 paired cases, no minimum detectable effect.</p>"
        )
    sees = " and ".join(
        text
        for value, text in (
            (mde_rate, f"a pass-rate change of {pts(mde_rate)} or more"),
            (mde_score, f"a mean-score change of {num(mde_score)} or more"),
        )
        if value is not None
    )
    note = (
        f"<p class='power'>Power: the {r[S.N_PAIRED]} paired cases see {esc(sees)} "
        "(α 0.05, power 0.8).</p>"
    )
    small = too_small(r, limits)
    if small:
        fmt = {"pass rate": pts}
        limits_text = "; ".join(
            f"the {t.metric} limit {t.limit_name} = {fmt.get(t.metric, num)(t.limit)} "
            f"(detectable: {fmt.get(t.metric, num)(t.mde)})"
            for t in small
        )
        note += (
            "<p class='power toosmall'><span class='pill bad'>too small</span> This pair is "
            f"too small to see {esc(limits_text)}: a drop of that size would go unnoticed "
            "more than 20 % of the time, so “no regression” says little. <code>evalframe "
            "plan</code> says how many cases would.</p>"
        )
    return note


def _slice_note(slices: pl.DataFrame | None, r: dict[str, Any]) -> str:
    """The slices of one pair whose regression survives Benjamini–Hochberg (q < 0.05 and
    more pass → fail than fail → pass flips), per slice column."""
    if slices is None or slices.height == 0:
        return ""
    mine = of_pair(slices, r)
    parts = []
    for by in mine[S.SLICE].unique(maintain_order=True).to_list():
        values = mine.filter(pl.col(S.SLICE) == by)
        hits = significant_regressions(values).sort(S.Q_VALUE)
        names = ", ".join(
            f"<b>{bdi('(none)' if v is None else v)}</b> (q {p_value(q)})"
            for v, q in hits.select(S.SLICE_VALUE, S.Q_VALUE).iter_rows()
        )
        test = (
            f"beyond chance (Benjamini–Hochberg q &lt; {SIGNIFICANCE} over {values.height} values)"
        )
        parts.append(
            f"<p class='slices'>Slices by {esc(by)} that regressed {test}: {names}.</p>"
            if names
            else f"<p class='slices'>No slice by {esc(by)} regressed {test}.</p>"
        )
    return "".join(parts)


def _pair_table(r: dict[str, Any]) -> str:
    """A pair's pass rate, mean score and latency on both sides with their change, and the
    paired pass change when the pair has cases scored in both runs."""
    sides = ("baseline", "candidate")
    rate = [pct(run_rate(r, prefix=f"{side}_")) for side in sides]
    rows = [
        ["pass rate (all executions of each run)", *rate, _spts(pass_rate_delta(r))],
        ["mean score", *(num(r[f"{s}_mean_score"]) for s in sides), signed(r["mean_score_delta"])],
        [
            "latency mean",
            *(ms(r[f"{s}_latency_mean"]) for s in sides),
            ms(r["latency_mean_delta"], "+"),
        ],
    ]
    paired_note = ""
    if has_paired_cases(r) and r.get(S.PAIRED_PASS_DELTA) is not None:
        lo, hi = r.get(S.PAIRED_PASS_DELTA_CI_LOW), r.get(S.PAIRED_PASS_DELTA_CI_HIGH)
        interval = "" if lo is None else f" [{_spts(lo)}, {_spts(hi)}]"
        rows.append(
            [
                "paired pass change (cases in both runs, case passed)",
                "",
                "",
                _spts(r[S.PAIRED_PASS_DELTA]) + f"<span class='meta'>{interval}</span>",
            ]
        )
        paired_note = (
            "<p class='note'>The pass-rate change compares all executions of each run; "
            "the paired pass change compares, case by case, whether each case passed "
            "(all its attempts, by the attempts rule) in the cases present in both runs, "
            "so the two may differ.</p>"
        )
    return table(["", "baseline", "candidate", "delta"], rows) + paired_note


def _paired_text(r: dict[str, Any]) -> str:
    """The pair's paired score delta with its interval and McNemar p, in one sentence."""
    if not has_paired_cases(r):
        return "No case is scored in both runs: no paired statistics."
    ci = (
        f"95 % interval [{signed(r[S.MEAN_DELTA_CI_LOW])}, {signed(r[S.MEAN_DELTA_CI_HIGH])}]"
        if r[S.MEAN_DELTA_SE] is not None
        else "no interval (fewer than 2 paired cases)"
    )
    return (
        f"Paired score delta over {r[S.N_PAIRED]} cases: <b>{signed(r[S.MEAN_DELTA])}</b>, "
        f"{ci}. McNemar p = <b>{p_value(r[S.MCNEMAR_P])}</b> ({r[S.N_PASSED_TO_FAILED]} "
        f"pass→fail, {r[S.N_FAILED_TO_PASSED]} fail→pass among the cases in both runs)."
    )


def _why(r: dict[str, Any], limits: Any) -> str:
    """The reasons of a regression, or why regressed cases do not make one."""
    if r[S.REASONS]:
        reasons = "; ".join(esc(reason_text(code, r, limits)) for code in r[S.REASONS])
        return f"<p><b>Why:</b> {reasons}.</p>"
    if r["n_regression"]:
        return (
            f"<p>No compare limit is exceeded, yet {r['n_regression']} cases regressed "
            "under the case rule (below): the run-level verdict weighs the whole run, "
            "a regressed case is one case.</p>"
        )
    return ""


def _pair_section(
    r: dict[str, Any], frames: Mapping[str, pl.DataFrame], limits: Any, parts: dict[str, Any]
) -> list[str]:
    """One pair's heading, decision, reasons, evaluator summary, table, counts, power,
    slices and regressed cases. `parts`: the decisions, evaluator summary, case groups and
    dataset shared by every pair."""
    b, c = r[S.BASELINE_RUN_ID], r[S.CANDIDATE_RUN_ID]
    verdict = (
        "<span class='pill bad'>REGRESSION (run-level limits)</span>"
        if r[S.REGRESSION_DETECTED]
        else "<span class='pill ok'>no run-level regression</span>"
    )
    case_deltas = frames.get(S.CASE_DELTAS)
    counts = (
        case_counts(r, of_pair(case_deltas, r), limits).removeprefix("cases: ")
        if case_deltas is not None
        else ", ".join(f"{r[f'n_{s}']} {s}" for s in CASE_STATUSES)
    )
    return [
        f"<h3>{bdi(b)} → {bdi(c)} {verdict}</h3>",
        parts["decisions"].get((r[S.CONFIG_ID], b, c), ""),
        _why(r, limits),
        evaluator_summary_table(parts["summary"], r),
        _pair_table(r),
        f"<p class='counts'>Cases: {esc(counts)}. {_paired_text(r)}</p>",
        _power_note(r, limits) if has_paired_cases(r) else "",  # else no paired statistics
        _slice_note(frames.get(S.SLICE_DELTAS), r),
        case_explorer(
            parts["groups"],
            KIND_REGRESSION,
            r[S.CONFIG_ID],
            b,
            c,
            r["n_regression"],
            parts["dataset"],
        ),
    ]


CASE_STATUSES = ("regression", "improvement", "unchanged", "new", "removed", "error")
"""run_deltas' case counts (n_STATUS), in the order the comparison lists them."""


def _noise_note(run_deltas: pl.DataFrame, frames: Mapping[str, pl.DataFrame]) -> str:
    """With a noise_floor table (`--replicates`), the pairs whose pass-rate change is no
    larger than reruns of one system make (run_deltas.within_noise); "" without it."""
    if S.NOISE_FLOOR not in frames or S.WITHIN_NOISE not in run_deltas.columns:
        return ""
    known = run_deltas.filter(pl.col(S.WITHIN_NOISE).is_not_null())
    within = [r for r in known.iter_rows(named=True) if r[S.WITHIN_NOISE]]
    pairs = ", ".join(
        f"{bdi(r[S.BASELINE_RUN_ID])} → {bdi(r[S.CANDIDATE_RUN_ID])} ({_spts(pass_rate_delta(r))})"
        for r in within
    )
    return (
        f"<p class='note noise-note'><b>Noise floor</b>: {len(within)} of the {known.height} "
        "pairs whose runs both have a noise floor (noise_floor, --replicates) changed no more "
        "than reruns of one system do: |pass-rate change| ≤ the larger rms_pass_rate_delta of "
        f"the two runs' replicate groups{': ' + pairs if pairs else ''}. Such a change is "
        "noise, whatever the limits say.</p>"
    )


def _compare_section(
    frames: Mapping[str, pl.DataFrame],
    limits: Any,
    groups: dict[tuple, tuple[int, int]],
    dataset: str | None,
    pairing: str,
    decide: Any,
) -> str:
    run_deltas = frames[S.RUN_DELTAS]
    ed, cd = frames.get(S.EVALUATOR_DELTAS), frames.get(S.CASE_DELTAS)
    parts = {
        "decisions": decision_notes(run_deltas, decide, limits),
        "summary": evaluator_summary(ed, cd)
        if ed is not None and ed.height and cd is not None
        else None,
        "groups": groups,
        "dataset": dataset,
    }
    out = ["<h2 id='compare'>Comparison</h2>", pairing, _noise_note(run_deltas, frames)]
    for r in run_deltas.iter_rows(named=True):
        out += [p for p in _pair_section(r, frames, limits, parts) if p]
    return "\n".join(out)


def pairing_note(
    run_summary: pl.DataFrame, run_deltas: pl.DataFrame, series: str | None = None
) -> str:
    """How the pairs were chosen, as the comparison's first paragraph: with `series`, that
    every pair joins two runs of one value of that runs column; without it, compare's note
    (`pairs.series_note`) when the pairs join runs of different model/target/agent values,
    else nothing."""
    if series is not None:
        return (
            "<p class='note series-note'>Pairs are formed within each value of the runs column "
            f"<b>{bdi(series)}</b> (--series {esc(series)}): no pair joins runs of two "
            f"{esc(series)} values, and the trend chart draws one line per value.</p>"
        )
    pairs = [
        (b, c)
        for b, c in run_deltas.select(S.BASELINE_RUN_ID, S.CANDIDATE_RUN_ID)
        .unique(maintain_order=True)
        .iter_rows()
    ]
    note = series_note(run_summary, pairs)
    if note is None:
        return ""
    text = esc(note.removeprefix("note: "))
    return f"<p class='note series-note mixed'><b>Mixed series</b>: {text}</p>"


def _timed(table: pl.DataFrame, run_summary: pl.DataFrame | None) -> pl.DataFrame:
    """`table` with run_summary's created_at per run when it has none, so that a chart
    thinned to the latest runs keeps the latest by time, as the run table orders them."""
    if (
        run_summary is None
        or S.CREATED_AT in table.columns
        or S.RUN_ID not in table.columns
        or S.CREATED_AT not in run_summary.columns
    ):
        return table
    created = run_summary.select(S.RUN_ID, S.CREATED_AT).unique(S.RUN_ID, keep="first")
    return table.join(created, on=S.RUN_ID, how="left", maintain_order="left")


PAIR_TABLES = (S.RUN_DELTAS, S.CASE_DELTAS, S.EVALUATOR_DELTAS, S.SLICE_DELTAS)
"""Tables with a row per pair: a chart of them thinned to the latest pairs points to the
Comparison section, the others to the run table."""


def _figures(
    tables: Mapping[str, pl.DataFrame], limits: Any = None, series: str | None = None
) -> tuple[str, list[str]]:
    """Every chart whose table is present, as inline SVG figures (`figure`); and notes on
    charts that could not be drawn from the given tables. `limits` reaches the power
    curve, `series` the trend (one line per series)."""
    from altair import MaxRowsError

    figs, notes = [], []
    for name, (fn, table_name) in CHARTS.items():
        table = tables.get(table_name)
        if table is None or table.height == 0:
            continue
        kwargs = {"power_curve": {"limits": limits}, "trend": {"series": series}}.get(name, {})
        caption = CAPTIONS[name]
        if name == "trend" and series is not None:
            caption += f" One line per value of the runs column {visible(series)} (--series)."
        see = (
            "Comparison section lists every pair"
            if table_name in PAIR_TABLES
            else "run table lists every run"
        )
        try:
            chart = fn(_timed(table, tables.get(S.RUN_SUMMARY)), **kwargs)
            figs.append(figure(name, chart, caption, see=f"The {see}."))
        except ChartInputError as exc:
            notes.append(f"{name}: {exc}")
        except MaxRowsError:  # thinning keeps every chart below the limit; a safety net
            notes.append(
                f"{name}: too many rows to draw even after thinning (the table has "
                f"{table.height:,} rows); the tables above hold the numbers."
            )
    return "\n".join(figs), notes


def build_report(
    tables: Mapping[str, pl.DataFrame | pl.LazyFrame],
    *,
    title: str = "evalframe report",
    source: str | None = None,
    limits: Any = None,
    top: int = CASES_PER_PAIR,
    config: Any = None,
    series: str | None = None,
) -> str:
    """The report as one HTML document from a dict of result tables (keys = table names).

    Needs `run_summary`; every other table adds its section or chart when present:
    run_deltas / case_deltas / evaluator_deltas (comparison, evaluator summary, power,
    regressed cases and the power curve), case_summary (failing cases of the runs),
    case_details (`report_tables`: the embedded cases with judge reasons and outcome
    checks; without it they are computed here from the deltas, scores only, `top` per
    pair), slice_deltas (the slices that regressed and the forest plot), execution_scores,
    threshold_curve, sweep (charts). `config` (a Config, or a list of them) states the
    policy in the header; `limits` is the config's `compare` block (default: the config's):
    quoted in the regression reasons, checked against each pair's minimum detectable
    effects ("too small") and drawn on the power curve. `series` (the runs column the pairs
    were formed within, `report_tables(series=...)`) draws the trend per series and says so
    in the comparison; without it the comparison notes pairs that mix model/target/agent
    values (`pairing_note`)."""
    one = None if isinstance(config, (list, tuple)) else config
    if limits is None and one is not None:
        limits = one.compare
    frames = {
        k: v.collect() if isinstance(v, pl.LazyFrame) else v
        for k, v in tables.items()
        if v is not None
    }
    rs = frames.get(S.RUN_SUMMARY)
    if rs is None:
        raise ChartInputError(
            "the report needs the run_summary table; hint: pass the tables of "
            "evalframe.score_tables(...) (and compare_tables / sweep_tables for more)."
        )
    figures, notes = _figures(frames, limits, series)
    details = frames.get(CASE_DETAILS)
    rows, groups = case_groups(case_details(frames, per_pair=top) if details is None else details)
    case_summary = frames.get(S.CASE_SUMMARY)
    runs = with_pass_k_cases(rs, case_summary)
    sections = {"runs": _runs_section(runs, groups, _failing_counts(case_summary), source)}
    rd = frames.get(S.RUN_DELTAS)
    if rd is not None and rd.height:
        pairing = pairing_note(rs, rd, series)
        decide = getattr(config, "decide", None)
        sections["compare"] = _compare_section(frames, limits, groups, source, pairing, decide)
    sections["history"] = history_section(frames, one, series)  # "" below 3 runs of a config
    sections["charts"] = "<h2 id='charts'>Charts</h2>" + figures
    if notes:
        sections["notes"] = (
            "<p class='note'>Not drawn: " + "<br>".join(esc(n) for n in notes) + "</p>"
        )
    page = {k: v for k, v in sections.items() if v}
    return _page(title, source, rs, config, page, case_data_script(rows))


NAV = {"runs": "Runs", "compare": "Comparison", "history": "History", "charts": "Charts"}


def _page(
    title: str,
    source: str | None,
    rs: pl.DataFrame,
    config: Any,
    sections: dict[str, str],
    cases: str,
) -> str:
    """The HTML document (page.html) around the sections, with a link to each."""
    config_ids = ", ".join(sorted(rs[S.CONFIG_ID].unique().to_list()))
    meta = f"evalframe {__version__} · config {esc(config_ids)}"
    return PAGE.substitute(
        title=esc(title),
        css=CSS,
        meta=f"{esc(source)} · {meta}" if source else meta,
        generated=datetime.now().strftime("%Y-%m-%d %H:%M"),
        policy=policy_section(config, rs),
        nav=" ".join(f"<a href='#{a}'>{t}</a>" for a, t in NAV.items() if a in sections),
        sections="\n".join(sections.values()),
        cases=cases,
        render_check=RENDER_CHECK,
    )


def _failing_counts(case_summary: pl.DataFrame | None) -> dict[tuple[str, str], int]:
    """(config_id, run_id) → cases that did not pass, in case_summary's order of runs."""
    if case_summary is None or S.PASSED not in case_summary.columns:
        return {}
    counts = case_summary.group_by(S.CONFIG_ID, S.RUN_ID, maintain_order=True).agg(
        (~pl.col(S.PASSED).fill_null(False)).sum().alias("n")
    )
    return {(cid, run): n for cid, run, n in counts.iter_rows()}


def _missing_folders(folder: Path) -> list[Path]:
    """`folder` and its ancestors that do not exist yet, innermost first."""
    missing = []
    while not folder.exists() and not folder.is_symlink() and folder.parent != folder:
        missing.append(folder)
        folder = folder.parent
    return missing


def _write_error(exc: OSError, path: Path) -> ReportWriteError:
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        why = "no space left on device" if exc.errno == errno.ENOSPC else "disk quota exceeded"
        hint = f"free space on the disk of {path.parent} (or --out elsewhere), then re-run"
    else:
        why = (exc.strerror or str(exc)).lower()
        hint = f"check that {path.parent} is writable (or --out elsewhere), then re-run"
    return ReportWriteError(
        f"cannot write the report {path}: {why} in the folder {path.parent}; the "
        f"half-written file was removed and an earlier {path.name}, if any, is unchanged; "
        f"hint: {hint}."
    )


def write_report(
    tables: Mapping[str, pl.DataFrame | pl.LazyFrame], path: str | Path, **kwargs: Any
) -> Path:
    """Write `build_report(tables, **kwargs)` to `path` atomically (temp file + rename).

    When the disk fails (full, not writable) the temporary file and the folders this call
    created are removed, an earlier file at `path` is unchanged, and ReportWriteError (a
    StoreError and an OSError) names the folder."""
    path = Path(path)
    text = build_report(tables, **kwargs)
    created = _missing_folders(path.parent)
    # a new file with the user's umask (mkstemp would make it private), then one rename
    tmp = path.parent / f".{path.name}.{uuid.uuid4().hex[:12]}.tmp"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_bytes(tmp, text.encode("utf-8"))
        os.replace(tmp, path)
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        for folder in created:  # innermost first; only those this call made, if still empty
            try:
                folder.rmdir()
            except OSError:
                break
        if isinstance(exc, OSError):
            raise _write_error(exc, path) from exc
        raise
    return path
