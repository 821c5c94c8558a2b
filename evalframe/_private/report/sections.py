"""Report sections of the analyst's view (issue 21): the policy in the header, the per-pair
evaluator summary, and the case explorer (every regressed case of a pair, every failing case
of a run; searchable, sortable, expandable to per-evaluator scores, reasons and outcome
checks) with its small inline script. No network: the script and its data are in the page.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from importlib.resources import files
from typing import Any

import polars as pl

from evalframe._private import schema as S
from evalframe._private.compare import evaluator_summary as ES
from evalframe._private.display import SHORT, VALUE, policy_lines, visible
from evalframe._private.report.cases import (
    CASE_PAIRS,
    CASE_RUNS,
    KIND,
    KIND_REGRESSION,
    MAX_TEXT,
    cases_json,
)
from evalframe._private.rules.constants import Z_95

GROUP = "group"
"""Column of the embedded rows naming their explorer (a pair's or a run's) on the page."""


def _e(x: Any) -> str:
    return html.escape(visible("" if x is None else str(x)))


def _id(x: Any) -> str:
    return f"<bdi>{_e(x)}</bdi>"


def _num(x: float | None, digits: int = 3) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def _signed(x: float | None, digits: int = 3) -> str:
    return "—" if x is None else f"{x:+.{digits}f}"


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.1f}%"


# --- policy ---------------------------------------------------------------------------
def _one_policy(cfg: Any) -> str:
    """One config's policy (`display.policy_lines`, shared with the terminal) as list items,
    with its LONG explanations (not the terminal's SHORT forms), values in bold."""
    return "".join(
        "<li>"
        + "".join(
            f"<b>{_e(text)}</b>" if kind == VALUE else _e(text)
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
            f"mean score meets {m:g} and pass rate meets {_pct(p)}" for m, p in gates.iter_rows()
        )
        items = (
            f"<li>config {_e(ids)}; run gates: {_e(gate_text)}. Threshold, borderline band and "
            "compare limits: pass the config (build_report(..., config=cfg)) to state them.</li>"
        )
    return f"<section id='policy' class='policy'><b>Policy</b><ul>{items}</ul></section>"


# --- evaluator summary ----------------------------------------------------------------
def evaluator_summary_table(summary: pl.DataFrame | None, r: dict[str, Any]) -> str:
    """The pair's evaluator summary (compare/evaluator_summary.py) as a table, ties marked."""
    if summary is None or summary.height == 0:
        return ""
    mine = summary.filter(
        (pl.col(S.CONFIG_ID) == r[S.CONFIG_ID])
        & (pl.col(S.BASELINE_RUN_ID) == r[S.BASELINE_RUN_ID])
        & (pl.col(S.CANDIDATE_RUN_ID) == r[S.CANDIDATE_RUN_ID])
    )
    if mine.height == 0:
        return ""
    n_reg = int(mine[ES.N_REGRESSION].max() or 0)  # type: ignore[arg-type]
    rows = []
    for x in mine.iter_rows(named=True):
        tie = " <span class='pill tie'>tie</span>" if x[ES.TIED] else ""
        worst = f"{x[ES.N_WORST]}"
        if x[ES.N_WORST_TIED]:
            worst += f" <span class='meta'>({x[ES.N_WORST_TIED]} tied)</span>"
        interval = (
            ""
            if x[ES.MEAN_DELTA_CI_LOW] is None
            else f" <span class='meta'>[{_signed(x[ES.MEAN_DELTA_CI_LOW])}, "
            f"{_signed(x[ES.MEAN_DELTA_CI_HIGH])}]</span>"
        )
        cls = " class='bad'" if (x[ES.MEAN_DELTA_CI_HIGH] or 0) < 0 else ""
        rows.append(
            "<tr>"
            f"<td class='l'>{_id(x[S.PATH])}{tie}</td>"
            f"<td>{x[ES.N_FELL_IN_REGRESSIONS]} of {n_reg}</td>"
            f"<td>{_pct(x[ES.SHARE_OF_REGRESSIONS])}</td>"
            f"<td>{worst}</td>"
            f"<td>{x[ES.N_FELL]} of {x[ES.N_PAIRED]}</td>"
            f"<td{cls}>{_signed(x[ES.MEAN_DELTA])}{interval}</td>"
            "</tr>"
        )
    head = "".join(
        f"<th{' class=l' if i == 0 else ''}>{h}</th>"
        for i, h in enumerate(
            [
                "evaluator",
                "fell in regressed cases",
                "share of the regressions",
                "lowest in (ties)",
                "fell in paired cases",
                "mean delta [paired 95 % interval]",
            ]
        )
    )
    return (
        "<div class='evsum'><p><b>Which evaluator moved</b> (first: the share of the pair's "
        f"{n_reg} regressed cases in which it fell):</p>"
        f"<div class='wrap'><table class='evsum'><thead><tr>{head}</tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table></div>"
        "<p class='note'>An evaluator <i>fell</i> in a case when its score delta exceeds "
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
        f"<code>evalframe cases {_e(data)} --run {_e(run)} --status {status}</code> (after "
        f"<code>evalframe {'compare' if kind == KIND_REGRESSION else 'score'} {_e(data)}</code>)"
        f' or SQL: <code>evalframe sql {_e(data)} "select * from '
        f"{'case_deltas' if kind == KIND_REGRESSION else 'case_summary'} where "
        f"{'candidate_run_id' if kind == KIND_REGRESSION else 'run_id'} = '{_e(run)}' and "
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


CASES_CSS = files("evalframe._private.report").joinpath("cases.css").read_text(encoding="utf-8")
"""The explorer's and the policy box's style (cases.css), inlined in the page."""


CASES_SCRIPT = files("evalframe._private.report").joinpath("cases.js").read_text(encoding="utf-8")
"""The explorer's script (cases.js), inlined in the page."""
