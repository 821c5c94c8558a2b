"""The report's building blocks (escaped text, numbers, tables, figures) and its sections
of the analyst's view: the policy in the header, a pair's decision (in the terminal's
words, `stats.power.decision_part_text`), the per-pair evaluator summary, and the
case explorer (every regressed case of a pair, every failing case of a run; searchable,
sortable, expandable to per-evaluator scores, reasons and outcome checks) with its small
inline script. No network: the script and its data are in the page.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from importlib.resources import files
from typing import Any

import polars as pl

from evalframe._private import schema as S
from evalframe._private.compare import evaluator_summary as ES
from evalframe._private.config import Decide
from evalframe._private.report.cases import (
    CASE_PAIRS,
    CASE_RUNS,
    KIND,
    KIND_REGRESSION,
    MAX_TEXT,
    cases_json,
)
from evalframe._private.report.plots import THINNED, chart_note, to_svg
from evalframe._private.rules.constants import Z_95
from evalframe._private.stats.power import decision_part_text, decision_parts_table
from evalframe.format import (
    SHORT,
    VALUE,
    has_paired_cases,
    pct,
    policy_lines,
    visible,
)

GROUP = "group"
"""Column of the embedded rows naming their explorer (a pair's or a run's) on the page."""


def esc(x: Any) -> str:
    """Text for the page: control, separator and bidi characters made visible
    (`display.visible`, as in the terminal), then HTML-escaped."""
    return html.escape(visible("" if x is None else str(x)))


def bdi(x: Any) -> str:
    """An id from the data as `esc` text in a `<bdi>`: a right-to-left id cannot reorder
    the text around it (a comparison heading's arrow)."""
    return f"<bdi>{esc(x)}</bdi>"


def signed(x: float | None, digits: int = 3) -> str:
    return "—" if x is None else f"{x:+.{digits}f}"


def pts(x: float | None, sign: str = "") -> str:
    """A rate difference in percentage points (`sign` "+": always signed)."""
    return "—" if x is None else f"{100 * x:{sign}.1f} pts"


def ms(x: float | None, sign: str = "") -> str:
    """Milliseconds; the number and its unit never split across lines."""
    return "—" if x is None else f"{x:{sign},.0f}\u00a0ms"


def bracket(value: str, lo: str, hi: str) -> str:
    """A value with its interval, the interval set in small grey type."""
    return f"{value} <span class='meta'>[{lo}, {hi}]</span>"


LEFT = " class='l'"


def table(headers: list[str], rows: list[list[str]], left: int = 1, cls: str = "") -> str:
    """An HTML table; the first `left` columns are left-aligned. Cells are HTML already;
    headers are escaped. Cells wrap, and a left-aligned text cell (an id) breaks anywhere
    when it is longer than its column (html.py's CSS), so a table fits the page."""

    def td(tag: str, i: int, c: str) -> str:
        return f"<{tag}{LEFT if i < left else ''}>{c}</{tag}>"

    head = "".join(td("th", i, esc(h)) for i, h in enumerate(headers))
    body = "".join(
        "<tr>" + "".join(td("td", i, c) for i, c in enumerate(r)) + "</tr>" for r in rows
    )
    return (
        f"<div class='wrap'><table{f' class={cls!r}' if cls else ''}><thead><tr>{head}</tr>"
        f"</thead><tbody>{body}</tbody></table></div>"
    )


def figure(name: str, chart: Any, caption: str, cls: str = "chart", see: str = "") -> str:
    """A chart as an inline SVG figure (no XML prolog) with its caption and what it left
    out (`chart_note`, followed by `see` when runs or pairs were thinned)."""
    svg = to_svg(chart)
    note = chart_note(chart)
    if note and see and THINNED in note:
        note = f"{note} {see}"
    thinned = f" <span class='thinned'>{esc(note)}</span>" if note else ""
    return (
        f"<figure class='{cls}' id='{cls.split('-')[0]}-{name}' data-chart='{name}'>"
        f"{svg[svg.index('<svg') :]}<figcaption>{esc(caption)}{thinned}</figcaption></figure>"
    )


def of_pair(frame: pl.DataFrame, r: dict[str, Any]) -> pl.DataFrame:
    """The rows of `frame` that belong to the pair (config, baseline, candidate) of `r`."""
    keys = (S.CONFIG_ID, S.BASELINE_RUN_ID, S.CANDIDATE_RUN_ID)
    return frame.filter(*(pl.col(k) == r[k] for k in keys))


# --- policy ---------------------------------------------------------------------------
def _one_policy(cfg: Any) -> str:
    """One config's policy (`display.policy_lines`, shared with the terminal) as list items,
    with its LONG explanations (not the terminal's SHORT forms), values in bold."""
    return "".join(
        "<li>"
        + "".join(
            f"<b>{esc(text)}</b>" if kind == VALUE else esc(text)
            for text, kind in line
            if kind != SHORT
        )
        + "</li>"
        for line in policy_lines(cfg)
    )


def policy_section(config: Any, run_summary: pl.DataFrame) -> str:
    """The policy the numbers were computed under: threshold, borderline band, outcomes and
    attempts rules, run gates and compare limits, per config (a Config or a sequence of
    them). Without a config, what run_summary carries (config ids and run gates)."""
    configs: Sequence[Any] = (
        [] if config is None else list(config) if isinstance(config, (list, tuple)) else [config]
    )
    if configs:
        items = "".join(_one_policy(c) for c in configs)
    else:
        ids = ", ".join(sorted(run_summary[S.CONFIG_ID].unique().to_list()))
        gates = run_summary.select(S.MIN_MEAN_SCORE, S.MIN_PASS_RATE).unique()
        gate_text = "; ".join(
            f"mean score meets {m:g} and pass rate meets {pct(p)}" for m, p in gates.iter_rows()
        )
        items = (
            f"<li>config {esc(ids)}; run gates: {esc(gate_text)}. Threshold, borderline band and "
            "compare limits: pass the config (build_report(..., config=cfg)) to state them.</li>"
        )
    return f"<section id='policy' class='policy'><b>Policy</b><ul>{items}</ul></section>"


# --- a pair's three-outcome decision ----------------------------------------------------
_PILL = {S.DECISION_PASS: "ok", S.DECISION_FAIL: "bad", S.DECISION_INCONCLUSIVE: "tie"}


def decision_notes(
    run_deltas: pl.DataFrame, decide: Any, limits: Any
) -> dict[tuple[str, str, str], str]:
    """(config_id, baseline, candidate) → the pair's decision as an HTML paragraph.
    `decide` is the config's `decide` block (None: the defaults), `limits` its `compare`
    block; empty without the decision columns or without limits. A pair without cases
    scored in both runs gets the names of its parts, no numbers (the report shows no
    paired statistics for it)."""
    if S.DECISION not in run_deltas.columns or limits is None:
        return {}
    decide = Decide() if decide is None else decide
    parts = decision_parts_table(run_deltas, decide, limits)
    keys = (S.CONFIG_ID, S.BASELINE_RUN_ID, S.CANDIDATE_RUN_ID)
    why: dict[tuple, list[str]] = {}
    for p in parts.iter_rows(named=True):
        why.setdefault(tuple(p[k] for k in keys), []).append(decision_part_text(p))
    out = {}
    for r in run_deltas.iter_rows(named=True):
        key = (r[S.CONFIG_ID], r[S.BASELINE_RUN_ID], r[S.CANDIDATE_RUN_ID])
        decision = r[S.DECISION]
        reasons = why.get(key, [])
        if not has_paired_cases(r):  # no paired statistics are shown: name the parts only
            reasons = [p.replace("_", " ") for p in r[S.DECISION_REASONS] or []]
        out[key] = (
            "<p class='decision'>Decision (non-inferiority, docs/statistics.md): "
            f"<span class='pill {_PILL.get(decision, 'tie')}'>{esc(decision)}</span>"
            + (": " + "; ".join(esc(t) for t in reasons) if reasons else "")
            + ".</p>"
        )
    return out


# --- evaluator summary ----------------------------------------------------------------
def evaluator_summary_table(summary: pl.DataFrame | None, r: dict[str, Any]) -> str:
    """The pair's evaluator summary (compare/evaluator_summary.py) as a table, ties marked."""
    if summary is None or summary.height == 0:
        return ""
    mine = of_pair(summary, r)
    if mine.height == 0:
        return ""
    n_reg = int(mine[ES.N_REGRESSION].max() or 0)  # type: ignore[arg-type]
    rows = []
    for x in mine.iter_rows(named=True):
        tie = " <span class='pill tie'>tie</span>" if x[ES.TIED] else ""
        worst = f"{x[ES.N_WORST]}"
        if x[ES.N_WORST_TIED]:
            worst += f" <span class='meta'>({x[ES.N_WORST_TIED]} tied)</span>"
        delta = signed(x[ES.MEAN_DELTA])
        if x[ES.MEAN_DELTA_CI_LOW] is not None:
            delta = bracket(
                delta, signed(x[ES.MEAN_DELTA_CI_LOW]), signed(x[ES.MEAN_DELTA_CI_HIGH])
            )
        if (x[ES.MEAN_DELTA_CI_HIGH] or 0) < 0:
            delta = f"<span class='bad'>{delta}</span>"
        rows.append(
            [
                bdi(x[S.PATH]) + tie,
                f"{x[ES.N_FELL_IN_REGRESSIONS]} of {n_reg}",
                pct(x[ES.SHARE_OF_REGRESSIONS]),
                worst,
                f"{x[ES.N_FELL]} of {x[ES.N_PAIRED]}",
                delta,
            ]
        )
    headers = [
        "evaluator",
        "fell in regressed cases",
        "share of the regressions",
        "lowest in (ties)",
        "fell in paired cases",
        "mean delta [paired 95 % interval]",
    ]
    return (
        "<div class='evsum'><p><b>Which evaluator moved</b> (first: the share of the pair's "
        f"{n_reg} regressed cases in which it fell):</p>"
        + table(headers, rows, cls="evsum")
        + "<p class='note'>An evaluator <i>fell</i> in a case when its score delta exceeds "
        "case_delta downward. <i>Lowest in</i>: regressed cases where it has the lowest delta "
        "of the leaves; a case where several leaves share the lowest delta counts for each "
        "(tied). <span class='pill tie'>tie</span>: another evaluator fell in as many "
        "regressed cases. Interval: mean ± "
        f"{Z_95} × the paired standard error over the cases scored in both runs.</p></div>"
    )


# --- case explorer ---------------------------------------------------------------------
def case_groups(
    details: pl.DataFrame | None,
) -> tuple[pl.DataFrame | None, dict[tuple, tuple[int, int]]]:
    """The embedded rows with a `group` index per explorer, and (kind, config_id,
    baseline_run_id, run_id) → (that index, the rows embedded)."""
    if details is None or details.height == 0:
        return details, {}
    key = [KIND, S.CONFIG_ID, S.BASELINE_RUN_ID, S.RUN_ID]
    groups = (
        details.group_by(key, maintain_order=True)
        .agg(pl.len().alias("_rows"))
        .with_row_index(GROUP)
    )
    rows = details.join(
        groups.drop("_rows"), on=key, how="left", nulls_equal=True, maintain_order="left"
    )
    return rows, {tuple(g[1:5]): (g[0], g[5]) for g in groups.iter_rows()}


def case_explorer(
    groups: dict[tuple, tuple[int, int]],
    kind: str,
    config_id: str,
    baseline: str | None,
    run: str,
    total: int,
    dataset: str | None,
) -> str:
    """The explorer of one pair's regressed cases (`kind` "regression") or one run's
    failing cases ("fail"): a search box and a table the script fills from the embedded
    rows, with a note on what was left out and how to list it."""
    data = dataset or "DATASET"
    status = "regression" if kind == KIND_REGRESSION else "fail"
    how = (
        f"<code>evalframe cases {esc(data)} --run {esc(run)} --status {status}</code> (after "
        f"<code>evalframe {'compare' if kind == KIND_REGRESSION else 'score'} {esc(data)}</code>)"
        f' or SQL: <code>evalframe sql {esc(data)} "select * from '
        f"{'case_deltas' if kind == KIND_REGRESSION else 'case_summary'} where "
        f"{'candidate_run_id' if kind == KIND_REGRESSION else 'run_id'} = '{esc(run)}' and "
        f'{"status = " + repr("regression") if kind == KIND_REGRESSION else "not passed"}"</code>'
    )
    noun = "regressed cases" if kind == KIND_REGRESSION else "failing cases"
    found = groups.get((kind, config_id, baseline, run))
    if found is None:
        if total == 0:
            return ""
        cap = (CASE_PAIRS, "pairs") if kind == KIND_REGRESSION else (CASE_RUNS, "runs")
        return (
            f"<p class='note cases-left-out'>The {total} {noun} are not embedded: the page "
            f"holds those of the latest {cap[0]} {cap[1]} only. List them with {how}.</p>"
        )
    index, shown = found
    capped = (
        f" The page holds the worst {shown} of {total}; the other {total - shown} with {how}."
        if total > shown
        else f" All {total} are here; also with {how}."
    )
    what = (
        "Each row is a regressed case (case rule: its verdict flipped pass→fail, or it is "
        "<i>score-only</i>: same verdict, score fell more than case_delta); the evaluators "
        "behind it are the leaves with its lowest delta (several: a tie)."
        if kind == KIND_REGRESSION
        else "Each row is a case that did not pass in this run (after outcome gates); "
        "errored and unscored cases included."
    )
    opened = " open" if kind == KIND_REGRESSION else ""
    return (
        f"<details class='cases-box'{opened}><summary><b>"
        f"{'Regressed' if kind == KIND_REGRESSION else 'Failing'} cases</b> ({total}"
        f"{'' if shown == total else f', the worst {shown} here'})</summary>"
        f"<div class='cases' data-group='{index}' data-kind='{kind}'>"
        "<p>Search, sort by a column, click a row for its per-evaluator scores, judge "
        "reasons and outcome checks.</p><input type='search' class='case-search' "
        f"placeholder='search case, evaluator, reason, justification' "
        f"aria-label='search the {noun}'>"
        "<div class='wrap case-scroll'><table class='case-table'></table></div>"
        f"<p class='note'>{what}{capped} Texts are cut at {MAX_TEXT} characters.</p>"
        "<noscript><p class='note'>The case table needs JavaScript (inline; no network). "
        f"List the cases with {how}.</p></noscript></div></details>"
    )


def case_data_script(rows: pl.DataFrame | None) -> str:
    """The embedded rows (JSON, not executed) and the script that draws the explorers."""
    payload = "[]" if rows is None else cases_json(rows)
    return (
        f"<script type='application/json' id='case-data'>{payload}</script>"
        f"<script>{CASES_SCRIPT}</script>"
    )


def asset(name: str) -> str:
    """A file of this package (style, script, page template) as text, to inline."""
    return files("evalframe._private.report").joinpath(name).read_text(encoding="utf-8")


CASES_SCRIPT = asset("cases.js")
"""The explorer's script (cases.js), inlined in the page."""
