"""`evalframe sweep`: recompute every run under many configs at once."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from operator import itemgetter
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, TextColumn

import evalframe as ef
from evalframe.cli._console import Lazy, stdout
from evalframe.cli._options import ClampOpt, DatasetArg, JsonOpt, OutOpt, default_out

if TYPE_CHECKING:
    import polars as pl

    import evalframe.cli._render as ui
    from evalframe import format as fmt
else:
    pl, ui, fmt = Lazy("polars"), Lazy("evalframe.cli._render"), Lazy("evalframe.format")


def sweep(
    dataset: DatasetArg,
    grid: Annotated[
        Path, typer.Option("--grid", "-g", help="Grid file (YAML/JSON), see docs/sweep.md.")
    ],
    out: OutOpt = None,
    curve: Annotated[
        bool,
        typer.Option("--curve", help="Also write threshold_curve for the grid's base config."),
    ] = False,
    clamp: ClampOpt = False,
    max_configs: Annotated[
        int | None,
        typer.Option(
            "--max-configs",
            min=1,
            show_default=False,
            help="Refuse grids of more configs than this (default {max_configs}).",
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Recompute every run under many configs at once; write sweep and sweep_configs.

    Example: [bold]evalframe sweep runs/ --grid grid.yaml --curve[/bold]
    """
    limit = {} if max_configs is None else {"max_configs": max_configs}
    fingerprint = ef.inputs_fingerprint(dataset)  # before reading: a later change marks it stale
    ds = ef.load_dataset(dataset, clamp=clamp)
    spec = ef.load_grid(grid, evaluators=ds.evaluators, **limit)
    target = default_out(dataset, out)
    with sweep_progress(len(spec.configs)) as on_chunk:
        tables = ef.sweep_tables(ds, spec, curve=curve, on_chunk=on_chunk)
    ef.write_tables(
        tables,
        target,
        config_json=spec.canonical_json(),
        command="sweep",
        dataset=dataset,
        inputs_fingerprint=fingerprint,
    )
    table = tables["sweep"]
    if as_json:
        ui.print_json(table.to_dicts())
        return
    for part in sweep_report(table, spec.params):
        stdout.print(part)
    stdout.print(
        ui.say(
            f"{len(spec.configs)} configs × {table['run_id'].n_unique()} runs; "
            "tables written to {}/",
            target,
        )
    )


@contextmanager
def sweep_progress(
    total: int, console: Console | None = None
) -> Iterator[Callable[[int, int], None] | None]:
    """A progress bar over the grid's `total` configs on stderr (when it is a terminal)."""
    done = TextColumn("{task.completed:,.0f}/{task.total:,.0f} configs")
    with ui.progress_bar(console, TextColumn("sweeping"), BarColumn(), done) as bar:
        if bar is None:
            yield None
            return
        task = bar.add_task("sweep", total=total, completed=0)
        yield lambda done, _total: bar.update(task, completed=done)


def float_stat(value: object) -> float | None:
    """A statistic of a numeric column (`Series.min()`, `.max()`, `.mean()`) as the
    `float | None` it is: polars types it as any Python scalar, whatever the dtype."""
    if value is None:
        return None
    if isinstance(value, int | float):
        return float(value)
    raise TypeError(f"not a number: {value!r}")


def sweep_report(frame: pl.DataFrame, params: pl.DataFrame) -> list:
    """Per run: the range of pass rates across the grid, and the parameter that moves
    the verdicts most (largest spread of the mean pass rate across its values)."""
    swept = [c for c in params.columns if c.startswith("sweep_") and params[c].n_unique() > 1]
    rows = []
    for (run_id,), runs in frame.group_by("run_id", maintain_order=True):
        best, spread = "—", 0.0
        for col in swept:
            means = runs.group_by(col).agg(pl.col("pass_rate").mean())["pass_rate"]
            width = (float_stat(means.max()) or 0.0) - (float_stat(means.min()) or 0.0)
            if width > spread:
                best, spread = col.removeprefix("sweep_"), width
        rate = runs["pass_rate"]
        rows.append(
            (
                ui.id_text(run_id),
                str(runs.height),
                fmt.pct(float_stat(rate.min())),
                fmt.pct(float_stat(rate.max())),
                f"{int(runs['run_passed'].sum())}/{runs.height}",
                ui.id_text(best),
                f"{100 * spread:.1f} pts",
            )
        )
    headers = ["run", "configs", "pass rate min", "max", "configs passing run gates"]
    headers += ["moves verdicts most", "pass-rate spread"]
    columns = [(h, itemgetter(k)) for k, h in enumerate(headers)]
    title = "sweep: pass rate across the grid"
    return [ui.table(title, columns, rows, ("run", "moves verdicts most"))]
