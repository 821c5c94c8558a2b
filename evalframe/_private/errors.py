"""The exception hierarchy, all in this one module (and all importable from `evalframe`).
Every error evalframe raises on purpose is an EvalframeError:

    EvalframeError
    ├── ConfigError
    ├── UsageError
    │   ├── UnknownRunError
    │   └── ChartInputError
    ├── DatasetNotFoundError
    ├── ValidationError            (problems: tuple[Problem, ...])
    ├── IngestError
    ├── SparkValidationError
    ├── ResultsNotFoundError
    │   └── SetReplacedError
    └── StoreError
        ├── StoreWriteError        (also an OSError)
        ├── ReportWriteError       (also an OSError)
        └── CorruptManifestError

ConfigDeprecationWarning (a UserWarning) flags deprecated config aliases.

Messages say what is wrong, where, and end with a hint on what to do about it.
"""

from __future__ import annotations

from dataclasses import dataclass, field


class EvalframeError(Exception):
    """Base class of every error evalframe raises on purpose (CLI exit code 2)."""

    exit_code = 2


class ConfigError(EvalframeError):
    """The configuration (YAML/JSON file, preset, grid or CLI option) is invalid."""


class UsageError(EvalframeError):
    """A call or command was given arguments that cannot work together."""


class DatasetNotFoundError(EvalframeError):
    """The dataset path holds no readable `scores` table."""


class UnknownRunError(UsageError):
    """A run id asked for in a comparison is not in the scored data."""


class ChartInputError(UsageError):
    """A chart was given a table without the columns it draws."""


class IngestError(EvalframeError):
    """A source file cannot be converted: malformed, unsupported, or clashing with the
    dataset. The message names the file (and line, where there is one)."""


class SparkValidationError(EvalframeError):
    """A partition's rows failed evalframe's input validation (raised on the workers,
    surfaced when the job runs)."""


class StoreError(EvalframeError):
    """A result or input location cannot be written (a file, not writable, inside the
    dataset's input tables, locked by another writer, or the disk failed)."""


class StoreWriteError(StoreError, OSError):
    """The disk failed during a commit (full, permissions); the previous version is intact.
    Also an OSError, so `except OSError` keeps working."""


class ReportWriteError(StoreError, OSError):
    """The report could not be written (disk full, permissions); nothing was left behind
    and an earlier file at the path is unchanged. Also an OSError for `except OSError`."""


class ResultsNotFoundError(EvalframeError):
    """The asked-for result set or table does not exist."""


class SetReplacedError(ResultsNotFoundError):
    """A newer commit replaced the set while it was being read (read it again)."""


class CorruptManifestError(StoreError):
    """A set's manifest (`<version>.json`) is not what evalframe writes."""


@dataclass(frozen=True)
class Problem:
    """One class of bad input: which table and column, how many rows, a few example keys."""

    table: str
    column: str
    message: str
    count: int
    examples: tuple[str, ...] = field(default_factory=tuple)

    def render(self) -> str:
        where = f"{self.table}.{self.column}" if self.column else self.table
        text = f"{where}: {self.message}"
        if self.count:  # 0: a problem of the table's files or schema, not of its rows
            text += f" ({self.count} row{'s' if self.count != 1 else ''})"
        if self.examples:
            text += "; e.g. " + ", ".join(self.examples)
        return text


class ValidationError(EvalframeError):
    """Input tables break the data contract; `problems` lists every problem found."""

    def __init__(self, problems: list[Problem] | tuple[Problem, ...]):
        self.problems = tuple(problems)
        lines = [f"{len(self.problems)} problem(s) in the input tables:"]
        lines += [f"  - {p.render()}" for p in self.problems]
        lines.append(_hint(self.problems))
        super().__init__("\n".join(lines))


def _hint(problems: tuple[Problem, ...]) -> str:
    """The hint that fits the problems: --clamp only for score values it would fix."""
    from evalframe._private import schema as S  # polars: only once there are problems

    hint = "hint: fix the rows above in the source tables"
    if any(p.table == S.SCORES and p.column == S.SCORE and p.count for p in problems):
        clamp = "--clamp (clamp=True) to clamp out-of-range scores and turn NaN/inf into null"
        return f"{hint}, or pass {clamp}."
    if any(p.message.startswith("duplicate key") for p in problems):
        return f"{hint}; a run ingested twice is replaced with `evalframe ingest ... --replace`."
    return f"{hint}."


class ConfigDeprecationWarning(UserWarning):
    """A deprecated config alias was used; the message names its replacement."""
