"""The DuckDB engine end to end: a dataset's files → score and compare tables, all in SQL.

Nothing here reads a judge row with polars: DuckDB scans the files (views over the
files dataset.table_files lists — `NAME.parquet`, or the Parquet files under `NAME/` with
hive partitions, by literal path — or the tables of a DuckDB database file), checks them,
scores them and summarizes them; polars only receives the finished tables (and the empty
schema of each input, to reuse the schema check's messages).

    score_tables_duckdb(dataset, config, *, memory_limit="3GB", temp_directory=None,
                        clamp=False, evaluators=False) -> DuckDBTables
        execution_scores, case_summary, run_summary: the polars engine's columns and
        dtypes. Row order: execution_scores unordered; case_summary by (config_id,
        run_id, case_id); run_summary by (config_id, created_at nulls last, run_id).
        `evaluators=True` is refused (the capability table's UsageError):
        evaluator_scores is as large as the judge rows; score it with the polars engine.
    compare_tables_duckdb(dataset, config, pairs, *, memory_limit="3GB",
                          temp_directory=None, clamp=False) -> DuckDBTables
        case_deltas, evaluator_deltas, run_deltas (the polars columns, dtypes and row
        order) from ONE scoring of the dataset in the same connection; `pairs` is a list
        of (baseline, candidate) run ids or a callable that picks them from the
        run_summary (a polars frame: e.g. `lambda rs: pairs_for(rs, mode=...)`). The
        returned mapping also carries `.scored` (the three score tables) and `.pairs`.

Both return a `DuckDBTables` (a dict of polars DataFrames keyed by table name) whose
`clamped` attribute is the ClampReport of `clamp=True` (None otherwise).

The shape of the work (aggregate-first): one pass over the judge rows groups them by
execution key (sql/execution_partials.sql: counts, Σw·s, Σw, weight of null rows,
required leaves present / below min_score / min s, min/max s, an evaluator bitmask for
duplicates, and the value-check counts), joined only to the small table of the data's
evaluators ⟕ evaluator_policy. Every rule then runs on those per-execution rows
(sql/execution_scores_of.sql), the summaries on execution_scores (case_summary_of,
run_summary_of). Validation: the score checks come out of the same pass; the other
tables are checked in one query each; example keys are fetched only for a check whose
count is not zero. Every value check is an entry of data/validate.py `value_checks`
(message, polars expression and SQL condition side by side): this module holds no
message or bound of its own, so the CLI prints the same problems whichever engine ran.

Memory: a fresh connection per call with `SET memory_limit` and `SET temp_directory`
(a fresh temporary folder unless given, removed afterwards): DuckDB spills its hash
tables and temporary tables there beyond the limit.

What this engine does not run (composite configs, evaluator_scores, more than 63
unlisted evaluators) is refused with the capability table's UsageError
(engines/capabilities.py), never handed to another engine.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import duckdb
import polars as pl

from evalframe._private import schema as S
from evalframe._private.compare.pairs import check_runs
from evalframe._private.config import Config
from evalframe._private.data.validate import (
    ClampReport,
)
from evalframe._private.engines import capabilities as caps
from evalframe._private.engines.duckdb.kernel import partials_in
from evalframe._private.engines.duckdb.read import PARTIALS, ident, session
from evalframe._private.engines.duckdb.sql import (
    call,
    decide_params,
    limit_params,
    scoring_params,
    summary_params,
)
from evalframe._private.summaries.run_summary import RUN_COLUMNS

SCORED = "evalframe_execution_scores"
CASES = "evalframe_case_summary"
RUNS_OUT = "evalframe_run_summary"
PAIRS = "evalframe_pairs"


class DuckDBTables(dict[str, pl.DataFrame]):
    """Tables keyed by name, with what `clamp=True` changed (None without clamp)."""

    clamped: ClampReport | None = None
    scored: dict[str, pl.DataFrame] | None = None
    """compare only: the score tables the deltas came from."""
    pairs: list[tuple[str, str]] | None = None
    """compare only: the (baseline, candidate) run ids compared."""


# --- scoring ---------------------------------------------------------------------------------
def check_config(config: Config) -> None:
    """The capability table's UsageError for a config this engine does not run."""
    composite = sorted(n for n, e in (config.evaluators or {}).items() if e.is_composite)
    if composite:
        caps.require(
            "duckdb", caps.COMPOSITE_TREES, f"evaluator(s) {', '.join(composite)} are composite"
        )


PASS_K = "evalframe_pass_k"


def add_pass_k_columns(con: duckdb.DuckDBPyConnection, ks: Sequence[int]) -> None:
    """Replace evalframe_run_summary by itself with the pass@k / pass^k columns of
    attempts.k (pass_at_k_of over evalframe_case_summary), placed as the polars
    run_summary places them: after the summary columns, before the runs metadata."""
    params = {"case_source": CASES, "k_values": [int(k) for k in ks]}
    con.execute(
        f"create temp table {PASS_K} as {call('pass_at_k_of', params, ['case_source'])}",
        params,
    )
    names = [r[0] for r in con.execute(f"select * from {RUNS_OUT} limit 0").description]
    head = [f"r.{ident(c)}" for c in names if c in RUN_COLUMNS]
    rest = [f"r.{ident(c)}" for c in names if c not in RUN_COLUMNS]
    spread, joins = [], []
    for i, k in enumerate(dict.fromkeys(int(k) for k in ks)):
        alias = f"k{i}"
        joins.append(
            f"left join (select * from {PASS_K} where k = {k}) as {alias} "
            f"on {alias}.config_id = r.config_id and {alias}.run_id = r.run_id"
        )
        for src, dst in (
            ("pass_at_k", S.pass_at(k)),
            ("pass_at_k_se", S.se_of(S.pass_at(k))),
            ("pass_all_k", S.pass_all(k)),
            ("pass_all_k_se", S.se_of(S.pass_all(k))),
        ):
            spread.append(f"cast({alias}.{src} as double) as {ident(dst)}")
    con.execute(
        f"create temp table {RUNS_OUT}_k as select {', '.join([*head, *spread, *rest])} "
        f"from {RUNS_OUT} as r {' '.join(joins)} order by r.rowid"
    )
    con.execute(f"drop table {RUNS_OUT}")
    con.execute(f"alter table {RUNS_OUT}_k rename to {RUNS_OUT}")


def score_in(
    con: duckdb.DuckDBPyConnection,
    dataset: str | Path,
    config: Config,
    *,
    clamp: bool = False,
    keep_leaf_scores: bool = False,
) -> ClampReport | None:
    """Open, check and score the dataset in `con`: leaves the temp tables
    evalframe_execution_scores, evalframe_case_summary and evalframe_run_summary.
    Raises ValidationError listing every input problem."""
    report = partials_in(con, dataset, config, clamp=clamp, keep_leaf_scores=keep_leaf_scores)
    params = {"partials_source": PARTIALS, **scoring_params(config)}
    con.execute(f"create temp table {SCORED} as {call('execution_scores_of', params)}", params)
    cases, runs = summary_params(config, SCORED)
    con.execute(f"create temp table {CASES} as {call('case_summary_of', cases, ['source'])}", cases)
    con.execute(f"create temp table {RUNS_OUT} as {call('run_summary_of', runs, ['source'])}", runs)
    if config.attempts.k:
        add_pass_k_columns(con, config.attempts.k)
    return report


def _fetch_scored(con: duckdb.DuckDBPyConnection) -> dict[str, pl.DataFrame]:
    return {
        S.EXECUTION_SCORES: con.sql(f"select * from {SCORED}").pl(),
        S.CASE_SUMMARY: con.sql(f"select * from {CASES}").pl(),
        S.RUN_SUMMARY: con.sql(f"select * from {RUNS_OUT}").pl(),
    }


def score_tables_duckdb(
    dataset: str | Path,
    config: Config,
    *,
    memory_limit: str = "3GB",
    temp_directory: str | Path | None = None,
    clamp: bool = False,
    evaluators: bool = False,
) -> DuckDBTables:
    """execution_scores, case_summary and run_summary of a flat config, computed in
    DuckDB straight from the dataset's files (see the module docstring)."""
    check_config(config)
    if evaluators:
        caps.require("duckdb", caps.EVALUATOR_SCORES)
    with session(memory_limit, temp_directory) as con:
        report = score_in(con, dataset, config, clamp=clamp)
        out = DuckDBTables(_fetch_scored(con))
    out.clamped = report
    return out


# --- comparing -------------------------------------------------------------------------------
PairsArg = Sequence[tuple[str, str]] | Callable[[pl.DataFrame], Sequence[tuple[str, str]]]


def compare_tables_duckdb(
    dataset: str | Path,
    config: Config,
    pairs: PairsArg,
    *,
    memory_limit: str = "3GB",
    temp_directory: str | Path | None = None,
    clamp: bool = False,
) -> DuckDBTables:
    """case_deltas, evaluator_deltas and run_deltas of a flat config, all in DuckDB from
    one scoring of the dataset's files (see the module docstring)."""
    check_config(config)
    with session(memory_limit, temp_directory) as con:
        report = score_in(con, dataset, config, clamp=clamp, keep_leaf_scores=True)
        scored = _fetch_scored(con)
        chosen = pairs(scored[S.RUN_SUMMARY]) if callable(pairs) else pairs
        chosen = [(str(b), str(c)) for b, c in chosen]
        known = scored[S.RUN_SUMMARY][S.RUN_ID].cast(pl.String).unique().to_list()
        check_runs([r for pair in chosen for r in pair], known)
        seen: dict[tuple[str, str], int] = {}
        for pair in chosen:
            seen.setdefault(pair, len(seen))
        con.execute(
            f"create temp table {PAIRS} (pair_index bigint, {S.BASELINE_RUN_ID} varchar, "
            f"{S.CANDIDATE_RUN_ID} varchar)"
        )
        if seen:
            con.executemany(
                f"insert into {PAIRS} values (?, ?, ?)", [(i, b, c) for (b, c), i in seen.items()]
            )
        params = {"case_source": CASES, "pairs_source": PAIRS, **limit_params(config)}
        case_params = {k: params[k] for k in ("case_source", "case_delta", "pairs_source")}
        run_params = {"run_source": RUNS_OUT, **params, **decide_params(config)}
        ev_params = {
            "partials_source": PARTIALS,
            "pairs_source": PAIRS,
            "case_delta": config.compare.case_delta,
            "configured": config.evaluators is not None,
            "config_name": config.config_id,
            "on_missing": config.on_missing,
        }
        out = DuckDBTables(
            {
                S.CASE_DELTAS: con.sql(
                    call("case_deltas_of", case_params, ["case_source"]), params=case_params
                ).pl(),
                S.EVALUATOR_DELTAS: con.sql(
                    call("evaluator_deltas_of", ev_params), params=ev_params
                ).pl(),
                S.RUN_DELTAS: con.sql(
                    call("run_deltas_of", run_params, ["case_source", "run_source"]),
                    params=run_params,
                ).pl(),
            }
        )
    out.clamped = report
    out.scored = scored
    out.pairs = chosen
    return out
