"""The scoring policy: a frozen pydantic model, presets, loading and `config_id`
(docs/config.md)."""

from __future__ import annotations

import difflib
import hashlib
import json
import re
import warnings
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any

import pydantic
import yaml
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator
from yaml.nodes import MappingNode, Node, SequenceNode

from evalframe._private.errors import ConfigDeprecationWarning, ConfigError, UsageError
from evalframe._private.rules.constants import Aggregator, AttemptPassed, AttemptScore
from evalframe._private.rules.verdicts import OnMissing, OutcomesMode
from evalframe._private.schema import MAX_WEIGHT, MIN_WEIGHT

DEFAULT_THRESHOLD = 0.8

Unit = Annotated[float, Field(ge=0.0, le=1.0)]

MAX_DEPTH = 64
"""Deepest nesting a config may have (mappings and lists); deeper is refused."""
MAX_NODES = 100_000
"""Most YAML / JSON values a config file may expand to (aliases counted once per use)."""
MAX_FILE_BYTES = 10 * 2**20
"""Largest config or grid file read (10 MiB); a larger one (or a device such as /dev/zero)
is refused unread."""


def _deprecated(old: str, new: str) -> None:
    warnings.warn(
        f"config: `{old}` is deprecated; write `{new}` instead.",
        ConfigDeprecationWarning,
        stacklevel=2,
    )


def _pass_threshold(data: Any) -> Any:
    """The deprecated `pass_threshold` key, read as `threshold`."""
    if isinstance(data, dict) and "pass_threshold" in data:
        data = dict(data)
        value = data.pop("pass_threshold")
        _deprecated(f"pass_threshold: {value}", f"threshold: {value}")
        data.setdefault("threshold", value)
    return data


def _check_names(entries: dict[str, Any]) -> dict[str, Any]:
    """Evaluator names must be non-empty ("" is the path of the tree's root)."""
    if any(not str(name).strip() for name in entries):
        raise ValueError(
            "an evaluator name is empty or blank; the empty path is the evaluator tree's root"
        )
    return entries


Entries = Annotated[dict[str, "Evaluator"], AfterValidator(_check_names)]


class _Model(BaseModel):
    """Base of the config models (docs/config.md documents every key: type, default and
    meaning): strict, and true / false is refused where a number is expected (pydantic
    would read it as 1 / 0)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    @model_validator(mode="before")
    @classmethod
    def _no_bool_numbers(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for key, value in data.items():
                field = cls.model_fields.get(key) if isinstance(key, str) else None
                ann = field.annotation if field else bool
                if isinstance(value, bool) and not (
                    ann is bool or bool in getattr(ann, "__args__", ())
                ):
                    raise ValueError(f"`{key}`: {str(value).lower()} is not a number")
        return data


class Evaluator(_Model):
    """One node of the evaluator tree: a leaf (a judge metric) or a composite."""

    weight: float | None = Field(default=None, ge=0.0)
    required: bool = False
    min_score: Unit | None = None
    score_ranges: dict[str, str] | None = None
    higher_is_better: bool = True
    aggregator: Aggregator | None = None
    threshold: Unit | None = None
    children: Entries | None = None
    required_children: tuple[str, ...] = ()

    @model_validator(mode="before")
    @classmethod
    def _aliases(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        req = data.get("required")
        if isinstance(req, (int, float)) and not isinstance(req, bool):
            _deprecated(f"required: {req}", f"required: true, min_score: {req}")
            data["required"] = True
            data.setdefault("min_score", float(req))
        if "required_min_score" in data:
            value = data.pop("required_min_score")
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValueError(
                    f"`required_min_score` must be a number 0-10, got {value!r}; "
                    "hint: write `min_score` (0-1) instead"
                )
            _deprecated(f"required_min_score: {value}", f"min_score: {value / 10:g}")
            data.setdefault("min_score", value / 10)
        return _pass_threshold(data)

    @field_validator("weight", mode="after")
    @classmethod
    def _normal_weight(cls, weight: float | None) -> float | None:
        if weight is not None and 0 < weight < MIN_WEIGHT:
            raise ValueError(
                f"weight {weight:g} is below {MIN_WEIGHT:g}: weighted sums would underflow; "
                "use 0 to leave the evaluator out, or scale every weight up"
            )
        if weight is not None and weight > MAX_WEIGHT:
            raise ValueError(
                f"weight {weight:g} is above {MAX_WEIGHT:g}: weighted sums would overflow "
                "to infinity; scale every weight down"
            )
        return weight

    @model_validator(mode="after")
    def _shape(self) -> Evaluator:
        composite = self.aggregator is not None or self.children is not None
        if composite:
            if not self.children:
                raise ValueError("a composite evaluator needs at least one entry in `children`")
            if self.score_ranges is not None:
                raise ValueError("`score_ranges` labels leaf scores; a composite has none")
            if not self.higher_is_better:  # (true, the default, round-trips model_dump)
                raise ValueError(
                    "`higher_is_better` is the direction of a judge metric, set on leaves "
                    "only; a composite's score is already on the normalized, "
                    "higher-is-better scale of its children"
                )
            unknown = set(self.required_children) - set(self.children)
            if unknown:
                raise ValueError(
                    f"required_children {sorted(unknown)} are not children of this node "
                    f"(children: {sorted(self.children)})"
                )
        elif self.required_children or self.threshold is not None:
            raise ValueError(
                "`required_children` and `threshold` belong to composite nodes; "
                "add `aggregator` and `children`"
            )
        for key in self.score_ranges or {}:
            parse_range(key)
        return self

    @property
    def is_composite(self) -> bool:
        return self.children is not None

    @property
    def effective_aggregator(self) -> str:
        return self.aggregator or "weighted_average"


def parse_range(key: str) -> tuple[float, float]:
    try:
        lo, hi = (float(part) for part in key.split("-", 1))
    except ValueError:
        raise ValueError(f'score_ranges key "{key}" is not of the form "lo-hi"') from None
    if lo > hi:
        raise ValueError(f'score_ranges key "{key}" has lo > hi')
    return lo, hi


# --- --memory-limit: one grammar for every engine and the CLI --------------------------
DEFAULT_MEMORY_LIMIT = "3GB"
MEMORY_UNITS = {"B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12}
MEMORY_UNITS |= {"KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40}
MIN_MEMORY_LIMIT = 64 * 10**6
"""64MB: below it no engine can hold even a small dataset's working set."""
MAX_MEMORY_LIMIT = 2**50
"""1024TiB: above any machine; larger values are typos (1e30GB)."""
_MEMORY = re.compile(r"(?P<num>\d{1,15}(?:\.\d{1,15})?) ?(?P<unit>[KMGT]I?B|B)?", re.IGNORECASE)
MEMORY_LIMIT_GRAMMAR = (
    "an integer or decimal number and a unit B, KB, MB, GB, TB (powers of 1000) or KiB, "
    "MiB, GiB, TiB (powers of 1024), e.g. 3GB, 512MB, 1.5GiB; a bare number is bytes"
)


def parse_memory_limit(text: str) -> int:
    """`--memory-limit` in bytes: '3GB' -> 3_000_000_000, '1.5GiB', '512MB', '4000000000'.
    UsageError (naming the value, the grammar and the bounds 64MB-1024TiB) for
    anything else: exponents, inf/nan, negative, empty, or a size out of bounds."""
    m = _MEMORY.fullmatch(text.strip())
    if m is None:
        raise UsageError(
            f"--memory-limit {text!r} is not a size; hint: write {MEMORY_LIMIT_GRAMMAR}."
        )
    size = int(Decimal(m["num"]) * MEMORY_UNITS[(m["unit"] or "B").upper()])
    if not MIN_MEMORY_LIMIT <= size <= MAX_MEMORY_LIMIT:
        raise UsageError(
            f"--memory-limit {text!r} is {'too small' if size < MIN_MEMORY_LIMIT else 'too large'}"
            f": it must be between 64MB and 1024TiB; hint: the default is {DEFAULT_MEMORY_LIMIT}."
        )
    return size


MAX_ATTEMPTS_K = 1_000_000
"""Largest k of `attempts.k`: far above any run's attempts per case, small enough for
every engine's integer arithmetic."""


class Attempts(_Model):
    """How repeated attempts of a case reduce to one case result (docs/scoring.md#cases)."""

    score: AttemptScore = "mean"
    passed: AttemptPassed = "all"
    k: tuple[Annotated[int, Field(strict=True, gt=0)], ...] = ()

    @field_validator("k", mode="after")
    @classmethod
    def _sorted_k(cls, k: tuple[int, ...]) -> tuple[int, ...]:
        too_big = [v for v in k if v > MAX_ATTEMPTS_K]
        if too_big:
            shown = str(too_big[0]) if len(str(too_big[0])) <= 30 else f"{str(too_big[0])[:20]}..."
            raise ValueError(
                f"k = {shown} is more attempts per case than any run has; each k must be "
                f"between 1 and {MAX_ATTEMPTS_K} (pass@k needs at least k attempts of a case)"
            )
        return tuple(sorted(set(k)))


class RunGates(_Model):
    """The run-level gates (docs/scoring.md#runs)."""

    min_mean_score: Unit = 0.8
    min_pass_rate: Unit = 1.0
    min_pass_rate_lower: Unit | None = None


class Compare(_Model):
    """Regression limits for comparing a candidate run to a baseline (docs/compare.md)."""

    max_pass_rate_drop: Unit = 0.0
    max_mean_score_drop: Unit = 0.05
    max_latency_increase: float = Field(default=0.2, ge=0.0)
    case_delta: Unit = 0.05
    require_significance: bool = False


class History(_Model):
    """Thresholds of the case history across a series of runs (docs/history.md#flaky-cases,
    `case_history`)."""

    min_runs: int = Field(default=5, ge=1, strict=True)
    flaky_flip_rate: Unit = 0.3


class Decide(_Model):
    """Non-inferiority margins of the three-outcome decision per pair
    (docs/compare.md#decisions)."""

    pass_rate_margin: Unit = 0.05
    mean_score_margin: Unit = 0.05


class Judges(_Model):
    """When a judge is admitted to gate a release, measured against human labels
    (docs/judges.md#admission); null turns a limit off."""

    min_labeled: int = Field(default=100, ge=0, strict=True)
    min_sensitivity: Unit | None = 0.8
    min_specificity: Unit | None = 0.8
    min_kappa: float | None = Field(default=None, ge=-1.0, le=1.0)
    max_false_pass: Unit | None = 0.05


_LATER_FIELDS = {
    "attempts": ("k",),
    "run_gates": ("min_pass_rate_lower",),
    "compare": ("require_significance",),
    "history": ("min_runs", "flaky_flip_rate"),
    "decide": ("pass_rate_margin", "mean_score_margin"),
    "judges": ("min_labeled", "min_sensitivity", "min_specificity", "min_kappa", "max_false_pass"),
}
"""Config fields added after 0.1: omitted from canonical_json at their default, so a policy
keeps its config_id across versions (a section left empty is omitted too); the evaluator
entries' `higher_is_better` likewise, at every depth of the tree."""


def _drop_later_entry_defaults(entries: dict[str, Any] | None) -> None:
    for entry in (entries or {}).values():
        if entry.get("higher_is_better") is True:
            del entry["higher_is_better"]
        _drop_later_entry_defaults(entry.get("children"))


class Config(_Model):
    """A resolved scoring policy. Every output row carries its `config_id`."""

    threshold: Unit = DEFAULT_THRESHOLD
    threshold_override: Unit | None = None
    borderline: Unit | None = 0.6
    aggregator: Aggregator = "weighted_average"
    required_children: tuple[str, ...] = ()
    on_missing: OnMissing = "skip"
    outcomes: OutcomesMode = "gate"
    attempts: Attempts = Attempts()
    evaluators: Entries | None = None
    run_gates: RunGates = RunGates()
    compare: Compare = Compare()
    history: History = History()
    decide: Decide = Decide()
    judges: Judges = Judges()

    @model_validator(mode="before")
    @classmethod
    def _aliases(cls, data: Any) -> Any:
        return _pass_threshold(data)

    @model_validator(mode="after")
    def _check(self) -> Config:
        if self.evaluators is not None and not self.evaluators:
            raise ValueError(
                "`evaluators` is empty; list at least one, or leave it out to score every "
                "evaluator in the data"
            )
        if self.required_children:
            unknown = set(self.required_children) - set(self.evaluators or {})
            if unknown:
                raise ValueError(
                    f"required_children {sorted(unknown)} are not listed under `evaluators`"
                )
        return self

    @property
    def config_id(self) -> str:
        """First 12 hex digits of the sha256 of the canonical JSON of this config."""
        return hashlib.sha256(self.canonical_json().encode()).hexdigest()[:12]

    def canonical_json(self) -> str:
        """Sorted keys, defaults filled in, no whitespace: the input of `config_id`."""
        data = self.model_dump(mode="json")
        for section, keys in _LATER_FIELDS.items():
            default = type(getattr(self, section))().model_dump(mode="json")
            for key in keys:
                if data[section].get(key) == default[key]:
                    del data[section][key]
            if not data[section]:
                del data[section]
        _drop_later_entry_defaults(data.get("evaluators"))
        return json.dumps(data, sort_keys=True, separators=(",", ":"))


CONNEXITY_WEIGHTS = {
    "tool_routing": 0.15,
    "parameter_extraction": 0.15,
    "result_interpretation": 0.15,
    "grounding_fidelity": 0.125,
    "instruction_compliance": 0.125,
    "information_gathering": 0.10,
    "conversation_management": 0.10,
    "response_delivery": 0.10,
}
"""The eight judge metrics of seed 000 and their default weights."""

PRESETS: dict[str, dict[str, Any]] = {
    "default": {},
    "connexity": {
        "threshold": 0.75,
        "borderline": None,
        "evaluators": {name: {"weight": w} for name, w in CONNEXITY_WEIGHTS.items()},
        "on_missing": "fail",
        "outcomes": "gate",
        "run_gates": {"min_mean_score": 0.8, "min_pass_rate": 1.0},
    },
    "agentv": {"threshold": 0.8, "borderline": None, "on_missing": "skip"},
}
"""Named base configs (`load_config(preset=...)`, `--preset`): name -> config dict."""


def merge_config_dicts(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """Deep-merge mappings; `evaluators` (the tree) is replaced whole, never merged."""
    out = dict(base)
    for key, value in override.items():
        if key != "evaluators" and isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge_config_dicts(out[key], value)
        else:
            out[key] = value
    return out


class _ConfigLoader(yaml.SafeLoader):
    """SafeLoader that refuses duplicate keys (naming key and line) and documents whose
    aliases expand past MAX_NODES values or nest deeper than MAX_DEPTH."""

    def construct_document(self, node: Node) -> Any:
        _check_yaml_graph(node)
        return super().construct_document(node)

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _value in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            try:
                first = seen.setdefault(key, line)
            except TypeError:  # an unhashable key: SafeConstructor reports it
                continue
            if first != line:
                raise ConfigError(
                    f"line {line}: duplicate key {key!r} (first on line {first}); "
                    "hint: YAML would silently keep the last one; remove one of them."
                )
        return super().construct_mapping(node, deep=deep)


def _check_yaml_graph(root: Node) -> None:
    """Expanded size and depth of a composed YAML graph, computed without expanding it
    (aliases share nodes: each node's size is counted once, then reused). A refusal names
    the key (dotted path, where first met) whose value is too large."""
    size: dict[int, int] = {}
    depth: dict[int, int] = {}
    key_of: dict[int, str] = {id(root): ""}
    on_path: set[int] = set()
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        nid = id(node)
        if isinstance(node, SequenceNode):
            kids: list[Node] = list(node.value)
        elif isinstance(node, MappingNode):
            kids = [n for pair in node.value for n in pair]
            for k, v in node.value:
                name = str(k.value) if isinstance(k.value, str) else "?"
                key_of.setdefault(id(v), f"{key_of[nid]}.{name}".lstrip("."))
        else:
            kids = []
        for k in kids:
            key_of.setdefault(id(k), key_of[nid])
        if done:
            on_path.discard(nid)
            size[nid] = 1 + sum(size[id(k)] for k in kids)
            depth[nid] = 1 + max((depth[id(k)] for k in kids), default=0)
            if size[nid] > MAX_NODES:
                what = f"key `{key_of[nid]}`" if key_of[nid] else "the document"
                raise ConfigError(
                    f"line {node.start_mark.line + 1}: {what} expands to more than "
                    f"{MAX_NODES:,} values (nested aliases?); refused."
                )
            if depth[nid] > MAX_DEPTH:
                raise ConfigError(
                    f"line {node.start_mark.line + 1}: nested deeper than {MAX_DEPTH} levels; "
                    "refused."
                )
            continue
        if nid in size:
            continue
        if nid in on_path:
            raise ConfigError(
                f"line {node.start_mark.line + 1}: an alias refers to its own anchor "
                "(a recursive structure); refused."
            )
        on_path.add(nid)
        stack.append((node, True))
        stack.extend((k, False) for k in kids if id(k) not in size)


def _check_shape(data: Any, source: str) -> None:
    """Refuse values nested deeper than MAX_DEPTH or larger than MAX_NODES (iteratively;
    shared sub-objects are counted once per reference)."""
    stack: list[tuple[Any, int]] = [(data, 1)]
    count = 0
    while stack:
        value, level = stack.pop()
        count += 1
        if level > MAX_DEPTH:
            raise ConfigError(f"{source}: nested deeper than {MAX_DEPTH} levels; refused.")
        if count > MAX_NODES:
            raise ConfigError(f"{source}: more than {MAX_NODES:,} values; refused.")
        if isinstance(value, dict):
            stack.extend((v, level + 1) for v in value.values())
        elif isinstance(value, list | tuple):
            stack.extend((v, level + 1) for v in value)


def _decode(raw: bytes, path: Path) -> str:
    """Config bytes as text: UTF-8 (BOM optional), or UTF-16 / UTF-32 with a BOM."""
    boms = (
        (b"\xff\xfe\x00\x00", "utf-32"),
        (b"\x00\x00\xfe\xff", "utf-32"),
        (b"\xef\xbb\xbf", "utf-8-sig"),
        (b"\xff\xfe", "utf-16"),
        (b"\xfe\xff", "utf-16"),
    )
    encoding = next((enc for bom, enc in boms if raw.startswith(bom)), "utf-8")
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1 if encoding == "utf-8" else None
        where = f"{path}:{line}" if line else str(path)
        raise ConfigError(
            f"config file {where}: not {encoding.upper()} text ({exc.reason} at byte "
            f"{exc.start}); hint: save it as UTF-8."
        ) from None


def _json_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ConfigError(f"duplicate key {key!r}; hint: remove one of them.")
        out[key] = value
    return out


def read_config_file(path: str | Path, what: str = "config") -> dict[str, Any]:
    """Read a YAML or JSON config file into a plain mapping (`what` names it in errors:
    "config", "grid").

    Refused with a ConfigError naming the file: unreadable or undecodable bytes (UTF-8,
    or UTF-16 / UTF-32 with a BOM, are read), syntax errors, duplicate keys, nesting
    deeper than MAX_DEPTH, documents expanding past MAX_NODES values (alias bombs).
    """
    path = Path(path)
    try:
        with path.open("rb") as f:
            raw = f.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise ConfigError(
            f"cannot read {what} file {path}: {exc.strerror}; hint: check the path."
        ) from None
    if len(raw) > MAX_FILE_BYTES:
        raise ConfigError(
            f"{what} file {path} is larger than {MAX_FILE_BYTES // 2**20} MiB; refused (a "
            f"{what} file is a few kilobytes: is this the file you meant?)."
        )
    text = _decode(raw, path)
    kind = path.suffix.lstrip(".") or "YAML"
    try:
        if path.suffix == ".json":
            data = json.loads(text, object_pairs_hook=_json_pairs)
        else:
            data = yaml.load(text, Loader=_ConfigLoader)  # a SafeLoader subclass
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(
            f"{what} file {path} is not valid {kind}: {exc}; hint: check indentation and quoting."
        ) from None
    except ConfigError as exc:
        raise ConfigError(f"{what} file {path}: {exc}") from None
    except RecursionError:
        raise ConfigError(
            f"{what} file {path}: nested deeper than {MAX_DEPTH} levels; refused."
        ) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(
            f"{what} file {path} must hold a mapping at the top level, not "
            f"{type(data).__name__}; hint: start with `threshold: 0.8`."
        )
    _check_shape(data, f"{what} file {path}")
    return data


def load_config(
    path: str | Path | None = None,
    *,
    preset: str | None = None,
    threshold: float | None = None,
    overrides: dict[str, Any] | None = None,
) -> Config:
    """Resolve a config: preset (default "default"), then the file, then `overrides`,
    then `threshold` (the CLI's --threshold, which beats executions.threshold)."""
    preset = preset or "default"
    if preset not in PRESETS:
        raise ConfigError(f"unknown preset {preset!r}; hint: choose one of {', '.join(PRESETS)}.")
    data = dict(PRESETS[preset])
    if path is not None:
        data = merge_config_dicts(data, read_config_file(path))
    if overrides:
        data = merge_config_dicts(data, overrides)
    if threshold is not None:
        data["threshold_override"] = threshold
    return config_from_dict(data, source=str(path) if path else f"preset {preset}")


def config_from_dict(data: dict[str, Any], *, source: str = "config") -> Config:
    """Validate a mapping into a Config, turning pydantic's errors into a ConfigError."""
    _check_shape(data, source)
    try:
        return Config.model_validate(data)
    except pydantic.ValidationError as exc:
        raise ConfigError(_render_errors(exc, source)) from None


def _render_errors(exc: pydantic.ValidationError, source: str) -> str:
    lines = [f"invalid config ({source}):"]
    for err in exc.errors():
        loc = [str(p) for p in err["loc"]]
        where = ".".join(loc) or "<top>"
        if err["type"] == "extra_forbidden":
            hint = _did_you_mean(loc)
            lines.append(f"  - unknown key `{where}`{hint}")
        else:
            msg = err["msg"].removeprefix("Value error, ")
            lines.append(f"  - `{where}`: {msg}" if loc else f"  - {msg}")
    lines.append("hint: see docs/config.md for every key, its type and default.")
    return "\n".join(lines)


def _did_you_mean(loc: list[str]) -> str:
    """Suggest the closest valid key at the location of an unknown key."""
    *parents, key = loc
    model: type[BaseModel] = Config
    for part in parents:
        field = model.model_fields.get(part)
        if field is None:  # a name inside evaluators / children
            model = Evaluator
            continue
        ann = field.annotation
        inner = next((a for a in getattr(ann, "__args__", (ann,)) if isinstance(a, type)), None)
        if inner is not None and issubclass(inner, BaseModel):
            model = inner
        elif part in ("evaluators", "children"):
            model = Evaluator
    valid = list(model.model_fields)
    if model is Evaluator:
        valid += ["required_min_score", "pass_threshold"]
    elif model is Config:
        valid += ["pass_threshold"]
    match = difflib.get_close_matches(key, valid, n=1, cutoff=0.6)
    return f" (did you mean `{match[0]}`?)" if match else f" (valid keys: {', '.join(valid)})"
