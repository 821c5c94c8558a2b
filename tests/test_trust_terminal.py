"""Issue 18, the terminal and `evalframe sql`: ids from other tools' files print literally
(rich markup in them is text, control / separator / bidi characters are shown as escapes,
never sent raw), and `evalframe sql --read-only` reads the dataset and nothing else."""

from __future__ import annotations

import io
import json
import re
import sys
from pathlib import Path

import duckdb
import polars as pl
import pytest
from rich.console import Console
from typer.testing import CliRunner

import evalframe as ef
from evalframe._private.data.demo import write_demo
from evalframe.cli import app
from evalframe.cli._render import error_line, id_text, say

pytestmark = pytest.mark.slow  # outside the fast lane (pyproject `slow`)

runner = CliRunner()

OSC8 = "\x1b]8;;h\x1b\\"  # opens a hyperlink to "h"
R_ESC = "r1\x1b[2J" + OSC8  # clears the screen, plants a hyperlink
R_MARKUP = "[bold]r2[/bold]"  # was shown as a bold "r2"
R_CLOSE = "r3[/x]\x00\u202e"  # `[/x]` crashed rich; NUL; right-to-left override
NASTY_CASES = ["c[/x]", "c\x1b[31m", "c\u202e9", "c\x00n", "c\u2028l"]
EVALUATORS = ["ev[/x]", "ev\x1b[1m"]

RAW = ("\x1b", "\x00", "\u202e", "\u2028", "\x9b")
"""Characters that must never reach the terminal raw."""


def assert_safe(text: str) -> None:
    for ch in RAW:
        assert ch not in text, f"raw {ch!r} in output:\n{text!r}"
    assert "Traceback" not in text and "MarkupError" not in text


def shown(s: str) -> str:
    """How an id reads on the terminal: display.visible's escapes, markup left as text."""
    return (
        s.replace("\x1b", "\\x1b")
        .replace("\x00", "\\x00")
        .replace("\u202e", "\\u202e")
        .replace("\u2028", "\\u2028")
    )


@pytest.fixture(scope="module")
def nasty(tmp_path_factory) -> Path:
    """Three runs whose ids, case ids and evaluator names carry escapes and markup; the
    last run regresses on the nasty cases (so the compare report lists them)."""
    data = tmp_path_factory.mktemp("nasty") / "data"
    data.mkdir()
    cases = [*NASTY_CASES, *(f"c{i}" for i in range(8))]
    rows = []
    for run in (R_MARKUP, R_ESC, R_CLOSE):
        for case in cases:
            for k, ev in enumerate(EVALUATORS):
                if run == R_MARKUP:
                    score = 0.6
                elif run == R_ESC:
                    score = 0.9
                elif case in NASTY_CASES:  # the last pair regresses on these, each case
                    # with a different evaluator behind it
                    score = 0.0 if k == NASTY_CASES.index(case) % 2 else 0.5
                else:
                    score = 0.9
                rows.append({"run_id": run, "case_id": case, "evaluator": ev, "score": score})
    pl.DataFrame(rows).write_parquet(data / "scores.parquet")
    result = runner.invoke(app, ["score", str(data), "--json"])  # results for sql/results
    assert result.exit_code == 0, result.output
    return data


# --- the helpers ------------------------------------------------------------------------


def _plain(*renderables) -> str:
    console = Console(record=True, width=200, color_system=None, file=io.StringIO())
    for r in renderables:
        console.print(r)
    return console.export_text()


def test_say_shows_values_literally_and_keeps_the_template_markup():
    text = say("[bold]{}[/bold] → {}: {}", "a\\", "[/x]\x1b[2J", ":smile: [bold]b[/bold]")
    assert text.plain == "a\\ → [/x]\\x1b[2J: :smile: [bold]b[/bold]"
    assert [(s.start, s.end, str(s.style)) for s in text.spans] == [(0, 2, "bold")]
    # a value ending in a backslash neither escapes the next tag nor doubles
    assert _plain(say("{} and {}", "x\\", "y")).strip() == "x\\ and y"
    with pytest.raises(ValueError):
        say("{} {}", "only one")


def test_id_text_and_error_line_are_never_markup():
    assert id_text("[bold]r2[/bold]").plain == "[bold]r2[/bold]"
    assert id_text("a\x1b[2Jb\u202ec").plain == "a\\x1b[2Jb\\u202ec"
    line = error_line(ValueError("2 problems:\n  - e.g. [/x]\x1b[31m"))
    assert line.plain == "error: 2 problems:\n  - e.g. [/x]\\x1b[31m"  # own breaks stay


# --- every command ------------------------------------------------------------------------


def test_score_prints_ids_literally(nasty, tmp_path):
    result = runner.invoke(app, ["score", str(nasty), "-o", str(tmp_path / "o"), "--check"])
    assert result.exit_code == 1, result.output  # gates fail; no crash after the commit
    assert_safe(result.output)
    for run in (R_ESC, R_MARKUP, R_CLOSE):
        assert shown(run) in result.stdout
    assert "tables written to" in result.stdout
    assert "run gate failed for:" in result.stderr and shown(R_CLOSE) in result.stderr


def test_compare_prints_ids_cases_and_evaluators_literally(nasty, tmp_path):
    result = runner.invoke(
        app, ["compare", str(nasty), "--pairs", "consecutive", "-o", str(tmp_path / "o")]
    )
    assert result.exit_code == 1, result.output  # the last pair regresses
    out = result.stdout
    assert_safe(result.output)
    assert f"{shown(R_MARKUP)} → {shown(R_ESC)}" in out
    assert f"{shown(R_ESC)} → {shown(R_CLOSE)}" in out
    for case in NASTY_CASES:
        assert shown(case) in out, case
    assert "ev[/x] -0.900" in out and "ev\\x1b[1m -0.900" in out
    assert "too small:" in out  # the power notes name the pair literally too


def test_plan_prints_the_run_literally(nasty):
    result = runner.invoke(app, ["plan", str(nasty), "--run", R_MARKUP])
    assert result.exit_code == 0, result.output
    assert_safe(result.output)
    assert f"run {R_MARKUP}" in result.stdout


def test_plan_with_an_unknown_run_lists_the_known_ones_literally(nasty):
    result = runner.invoke(app, ["plan", str(nasty), "--run", "x[/x]\x1b[2J"])
    assert result.exit_code == 2, result.output
    assert_safe(result.output)
    assert "x[/x]\\x1b[2J" in result.stderr and shown(R_ESC) in result.stderr


def test_validate_errors_quote_example_keys_literally(tmp_path):
    data = tmp_path / "dup"
    data.mkdir()
    pl.DataFrame(
        {"run_id": R_ESC, "case_id": ["c[/x]\x1b[2J"] * 2, "evaluator": "a", "score": 0.5}
    ).write_parquet(data / "scores.parquet")
    result = runner.invoke(app, ["validate", str(data)])
    assert result.exit_code == 2, result.output
    assert_safe(result.output)
    assert "duplicate key" in result.stderr and "c[/x]\\x1b[2J" in result.stderr
    assert result.stderr.count("\n") > 2  # the message's own lines are still lines


def test_results_prints_paths_literally(tmp_path):
    folder = tmp_path / "e[" / "x]\x1b[2J"  # the path reads e[/x]ESC[2J
    folder.mkdir(parents=True)
    result = runner.invoke(app, ["results", str(folder)])
    assert result.exit_code == 0, result.output
    assert_safe(result.output)
    assert "no result sets in" in result.stdout and "e[/x]\\x1b[2J" in result.stdout


def test_sweep_prints_run_ids_literally(nasty, tmp_path):
    grid = tmp_path / "grid.yaml"
    grid.write_text("grid:\n  threshold: [0.5, 0.7]\n")
    result = runner.invoke(app, ["sweep", str(nasty), "-g", str(grid), "-o", str(tmp_path / "o")])
    assert result.exit_code == 0, result.output
    assert_safe(result.output)
    for run in (R_ESC, R_MARKUP, R_CLOSE):
        assert shown(run) in result.stdout


def test_sql_table_shows_values_and_column_names_literally(nasty):
    query = 'select distinct run_id, 1 as "[/x]\x1b[2J" from scores order by run_id'
    result = runner.invoke(app, ["sql", str(nasty), query])
    assert result.exit_code == 0, result.output
    assert_safe(result.output)
    for run in (R_ESC, R_MARKUP, R_CLOSE):
        assert shown(run) in result.stdout
    assert "[/x]\\x1b[2J" in result.stdout  # the column name


def test_sql_errors_quote_values_literally(nasty):
    result = runner.invoke(app, ["sql", str(nasty), "select ('[/x]' || chr(27) || '[2J')::int"])
    assert result.exit_code == 2, result.output
    assert_safe(result.output)
    assert "[/x]\\x1b[2J" in result.stderr


def test_sql_prompt_prints_errors_literally(nasty):
    result = runner.invoke(
        app, ["sql", str(nasty)], input="select ('[/x]' || chr(27) || '[2J')::int;\n.quit\n"
    )
    assert result.exit_code == 0, result.output
    assert_safe(result.output)
    assert "[/x]\\x1b[2J" in result.stdout


def test_sql_json_output_escapes_control_characters(nasty):  # a guard: JSON always did
    result = runner.invoke(app, ["sql", str(nasty), "select distinct run_id from scores", "--json"])
    assert result.exit_code == 0, result.output
    assert_safe(result.stdout)
    assert "\\u001b[2J" in result.stdout


def test_sql_csv_is_data_in_a_pipe_and_visible_on_a_terminal(monkeypatch, capsys):
    from evalframe.cli import _shell as sql_shell

    frame = pl.DataFrame({"run_id": [R_ESC, R_CLOSE]})
    sql_shell.print_result(frame, csv=True)  # a pipe: the bytes as they are
    assert capsys.readouterr().out == f"run_id\n{R_ESC}\n{R_CLOSE}\n"
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    sql_shell.print_result(frame, csv=True)  # a terminal: as `ls` does
    out = capsys.readouterr().out
    assert_safe(out)
    assert out == f"run_id\n{shown(R_ESC)}\n{shown(R_CLOSE)}\n"


# --- sql --read-only ------------------------------------------------------------------


@pytest.fixture(scope="module")
def scored(tmp_path_factory) -> Path:
    """The demo dataset with a scored and compared result set (every output view)."""
    root = write_demo(tmp_path_factory.mktemp("readonly") / "demo", n_cases=12)
    for args in (["score", str(root)], ["compare", str(root), "--pairs", "consecutive"]):
        # catch_exceptions=False: module scope runs before the autouse strict CliRunner
        result = runner.invoke(app, args, catch_exceptions=False)
        assert result.exit_code in (0, 1), result.output
    return root


def _sql(dataset: Path, query: str, *flags: str):
    return runner.invoke(app, ["sql", str(dataset), query, "--read-only", *flags])


def assert_refused(result) -> None:
    """DuckDB refused the statement (not the option parser): exit 2, the --read-only hint."""
    assert result.exit_code == 2, result.output
    assert "SQL error" in result.stderr and "--read-only" in result.stderr, result.stderr


def test_read_only_answers_queries_on_the_tables_and_views(scored):
    sources = (
        "scores",
        "run_summary",
        "run_summary_all",
        "case_deltas",
        "regressions",
        "result_sets",
        "run_summary_at(threshold := 0.7)",
    )
    # one read-only session answers them all (a session per query cost a connection each)
    query = "select " + ", ".join(
        f"(select count(*) from {s}) as n{i}" for i, s in enumerate(sources)
    )
    result = _sql(scored, query, "--json")
    assert result.exit_code == 0, (query, result.output)
    (row,) = json.loads(result.stdout)
    counts = {source: row[f"n{i}"] for i, source in enumerate(sources)}
    assert all(n > 0 for n in counts.values()), counts


def test_read_only_refuses_copy_to_anywhere(scored, tmp_path):
    target = tmp_path / "out.csv"
    assert_refused(_sql(scored, f"copy (select 1 as a) to '{target}'"))
    assert not target.exists()


def test_read_only_refuses_to_overwrite_the_files_its_views_read(scored):
    victims = [scored / "scores.parquet", *sorted(scored.rglob("run_summary.parquet"))]
    assert len(victims) >= 2
    before = {p: p.read_bytes() for p in victims}
    for p in victims:
        query = f"copy (select 1 as a) to '{p}' (format parquet, use_tmp_file false)"
        assert_refused(_sql(scored, query))
    assert {p: p.read_bytes() for p in victims} == before


def test_read_only_refuses_attach_and_reading_other_files(scored, tmp_path):
    db = tmp_path / "x.duckdb"
    assert_refused(_sql(scored, f"attach '{db}' as x"))
    assert not db.exists()
    secret = tmp_path / "secret.csv"
    secret.write_text("word\nswordfish\n")
    for query in (
        f"select * from read_csv('{secret}')",
        f"select * from '{secret}'",
        f"select * from read_text('{secret}')",
        f"select * from glob('{tmp_path}/*')",
        f"select * from read_parquet('{scored / 'scores.parquet'}')",
    ):
        result = _sql(scored, query)
        assert_refused(result)
        assert "swordfish" not in result.output


def test_read_only_cannot_be_switched_off_from_sql(scored):
    for statement in ("set enable_external_access = true", "reset enable_external_access"):
        assert_refused(_sql(scored, statement))


def test_without_read_only_a_query_has_duckdbs_full_reach(scored, tmp_path):
    """What sql/README.md documents: a query you run can write files."""
    target = tmp_path / "out.csv"
    result = runner.invoke(app, ["sql", str(scored), f"copy (select 1 as a) to '{target}'"])
    assert result.exit_code == 0, result.output
    assert target.read_text().split() == ["a", "1"]


HEADING = re.compile(r"^#{2,3} `(\w+)`", re.MULTILINE)
BLOCK = re.compile(r"```sql\n(.*?)```", re.DOTALL)


def test_every_readme_example_runs_read_only(scored):
    text = (Path(__file__).parents[1] / "sql" / "README.md").read_text()
    sections = re.split(r"^## ", text, flags=re.MULTILINE)
    blocks = [b for s in sections if HEADING.search("## " + s) for b in BLOCK.findall(s)]
    assert len(blocks) > 20
    con, _found = ef.sql_connection(scored, read_only=True)
    try:
        for block in blocks:
            rel = con.sql(block)
            if rel is not None:
                rel.fetchall()
        with pytest.raises(duckdb.PermissionException):
            con.sql(f"select * from read_parquet('{scored / 'scores.parquet'}')").fetchall()
    finally:
        con.close()


@pytest.mark.parametrize("run_id", [R_CLOSE, R_ESC, R_MARKUP])
def test_ingest_prints_the_run_id_literally(run_id, tmp_path):
    wide = tmp_path / "wide.csv"
    wide.write_text("case_id,a\n1,0.5\n2,1\n")
    result = runner.invoke(
        app, ["ingest", "wide", str(wide), "--to", str(tmp_path / "ds"), "--run-id", run_id]
    )
    assert result.exit_code == 0, result.output
    assert_safe(result.output)
    assert shown(run_id) in result.output
