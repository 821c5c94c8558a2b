"""sql/ is documented: every file has a header comment and a README section with an
example, every example runs (DuckDB CLI set-up and `evalframe sql`), init.sql is
generated from the object files, and the SQL keeps its lowercase style."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import pytest

import evalframe as ef
from evalframe import sql_connection
from evalframe._private import schema as S
from evalframe._private.data.demo import write_demo
from evalframe._private.engines.duckdb.sql import (
    INIT_FILE,
    SQL_OBJECTS,
    render_init_sql,
    sql_dir,
)

SQL = sql_dir()
README = SQL / "README.md"
HEADING = re.compile(r"^#{2,3} `(\w+)`", re.MULTILINE)
BLOCK = re.compile(r"```sql\n(.*?)```", re.DOTALL)


def sql_files() -> list[str]:
    return sorted(p.stem for p in SQL.glob("*.sql"))


def readme_examples() -> dict[str, list[str]]:
    """Documented object name -> the sql code blocks of its section."""
    text = README.read_text()
    marks = list(HEADING.finditer(text))
    out: dict[str, list[str]] = {}
    for mark, nxt in zip(marks, [*marks[1:], None], strict=True):
        section = text[mark.end() : nxt.start() if nxt else len(text)]
        section = re.split(r"^## ", section, flags=re.MULTILINE)[0]
        out[mark.group(1)] = BLOCK.findall(section)
    return out


def test_every_sql_file_is_documented_with_an_example():
    documented = readme_examples()
    missing = [name for name in sql_files() if not documented.get(name)]
    assert not missing, f"sql/README.md has no section with an example for {missing}"
    assert not set(documented) - set(sql_files()), "README documents objects with no file"


def test_every_object_file_is_loaded_by_init():
    assert sorted([*SQL_OBJECTS, Path(INIT_FILE).stem]) == sql_files()


@pytest.mark.parametrize("name", sql_files())
def test_every_sql_file_has_a_header_comment(name):
    text = (SQL / f"{name}.sql").read_text()
    header = "".join(line + "\n" for line in text.splitlines() if line.startswith("--"))
    assert text.startswith(f"-- {name}"), f"{name}.sql must start with `-- {name}`"
    for key in ("grain:", "inputs:"):
        assert key in header, f"{name}.sql header lacks `{key}`"
    assert "columns:" in header or "returns:" in header, f"{name}.sql header lacks columns"


def test_init_sql_is_generated_from_the_object_files():
    assert (SQL / INIT_FILE).read_text() == render_init_sql(), (
        "sql/init.sql is stale; run `python -m evalframe._private.engines.duckdb.sql`"
    )


UPPER_KEYWORD = re.compile(r"\b(SELECT|FROM|WHERE|GROUP BY|ORDER BY|JOIN|CREATE|WITH|CASE)\b")


@pytest.mark.parametrize("name", sql_files())
def test_sql_keywords_are_lowercase(name):
    code = "\n".join(line.split("--")[0] for line in (SQL / f"{name}.sql").read_text().splitlines())
    assert not UPPER_KEYWORD.search(code), f"{name}.sql: keywords are written in lowercase"


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    """The demo dataset with score results and a written comparison."""
    root = tmp_path_factory.mktemp("demo") / "evalframe-demo"
    write_demo(root, n_cases=30)
    ds = ef.load_dataset(root)
    cfg = ef.Config()
    cases = ef.case_summary(ef.execution_scores(ds, cfg), cfg).collect()
    runs = ef.run_summary(ef.execution_scores(ds, cfg), cfg, runs=ds.runs).collect()
    deltas = ef.compare_tables(root, cfg, pairs="consecutive", engine="duckdb")
    ex = ef.execution_scores(ds, cfg).collect()
    scored = {S.EXECUTION_SCORES: ex, S.CASE_SUMMARY: cases, S.RUN_SUMMARY: runs}
    compared = {name: deltas[name] for name in (S.CASE_DELTAS, S.RUN_DELTAS, S.EVALUATOR_DELTAS)}
    ef.write_tables({**scored, **compared}, root / "results")
    return root


def run(con: duckdb.DuckDBPyConnection, block: str) -> None:
    """Run every statement of an example and read the last one's rows."""
    rel = con.sql(block)
    if rel is not None:
        rel.fetchall()


def _examples() -> list[tuple[str, int, str]]:
    return [
        (name, i, block)
        for name, blocks in readme_examples().items()
        for i, block in enumerate(blocks)
    ]


@pytest.mark.slow
def test_readme_examples_run_with_only_the_duckdb_cli_setup(demo, monkeypatch):
    monkeypatch.chdir(demo)
    con = duckdb.connect()
    con.execute((SQL / INIT_FILE).read_text())
    for name, i, block in _examples():
        try:
            run(con, block)
        except duckdb.Error as exc:  # pragma: no cover - the message is the point
            pytest.fail(f"README example {i} of `{name}` fails after init.sql: {exc}")
    con.close()


@pytest.mark.slow
def test_readme_examples_run_in_evalframe_sql(demo):
    con, opened = sql_connection(demo)
    assert {S.EXECUTION_SCORES, S.RUN_SUMMARY, S.CASE_DELTAS} <= set(opened.views)
    for name, i, block in _examples():
        try:
            run(con, block)
        except duckdb.Error as exc:  # pragma: no cover
            pytest.fail(f"README example {i} of `{name}` fails in evalframe sql: {exc}")
    assert con.sql("select count(*) from regressions").fetchall()[0][0] > 0
    con.close()
