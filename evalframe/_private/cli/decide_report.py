"""`evalframe compare --decide` (SPEC §12): each pair's three-outcome decision in the
terminal, and the command's exit code.

The decision itself is run_deltas' `decision` / `decision_reasons` (rules/decide.py, run by
every engine); this module only says it: per pair, the decision and, for each part that is
not "pass", which limit failed it or left it open and — for an open interval — how many
more paired cases would settle it (`stats.power.decision_parts_table`, whose count is the
rule `rules/decide.py cases_to_settle`).
"""

from __future__ import annotations

from typing import Any

import polars as pl
from rich.text import Text

from evalframe._private import schema as S
from evalframe._private.cli.render import Prose, say
from evalframe._private.stats.power import decision_part_text, decision_parts_table

EXIT_PASS = 0
"""`compare --decide`: every pair passed."""
EXIT_FAIL = 1
"""`compare --decide`: at least one pair failed (as without --decide: 1 = a regression)."""
EXIT_INCONCLUSIVE = 3
"""`compare --decide`: no pair failed, at least one is inconclusive (2 is bad input)."""

_STYLE = {S.DECISION_PASS: "bold green", S.DECISION_FAIL: "bold red"}


def decide_exit_code(run_deltas: pl.DataFrame) -> int:
    """1 if any pair's decision is "fail", else 3 if any is "inconclusive", else 0 (also
    when nothing was compared)."""
    decisions = set(run_deltas[S.DECISION].drop_nulls().to_list()) if run_deltas.height else set()
    if S.DECISION_FAIL in decisions:
        return EXIT_FAIL
    if S.DECISION_INCONCLUSIVE in decisions:
        return EXIT_INCONCLUSIVE
    return EXIT_PASS


def decision_lines(run_deltas: pl.DataFrame, decide: Any, limits: Any) -> list[Prose]:
    """Per pair: `decision: <value>  BASELINE → CANDIDATE (margins)` and one line per part
    that is not "pass" (the limit that failed it or left it open; for an open interval,
    how many more paired cases settle it). `decide` / `limits` are the config's `decide`
    and `compare` blocks. Run ids are shown literally (`render.say`)."""
    if not run_deltas.height:
        return []
    parts = decision_parts_table(run_deltas, decide, limits)
    margins = (
        f"pass-rate margin {100 * decide.pass_rate_margin:.1f} pts, "
        f"mean-score margin {decide.mean_score_margin:.3f}"
    )
    out = [Prose(say("\n[bold]decisions[/bold] (non-inferiority, " + margins + "):"))]
    for r in run_deltas.iter_rows(named=True):
        decision = r[S.DECISION]
        style = _STYLE.get(decision, "bold yellow")
        out.append(
            Prose(
                say(
                    f"  [{style}]{{}}[/{style}]  {{}} → {{}}",
                    decision,
                    r[S.BASELINE_RUN_ID],
                    r[S.CANDIDATE_RUN_ID],
                )
            )
        )
        mine = parts.filter(
            (pl.col(S.CONFIG_ID) == r[S.CONFIG_ID])
            & (pl.col(S.BASELINE_RUN_ID) == r[S.BASELINE_RUN_ID])
            & (pl.col(S.CANDIDATE_RUN_ID) == r[S.CANDIDATE_RUN_ID])
        )
        for part in mine.iter_rows(named=True):
            out.append(Prose(Text("    " + decision_part_text(part))))
    return out
