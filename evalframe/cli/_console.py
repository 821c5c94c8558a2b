"""The terminal's two consoles, light to import (rich only): `--version`, `--help` and the
error path of the command line print through them without loading a renderer."""

from __future__ import annotations

import sys
from importlib import import_module
from typing import Any

from rich.console import Console

_plain = not sys.stdout.isatty()
# soft_wrap: plain text (messages, paths) is never hard-wrapped at the console width, so a
# path in a message stays one piece when the output goes to a file or a pipe; tables are
# still laid out to the width (160 columns when stdout is not a terminal).
# emoji=False: `:smile:` in an id or a path stays that text (no emoji codes in messages)
stdout = Console(soft_wrap=True, width=160 if _plain else None, emoji=False)
stderr = Console(stderr=True, soft_wrap=True, emoji=False)


class Lazy:
    """A module imported on first use of one of its names: the commands name polars and the
    renderers at the top, and `--help` still never imports them."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        return getattr(import_module(self._name), attr)
