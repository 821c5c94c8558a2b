"""The ingest fixtures ship with the repo: a fresh clone runs every ingest test, and CI
fails when one skips."""

from __future__ import annotations

import csv
import subprocess
from pathlib import Path

from hypothesis import settings

TESTS = Path(__file__).parent
FIXTURES = TESTS / "fixtures"


def test_every_ingest_test_file_runs_without_skip_markers():
    for path in sorted(TESTS.glob("test_ingest_*.py")):
        if path.name == Path(__file__).name:
            continue
        text = path.read_text()
        assert "pytest.mark.skip" not in text and "pytest.skip(" not in text, path.name
        assert '"shared"' not in text, path.name  # fixtures come from tests/fixtures/


def test_fixtures_have_sources_and_license_notices():
    with (FIXTURES / "SOURCES.tsv").open() as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    listed = {r["local_path"] for r in rows}
    shipped = {
        str(p.relative_to(FIXTURES))
        for p in FIXTURES.rglob("*")
        if p.is_file()
        and p.name not in ("README.md", "SOURCES.tsv")
        and p.relative_to(FIXTURES).parts[0] != "built"
    }
    assert shipped == listed
    for tool in {r["local_path"].split("/", 1)[0] for r in rows}:
        assert (FIXTURES / tool / "LICENSE").is_file(), tool
        assert f"{tool}/LICENSE" in listed


def test_a_skipped_ingest_test_fails_under_ci(pytester, monkeypatch):
    pytester.makeconftest((TESTS / "conftest.py").read_text())
    pytester.makepyfile(
        test_ingest_demo="import pytest\n\ndef test_x():\n    pytest.skip('no fixtures')\n",
        test_other="import pytest\n\ndef test_y():\n    pytest.skip('fine elsewhere')\n",
    )
    # in-process (a subprocess run costs a second interpreter start-up): the copied
    # conftest loads Hypothesis' "ci" profile under CI, so the profile in force is put back
    profile = settings.get_current_profile_name()
    try:
        monkeypatch.setenv("CI", "true")
        result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
        result.assert_outcomes(failed=1, skipped=1)
        result.stdout.fnmatch_lines(["*skipped under CI*tests/fixtures*"])
        monkeypatch.delenv("CI")
        result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
        result.assert_outcomes(skipped=2)
    finally:
        settings.load_profile(profile)


def test_built_fixtures_are_documented():
    readme = (FIXTURES / "README.md").read_text()
    for path in sorted((FIXTURES / "built").rglob("*")):
        if path.is_file():
            assert path.name in readme, path


def test_no_fixture_file_is_git_ignored():
    files = [str(p) for p in FIXTURES.rglob("*") if p.is_file()]
    result = subprocess.run(
        ["git", "check-ignore", "--no-index", *files],
        cwd=TESTS.parent,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.stdout == "", f"ignored by .gitignore (a clone would lack them):\n{result.stdout}"
