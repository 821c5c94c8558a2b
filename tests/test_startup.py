"""Start-up: `import evalframe`, `import evalframe.cli`, `evalframe --help`
and `evalframe --version` load no engine library; the heavy ones load where a command
needs them. Each check runs in a fresh interpreter and reads its sys.modules (no timing)."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import evalframe as ef
from evalframe.cli import app

pytestmark = pytest.mark.slow  # outside the fast lane (pyproject `slow`)

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("polars", "duckdb", "pyarrow", "numpy", "altair")
"""Libraries a command loads when it needs them, never at start-up."""


def _loaded_after(code: str) -> list[str]:
    """The HEAVY modules in sys.modules after `code` runs in a new interpreter."""
    probe = (
        f"{code}\nimport json, sys\nprint(json.dumps(sorted(set({HEAVY!r}) & set(sys.modules))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.splitlines()[-1])


def test_importing_the_package_loads_no_engine_library():
    assert _loaded_after("import evalframe") == []


def test_importing_the_cli_loads_no_engine_library():
    assert _loaded_after("import evalframe.cli") == []


def test_help_and_version_load_no_engine_library():
    for args in (["--help"], ["--version"], ["-h"], []):
        code = (
            "import contextlib, io\nfrom evalframe.cli import app\n"
            "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
            f"    app({args!r}, prog_name='evalframe')"
        )
        assert _loaded_after(code) == [], args


def test_a_public_name_loads_its_module_on_first_use():
    assert _loaded_after("import evalframe\nevalframe.EvalframeError") == []
    assert "polars" in _loaded_after("import evalframe\nevalframe.case_summary")


def test_help_lists_every_command():
    out = subprocess.run(
        [sys.executable, "-m", "evalframe", "--help"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={**os.environ, "COLUMNS": "200"},
        check=False,
    )
    assert out.returncode == 0, out.stderr
    listed = {line.split()[1] for line in out.stdout.splitlines() if line.startswith("│ ")}
    commands = {c.name for c in app.registered_commands}
    assert len(commands) >= 13
    assert commands <= listed, sorted(commands - listed)


def test_version_prints_the_version():
    out = subprocess.run(
        [sys.executable, "-m", "evalframe", "--version"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        check=False,
    )
    assert out.returncode == 0 and out.stdout.strip() == f"evalframe {ef.__version__}"


def _type_checking_imports() -> dict[str, str]:
    """Name -> module of the imports under `if TYPE_CHECKING:` in evalframe/__init__.py."""
    tree = ast.parse((ROOT / "evalframe" / "__init__.py").read_text(encoding="utf-8"))
    blocks = [
        node
        for node in tree.body
        if isinstance(node, ast.If)
        and isinstance(node.test, ast.Name)
        and node.test.id == "TYPE_CHECKING"
    ]
    assert len(blocks) == 1
    return {
        alias.asname or alias.name: node.module or ""
        for node in ast.walk(blocks[0])
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }


def test_the_lazy_table_and_the_static_imports_agree():
    """One table (`_EXPORTS`) serves `__getattr__` and `__dir__`; the imports mypy and IDEs
    read list the same names from the same modules, and `__all__` is inside it."""
    table = vars(ef)["_EXPORTS"]
    assert _type_checking_imports() == table
    assert set(ef.__all__) <= set(table)
    assert set(ef.__all__) <= set(dir(ef))
    for name, module in table.items():
        assert getattr(ef, name) is getattr(sys.modules[module], name), name


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        _ = ef.no_such_name  # type: ignore[attr-defined]
