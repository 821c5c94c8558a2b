"""Human and machine rendering of output tables for the CLI."""

from __future__ import annotations

import base64
import json
import math
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from typing import Any

import polars as pl
from rich.console import Console
from rich.table import Table
from rich.text import Text

from evalframe._private.display import (
    LONG,
    VALUE,
    num,
    pass_at_text,
    pass_k_values,
    pct,
    policy_lines,
    run_rate,
    visible,
)
from evalframe._private.report.plots import RATE_INTERVAL, rate_interval
from evalframe._private.rules.constants import Z_95
from evalframe.cli._console import stderr as stderr
from evalframe.cli._console import stdout as stdout

# --- data in the terminal -----------------------------------------------------------------
# Run ids, case ids, evaluator names, config ids, slice values and paths come from other
# tools' files. They reach the terminal only through the three helpers below: shown
# literally (rich markup in them is text, never markup) and with control, separator and
# bidi characters made visible by the one rule of `display.visible`.


_SLOT = "\x00"
"""Marks a `{}` of a `say` template while its markup is parsed (never part of a template;
in a value, display.visible shows it as \\x00)."""


def say(template: str, *values: object) -> Text:
    """A message carrying data: `template` is rich markup whose `{}` (literal braces, not
    str.format) each take the next value, shown literally with the style around its `{}`:
    never parsed as markup (`[/x]` and `[bold]r2[/bold]` print as themselves), control,
    separator and bidi characters made visible (`display.visible`), no emoji codes. Every
    message that quotes an id, a path or another value from data goes through here."""
    pieces = template.split("{}")
    if len(pieces) != len(values) + 1:
        raise ValueError(f"{template!r} has {len(pieces) - 1} {{}} for {len(values)} values")
    parsed = Text.from_markup(_SLOT.join(pieces), emoji=False)
    out, start = Text(style=parsed.style, end=""), 0
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
    """`text` with control characters visible (`display.visible`) line by line: its own
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


GLUE = "\u00a0"
"""Joins words `Prose` never breaks apart ("McNemar p = 7.523e-37"); printed as a space."""


class Prose:
    """A line of prose wrapped at the console width between words, never inside one: a
    number (7.523e-37) stays whole, and words joined by GLUE stay on one line. The consoles
    print with soft_wrap (a path in a message stays one piece in a pipe), so without this a
    terminal breaks a long line at its last column, inside whatever word is there."""

    def __init__(self, text: Text | str) -> None:
        self.text = text if isinstance(text, Text) else Text(text)

    def __rich_console__(self, console: Console, options: Any) -> Iterator[Text]:
        width = max(options.max_width, 1)
        for line in self.text.split("\n", include_separator=False):
            plain = line.plain
            cuts = [k + 1 for k, ch in enumerate(plain) if ch == " " and k + 1 < len(plain)]
            current = Text(style=line.style, end="\n")
            for piece in line.divide(cuts):
                word = len(piece.plain.rstrip(" "))
                if current.plain and current.cell_len + word > width:
                    current.rstrip()
                    yield _unglued(current)
                    current = Text(style=line.style, end="\n")
                current.append_text(piece)
            current.rstrip()
            yield _unglued(current)


def _unglued(text: Text) -> Text:
    """`text` with its GLUE characters shown as spaces (the same length: spans stay)."""
    out = Text(text.plain.replace(GLUE, " "), style=text.style, end="\n")
    out.spans = list(text.spans)
    return out


SE_FOOTNOTE = (
    f"Brackets after a pass rate: its {RATE_INTERVAL} (as in report.html). "
    "± after a mean score: one standard error, clustered by case; a 95 % interval is about "
    f"± {Z_95} × that."
)
"""The run and slice tables' note on their intervals."""
UNSCORED_FOOTNOTE = "— = no execution of the run has a score (unscored or errored)."


def policy_note(cfg: Any) -> Prose:
    """The policy in one short paragraph headed "policy:" (`display.policy_lines`, the
    report header's source, without its LONG explanations), values in bold, the config id
    shown literally; wrapped between words."""
    text = Text("policy: ")
    for k, line in enumerate(policy_lines(cfg)):
        if k:
            text.append(" ")
        for piece, kind in line:
            if kind != LONG:
                text.append(visible(piece), style="bold" if kind == VALUE else "")
    return Prose(text)


def ms(x: float | None) -> str:
    return "—" if x is None else f"{x:,.0f} ms"


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


def rows(frame: pl.DataFrame) -> list[dict[str, Any]]:
    return frame.to_dicts()


def id_column(table: Table, header: str, **kwargs: Any) -> None:
    """An id column (run, case, config): never shortened with an ellipsis, which made two
    runs with a common prefix look the same; a long id folds onto the next line."""
    table.add_column(header, overflow="fold", **kwargs)


RUN_COLUMN_PRIORITY = {
    "config": 0,
    "run": 0,
    "pass rate": 1,
    "run verdict": 1,
    "mean score": 2,
    "score gate": 3,
    "rate gate": 3,
    "execs": 4,
    "pass/border/fail": 5,
    "case pass": 5,
    "errored": 6,
    "p95 latency": 7,
    "cost": 8,
}
"""Run-table column -> priority (0 = always shown); on a narrow terminal the columns with
the highest numbers are left out first, so every shown cell stays whole."""


ID_WIDTH = 16
"""Width an id column keeps on a narrow terminal before other columns are left out (longer
ids fold onto more lines)."""


class FitTable:
    """A rich table that fits the console by leaving out whole columns, never by cutting
    cells: ids fold onto the next line (a cut id made two runs look the same), every other
    cell stays on one line, whole; when the console is too narrow for all columns, the
    lowest-priority ones are left out and a line below the table names them."""

    def __init__(
        self,
        title: str,
        columns: Sequence[tuple[str, str, int, bool]],
        rows: Sequence[Sequence[str | Text]],
        notes: Sequence[str] = (),
    ) -> None:
        self.title = title
        self.columns = list(columns)  # (header, justify, priority, is_id)
        self.rows = [list(r) for r in rows]
        self.notes = list(notes)
        self.dropped: list[str] = []

    def _cells(self, k: int) -> int:
        return max((_cell_len(r[k]) for r in self.rows), default=0)

    def _natural(self, k: int) -> int:
        """Narrowest width column k takes squeezed: every cell whole, the header one word a
        line; an id column folds, so it counts at most ID_WIDTH."""
        header, _justify, _priority, is_id = self.columns[k]
        words = max(len(w) for w in header.split())
        cells = self._cells(k)
        return max(words, min(cells, ID_WIDTH)) if is_id else max(words, cells)

    def table(self, width: int) -> Table:
        table = Table(title=self.title, title_justify="left", caption_justify="left")
        self.dropped = []
        # each column costs its width + 2 padding + 1 border, plus the closing border
        full = sum(max(len(c[0]), self._cells(k)) + 3 for k, c in enumerate(self.columns)) + 1
        if full <= width:  # everything fits on one line per row
            for header, justify, _priority, is_id in self.columns:
                if is_id:
                    id_column(table, header, justify=justify)
                else:
                    table.add_column(header, justify=justify)  # type: ignore[arg-type]
            for r in self.rows:
                table.add_row(*r)
            if self.notes:
                table.caption = "\n".join(self.notes)
            return table
        keep = list(range(len(self.columns)))
        while sum(self._natural(k) + 3 for k in keep) + 1 > width:
            droppable = [k for k in keep if self.columns[k][2] > 0]
            if not droppable:
                break
            worst = max(droppable, key=lambda k: (self.columns[k][2], k))
            keep.remove(worst)
            self.dropped.append(self.columns[worst][0])
        for k in keep:
            header, justify, _priority, is_id = self.columns[k]
            stacked = "\n".join(header.split())  # one word a line
            if is_id:  # folds past its minimum, never cut
                id_column(table, stacked, justify=justify, min_width=self._natural(k))
            else:  # whole, on one line
                table.add_column(
                    stacked,
                    justify=justify,  # type: ignore[arg-type]
                    no_wrap=True,
                    min_width=self._natural(k),
                )
        for r in self.rows:
            table.add_row(*(r[k] for k in keep))
        return table

    def __rich_console__(self, console: Console, options: Any) -> Iterator[Table | Text]:
        table = self.table(options.max_width)
        yield table
        if self.dropped:
            names = ", ".join(sorted(self.dropped, key=[c[0] for c in self.columns].index))
            yield Text(f"not shown on this narrow terminal: {names} (widen it, or --json).")
        if table.caption is None:  # squeezed: notes below, not a caption that widens it
            yield from (Text(n) for n in self.notes)


def _cell_len(cell: str | Text) -> int:
    """Terminal cells a table cell takes: a Text as it is, a str as the markup it is."""
    return cell.cell_len if isinstance(cell, Text) else Text.from_markup(cell).cell_len


def run_table(summary: pl.DataFrame, title: str = "run summary") -> FitTable:
    """The run summary as a readable table: rates in percent, gates as pass/FAIL; a run
    without any scored execution reads "—", not 0.0 %; the caption explains ± and —. On a
    narrow terminal the least important columns are left out (named in the caption) so
    that no cell is cut. With `attempts.k`, a pass@k column per k; joined with
    `pass_k_cases`, each cell says over how many of the run's cases (those with >= k
    attempts)."""

    rate = rate_cell
    columns: list[tuple[str, Callable[[dict], str | Text], str]] = [
        ("run", lambda r: id_text(r["run_id"]), "left"),
        ("execs", lambda r: str(r["executions"]), "right"),
        ("pass rate", rate, "right"),
        ("mean score", lambda r: with_se(num(r["mean_score"]), r["mean_score_se"]), "right"),
        ("pass/border/fail", lambda r: f"{r['n_pass']}/{r['n_borderline']}/{r['n_fail']}", "right"),
        ("errored", lambda r: str(r["errored"]), "right"),
        ("case pass", lambda r: pct(run_rate(r, "case_pass_rate")), "right"),
        ("p95 latency", lambda r: ms(r["latency_p95"]), "right"),
        ("cost", lambda r: "—" if r["cost_usd"] is None else f"${r['cost_usd']:,.2f}", "right"),
        ("score gate", lambda r: yes_no(r["mean_score_gate"]), "center"),
        ("rate gate", lambda r: yes_no(r["pass_rate_gate"]), "center"),
        ("run", lambda r: yes_no(r["run_passed"]), "center"),
    ]
    ks = pass_k_values(summary.columns)
    for k in ks:
        columns.insert(4 + ks.index(k), (f"pass@{k}", _pass_at_cell(k), "right"))
    boot = "p_best" in summary.columns  # --bootstrap: interval and rank band by the rates
    if boot:
        columns.insert(3, ("boot 95%", _boot_cell, "right"))
        columns.insert(4, ("rank", _rank_cell, "right"))
    ids = {0}
    if summary["config_id"].n_unique() > 1:
        columns.insert(0, ("config", lambda r: id_text(r["config_id"]), "left"))
        ids = {0, 1}
    last = len(columns) - 1  # the run verdict, headed "run" like the id column
    records = with_wilson(summary).to_dicts()
    notes = []
    if any(rate_cell(r) != pct(run_rate(r)) or r["mean_score_se"] is not None for r in records):
        notes.append(SE_FOOTNOTE)
    if any(run_rate(r) is None for r in records):
        notes.append(UNSCORED_FOOTNOTE)
    if boot:
        notes.append(BOOT_FOOTNOTE)
    return FitTable(
        title,
        [
            (
                header,
                justify,
                RUN_COLUMN_PRIORITY.get("run verdict" if k == last else header, 4),
                k in ids,
            )
            for k, (header, _fn, justify) in enumerate(columns)
        ],
        [[fn(r) for _h, fn, _j in columns] for r in records],
        notes,
    )


def _pass_at_cell(k: int) -> Callable[[dict], str]:
    def cell(r: dict) -> str:
        return pass_at_text(r, k)

    return cell


def with_se(text: str, se: float | None) -> str:
    if se is None or text == "—":
        return text
    return f"{text} ± {se:.3f}"


BOOT_FOOTNOTE = (
    "boot 95%: the pass rate's 2.5-97.5 % case-bootstrap percentiles (--bootstrap). rank: "
    "the 95 % band of the run's pass-rate rank among the runs sharing its cases (1 = best), "
    "with the share of replicates ranking it first."
)


def _boot_cell(r: dict) -> str:
    """`[low, high]` of the pass rate's bootstrap interval; — without one."""
    low, high = r.get("pass_rate_boot_low"), r.get("pass_rate_boot_high")
    return "—" if low is None or high is None else f"[{pct(low)}, {pct(high)}]"


def _rank_cell(r: dict) -> str:
    """The rank band `1–2` (or `1`) with p_best in parentheses; — without one."""
    low, high, best = r.get("rank_low"), r.get("rank_high"), r.get("p_best")
    if low is None or high is None or best is None:
        return "—"
    band = f"{low:g}" if low == high else f"{low:g}–{high:g}"
    return f"{band} ({pct(best)})"


def with_wilson(frame: pl.DataFrame) -> pl.DataFrame:
    """frame (run_summary or slice_summary) with ci_low / ci_high: the pass rate's 95 %
    Wilson interval with the clustered effective sample size, the report's rule
    (report/plots.py `rate_interval`, rules/wilson.py); vectorised."""
    cases = "cases" if "cases" in frame.columns else None
    return frame.with_columns(rate_interval("pass_rate", "pass_rate_se", cases))


def rate_cell(r: dict) -> str:
    """A pass rate with its Wilson interval ("74.1% [62.3%, 83.5%]"); "—" for a run without
    any scored execution; the rate alone when there is no interval (no se and no cases)."""
    rate = run_rate(r)
    low, high = r.get("ci_low"), r.get("ci_high")
    if rate is None or low is None or high is None:
        return pct(rate)
    return f"{pct(rate)} [{pct(low)}, {pct(high)}]"


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
def steps(total: int, console: Console | None = None) -> Iterator[Callable[[str], None]]:
    """A progress display of `total` steps on stderr (silent when it is not a terminal):
    call the yielded function with each step's description (plain text, shown literally)
    as the step starts; the bar
    shows the finished steps out of `total` and the time spent."""
    out = console or stderr
    if not out.is_terminal:
        yield lambda _message: None
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
    )

    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}", markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("steps"),
        TimeElapsedColumn(),
        console=out,
        transient=True,
    ) as bar:
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


def signed(x: float | None, digits: int = 3, unit: str = "") -> str:
    return "—" if x is None else f"{x:+,.{digits}f}{unit}"


def signed_pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:+.1f} pts"
