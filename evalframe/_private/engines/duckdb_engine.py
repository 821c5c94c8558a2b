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

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from evalframe._private import schema as S
from evalframe._private.compare.compare import (
    BASELINE_RUN_ID,
    CANDIDATE_RUN_ID,
    EVALUATOR_DELTAS_SCHEMA,
    _limits,
    _pair_table,
)
from evalframe._private.compare.pairs import check_runs
from evalframe._private.config import Config
from evalframe._private.data.dataset import Dataset
from evalframe._private.errors import UsageError
from evalframe._private.summaries.run_summary import with_pass_k_columns

# --- the sql/ folder ---------------------------------------------------------------------
INPUT_VIEWS = (S.SCORES, S.EXECUTIONS, S.OUTCOMES, S.RUNS)
"""Views over the dataset's Parquet files (init.sql only; Python registers the tables)."""
POLICY_TABLES = ("evaluator_policy", "compare_pairs")
"""Small tables the macros read: a flat config's evaluators, the pairs to compare."""
SCALAR_MACROS = (
    "normalize_score",
    "meets",
    "exceeds",
    "run_gate",
    "case_status",
    "drop_regressed",
    "latency_regressed",
    "ci_low",
    "ci_high",
    "mde",
    "verdict_band",
    "clustered_se",
    "wilson_interval",
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
    here = Path(__file__).resolve()
    packaged = here.parents[2] / "sql"  # evalframe/sql in a wheel
    if (packaged / INIT_FILE).is_file():
        return packaged
    return here.parents[3] / "sql"


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
        "-- GENERATED from the object files by evalframe._private.engines.duckdb_engine."
        "render_init_sql(); edit those files, then regenerate:\n"
        "--   python -m evalframe._private.engines.duckdb_engine\n"
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
    frames = pl.collect_all([dataset.scores, dataset.executions, dataset.outcomes, dataset.runs])
    for name, frame in zip(INPUT_VIEWS, frames, strict=True):
        _register(con, name, frame)
    create_macros(con)
    return con


_TEMPLATE: duckdb.DuckDBPyConnection | None = None
_TEMPLATE_LOCK = threading.Lock()


def _placeholder_select(name: str) -> str:
    """An empty relation with the declared columns and types of input table `name`."""
    types = {pl.String: "varchar", pl.Float64: "double", pl.Int64: "bigint"}
    types |= {pl.Boolean: "boolean"}
    cols = []
    for col, (dtype, _required, _default) in S.TABLE_COLUMNS[name].items():
        if isinstance(dtype, pl.Datetime):
            sql_type = "timestamp"
        elif isinstance(dtype, pl.List):
            sql_type = "varchar[]"
        else:
            sql_type = types[type(dtype)]
        cols.append(f'cast(null as {sql_type}) as "{col}"')
    return f"select {', '.join(cols)} where false"


def _template() -> duckdb.DuckDBPyConnection:
    """One in-memory database per process holding the policy tables and every macro,
    created once over empty placeholder input views. `scoring_connection` hands out
    cursors of it: each cursor registers its own input frames and temp tables (both
    connection-local, shadowing the placeholders), so calls never see each other's data
    and the macros are not parsed again per call."""
    global _TEMPLATE
    with _TEMPLATE_LOCK:
        if _TEMPLATE is None:
            con = duckdb.connect(":memory:")
            for name in INPUT_VIEWS:
                con.execute(f"create view {name} as {_placeholder_select(name)}")
            for name in (*POLICY_TABLES, *SCALAR_MACROS, *TABLE_MACROS):
                con.execute(sql_text(name))
            _TEMPLATE = con
        return _TEMPLATE


def scoring_connection(dataset: Dataset | None = None) -> duckdb.DuckDBPyConnection:
    """A cursor of the shared macro database with the dataset's validated tables
    registered under their names, and its own empty policy tables (temp tables)."""
    con = _template().cursor()
    for name in POLICY_TABLES:  # temp copies: a caller's rows stay its own
        con.execute(f"create temp table {name} as select * from main.{name} where false")
    if dataset is not None:
        frames = pl.collect_all(
            [dataset.scores, dataset.executions, dataset.outcomes, dataset.runs]
        )
        for name, frame in zip(INPUT_VIEWS, frames, strict=True):
            _register(con, name, frame)
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
        "config_name": config.config_id,
    }
    return cases, runs


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
    con = scoring_connection(dataset)
    try:
        load_policy(con, config)
        params = scoring_params(config)
        scored = _call("execution_scores_at", params)
        con.execute(f"create temp table {_SCORED} as {scored}", params)
        cases, runs = summary_params(config, _SCORED)
        case_summary = _frame(con, _call("case_summary_of", cases, ["source"]), cases)
        run_summary = _frame(con, _call("run_summary_of", runs, ["source"]), runs)
        if config.attempts.k:  # pass@k / pass^k columns (SPEC §10) from pass_at_k_of
            _register(con, _CASES, case_summary)
            ks = {"case_source": _CASES, "k_values": list(config.attempts.k)}
            long = _frame(con, _call("pass_at_k_of", ks, ["case_source"]), ks)
            run_summary = with_pass_k_columns(run_summary, long, config.attempts.k)
        return {
            S.EXECUTION_SCORES: _frame(con, f"select * from {_SCORED}", {}),
            S.CASE_SUMMARY: case_summary,
            S.RUN_SUMMARY: run_summary,
        }
    finally:
        con.close()


# --- comparing --------------------------------------------------------------------------------
_CASES = "evalframe_case_summary"
_RUNS = "evalframe_run_summary"
_PAIRS = "evalframe_pairs"


def _limit_params(config: Config) -> dict[str, float | bool]:
    limits = config.compare
    return {
        "require_significance": limits.require_significance,
        "max_pass_rate_drop": limits.max_pass_rate_drop,
        "max_mean_score_drop": limits.max_mean_score_drop,
        "max_latency_increase": limits.max_latency_increase,
        "case_delta": limits.case_delta,
    }


def compare_duckdb(
    case_summary: pl.DataFrame | pl.LazyFrame,
    pairs: Sequence[tuple[str, str]],
    config: Config | Sequence[Config],
    *,
    evaluator_scores: pl.DataFrame | pl.LazyFrame | None = None,
    run_summary: pl.DataFrame | pl.LazyFrame | None = None,
) -> dict[str, pl.DataFrame]:
    """`compare` (docs/compare.md) in DuckDB: case_deltas and run_deltas from the macros
    case_deltas_of / run_deltas_of over the given summaries, with the polars engine's
    columns, dtypes and row order. Pairs reach SQL as a registered relation, limits as
    bound parameters.

    `evaluator_deltas` is empty: it needs the leaf scores of one scoring pass
    (`duckdb_pipeline.compare_tables_duckdb` computes it in SQL from the dataset's files);
    `evaluator_scores` is refused rather than handed to the polars engine.
    """
    if evaluator_scores is not None:
        raise UsageError(
            "compare_duckdb does not take evaluator_scores; hint: compare_tables_duckdb("
            "dataset, config, pairs) computes evaluator_deltas in DuckDB from the files."
        )
    if run_summary is None:
        raise UsageError(
            "compare needs run_summary (pass/score/latency/cost per run); "
            "hint: pass run_summary=run_summary(...) from the same scoring."
        )
    cs, rs = (
        f.collect() if isinstance(f, pl.LazyFrame) else f for f in (case_summary, run_summary)
    )
    pair_df = _pair_table(pairs).rename({"_pair": "pair_index"})
    keys = pl.concat(
        [cs.select(S.CONFIG_ID, S.RUN_ID), rs.select(S.CONFIG_ID, S.RUN_ID).cast(pl.String)],
        how="vertical_relaxed",
    ).unique()
    asked = [*pair_df[BASELINE_RUN_ID], *pair_df[CANDIDATE_RUN_ID]]
    check_runs(asked, keys[S.RUN_ID].unique().to_list())
    config_ids = sorted(keys[S.CONFIG_ID].unique().to_list())
    if isinstance(config, Config):
        groups = [(config, None)]
    else:
        limits = _limits(config, config_ids)  # raises for a config_id without a config
        by_id = {c.config_id: c for c in config}
        groups = [(by_id[cid], cid) for cid in limits[S.CONFIG_ID].to_list()]
    con = scoring_connection()
    try:
        _register(con, _PAIRS, pair_df)
        case_parts, run_parts = [], []
        for cfg, config_id in groups:
            only = (
                (lambda f: f)
                if config_id is None
                else (lambda f, cid=config_id: f.filter(pl.col(S.CONFIG_ID) == cid))
            )
            _register(con, _CASES, only(cs))
            _register(con, _RUNS, only(rs))
            params = {"case_source": _CASES, "pairs_source": _PAIRS, **_limit_params(cfg)}
            case_params = {k: params[k] for k in ("case_source", "case_delta", "pairs_source")}
            case_parts.append(
                _frame(con, _call("case_deltas_of", case_params, ["case_source"]), case_params)
            )
            run_params = {"case_source": _CASES, "run_source": _RUNS, **params}
            run_parts.append(
                _frame(
                    con,
                    _call("run_deltas_of", run_params, ["case_source", "run_source"]),
                    run_params,
                )
            )
    finally:
        con.close()
    evaluator_deltas = pl.DataFrame(schema=EVALUATOR_DELTAS_SCHEMA)
    return {
        S.CASE_DELTAS: pl.concat(case_parts) if len(case_parts) > 1 else case_parts[0],
        S.EVALUATOR_DELTAS: evaluator_deltas,
        S.RUN_DELTAS: pl.concat(run_parts) if len(run_parts) > 1 else run_parts[0],
    }


# --- end to end from the files (engines/duckdb_pipeline.py) --------------------------------
def score_tables_duckdb(dataset: str | Path, config: Config, **kwargs: Any) -> Any:
    """execution_scores, case_summary and run_summary computed in DuckDB straight from the
    dataset's files; see `duckdb_pipeline.score_tables_duckdb`."""
    from evalframe._private.engines import duckdb_pipeline

    return duckdb_pipeline.score_tables_duckdb(dataset, config, **kwargs)


def compare_tables_duckdb(dataset: str | Path, config: Config, pairs: Any, **kwargs: Any) -> Any:
    """case_deltas, evaluator_deltas and run_deltas computed in DuckDB from one scoring of
    the dataset's files; see `duckdb_pipeline.compare_tables_duckdb`."""
    from evalframe._private.engines import duckdb_pipeline

    return duckdb_pipeline.compare_tables_duckdb(dataset, config, pairs, **kwargs)


if __name__ == "__main__":  # pragma: no cover - regenerates sql/init.sql
    (Path(__file__).resolve().parents[3] / "sql" / INIT_FILE).write_text(render_init_sql())
