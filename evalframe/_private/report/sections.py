"""The report's building blocks (escaped text, tables, figures, the prose of text.html) and
the analyst's parts: the policy, a pair's decision, the evaluator summary and the case
explorer (searchable, sortable, expandable; its script and data are inlined in the page).
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from importlib.resources import files
from string import Template
from typing import Any

import polars as pl

from evalframe._private import schema as S
from evalframe._private.compare import evaluator_summary as ES
from evalframe._private.compare.compare import PAIR_KEY
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
    RATE_INTERVAL,
    SHORT,
    VALUE,
    has_paired_cases,
    pct,
    policy_lines,
    signed,
    visible,
)

GROUP = "group"
"""Column of the embedded rows naming their explorer (a pair's or a run's) on the page."""


def asset(name: str) -> str:
    """A file of this package (style, script, page template) as text, to inline."""
    return files("evalframe._private.report").joinpath(name).read_text(encoding="utf-8")


_BLOCKS = re.split(r"^<!-- (\w+) -->\n", asset("text.html"), flags=re.M)
TEXT = {
    k: Template(v.removesuffix("\n").replace("\n", " "))
    for k, v in zip(_BLOCKS[1::2], _BLOCKS[2::2], strict=True)
}
"""The page's prose (text.html), by block name."""


def text(name: str, **values: Any) -> str:
    return TEXT[name].substitute(values)


def esc(x: Any) -> str:
    """Text for the page: control, separator and bidi characters made visible, then
    HTML-escaped."""
    return html.escape(visible("" if x is None else str(x)))


def bdi(x: Any) -> str:
    """An id in a `<bdi>`: a right-to-left id cannot reorder the text around it."""
    return f"<bdi>{esc(x)}</bdi>"


def bracket(value: str, lo: str, hi: str) -> str:
    return f"{value} <span class='meta'>[{lo}, {hi}]</span>"


LEFT = " class='l'"


def table(headers: Sequence[str], rows: list[list[str]], left: int = 1, cls: str = "") -> str:
    """An HTML table of HTML cells (headers are escaped); the first `left` columns are
    left-aligned, and such a cell breaks anywhere when longer than its column (report.css)."""

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


def figure(name: str, chart: Any, cls: str = "chart", see: str = "", more: str = "") -> str:
    """A chart as an inline SVG figure with its caption (caption_NAME, then `more`) and what
    it left out (`chart_note`, followed by `see` when runs or pairs were thinned)."""
    svg = to_svg(chart)
    caption = text(f"caption_{name}", rate_interval=RATE_INTERVAL) + more
    note = chart_note(chart)
    if note and see and THINNED in note:
        note = f"{note} {see}"
    thinned = f" <span class='thinned'>{esc(note)}</span>" if note else ""
    return (
        f"<figure class='{cls}' id='{cls.split('-')[0]}-{name}' data-chart='{name}'>"
        f"{svg[svg.index('<svg') :]}<figcaption>{esc(caption)}{thinned}</figcaption></figure>"
    )


def of_pair(frame: pl.DataFrame, r: dict[str, Any]) -> pl.DataFrame:
    return frame.filter(*(pl.col(k) == r[k] for k in PAIR_KEY))


def policy_section(config: Any, run_summary: pl.DataFrame) -> str:
    """The policy of each config (a Config or a sequence of them) as `policy_lines` states
    it, long forms, values in bold; without a config, what run_summary carries."""
    configs: Sequence[Any] = (
        [] if config is None else list(config) if isinstance(config, (list, tuple)) else [config]
    )
    items = "".join(
        "<li>"
        + "".join(
            f"<b>{esc(t)}</b>" if kind == VALUE else esc(t) for t, kind in line if kind != SHORT
        )
        + "</li>"
        for cfg in configs
        for line in policy_lines(cfg)
    )
    if not configs:
        gates = run_summary.select(S.MIN_MEAN_SCORE, S.MIN_PASS_RATE).unique()
        items = text(
            "no_config",
            ids=esc(", ".join(sorted(run_summary[S.CONFIG_ID].unique().to_list()))),
            gates=esc(
                "; ".join(
                    f"mean score meets {m:g} and pass rate meets {pct(p)}"
                    for m, p in gates.iter_rows()
                )
            ),
        )
    return f"<section id='policy' class='policy'><b>Policy</b><ul>{items}</ul></section>"


_PILL = {S.DECISION_PASS: "ok", S.DECISION_FAIL: "bad", S.DECISION_INCONCLUSIVE: "tie"}


def decision_notes(run_deltas: pl.DataFrame, decide: Any, limits: Any) -> dict[tuple, str]:
    """(config_id, baseline, candidate) → the pair's decision in the terminal's words
    (`decide` None: the defaults); empty without the decision columns or limits. A pair
    without paired cases gets the names of its parts, no numbers."""
    if S.DECISION not in run_deltas.columns or limits is None:
        return {}
    parts = decision_parts_table(run_deltas, Decide() if decide is None else decide, limits)
    why: dict[tuple, list[str]] = {}
    for p in parts.iter_rows(named=True):
        why.setdefault(tuple(p[k] for k in PAIR_KEY), []).append(decision_part_text(p))
    out: dict[tuple, str] = {}
    for r in run_deltas.iter_rows(named=True):
        key = tuple(r[k] for k in PAIR_KEY)
        reasons = why.get(key, [])
        if not has_paired_cases(r):
            reasons = [p.replace("_", " ") for p in r[S.DECISION_REASONS] or []]
        out[key] = (
            "<p class='decision'>Decision (non-inferiority, docs/statistics.md): "
            f"<span class='pill {_PILL.get(r[S.DECISION], 'tie')}'>{esc(r[S.DECISION])}</span>"
            + (": " + "; ".join(esc(t) for t in reasons) if reasons else "")
            + ".</p>"
        )
    return out


EVSUM_HEADERS = (
    "evaluator",
    "fell in regressed cases",
    "share of the regressions",
    "lowest in (ties)",
    "fell in paired cases",
    "mean delta [paired 95 % interval]",
)


def evaluator_summary_table(summary: pl.DataFrame | None, r: dict[str, Any]) -> str:
    """The pair's evaluator summary (compare/evaluator_summary.py), ties marked."""
    mine = None if summary is None else of_pair(summary, r)
    if mine is None or mine.height == 0:
        return ""
    n_reg = int(mine[ES.N_REGRESSION].max() or 0)  # type: ignore[arg-type]
    rows = []
    for x in mine.iter_rows(named=True):
        worst = f"{x[ES.N_WORST]}"
        if x[ES.N_WORST_TIED]:
            worst += f" <span class='meta'>({x[ES.N_WORST_TIED]} tied)</span>"
        delta = signed(x[ES.MEAN_DELTA])
        if x[ES.MEAN_DELTA_CI_LOW] is not None:
            lo, hi = signed(x[ES.MEAN_DELTA_CI_LOW]), signed(x[ES.MEAN_DELTA_CI_HIGH])
            delta = bracket(delta, lo, hi)
        if (x[ES.MEAN_DELTA_CI_HIGH] or 0) < 0:
            delta = f"<span class='bad'>{delta}</span>"
        rows.append(
            [
                bdi(x[S.PATH]) + (" <span class='pill tie'>tie</span>" if x[ES.TIED] else ""),
                f"{x[ES.N_FELL_IN_REGRESSIONS]} of {n_reg}",
                pct(x[ES.SHARE_OF_REGRESSIONS]),
                worst,
                f"{x[ES.N_FELL]} of {x[ES.N_PAIRED]}",
                delta,
            ]
        )
    return text("evsum", n=n_reg, table=table(EVSUM_HEADERS, rows, cls="evsum"), z=Z_95)


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


def case_explorer(groups: dict[tuple, tuple[int, int]], key: tuple, total: int, data: str) -> str:
    """The explorer of one pair's regressed cases or one run's failing cases (`key`: kind,
    config_id, baseline_run_id, run_id), with what was left out and how to list it."""
    kind, run = key[0], key[3]
    reg = kind == KIND_REGRESSION
    how = text(
        "how",
        data=data,
        run=esc(run),
        status=kind,
        command="compare" if reg else "score",
        table="case_deltas" if reg else "case_summary",
        column="candidate_run_id" if reg else "run_id",
        where="status = 'regression'" if reg else "not passed",
    )
    noun = "regressed cases" if reg else "failing cases"
    found = groups.get(key)
    if found is None:
        cap = f"{CASE_PAIRS} pairs" if reg else f"{CASE_RUNS} runs"
        return text("cases_left_out", total=total, noun=noun, cap=cap, how=how) if total else ""
    index, shown = found
    capped = (
        f" The page holds the worst {shown} of {total}; the other {total - shown} with {how}."
        if total > shown
        else f" All {total} are here; also with {how}."
    )
    return text(
        "case_box",
        open=" open" if reg else "",
        title="Regressed" if reg else "Failing",
        total=total,
        worst="" if shown == total else f", the worst {shown} here",
        index=index,
        kind=kind,
        noun=noun,
        what=text(f"what_{kind}"),
        capped=capped,
        max_text=MAX_TEXT,
        how=how,
    )


def case_data_script(rows: pl.DataFrame | None) -> str:
    """The embedded rows (JSON, not executed) and the script that draws the explorers."""
    payload = "[]" if rows is None else cases_json(rows)
    return (
        f"<script type='application/json' id='case-data'>{payload}</script>"
        f"<script>{asset('cases.js')}</script>"
    )
