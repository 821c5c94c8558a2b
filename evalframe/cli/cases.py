"""`evalframe cases`: the regressed (or failing) cases, one row each, with their scores,
labels, reasons and outcome checks."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.text import Text

import evalframe as ef
from evalframe.cli._console import Lazy, stdout
from evalframe.cli._options import DatasetArg, JsonOpt

if TYPE_CHECKING:
    import polars as pl

    import evalframe.cli._render as ui
    from evalframe import format as fmt
else:
    ui, fmt = Lazy("evalframe.cli._render"), Lazy("evalframe.format")

CaseStatus = StrEnum(
    "CaseStatus", "regression improvement unchanged new removed error fail pass flaky"
)
"""Which cases `evalframe cases` lists (the statuses `ef.cases` takes)."""


def cases(
    dataset: DatasetArg,
    run: Annotated[
        str | None,
        typer.Option(
            "--run",
            help="The run whose cases to list: for a comparison's statuses, the candidate "
            "of the compared pairs (default: every pair, or every run).",
        ),
    ] = None,
    status: Annotated[
        CaseStatus,
        typer.Option(
            "--status",
            help="A comparison's case status (regression ... error: case_deltas of the "
            "latest result set) or a run's (fail, pass, flaky: its case_summary).",
        ),
    ] = CaseStatus.regression,
    evaluator: Annotated[
        str | None,
        typer.Option(
            "--evaluator",
            "-e",
            help="Only cases where this evaluator fell (regression), rose (improvement), "
            "did not pass (fail), passed (pass), or has a score.",
        ),
    ] = None,
    results: Annotated[
        Path | None,
        typer.Option(
            "--results",
            "-r",
            help="Results to read: a store or an --out folder (default: DATASET/results).",
        ),
    ] = None,
    result_set: Annotated[
        str | None,
        typer.Option("--result-set", help="Read this result set (default: the latest)."),
    ] = None,
    difficulty: Annotated[
        bool,
        typer.Option(
            "--difficulty",
            help="List instead the cases the history flags (never_passes, always_passes, "
            "negative_discrimination) from case_difficulty, which `evalframe trend` writes.",
        ),
    ] = False,
    as_json: JsonOpt = False,
    csv: Annotated[
        bool, typer.Option("--csv", help="Print CSV (evaluators, outcomes as JSON text).")
    ] = False,
) -> None:
    """Every regressed case of the compared pairs (or every failing case of a run), one
    row each, with its per-evaluator scores, the judge's labels and reasons and the
    outcome checks with their justifications.

    Example: [bold]evalframe cases runs/ --run 2026-11-01-v1.6 --status regression[/bold]
    """
    if csv and as_json:
        raise ef.UsageError("--csv and --json exclude each other; hint: pick one.")
    if difficulty:
        frame = ef.difficult_cases(dataset, results=results, result_set=result_set)
        report = lambda: [difficulty_report(frame)]  # noqa: E731
    else:
        frame = ef.cases(
            dataset, run, status=str(status), evaluator=evaluator, results=results,
            result_set=result_set,
        )  # fmt: skip
        report = lambda: cases_report(frame, str(status))  # noqa: E731
    if as_json:
        ui.print_json(frame.to_dicts())
    elif csv:
        ui.print_csv(frame)
    else:
        for part in report():
            stdout.print(part)


def difficulty_report(frame: pl.DataFrame):
    """The flagged cases as a table: ids literal, numbers as the terminal shows them."""
    if frame.is_empty():
        return ui.say("no case is flagged: every case tells runs apart.")
    columns = [
        ("case", lambda r: ui.id_text(r["case_id"])),
        ("series", lambda r: ui.id_text(r["series"] or "")),
        ("flag", lambda r: r["flag"]),
        ("runs", lambda r: f"{r['runs']:,}"),
        ("passes", lambda r: f"{r['passes']:,}"),
        ("discrimination", lambda r: fmt.num(r["discrimination"])),
    ]
    title = f"{frame.height} flagged case{'s' if frame.height != 1 else ''} (case_difficulty)"
    return ui.table(title, columns, frame.iter_rows(named=True), left=("case", "series", "flag"))


def cases_report(frame: pl.DataFrame, status: str) -> list:
    """`evalframe cases` in the terminal: per case a line (case, runs, status, score and
    passed baseline → run), a table of its evaluators (scores, delta, passed, the judge's
    labels and reasons) and its outcome checks with their justifications. Ids, labels,
    reasons and justifications are data: shown literally."""
    if frame.is_empty():
        return [ui.say("no case has status {}.", status)]
    pairs = frame["baseline_run_id"].drop_nulls().n_unique()
    out: list = [
        ui.say(
            f"{frame.height} {{}} case{'s' if frame.height != 1 else ''}"
            + (f" in {pairs} pair{'s' if pairs != 1 else ''}" if pairs else ""),
            status,
        )
    ]
    for r in frame.iter_rows(named=True):
        compared = r["baseline_run_id"] is not None
        runs = (
            ui.say("{} → {}", r["baseline_run_id"], r["run_id"])
            if compared
            else ui.id_text(r["run_id"])
        )
        head = Text("\n") + Text(fmt.visible(str(r["case_id"])), style="bold")
        head += Text("  ") + runs + Text("  ") + ui.id_text(r["status"])
        score, passed = fmt.num(r["score"]), ui.flag(r["passed"])
        if compared:
            score = f"{fmt.num(r['baseline_score'])} → {score} ({fmt.signed(r['score_delta'])})"
            passed = f"{ui.flag(r['baseline_passed'])} → {passed}"
        out.append(head + Text(f"  score {score}  passed {passed}", no_wrap=True))
        numbers = [("score", lambda e: fmt.num(e["score"]))]
        if compared:
            numbers.insert(0, ("baseline", lambda e: fmt.num(e["baseline_score"])))
            numbers.append(("delta", lambda e: fmt.signed(e["score_delta"])))
        columns = [
            ("evaluator", lambda e: ui.id_text(e["evaluator"])),
            *numbers,
            ("passed", lambda e: ui.flag(e["passed"])),
            ("label · reason", _said),
        ]
        if r["evaluators"]:
            out.append(
                ui.table(
                    None,
                    columns,
                    r["evaluators"],
                    ("evaluator", "label · reason"),
                    box=None,
                    pad_edge=False,
                    padding=(0, 1, 0, 2),
                )
            )
        checks = r["outcomes"] or []
        several = len({o["attempt"] for o in checks}) > 1
        for o in checks:
            mark = Text("  ✓ " if o["passed"] else "  ✗ ", style="green" if o["passed"] else "red")
            line = mark + ui.id_text(o["outcome"])
            if several:
                line += Text(f" (attempt {o['attempt']})")
            if o["justification"]:
                line += Text(" — ") + ui.id_text(o["justification"])
            out.append(line)
    return out


def _said(e: dict) -> Text:
    """An evaluator's labels and reasons, joined (data: shown literally); — without any."""
    said = [*(e["labels"] or []), *(e["reasons"] or [])]
    return ui.id_text(" · ".join(said)) if said else Text("—", style="dim")
