"""docs/cli.md is the command reference: a section per command of the typer app naming
every argument and option (long and short forms) of that command, and no section for a
command that does not exist."""

from __future__ import annotations

import re
from pathlib import Path

import typer.main

from evalframe.cli import app

CLI_MD = Path(__file__).resolve().parents[1] / "docs" / "cli.md"
HEADING = re.compile(r"^## `evalframe (\S+)`$", re.MULTILINE)


def _sections() -> dict[str, str]:
    text = CLI_MD.read_text(encoding="utf-8")
    marks = list(HEADING.finditer(text))
    ends = [m.start() for m in marks[1:]] + [len(text)]
    return {m[1]: text[m.end() : end] for m, end in zip(marks, ends, strict=True)}


def _names(param) -> list[str]:
    """How a parameter is written in the docs: an argument by its upper-case name
    (DATASET), an option by each of its flags (--out, -o, --no-what-if)."""
    if param.param_type_name == "argument":
        return [param.name.upper()]
    return [*param.opts, *param.secondary_opts]


def test_every_command_and_option_is_in_docs_cli_md():
    sections = _sections()
    commands = typer.main.get_command(app).commands
    assert sorted(sections) == sorted(commands), "docs/cli.md sections vs commands"
    missing = [
        f"{name}: {flag}"
        for name, command in commands.items()
        for param in command.params
        for flag in _names(param)
        if not re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", sections[name])
    ]
    assert missing == [], "not in docs/cli.md:\n" + "\n".join(missing)


def test_the_check_sees_a_missing_option():
    """The flag search is exact: `-c` is not found inside `--clamp`."""
    flag = "-c"
    assert not re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", "`--clamp` `--check`")
    assert re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", "`--config, -c FILE`")
