"""Human and machine rendering of output tables for the CLI."""

from __future__ import annotations

import base64
import json
import math
import sys
from collections.abc import Callable, Container, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from typing import Any

import polars as pl
from rich.console import Console, Group, JustifyMethod
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table
from rich.text import Text

from evalframe.cli._console import stderr as stderr
from evalframe.cli._console import stdout as stdout
from evalframe.format import (
    INTERVALS_NOTE,
    LONG,
    VALUE,
    ms,
    num,
    pass_at_text,
    pass_k_values,
    pct,
    policy_lines,
    run_rate,
    visible,
    with_se,
    with_wilson,
)

# Run ids, case ids, evaluator names, config ids, slice values and paths come from other
# tools' files. They reach the terminal only through `say`, `id_text` and `message_text`:
# shown literally (never as markup), control, separator and bidi characters made visible
# by the one rule of `format.visible`.

_SLOT = "\x00"
"""Marks a `{}` of a `say` template while its markup is parsed (never part of a template;
in a value, format.visible shows it as \\x00)."""


def say(template: str, *values: object) -> Text:
    """A message carrying data: `template` is rich markup whose `{}` (literal braces, not
    str.format) each take the next value, shown literally with the style around its `{}`:
    never parsed as markup (`[/x]` and `[bold]r2[/bold]` print as themselves), control,
    separator and bidi characters made visible (`format.visible`), no emoji codes. Every
    message that quotes an id, a path or another value from data goes through here."""
    pieces = template.split("{}")
    if len(pieces) != len(values) + 1:
        raise ValueError(f"{template!r} has {len(pieces) - 1} {{}} for {len(values)} values")
    parsed = Text.from_markup(_SLOT.join(pieces), emoji=False)
    out, start = Text(style=parsed.style), 0
    for value in values:
        at = parsed.plain.index(_SLOT, start)
        shown = id_text(value)
        for span in parsed[at : at + 1].spans:  # the style the `{}` stood in
            shown.stylize(span.style)
        out.append_text(parsed[start:at])
        out.append_text(shown)
        start = at + 1
    out.append_text(parsed[start:])
    return out


def id_text(value: object) -> Text:
    """A data value as a renderable (a table cell, a line): a Text, never parsed as
    markup, with control characters visible."""
    return Text(visible(str(value)))


def visible_lines(text: str) -> str:
    """`text` with control characters visible (`format.visible`) line by line: its own
    line breaks stay line breaks."""
    return "\n".join(visible(line) for line in text.split("\n"))


def message_text(message: str, style: str = "") -> Text:
    """A plain message that carries data (an error's text: it quotes ids and example
    keys) as a Text: never parsed as markup, control characters visible line by line (its
    own line breaks stay line breaks)."""
    return Text(visible_lines(message), style=style)


def error_line(exc: BaseException | str) -> Text:
    """`error: MESSAGE` as the CLI prints an error: the message literal and visible."""
    return Text("error:", style="bold red") + " " + message_text(str(exc))


def prose(text: Text | str) -> Group:
    """A paragraph that wraps between words at the console width, though the consoles
    print with soft_wrap (which keeps a path in a message one piece in a pipe)."""
    out = text.copy() if isinstance(text, Text) else Text(text)
    out.no_wrap, out.overflow = False, "fold"
    return Group(out)


UNSCORED_FOOTNOTE = "— = no execution of the run has a score (unscored or errored)."


def policy_note(cfg: Any) -> Group:
    """The policy in one short paragraph headed "policy:" (`format.policy_lines`, the
    report header's source, without its LONG explanations), values in bold, the config id
    shown literally."""
    text = Text("policy: ")
    for k, line in enumerate(policy_lines(cfg)):
        if k:
            text.append(" ")
        for piece, kind in line:
            if kind != LONG:
                text.append(visible(piece), style="bold" if kind == VALUE else "")
    return prose(text)


def yes_no(x: bool | None) -> str:
    if x is None:
        return "—"
    return "[green]pass[/green]" if x else "[red]FAIL[/red]"


def iso_duration(value: timedelta) -> str:
    """A timedelta as ISO 8601 text (P1DT2H3M4.5S; PT0S for zero; -P... when negative)."""
    sign = "-" if value < timedelta(0) else ""
    value = abs(value)
    days, rest = value.days, value.seconds
    hours, rest = divmod(rest, 3600)
    minutes, seconds = divmod(rest, 60)
    secs = f"{seconds}.{value.microseconds:06d}".rstrip("0").rstrip(".")
    out = f"{days}D" if days else ""
    clock = "".join(
        f"{v}{u}" for v, u in ((hours, "H"), (minutes, "M"), (secs, "S")) if v not in (0, "0")
    )
    if not out and not clock:
        return "PT0S"
    return f"{sign}P{out}" + (f"T{clock}" if clock else "")


def json_value(value: Any) -> Any:
    """A value JSON cannot hold as itself, as text or a number: datetimes and times in ISO
    8601, durations as ISO 8601 durations, bytes in base64, decimals as numbers."""
    if isinstance(value, (datetime, date, time)):
        return value.isoformat()
    if isinstance(value, timedelta):
        return iso_duration(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, Decimal):
        if not value.is_finite():
            return str(value)
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else str(value)
    return str(value)


def print_json(payload: Any) -> None:
    sys.stdout.write(json.dumps(payload, default=json_value, indent=2) + "\n")


def json_text(value: object) -> str:
    """A nested cell as JSON text: lists as JSON lists, structs as objects."""
    if isinstance(value, pl.Series):
        value = value.to_list()
    return json.dumps(value, default=json_value, ensure_ascii=False)


def flat(frame: pl.DataFrame) -> pl.DataFrame:
    """CSV cannot hold nested values: a list, array or struct cell becomes its JSON text
    (`[1, 2]`, `{"a": 1}`); binary cells become base64."""
    out: list[pl.Series | pl.Expr] = []
    for name, dtype in frame.schema.items():
        if dtype.is_nested():  # output formatting: one JSON text per printed cell
            texts = [None if v is None else json_text(v) for v in frame[name].to_list()]
            out.append(pl.Series(name, texts, dtype=pl.String))
        elif dtype == pl.Binary:
            out.append(pl.col(name).bin.encode("base64"))
    return frame.with_columns(out) if out else frame


def print_csv(frame: pl.DataFrame) -> None:
    """The frame as CSV on stdout (nested cells as JSON text): data for a pipe as it is; on
    a terminal, control characters visible (as ls does)."""
    text = flat(frame).write_csv()
    sys.stdout.write(visible_lines(text) if sys.stdout.isatty() else text)


def id_column(table: Table, header: str, **kwargs: Any) -> None:
    """An id column (run, case, config): never shortened with an ellipsis, which made two
    runs with a common prefix look the same; a long id folds onto the next line."""
    table.add_column(header, overflow="fold", **kwargs)


ID_WIDTH = 16
"""Width an id column keeps on a narrow terminal before other columns are left out (longer
ids fold onto more lines)."""

Column = tuple[str, Callable[[dict], "str | Text"], JustifyMethod, int]
"""A column of a `FitTable`: header, cell of a row, justify and priority (0: an id column,
always shown and folded when long; on a narrow terminal the highest numbers go first)."""


class FitTable:
    """A rich table that fits the console by leaving out whole columns, never by cutting
    cells: ids fold onto the next line (a cut id made two runs look the same), every other
    cell stays whole on one line; when the console is too narrow for all columns, headers
    stack one word a line, the lowest-priority columns are left out and a line below the
    table names them."""

    def __init__(self, title: str, columns: list[Column], rows: list[dict], notes: list[str]):
        self.title, self.columns, self.notes = title, columns, notes
        cells = [
            [
                Text.from_markup(c) if isinstance(c, str) else c
                for c in (cell(r) for _h, cell, _j, _p in columns)
            ]
            for r in rows
        ]
        self.cells = cells
        self.widest = [
            max((row[k].cell_len for row in cells), default=0) for k in range(len(columns))
        ]

    def _natural(self, k: int) -> int:
        """Narrowest width column k takes: every cell whole, the header one word a line; an
        id column folds, so it counts at most ID_WIDTH."""
        header, _cell, _justify, priority = self.columns[k]
        cells = min(self.widest[k], ID_WIDTH) if priority == 0 else self.widest[k]
        return max(cells, *(len(word) for word in header.split()))

    def table(self, width: int) -> tuple[Table, list[str]]:
        """The table at `width` and the headers of the columns left out."""
        keep = list(range(len(self.columns)))
        # each column costs its width + 2 padding + 1 border, plus the closing border
        fits = (
            sum(max(len(c[0]), w) + 3 for c, w in zip(self.columns, self.widest, strict=True))
            < width
        )
        while not fits and sum(self._natural(k) + 3 for k in keep) >= width:
            droppable = [k for k in keep if self.columns[k][3] > 0]
            if not droppable:
                break
            keep.remove(max(droppable, key=lambda k: (self.columns[k][3], k)))
        table = Table(title=self.title, title_justify="left", caption_justify="left")
        table.caption = "\n".join(self.notes) or None
        for k in keep:
            header, _cell, justify, priority = self.columns[k]
            header, width_k = (
                (header, None) if fits else ("\n".join(header.split()), self._natural(k))
            )
            if priority == 0:
                id_column(table, header, justify=justify, min_width=width_k)
            else:
                table.add_column(header, justify=justify, no_wrap=not fits, min_width=width_k)
        for row in self.cells:
            table.add_row(*(row[k] for k in keep))
        return table, [c[0] for k, c in enumerate(self.columns) if k not in keep]

    def __rich_console__(self, console: Console, options: Any) -> Iterator[Table | Group]:
        table, dropped = self.table(options.max_width)
        yield table
        if dropped:
            names = ", ".join(dropped)
            yield prose(f"not shown on this narrow terminal: {names} (widen it, or --json).")


def run_table(summary: pl.DataFrame, title: str = "run summary") -> FitTable:
    """The run summary as a readable table: rates in percent, gates as pass/FAIL; a run
    without any scored execution reads "—", not 0.0 %; the caption explains ± and —. On a
    narrow terminal the least important columns are left out (named below it) so that no
    cell is cut. With `attempts.k`, a pass@k column per k; joined with `pass_k_cases`, each
    cell says over how many of the run's cases (those with >= k attempts)."""
    columns: list[Column] = [
        ("run", lambda r: id_text(r["run_id"]), "left", 0),
        ("execs", lambda r: str(r["executions"]), "right", 4),
        ("pass rate", rate_cell, "right", 1),
        ("mean score", lambda r: with_se(num(r["mean_score"]), r["mean_score_se"]), "right", 2),
        *(
            (f"pass@{k}", lambda r, k=k: pass_at_text(r, k), "right", 4)
            for k in pass_k_values(summary.columns)
        ),
        (
            "pass/border/fail",
            lambda r: f"{r['n_pass']}/{r['n_borderline']}/{r['n_fail']}",
            "right",
            5,
        ),
        ("errored", lambda r: str(r["errored"]), "right", 6),
        ("case pass", lambda r: pct(run_rate(r, "case_pass_rate")), "right", 5),
        ("p95 latency", lambda r: ms(r["latency_p95"]), "right", 7),
        ("cost", lambda r: "—" if r["cost_usd"] is None else f"${r['cost_usd']:,.2f}", "right", 8),
        ("score gate", lambda r: yes_no(r["mean_score_gate"]), "center", 3),
        ("rate gate", lambda r: yes_no(r["pass_rate_gate"]), "center", 3),
        ("run", lambda r: yes_no(r["run_passed"]), "center", 1),
    ]
    if summary.get_column("min_pass_rate_lower", default=pl.Series([None])).drop_nulls().len():
        bound: list[Column] = [
            ("lower 95%", lambda r: pct(r["pass_rate_lower"]), "right", 4),
            ("bound gate", lambda r: yes_no(r["pass_rate_lower_gate"]), "center", 3),
        ]
        columns[-1:-1] = bound
    boot = "p_best" in summary.columns  # --bootstrap: interval and rank band by the rates
    if boot:
        columns[3:3] = [("boot 95%", _boot_cell, "right", 4), ("rank", _rank_cell, "right", 4)]
    if summary["config_id"].n_unique() > 1:
        columns.insert(0, ("config", lambda r: id_text(r["config_id"]), "left", 0))
    records = with_wilson(summary).to_dicts()
    notes = [
        *interval_notes(records),
        *([UNSCORED_FOOTNOTE] if any(run_rate(r) is None for r in records) else []),
        *([BOOT_FOOTNOTE] if boot else []),
    ]
    return FitTable(title, columns, records, notes)


def interval_notes(records: list[dict]) -> list[str]:
    """INTERVALS_NOTE when a row's pass rate or mean score shows an interval or a ±."""
    shown = any(rate_cell(r) != pct(run_rate(r)) or r["mean_score_se"] is not None for r in records)
    return [INTERVALS_NOTE] if shown else []


BOOT_FOOTNOTE = (
    "boot 95%: the pass rate's 2.5-97.5 % case-bootstrap percentiles (--bootstrap). rank: "
    "the 95 % band of the run's pass-rate rank among the runs sharing its cases (1 = best), "
    "with the share of replicates ranking it first."
)


def _boot_cell(r: dict) -> str:
    low, high = r.get("pass_rate_boot_low"), r.get("pass_rate_boot_high")
    return "—" if low is None or high is None else f"[{pct(low)}, {pct(high)}]"


def _rank_cell(r: dict) -> str:
    """The rank band `1–2` (or `1`) with p_best in parentheses."""
    low, high, best = r.get("rank_low"), r.get("rank_high"), r.get("p_best")
    if low is None or high is None or best is None:
        return "—"
    band = f"{low:g}" if low == high else f"{low:g}–{high:g}"
    return f"{band} ({pct(best)})"


def rate_cell(r: dict) -> str:
    """A pass rate with its Wilson interval ("74.1% [62.3%, 83.5%]"); "—" for a run without
    any scored execution; the rate alone when there is no interval (no se and no cases)."""
    rate = run_rate(r)
    low, high = r.get("ci_low"), r.get("ci_high")
    if rate is None or low is None or high is None:
        return pct(rate)
    return f"{pct(rate)} [{pct(low)}, {pct(high)}]"


def table(
    title: str | Text | None,
    columns: Sequence[tuple[str, Callable[[Any], Any]]],
    rows: Iterable[Any],
    left: Container[str] = (),
    **options: Any,
) -> Table:
    """A rich table of `rows`, one column per (header, cell of a row): the `left` columns
    (ids, names) left-aligned and folded when long, never cut; the others right-aligned.
    The title is left-aligned unless `options` (rich.table.Table's) say otherwise."""
    out = Table(title=title, **{"title_justify": "left", **options})
    for header, _cell in columns:
        if header in left:
            id_column(out, header)
        else:
            out.add_column(header, justify="right")
    for r in rows:
        out.add_row(*(cell(r) for _header, cell in columns))
    return out


_steps: list[Callable[[str], None]] = []
"""The step reporter of an active `steps` display; `progress` reports through it."""


@contextmanager
def progress(message: str, *, enabled: bool = True) -> Iterator[None]:
    """A spinner on stderr while a long query runs (silent when stderr is not a terminal);
    inside `steps`, the message becomes the next step of that display. `message` is plain
    text (it names paths and config ids: shown literally)."""
    if _steps:
        _steps[-1](message)
        yield
        return
    if not enabled or not stderr.is_terminal:
        yield
        return
    with stderr.status(id_text(message), spinner="dots"):
        yield


@contextmanager
def progress_bar(console: Console | None, *columns: Any) -> Iterator[Progress | None]:
    """A transient progress bar with `columns` and the time spent on `console` (default
    stderr); None when it is not a terminal."""
    out = console or stderr
    if not out.is_terminal:
        yield None
        return
    with Progress(*columns, TimeElapsedColumn(), console=out, transient=True) as bar:
        yield bar


@contextmanager
def steps(total: int, console: Console | None = None) -> Iterator[Callable[[str], None]]:
    """A progress display of `total` steps on stderr (silent when it is not a terminal):
    call the yielded function with each step's description (plain text, shown literally)
    as the step starts; the bar shows the finished steps out of `total`."""
    description = TextColumn("{task.description}", markup=False)
    columns = (SpinnerColumn(), description, BarColumn(), MofNCompleteColumn(), TextColumn("steps"))
    with progress_bar(console, *columns) as bar:
        if bar is None:
            yield lambda _message: None
            return
        task = bar.add_task("starting", total=total)
        started = [0]

        def step(message: str) -> None:
            if 0 < started[0] < total:  # the previous step is done (never past the total)
                bar.advance(task)
            started[0] += 1
            bar.update(task, description=visible(message))
            bar.refresh()  # every step is drawn at least once, however quick it is

        _steps.append(step)
        try:
            yield step
        finally:
            _steps.pop()


def flag(x: bool | None) -> str:
    return "—" if x is None else ("pass" if x else "fail")
