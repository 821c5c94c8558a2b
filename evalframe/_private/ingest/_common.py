"""Shared pieces of the ingest parsers: the parsed-rows container, run ids, numbers checked
where they become scores, JSON / JSONL / CSV reading that names file and line, and turning
row dicts into typed frames."""

from __future__ import annotations

import csv
import io
import json
import math
import re
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeGuard

import polars as pl

from evalframe._private import schema as S
from evalframe._private.errors import IngestError

SOURCE_FILE = "source_file"
REPORTED_SCORE = "reported_score"
"""The score the tool itself reported for the execution (for checking a recomputation)."""


@dataclass
class Parsed:
    """Row dicts for the input tables, plus a suggested evaluator tree."""

    scores: list[dict[str, Any]] = field(default_factory=list)
    executions: list[dict[str, Any]] = field(default_factory=list)
    outcomes: list[dict[str, Any]] = field(default_factory=list)
    runs: list[dict[str, Any]] = field(default_factory=list)
    labels: list[dict[str, Any]] = field(default_factory=list)
    tree: dict[str, Any] = field(default_factory=dict)
    """Suggested `evaluators` mapping (config syntax); used only when `composite`."""
    composite: bool = False
    """True when the source nests evaluators (the flat default tree would mis-score it)."""
    notes: list[str] = field(default_factory=list)
    """What was left unscored and why (reported to the user)."""
    leaf_settings: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Config entries of flat evaluators from the tool's own metadata, by evaluator name:
    `higher_is_better: false` for a lower-is-better metric (docs/scoring.md#one-scale), `min_score`
    for the tool's own pass boundary on the normalized scale. The first source's entry wins."""

    def tables(self) -> dict[str, list[dict[str, Any]]]:
        return {t: getattr(self, t) for t in (S.SCORES, S.EXECUTIONS, S.RUNS, S.OUTCOMES, S.LABELS)}

    def extend(self, other: Parsed) -> None:
        for mine, theirs in zip(self.tables().values(), other.tables().values(), strict=True):
            mine += theirs
        merge_tree(self.tree, other.tree)
        self.composite = self.composite or other.composite
        self.notes += other.notes
        for name, entry in other.leaf_settings.items():
            self.leaf_settings.setdefault(name, dict(entry))

    def suggested_config(self) -> dict[str, Any] | None:
        """The config to score these rows as the tool did: the nested tree of a composite
        source; else, when a metric is lower-is-better, every evaluator of the rows with
        its entry (the default config would read a lower-is-better score as if higher were
        better); else None (the default config scores the source as the tool did)."""
        if self.composite:
            return {"evaluators": self.tree}
        if not any(e.get("higher_is_better") is False for e in self.leaf_settings.values()):
            return None
        names = dict.fromkeys(str(row[S.EVALUATOR]) for row in self.scores)
        return {"evaluators": {n: dict(self.leaf_settings.get(n, {})) for n in names}}


@dataclass(frozen=True)
class Options:
    """The user's options for one `ingest` call."""

    run_id: str | None = None
    id_cols: str | Sequence[str] | None = None
    scale_max: float | str | Mapping[str, float] | None = None
    metrics: str | Sequence[str] | None = None

    def scales(self, path: Path) -> Scales:
        """--scale-max: `5` -> {"*": 5}; `"a=5,b=10"` or a mapping -> per metric; each > 0."""
        value = self.scale_max
        pairs: list[tuple[str, Any]] = []
        if isinstance(value, Mapping):
            pairs = list(value.items())
        elif isinstance(value, int | float):
            pairs = [("*", value)]
        for item in split_list(value) if isinstance(value, str) else []:
            name, sep, num = item.rpartition("=")
            pairs.append((name.strip() if sep else "*", num))
        out = Scales()
        for name, num in pairs:
            try:
                top = float(num)
            except (TypeError, ValueError):
                top = float("nan")
            if not top > 0:
                raise IngestError(
                    f"{path}: scale_max {num!r} is not a positive number; hint: --scale-max 5 "
                    "or --scale-max 'faithfulness=5,rubric=10'."
                )
            out[str(name)] = top
        return out


class Scales(dict[str, float]):
    """--scale-max: the top of a metric's raw scale by name, "*" for every other metric."""

    def top(self, name: str, default: float = 1.0) -> float:
        return self.get(name, self.get("*", default))


def typed(value: Any, kind: type) -> Any:
    """`value` if it is a `kind`, else None (absent or malformed fields)."""
    return value if isinstance(value, kind) else None


def is_number(value: Any) -> TypeGuard[int | float]:
    """A JSON number (a bool is not one)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def text(value: Any) -> str | None:
    return None if value is None or value == "" else str(value)


def key(rid: str, case: str, attempt: int = 0) -> dict[str, Any]:
    return {S.RUN_ID: rid, S.CASE_ID: case, S.ATTEMPT: attempt}


def run_row(rid: str, created: datetime | None, label: Any = None, **extra: Any) -> dict:
    """A runs row: its id, start time, label (the id when none) and the tool's fields."""
    return {S.RUN_ID: rid, S.CREATED_AT: created, S.LABEL: label or rid, **extra}


def earliest(times: dict[str, Any], rid: str, ts: datetime | None) -> None:
    """Keep `ts` as run `rid`'s start time when it is the earliest seen so far."""
    if times.get(rid) is None or (ts is not None and ts < times[rid]):
        times[rid] = ts


def off_scale(where: str, name: str, lo: float, hi: float, top: float, column: str) -> str:
    """The note for a metric left unscored because its values leave its scale."""
    return (
        f"{where}: {name!r} not scored: its values ({lo:g} to {hi:g}) are outside 0-{top:g}"
        f"; kept as the executions column `{column}`; hint: --scale-max '{name}=N' scores "
        "it on 0-N."
    )


def widen(spans: dict[str, tuple[float, float]], name: str, value: float) -> None:
    lo, hi = spans.get(name, (value, value))
    spans[name] = (min(lo, value), max(hi, value))


@dataclass
class Node:
    """One evaluator of a tool's nested evaluator tree (AgentV graders, promptfoo
    assertions): a leaf, or a group of `children`."""

    name: str
    score: float | None
    weight: float | None
    threshold: Any
    fields: dict[str, Any]
    """The score row's other columns (weight, label, reason, the tool's own fields)."""
    children: list[Node] | None = None
    verdict: bool | None = None
    """The tool's pass / fail of the node where it counts toward the test's verdict."""


def emit_tree(
    nodes: list[Node],
    prefix: str,
    at: dict[str, Any],
    out: Parsed,
    tree: dict[str, Any],
    opaque: set[str] | frozenset[str] = frozenset(),
) -> None:
    """Score rows for the leaves of `nodes`, named by their path (`group/leaf`), and their
    config entries in `tree`: a group is the weighted average of its children, with the
    tool's weight and 0-1 pass threshold when it has them. A group in `opaque` (one whose
    score the tool did not compute from its children) is scored as a leaf itself, its
    children's rows kept as detail outside the tree."""
    for n in nodes:
        path = f"{prefix}{n.name}"
        if n.children is None or path in opaque:
            out.scores.append({**at, S.EVALUATOR: path, S.SCORE: n.score, **n.fields})
            tree.setdefault(n.name, {})
        if n.children is None:
            continue
        out.composite = True
        node = tree.setdefault(n.name, {"aggregator": "weighted_average", "children": {}})
        if n.weight is not None and n.weight != 1.0 and path not in opaque:
            node.setdefault("weight", n.weight)
        if isinstance(n.threshold, int | float) and 0 <= n.threshold <= 1 and path not in opaque:
            node.setdefault("min_score", float(n.threshold))
        sub = {} if path in opaque else node.setdefault("children", {})
        emit_tree(n.children, f"{path}/", at, out, sub, opaque)


def merge_tree(into: dict[str, Any], other: dict[str, Any]) -> None:
    """Union of two `evaluators` mappings; the first seen entry's parameters win."""
    for name, entry in other.items():
        mine = into.get(name)
        if mine is None:
            into[name] = json.loads(json.dumps(entry))
        elif "children" in mine and "children" in entry:
            merge_tree(mine["children"], entry["children"])


def unique_name(name: str, taken: set[str]) -> str:
    """`name`, or `name#2`, `name#3`, ... if siblings already use it."""
    out, k = name, 1
    while out in taken:
        k += 1
        out = f"{name}#{k}"
    taken.add(out)
    return out


def run_ids(base: str, groups: list[str]) -> dict[str, str]:
    """One run per group: the base alone when the source has one group, else `base/group`."""
    distinct = list(dict.fromkeys(groups))
    if len(distinct) <= 1:
        return {g: base for g in distinct}
    return {g: f"{base}/{g}" for g in distinct}


_CAMEL = re.compile(r"(?<=[a-z0-9])([A-Z])")


def snake_keys(obj: Any) -> Any:
    """A dict with camelCase keys turned into snake_case (shallow); other values as is."""
    if not isinstance(obj, dict):
        return obj
    return {_CAMEL.sub(r"_\1", k).lower(): v for k, v in obj.items()}


def as_dict(value: Any) -> dict[str, Any]:
    """`value` if it is a JSON object, else an empty dict (absent / malformed blocks)."""
    return value if isinstance(value, dict) else {}


def number(value: Any, where: str, what: str) -> float | None:
    """A finite JSON number (bools refused) or null, else an IngestError naming `where`:
    for a value that becomes a score (or weighs or bounds one)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise IngestError(f"{where}: {what} must be a number, got {value!r}")
    return finite(value, where, what)


_SCORE_FINITE = (
    "not a finite number; a value that becomes a score must be finite (refused: the eval "
    "tool recorded a failed computation, or the file is corrupt)."
)


def finite(value: int | float, where: str, what: str) -> float:
    """`value` as a float; NaN, infinities and integers beyond a float's range raise an
    IngestError naming `where` (and the line, for a value the JSON loader kept)."""
    if isinstance(value, NonFinite):
        raise IngestError(
            f"{where} (line {value.line}, column {value.col}): {what} is {value.token}, "
            f"{_SCORE_FINITE}"
        )
    try:
        out = float(value)
    except OverflowError:
        raise IngestError(
            f"{where}: {what} is an integer of {len(str(abs(int(value))))} digits, beyond "
            "the range of a number; refused."
        ) from None
    if not math.isfinite(out):
        raise IngestError(f"{where}: {what} is {out}, {_SCORE_FINITE}")
    return out


def metadata(value: Any, where: str, what: str) -> float | None:
    """A number that is not scored (a latency, a cost, an unscored metric): as `number`,
    but NaN and infinities are kept, for `settle_nonfinite` to leave null with a note."""
    if isinstance(value, float) and not math.isfinite(value):
        return value
    return number(value, where, what)


def count(value: Any, where: str, what: str) -> int | float | None:
    """A token count: a whole number within 0 .. 2**63-1 (None when not a number; NaN and
    infinities kept as by `metadata`)."""
    if not is_number(value):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return value
    num = finite(value, where, what)
    if not 0 <= num < 2**63 or num != int(num):
        raise IngestError(f"{where}: {what} {value!r} is not a count (0 to 2^63-1).")
    return int(value)


def parse_time(value: Any) -> datetime | None:
    """An ISO timestamp (or a datetime, from Parquet) as naive UTC, or None when absent or
    unparseable."""
    if not isinstance(value, datetime):
        try:
            value = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except (AttributeError, TypeError, ValueError):  # not text, or not a timestamp
            return None
    return value if value.tzinfo is None else value.astimezone(UTC).replace(tzinfo=None)


MAX_JSON_DEPTH = 200
"""Deepest nesting of arrays and objects an ingested JSON value may have."""


def _check_depth(obj: Any, where: str) -> None:
    """Refuse JSON nested deeper than MAX_JSON_DEPTH (checked iteratively, no recursion)."""
    stack: list[tuple[Any, int]] = [(obj, 1)]
    while stack:
        value, level = stack.pop()
        if isinstance(value, dict):
            children: Any = value.values()
        elif isinstance(value, list):
            children = value
        else:
            continue
        if level > MAX_JSON_DEPTH:
            raise IngestError(_too_deep(where))
        stack.extend((v, level + 1) for v in children)


def _too_deep(where: str) -> str:
    return (
        f"{where}: JSON nested deeper than {MAX_JSON_DEPTH} levels; refused (no eval tool "
        "writes such files; the file is corrupt or hostile)."
    )


class NonFinite(float):
    """NaN or an infinity (or a float literal beyond a float's range) as the JSON loader
    keeps it, with where it was: `finite` and `number` refuse it naming the line;
    `metadata` keeps it for `settle_nonfinite`; `dump_json` writes it as a string."""

    token: str = "NaN"
    source: str = ""
    line: int = 0
    col: int = 0


_MAX_INT = int(sys.float_info.max)
_NUMBER_TOKENS = re.compile(
    r'"(?:[^"\\]|\\.)*"'  # a string: skipped
    r"|(?P<const>-?Infinity|NaN)"
    r"|(?P<num>-?\d+(?P<frac>\.\d+)?(?P<exp>[eE][-+]?\d+)?)",
    re.DOTALL,
)


def _bad_tokens(text: str) -> Iterator[tuple[int, str]]:
    """(offset, token) of every number token a float cannot hold, in document order:
    NaN, +-Infinity, float literals that overflow, integers beyond a float's range."""
    for m in _NUMBER_TOKENS.finditer(text):
        if m["const"]:
            yield m.start(), m["const"]
        elif m["num"]:
            tok = m["num"]
            if m["frac"] or m["exp"]:
                if not math.isfinite(float(tok)):
                    yield m.start(), tok
            elif len(tok) > 300 and (len(tok) > 4000 or abs(int(tok)) > _MAX_INT):
                yield m.start(), tok


def _line_col(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


class _Refused(Exception):
    pass


def _loads(text: str, source: str, jsonl_line: int | None = None) -> Any:
    """json.loads that keeps NaN and infinities as `NonFinite` values placed at their file,
    line and column, and refuses integers beyond a float's range. Errors name the file and
    line (and the column, for a line of a JSONL file)."""
    jsonl = jsonl_line is not None
    where = f"{source}:{jsonl_line}" if jsonl else source
    kept: list[NonFinite] = []

    def constant(token: str) -> float:
        value = NonFinite(token)
        value.token, value.source = token, source
        kept.append(value)
        return value

    def integer(token: str) -> int:
        if len(token) > 300 and (len(token) > 4000 or abs(int(token)) > _MAX_INT):
            raise _Refused
        return int(token)

    def floating(token: str) -> float:
        return value if math.isfinite(value := float(token)) else constant(token)

    try:
        obj = json.loads(text, parse_constant=constant, parse_float=floating, parse_int=integer)
    except json.JSONDecodeError as exc:
        if jsonl:
            raise IngestError(
                f"{where}: not valid JSON ({exc.msg} at column {exc.colno}); "
                "hint: every line of a JSONL file must be one JSON object."
            ) from None
        raise IngestError(
            f"{where}:{exc.lineno}:{exc.colno}: not valid JSON ({exc.msg}); "
            "hint: the file may be truncated or not the format you named."
        ) from None
    except (_Refused, ValueError):
        integers = ((o, t) for o, t in _bad_tokens(text) if t.lstrip("-").isdigit())
        offset, token = next(integers, (0, "?"))
        line, col = _line_col(text, offset)
        shown = token if len(token) <= 24 else f"{token[:12]}...({len(token)} characters)"
        raise IngestError(
            f"{f'{where}: at column {col}' if jsonl else f'{where}:{line}:{col}'}: {shown} is an "
            f"integer of {len(token.lstrip('-'))} digits, beyond the range of a number; "
            "refused (a value evalframe cannot store: the file is corrupt)."
        ) from None
    except RecursionError:
        raise IngestError(_too_deep(where)) from None
    for value, (offset, _token) in zip(kept, _bad_tokens(text), strict=False):
        line, value.col = _line_col(text, offset)
        value.line = jsonl_line or line
    _check_depth(obj, where)
    return obj


def load_json_text(text: str, where: str) -> Any:
    """Parse JSON text (see `_loads`): `finite` / `number` refuse its NaN and infinities
    where a value becomes a score, `settle_nonfinite` leaves them null elsewhere."""
    return _loads(text, where)


class JsonText(str):
    """`dump_json`'s text, with the non-finite numbers it holds (counted by
    `settle_nonfinite`)."""

    held: tuple[float, ...] = ()


def dump_json(obj: Any) -> JsonText:
    """Strict JSON text of `obj`, for storing a tool's aggregates: NaN and infinities
    written as the strings "NaN", "Infinity", "-Infinity" (JSON has no such numbers)."""
    held: list[float] = []

    def safe(obj: Any) -> Any:
        if isinstance(obj, float) and not math.isfinite(obj):
            held.append(obj)
            return "NaN" if math.isnan(obj) else ("Infinity" if obj > 0 else "-Infinity")
        if isinstance(obj, dict):
            return {k: safe(v) for k, v in obj.items()}
        return [safe(v) for v in obj] if isinstance(obj, list) else obj

    text = JsonText(json.dumps(safe(obj), allow_nan=False))
    text.held = tuple(held)
    return text


def settle_nonfinite(parsed: Parsed) -> None:
    """The one rule for NaN and infinities outside scores (a score is refused by `finite`
    before it gets here): a non-finite value of a field that is not scored, or of
    metadata, is left null (kept as text inside a JSON text field), and each file and
    field with such values gets one note with their count; the rows are kept."""
    files = {r[S.RUN_ID]: str(r.get(SOURCE_FILE) or "the source") for r in parsed.runs}
    found: dict[tuple[str, str, str], int] = {}
    for table, rows in parsed.tables().items():
        for row in rows:
            for col, value in row.items():
                if isinstance(value, JsonText):
                    held: tuple[float, ...] = value.held
                    how = "kept as text"
                elif isinstance(value, float) and not math.isfinite(value):
                    held, how = (value,), "left null"
                    row[col] = None
                else:
                    continue
                for v in held:
                    src = getattr(v, "source", "") or files.get(row.get(S.RUN_ID), "the source")
                    key = (src, f"{table}.{col}", how)
                    found[key] = found.get(key, 0) + 1
    for (src, field_, how), n in sorted(found.items()):
        parsed.notes.append(
            f"{src}: {field_!r}: {n} non-finite value{'s' if n > 1 else ''} (NaN or "
            f"infinity) not scored, {how}; the rest of the run is ingested."
        )


def read_text(path: Path) -> str:
    """The file as text: UTF-8, a leading byte-order mark dropped."""
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise IngestError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise IngestError(f"{path}: cannot read ({exc.strerror})") from None


def read_json(path: Path) -> Any:
    return load_json_text(read_text(path), str(path))


def iter_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for every non-blank line; errors name file and line
    (numbers as in `load_json_text`).

    Lines end at \\n only: U+2028 and other Unicode separators are legal inside JSON
    strings and do not split a record."""
    for lineno, line in enumerate(read_text(path).split("\n"), start=1):
        if not line.strip():
            continue
        obj = _loads(line, str(path), lineno)
        if not isinstance(obj, dict):
            raise IngestError(f"{path}:{lineno}: expected a JSON object, got {type(obj).__name__}")
        yield lineno, obj


def frame(rows: list[dict[str, Any]], table: str) -> pl.DataFrame:
    """Rows as a frame: declared columns first with their contract types, extras after
    (all-null extras as strings)."""
    declared = S.TABLE_COLUMNS[table]
    if not rows:
        required = {c: spec[0] for c, spec in declared.items() if spec[1]}
        return pl.DataFrame(schema=required)
    keys = list(dict.fromkeys(k for row in rows for k in row))
    overrides = {k: declared[k][0] for k in keys if k in declared}
    df = pl.DataFrame(rows, schema_overrides=overrides, infer_schema_length=None)
    ordered = [k for k in declared if k in keys] + [k for k in keys if k not in declared]
    nulls = [pl.col(c).cast(pl.String) for c in ordered if df.schema[c] == pl.Null]
    return df.select(ordered).with_columns(nulls)


def split_list(value: str | Sequence[str] | None) -> list[str]:
    if value is None:
        return []
    items = value.split(",") if isinstance(value, str) else list(value)
    return [i.strip() for i in items if i.strip()]


def id_columns(
    id_cols: str | Sequence[str] | None, where: str, fmt: str, targets: tuple[str, ...], hint: str
) -> dict[str, str]:
    """`--id-cols TARGET=COLUMN,...` as {target: column}; anything else refused with `hint`."""
    out = {}
    for item in split_list(id_cols):
        target, sep, col = (part.strip() for part in item.partition("="))
        if not sep or not col or target not in targets:
            raise IngestError(
                f"{where}: --id-cols {item!r} is not understood for {fmt}; hint: {hint}."
            )
        out[target] = col
    return out


def read_records(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """(where, row) for every row of a table export: JSONL (`FILE:LINE`), a JSON array of
    objects (`FILE: [i]`), CSV with a header (`FILE:LINE`; every value a string, empty
    fields None) or Parquet (`FILE: row N`). Errors name the file and line or row."""
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return [(f"{path}:{n}", obj) for n, obj in iter_jsonl(path)]
    if suffix == ".json":
        data = read_json(path)
        if not isinstance(data, list):
            raise IngestError(f"{path}: expected a JSON array of row objects")
        for i, obj in enumerate(data):
            if not isinstance(obj, dict):
                raise IngestError(f"{path}: [{i}] is not a JSON object")
        return [(f"{path}: [{i}]", obj) for i, obj in enumerate(data)]
    if suffix == ".csv":
        header, records = csv_rows(path)
        return [
            (f"{path}:{n}", {k: v or None for k, v in zip(header, fields, strict=True)})
            for n, fields in records
        ]
    if suffix == ".parquet":
        rows = read_parquet(path).to_dicts()
        return [(f"{path}: row {i}", row) for i, row in enumerate(rows, start=1)]
    raise IngestError(f"{path}: expected a .jsonl, .json, .csv or .parquet file")


def read_parquet(path: Path) -> pl.DataFrame:
    try:
        return pl.read_parquet(path)
    except Exception as exc:  # polars raises several error types for bad files
        raise IngestError(f"{path}: not a readable Parquet file ({exc})") from None


def csv_rows(path: Path) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """The header and the (line, fields) of every record of a CSV file; line breaks inside
    quoted fields (and U+2028, which str.splitlines would split on) stay part of the field.
    Errors name the file and line."""
    reader = csv.reader(io.StringIO(read_text(path), newline=""))
    try:
        header = next(reader, None)
        if not header:
            raise IngestError(f"{path}:1: no header row; hint: the first line names the columns")
        out = []
        start = reader.line_num + 1
        for fields in reader:
            line, start = start, reader.line_num + 1
            if not fields:
                continue
            if len(fields) != len(header):
                raise IngestError(
                    f"{path}:{line}: {len(fields)} fields, the header has {len(header)}"
                )
            out.append((line, fields))
    except csv.Error as exc:
        raise IngestError(f"{path}:{reader.line_num}: not valid CSV ({exc})") from None
    return header, out
