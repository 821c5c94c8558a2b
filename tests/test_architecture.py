"""The house: evalframe's import graph has no cycle, follows the declared stage order, and
no module imports another module's private (`_name`) definitions.

Every import counts, function-level ones too (they hid three cycles once). The stage
order is the one docs/architecture.md draws; a module may import its own stage and the
stages below it, never one above.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "evalframe"

STAGES: tuple[tuple[str, ...], ...] = (
    ("evalframe._private", "schema", "errors", "version"),  # names and errors
    ("rules",),  # every rule, written once (evalframe/_private/rules/)
    # how values are shown (evalframe/format.py, public: the terminal's and the report's)
    ("stats", "config", "evalframe.format"),
    ("store",),  # result sets, input tables, the lock
    ("data",),  # open, validate and key the input tables
    ("scoring",),  # execution_scores, evaluator_scores
    ("compare",),  # pairs and the comparison tables
    ("summaries",),  # case_summary, run_summary, slices
    ("sweep",),
    ("engines",),  # polars, DuckDB and Spark adapters
    ("pipeline",),  # score_tables, compare_tables, sweep_tables, cases
    ("ingest",),  # other tools' files -> dataset tables
    ("report",),  # charts and report.html
    # the public API and the command line on it (evalframe/cli/: one module per command,
    # which imports the public API: test_the_cli_imports_only_the_public_api)
    (
        "evalframe",
        "evalframe.cli",
        "evalframe.plots",
        "evalframe.spark",
        "evalframe.__main__",
    ),
)
"""Stages from the bottom up: groups are the folders (or modules) under evalframe/_private,
and the public modules on top."""


def _module(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


MODULES = {_module(p): p for p in PACKAGE.rglob("*.py")}


def _resolve(name: str) -> str | None:
    while name:
        if name in MODULES:
            return name
        name = name.rpartition(".")[0]
    return None


@cache
def _tree(module: str) -> ast.Module:
    """The module's syntax tree, parsed once for every check of this file."""
    return ast.parse(MODULES[module].read_text(encoding="utf-8"))


@cache
def _imports(module: str) -> tuple[tuple[str, str | None, int], ...]:
    """(imported module, imported name or None, line) for every import of `module`."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out: list[tuple[str, str | None, int]] = []
    for node in ast.walk(_tree(module)):
        if isinstance(node, ast.Import):
            out += [(a.name, None, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                head = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*head, *([node.module] if node.module else [])])
            for alias in node.names:
                full = f"{base}.{alias.name}"
                out.append((full if full in MODULES else base, alias.name, node.lineno))
    return tuple((m, n, line) for m, n, line in out if m.split(".")[0] == "evalframe")


GRAPH: dict[str, set[str]] = defaultdict(set)
for _name in MODULES:
    for _target, _, _ in _imports(_name):
        _resolved = _resolve(_target)
        if _resolved and _resolved != _name:
            GRAPH[_name].add(_resolved)


def _group(module: str) -> str:
    parts = module.split(".")
    if len(parts) >= 3 and parts[1] == "_private":
        return parts[2]
    if parts[:2] == ["evalframe", "cli"]:
        return "evalframe.cli"
    return module


def _stage(module: str) -> int:
    group = _group(module)
    for i, names in enumerate(STAGES):
        if group in names:
            return i
    raise AssertionError(f"{module}: its group {group!r} has no stage in STAGES")


def _cycles() -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(GRAPH[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(MODULES):
        if v not in index:
            visit(v)
    return found


def test_every_module_has_a_stage():
    for module in MODULES:
        _stage(module)


def test_the_import_graph_has_no_cycle():
    assert _cycles() == []


def test_imports_follow_the_stage_order():
    upward = [
        f"{m} -> {t}" for m in sorted(GRAPH) for t in sorted(GRAPH[m]) if _stage(t) > _stage(m)
    ]
    assert upward == [], "imports that run against the stage order:\n" + "\n".join(upward)


def test_no_module_imports_another_modules_private_names():
    found = [
        f"{MODULES[m].relative_to(ROOT)}:{line} imports {name} from {target}"
        for m in sorted(MODULES)
        for target, name, line in _imports(m)
        if name and name.startswith("_") and not name.startswith("__") and target != m
    ]
    assert found == [], "\n".join(found)


def _private_attributes(module: str) -> list[str]:
    """`alias._name` where `alias` is an imported evalframe module (`C._sides(...)`)."""
    tree = _tree(module)
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            aliases |= {a.asname or a.name: a.name for a in node.names if a.name in MODULES}
        elif isinstance(node, ast.ImportFrom) and node.module:
            for a in node.names:
                if f"{node.module}.{a.name}" in MODULES:
                    aliases[a.asname or a.name] = f"{node.module}.{a.name}"
    return [
        f"{MODULES[module].relative_to(ROOT)}:{node.lineno} uses {aliases[node.value.id]}."
        f"{node.attr}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id in aliases
        and node.attr.startswith("_")
        and not node.attr.startswith("__")
    ]


@pytest.mark.slow
def test_no_module_reaches_into_another_modules_private_names():
    found = [line for m in sorted(MODULES) for line in _private_attributes(m)]
    assert found == [], "\n".join(found)


def test_the_rule_layer_imports_only_schema():
    """rules/ sits on the names alone: it can be read (and generated into SQL) without
    any engine, table reader or renderer."""
    for module in MODULES:
        if _group(module) == "rules":
            outside = {t for t in GRAPH[module] if _group(t) not in ("rules", "schema")}
            assert not outside, f"{module} imports {sorted(outside)}"


def test_the_graph_sees_function_level_imports():
    """A guard for the walker itself: validate.py once imported scoring inside a function."""
    probe = "evalframe._private.rules.verdicts"
    assert "evalframe._private.schema" in GRAPH[probe]

    def function_spans(module: str) -> list[tuple[int, int]]:
        tree = _tree(module)
        return [
            (node.lineno, node.end_lineno or 0)
            for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef)
        ]

    nested = []
    for m in MODULES:
        spans = function_spans(m)  # parsed once per module
        nested += [(m, t) for t, _, line in _imports(m) if any(a < line <= b for a, b in spans)]
    assert nested, "no function-level import found: the walker would miss hidden cycles"


def test_the_cli_imports_only_the_public_api():
    """evalframe/cli/ is a user of the public API (`evalframe`, evalframe.format,
    evalframe.plots): no import of evalframe._private, however late or typing-only."""
    found = [
        f"{MODULES[module].relative_to(ROOT)}:{line} imports {target}"
        for module in sorted(MODULES)
        if _group(module) == "evalframe.cli"
        for target, _, line in _imports(module)
        if target.startswith("evalframe._private")
    ]
    assert found == [], "\n".join(found)
