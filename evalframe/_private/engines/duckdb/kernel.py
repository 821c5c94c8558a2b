"""The DuckDB engine's aggregate-first kernel: the sql/ objects it creates and
`partials_in`, one pass over the judge rows grouped by execution key
(sql/execution_partials.sql) with the input checks; the rules then run on those rows
(engines/duckdb/run.py)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import duckdb

from evalframe._private import schema as S
from evalframe._private.config import Config
from evalframe._private.data.validate import (
    ClampReport,
)
from evalframe._private.engines import capabilities as caps
from evalframe._private.engines.duckdb.read import (
    PARTIALS,
    executions_view,
    key_problems,
    open_views,
    score_problems,
    table_problems,
    typed_views,
)
from evalframe._private.engines.duckdb.sql import (
    POLICY_TABLES,
    SCALAR_MACROS,
    TABLE_MACROS,
    call,
    load_policy,
    sql_text,
)
from evalframe._private.errors import (
    ValidationError,
)

# --- the objects this engine creates -----------------------------------------------------
ENGINE_MACROS = (
    *POLICY_TABLES,
    *SCALAR_MACROS,
    *(name for name in TABLE_MACROS if not name.endswith("_at")),
)
"""The sql/ objects this engine creates, in init.sql's order: the policy tables, every
scalar macro and the `*_of` table macros (the `*_at` ones are the analysts' shorthands)."""
MAX_MASK_EVALUATORS = 63
"""Distinct evaluators the per-execution bitmask holds (bits 0-62 of a BIGINT)."""


_FIRST_MACROS = ENGINE_MACROS[: ENGINE_MACROS.index("execution_partials") + 1]


def create_engine_macros(con: duckdb.DuckDBPyConnection, names: Sequence[str]) -> None:
    """Create sql/ objects (DuckDB binds a macro's tables when it is created: the input
    views come first)."""
    for name in names:
        con.execute(sql_text(name))


def partials_in(
    con: duckdb.DuckDBPyConnection,
    dataset: str | Path,
    config: Config,
    *,
    clamp: bool = False,
    keep_leaf_scores: bool = False,
) -> ClampReport | None:
    """Open and check the dataset in `con` and run the partials pass: leaves the temp
    table evalframe_partials (one row per execution key), the input views and every
    sql/ object the rules need. Raises ValidationError listing every input problem, and
    the capability table's UsageError beyond the evaluator bitmask."""
    given = open_views(con, dataset)
    schemas = typed_views(con, given)
    create_engine_macros(con, _FIRST_MACROS)
    load_policy(con, config)
    partial_params = {
        "configured": config.evaluators is not None,
        "required_children": list(config.required_children),
        "clamp": clamp,
        "keep_threshold_scores": config.aggregator == "threshold",
        "keep_leaf_scores": keep_leaf_scores,
        # what the rules read: the weights of null and absent leaves only on_missing =
        # zero does; the required-leaf counts only when some evaluator is required
        "on_missing": config.on_missing,
        "any_required": any(e.required for e in (config.evaluators or {}).values()),
    }
    con.execute(
        f"create temp table {PARTIALS} as {call('execution_partials', partial_params)}",
        partial_params,
    )
    problems, report, ev_max = score_problems(con, clamp=clamp)
    executions_view(con, bool(given.get(S.EXECUTIONS)))
    create_engine_macros(con, ENGINE_MACROS[len(_FIRST_MACROS) :])
    problems += table_problems(con, schemas)
    wide = ev_max >= MAX_MASK_EVALUATORS
    problems += key_problems(con, bool(given.get(S.EXECUTIONS)), wide)
    if problems:
        raise ValidationError(problems)
    if wide and config.evaluators is None:
        caps.require("duckdb", caps.WIDE_UNLISTED)
    return report
