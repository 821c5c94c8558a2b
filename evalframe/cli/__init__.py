"""The `evalframe` command line: a thin layer over the Python API (docs/cli.md).

One module per command (`evalframe/cli/<name>.py`) declares its options, makes its call
into the public API and renders the result; this package registers them on one typer app.
At import only typer, rich and the option declarations load: a command imports polars and
the renderers (`_render.py`) inside its body, so `--help`, `--version` and usage errors
never pay for polars, DuckDB or pyarrow (tests/test_startup.py).

Exit codes: 0 ok; 1 a gate failed (`score --check`) or a regression was detected
(`compare`; with `--decide`, a pair's decision fails); 2 bad input or usage; 3 `compare
--decide`: no pair fails, one is inconclusive.
"""

from __future__ import annotations

import functools
import importlib
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from typer.core import TyperGroup

import evalframe as ef
from evalframe import EvalframeError
from evalframe.cli._console import Lazy, stderr, stdout
from evalframe.cli._options import fill_late_help

if TYPE_CHECKING:
    import evalframe.cli._render as ui
else:
    ui = Lazy("evalframe.cli._render")


class _Group(TyperGroup):
    """The command group: a command's help fills its late fields (options.LATE_HELP) when
    -h/--help follows the command, so help that names presets or limits costs nothing
    otherwise."""

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        name, command, rest = super().resolve_command(ctx, args)
        if command is not None and set(rest) & set(ctx.help_option_names):
            fill_late_help(command)
        return name, command, rest


app = typer.Typer(
    name="evalframe",
    cls=_Group,
    help="Vectorized analytics over LLM-judge outputs: scores, verdicts, gates, regressions.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="rich",
    context_settings={"help_option_names": ["-h", "--help"]},
)

F = TypeVar("F", bound=Callable[..., Any])


def _print_version(value: bool) -> None:
    if value:
        stdout.print(f"evalframe {ef.__version__}", highlight=False)
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            "-V",
            callback=_print_version,
            is_eager=True,
            help="Print the version and exit.",
        ),
    ] = False,
) -> None:
    """Vectorized analytics over LLM-judge outputs: scores, verdicts, gates, regressions."""


def handles_errors(fn: F) -> F:
    """Turn EvalframeError into its message on stderr and exit code 2 (the message
    quotes ids and example keys: printed literally, control characters visible); a corrupt
    file polars, pyarrow or DuckDB choked on (some polars panics are BaseExceptions) into
    `explain_read_error`'s message, exit code 2."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (typer.Exit, typer.Abort, KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:
            read = {"polars", "pyarrow", "duckdb"} & set(sys.modules)
            if isinstance(exc, EvalframeError):
                err: EvalframeError | None = exc
            elif read and not os.environ.get("EVALFRAME_DEBUG"):
                err = ef.explain_read_error(exc, kwargs.get("dataset"))
            else:
                err = None
            if err is None:
                raise
            stderr.print(ui.error_line(err), highlight=False)
            raise typer.Exit(err.exit_code) from None

    return wrapper  # type: ignore[return-value]


COMMANDS = ["score", "validate", "demo", "compare", "sweep", "cases", "agree", "sample", "trend"]
COMMANDS += ["flaky", "ingest", "sql", "report", "results", "plan"]
"""Every command, in the order `evalframe --help` lists them: the function NAME of the
module evalframe/cli/NAME.py."""
for _name in COMMANDS:
    _command = getattr(importlib.import_module(f"evalframe.cli.{_name}"), _name)
    app.command(_name)(handles_errors(_command))


def main() -> None:
    """The `evalframe` command. Off a terminal (a log, a pipe), usage errors print as
    click's plain lines, never boxed and wrapped at 80 columns; on one, typer's panels."""
    if stderr.is_terminal:
        app()
        return
    try:
        code = app(standalone_mode=False)
    except typer.Abort:
        stderr.print("Aborted.")
        code = 1
    except Exception as exc:
        # click's usage errors (typer vendors click privately): they know how to show
        # themselves plainly and carry their exit code
        show, exit_code = getattr(exc, "show", None), getattr(exc, "exit_code", None)
        if not callable(show) or not isinstance(exit_code, int):
            raise
        show()
        code = exit_code
    raise SystemExit(code if isinstance(code, int) else 0)


if __name__ == "__main__":  # pragma: no cover
    main()
