"""The DuckDB engine: flat configs scored and compared through the macros of `sql/`.

The SQL files are the interface an analyst uses (`sql/README.md`); this module loads the
same files into a connection, registers the dataset's validated tables and the flat
config's per-evaluator settings as relations, and calls the table macros with every
policy value as a bound parameter. Run ids, case ids and config strings never become
SQL text: they travel as parameters (`$name`) or as rows of registered relations.

`score_duckdb` and `compare_duckdb` return the tables of the polars engine with the same
columns, dtypes and row order (docs/scoring.md, docs/compare.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from evalframe._private import schema as S
from evalframe._private.config import Config
from evalframe._private.dataset import Dataset
from evalframe._private.errors import UsageError

# --- the sql/ folder ---------------------------------------------------------------------
INPUT_VIEWS = (S.SCORES, S.EXECUTIONS, S.OUTCOMES, S.RUNS)
"""Views over the dataset's Parquet files (init.sql only; Python registers the tables)."""
POLICY_TABLES = ("evaluator_policy", "compare_pairs")
"""Small tables the macros read: a flat config's evaluators, the pairs to compare."""
SCALAR_MACROS = (
    "normalize_score",
    "meets",
    "exceeds",
    "verdict_band",
    "clustered_se",
    "wilson_interval",
    "mcnemar_p",
)
TABLE_MACROS = (
    "execution_scores_at",
    "case_summary_of",
    "case_summary_at",
    "run_summary_of",
    "run_summary_at",
    "case_matches_of",
    "case_deltas_of",
    "case_deltas_at",
    "run_deltas_of",
    "run_deltas_at",
)
OUTPUT_VIEWS = (
    S.EXECUTION_SCORES,
    S.CASE_SUMMARY,
    S.RUN_SUMMARY,
    S.EVALUATOR_SCORES,
    S.CASE_DELTAS,
    S.EVALUATOR_DELTAS,
    S.RUN_DELTAS,
)
"""Views over the output tables in results/ (init.sql; `evalframe sql` registers them)."""
ANALYST_VIEWS = ("regressions", "run_trend")
"""Convenience views over the output views."""
SQL_OBJECTS = (
    *INPUT_VIEWS,
    *POLICY_TABLES,
    *SCALAR_MACROS,
    *TABLE_MACROS,
    *OUTPUT_VIEWS,
    *ANALYST_VIEWS,
)
"""Every object of sql/, one file each, in the order init.sql creates them."""
INIT_FILE = "init.sql"


def sql_dir() -> Path:
    """The folder of the .sql files: inside the installed package (wheel), else the
    repository's top-level `sql/` of a source checkout."""
    import evalframe

    packaged = Path(evalframe.__file__).parent / "sql"
    if (packaged / INIT_FILE).is_file():
        return packaged
    return Path(__file__).resolve().parents[2] / "sql"


def sql_text(name: str) -> str:
    """The text of `sql/NAME.sql`."""
    return (sql_dir() / f"{name}.sql").read_text()


def render_init_sql() -> str:
    """The text of sql/init.sql: every object file inlined in creation order (the DuckDB
    CLI's `.read` resolves paths from the current directory, the dataset folder, so the
    loader cannot `.read` its siblings). tests/test_sql_docs.py checks it is current."""
    parts = [
        "-- init.sql — load evalframe's SQL interface into the DuckDB CLI.\n"
        "-- grain:   none (creates views, tables and macros)\n"
        "-- inputs:  the dataset folder as the current directory: scores(.parquet|/),\n"
        "--          optional executions, outcomes, runs, and results/*.parquet written by\n"
        "--          `evalframe score` / `evalframe compare`\n"
        "-- columns: see each object below and sql/README.md\n"
        "-- usage:   cd my-dataset && duckdb -cmd '.read /path/to/evalframe/sql/init.sql'\n"
        "-- GENERATED from the object files by evalframe._private.duckdb_engine."
        "render_init_sql(); edit those files, then regenerate:\n"
        "--   python -m evalframe._private.duckdb_engine\n"
    ]
    for name in SQL_OBJECTS:
        parts.append(f"\n-- ==== {name}.sql " + "=" * max(0, 70 - len(name)) + "\n")
        parts.append(sql_text(name))
    return "".join(parts)


# --- connections ---------------------------------------------------------------------------
def _register(con: duckdb.DuckDBPyConnection, name: str, frame: pl.DataFrame) -> None:
    con.register(name, frame)


def create_macros(con: duckdb.DuckDBPyConnection) -> None:
    """Create the policy tables and every macro (the input relations must exist)."""
    for name in (*POLICY_TABLES, *SCALAR_MACROS, *TABLE_MACROS):
        con.execute(sql_text(name))


def connect(dataset: Dataset, *, database: str = ":memory:") -> duckdb.DuckDBPyConnection:
    """A DuckDB connection with the dataset's validated tables registered under their
    names (scores, executions, outcomes, runs), the policy tables and the macros."""
    con = duckdb.connect(database)
    frames = pl.collect_all([dataset.scores, dataset.executions, dataset.outcomes, dataset.runs])
    for name, frame in zip(INPUT_VIEWS, frames, strict=True):
        _register(con, name, frame)
    create_macros(con)
    return con


# --- configs ---------------------------------------------------------------------------------
def check_flat(config: Config) -> None:
    """Raise UsageError for a config the SQL path cannot run (a composite evaluator)."""
    composite = sorted(
        name for name, entry in (config.evaluators or {}).items() if entry.is_composite
    )
    if composite:
        raise UsageError(
            f"the DuckDB engine runs flat configs only; evaluator(s) {', '.join(composite)} "
            "are composite (they have `children`); hint: score this config with the default "
            "polars engine (drop --engine duckdb), or flatten the tree."
        )


def load_policy(con: duckdb.DuckDBPyConnection, config: Config) -> None:
    """Fill evaluator_policy with the config's evaluators, through bound parameters."""
    con.execute("delete from evaluator_policy")
    rows = [
        (name, entry.weight, entry.required, entry.min_score)
        for name, entry in (config.evaluators or {}).items()
    ]
    if rows:
        con.executemany("insert into evaluator_policy values (?, ?, ?, ?)", rows)


def scoring_params(config: Config) -> dict[str, Any]:
    """Named parameters of execution_scores_at for one config."""
    return {
        "threshold": config.threshold,
        "threshold_override": config.threshold_override,
        "borderline": config.borderline,
        "aggregator": config.aggregator,
        "required_children": list(config.required_children),
        "on_missing": config.on_missing,
        "outcomes_mode": config.outcomes,
        "configured": config.evaluators is not None,
        "config_name": config.config_id,
    }


def _call(macro: str, params: dict[str, Any], positional: Sequence[str] = ()) -> str:
    """`select * from macro($a, b := $b, ...)`: only parameter names reach the SQL text."""
    args = [f"${p}" for p in positional]
    args += [f"{p} := ${p}" for p in params if p not in positional]
    return f"select * from {macro}({', '.join(args)})"


def _frame(con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any]) -> pl.DataFrame:
    return con.sql(sql, params=params or None).pl()


# --- scoring ---------------------------------------------------------------------------------
_SCORED = "evalframe_execution_scores"


def score_duckdb(dataset: Dataset, config: Config) -> dict[str, pl.DataFrame]:
    """Score a flat config in DuckDB: execution_scores, case_summary and run_summary with
    the polars engine's columns, dtypes and row order.

    Raises UsageError for a config with composite evaluators.
    """
    check_flat(config)
    con = connect(dataset)
    try:
        load_policy(con, config)
        params = scoring_params(config)
        scored = _call("execution_scores_at", params)
        con.execute(f"create temp table {_SCORED} as {scored}", params)
        cases = {
            "source": _SCORED,
            "attempts_score": config.attempts.score,
            "attempts_passed": config.attempts.passed,
        }
        runs = {
            **cases,
            "min_mean_score": config.run_gates.min_mean_score,
            "min_pass_rate": config.run_gates.min_pass_rate,
            "config_name": config.config_id,
        }
        return {
            S.EXECUTION_SCORES: _frame(con, f"select * from {_SCORED}", {}),
            S.CASE_SUMMARY: _frame(con, _call("case_summary_of", cases, ["source"]), cases),
            S.RUN_SUMMARY: _frame(con, _call("run_summary_of", runs, ["source"]), runs),
        }
    finally:
        con.close()


if __name__ == "__main__":  # pragma: no cover - regenerates sql/init.sql
    (Path(__file__).resolve().parents[2] / "sql" / INIT_FILE).write_text(render_init_sql())
