"""`evalframe plan`: how many cases a suite needs to see a given change (docs/statistics.md#power,
power).

From one run's clustered variance: σ_c = se · √G is the per-case standard deviation the
run's clustered standard error implies (G cases); a two-sided 5 % test detects a change
δ with 80 % power when the suite has n = ⌈((z_.975 + z_.80) · σ_c / δ)²⌉ cases, and with
the current G it detects MDE = (z_.975 + z_.80) · se. Formulas: docs/statistics.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

import evalframe as ef
from evalframe.cli._console import Lazy, stdout
from evalframe.cli._options import DatasetArg, policy, shared

if TYPE_CHECKING:
    import polars as pl

    import evalframe.cli._render as ui
    from evalframe import format as fmt
else:
    ui, fmt = Lazy("evalframe.cli._render"), Lazy("evalframe.format")


@shared("config", "preset", "as_json")
def plan(
    dataset: DatasetArg,
    detect: Annotated[
        float,
        typer.Option(
            "--detect",
            "-d",
            min=0.0001,
            max=1.0,
            help="The change to detect, on 0-1 (0.03 = 3 points of pass rate / mean score).",
        ),
    ] = 0.03,
    run: Annotated[
        str | None,
        typer.Option("--run", "-r", help="Run whose variance to use (default: the newest)."),
    ] = None,
    **options: Any,
) -> None:
    """How many cases a suite needs to see a change of --detect (α 0.05, power 0.8), from
    one run's clustered per-case variance; and the smallest change it sees now.

    Example: [bold]evalframe plan runs/ --detect 0.03 --run 2026-11-01-v1.6[/bold]
    """
    cfg = policy(options)
    with ui.progress(f"scoring {dataset} under config {cfg.config_id}"):
        table = ef.power_plan(dataset, cfg, detect=detect, run=run)
    if options["as_json"]:
        ui.print_json(table.to_dicts())
        return
    stdout.print(render_plan(table, table["run_id"][0], detect))
    stdout.print(render_design(table))


def render_design(frame: pl.DataFrame) -> Table:
    """Cases or attempts: the run mean's standard error now and after doubling either,
    from variance_components; which of the two buys more."""

    def se(column: str) -> Any:  # — for all of a row without a standard error now
        return lambda r: "—" if r["se_now"] is None else fmt.num(r[column])

    def buys_more(r: dict) -> str:
        if r["se_now"] is None:
            return "—"
        better = r["se_twice_the_cases"] < r["se_twice_the_attempts"] - 1e-12
        return "cases" if better else "either (no spread between cases)"

    columns = [
        ("metric", lambda r: r["metric"]),
        ("now", se("se_now")),
        ("twice the cases", se("se_twice_the_cases")),
        ("twice the attempts", se("se_twice_the_attempts")),
        ("buys more", buys_more),
    ]
    caption = (
        "from variance_components: sqrt(var_between/cases + var_within/values); twice "
        "the cases and twice the attempts each add as many executions. — = fewer than 2 "
        "cases or no case with a second attempt."
    )
    title = "more cases or more attempts? the run mean's standard error"
    rows = frame.iter_rows(named=True)
    return ui.table(
        title, columns, rows, ("metric", "buys more"), title_justify="center", caption=caption
    )


def change_text(detect: float) -> str:
    """--detect in both metrics' units: points of pass rate, and mean score on 0-1."""
    return f"{detect:g} ({100 * detect:.1f} pts of pass rate, {detect:.3f} of mean score)"


def mde_text(metric: str, mde: float | None) -> str:
    """A minimum detectable change in its metric's unit: pass rate in points, mean score
    as a number on 0-1."""
    if mde is None:
        return "—"
    return f"{100 * mde:.1f} pts" if metric == "pass_rate" else fmt.num(mde)


def render_plan(frame: pl.DataFrame, run: str, detect: float) -> Table:
    title = ui.say(
        f"cases needed to see a change of {change_text(detect)} (α 0.05, power 0.8) — run {{}}",
        run,
    )
    caption = (
        f"σ_c = se·√G from the clustered per-case variance; cases needed = "
        f"⌈({fmt.MDE_FACTOR}·σ_c/δ)²⌉; MDE now = {fmt.MDE_FACTOR}·se (the smallest change the "
        "run's cases see now: pass rate in points, mean score on 0-1). — = fewer than 2 "
        "cases."
    )
    columns = [
        ("metric", lambda r: r["metric"]),
        ("cases now", lambda r: f"{r['cases']:,}"),
        ("σ_c", lambda r: fmt.num(r["sigma_c"])),
        ("MDE now", lambda r: mde_text(r["metric"], r["mde"])),
        ("cases needed", lambda r: "—" if r["cases_needed"] is None else f"{r['cases_needed']:,}"),
    ]
    rows = frame.iter_rows(named=True)
    return ui.table(title, columns, rows, ("metric",), title_justify="center", caption=caption)
