"""The report in a real browser: headless Chromium (Debian's `chromium`) opens the HTML file
with the network off and every chart must have rendered — an <svg> the browser laid out
with a non-zero size and at least one mark (the page's own script records this per figure
as data-rendered / data-marks, read back from the DOM after load). A screenshot is kept
under the test's tmp dir (pytest keeps the last three runs' tmp dirs), recorded as the
test's `screenshot` property, and copied to $EVALFRAME_ARTIFACTS when that is set (CI
artifacts).

Without Chromium the test skips, except under CI (CI=true), where it fails: `.ci/run`
installs Chromium when it is missing. EVALFRAME_CHROMIUM names another binary.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import evalframe as ef
import evalframe.plots as efp

pytestmark = pytest.mark.slow  # outside the fast lane (pyproject `slow`)

CHARTS = (
    "pass_rate",
    "verdicts",
    "trend",
    "score_distribution",
    "regression_waterfall",
    "evaluator_heatmap",
    "threshold_curve",
    "sweep_heatmap",
    "slice_forest",
    "power_curve",
    "kappa_curve",
)

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-extensions",
    "--disable-dev-shm-usage",
    # no network: every proxied request goes to a closed port, every host name fails
    "--proxy-server=http://127.0.0.1:9",
    "--host-resolver-rules=MAP * ~NOTFOUND",
)


def _chromium() -> str | None:
    for name in (os.environ.get("EVALFRAME_CHROMIUM"), "chromium", "chromium-browser"):
        if name and (found := shutil.which(name)):
            return found
    return "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None


def _no_network_prefix() -> list[str]:
    """`unshare -n` (a network namespace with no interfaces) where the kernel allows it."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return []
    probe = subprocess.run([unshare, "-n", "true"], capture_output=True, check=False)
    return [unshare, "-n"] if probe.returncode == 0 else []


@pytest.fixture(scope="module")
def chromium() -> str:
    found = _chromium()
    if found is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(
                "Chromium is not installed but CI=true: the browser test must run in CI; "
                "hint: .ci/run installs it (apt-get install -y chromium)."
            )
        pytest.skip("Chromium not installed (apt-get install -y chromium); not under CI")
    return found


def _run(chromium: str, profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    cmd = [
        *_no_network_prefix(),
        chromium,
        *FLAGS,
        f"--user-data-dir={profile}",
        *args,
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180, check=False)


def test_every_chart_renders_in_headless_chromium(
    chromium: str, tmp_path: Path, record_property
) -> None:
    demo = ef.write_demo(tmp_path / "demo", n_cases=30)
    cfg = ef.load_config(None)
    report = efp.write_report(
        efp.report_tables(demo, cfg), tmp_path / "report.html", limits=cfg.compare
    )
    url = report.resolve().as_uri()

    shot = tmp_path / "report.png"
    done = _run(
        chromium, tmp_path / "profile-shot", "--window-size=1280,7000", f"--screenshot={shot}", url
    )
    assert shot.exists() and shot.stat().st_size > 10_000, (
        f"no screenshot {shot}: exit {done.returncode}\n{done.stderr[-2000:]}"
    )
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    record_property("screenshot", str(shot))
    if artifacts := os.environ.get("EVALFRAME_ARTIFACTS"):
        Path(artifacts).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(artifacts) / "report.png")

    dom = _run(chromium, tmp_path / "profile-dom", "--window-size=1400,2000", "--dump-dom", url)
    assert dom.returncode == 0, f"chromium exit {dom.returncode}: {dom.stderr[-2000:]}"
    fits = re.findall(r'<div class="wrap[^"]*"[^>]*data-fits="(\w+)"', dom.stdout)
    assert fits and set(fits) == {"yes"}, f"tables wider than 1,400 px: {fits}; {shot}"
    figures = {}
    for tag in re.findall(r"<figure\b[^>]*>", dom.stdout):
        attrs = dict(re.findall(r'([\w-]+)="([^"]*)"', tag))
        if "chart" in attrs.get("class", "").split():
            figures[attrs["data-chart"]] = attrs
    assert sorted(figures) == sorted(CHARTS), (
        f"figures in the DOM: {sorted(figures)}; screenshot: {shot}"
    )
    not_rendered = {
        name: (a.get("data-rendered"), a.get("data-marks"))
        for name, a in figures.items()
        if a.get("data-rendered") != "yes" or int(a.get("data-marks", "0")) < 1
    }
    assert not not_rendered, f"charts not rendered {not_rendered}; screenshot: {shot}"
    # the sections of the judges, the evaluator tests and the case difficulty are in the page
    assert 'id="judges"' in dom.stdout and "moved beyond chance" in dom.stdout
    assert "<b>Case difficulty</b>" in dom.stdout


def test_regressed_case_rows_expand_in_headless_chromium(
    chromium: str, tmp_path: Path, record_property
) -> None:
    """The case explorer draws a row per regressed case and `report.html#case=ID` opens
    that case (the row's own click handler): its detail shows the judge's reasons and the
    outcome check's justification. A screenshot of the opened case is kept."""
    from tests.test_report_analyst import _small_dataset

    cfg = ef.load_config(None)
    tables = efp.report_tables(_small_dataset(), cfg, what_if=False)
    report = efp.write_report(tables, tmp_path / "report.html", config=cfg, source="small")
    url = report.resolve().as_uri() + "#case=c1"

    dom = _run(chromium, tmp_path / "profile-dom", "--dump-dom", url)
    assert dom.returncode == 0, f"chromium exit {dom.returncode}: {dom.stderr[-2000:]}"
    boxes = re.findall(
        r'<div class="cases" data-group="\d+" data-kind="(\w+)" data-rows="(\d+)"', dom.stdout
    )
    assert ("regression", "2") in boxes, boxes  # c1 and c2 regressed r1 -> r2
    bodies = re.findall(r'<tbody class="case" data-case="(\w+)".*?</tbody>', dom.stdout, re.S)
    assert bodies.count("c1") >= 2 and "c2" in bodies  # the pair's rows and the run's
    opened = re.search(
        r'<tbody class="case" data-case="c1"[^>]*><tr class="case-row"[^>]*aria-expanded="true"'
        r".*?<tr class=\"case-detail\">(.*?)</tr></tbody>",
        dom.stdout,
        re.S,
    )
    assert opened, "the row of case c1 did not expand"
    detail = opened.group(1)
    assert "judge: tone went off topic &lt;/script&gt;&lt;b&gt;x" in detail
    assert "never mentioned a refund" in detail and "evaluator-row" in detail
    assert 'class="case-detail" hidden' in dom.stdout  # the other rows stay closed

    shot = tmp_path / "cases.png"
    done = _run(
        chromium, tmp_path / "profile-shot", "--window-size=1280,2400", f"--screenshot={shot}", url
    )
    assert shot.exists() and shot.stat().st_size > 10_000, (
        f"no screenshot {shot}: exit {done.returncode}\n{done.stderr[-2000:]}"
    )
    record_property("cases_screenshot", str(shot))
    if artifacts := os.environ.get("EVALFRAME_ARTIFACTS"):
        Path(artifacts).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(artifacts) / "report-cases.png")
