"""Packaging: evalframe type-checks with mypy, ships py.typed and its LICENSE."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_mypy_passes_over_evalframe():
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", "--config-file", "pyproject.toml"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "MYPY_FORCE_COLOR": "0"},
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_wheel_ships_py_typed_license_and_sql(tmp_path):
    from hatchling.builders.wheel import WheelBuilder

    (wheel,) = WheelBuilder(str(ROOT)).build(directory=str(tmp_path), versions=["standard"])
    names = zipfile.ZipFile(wheel).namelist()
    assert "evalframe/py.typed" in names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names), names
    assert any(n.startswith("evalframe/sql/") for n in names)
    assert not any(n.startswith("tests/") for n in names)


def test_license_matches_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "MIT"
    assert (ROOT / "LICENSE").read_text().startswith("MIT License\n")
    assert "mypy" in " ".join(project["optional-dependencies"]["test"])
