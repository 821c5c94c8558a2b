"""Every notebook under notebooks/ is stored clean and executes top to bottom in a real
Jupyter kernel (nbclient + ipykernel), producing its charts.

Notebooks are stored without outputs (a test checks), executed in a temporary working
directory, and must display at least one chart (image/svg+xml, or a Vega-Lite mimebundle),
so a notebook cannot silently rot when the API or a table changes.
"""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

pytestmark = pytest.mark.slow  # outside the fast lane (pyproject `slow`)

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
PATHS = sorted(NOTEBOOKS.rglob("*.ipynb"))
CHART_MIMETYPES = ("image/svg+xml", "image/png", "application/vnd.vegalite")
MIN_CHARTS = {"quickstart.ipynb": 4, "compare.ipynb": 3, "what_if.ipynb": 3}


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _source(cell: dict) -> str:
    source = cell["source"]
    return source if isinstance(source, str) else "".join(source)


def test_there_are_the_three_notebooks() -> None:
    assert sorted(p.name for p in PATHS) == sorted(MIN_CHARTS)


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.name)
def test_notebook_is_clean_nbformat4(path: Path) -> None:
    nb = _load(path)
    assert nb["nbformat"] == 4
    assert nb["cells"], "empty notebook"
    nbformat.validate(nbformat.reads(path.read_text(encoding="utf-8"), as_version=4))
    for i, cell in enumerate(nb["cells"]):
        assert cell["cell_type"] in ("markdown", "code", "raw"), f"cell {i}"
        if cell["cell_type"] == "code":
            assert cell.get("outputs") == [], f"cell {i} has stored outputs"
            assert cell.get("execution_count") is None, f"cell {i} has an execution count"
            source = _source(cell)
            assert not any(line.lstrip().startswith(("%", "!")) for line in source.splitlines()), (
                f"cell {i} uses IPython magics; notebooks here must be plain Python"
            )
            assert "_private" not in source, f"cell {i} reaches into evalframe._private"


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.name)
def test_notebook_executes_and_shows_its_charts(path: Path, tmp_path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    try:
        client.execute()
    except CellExecutionError as exc:
        pytest.fail(f"{path.name}: a cell raised:\n{exc}")
    charts = [
        mime
        for cell in nb.cells
        if cell.cell_type == "code"
        for output in cell.outputs
        for mime in output.get("data", {})
        if mime.startswith(CHART_MIMETYPES)
    ]
    errors = [
        o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"
    ]
    assert not errors, f"{path.name}: error outputs {errors}"
    assert len(charts) >= MIN_CHARTS[path.name], (
        f"{path.name}: {len(charts)} chart outputs, expected at least {MIN_CHARTS[path.name]}"
    )
