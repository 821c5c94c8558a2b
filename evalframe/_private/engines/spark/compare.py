"""Comparing runs on Spark (docs/compare.md, docs/statistics.md): case_deltas, evaluator_deltas,
run_deltas.

The case summaries of both sides of each (baseline, candidate) pair are matched with a
join on case_id (full outer: new and removed cases); the status and the regression
reasons are `rules/compare.py`, run natively by Spark through narwhals; run_deltas
aggregates the case rows per pair (status counts, paired deltas, McNemar's exact p in log
space with Spark's `aggregate` over a sequence, the Spark kernel of that test).
evaluator_deltas matches the per-case mean score of each tree node (evaluator_scores of
the same scoring, path ≠ "") the same way, with the same status rule and no verdict.
`compare_dataset` is `evalframe compare --engine spark`: one scoring of a dataset path,
pairs chosen from its run_summary, the three delta tables collected in one job.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence

import narwhals as nw
import polars as pl
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from evalframe._private import schema as S
from evalframe._private.compare.compare import (
    CASE_DELTAS_SCHEMA,
    EVALUATOR_DELTAS_SCHEMA,
    LIMITS,
    MARGINS,
    REQUIRE_SIGNIFICANCE,
    RUN_DELTAS_SCHEMA,
    RUN_STATS,
    STATUS_COUNTS,
    case_scored,
    decision_parts,
    pair_aggregations,
    pair_table,
    regression_checks,
    status_columns,
)
from evalframe._private.compare.paired_stats import interval_columns
from evalframe._private.compare.pairs import check_runs
from evalframe._private.config import Config
from evalframe._private.engines.spark.kernel import NODES
from evalframe._private.engines.spark.read import listed
from evalframe._private.engines.spark.run import collect_tables, scored_dataset
from evalframe._private.rules import decide as rules_decide

B, C = "baseline", "candidate"
_SPARK_TYPES: dict[pl.DataType, str] = {
    pl.String(): "string",
    pl.Float64(): "double",
    pl.Boolean(): "boolean",
}
_PAIR = "_pair"


def _b(c: str) -> Column:
    return F.col(f"{B}_{c}")


def _c(c: str) -> Column:
    return F.col(f"{C}_{c}")


def _pairs(cs: DataFrame, pairs: Sequence[tuple[str, str]]) -> DataFrame:
    table = pair_table(pairs)
    rows = [tuple(r) for r in table.iter_rows()]
    return cs.sparkSession.createDataFrame(
        rows, f"{_PAIR} long, {S.BASELINE_RUN_ID} string, {S.CANDIDATE_RUN_ID} string"
    )


def _side(table: DataFrame, pairs: DataFrame, run_col: str, side: str, key: list[str]) -> DataFrame:
    values = [c for c in table.columns if c not in (S.RUN_ID, S.CONFIG_ID, *key)]
    return (
        pairs.select(_PAIR, F.col(run_col).alias(S.RUN_ID))
        .join(table, on=S.RUN_ID)
        .select(
            _PAIR,
            S.CONFIG_ID,
            *key,
            F.lit(True).alias(f"_in_{side}"),
            *(F.col(v).alias(f"{side}_{v}") for v in values),
        )
    )


def _sided(table: DataFrame, pairs: DataFrame, key: list[str]) -> DataFrame:
    on = [_PAIR, S.CONFIG_ID, *key]
    both = _side(table, pairs, S.BASELINE_RUN_ID, B, key).join(
        _side(table, pairs, S.CANDIDATE_RUN_ID, C, key), on=on, how="full_outer"
    )
    return both.join(pairs, on=_PAIR, how="left").withColumns(
        {f"_in_{s}": F.coalesce(F.col(f"_in_{s}"), F.lit(False)) for s in (B, C)}
    )


def _with_status(
    table: DataFrame, pairs: DataFrame, key: list[str], cfg: Config, *, passed: bool
) -> DataFrame:
    """The pair rows of `table` (a `_scored` flag and a score per run × `key`), with
    score_delta and the status of `rules.case_status`; the verdict-flip rule only when
    `passed` (evaluator rows have no verdict)."""
    rows = _sided(table, pairs, key).withColumns(
        {f"{s}__scored": F.coalesce(F.col(f"{s}__scored"), F.lit(False)) for s in (B, C)}
    )
    columns = status_columns(nw, passed=passed, case_delta=nw.lit(cfg.compare.case_delta))
    return nw.from_native(rows).with_columns(*columns).to_native()


def _case_rows(case_summary: DataFrame, pairs: DataFrame, cfg: Config) -> DataFrame:
    doubles = (S.SCORE, S.PASS_RATE, S.LATENCY_MEAN)
    cs = (
        nw.from_native(case_summary)
        .select(
            S.CONFIG_ID,
            S.RUN_ID,
            S.CASE_ID,
            S.PASSED,
            *(nw.col(c).cast(nw.Float64) for c in doubles),
            case_scored(nw).alias("_scored"),
        )
        .to_native()
    )
    return _with_status(cs, pairs, [S.CASE_ID], cfg, passed=True)


def evaluator_deltas(evaluator_scores: DataFrame, pairs: DataFrame, cfg: Config) -> DataFrame:
    """evaluator_deltas (docs/compare.md#evaluator_deltas): per pair, case and tree node (path ≠
    ""), both sides' mean score over the case's attempts, its delta and status (no verdict
    flips)."""
    per_case = (
        evaluator_scores.where(F.col(S.PATH) != "")
        .groupBy(S.CONFIG_ID, S.RUN_ID, S.CASE_ID, S.PATH)
        .agg(F.avg(F.col(S.SCORE).cast("double")).alias(S.SCORE))
        .withColumn("_scored", F.col(S.SCORE).isNotNull())
    )
    rows = _with_status(per_case, pairs, [S.CASE_ID, S.PATH], cfg, passed=False)
    return rows.orderBy(S.CONFIG_ID, _PAIR, S.CASE_ID, S.PATH).select(
        *(F.col(c).cast(_SPARK_TYPES[t]).alias(c) for c, t in EVALUATOR_DELTAS_SCHEMA.items())
    )


def mcnemar_p(n01: Column, n10: Column) -> Column:
    """min(1, 2 · P(X <= min(n01, n10))), X ~ Binomial(n01 + n10, 1/2), in log space:
    ln C(n, i) accumulated over i = 1..k with Spark's `aggregate` (no UDF)."""
    n = (n01 + n10).cast("long")
    k = F.least(n01, n10).cast("long")
    ln_half_n = -n.cast("double") * F.lit(math.log(2.0))
    start = F.struct(F.lit(0.0).alias("lc"), F.exp(ln_half_n).alias("acc"))

    def step(acc: Column, i: Column) -> Column:
        lc = acc["lc"] + F.log((n - i + 1).cast("double")) - F.log(i.cast("double"))
        return F.struct(lc.alias("lc"), (acc["acc"] + F.exp(lc + ln_half_n)).alias("acc"))

    tail = F.when(k < 1, F.exp(ln_half_n)).otherwise(
        F.aggregate(
            F.sequence(F.lit(1).cast("long"), F.greatest(k, F.lit(1).cast("long"))), start, step
        )["acc"]
    )
    return F.least(F.lit(1.0), 2.0 * tail)


def run_deltas(
    case_rows: DataFrame, run_summary: DataFrame, pairs: DataFrame, cfg: Config
) -> DataFrame:
    """run_deltas (docs/compare.md#run_deltas, docs/statistics.md) from the case rows of
    `_case_rows` and run_summary: the rules of `compare/` run natively through narwhals,
    McNemar's p by `mcnemar_p`."""
    stats = run_summary.select(
        S.CONFIG_ID, S.RUN_ID, *(F.col(c).cast("double").alias(c) for c in RUN_STATS)
    )
    sides = _sided(stats, pairs, []).drop(
        f"_in_{B}", f"_in_{C}", S.BASELINE_RUN_ID, S.CANDIDATE_RUN_ID
    )
    per_pair = (
        nw.from_native(case_rows).group_by(_PAIR, S.CONFIG_ID).agg(pair_aggregations(nw))
    ).to_native()
    key = [_PAIR, S.CONFIG_ID]
    rows = (
        pairs.crossJoin(run_summary.select(S.CONFIG_ID).distinct())
        .join(sides, on=key, how="left")
        .join(per_pair, on=key, how="left")
    )
    counts = [*STATUS_COUNTS.values(), S.N_PAIRED, S.N_PASSED_TO_FAILED, S.N_FAILED_TO_PASSED]
    rows = rows.withColumns({c: F.coalesce(F.col(c), F.lit(0).cast("long")) for c in counts})
    rows = rows.withColumns(
        {
            **interval_columns(F.col),
            S.MCNEMAR_P: mcnemar_p(F.col(S.N_PASSED_TO_FAILED), F.col(S.N_FAILED_TO_PASSED)),
            **{n: F.lit(getattr(cfg.compare, n)) for n in (*LIMITS, REQUIRE_SIGNIFICANCE)},
            **{n: F.lit(getattr(cfg.decide, n)) for n in MARGINS},
        }
    )
    return _decided(rows)


def _decided(rows: DataFrame) -> DataFrame:
    """run_deltas' run deltas, regression reasons and decision, from rows holding both
    sides' run statistics, the paired statistics and the config's limits."""
    checks, parts = regression_checks(nw), decision_parts(nw)
    rows = (
        nw.from_native(rows)
        .with_columns(
            *(check.alias(f"_check_{code}") for code, check in checks.items()),
            *(rules_decide.names_part(p).alias(f"_names_{name}") for name, p in parts.items()),
            rules_decide.pair_decision(nw, *parts.values()).alias(S.DECISION),
        )
        .to_native()
    )
    deltas = {f"{c.removesuffix('_usd')}_delta": _c(c) - _b(c) for c in RUN_STATS}
    reasons = listed({code: F.col(f"_check_{code}") for code in checks})
    named = listed({name: F.col(f"_names_{name}") for name in parts})
    rows = rows.withColumns({**deltas, S.REASONS: reasons, S.DECISION_REASONS: named}).withColumn(
        S.REGRESSION_DETECTED, F.size(S.REASONS) > 0
    )
    # one row per pair: sorted in one partition, no sampling job of a global orderBy
    return (
        rows.repartition(1)
        .sortWithinPartitions(S.CONFIG_ID, _PAIR)
        .select(*RUN_DELTAS_SCHEMA.names())
    )


def compare(
    case_summary: DataFrame,
    run_summary: DataFrame,
    pairs: Sequence[tuple[str, str]],
    config: Config | None = None,
    *,
    evaluator_scores: DataFrame | None = None,
) -> dict[str, DataFrame]:
    """case_deltas, run_deltas (and evaluator_deltas, given the evaluator_scores of the
    same scoring) of every (baseline_run_id, candidate_run_id) pair, as lazy Spark
    DataFrames, from the Spark case_summary and run_summary of one config."""
    cfg = config if config is not None else Config()
    pair_df = _pairs(case_summary, pairs)
    rows = _case_rows(case_summary, pair_df, cfg)
    out = {
        S.CASE_DELTAS: rows.orderBy(S.CONFIG_ID, _PAIR, S.CASE_ID).select(
            *CASE_DELTAS_SCHEMA.names()
        )
    }
    if evaluator_scores is not None:
        out[S.EVALUATOR_DELTAS] = evaluator_deltas(evaluator_scores, pair_df, cfg)
    out[S.RUN_DELTAS] = run_deltas(rows, run_summary, pair_df, cfg)
    return out


PairsArg = Sequence[tuple[str, str]] | Callable[[pl.DataFrame], Sequence[tuple[str, str]]]


def compare_dataset(
    dataset: str | os.PathLike[str],
    config: Config,
    pairs: PairsArg,
    *,
    clamp: bool = False,
    remote: str | None = None,
    partitions: int | None = None,
) -> tuple[dict[str, pl.DataFrame], dict[str, pl.DataFrame], list[tuple[str, str]]]:
    """`evalframe compare --engine spark`: (case_deltas, evaluator_deltas and run_deltas;
    the score tables they came from; the pairs compared) of a dataset path, from ONE
    Spark scoring (execution_scores, the summaries and the tree nodes' scores of the same
    partition pass). `pairs` is a list of (baseline, candidate) run ids or a callable that
    picks them from the run_summary (a polars frame)."""
    with scored_dataset(
        dataset, config, clamp=clamp, remote=remote, partitions=partitions, evaluators=NODES
    ) as tables:
        nodes = tables.pop(S.EVALUATOR_SCORES)
        scored = collect_tables(tables)
        chosen = pairs(scored[S.RUN_SUMMARY]) if callable(pairs) else pairs
        chosen = [(str(b), str(c)) for b, c in chosen]
        known = scored[S.RUN_SUMMARY][S.RUN_ID].cast(pl.String).unique().to_list()
        check_runs([r for pair in chosen for r in pair], known)
        deltas = compare(
            tables[S.CASE_SUMMARY],
            tables[S.RUN_SUMMARY],
            chosen,
            config,
            evaluator_scores=nodes,
        )
        return collect_tables(deltas), scored, chosen
