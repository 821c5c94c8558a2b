"""`evalframe trend` and `evalframe flaky`: the history of a dataset's runs (SPEC §12).

Both compute series_trend and case_history (`history_tables`) and write them as one
result set; `trend` prints the slope ± its 95 % interval and the change run per series,
`flaky` the quarantine candidates, worst first. Their options are declared in
evalframe/cli.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from evalframe._private import schema as S
from evalframe._private.cli.console import stderr, stdout
from evalframe._private.cli.render import id_text, print_json, progress, say

NO_SERIES = "(all runs)"
"""How the one series of all runs is named when --series is not given."""
NULL_SERIES = "(none)"
"""How a null value of the --series column is named (it is a series of its own)."""


def _default_out(dataset: Path, out: Path | None) -> Path:
    if out is not None:
        return out
    return (dataset if dataset.is_dir() else dataset.parent) / "results"


def history_and_write(
    dataset: Path,
    command: str,
    *,
    series: str | None,
    window: int | None,
    config: Path | None,
    preset: str | None,
    threshold: float | None,
    out: Path | None,
    clamp: bool,
    engine: str,
    memory_limit: str | None,
    spark_remote: str | None,
) -> tuple[Any, Path]:
    """series_trend and case_history of `dataset`, committed as one result set."""
    from evalframe import history_tables, load_config, write_tables
    from evalframe._private.store.fingerprint import inputs_fingerprint

    cfg = load_config(config, preset=preset, threshold=threshold)
    target = _default_out(dataset, out)
    fingerprint = inputs_fingerprint(dataset)
    with progress(f"history of the runs of {dataset} under config {cfg.config_id} ({engine})"):
        tables = history_tables(
            dataset,
            cfg,
            series=series,
            window=window,
            clamp=clamp,
            engine=str(engine),
            memory_limit=memory_limit,
            spark_remote=spark_remote,
        )
        write_tables(
            tables,
            target,
            config_json=cfg.canonical_json(),
            command=command,
            dataset=dataset,
            inputs_fingerprint=fingerprint,
        )
    return tables, target


def _series_name(row: dict[str, Any]) -> str:
    """`COLUMN=value` of a series (shown literally by `say` / `id_text`)."""
    if row[S.SERIES_COLUMN] is None:
        return NO_SERIES
    value = row[S.SERIES]
    return f"{row[S.SERIES_COLUMN]}={NULL_SERIES if value is None else value}"


def _slope_text(row: dict[str, Any], y: str, what: str) -> str:
    slope = row[f"{y}_slope"]
    if slope is None:
        return f"{what}: no slope (fewer than 2 runs with a {what})"
    unit = "pts/run"
    low, high = row[f"{y}_slope_ci_low"], row[f"{y}_slope_ci_high"]
    band = (
        f" [{low * 100:+.2f}, {high * 100:+.2f}]"
        if low is not None and high is not None
        else " (no interval: fewer than 3 runs)"
    )
    flag = " DEGRADING" if row[f"{y}_degrading"] else ""
    return f"{what} {slope * 100:+.2f} {unit}{band}{flag}"


def trend_command(
    dataset: Path,
    *,
    series: str | None = None,
    window: int | None = None,
    fail_on_degrading: bool = False,
    config: Path | None = None,
    preset: str | None = None,
    threshold: float | None = None,
    out: Path | None = None,
    clamp: bool = False,
    engine: str = "polars",
    memory_limit: str | None = None,
    spark_remote: str | None = None,
    as_json: bool = False,
) -> None:
    """The body of `evalframe trend`: writes series_trend and case_history, prints the
    slope ± 95 % interval of pass rate and mean score per series and the change run with
    its p; exit 1 with `fail_on_degrading` when a slope's interval lies below 0."""
    tables, target = history_and_write(
        dataset,
        "trend",
        series=series,
        window=window,
        config=config,
        preset=preset,
        threshold=threshold,
        out=out,
        clamp=clamp,
        engine=engine,
        memory_limit=memory_limit,
        spark_remote=spark_remote,
    )
    rows = tables[S.SERIES_TREND].to_dicts()
    if as_json:
        print_json(rows)
    else:
        for row in rows:
            stdout.print(say("{} — {} runs", _series_name(row), row[S.N_RUNS]))
            stdout.print(say("  {}", _slope_text(row, S.PASS_RATE, "pass rate")))
            stdout.print(say("  {}", _slope_text(row, S.MEAN_SCORE, "mean score")))
            if row[S.CHANGE_RUN_ID] is None:
                stdout.print(
                    "  change point: none (fewer than 2 runs, or no run has a pass_rate_se)"
                )
            else:
                stdout.print(
                    say(
                        "  change point: at run {} (z = {}, p = {}, Bonferroni)",
                        row[S.CHANGE_RUN_ID],
                        f"{row[S.CHANGE_Z]:+.2f}",
                        f"{row[S.CHANGE_P]:.3g}",
                    )
                )
        stdout.print(say("tables written to {}/", target))
    degrading = [r for r in rows if r[S.PASS_RATE_DEGRADING] or r[S.MEAN_SCORE_DEGRADING]]
    if fail_on_degrading and degrading:
        names = ", ".join(_series_name(r) for r in degrading)
        stderr.print(say("degrading (slope interval below 0): {}", names))
        raise typer.Exit(1)


def flaky_command(
    dataset: Path,
    *,
    series: str | None = None,
    window: int | None = None,
    config: Path | None = None,
    preset: str | None = None,
    threshold: float | None = None,
    out: Path | None = None,
    clamp: bool = False,
    engine: str = "polars",
    memory_limit: str | None = None,
    spark_remote: str | None = None,
    as_json: bool = False,
) -> None:
    """The body of `evalframe flaky`: writes series_trend and case_history and lists the
    quarantine candidates (case_history.quarantine), worst first: highest flip_rate, then
    most runs, then series and case_id."""
    import polars as pl
    from rich.table import Table

    tables, target = history_and_write(
        dataset,
        "flaky",
        series=series,
        window=window,
        config=config,
        preset=preset,
        threshold=threshold,
        out=out,
        clamp=clamp,
        engine=engine,
        memory_limit=memory_limit,
        spark_remote=spark_remote,
    )
    history = tables[S.CASE_HISTORY]
    candidates = history.filter(pl.col(S.QUARANTINE)).sort(
        [S.FLIP_RATE, S.N_RUNS, S.CONFIG_ID, S.SERIES, S.CASE_ID],
        descending=[True, True, False, False, False],
        nulls_last=True,
    )
    if as_json:
        print_json(candidates.to_dicts())
        return
    if candidates.is_empty():
        stdout.print(
            say(
                "no quarantine candidates among {} case histories (a candidate has at least "
                "history.min_runs runs and a flip_rate meeting history.flaky_flip_rate)",
                history.height,
            )
        )
    else:
        table = Table(
            title=f"quarantine candidates, worst first ({candidates.height})",
            title_justify="left",
        )
        for header in ("series", "case", "runs", "passes", "flips", "flip rate", "shrunk", "last"):
            table.add_column(header, justify="left" if header in ("series", "case") else "right")
        for r in candidates.iter_rows(named=True):
            table.add_row(
                id_text(_series_name(r)),
                id_text(r[S.CASE_ID]),
                str(r[S.N_RUNS]),
                str(r[S.PASSES]),
                str(r[S.FLIPS]),
                f"{r[S.FLIP_RATE] * 100:.0f}%",
                f"{r[S.SHRUNK_PASS_RATE] * 100:.1f}%",
                "pass" if r[S.LAST_PASSED] else "fail",
            )
        stdout.print(table)
    stdout.print(say("tables written to {}/", target))
