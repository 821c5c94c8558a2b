"""Every notebook under notebooks/ is stored clean and executes top to bottom in a real
Jupyter kernel (nbclient + ipykernel), producing its charts.

Notebooks are stored without outputs (a test checks), executed in a temporary working
directory, and must display at least one chart (image/svg+xml, or a Vega-Lite mimebundle),
so a notebook cannot silently rot when the API or a table changes. They leave nothing
behind: each writes into one scratch folder (tempfile.TemporaryDirectory) that its last
cell removes, and the execution test checks that neither the working directory nor the
kernel's temporary folder keeps anything.
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
def test_notebook_writes_only_into_a_scratch_folder_it_removes(path: Path) -> None:
    """No tempfile.mkdtemp (a folder nobody removes): one TemporaryDirectory, removed by
    the last code cell (and by its finalizer when the kernel stops first)."""
    code = [_source(c) for c in _load(path)["cells"] if c["cell_type"] == "code"]
    text = "\n".join(code)
    assert "mkdtemp" not in text and "mkstemp" not in text
    assert text.count("tempfile.TemporaryDirectory(") == 1
    assert code[-1].startswith("SCRATCH.cleanup()")
    assert "SCRATCH = tempfile.TemporaryDirectory(" in text


@pytest.mark.slow  # outside the fast lane (pyproject `slow`): a Jupyter kernel per notebook
@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.name)
def test_notebook_executes_and_shows_its_charts(
    path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cwd, scratch = tmp_path / "cwd", tmp_path / "tmp"
    cwd.mkdir()
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))  # the kernel's tempfile folder
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(cwd)}}
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
    assert list(cwd.iterdir()) == [], f"{path.name} left files in its working directory"
    left = [p.name for p in scratch.iterdir() if p.name.startswith("evalframe-notebook-")]
    assert left == [], f"{path.name} left its scratch folder behind: {left}"
    last = nb.cells[-1].outputs[-1]["data"]["text/plain"]
    assert last == "False"  # WORK no longer exists


# --- README's Python example: the same tour without Jupyter -------------------------------


def test_readme_python_example_prints_what_it_computed(tmp_path, monkeypatch, capsys) -> None:
    """The README's Python block, run as written in an empty folder, prints the run table
    and the comparison (not nothing), and its comment tells the truth about `out/`: a link
    to the set's current version in .evalframe/out.set/ (the store's atomic swap)."""
    import os
    import re

    readme = (NOTEBOOKS.parent / "README.md").read_text(encoding="utf-8")
    code = re.search(r"## Python API\n\n```python\n(.*?)```", readme, re.DOTALL)
    assert code is not None
    monkeypatch.chdir(tmp_path)
    exec(compile(code.group(1), "README.md", "exec"), {})
    printed = capsys.readouterr().out
    for run in ("2026-10-01-v1.4", "2026-10-15-v1.5", "2026-11-01-v1.6"):
        assert run in printed
    assert "pass_rate" in printed and "run_passed" in printed
    assert "regression_detected" in printed and "pass_rate_delta" in printed
    out = tmp_path / "out"
    assert out.is_symlink()
    target = Path(os.readlink(out))
    assert target.parts[:2] == (".evalframe", "out.set")
    assert "out/ is a link to the set's" in code.group(1) and ".evalframe/out.set/" in code.group(1)
