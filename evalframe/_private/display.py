"""How an id from someone else's file is shown: one rule for the terminal and the HTML report.

Run ids, case ids and evaluator names come from other tools' files. Shown raw, a control
character can clear a terminal, plant a hyperlink, abort the chart renderer or, with a bidi
override, visually reverse the text around it. `visible` makes those characters visible as
escapes; every other character (including `[`, `]`, `<`, `&` and the backslash) stays literal,
so markup and HTML escaping remain the caller's job.
"""

from __future__ import annotations

import re

__all__ = ["INVISIBLE", "visible"]

INVISIBLE = r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
"""The characters `visible` escapes, as a regex class that Python's `re` and polars
(Rust regex) read alike: C0 controls, DEL, C1 controls, the line/paragraph separators and
the bidi embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069). Use it to find
the values that need `visible` (e.g. `Series.str.contains(INVISIBLE)`), not to replace."""
_INVISIBLE = re.compile(INVISIBLE)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    r"""`text` with control, separator and bidi-control characters shown as escapes.

    Code points below U+0100 become `\xNN` (ESC -> `\x1b`, tab -> `\x09`, newline -> `\x0a`),
    the others `\uNNNN` (U+2028 -> `\u2028`, U+202E -> `\u202e`); lowercase hex. Everything
    else is returned unchanged, so a text without such characters is returned as is.
    """
    return _INVISIBLE.sub(_escape, text)
