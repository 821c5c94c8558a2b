"""The report's words for a pair's three-outcome decision (SPEC §12): the decision and,
for each part that is not "pass", the limit behind it and how many more paired cases would
settle an open interval — the terminal's words (`stats.power.decision_part_text`)."""

from __future__ import annotations

import html
from typing import Any

import polars as pl

from evalframe._private import schema as S
from evalframe._private.config import Decide
from evalframe._private.display import has_paired_cases
from evalframe._private.stats.power import decision_part_text, decision_parts_table

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
            "<p class='decision'>Decision (non-inferiority, SPEC §12): "
            f"<span class='pill {_PILL.get(decision, 'tie')}'>{html.escape(str(decision))}</span>"
            + (": " + "; ".join(html.escape(t) for t in reasons) if reasons else "")
            + ".</p>"
        )
    return out
