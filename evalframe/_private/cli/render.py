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

from evalframe._private import schema as S
from evalframe._private.cli.console import stderr as stderr
from evalframe._private.cli.console import stdout as stdout
from evalframe._private.display import (
    LONG,
    VALUE,
    case_counts,
    has_paired_cases,
    num,
    p_value,
    pass_at_text,
    pass_k_values,
    pass_rate_delta,
    pct,
    policy_lines,
    reason_text,
    run_rate,
    visible,
)
from evalframe._private.report.plots import RATE_INTERVAL, rate_interval
from evalframe._private.rules.constants import EPS, Z_95
from evalframe._private.scoring.tree import SEP

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

    rate = _rate_cell
    columns: list[tuple[str, Callable[[dict], str | Text], str]] = [
        ("run", lambda r: id_text(r[S.RUN_ID]), "left"),
        ("execs", lambda r: str(r[S.N_EXECUTIONS]), "right"),
        ("pass rate", rate, "right"),
        ("mean score", lambda r: _with_se(num(r[S.MEAN_SCORE]), r[S.MEAN_SCORE_SE]), "right"),
        ("pass/border/fail", lambda r: f"{r[S.N_PASS]}/{r[S.N_BORDERLINE]}/{r[S.N_FAIL]}", "right"),
        ("errored", lambda r: str(r[S.ERRORED]), "right"),
        ("case pass", lambda r: pct(run_rate(r, S.CASE_PASS_RATE)), "right"),
        ("p95 latency", lambda r: ms(r[S.LATENCY_P95]), "right"),
        ("cost", lambda r: "—" if r[S.COST_USD] is None else f"${r[S.COST_USD]:,.2f}", "right"),
        ("score gate", lambda r: yes_no(r[S.MEAN_SCORE_GATE]), "center"),
        ("rate gate", lambda r: yes_no(r[S.PASS_RATE_GATE]), "center"),
        ("run", lambda r: yes_no(r[S.RUN_PASSED]), "center"),
    ]
    ks = pass_k_values(summary.columns)
    for k in ks:
        columns.insert(4 + ks.index(k), (f"pass@{k}", _pass_at_cell(k), "right"))
    boot = S.P_BEST in summary.columns  # --bootstrap: interval and rank band by the rates
    if boot:
        columns.insert(3, ("boot 95%", _boot_cell, "right"))
        columns.insert(4, ("rank", _rank_cell, "right"))
    ids = {0}
    if summary[S.CONFIG_ID].n_unique() > 1:
        columns.insert(0, ("config", lambda r: id_text(r[S.CONFIG_ID]), "left"))
        ids = {0, 1}
    last = len(columns) - 1  # the run verdict, headed "run" like the id column
    records = _with_wilson(summary).to_dicts()
    notes = []
    if any(_rate_cell(r) != pct(run_rate(r)) or r[S.MEAN_SCORE_SE] is not None for r in records):
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


def slice_table(slices: pl.DataFrame | pl.LazyFrame) -> FitTable:
    """`score --by`: per slice value × run, executions, pass rate ± se and mean score ± se
    (slice_summary), slice values and ids shown literally; a null value reads "(none)"."""
    frame = slices.lazy().collect() if isinstance(slices, pl.LazyFrame) else slices
    frame = frame.sort(S.SLICE_VALUE, S.RUN_ID, nulls_last=True)
    several = frame[S.CONFIG_ID].n_unique() > 1
    name = frame[S.SLICE][0] if frame.height else "slice"
    columns: list[tuple[str, Callable[[dict], str | Text], str]] = [
        (
            str(name),
            lambda r: id_text("(none)" if r[S.SLICE_VALUE] is None else r[S.SLICE_VALUE]),
            "left",
        ),
        ("run", lambda r: id_text(r[S.RUN_ID]), "left"),
        ("execs", lambda r: str(r[S.N_EXECUTIONS]), "right"),
        ("pass rate", _rate_cell, "right"),
        ("mean score", lambda r: _with_se(num(r[S.MEAN_SCORE]), r[S.MEAN_SCORE_SE]), "right"),
        ("case pass", lambda r: pct(run_rate(r, S.CASE_PASS_RATE)), "right"),
    ]
    if several:
        columns.insert(0, ("config", lambda r: id_text(r[S.CONFIG_ID]), "left"))
    ids = {0, 1, 2} if several else {0, 1}
    records = _with_wilson(frame).to_dicts()
    return FitTable(
        f"slices by {name}",
        [(h, j, 0 if k in ids else 2, k in ids) for k, (h, _f, j) in enumerate(columns)],
        [[fn(r) for _h, fn, _j in columns] for r in records],
        [SE_FOOTNOTE]
        if any(_rate_cell(r) != pct(run_rate(r)) or r[S.MEAN_SCORE_SE] is not None for r in records)
        else [],
    )


def _pass_at_cell(k: int) -> Callable[[dict], str]:
    def cell(r: dict) -> str:
        return pass_at_text(r, k)

    return cell


def _with_se(text: str, se: float | None) -> str:
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
    low, high = r.get(S.boot_low(S.PASS_RATE)), r.get(S.boot_high(S.PASS_RATE))
    return "—" if low is None or high is None else f"[{pct(low)}, {pct(high)}]"


def _rank_cell(r: dict) -> str:
    """The rank band `1–2` (or `1`) with p_best in parentheses; — without one."""
    low, high, best = r.get(S.RANK_LOW), r.get(S.RANK_HIGH), r.get(S.P_BEST)
    if low is None or high is None or best is None:
        return "—"
    band = f"{low:g}" if low == high else f"{low:g}–{high:g}"
    return f"{band} ({pct(best)})"


def _with_wilson(frame: pl.DataFrame) -> pl.DataFrame:
    """frame (run_summary or slice_summary) with ci_low / ci_high: the pass rate's 95 %
    Wilson interval with the clustered effective sample size, the report's rule
    (report/plots.py `rate_interval`, rules/wilson.py); vectorised."""
    cases = S.CASES if S.CASES in frame.columns else None
    return frame.with_columns(rate_interval(S.PASS_RATE, S.PASS_RATE_SE, cases))


def _rate_cell(r: dict) -> str:
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


PAIR_KEY = (S.CONFIG_ID, "baseline_run_id", "candidate_run_id")


def worst_evaluators(evaluator_deltas: pl.DataFrame | None) -> pl.DataFrame:
    """The evaluator behind a regression: the leaf evaluator with the most negative score delta
    per pair × case: columns of the pair key, case_id, `evaluator`, `evaluator_delta` and
    `tied` (how many other leaves fell just as far; the first path in order is named).
    Empty when no evaluator_deltas are given or no leaf fell."""
    key = [*PAIR_KEY, S.CASE_ID]
    empty = pl.DataFrame(
        schema={
            **dict.fromkeys(key, pl.String),
            "evaluator": pl.String,
            "evaluator_delta": pl.Float64,
            "tied": pl.UInt32,
        }
    )
    if evaluator_deltas is None or evaluator_deltas.height == 0:
        return empty
    # composites: every proper prefix of a node's path (a handful of tree nodes, not rows)
    paths = evaluator_deltas[S.PATH].unique().to_list()
    composites = {
        SEP.join(parts[:k]) for parts in (p.split(SEP) for p in paths) for k in range(1, len(parts))
    }
    return (
        evaluator_deltas.filter(
            (pl.col(S.SCORE_DELTA) < 0) & ~pl.col(S.PATH).is_in(sorted(composites))
        )
        .sort([S.SCORE_DELTA, S.PATH])
        .group_by(key, maintain_order=True)
        .agg(
            pl.col(S.PATH).first().alias("evaluator"),
            pl.col(S.SCORE_DELTA).first().alias("evaluator_delta"),
            # equal up to float noise (0.6 - 1.0 and 0.4 - 0.8 differ in the last bit)
            (((pl.col(S.SCORE_DELTA) - pl.col(S.SCORE_DELTA).first()).abs() < EPS).sum() - 1)
            .cast(pl.UInt32)
            .alias("tied"),
        )
        .select(empty.columns)
    )


def compare_report(
    run_deltas: pl.DataFrame,
    case_deltas: pl.DataFrame,
    *,
    limits: Any = None,
    top: int = 10,
    evaluator_deltas: pl.DataFrame | None = None,
) -> list:
    """Per pair: headline numbers baseline → candidate, status counts, reasons, the paired
    delta with its 95 % interval and McNemar p, then the `top` regressed cases, worst
    first, each with the evaluator that fell most (from evaluator_deltas)."""
    out: list = []
    behind = worst_evaluators(evaluator_deltas)
    named = behind.height > 0
    for r in run_deltas.iter_rows(named=True):
        b, c = r["baseline_run_id"], r["candidate_run_id"]
        verdict = (
            "[bold red]REGRESSION[/bold red]"
            if r["regression_detected"]
            else "[bold green]no regression[/bold green]"
        )
        out.append(
            say("\n[bold]{}[/bold] → [bold]{}[/bold]  ({})  " + verdict, b, c, r[S.CONFIG_ID])
        )
        table = Table(show_header=True, box=None, pad_edge=False)
        for h in ("", "baseline", "candidate", "delta"):
            table.add_column(h, justify="right" if h else "left")
        table.add_row(
            "pass rate",
            pct(run_rate(r, prefix="baseline_")),
            pct(run_rate(r, prefix="candidate_")),
            _signed_pct(pass_rate_delta(r)),
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
        if run_rate(r, prefix="baseline_") is None or run_rate(r, prefix="candidate_") is None:
            out.append(Text(UNSCORED_FOOTNOTE))
        pair = (
            (pl.col("baseline_run_id") == b)
            & (pl.col("candidate_run_id") == c)
            & (pl.col(S.CONFIG_ID) == r[S.CONFIG_ID])
        )
        out.append(Prose(case_counts(r, case_deltas.filter(pair), limits)))
        if has_paired_cases(r):
            ci = (
                f"[{_signed(r['mean_delta_ci_low'])}, {_signed(r['mean_delta_ci_high'])}]"
                if r["mean_delta_se"] is not None
                else "(n < 2)"
            )
            g = GLUE
            out.append(
                Prose(
                    f"paired score delta over {r['n_paired']} cases: {_signed(r['mean_delta'])} "
                    f"95%{g}CI{g}{ci.replace(' ', g)}; McNemar{g}p{g}={g}{p_value(r['mcnemar_p'])} "
                    f"({r['n_passed_to_failed']}{g}pass→fail, "
                    f"{r['n_failed_to_passed']}{g}fail→pass)"
                )
            )
        if r["reasons"]:
            reasons = "; ".join(reason_text(code, r, limits) for code in r["reasons"])
            out.append(Prose(Text("regression:", style="red") + " " + id_text(reasons)))
        regressed = case_deltas.filter(pair & (pl.col(S.STATUS) == "regression"))
        shown = regressed.sort(S.SCORE_DELTA, S.CASE_ID, nulls_last=True).head(max(top, 0))
        if named:
            shown = shown.join(
                behind.filter(pair), on=[*PAIR_KEY, S.CASE_ID], how="left", maintain_order="left"
            )
        if shown.height:
            more = regressed.height - shown.height
            title = f"regressed cases (worst {shown.height} of {regressed.height}"
            title += "; --top N shows more)" if more > 0 else ")"
            cases = Table(title=title, title_justify="left", box=None)
            headers = ["case", "baseline", "candidate", "delta", "passed"]
            if named:
                headers.append("evaluator behind it")
            for h in headers:
                if h == "case":
                    id_column(cases, h)
                else:
                    cases.add_column(h, justify="left" if h.startswith("evaluator") else "right")
            for row in shown.iter_rows(named=True):
                cells: list[str | Text] = [
                    id_text(row[S.CASE_ID]),
                    num(row["baseline_score"]),
                    num(row["candidate_score"]),
                    _signed(row[S.SCORE_DELTA]),
                    f"{_flag(row['baseline_passed'])} → {_flag(row['candidate_passed'])}",
                ]
                if named:
                    cells.append(
                        "—"
                        if row["evaluator"] is None
                        else id_text(row["evaluator"])
                        + f" {_signed(row['evaluator_delta'])}"
                        + (f" (+{row['tied']} tied)" if row["tied"] else "")
                    )
                cases.add_row(*cells)
            out.append(cases)
    return out


def _flag(x: bool | None) -> str:
    return "—" if x is None else ("pass" if x else "fail")


def _signed(x: float | None, digits: int = 3, unit: str = "") -> str:
    return "—" if x is None else f"{x:+,.{digits}f}{unit}"


def _signed_pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:+.1f} pts"


class SweepProgress:
    """Turns the sweep's `on_chunk(k, n)` calls (chunks of one tree group at a time, the
    groups in order) into configs done out of every config of the grid, so the bar has
    its total from the start and never runs backwards between groups."""

    def __init__(self, group_sizes: Sequence[int]):
        self.group_sizes = [int(n) for n in group_sizes]
        self.total = sum(self.group_sizes)
        self.group = 0
        self.done_before = 0
        self.completed = 0.0

    def on_chunk(self, k: int, n: int) -> float:
        """Record chunk k of n of the current group; return configs done so far."""
        size = self.group_sizes[self.group] if self.group < len(self.group_sizes) else 0
        self.completed = self.done_before + size * (k / n if n else 1.0)
        if k >= n and self.group < len(self.group_sizes):  # this group is finished
            self.done_before += size
            self.group += 1
        return self.completed


@contextmanager
def sweep_progress(
    group_sizes: Sequence[int] | int, console: Console | None = None
) -> Iterator[Callable[[int, int], None] | None]:
    """A progress bar over the grid's configs on stderr (when it is a terminal).
    `group_sizes`: configs per tree group, in the order the sweep runs them (an int is
    one group)."""
    out = console or stderr
    sizes = [group_sizes] if isinstance(group_sizes, int) else list(group_sizes)
    if not out.is_terminal:
        yield None
        return
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    state = SweepProgress(sizes)
    with Progress(
        TextColumn("sweeping"),
        BarColumn(),
        TextColumn("{task.completed:,.0f}/{task.total:,.0f} configs"),
        TimeElapsedColumn(),
        console=out,
        transient=True,
    ) as bar:
        task = bar.add_task("sweep", total=state.total, completed=0)

        def on_chunk(done: int, total: int) -> None:
            bar.update(task, completed=state.on_chunk(done, total))

        yield on_chunk


def float_stat(value: object) -> float | None:
    """A statistic of a numeric column (`Series.min()`, `.max()`, `.mean()`) as the
    `float | None` it is: polars types it as any Python scalar, whatever the dtype."""
    if value is None:
        return None
    if isinstance(value, int | float):
        return float(value)
    raise TypeError(f"not a number: {value!r}")


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
        if h == "run":
            id_column(out_table, h)
        else:
            out_table.add_column(h, justify="left" if h == "moves verdicts most" else "right")
    for (run_id,), runs in table.group_by(S.RUN_ID, maintain_order=True):
        best, spread = "—", 0.0
        for col in swept:
            means = runs.group_by(col).agg(pl.col(S.PASS_RATE).mean())[S.PASS_RATE]
            width = (float_stat(means.max()) or 0.0) - (float_stat(means.min()) or 0.0)
            if width > spread:
                best, spread = col.removeprefix("sweep_"), width
        out_table.add_row(
            id_text(run_id),
            str(runs.height),
            pct(float_stat(runs[S.PASS_RATE].min())),
            pct(float_stat(runs[S.PASS_RATE].max())),
            f"{int(runs[S.RUN_PASSED].sum())}/{runs.height}",
            id_text(best),
            f"{100 * spread:.1f} pts",
        )
    return [out_table]


def cases_report(frame: pl.DataFrame, status: str) -> list:
    """`evalframe cases` in the terminal: per case a line (case, runs, status, score and
    passed baseline → run), a table of its evaluators (scores, delta, passed, the judge's
    labels and reasons) and its outcome checks with their justifications. Ids, labels,
    reasons and justifications are data: shown literally."""
    if frame.is_empty():
        return [say("no case has status {}.", status)]
    pairs = frame[S.BASELINE_RUN_ID].drop_nulls().n_unique()
    out: list = [
        say(
            f"{frame.height} {{}} case{'s' if frame.height != 1 else ''}"
            + (f" in {pairs} pair{'s' if pairs != 1 else ''}" if pairs else ""),
            status,
        )
    ]
    for r in frame.iter_rows(named=True):
        compared = r[S.BASELINE_RUN_ID] is not None
        runs = (
            say("{} → {}", r[S.BASELINE_RUN_ID], r[S.RUN_ID]) if compared else id_text(r[S.RUN_ID])
        )
        head = Text("\n") + Text(visible(str(r[S.CASE_ID])), style="bold")
        head += Text("  ") + runs + Text("  ") + id_text(r[S.STATUS])
        if compared:
            head += Text(
                f"  score {num(r['baseline_score'])} → {num(r[S.SCORE])} "
                f"({_signed(r[S.SCORE_DELTA])})  passed {_flag(r['baseline_passed'])} → "
                f"{_flag(r[S.PASSED])}",
                no_wrap=True,
            )
        else:
            head += Text(f"  score {num(r[S.SCORE])}  passed {_flag(r[S.PASSED])}", no_wrap=True)
        out.append(head)
        evaluators = r["evaluators"] or []
        if evaluators:
            table = Table(box=None, pad_edge=False, padding=(0, 1, 0, 2))
            id_column(table, "evaluator")
            headers = ["baseline", "score", "delta"] if compared else ["score"]
            for h in [*headers, "passed"]:
                table.add_column(h, justify="right", no_wrap=True)
            table.add_column("label · reason", overflow="fold")
            for e in evaluators:
                numbers = (
                    [num(e["baseline_score"]), num(e["score"]), _signed(e["score_delta"])]
                    if compared
                    else [num(e["score"])]
                )
                said = [*(e["labels"] or []), *(e["reasons"] or [])]
                table.add_row(
                    id_text(e["evaluator"]),
                    *numbers,
                    _flag(e["passed"]),
                    id_text(" · ".join(said)) if said else Text("—", style="dim"),
                )
            out.append(table)
        checks = r[S.OUTCOMES] or []
        several = len({o[S.ATTEMPT] for o in checks}) > 1
        for o in checks:
            mark = Text("  ✓ " if o[S.PASSED] else "  ✗ ", style="green" if o[S.PASSED] else "red")
            line = mark + id_text(o[S.OUTCOME])
            if several:
                line += Text(f" (attempt {o[S.ATTEMPT]})")
            if o[S.JUSTIFICATION]:
                line += Text(" — ") + id_text(o[S.JUSTIFICATION])
            out.append(line)
    return out
