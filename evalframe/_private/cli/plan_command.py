"""`evalframe plan`: how many cases a suite needs to see a given change (SPEC §10, power).

From one run's clustered variance: σ_c = se · √G is the per-case standard deviation the
run's clustered standard error implies (G cases); a two-sided 5 % test detects a change
δ with 80 % power when the suite has n = ⌈((z_.975 + z_.80) · σ_c / δ)²⌉ cases, and with
the current G it detects MDE = (z_.975 + z_.80) · se. Formulas: docs/statistics.md.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
from rich.table import Table

from evalframe import load_config, pairs_for, score_tables
from evalframe._private import schema as S
from evalframe._private.cli.render import num, print_json, progress, say, stdout
from evalframe._private.compare.pairs import check_runs
from evalframe._private.stats.power import MDE_FACTOR, plan_rows


def plan_command(
    dataset: Path,
    *,
    detect: float = 0.03,
    run: str | None = None,
    config: Path | None = None,
    preset: str | None = None,
    as_json: bool = False,
) -> None:
    """The body of `evalframe plan` (its options and help: evalframe/cli.py)."""
    cfg = load_config(config, preset=preset)
    with progress(f"scoring {dataset} under config {cfg.config_id}"):
        summary = score_tables(dataset, cfg)[S.RUN_SUMMARY]
    assert isinstance(summary, pl.DataFrame)
    summary = summary.filter(pl.col(S.N_EXECUTIONS) > 0)
    if run is None:
        order = summary.select(
            S.RUN_ID, *([S.CREATED_AT] if S.CREATED_AT in summary.columns else [])
        )
        run = pairs_for(order)[-1][1] if summary.height >= 2 else summary[S.RUN_ID][0]
    check_runs([run], summary[S.RUN_ID].to_list())
    table = plan_rows(summary.filter(pl.col(S.RUN_ID) == run), detect)
    if as_json:
        print_json(table.to_dicts())
        return
    stdout.print(render_plan(table, run, detect))


def change_text(detect: float) -> str:
    """--detect in both metrics' units: points of pass rate, and mean score on 0-1."""
    return f"{detect:g} ({100 * detect:.1f} pts of pass rate, {detect:.3f} of mean score)"


def mde_text(metric: str, mde: float | None) -> str:
    """A minimum detectable change in its metric's unit: pass rate in points, mean score
    as a number on 0-1."""
    if mde is None:
        return "—"
    return f"{100 * mde:.1f} pts" if metric == "pass_rate" else num(mde)


def render_plan(table: pl.DataFrame, run: str, detect: float) -> Table:
    out = Table(
        title=say(
            f"cases needed to see a change of {change_text(detect)} (α 0.05, power 0.8) — run {{}}",
            run,
        ),
        caption=(
            f"σ_c = se·√G from the clustered per-case variance; cases needed = "
            f"⌈({MDE_FACTOR}·σ_c/δ)²⌉; MDE now = {MDE_FACTOR}·se (the smallest change the "
            "run's cases see now: pass rate in points, mean score on 0-1). — = fewer than 2 "
            "cases."
        ),
    )
    for header in ("metric", "cases now", "σ_c", "MDE now", "cases needed"):
        out.add_column(header, justify="left" if header == "metric" else "right")
    for r in table.iter_rows(named=True):
        needed = r["cases_needed"]
        out.add_row(
            r["metric"],
            f"{r['cases']:,}",
            num(r["sigma_c"]),
            mde_text(r["metric"], r["mde"]),
            "—" if needed is None else f"{needed:,}",
        )
    return out
