"""Notes the compare report adds from the statistics of SPEC §10: slices whose regression
survives the Benjamini–Hochberg correction, and pairs too small to see the configured
limits (their minimum detectable effect exceeds the limit)."""

from __future__ import annotations

from typing import Any

import polars as pl
from rich.text import Text

from evalframe._private import schema as S
from evalframe._private.cli.render import has_paired_cases, p_value, say
from evalframe._private.stats.power import too_small
from evalframe._private.summaries.slices import SIGNIFICANCE, significant_regressions


def change(metric: str, x: float) -> str:
    """A change on 0-1 as the report shows it: pass rate in points, mean score as is."""
    return f"{100 * x:.1f} pts" if metric == "pass rate" else f"{x:.3f}"


def power_notes(run_deltas: pl.DataFrame, limits: Any) -> list[Text]:
    """One line per pair and limit its paired cases cannot see (α 0.05, power 0.8):
    mde_mean_score > max_mean_score_drop, or mde_pass_rate > max_pass_rate_drop when that
    limit is above 0 (a limit of 0 flags any drop; no sample size sees 0). A pair without
    cases scored in both runs has no paired statistics, so no power note. Run ids are
    shown literally (`render.say`)."""
    notes = []
    for r in run_deltas.iter_rows(named=True):
        if not has_paired_cases(r):
            continue
        for t in too_small(r, limits):
            notes.append(
                say(
                    f"[yellow]too small:[/yellow] {{}} → {{}}: {t.n_paired} paired cases see a "
                    f"{t.metric} change of {change(t.metric, t.mde)} or more (α 0.05, power "
                    f"0.8), not the {change(t.metric, t.limit)} of {t.limit_name}; `evalframe "
                    "plan` says how many cases would.",
                    r[S.BASELINE_RUN_ID],
                    r[S.CANDIDATE_RUN_ID],
                )
            )
    return notes


def slice_notes(slice_deltas: pl.DataFrame | None) -> list[Text]:
    """One line per pair naming the slices whose regression survives Benjamini–Hochberg
    (q < 0.05 and more passed → failed flips than the reverse); run ids, the slice and
    its values shown literally (`render.say`)."""
    if slice_deltas is None or slice_deltas.is_empty():
        return []
    hits = significant_regressions(slice_deltas)
    by_pair = (
        slice_deltas.select(S.BASELINE_RUN_ID, S.CANDIDATE_RUN_ID, S.SLICE)
        .unique(maintain_order=True)
        .join(
            hits.group_by(S.BASELINE_RUN_ID, S.CANDIDATE_RUN_ID, maintain_order=True).agg(
                pl.col(S.SLICE_VALUE).fill_null("(none)").alias("_values"),
                pl.col(S.Q_VALUE).alias("_q"),
            ),
            on=[S.BASELINE_RUN_ID, S.CANDIDATE_RUN_ID],
            how="left",
        )
    )
    notes = []
    for r in by_pair.iter_rows(named=True):
        pair = (r[S.BASELINE_RUN_ID], r[S.CANDIDATE_RUN_ID])
        found = list(zip(r["_values"] or [], r["_q"] or [], strict=True))
        if found:
            names = ", ".join(f"{{}} (q {p_value(q)})" for _v, q in found)
            notes.append(
                say(
                    "[red]slices that regressed[/red] ({}, Benjamini–Hochberg q < "
                    f"{SIGNIFICANCE}): {{}} → {{}}: " + names,
                    r[S.SLICE],
                    *pair,
                    *(v for v, _q in found),
                )
            )
        else:
            notes.append(
                say(
                    "no {} slice of {} → {} regressed beyond chance (Benjamini–Hochberg "
                    f"q < {SIGNIFICANCE}).",
                    r[S.SLICE],
                    *pair,
                )
            )
    return notes
