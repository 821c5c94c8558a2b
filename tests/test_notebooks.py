"""Every notebook under notebooks/ runs top to bottom without an exception.

The code cells of each notebook are executed in order in one namespace, in a temporary
working directory, so a notebook cannot silently rot when the API or a table changes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
PATHS = sorted(NOTEBOOKS.rglob("*.ipynb"))


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _source(cell: dict) -> str:
    source = cell["source"]
    return source if isinstance(source, str) else "".join(source)


def test_there_are_notebooks() -> None:
    assert PATHS, f"no notebooks under {NOTEBOOKS}"


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.name)
def test_notebook_is_clean_nbformat4(path: Path) -> None:
    nb = _load(path)
    assert nb["nbformat"] == 4
    assert nb["cells"], "empty notebook"
    for i, cell in enumerate(nb["cells"]):
        assert cell["cell_type"] in ("markdown", "code", "raw"), f"cell {i}"
        if cell["cell_type"] == "code":
            assert cell.get("outputs") == [], f"cell {i} has stored outputs"
            assert cell.get("execution_count") is None, f"cell {i} has an execution count"
            assert not any(
                line.lstrip().startswith(("%", "!")) for line in _source(cell).splitlines()
            ), f"cell {i} uses IPython magics; notebooks here must be plain Python"


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.name)
def test_notebook_runs(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__main__"}
    code_cells = [c for c in _load(path)["cells"] if c["cell_type"] == "code"]
    for i, cell in enumerate(code_cells):
        code = compile(_source(cell), f"{path.name}[code cell {i}]", "exec")
        try:
            exec(code, namespace)
        except Exception as exc:
            pytest.fail(f"{path.name}: code cell {i} raised {type(exc).__name__}: {exc}")
