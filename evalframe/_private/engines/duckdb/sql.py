"""The `sql/` folder in DuckDB: its objects, their text, init.sql, and macro calls.

The SQL files are the interface an analyst uses (`sql/README.md`) and the queries the
DuckDB engine runs (engines/duckdb/, which imports this module, never the
reverse). This module lists the objects in creation order, reads their text, renders
init.sql, creates the macros in a connection, fills the evaluator_policy table of a
flat config and builds macro calls whose arguments are bound parameters only
(`call`, `scoring_params`, `summary_params`, `limit_params`): run ids, case ids and
config strings never become SQL text. `connect` opens a connection over a loaded
Dataset for `evalframe sql`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from evalframe._private import schema as S
from evalframe._private.compare.compare import LIMITS, MARGINS, REQUIRE_SIGNIFICANCE
from evalframe._private.config import Config
from evalframe._private.data.dataset import Dataset
from evalframe._private.data.validate import typed_frame

# --- the sql/ folder ---------------------------------------------------------------------
INPUT_VIEWS = (S.SCORES, S.EXECUTIONS, S.OUTCOMES, S.RUNS, S.LABELS)
"""Views over the dataset's Parquet files (init.sql only; Python registers the tables)."""
POLICY_TABLES = ("evaluator_policy", "compare_pairs")
"""Small tables the macros read: a flat config's evaluators, the pairs to compare."""
SCALAR_MACROS = (
    "normalize_score",
    "meets",
    "exceeds",
    "run_gate",
    "case_passed",
    "case_status",
    "drop_regressed",
    "latency_regressed",
    "ci_low",
    "ci_high",
    "mde",
    "decide_part",
    "decide_latency",
    "decide_pair",
    "node_score",
    "node_gate_fired",
    "verdict_band",
    "execution_judge_error",
    "execution_unscored",
    "execution_required_failed",
    "execution_score",
    "execution_verdict",
    "execution_passed",
    "clustered_se",
    "wilson_interval",
    "effective_n",
    "pass_rate_lower",
    "mcnemar_p",
    "comb_ratio",
)
TABLE_MACROS = (
    "execution_partials",
    "execution_scores_of",
    "execution_scores_at",
    "case_summary_of",
    "case_summary_at",
    "run_summary_of",
    "run_summary_at",
    "pass_at_k_of",
    "case_matches_of",
    "case_deltas_of",
    "case_deltas_at",
    "run_deltas_of",
    "run_deltas_at",
    "evaluator_deltas_of",
    "judge_agreement_at",
)
OUTPUT_VIEWS = (
    S.EXECUTION_SCORES,
    S.CASE_SUMMARY,
    S.RUN_SUMMARY,
    S.EVALUATOR_SCORES,
    S.CASE_DELTAS,
    S.EVALUATOR_DELTAS,
    S.RUN_DELTAS,
    S.VARIANCE_COMPONENTS,
    S.NOISE_FLOOR,
    S.EVALUATOR_TESTS,
    S.CASE_DIFFICULTY,
    S.RUN_ABILITY,
    S.JUDGE_AGREEMENT,
    S.AGREEMENT_CURVE,
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
    here = Path(__file__).resolve()
    packaged = here.parents[3] / "sql"  # evalframe/sql in a wheel
    if (packaged / INIT_FILE).is_file():
        return packaged
    return here.parents[4] / "sql"


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
        "-- GENERATED from the object files by evalframe._private.engines.duckdb.sql."
        "render_init_sql(); edit those files, then regenerate:\n"
        "--   python -m evalframe._private.engines.duckdb.sql\n"
    ]
    for name in SQL_OBJECTS:
        parts.append(f"\n-- ==== {name}.sql " + "=" * max(0, 70 - len(name)) + "\n")
        parts.append(sql_text(name))
    return "".join(parts)


# --- connections ---------------------------------------------------------------------------
def _register(con: duckdb.DuckDBPyConnection, name: str, frame: pl.DataFrame) -> None:
    con.register(name, frame)


COMPARE_MACROS = ("case_matches_of", "case_deltas_of", "run_deltas_of")
"""The macros that compare stored summaries; they need no input table."""


def create_macros(
    con: duckdb.DuckDBPyConnection, table_macros: Sequence[str] = TABLE_MACROS
) -> None:
    """Create the policy tables, the scalar macros and `table_macros` (the `*_at` macros
    bind the input relations scores, executions, outcomes and runs, which must exist)."""
    for name in (*POLICY_TABLES, *SCALAR_MACROS, *table_macros):
        con.execute(sql_text(name))


def connect(dataset: Dataset, *, database: str = ":memory:") -> duckdb.DuckDBPyConnection:
    """A DuckDB connection with the dataset's validated tables registered under their
    names (scores, executions, outcomes, runs), the policy tables and the macros."""
    con = duckdb.connect(database)
    labels = typed_frame(
        pl.LazyFrame(schema=LABEL_SCHEMA) if dataset.labels is None else dataset.labels, S.LABELS
    ).select(LABEL_SCHEMA.names())
    tables = [dataset.scores, dataset.executions, dataset.outcomes, dataset.runs, labels]
    frames = pl.collect_all(tables)
    for name, frame in zip(INPUT_VIEWS, frames, strict=True):
        _register(con, name, frame)
    create_macros(con)
    return con


LABEL_SCHEMA = pl.Schema(
    {c: dtype for c, (dtype, _required, _default) in S.TABLE_COLUMNS[S.LABELS].items()}
)
"""The labels columns `evalframe sql` registers (an empty table without labels)."""


# --- configs ---------------------------------------------------------------------------------
def load_policy(con: duckdb.DuckDBPyConnection, config: Config) -> None:
    """Fill evaluator_policy with the config's evaluators (weight, required, min_score,
    higher_is_better), through bound parameters."""
    con.execute("delete from evaluator_policy")
    rows = [
        (name, entry.weight, entry.required, entry.min_score, entry.higher_is_better)
        for name, entry in (config.evaluators or {}).items()
    ]
    if rows:
        con.executemany("insert into evaluator_policy values (?, ?, ?, ?, ?)", rows)


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


def summary_params(config: Config, source: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Named parameters of case_summary_of and run_summary_of over the execution_scores
    table `source`, for one config."""
    cases = {
        "source": source,
        "attempts_score": config.attempts.score,
        "attempts_passed": config.attempts.passed,
    }
    runs = {
        **cases,
        "min_mean_score": config.run_gates.min_mean_score,
        "min_pass_rate": config.run_gates.min_pass_rate,
        "min_pass_rate_lower": config.run_gates.min_pass_rate_lower,
        "config_name": config.config_id,
    }
    return cases, runs


def call(macro: str, params: dict[str, Any], positional: Sequence[str] = ()) -> str:
    """`select * from macro($a, b := $b, ...)`: only parameter names reach the SQL text."""
    args = [f"${p}" for p in positional]
    args += [f"{p} := ${p}" for p in params if p not in positional]
    return f"select * from {macro}({', '.join(args)})"


def limit_params(config: Config) -> dict[str, float | bool]:
    """Named parameters of case_deltas_of / run_deltas_of: the compare limits."""
    return {n: getattr(config.compare, n) for n in (REQUIRE_SIGNIFICANCE, *LIMITS)}


def decide_params(config: Config) -> dict[str, float]:
    """Named parameters of run_deltas_of: the decide margins (docs/compare.md#decisions)."""
    return {n: getattr(config.decide, n) for n in MARGINS}


if __name__ == "__main__":  # pragma: no cover - regenerates sql/init.sql
    (Path(__file__).resolve().parents[4] / "sql" / INIT_FILE).write_text(render_init_sql())
