"""The self-contained HTML report: the policy, the run table with gates and intervals, the
comparisons (decision, reasons, evaluator summary, paired statistics, power, slices,
regressed cases), the history and every chart as inline SVG (vl-convert). One file that
fetches nothing, so it opens with the network off.
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
from evalframe._private.compare.compare import PAIR_KEY
from evalframe._private.compare.evaluator_summary import evaluator_summary
from evalframe._private.compare.evaluator_tests import evaluator_tests
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
    of_pair,
    policy_section,
    table,
    text,
)
from evalframe._private.rules.constants import ALPHA, Z_95
from evalframe._private.rules.intervals import ci_high, ci_low
from evalframe._private.stats.power import too_small
from evalframe._private.store.fsops import write_bytes
from evalframe._private.summaries.slices import SIGNIFICANCE, significant_regressions
from evalframe._private.version import __version__
from evalframe.format import (
    RATE_INTERVAL,
    case_counts,
    has_paired_cases,
    moved_evaluators,
    ms,
    num,
    p_value,
    pass_at_text,
    pass_k_values,
    pass_rate_delta,
    pct,
    reason_text,
    run_rate,
    signed,
    signed_pct,
    visible,
    with_pass_k_cases,
    with_wilson,
)

TOP_REGRESSIONS = 10
"""Regressed cases listed per pair (worst score delta first)."""

BEHIND_PATH = "behind_path"
BEHIND_DELTA = "behind_delta"
SIDES = ("baseline", "candidate")
PAGE = Template(asset("page.html"))


def _pts(x: float | None) -> str:
    return signed_pct(x).removeprefix("+")


def _gate(x: bool | None) -> str:
    if x is None:
        return "—"
    return '<span class="ok">pass</span>' if x else '<span class="bad">FAIL</span>'


def _interval(value: Any, lo: Any, hi: Any, fmt: Callable[[Any], str]) -> str:
    if value is None or lo is None or hi is None:
        return fmt(value)
    return bracket(fmt(value), fmt(lo), fmt(hi))


def _created(x: Any) -> str:
    return esc(x.strftime("%Y-%m-%d %H:%M") if isinstance(x, datetime) else x)


def _count(x: int | None) -> str:
    return "—" if x is None else f"{x:,}"


def _mean_cell(x: float | None, se: float | None) -> str:
    if x is None or se is None:
        return num(x)
    return _interval(x, max(0.0, ci_low(x, se)), min(1.0, ci_high(x, se)), num)


RUN_COLUMNS: list[tuple[str, Callable[[dict[str, Any]], str]]] = [
    ("run", lambda r: f"<b>{bdi(r[S.RUN_ID])}</b>"),
    ("created", lambda r: _created(r.get(S.CREATED_AT))),
    ("label", lambda r: bdi(r.get(S.LABEL))),
    ("executions", lambda r: _count(r[S.N_EXECUTIONS])),
    ("passed (after outcome gates)", lambda r: _count(r.get(S.PASSED))),
    (
        "pass rate [95 % Wilson interval]",
        lambda r: _interval(run_rate(r), r["ci_low"], r["ci_high"], pct),
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
"""The pass@k columns follow the mean score, as in the terminal."""


def _runs_section(
    rs: pl.DataFrame, groups: dict[tuple, tuple[int, int]], failing: dict, data: str
) -> str:
    """The run table, its note, the rank bands (`--bootstrap`) and each run's failing cases
    (those of the runs not embedded named in a note)."""
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
    out = [
        "<h2 id='runs'>Runs</h2>",
        table([h for h, _ in columns], rows, left=3),
        text(
            "runs_note",
            gates=gates,
            rate_interval=RATE_INTERVAL,
            z=Z_95,
            pass_k=text("pass_k_note") if ks else "",
        ),
    ]
    if all(c in rs.columns for c in BAND_COLUMNS) and not rs[S.P_BEST].is_null().all():
        out.append(figure("rank_bands", rank_bands_chart(rs)))
    shown = {k: n for k, n in failing.items() if n and (KIND_FAIL, k[0], None, k[1]) in groups}
    out += [
        f"<h3 class='run-cases'>{bdi(run)}: cases that did not pass</h3>"
        + case_explorer(groups, (KIND_FAIL, cid, None, run), n, data)
        for (cid, run), n in shown.items()
    ]
    left_out = [k for k, n in failing.items() if n and k not in shown]
    if left_out:
        out.append(text("failing_left_out", n=len(left_out), runs=CASE_RUNS, dataset=data))
    return "".join(out)


def _pass_at(k: int) -> Callable[[dict[str, Any]], str]:
    return lambda r: esc(pass_at_text(r, k))


def top_regressions(
    case_deltas: pl.DataFrame, evaluator_deltas: pl.DataFrame | None, top: int = TOP_REGRESSIONS
) -> pl.DataFrame:
    """The `top` regressed cases of each pair (worst first), each with the evaluator node of
    its most negative score delta (`behind_path`, `behind_delta`; null when none is)."""
    worst = (
        case_deltas.filter(pl.col(S.STATUS) == "regression")
        .sort([*PAIR_KEY, S.SCORE_DELTA, S.CASE_ID], nulls_last=True)
        .group_by(PAIR_KEY, maintain_order=True)
        .head(top)
    )
    if evaluator_deltas is None or evaluator_deltas.height == 0:
        return worst.with_columns(
            pl.lit(None, pl.String).alias(BEHIND_PATH), pl.lit(None, pl.Float64).alias(BEHIND_DELTA)
        )
    behind = (
        evaluator_deltas.filter(pl.col(S.SCORE_DELTA) < 0)
        .join(worst.select(*PAIR_KEY, S.CASE_ID), on=[*PAIR_KEY, S.CASE_ID], how="semi")
        .sort([*PAIR_KEY, S.CASE_ID, S.SCORE_DELTA, S.PATH])
        .group_by([*PAIR_KEY, S.CASE_ID], maintain_order=True)
        .first()
        .select(
            *PAIR_KEY,
            S.CASE_ID,
            pl.col(S.PATH).alias(BEHIND_PATH),
            pl.col(S.SCORE_DELTA).alias(BEHIND_DELTA),
        )
    )
    return worst.join(behind, on=[*PAIR_KEY, S.CASE_ID], how="left", maintain_order="left")


def _power_note(r: dict[str, Any], limits: Any) -> str:
    """The pair's minimum detectable effects, and the configured limits it is too small to
    see (`too_small`, the terminal's rule)."""
    mde_rate, mde_score = r.get(S.MDE_PASS_RATE), r.get(S.MDE_MEAN_SCORE)
    if mde_rate is None and mde_score is None:
        return text("power_none")
    sees = " and ".join(
        f"a {metric} change of {value} or more"
        for metric, value in (("pass-rate", _pts(mde_rate)), ("mean-score", num(mde_score)))
        if value != "—"
    )
    note = text("power", n=r[S.N_PAIRED], sees=esc(sees))
    small = too_small(r, limits)
    if small:
        fmt = {"pass rate": _pts}
        limits_text = "; ".join(
            f"the {t.metric} limit {t.limit_name} = {fmt.get(t.metric, num)(t.limit)} "
            f"(detectable: {fmt.get(t.metric, num)(t.mde)})"
            for t in small
        )
        note += text("too_small", limits=esc(limits_text))
    return note


def _slice_note(slices: pl.DataFrame | None, r: dict[str, Any]) -> str:
    """Per slice column, the slices of the pair whose regression survives Benjamini–Hochberg
    (q < 0.05 and more pass → fail than fail → pass flips)."""
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
    """Pass rate, mean score and latency of both sides with their change, and the paired
    pass change when the pair has cases scored in both runs."""
    rows = [
        [
            "pass rate (all executions of each run)",
            *(pct(run_rate(r, prefix=f"{s}_")) for s in SIDES),
            signed_pct(pass_rate_delta(r)),
        ],
        ["mean score", *(num(r[f"{s}_mean_score"]) for s in SIDES), signed(r["mean_score_delta"])],
        [
            "latency mean",
            *(ms(r[f"{s}_latency_mean"]) for s in SIDES),
            signed(r["latency_mean_delta"], 0, " ms"),
        ],
    ]
    if not has_paired_cases(r) or r.get(S.PAIRED_PASS_DELTA) is None:
        return table(["", *SIDES, "delta"], rows)
    lo, hi = r.get(S.PAIRED_PASS_DELTA_CI_LOW), r.get(S.PAIRED_PASS_DELTA_CI_HIGH)
    interval = "" if lo is None else f" [{signed_pct(lo)}, {signed_pct(hi)}]"
    rows.append(
        [
            "paired pass change (cases in both runs, case passed)",
            "",
            "",
            signed_pct(r[S.PAIRED_PASS_DELTA]) + f"<span class='meta'>{interval}</span>",
        ]
    )
    return table(["", *SIDES, "delta"], rows) + text("paired_note")


def _paired_text(r: dict[str, Any]) -> str:
    if not has_paired_cases(r):
        return "No case is scored in both runs: no paired statistics."
    ci = (
        f"95 % interval [{signed(r[S.MEAN_DELTA_CI_LOW])}, {signed(r[S.MEAN_DELTA_CI_HIGH])}]"
        if r[S.MEAN_DELTA_SE] is not None
        else "no interval (fewer than 2 paired cases)"
    )
    return text(
        "paired",
        n=r[S.N_PAIRED],
        delta=signed(r[S.MEAN_DELTA]),
        ci=ci,
        p=p_value(r[S.MCNEMAR_P]),
        down=r[S.N_PASSED_TO_FAILED],
        up=r[S.N_FAILED_TO_PASSED],
    )


def _why(r: dict[str, Any], limits: Any) -> str:
    if r[S.REASONS]:
        reasons = "; ".join(esc(reason_text(code, r, limits)) for code in r[S.REASONS])
        return f"<p><b>Why:</b> {reasons}.</p>"
    return text("no_limit_exceeded", n=r["n_regression"]) if r["n_regression"] else ""


CASE_STATUSES = ("regression", "improvement", "unchanged", "new", "removed", "error")
"""run_deltas' case counts (n_STATUS), in the order the comparison lists them."""


def _noise_note(run_deltas: pl.DataFrame, frames: Mapping[str, pl.DataFrame]) -> str:
    """With a noise_floor table (`--replicates`), the pairs whose pass-rate change is within
    the noise of reruns (run_deltas.within_noise)."""
    if S.NOISE_FLOOR not in frames or S.WITHIN_NOISE not in run_deltas.columns:
        return ""
    known = run_deltas.filter(pl.col(S.WITHIN_NOISE).is_not_null())
    within = known.filter(pl.col(S.WITHIN_NOISE)).iter_rows(named=True)
    pairs = [
        f"{bdi(r[S.BASELINE_RUN_ID])} → {bdi(r[S.CANDIDATE_RUN_ID])} "
        f"({signed_pct(pass_rate_delta(r))})"
        for r in within
    ]
    listed = ": " + ", ".join(pairs) if pairs else ""
    return text("noise", within=len(pairs), known=known.height, pairs=listed)


def _compare_section(
    frames: Mapping[str, pl.DataFrame],
    limits: Any,
    groups: dict[tuple, tuple[int, int]],
    data: str,
    series: str | None,
    decide: Any,
) -> str:
    """Per pair: its heading, decision, reasons, evaluator summary, table, counts, power,
    slices and regressed cases."""
    run_deltas = frames[S.RUN_DELTAS]
    ed, cd = frames.get(S.EVALUATOR_DELTAS), frames.get(S.CASE_DELTAS)
    decisions = decision_notes(run_deltas, decide, limits)
    summary = evaluator_summary(ed, cd) if ed is not None and ed.height and cd is not None else None
    tests = frames.get(S.EVALUATOR_TESTS)
    if tests is None and ed is not None:
        tests = evaluator_tests(ed)
    moved = {(b, c): names for b, c, names in moved_evaluators(tests)} if tests is not None else {}
    out = [
        "<h2 id='compare'>Comparison</h2>",
        pairing_note(frames[S.RUN_SUMMARY], run_deltas, series),
        _noise_note(run_deltas, frames),
    ]
    for r in run_deltas.iter_rows(named=True):
        key = (r[S.CONFIG_ID], r[S.BASELINE_RUN_ID], r[S.CANDIDATE_RUN_ID])
        verdict = (
            "<span class='pill bad'>REGRESSION (run-level limits)</span>"
            if r[S.REGRESSION_DETECTED]
            else "<span class='pill ok'>no run-level regression</span>"
        )
        counts = (
            case_counts(r, of_pair(cd, r), limits).removeprefix("cases: ")
            if cd is not None
            else ", ".join(f"{r[f'n_{s}']} {s}" for s in CASE_STATUSES)
        )
        parts = [
            f"<h3>{bdi(key[1])} → {bdi(key[2])} {verdict}</h3>",
            decisions.get(key, ""),
            _why(r, limits),
            evaluator_summary_table(summary, r),
            text("moved", alpha=f"{ALPHA:g}", names=esc(moved[key[1:]]))
            if key[1:] in moved
            else "",
            _pair_table(r),
            f"<p class='counts'>Cases: {esc(counts)}. {_paired_text(r)}</p>",
            _power_note(r, limits) if has_paired_cases(r) else "",
            _slice_note(frames.get(S.SLICE_DELTAS), r),
            case_explorer(groups, (KIND_REGRESSION, *key), r["n_regression"], data),
        ]
        out += [p for p in parts if p]
    return "\n".join(out)


def pairing_note(
    run_summary: pl.DataFrame, run_deltas: pl.DataFrame, series: str | None = None
) -> str:
    """How the pairs were chosen: with `series`, within each value of that runs column;
    without it, compare's note (`series_note`) when pairs mix model/target/agent values."""
    if series is not None:
        return text("series_note", bdi=bdi(series), series=esc(series))
    pairs = run_deltas.select(S.BASELINE_RUN_ID, S.CANDIDATE_RUN_ID).unique(maintain_order=True)
    note = series_note(run_summary, list(pairs.iter_rows()))
    if note is None:
        return ""
    mixed = esc(note.removeprefix("note: "))
    return f"<p class='note series-note mixed'><b>Mixed series</b>: {mixed}</p>"


def _timed(table: pl.DataFrame, run_summary: pl.DataFrame | None) -> pl.DataFrame:
    """`table` with run_summary's created_at per run, so that a chart thinned to the latest
    runs keeps the latest by time, as the run table orders them."""
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
    """Every chart whose table is present, as inline SVG figures, and notes on the charts
    that could not be drawn. `limits` reaches the power curve, `series` the trend."""
    from altair import MaxRowsError

    figs, notes = [], []
    for name, (fn, table_name) in CHARTS.items():
        table = tables.get(table_name)
        if table is None or table.height == 0:
            continue
        kwargs = {"power_curve": {"limits": limits}, "trend": {"series": series}}.get(name, {})
        more = (
            f" One line per value of the runs column {visible(series)} (--series)."
            if name == "trend" and series is not None
            else ""
        )
        see = (
            "Comparison section lists every pair"
            if table_name in PAIR_TABLES
            else "run table lists every run"
        )
        try:
            chart = fn(_timed(table, tables.get(S.RUN_SUMMARY)), **kwargs)
            figs.append(figure(name, chart, see=f"The {see}.", more=more))
        except ChartInputError as exc:
            notes.append(f"{name}: {exc}")
        except MaxRowsError:  # thinning keeps every chart below the limit; a safety net
            notes.append(
                f"{name}: too many rows to draw even after thinning (the table has "
                f"{table.height:,} rows); the tables above hold the numbers."
            )
    return "\n".join(figs), notes


def _judges_section(frames: Mapping[str, pl.DataFrame]) -> str:
    """With a labels table: each judge against the human labels (judge_agreement) and each
    run's judge-only and labels-corrected pass rate (run_summary.ppi_pass_rate)."""
    agreement = frames.get(S.JUDGE_AGREEMENT)
    if agreement is None or agreement.is_empty():
        return ""
    judges = table(
        [
            "run",
            "evaluator",
            "rater",
            "labeled",
            "agreement",
            "κ",
            "sensitivity ≥",
            "specificity ≥",
            "admitted",
            "threshold from labels",
        ],
        [
            [
                bdi(r[S.RUN_ID]),
                bdi(r[S.EVALUATOR]) if r[S.EVALUATOR] is not None else "(execution verdict)",
                bdi(r[S.RATER]),
                _count(r[S.N_LABELED]),
                pct(r[S.AGREEMENT]),
                num(r[S.KAPPA]),
                pct(r[S.SENSITIVITY_LOW]),
                pct(r[S.SPECIFICITY_LOW]),
                _gate(r[S.ADMITTED]),
                num(r[S.RECOMMENDED_THRESHOLD]),
            ]
            for r in agreement.filter(pl.col(S.RATER).is_not_null()).iter_rows(named=True)
        ],
        left=3,
    )
    runs = frames[S.RUN_SUMMARY]
    corrected = ""
    if S.PPI_PASS_RATE in runs.columns:
        corrected = table(
            ["run", "labeled", "judge pass rate", "corrected by the labels"],
            [
                [
                    bdi(r[S.RUN_ID]),
                    _count(r[S.N_LABELED]),
                    pct(run_rate(r)),
                    _interval(
                        r[S.PPI_PASS_RATE],
                        r[S.PPI_PASS_RATE_CI_LOW],
                        r[S.PPI_PASS_RATE_CI_HIGH],
                        pct,
                    ),
                ]
                for r in runs.iter_rows(named=True)
            ],
        )
    return "\n".join(["<h2 id='judges'>Judge vs human</h2>", text("judges"), judges, corrected])


NAV = {
    "runs": "Runs",
    "compare": "Comparison",
    "judges": "Judges",
    "history": "History",
    "charts": "Charts",
}


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
    """The report as one HTML document from a dict of result tables (by name): run_summary,
    and whatever of the others is present adds its section or chart; without case_details
    (`report_tables`) the embedded cases come from the deltas, `top` per pair. `config` (a
    Config or a list) states the policy; `limits` (default: the config's `compare`) is
    quoted in the reasons, checked against each pair's power and drawn on the power curve.
    `series`: the runs column the pairs were formed within (the trend per series)."""
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
    data = esc(source or "DATASET")
    sections = {"runs": _runs_section(runs, groups, _failing_counts(case_summary), data)}
    rd = frames.get(S.RUN_DELTAS)
    if rd is not None and rd.height:
        decide = getattr(config, "decide", None)
        sections["compare"] = _compare_section(frames, limits, groups, data, series, decide)
    sections["judges"] = _judges_section(frames)
    sections["history"] = history_section(frames, one, series)  # "" below 3 runs of a config
    sections["charts"] = "<h2 id='charts'>Charts</h2>" + figures
    if notes:
        sections["notes"] = (
            "<p class='note'>Not drawn: " + "<br>".join(esc(n) for n in notes) + "</p>"
        )
    sections = {k: v for k, v in sections.items() if v}
    config_ids = ", ".join(sorted(rs[S.CONFIG_ID].unique().to_list()))
    meta = f"evalframe {__version__} · config {esc(config_ids)}"
    return PAGE.substitute(
        title=esc(title),
        css=asset("report.css"),
        meta=f"{esc(source)} · {meta}" if source else meta,
        generated=datetime.now().strftime("%Y-%m-%d %H:%M"),
        policy=policy_section(config, rs),
        nav=" ".join(f"<a href='#{a}'>{t}</a>" for a, t in NAV.items() if a in sections),
        sections="\n".join(sections.values()),
        cases=case_data_script(rows),
        render_check=asset("render_check.js"),
    )


def _failing_counts(case_summary: pl.DataFrame | None) -> dict[tuple[str, str], int]:
    """(config_id, run_id) → cases that did not pass, in case_summary's order of runs."""
    if case_summary is None or S.PASSED not in case_summary.columns:
        return {}
    counts = case_summary.group_by(S.CONFIG_ID, S.RUN_ID, maintain_order=True).agg(
        (~pl.col(S.PASSED).fill_null(False)).sum().alias("n")
    )
    return {(cid, run): n for cid, run, n in counts.iter_rows()}


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
    """Write `build_report(tables, **kwargs)` to `path` atomically (temp file + rename); on a
    disk failure the temporary file and the folders made are removed, an earlier file is
    unchanged, and ReportWriteError names the folder."""
    path = Path(path)
    text_ = build_report(tables, **kwargs)
    created = []  # the missing folders, innermost first
    folder = path.parent
    while not folder.exists() and not folder.is_symlink() and folder.parent != folder:
        created.append(folder)
        folder = folder.parent
    # a new file with the user's umask (mkstemp would make it private), then one rename
    tmp = path.parent / f".{path.name}.{uuid.uuid4().hex[:12]}.tmp"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_bytes(tmp, text_.encode("utf-8"))
        os.replace(tmp, path)
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        for folder in created:  # only those this call made, if still empty
            try:
                folder.rmdir()
            except OSError:
                break
        if isinstance(exc, OSError):
            raise _write_error(exc, path) from exc
        raise
    return path
