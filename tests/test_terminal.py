"""The command line as a user meets it: --version, validate --json on failure, --pairs
wording, --top and the evaluator behind a regression, sql CSV/JSON values, messages that
keep paths whole off a terminal, progress on a terminal (pty), the sql prompt's line
editing, history, Ctrl-C and Ctrl-D (pty)."""

from __future__ import annotations

import csv
import fcntl
import io
import json
import os
import pty
import re
import select
import subprocess
import sys
import termios
import time
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

import evalframe as ef
from evalframe._private.data.demo import write_demo
from evalframe.cli import app

pytestmark = pytest.mark.slow  # outside the fast lane (pyproject `slow`)

runner = CliRunner()
EVALFRAME = [sys.executable, "-m", "evalframe.cli"]
ANSI = re.compile(r"\x1b\[[0-9;?]*[@-~]|\x1b[()][A-Z0-9]|\x1b[=>]|\r")


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    return write_demo(tmp_path_factory.mktemp("terminal") / "demo", n_cases=20)


# --- CliRunner ----------------------------------------------------------------------


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version(flag):
    result = runner.invoke(app, [flag])
    assert result.exit_code == 0
    assert result.stdout.strip() == f"evalframe {ef.__version__}"


def test_validate_json_reports_problems_and_exits_2(tmp_path):
    data = tmp_path / "bad"
    data.mkdir()
    pl.DataFrame(
        {"run_id": "r", "case_id": ["c", "c", "d"], "evaluator": "a", "score": [0.5, 0.5, 1.5]}
    ).write_parquet(data / "scores.parquet")
    result = runner.invoke(app, ["validate", str(data), "--json"])
    assert result.exit_code == 2
    payload = json.loads(result.stdout)
    assert payload["valid"] is False
    problems = {p["message"]: p for p in payload["problems"]}
    assert set(next(iter(problems.values()))) == {"table", "column", "message", "count", "examples"}
    above = next(p for m, p in problems.items() if "above scale_max" in m)
    assert (above["table"], above["column"], above["count"]) == ("scores", "score", 1)
    assert any("duplicate key" in m for m in problems)


def test_validate_json_on_a_missing_dataset_is_json_too(tmp_path):
    result = runner.invoke(app, ["validate", str(tmp_path / "nowhere"), "--json"])
    assert result.exit_code == 2
    payload = json.loads(result.stdout)
    assert payload["valid"] is False and payload["problems"] == [] and payload["error"]


def test_pairs_answers_in_user_wording(demo, tmp_path):
    result = runner.invoke(app, ["compare", str(demo), "--pairs", "all", "-o", str(tmp_path)])
    assert result.exit_code == 2
    text = " ".join(result.output.replace("│", " ").split())
    assert "must be 'consecutive'" in text and "'all'" in text
    assert "Value error" not in text and "Traceback" not in text
    assert not list(tmp_path.iterdir())


def test_compare_top_and_the_evaluator_behind_each_regression(demo, tmp_path):
    args = ["compare", str(demo), "--pairs", "consecutive", "-o", str(tmp_path)]
    result = runner.invoke(app, [*args, "--top", "3"])
    assert result.exit_code == 1, result.output  # v1.5 -> v1.6 regressed
    listed = re.findall(r"^ case-\d+ .*$", result.stdout, re.MULTILINE)
    n_pairs_with_regressions = len(re.findall(r"^regressed cases", result.stdout, re.MULTILINE))
    assert 3 <= len(listed) <= 3 * n_pairs_with_regressions
    assert "evaluator behind it" in result.stdout
    tree = set(pl.read_parquet(demo / "scores.parquet")["evaluator"].unique())
    cells = [re.search(r"→ \w+\s+(.+?) -\d", line).group(1) for line in listed]
    named = {
        name
        for cell in cells
        for name in re.split(r", | and ", cell)
        if not re.fullmatch(r"\d+ more", name)
    }
    assert named and named <= tree
    assert "which evaluator moved (the regressed cases it fell in, of " in result.stdout
    everything = runner.invoke(app, [*args, "--top", "1000"])
    listed_all = re.findall(r"^ case-\d+ .*$", everything.stdout, re.MULTILINE)
    deltas = ef.read_results(tmp_path, "case_deltas")
    assert len(listed_all) == deltas.filter(pl.col("status") == "regression").height


def test_demo_shows_passing_and_failing_runs_under_the_default_policy(tmp_path):
    result = runner.invoke(app, ["demo", str(tmp_path / "d"), "--cases", "25"])
    assert result.exit_code == 0, result.output
    verdicts = {
        line.split("│")[1].strip(): line.split("│")[-2].strip()
        for line in result.stdout.splitlines()
        if line.startswith("│ 2026")
    }
    # v1.4 misses the pass-rate gate, v1.5 passes both gates, v1.6 regressed
    assert verdicts == {
        "2026-10-01-v1.4": "FAIL",
        "2026-10-15-v1.5": "pass",
        "2026-11-01-v1.6": "FAIL",
    }
    summary = ef.read_results(tmp_path / "d", "run_summary")
    assert sorted(summary["run_passed"].to_list()) == [False, False, True]


def test_score_shows_an_unscored_run_as_a_dash_and_explains_the_plus_minus(tmp_path):
    data = tmp_path / "d"
    data.mkdir()
    pl.DataFrame(
        {
            "run_id": ["good", "good", "blank", "blank"],
            "case_id": ["c1", "c2", "c1", "c2"],
            "evaluator": "m",
            "score": [0.9, 0.5, None, None],
        },
        schema_overrides={"score": pl.Float64},
    ).write_parquet(data / "scores.parquet")
    result = runner.invoke(app, ["score", str(data), "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    rows = {
        line.split("│")[1].strip(): [c.strip() for c in line.split("│")[2:-1]]
        for line in result.stdout.splitlines()
        if line.startswith("│ ")
    }
    assert rows["blank"][1] == "—" and rows["blank"][2] == "—"  # pass rate, mean score
    assert "0.0%" not in " ".join(rows["blank"])
    # 2 cases, one passed: clustered se 0.5 gives n_eff = 0.25 / 0.25 = 1 (Wilson at n 1)
    assert rows["good"][1] == "50.0% [5.5%, 94.5%]"
    text = " ".join(result.stdout.split())
    assert "Brackets after a pass rate: its 95 % Wilson interval with the clustered" in text
    assert "± after a mean score: one standard error, clustered by case" in text
    assert "unscored" in text


SQL_TYPES = (
    "select [1, 2] as ints, ['a', 'b'] as tags, {'k': [interval 90 minute]} as nested, "
    "interval '1 day 2 hours' as span, '\\xAA\\xBB'::blob as raw, time '12:34:56.5' as t, "
    "union_value(n := 3)::union(n int, s varchar) as u, 1.25::decimal(5, 2) as dec"
)


def test_sql_csv_prints_lists_as_json_and_never_crashes_on_odd_types(demo):
    result = runner.invoke(app, ["sql", str(demo), SQL_TYPES, "--csv"])
    assert result.exit_code == 0, result.output
    (row,) = list(csv.DictReader(io.StringIO(result.stdout)))
    assert json.loads(row["ints"]) == [1, 2]
    assert json.loads(row["tags"]) == ["a", "b"]
    assert json.loads(row["nested"]) == {"k": ["PT1H30M"]}
    assert row["span"] == "P1DT2H"
    assert row["raw"] == "qrs="  # base64
    assert row["t"] == "12:34:56.5"
    assert row["u"] == "3"
    assert row["dec"] == "1.25"


def test_sql_json_prints_lists_as_json_lists(demo):
    result = runner.invoke(app, ["sql", str(demo), SQL_TYPES, "--json"])
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.stdout)
    assert row == {
        "ints": [1, 2],
        "tags": ["a", "b"],
        "nested": {"k": ["PT1H30M"]},
        "span": "P1DT2H",
        "raw": "qrs=",
        "t": "12:34:56.5",
        "u": "3",
        "dec": 1.25,
    }


def test_sql_table_output_shows_odd_types_too(demo):
    result = runner.invoke(app, ["sql", str(demo), SQL_TYPES])
    assert result.exit_code == 0, result.output
    assert "P1DT2H" in result.stdout and '["a", "b"]' in result.stdout


# --- the policy in the terminal ----------------------------------------------


def test_score_states_the_policy_under_the_run_table(demo, tmp_path):
    policy = tmp_path / "policy.yaml"
    policy.write_text(
        "threshold: 0.75\nborderline: 0.5\n"
        "run_gates: {min_mean_score: 0.7, min_pass_rate: 0.9}\n"
        "compare: {max_pass_rate_drop: 0.02, case_delta: 0.1, require_significance: true}\n"
    )
    result = runner.invoke(app, ["score", str(demo), "-c", str(policy), "-o", str(tmp_path / "o")])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert out.index("run summary") < out.index("policy: ") < out.index("tables written to")
    text = " ".join(out[out.index("policy: ") : out.index("tables written to")].split())
    cfg = ef.load_config(policy)
    assert text == (
        f"policy: config {cfg.config_id}: threshold 0.75; borderline band [0.5, 0.75); "
        "outcomes gate; attempts: score mean, passed when all pass; missing evaluators skip. "
        "Run gates: mean score meets 0.7 and pass rate meets 90.0%. Compare limits: "
        "pass-rate drop 2.0 pts, mean-score drop 0.05, mean-latency increase 20%; "
        "case_delta 0.1; drops must be significant."
    )
    json_out = runner.invoke(app, ["score", str(demo), "--json", "-o", str(tmp_path / "j")])
    assert "policy:" not in json_out.stdout  # JSON stays JSON


def test_compare_states_the_policy_first_with_the_threshold_override(demo, tmp_path):
    result = runner.invoke(
        app, ["compare", str(demo), "-t", "0.65", "--preset", "agentv", "-o", str(tmp_path)]
    )
    assert result.exit_code in (0, 1), result.output
    out = result.stdout
    assert out.startswith("policy: "), out[:200]
    assert out.index("policy: ") < out.index(" → ")
    text = " ".join(out[: out.index(" → ")].split())
    assert "threshold 0.65 (--threshold); no borderline band;" in text
    assert "Run gates: mean score meets 0.8 and pass rate meets 100.0%." in text
    assert "Compare limits: pass-rate drop 0.0 pts, mean-score drop 0.05" in text
    assert "drops must be significant" not in text


def test_terminal_and_report_state_the_policy_from_one_source(tmp_path):
    """The terminal's line is display.policy_lines without its long explanations; the
    report's header is the same pieces with them: every fact of one is in the other."""
    from evalframe._private.report.sections import policy_section
    from evalframe.format import LONG, SHORT, VALUE, policy_lines, policy_text

    cfg = ef.load_config(None, threshold=0.72)
    lines = policy_lines(cfg)
    values = [text for line in lines for text, kind in line if kind == VALUE]
    assert {"threshold 0.72", "borderline band [0.6, 0.72)", "Run gates", "100.0%"} <= set(values)
    html = policy_section(cfg, pl.DataFrame())
    short = policy_text(cfg, short=True)
    for value in values:
        assert f"<b>{value}</b>" in html and value in short
    for line in lines:
        for text, kind in line:
            if kind == LONG:
                assert text not in short
            if kind == SHORT:
                assert text not in html
    assert "case_delta 0.05" in short and "(--threshold)" in short


def test_preset_help_explains_every_preset():
    from evalframe._private.config import PRESETS

    result = runner.invoke(app, ["score", "--help"], env={"COLUMNS": "400"})
    text = " ".join(result.stdout.replace("│", " ").split())
    for name in PRESETS:
        cfg = ef.load_config(preset=name)
        assert f"'{name}': threshold {cfg.threshold:g}" in text, name
    assert "'connexity': threshold 0.75, no borderline band, 8 weighted evaluators" in text
    assert "missing evaluators fail, outcomes gate" in text
    assert "'default': threshold 0.8, borderline from 0.6" in text


# --- sql: never silently empty; line mode; the prompt's dot commands ------------------


@pytest.fixture(scope="module")
def two_sets(tmp_path_factory) -> tuple[Path, str, str]:
    """A dataset whose store holds a compare set (config -t 0.7) and, latest, a sweep's set:
    run_summary and case_deltas of the latest set are empty, other sets hold them. Built
    once for the module (score, compare and sweep each run once): the tests only query it."""
    tmp_path = tmp_path_factory.mktemp("two_sets")

    def invoke(args: list[str]):  # module scope runs before the autouse strict CliRunner
        return runner.invoke(app, args, catch_exceptions=False)

    data = write_demo(tmp_path / "sets", n_cases=4)
    assert invoke(["score", str(data), "-t", "0.7"]).exit_code == 0
    assert invoke(["compare", str(data), "-t", "0.7"]).exit_code in (0, 1)
    compared = ef.load_config(threshold=0.7).config_id
    grid = tmp_path / "grid.yaml"
    grid.write_text("grid:\n  threshold: [0.6, 0.7]\n")
    assert invoke(["sweep", str(data), "--grid", str(grid)]).exit_code == 0
    latest = ef.read_results(data, "sweep")["config_id"]  # the sweep set is the latest
    assert latest.len() > 0
    sets = json.loads(invoke(["results", str(data), "--json"]).stdout)
    sweep_set = next(s["result_set"] for s in sets if s["latest"])
    assert sweep_set != compared
    return data, compared, sweep_set


@pytest.mark.parametrize("read_only", [False, True])
@pytest.mark.parametrize(
    ("view", "table"),
    [
        ("run_summary", "run_summary"),
        ("case_deltas", "case_deltas"),
        ("regressions", "case_deltas"),
    ],
)
def test_sql_says_which_set_holds_a_table_the_latest_set_lacks(two_sets, view, table, read_only):
    data, compared, sweep_set = two_sets
    flags = ["--read-only"] if read_only else []
    result = runner.invoke(app, ["sql", str(data), f"select * from {view}", "--csv", *flags])
    assert result.exit_code == 0, result.output
    assert len(result.stdout.strip().splitlines()) == 1  # a header-only CSV ...
    note = " ".join(result.stderr.split())  # ... and the note says why, on stderr
    assert f"latest result set {sweep_set}" in note, note
    assert f"{compared} (" in note
    hint = f"select * from {table}_all where result_set = '{compared}'"
    assert hint in note
    rows = runner.invoke(app, ["sql", str(data), hint, "--csv", *flags])
    assert rows.exit_code == 0 and len(rows.stdout.strip().splitlines()) > 1
    assert rows.stderr == ""  # rows: nothing to say


def test_sql_notes_nothing_when_the_latest_set_answers(two_sets):
    data, _compared, _sweep = two_sets
    some = runner.invoke(app, ["sql", str(data), "select * from sweep", "--csv"])
    assert some.exit_code == 0 and some.stderr == ""
    filtered = runner.invoke(
        app, ["sql", str(data), "select * from sweep where run_id = 'none'", "--csv"]
    )
    assert filtered.exit_code == 0 and filtered.stderr == ""  # empty by the query's own filter


def test_sql_line_mode_is_picked_when_a_row_is_too_wide(demo):
    runner.invoke(app, ["score", str(demo)])
    wide = runner.invoke(app, ["sql", str(demo), "select * from run_summary order by run_id"])
    assert wide.exit_code == 0, wide.output
    width = len(ef.read_results(demo, "run_summary").columns)
    assert width > 30
    lines = wide.stdout.splitlines()
    assert not any(line.startswith(("┏", "│")) for line in lines)  # no table ...
    pairs = [line for line in lines if " = " in line]
    assert len(pairs) == 3 * width  # ... one `column = value` line per column and run
    assert re.search(r"^ *run_id = 2026-10-01-v1\.4$", wide.stdout, re.MULTILINE)
    assert "3 rows" in wide.stdout
    narrow = runner.invoke(app, ["sql", str(demo), "select run_id from run_summary"])
    assert "┏" in narrow.stdout and " = " not in narrow.stdout
    forced = runner.invoke(
        app, ["sql", str(demo), "select run_id from run_summary", "--mode", "line"]
    )
    assert re.search(r"^run_id = ", forced.stdout, re.MULTILINE)
    table = runner.invoke(app, ["sql", str(demo), "select * from run_summary", "--mode", "table"])
    assert "┏" in table.stdout
    bad = runner.invoke(app, ["sql", str(demo), "select 1", "--mode", "wide"])
    assert bad.exit_code == 2


def test_sql_prompt_help_and_mode(demo, capsys):
    from evalframe.cli import _shell as sql_shell

    con, found = ef.sql_connection(demo)
    lines = iter(
        [
            ".help",
            ".mode line",
            "select 'x' as name, 42 as answer;",
            ".mode table",
            "select 'y' as name;",
            ".mode sideways",
            ".nonsense",
        ]
    )

    def read(_prompt: str) -> str:
        try:
            return next(lines)
        except StopIteration:
            raise EOFError from None

    try:
        sql_shell.interactive(con, found, read=read)
    finally:
        con.close()
    out = capsys.readouterr().out
    assert ".mode line" in out and ".tables" in out and ".quit" in out  # .help
    assert re.search(r"^  name = x$", out, re.MULTILINE)
    assert re.search(r"^answer = 42$", out, re.MULTILINE)
    assert "┃ name" in out and "│ y" in out  # back to a table
    assert "usage: .mode auto|table|line" in out
    assert "unknown command .nonsense" in out


# --- subprocesses: stderr not a terminal --------------------------------------------


def test_error_messages_keep_long_paths_whole_off_a_terminal(tmp_path):
    deep = tmp_path / ("a-rather-long-folder-name-" * 4) / "and-another-one" / "dataset"
    deep.mkdir(parents=True)
    out = subprocess.run(
        [*EVALFRAME, "score", str(deep)],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "80"},
        timeout=120,
    )
    assert out.returncode == 2
    assert len(str(deep)) > 120
    assert any(str(deep) in line for line in out.stderr.splitlines()), out.stderr
    assert "Traceback" not in out.stderr


# --- pty: a real terminal ------------------------------------------------------------


_OPEN_TERMINALS: list[Terminal] = []
"""Terminals a test started; `_close_terminals` ends any left running (a failed test's)."""


@pytest.fixture(autouse=True)
def _close_terminals():
    """After each test, kill and reap what a failing pty test left running: an unreaped
    child would otherwise fail a later test with an unraisable ResourceWarning."""
    yield
    while _OPEN_TERMINALS:
        _OPEN_TERMINALS.pop().close()


class Terminal:
    """A child process on a pseudo-terminal: stdin, stdout and stderr are the pty."""

    def __init__(self, args: list[str], env: dict[str, str], cwd: Path | None = None):
        _OPEN_TERMINALS.append(self)
        self.fd, child = pty.openpty()
        os.set_blocking(self.fd, False)
        self.proc = subprocess.Popen(
            args,
            stdin=child,
            stdout=child,
            stderr=child,
            env=env,
            cwd=cwd,
            close_fds=True,
            start_new_session=True,  # the pty becomes the controlling terminal: ^C is SIGINT
            preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0),
        )
        os.close(child)
        self.raw = b""

    def read_until(self, pattern: str, timeout: float = 60.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if re.search(pattern, self.text):
                return self.text
            ready, _, _ = select.select([self.fd], [], [], 0.1)
            if ready:
                try:
                    self.raw += os.read(self.fd, 65536)
                except OSError:  # the child closed the pty
                    break
        if re.search(pattern, self.text):
            return self.text
        raise AssertionError(f"{pattern!r} never appeared in:\n{self.text}")

    def drain(self) -> None:
        while True:
            ready, _, _ = select.select([self.fd], [], [], 0.2)
            if not ready:
                return
            try:
                chunk = os.read(self.fd, 65536)
            except OSError:
                return
            if not chunk:
                return
            self.raw += chunk

    @property
    def text(self) -> str:
        return ANSI.sub("", self.raw.decode("utf-8", "replace"))

    def prompt(self, timeout: float = 60.0) -> str:
        """Wait until the output ends with the prompt (call it after reading what the
        previous line printed; typing before the prompt shows races the terminal, and a ^C
        then flushes the tty queues)."""
        return self.read_until(r"evalframe> $", timeout)

    def send(self, data: str) -> None:
        os.write(self.fd, data.encode())

    def wait(self, timeout: float = 60.0) -> int:
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None and time.monotonic() < deadline:
            self.drain()
        self.drain()
        code = self.proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        self.close()
        return code

    def close(self) -> None:
        """Kill the child if it still runs, reap it, close the pty (idempotent)."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def _tty_env(tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "TERM": "xterm",
        "COLUMNS": "120",
        "LINES": "40",
        "EVALFRAME_HISTORY": str(tmp_path / "history"),
        "INPUTRC": "/dev/null",
    }


def test_long_run_ids_are_never_cut_in_an_80_column_terminal(tmp_path):
    ids = ["2026-10-01-support-agent-experiment-alpha", "2026-10-01-support-agent-experiment-beta"]
    data = tmp_path / "d"
    data.mkdir()
    pl.DataFrame(
        {
            "run_id": [ids[0], ids[0], ids[1], ids[1]],
            "case_id": ["c1", "c2", "c1", "c2"],
            "evaluator": "m",
            "score": [0.9, 0.5, 0.8, 0.7],
        }
    ).write_parquet(data / "scores.parquet")
    term = Terminal(
        [*EVALFRAME, "score", str(data), "-o", str(tmp_path / "out")],
        {**_tty_env(tmp_path), "COLUMNS": "80"},
    )
    text = term.read_until(r"tables written to", timeout=120)
    assert term.wait() == 0
    body = [line for line in text.splitlines() if line.startswith("│")]
    assert body and max(len(line) for line in body) <= 80
    assert "…" not in text  # no cell is cut: columns are left out instead, and named
    # the first column, folded over lines, gives each id back whole and in order
    assert "".join(line.split("│")[1].strip() for line in body) == "".join(ids)
    assert "50.0% [5.5%, 94.5%]" in text and "0.700 ± 0.200" in text
    assert "not shown on this narrow terminal:" in text


def test_sql_prompt_edits_lines_keeps_history_and_survives_ctrl_c(demo, tmp_path):
    term = Terminal([*EVALFRAME, "sql", str(demo)], _tty_env(tmp_path))
    term.prompt()
    term.send("select 40 + 2 as answer;\r")
    term.read_until(r"42")
    term.prompt()
    # up arrow recalls the statement (no escape codes typed into the line), enter runs it
    term.send("\x1b[A\r")
    term.read_until(r"42[\s\S]*42")
    term.prompt()
    # left arrow moves inside the line: "select 1 as x;" becomes "select 17 as x;"
    term.send("select 1 as x;\x1b[D\x1b[D\x1b[D\x1b[D\x1b[D\x1b[D7\r")
    term.read_until(r"\b17\b")
    term.prompt()
    # Ctrl-C drops the statement being typed, the prompt stays
    term.send("select 'never run'")
    term.read_until(r"never run'$")
    # on a loaded machine the first SIGINT after a query was seen to go unanswered:
    # press again, up to 5 times, but a Ctrl-C that never cancels the line still fails
    for _ in range(5):
        term.send("\x03")
        try:
            term.read_until(r"\^C", timeout=10)
            break
        except AssertionError:
            continue
    else:
        raise AssertionError(f"Ctrl-C never cancelled the line:\n{term.text}")
    term.prompt()
    term.send("select 'still here' as s;\r")
    text = term.read_until(r"still here[\s\S]*still here")  # echoed line, then the result
    term.prompt()
    assert "[A" not in text and "[D" not in text
    assert "SQL error" not in text
    # Ctrl-D on an empty line leaves
    term.send("\x04")
    assert term.wait() == 0
    history = (tmp_path / "history").read_text()
    assert "select 40 + 2 as answer;" in history
    assert "select 'still here' as s;" in history


def test_ctrl_c_cancels_a_running_query_and_the_prompt_stays(demo, tmp_path):
    term = Terminal([*EVALFRAME, "sql", str(demo)], _tty_env(tmp_path))
    term.prompt()
    # the line's first statement writes a marker: Ctrl-C is sent once the statements run
    started = tmp_path / "started.csv"
    term.send(
        f"copy (select 1 as started) to '{started}'; "
        "select count(*) as n from range(10000000000) a, range(10) b;\r"
    )
    deadline = time.monotonic() + 120
    while not started.exists():
        assert term.proc.poll() is None, term.text
        assert time.monotonic() < deadline, "the prompt never ran the line's first statement"
        time.sleep(0.05)
    term.send("\x03")
    term.read_until(r"query cancelled")
    term.prompt(timeout=60)  # cancelled, not run to its end (that takes far longer)
    term.send("select 'after' || ' cancel' as s;\r")
    text = term.read_until(r"after cancel")  # the connection still answers
    term.prompt()
    term.send(".quit\r")
    assert term.wait() == 0
    assert "Traceback" not in text and "RuntimeError" not in text
    assert "SQL error" not in text


def test_ctrl_c_cancels_a_one_shot_query_without_a_traceback(demo, tmp_path):
    # the first statement marks that start-up is over and the query's statements run: the
    # Ctrl-C is sent only once the marker exists (however long start-up takes), never after
    # a fixed sleep
    started = tmp_path / "started.csv"
    query = (
        f"copy (select 1 as started) to '{started}'; "
        "select count(*) from range(10000000000) a, range(10) b"
    )
    term = Terminal([*EVALFRAME, "sql", str(demo), query], _tty_env(tmp_path))
    deadline = time.monotonic() + 120
    while not started.exists():
        assert term.proc.poll() is None, term.text
        assert time.monotonic() < deadline, "the sql command never ran its first statement"
        time.sleep(0.05)
    term.send("\x03")
    assert term.wait(timeout=30) == 130
    assert "query cancelled" in term.text
    assert "Traceback" not in term.text


def test_sql_prompt_reads_the_saved_history_next_time(demo, tmp_path):
    (tmp_path / "history").write_text("select 'from last time' as h;\n")
    term = Terminal([*EVALFRAME, "sql", str(demo)], _tty_env(tmp_path))
    term.prompt()
    term.send("\x1b[A\r")
    term.read_until(r"from last time[\s\S]*from last time")
    term.send(".quit\r")
    assert term.wait() == 0


def test_demo_shows_progress_on_a_terminal(tmp_path):
    term = Terminal(
        [*EVALFRAME, "demo", str(tmp_path / "d"), "--cases", "1200"], _tty_env(tmp_path)
    )
    text = term.read_until(r"tables written to", timeout=120)
    assert term.wait() == 0
    assert "writing the demo dataset (1,200 cases" in text
    assert re.search(r"[012]/3 steps", text)
    assert "scoring" in text


def test_sweep_progress_never_reads_none_on_a_terminal(demo, tmp_path):
    grid = tmp_path / "grid.yaml"
    grid.write_text(
        "grid:\n  threshold: [0.6, 0.7, 0.8]\nweights:\n  even: {}\n  routing: {tool_routing: 3}\n"
    )
    term = Terminal(
        [*EVALFRAME, "sweep", str(demo), "--grid", str(grid), "-o", str(tmp_path / "out")],
        _tty_env(tmp_path),
    )
    text = term.read_until(r"tables written to", timeout=120)
    assert term.wait() == 0
    assert "None" not in text
    assert "0/6 configs" in text  # the total is known from the start
    assert "6/6 configs" in text


@pytest.mark.parametrize(
    "query", ["select count(*) as n from run_summary", "select avg(pass_rate) from run_summary"]
)
def test_sql_notes_an_aggregate_over_a_view_the_latest_set_leaves_empty(two_sets, query):
    data, compared, sweep_set = two_sets
    result = runner.invoke(app, ["sql", str(data), query, "--csv"])
    assert result.exit_code == 0, result.output
    note = " ".join(result.stderr.split())
    assert f"note: run_summary of the latest result set {sweep_set} has no rows" in note
    assert f"select * from run_summary_all where result_set = '{compared}'" in note
