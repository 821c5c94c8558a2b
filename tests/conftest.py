"""Test-wide settings.

Under CI (the `CI` environment variable is set, as `.ci/run` runs) Hypothesis is
derandomized, so a landing never depends on which random examples a run happens to draw;
local runs keep exploring new examples (and keep failures in the .hypothesis database).
Under CI a skipped ingest test (tests/test_ingest_*.py) is a failure.
"""

from __future__ import annotations

import os
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
if os.environ.get("CI"):
    settings.load_profile("ci")

pytest_plugins = ["pytester"]

STRICT_PREFIX = "test_ingest_"
"""Test files whose skips fail the run under CI: their fixtures ship in tests/fixtures/, so
a skip there means a fresh clone silently lost coverage."""


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):
    report = yield
    if (
        os.environ.get("CI")
        and report.skipped
        and item.path.name.startswith(STRICT_PREFIX)
        and not hasattr(report, "wasxfail")
    ):
        report.outcome = "failed"
        report.longrepr = (
            f"{item.nodeid} was skipped under CI ({report.longrepr}); ingest tests must run "
            "on a fresh clone: ship what they need under tests/fixtures/."
        )
    return report


@pytest.fixture(scope="session")
def spark():
    """ONE local[2] SparkSession for the whole test run (start-up costs ~10-15 s), tuned for
    tiny data: 3 shuffle partitions, no UI, no progress bar, no code generation, no AQE.
    Skipped with a clear message where `java` is missing (a machine without Java 17);
    without pyspark it is skipped too, except under CI, where the test extra installs it
    and the tests must run."""
    import shutil

    try:
        import pyspark  # noqa: F401
    except ImportError:
        message = 'the Spark tests need pyspark (pip install "evalframe[spark]")'
        if os.environ.get("CI"):
            pytest.fail(f"{message}; under CI the test extra installs it", pytrace=False)
        pytest.skip(message)
    if shutil.which("java") is None:
        pytest.skip(
            "the Spark tests need Java 17 (`java` is not on PATH; e.g. apt-get install "
            "openjdk-17-jre-headless)"
        )
    from evalframe._private.engines.spark.read import use_current_python

    use_current_python()
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]")
        .appName("evalframe-tests")
        .config("spark.sql.shuffle.partitions", "3")
        .config("spark.default.parallelism", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        # tiny data: interpreted expressions beat compiling code for every new plan, and
        # adaptive execution's per-stage re-planning costs more than it saves
        .config("spark.sql.codegen.wholeStage", "false")
        .config("spark.sql.codegen.factoryMode", "NO_CODEGEN")
        .config("spark.sql.adaptive.enabled", "false")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(
    params=["polars", "duckdb", pytest.param("spark", marks=[pytest.mark.spark, pytest.mark.slow])]
)
def engine(request: pytest.FixtureRequest) -> str:
    """Each engine's name in turn: one test body run on polars, DuckDB and Spark (Spark
    cases are slow and skip without pyspark / Java, except under CI)."""
    if request.param == "spark":
        request.getfixturevalue("spark")
    return str(request.param)


@pytest.fixture(autouse=True)
def _cli_exceptions_propagate(monkeypatch: pytest.MonkeyPatch) -> None:
    """CliRunner turns an unexpected exception into exit code 1 — the code of a failed
    gate — so `exit_code in (0, 1)` would pass on a crash. Here a crash propagates and
    fails the test; exit codes still come from typer.Exit / SystemExit. A test that means
    to inspect a caught exception passes catch_exceptions=True itself."""
    from typer.testing import CliRunner

    invoke = CliRunner.invoke

    def strict(self, *args, catch_exceptions: bool = False, **kwargs):  # type: ignore[no-untyped-def]
        return invoke(self, *args, catch_exceptions=catch_exceptions, **kwargs)

    monkeypatch.setattr(CliRunner, "invoke", strict)


@pytest.fixture(scope="module")
def alternating(tmp_path_factory) -> Path:
    """AgentV-style trend runs alternating targets claude → gpt-5 → claude → gpt-5 (the
    `--series` tests of compare and report): within a target nothing moves, across targets
    every pair looks like a regression (or an improvement)."""
    path = tmp_path_factory.mktemp("series") / "data"
    path.mkdir()
    runs = ["r1", "r2", "r3", "r4"]
    targets = ["claude", "gpt-5", "claude", "gpt-5"]
    good = {"claude": [0.9, 0.85, 0.95], "gpt-5": [0.6, 0.5, 0.65]}
    rows = [
        {"run_id": run, "case_id": f"c{k}", "evaluator": "m", "score": good[target][k]}
        for run, target in zip(runs, targets, strict=True)
        for k in range(3)
    ]
    pl.DataFrame(rows).write_parquet(path / "scores.parquet")
    pl.DataFrame(
        {
            "run_id": runs,
            "created_at": [f"2026-10-0{k + 1}T09:00:00" for k in range(4)],
            "target": targets,
        }
    ).with_columns(pl.col("created_at").str.to_datetime()).write_parquet(path / "runs.parquet")
    return path


@pytest.fixture(scope="session")
def demo_command(tmp_path_factory) -> tuple[object, Path]:
    """`evalframe demo DIR --cases 12` run once, in-process, for the tests that read what the
    demo command prints and writes (test_report.py, test_report_analyst.py): (its CliRunner
    result, DIR). Read it, never write into DIR."""
    from typer.testing import CliRunner

    from evalframe.cli import app

    target = tmp_path_factory.mktemp("demo_command") / "demo"
    # catch_exceptions=False: session scope runs before the autouse strict CliRunner
    result = CliRunner().invoke(app, ["demo", str(target), "--cases", "12"], catch_exceptions=False)
    return result, target
