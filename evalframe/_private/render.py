"""Human and machine rendering of output tables for the CLI."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import date, datetime
from typing import Any

import polars as pl
from rich.console import Console
from rich.table import Table

from evalframe._private import schema as S

_plain = not sys.stdout.isatty()
stdout = Console(soft_wrap=False, width=160 if _plain else None)
stderr = Console(stderr=True)


def pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.1f}%"


def num(x: float | None, digits: int = 3) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def ms(x: float | None) -> str:
    return "—" if x is None else f"{x:,.0f} ms"


def yes_no(x: bool | None) -> str:
    if x is None:
        return "—"
    return "[green]pass[/green]" if x else "[red]FAIL[/red]"


def _json_default(value: Any) -> Any:
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    return str(value)


def print_json(payload: Any) -> None:
    sys.stdout.write(json.dumps(payload, default=_json_default, indent=2) + "\n")


def rows(frame: pl.DataFrame) -> list[dict[str, Any]]:
    return frame.to_dicts()


def run_table(summary: pl.DataFrame, title: str = "run summary") -> Table:
    """The run summary as a readable table: rates in percent, gates as pass/FAIL."""
    table = Table(title=title, title_justify="left")
    columns: list[tuple[str, Callable[[dict], str], str]] = [
        ("run", lambda r: str(r[S.RUN_ID]), "left"),
        ("execs", lambda r: str(r[S.N_EXECUTIONS]), "right"),
        ("pass rate", lambda r: _with_se(pct(r[S.PASS_RATE]), r[S.PASS_RATE_SE], True), "right"),
        ("mean score", lambda r: _with_se(num(r[S.MEAN_SCORE]), r[S.MEAN_SCORE_SE]), "right"),
        ("pass/border/fail", lambda r: f"{r[S.N_PASS]}/{r[S.N_BORDERLINE]}/{r[S.N_FAIL]}", "right"),
        ("errored", lambda r: str(r[S.ERRORED]), "right"),
        ("case pass", lambda r: pct(r[S.CASE_PASS_RATE]), "right"),
        ("p95 latency", lambda r: ms(r[S.LATENCY_P95]), "right"),
        ("cost", lambda r: "—" if r[S.COST_USD] is None else f"${r[S.COST_USD]:,.2f}", "right"),
        ("score gate", lambda r: yes_no(r[S.MEAN_SCORE_GATE]), "center"),
        ("rate gate", lambda r: yes_no(r[S.PASS_RATE_GATE]), "center"),
        ("run", lambda r: yes_no(r[S.RUN_PASSED]), "center"),
    ]
    multi = summary[S.CONFIG_ID].n_unique() > 1
    if multi:
        columns.insert(0, ("config", lambda r: str(r[S.CONFIG_ID]), "left"))
    for header, _fn, justify in columns:
        table.add_column(header, justify=justify)  # type: ignore[arg-type]
    for r in summary.iter_rows(named=True):
        table.add_row(*(fn(r) for _h, fn, _j in columns))
    return table


def _with_se(text: str, se: float | None, percent: bool = False) -> str:
    if se is None:
        return text
    return f"{text} ± {100 * se:.1f}" if percent else f"{text} ± {se:.3f}"


@contextmanager
def progress(message: str, *, enabled: bool = True) -> Iterator[None]:
    """A spinner on stderr while a long query runs (silent when stderr is not a terminal)."""
    if not enabled or not stderr.is_terminal:
        yield
        return
    with stderr.status(message, spinner="dots"):
        yield


def _reason_text(code: str, r: dict, limits: Any) -> str:
    """A regression reason code as a sentence with the numbers behind it."""
    if code == "pass_rate_drop":
        allowed = "" if limits is None else f" (allowed {100 * limits.max_pass_rate_drop:.1f})"
        return f"pass rate fell {-100 * r['pass_rate_delta']:.1f} pts{allowed}"
    if code == "mean_score_drop":
        allowed = "" if limits is None else f" (allowed {limits.max_mean_score_drop:.3f})"
        return f"mean score fell {-r['mean_score_delta']:.3f}{allowed}"
    if code == "latency_increase":
        base = r["baseline_latency_mean"]
        rise = r["latency_mean_delta"] / base if base else None
        allowed = "" if limits is None else f" (allowed {100 * limits.max_latency_increase:.0f}%)"
        return f"mean latency rose {pct(rise)}{allowed}"
    return code


def compare_report(
    run_deltas: pl.DataFrame, case_deltas: pl.DataFrame, *, limits: Any = None, worst: int = 10
) -> list:
    """Per pair: headline numbers baseline → candidate, status counts, reasons, the paired
    delta with its 95 % interval and McNemar p, then the regressed cases, worst first."""
    from rich.text import Text

    out: list = []
    for r in run_deltas.iter_rows(named=True):
        b, c = r["baseline_run_id"], r["candidate_run_id"]
        verdict = (
            "[bold red]REGRESSION[/bold red]"
            if r["regression_detected"]
            else "[bold green]no regression[/bold green]"
        )
        out.append(
            Text.from_markup(
                f"\n[bold]{b}[/bold] → [bold]{c}[/bold]  ({r[S.CONFIG_ID]})  {verdict}"
            )
        )
        table = Table(show_header=True, box=None, pad_edge=False)
        for h in ("", "baseline", "candidate", "delta"):
            table.add_column(h, justify="right" if h else "left")
        table.add_row(
            "pass rate",
            pct(r["baseline_pass_rate"]),
            pct(r["candidate_pass_rate"]),
            _signed_pct(r["pass_rate_delta"]),
        )
        table.add_row(
            "mean score",
            num(r["baseline_mean_score"]),
            num(r["candidate_mean_score"]),
            _signed(r["mean_score_delta"]),
        )
        table.add_row(
            "latency mean",
            ms(r["baseline_latency_mean"]),
            ms(r["candidate_latency_mean"]),
            _signed(r["latency_mean_delta"], 0, " ms"),
        )
        table.add_row(
            "latency p95",
            ms(r["baseline_latency_p95"]),
            ms(r["candidate_latency_p95"]),
            _signed(r["latency_p95_delta"], 0, " ms"),
        )
        out.append(table)
        counts = ", ".join(
            f"{r[f'n_{s}']} {s}"
            for s in ("regression", "improvement", "unchanged", "new", "removed", "error")
        )
        out.append(Text(f"cases: {counts}"))
        if r["n_paired"]:
            ci = (
                f"[{_signed(r['mean_delta_ci_low'])}, {_signed(r['mean_delta_ci_high'])}]"
                if r["mean_delta_se"] is not None
                else "(n < 2)"
            )
            out.append(
                Text(
                    f"paired score delta over {r['n_paired']} cases: {_signed(r['mean_delta'])} "
                    f"95% CI {ci}; McNemar p = {r['mcnemar_p']:.4g} "
                    f"({r['n_passed_to_failed']} pass→fail, {r['n_failed_to_passed']} fail→pass)"
                )
            )
        if r["reasons"]:
            reasons = "; ".join(_reason_text(code, r, limits) for code in r["reasons"])
            out.append(Text.from_markup("[red]regression:[/red] ") + Text(reasons))
        regressed = (
            case_deltas.filter(
                (pl.col("baseline_run_id") == b)
                & (pl.col("candidate_run_id") == c)
                & (pl.col(S.CONFIG_ID) == r[S.CONFIG_ID])
                & (pl.col(S.STATUS) == "regression")
            )
            .sort("score_delta", nulls_last=True)
            .head(worst)
        )
        if regressed.height:
            cases = Table(
                title=f"regressed cases (worst {regressed.height})", title_justify="left", box=None
            )
            for h in ("case", "baseline", "candidate", "delta", "passed"):
                cases.add_column(h, justify="left" if h == "case" else "right")
            for row in regressed.iter_rows(named=True):
                cases.add_row(
                    str(row[S.CASE_ID]),
                    num(row["baseline_score"]),
                    num(row["candidate_score"]),
                    _signed(row["score_delta"]),
                    f"{_flag(row['baseline_passed'])} → {_flag(row['candidate_passed'])}",
                )
            out.append(cases)
    return out


def _flag(x: bool | None) -> str:
    return "—" if x is None else ("pass" if x else "fail")


def _signed(x: float | None, digits: int = 3, unit: str = "") -> str:
    return "—" if x is None else f"{x:+,.{digits}f}{unit}"


def _signed_pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:+.1f} pts"


@contextmanager
def sweep_progress(n_configs: int) -> Iterator[Callable[[int, int], None] | None]:
    """A progress bar over config chunks on stderr (when it is a terminal)."""
    if not stderr.is_terminal:
        yield None
        return
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn(f"sweeping {n_configs} configs"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total} chunks"),
        TimeElapsedColumn(),
        console=stderr,
        transient=True,
    ) as bar:
        task = bar.add_task("sweep", total=None)

        def on_chunk(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield on_chunk


def sweep_report(table: pl.DataFrame, params: pl.DataFrame) -> list:
    """Per run: the range of pass rates across the grid, and the parameter that moves
    the verdicts most (largest spread of the mean pass rate across its values)."""
    swept = [c for c in params.columns if c.startswith("sweep_") and params[c].n_unique() > 1]
    out_table = Table(title="sweep: pass rate across the grid", title_justify="left")
    for h in (
        "run",
        "configs",
        "pass rate min",
        "max",
        "configs passing run gates",
        "moves verdicts most",
        "pass-rate spread",
    ):
        out_table.add_column(h, justify="left" if h in ("run", "moves verdicts most") else "right")
    for (run_id,), runs in table.group_by(S.RUN_ID, maintain_order=True):
        best, spread = "—", 0.0
        for col in swept:
            means = runs.group_by(col).agg(pl.col(S.PASS_RATE).mean())[S.PASS_RATE]
            width = (means.max() or 0.0) - (means.min() or 0.0)
            if width > spread:
                best, spread = col.removeprefix("sweep_"), width
        out_table.add_row(
            str(run_id),
            str(runs.height),
            pct(runs[S.PASS_RATE].min()),
            pct(runs[S.PASS_RATE].max()),
            f"{int(runs[S.RUN_PASSED].sum())}/{runs.height}",
            best,
            f"{100 * spread:.1f} pts",
        )
    return [out_table]
