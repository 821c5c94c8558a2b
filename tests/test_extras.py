"""Every install works as documented: the base install and each extra (report, spark,
notebook) go into a fresh virtual environment by `pip install "<repo>[extra]"`, and that
environment's own `evalframe` (or Jupyter) runs one real command. The four installs run
side by side and share pip's cache. Without pyspark, `--engine spark` is exit 2 with the
install hint printed literally (fast, in-process)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from typer.testing import CliRunner

import evalframe as ef
from evalframe.cli import app

ROOT = Path(__file__).resolve().parent.parent
EXTRAS = ("base", "report", "spark", "notebook")
HINT = 'pip install "evalframe[spark]"'
NO_JAVA = "a local Spark needs `java` on PATH (docs/spark.md)"


def _flat(text: str) -> str:
    return " ".join(text.split())


def _passed(step: str, code: int) -> bool:
    """`score` exits 1 when a gate fails, after scoring and writing its tables."""
    return code in ((0, 1) if step.startswith("evalframe score") else (0,))


def _env(venv: Path, home: Path) -> dict[str, str]:
    """This process's environment without what would point the subprocesses at other
    code (PYTHONPATH, the active virtual environment, Spark's Python)."""
    drop = ("PYTHONPATH", "VIRTUAL_ENV", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["JUPYTER_DATA_DIR"] = str(home / "jupyter")  # the venv's own kernel, no user one
    return env


def _install_and_run(extra: str, tmp: Path) -> list[tuple[str, int, str]]:
    """(step, exit code, output) of: a fresh venv, the README's pip install, the command."""
    venv, work = tmp / f"venv-{extra}", tmp / extra
    work.mkdir()
    env = _env(venv, work)
    steps: list[tuple[str, int, str]] = []

    def run(name: str, *cmd: str | Path) -> bool:
        proc = subprocess.run(
            [str(c) for c in cmd], cwd=work, env=env, capture_output=True, text=True
        )
        steps.append((name, proc.returncode, proc.stdout[-3000:] + proc.stderr[-3000:]))
        return _passed(name, proc.returncode)

    target = str(ROOT) if extra == "base" else f"{ROOT}[{extra}]"
    bin_ = venv / "bin"
    ok = run("venv", sys.executable, "-m", "venv", venv) and run(
        f'pip install "{target}"', bin_ / "python", "-m", "pip", "install", "-q",
        "--disable-pip-version-check", target,
    )  # fmt: skip
    if not ok:
        return steps
    if extra in ("base", "report", "spark"):
        demo = work / "demo"
        if not run("evalframe demo", bin_ / "evalframe", "demo", demo, "--cases", "20"):
            return steps
        if extra == "spark":
            if shutil.which("java", path=env["PATH"]) is None:
                steps.append(("evalframe score --engine spark", -1, NO_JAVA))
                return steps
            run("evalframe score --engine spark", bin_ / "evalframe", "score", demo,
                "--engine", "spark", "--json")  # fmt: skip
    else:
        notebook = ROOT / "notebooks" / "quickstart.ipynb"
        run("jupyter nbconvert --execute", bin_ / "jupyter", "nbconvert", "--to", "notebook",
            "--execute", notebook, "--output-dir", work / "out")  # fmt: skip
    return steps


@pytest.fixture(scope="module")
def installs(tmp_path_factory) -> tuple[Path, dict[str, list[tuple[str, int, str]]]]:
    tmp = tmp_path_factory.mktemp("extras")
    with ThreadPoolExecutor(len(EXTRAS)) as pool:
        futures = {extra: pool.submit(_install_and_run, extra, tmp) for extra in EXTRAS}
        return tmp, {extra: future.result() for extra, future in futures.items()}


@pytest.mark.slow
@pytest.mark.parametrize("extra", EXTRAS)
def test_each_extra_installs_into_a_fresh_venv_and_runs_its_command(installs, extra):
    tmp, results = installs
    steps = results[extra]
    for name, code, output in steps:
        if code == -1:
            pytest.skip(f"{extra}: installed; `{name}` not run: {output}")
        assert _passed(name, code), f"{extra}: `{name}` exited {code}:\n{output}"
        assert "Traceback" not in output, f"{extra}: `{name}`:\n{output}"
    names = [name for name, _code, _output in steps]
    want = {
        "base": "evalframe demo",
        "report": "evalframe demo",
        "spark": "evalframe score --engine spark",
        "notebook": "jupyter nbconvert --execute",
    }[extra]
    assert names[-1] == want, names
    if extra in ("base", "report"):
        assert (tmp / extra / "demo" / "report.html").stat().st_size > 0
    if extra == "notebook":
        assert (tmp / extra / "out" / "quickstart.ipynb").stat().st_size > 0


def test_engine_spark_without_pyspark_exits_2_with_the_install_hint(tmp_path, monkeypatch):
    demo = ef.write_demo(tmp_path / "demo", n_cases=5)
    monkeypatch.setitem(sys.modules, "pyspark", None)  # `import pyspark` fails
    result = CliRunner().invoke(app, ["score", str(demo), "--engine", "spark"])
    assert result.exit_code == 2, result.output
    assert HINT in _flat(result.output)
    assert "Traceback" not in result.output


def test_engine_help_prints_the_install_hint_literally():
    result = CliRunner(env={"COLUMNS": "400"}).invoke(app, ["score", "--help"])
    assert result.exit_code == 0
    assert HINT in _flat(result.output)
