"""Comparing runs (docs/compare.md): `case_deltas`, `evaluator_deltas` and `run_deltas`.

Every (baseline, candidate) pair is computed in one pass: the pairs are a small table
joined to the case summaries of both sides, so nothing loops over pairs or cases in
Python. Rules and columns: docs/compare.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl

from evalframe._private import schema as S
from evalframe._private.compare.paired_stats import (
    PAIRED_SCHEMA,
    finish_paired,
    paired_aggregations,
)
from evalframe._private.compare.pairs import check_runs
from evalframe._private.config import Config
from evalframe._private.errors import UsageError
from evalframe._private.rules import compare as rules
from evalframe._private.rules import decide as rules_decide
from evalframe._private.rules.compare import (
    CASE_STATUSES,
)

# --- column names of the comparison tables --------------------------------------------
BASELINE = "baseline"
CANDIDATE = "candidate"

# case / evaluator status values (rules/compare.py, in rule order) and their counts
STATUS_COUNTS = {status: f"n_{status}" for status in CASE_STATUSES}

# compare limits, carried per config_id while computing
LIMITS = ("max_pass_rate_drop", "max_mean_score_drop", "max_latency_increase", "case_delta")
REQUIRE_SIGNIFICANCE = "require_significance"
"""compare.require_significance, carried per config_id beside the LIMITS
(docs/statistics.md#significance-gate)."""
MARGINS = ("pass_rate_margin", "mean_score_margin")
"""decide margins (docs/compare.md#decisions), carried per config_id beside the LIMITS."""

PAIR_KEY = (S.CONFIG_ID, S.BASELINE_RUN_ID, S.CANDIDATE_RUN_ID)
PAIR_INDEX = "_pair"
IN_BASELINE = "_in_baseline"
IN_CANDIDATE = "_in_candidate"
SCORED = "_scored"
_IS_B = "_is_baseline"

RUN_STATS = (S.PASS_RATE, S.MEAN_SCORE, S.LATENCY_MEAN, S.LATENCY_P95, S.COST_USD)
_RUN_DELTA_NAMES = {c: f"{c.removesuffix('_usd')}_delta" for c in RUN_STATS}
PAIR_SCHEMA = {S.CONFIG_ID: pl.String, S.BASELINE_RUN_ID: pl.String, S.CANDIDATE_RUN_ID: pl.String}
_CASE_SIDES = {S.SCORE: pl.Float64, S.PASSED: pl.Boolean, S.PASS_RATE: pl.Float64}
CASE_DELTAS_SCHEMA = pl.Schema(
    {
        **PAIR_SCHEMA,
        S.CASE_ID: pl.String,
        **{f"{side}_{c}": t for c, t in _CASE_SIDES.items() for side in (BASELINE, CANDIDATE)},
        **{f"{side}_{S.LATENCY_MEAN}": pl.Float64 for side in (BASELINE, CANDIDATE)},
        S.SCORE_DELTA: pl.Float64,
        S.STATUS: pl.String,
    }
)
CASE_SIDE_COLUMNS = (*_CASE_SIDES, S.LATENCY_MEAN)
EVALUATOR_DELTAS_SCHEMA = pl.Schema(
    {
        **PAIR_SCHEMA,
        S.CASE_ID: pl.String,
        S.PATH: pl.String,
        **{f"{side}_{S.SCORE}": pl.Float64 for side in (BASELINE, CANDIDATE)},
        S.SCORE_DELTA: pl.Float64,
        S.STATUS: pl.String,
    }
)
_RUN_DELTAS_COLUMNS: dict[str, pl.DataType | type[pl.DataType]] = {
    **PAIR_SCHEMA,
    **{f"{side}_{c}": pl.Float64 for c in RUN_STATS for side in (BASELINE, CANDIDATE)},
    **{name: pl.Float64 for name in _RUN_DELTA_NAMES.values()},
    **{name: pl.Int64 for name in STATUS_COUNTS.values()},
    **PAIRED_SCHEMA,
    S.REASONS: pl.List(pl.String),
    S.REGRESSION_DETECTED: pl.Boolean,
    S.DECISION: pl.String,
    S.DECISION_REASONS: pl.List(pl.String),
}
RUN_DELTAS_SCHEMA = pl.Schema(_RUN_DELTAS_COLUMNS)


# --- inputs ----------------------------------------------------------------------------
def pair_table(pairs: Sequence[tuple[str, str]]) -> pl.DataFrame:
    seen: dict[tuple[str, str], None] = {}
    for pair in pairs:
        if (
            not isinstance(pair, (tuple, list))
            or len(pair) != 2
            or not all(isinstance(r, str) for r in pair)
        ):
            raise UsageError(
                f"a comparison pair must be (baseline_run_id, candidate_run_id), got {pair!r}; "
                "hint: build pairs with pairs_for()."
            )
        seen.setdefault((pair[0], pair[1]), None)
    return pl.DataFrame(
        {
            PAIR_INDEX: range(len(seen)),
            S.BASELINE_RUN_ID: [b for b, _ in seen],
            S.CANDIDATE_RUN_ID: [c for _, c in seen],
        },
        schema={PAIR_INDEX: pl.Int64, S.BASELINE_RUN_ID: pl.String, S.CANDIDATE_RUN_ID: pl.String},
    )


def limits_table(config: Config | Sequence[Config], config_ids: Sequence[str]) -> pl.DataFrame:
    """config_id → compare limits. One Config applies to every config_id in the data."""
    if isinstance(config, Config):
        rows = dict.fromkeys(config_ids, config.compare)
        decides = dict.fromkeys(config_ids, config.decide)
    else:
        given = {c.config_id: c.compare for c in config}
        given_decide = {c.config_id: c.decide for c in config}
        missing = sorted(set(config_ids) - set(given))
        if missing:
            raise UsageError(
                f"the scored data holds config_id(s) {', '.join(missing)} that are not among "
                f"the configs given ({', '.join(sorted(given))}); hint: pass every config the "
                "data was scored with, or one Config to apply its limits to all."
            )
        rows = {cid: given[cid] for cid in config_ids}
        decides = {cid: given_decide[cid] for cid in config_ids}
    return pl.DataFrame(
        {
            S.CONFIG_ID: list(rows),
            **{name: [getattr(c, name) for c in rows.values()] for name in LIMITS},
            REQUIRE_SIGNIFICANCE: [c.require_significance for c in rows.values()],
            **{name: [getattr(d, name) for d in decides.values()] for name in MARGINS},
        },
        schema={
            S.CONFIG_ID: pl.String,
            **{name: pl.Float64 for name in LIMITS},
            REQUIRE_SIGNIFICANCE: pl.Boolean,
            **{name: pl.Float64 for name in MARGINS},
        },
    )


# --- case_deltas -----------------------------------------------------------------------
def status_columns(ns: Any, *, passed: bool, case_delta: Any) -> list[Any]:
    """score_delta and `rules.compare.case_status` over the columns `pair_sides` builds
    plus `*__scored`; the verdict-flip rule only when `passed` (evaluator rows have no
    verdict). `ns` is polars or narwhals."""
    col = ns.col
    no_verdict = ns.lit(None, dtype=ns.Boolean)
    b, c = f"{BASELINE}_", f"{CANDIDATE}_"
    delta = col(c + S.SCORE) - col(b + S.SCORE)
    status = rules.case_status(
        ns,
        in_baseline=col(IN_BASELINE),
        in_candidate=col(IN_CANDIDATE),
        baseline_scored=col(b + SCORED),
        candidate_scored=col(c + SCORED),
        baseline_passed=col(b + S.PASSED) if passed else no_verdict,
        candidate_passed=col(c + S.PASSED) if passed else no_verdict,
        score_delta=delta,
        case_delta=case_delta,
    )
    return [delta.alias(S.SCORE_DELTA), status.alias(S.STATUS)]


def pair_sides(
    table: pl.LazyFrame, pairs: pl.LazyFrame, key: Sequence[str], values: Sequence[str]
) -> pl.LazyFrame:
    """One row per pair × config_id × `key` found in either run of the pair, with each
    side's `values` as baseline_* / candidate_* and the flags _in_baseline/_in_candidate.

    `table` is joined once (to the pairs stacked by side) and the sides are spread by a
    group_by, so an upstream lazy plan is referenced once, not once per side.
    """
    pair_cols = [PAIR_INDEX, S.BASELINE_RUN_ID, S.CANDIDATE_RUN_ID]
    stacked = pl.concat(
        [
            pairs.select(*pair_cols, pl.col(run_col).alias(S.RUN_ID), pl.lit(is_b).alias(_IS_B))
            for run_col, is_b in ((S.BASELINE_RUN_ID, True), (S.CANDIDATE_RUN_ID, False))
        ]
    )
    rows = stacked.join(table.select(S.CONFIG_ID, S.RUN_ID, *key, *values), on=S.RUN_ID)
    b, c = pl.col(_IS_B), ~pl.col(_IS_B)
    # each side has at most one row per key: spread values into side columns row-wise,
    # then plain max() aggregations (no per-group filtering) collapse the two rows
    spread = rows.select(
        PAIR_INDEX,
        S.CONFIG_ID,
        *key,
        b.alias(IN_BASELINE),
        c.alias(IN_CANDIDATE),
        *(pl.when(b).then(pl.col(v)).alias(f"{BASELINE}_{v}") for v in values),
        *(pl.when(c).then(pl.col(v)).alias(f"{CANDIDATE}_{v}") for v in values),
    )
    sided = [
        IN_BASELINE,
        IN_CANDIDATE,
        *(f"{side}_{v}" for side in (BASELINE, CANDIDATE) for v in values),
    ]
    # group by the pair index alone (the run ids follow from it) and attach them after
    return (
        spread.group_by(PAIR_INDEX, S.CONFIG_ID, *key)
        .agg(pl.col(sided).max())
        .join(pairs.select(pair_cols), on=PAIR_INDEX, how="left")
    )


def with_status(sides: pl.LazyFrame, limits: pl.LazyFrame, *, passed: bool) -> pl.LazyFrame:
    scored = [f"{BASELINE}_{SCORED}", f"{CANDIDATE}_{SCORED}"]
    return (
        sides.join(limits, on=S.CONFIG_ID, how="inner")
        .with_columns(pl.col(scored).fill_null(False))
        .with_columns(status_columns(pl, passed=passed, case_delta=pl.col(LIMITS[3])))
    )


def case_scored(ns: Any) -> Any:
    """A case summary row is scored: some attempt scored and the case has a score."""
    return (ns.col(S.SCORED).fill_null(0) > 0) & ~ns.col(S.SCORE).is_null()


def case_rows(
    case_summary: pl.LazyFrame,
    pairs: pl.LazyFrame,
    limits: pl.LazyFrame,
    key: Sequence[str] = (S.CASE_ID,),
) -> pl.LazyFrame:
    """case_deltas (per pair × `key`) plus the internal columns _pair, _in_*, *__scored
    (sorted later)."""
    cs = case_summary.with_columns(case_scored(pl).alias(SCORED))
    sides = pair_sides(cs, pairs, key, [*CASE_SIDE_COLUMNS, SCORED])
    return with_status(sides, limits, passed=True)


def _evaluator_deltas(
    evaluator_scores: pl.LazyFrame | None,
    pairs: pl.LazyFrame,
    limits: pl.LazyFrame,
    *,
    single_attempts: bool = False,
) -> pl.LazyFrame:
    if evaluator_scores is None:
        return pl.LazyFrame(schema=EVALUATOR_DELTAS_SCHEMA)
    nodes = evaluator_scores.filter(pl.col(S.PATH) != "")
    if single_attempts:  # the mean over one attempt is that attempt's score
        per_case = nodes.select(
            S.CONFIG_ID, S.RUN_ID, S.CASE_ID, S.PATH, pl.col(S.SCORE).cast(pl.Float64)
        )
    else:
        per_case = nodes.group_by(S.CONFIG_ID, S.RUN_ID, S.CASE_ID, S.PATH).agg(
            pl.col(S.SCORE).cast(pl.Float64).mean()
        )
    per_case = per_case.with_columns(pl.col(S.SCORE).is_not_null().alias(SCORED))
    sides = pair_sides(per_case, pairs, [S.CASE_ID, S.PATH], [S.SCORE, SCORED])
    return (
        with_status(sides, limits, passed=False)
        .sort(S.CONFIG_ID, PAIR_INDEX, S.CASE_ID, S.PATH)
        .select(EVALUATOR_DELTAS_SCHEMA.names())
        .cast(EVALUATOR_DELTAS_SCHEMA)
    )


# --- run_deltas ------------------------------------------------------------------------
def _run_deltas(
    case_deltas: pl.LazyFrame,
    run_summary: pl.LazyFrame,
    pairs: pl.LazyFrame,
    pair_configs: pl.LazyFrame,
) -> pl.LazyFrame:
    """One row per config_id × pair; `pair_configs` holds those rows with the limits."""
    key = [PAIR_INDEX, *PAIR_KEY]
    stats = run_summary.select(
        S.CONFIG_ID, S.RUN_ID, *(pl.col(c).cast(pl.Float64) for c in RUN_STATS)
    )
    per_side = pair_sides(stats, pairs, [], RUN_STATS).drop(IN_BASELINE, IN_CANDIDATE)
    rows = pair_configs.join(per_side, on=key, how="left", nulls_equal=True)

    per_pair = case_deltas.group_by(key).agg(pair_aggregations(pl))
    rows = rows.join(per_pair, on=key, how="left", nulls_equal=True)
    rows = finish_paired(rows).with_columns(
        pl.col(list(STATUS_COUNTS.values())).fill_null(0).cast(pl.Int64)
    )
    checks = regression_checks(pl)
    reasons = pl.concat_list(
        [pl.when(check).then(pl.lit(code)) for code, check in checks.items()]
    ).list.drop_nulls()
    parts = decision_parts(pl)
    return (
        rows.with_columns(
            *(
                (pl.col(f"{CANDIDATE}_{col}") - pl.col(f"{BASELINE}_{col}")).alias(name)
                for col, name in _RUN_DELTA_NAMES.items()
            ),
            reasons.alias(S.REASONS),
            rules_decide.pair_decision(pl, *parts.values()).alias(S.DECISION),
            decision_reasons(parts).alias(S.DECISION_REASONS),
        )
        .with_columns((pl.col(S.REASONS).list.len() > 0).alias(S.REGRESSION_DETECTED))
        .sort(S.CONFIG_ID, PAIR_INDEX)
        .select(RUN_DELTAS_SCHEMA.names())
        .cast(RUN_DELTAS_SCHEMA)
    )


def pair_aggregations(ns: Any) -> list[Any]:
    """group_by aggregations of a pair's case rows (the columns `pair_sides` and
    `with_status` build): the status counts and `paired_aggregations`; `ns` is polars or
    narwhals."""
    col = ns.col
    matched = col(IN_BASELINE) & col(IN_CANDIDATE)
    b, c = f"{BASELINE}_", f"{CANDIDATE}_"
    return [
        *((col(S.STATUS) == s).cast(ns.Int64).sum().alias(n) for s, n in STATUS_COUNTS.items()),
        *paired_aggregations(
            ns,
            col(S.SCORE_DELTA),
            paired=matched & col(b + SCORED) & col(c + SCORED),
            matched=matched,
            b_passed=col(b + S.PASSED),
            c_passed=col(c + S.PASSED),
        ),
    ]


def regression_checks(ns: Any) -> dict[str, Any]:
    """`rules.compare.regression_checks` over run_deltas' columns (both sides' run
    statistics, the intervals) and the carried limits; `ns` is polars or narwhals."""
    b = {n: ns.col(f"{BASELINE}_{n}") for n in RUN_STATS}
    c = {n: ns.col(f"{CANDIDATE}_{n}") for n in RUN_STATS}
    return rules.regression_checks(
        ns,
        pass_rate_drop=b[S.PASS_RATE] - c[S.PASS_RATE],
        mean_score_drop=b[S.MEAN_SCORE] - c[S.MEAN_SCORE],
        baseline_latency=b[S.LATENCY_MEAN],
        candidate_latency=c[S.LATENCY_MEAN],
        max_pass_rate_drop=ns.col(LIMITS[0]),
        max_mean_score_drop=ns.col(LIMITS[1]),
        max_latency_increase=ns.col(LIMITS[2]),
        require_significance=ns.col(REQUIRE_SIGNIFICANCE),
        pass_delta_ci_high=ns.col(S.PAIRED_PASS_DELTA_CI_HIGH),
        mean_delta_ci_high=ns.col(S.MEAN_DELTA_CI_HIGH),
    )


def decision_parts(ns: Any) -> dict[str, Any]:
    """`rules.decide.decision_parts` over run_deltas' columns (intervals, latency means)
    and the carried margins and latency limit (docs/compare.md#decisions); `ns` is polars or
    narwhals."""
    col = ns.col
    return rules_decide.decision_parts(
        ns,
        pass_delta_ci_low=col(S.PAIRED_PASS_DELTA_CI_LOW),
        pass_delta_ci_high=col(S.PAIRED_PASS_DELTA_CI_HIGH),
        mean_delta_ci_low=col(S.MEAN_DELTA_CI_LOW),
        mean_delta_ci_high=col(S.MEAN_DELTA_CI_HIGH),
        baseline_latency=col(f"{BASELINE}_{S.LATENCY_MEAN}"),
        candidate_latency=col(f"{CANDIDATE}_{S.LATENCY_MEAN}"),
        pass_rate_margin=col(MARGINS[0]),
        mean_score_margin=col(MARGINS[1]),
        max_latency_increase=col(LIMITS[2]),
    )


def decision_reasons(parts: dict[str, pl.Expr]) -> pl.Expr:
    """decision_reasons: the parts that are not "pass", in rules.decide's order."""
    return pl.concat_list(
        [pl.when(rules_decide.names_part(p)).then(pl.lit(name)) for name, p in parts.items()]
    ).list.drop_nulls()


# --- public ----------------------------------------------------------------------------
def compare(
    case_summary: pl.LazyFrame,
    pairs: Sequence[tuple[str, str]],
    config: Config | Sequence[Config],
    *,
    evaluator_scores: pl.LazyFrame | None = None,
    run_summary: pl.LazyFrame | None = None,
) -> dict[str, pl.LazyFrame]:
    """Compare candidate runs to baseline runs (docs/compare.md), every pair in one pass.

    Returns lazy `case_deltas`, `evaluator_deltas` and `run_deltas` (keys are the table
    names). Only the distinct (config_id, run_id) keys are collected, to check the run
    ids: an unknown one raises `UnknownRunError`, whose message lists the known ids.
    `config` is one Config, whose `compare` limits apply to every config_id in the data,
    or a sequence of configs, matched to the data by config_id.
    """
    if run_summary is None:
        raise UsageError(
            "compare needs run_summary (pass/score/latency/cost per run); "
            "hint: pass run_summary=run_summary(...) from the same scoring."
        )
    case_summary, run_summary = case_summary.lazy(), run_summary.lazy()
    pair_df = pair_table(pairs)
    keys_cs, keys_rs = pl.collect_all(
        [frame.select(S.CONFIG_ID, S.RUN_ID).unique() for frame in (case_summary, run_summary)]
    )
    keys = pl.concat([keys_cs, keys_rs.cast(keys_cs.schema)]).unique()
    asked = [*pair_df[S.BASELINE_RUN_ID], *pair_df[S.CANDIDATE_RUN_ID]]
    check_runs(asked, keys[S.RUN_ID].unique().to_list())
    limits = limits_table(config, sorted(keys[S.CONFIG_ID].unique().to_list())).lazy()
    pairs_lf = pair_df.lazy()

    full = case_rows(case_summary, pairs_lf, limits)
    case_deltas = (
        full.sort(S.CONFIG_ID, PAIR_INDEX, S.CASE_ID)
        .select(CASE_DELTAS_SCHEMA.names())
        .cast(CASE_DELTAS_SCHEMA)
    )
    pair_configs = pairs_lf.join(limits, how="cross")
    run_deltas = _run_deltas(full, run_summary, pairs_lf, pair_configs)
    single = evaluator_scores is not None and bool(
        evaluator_scores.lazy()
        .select((pl.col(S.ATTEMPT).max() == pl.col(S.ATTEMPT).min()).fill_null(True))
        .collect()
        .item()
    )  # every row the same attempt number: one attempt per case
    evaluator_deltas = _evaluator_deltas(
        None if evaluator_scores is None else evaluator_scores.lazy(),
        pairs_lf,
        limits,
        single_attempts=single,
    )
    return {
        S.CASE_DELTAS: case_deltas,
        S.EVALUATOR_DELTAS: evaluator_deltas,
        S.RUN_DELTAS: run_deltas,
    }
