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
