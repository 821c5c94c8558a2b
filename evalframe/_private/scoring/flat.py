"""Aggregate-first scoring of flat configs: one streaming pass over the judge rows.

A *flat* config has no composite evaluators and a root aggregator whose inputs are sums
and extremes (weighted_average, minimum, maximum, all_or_nothing). For those, every rule
of docs/scoring.md needs only a handful of partial sums per execution, so the judge rows are
grouped by execution key right after the scan — with the row terms that the rules and
the value checks need — and everything else runs on per-execution rows:

    scan scores ─ evaluator → Enum id → leaf id (gather on a tiny table, no join)
                └ group_by(run_id, case_id, attempt): counts, Σw·s, Σw, weight of null
                  rows, required leaves present / below min_score / min s, min/max s,
                  evaluator bitmask (duplicates), value-check counts
    per-execution rows ⋈ executions ⋈ outcome counts → root score → apply_policy

Nothing the size of the judge rows is materialized: the group-by runs on polars'
streaming engine. The verdict rules after the root score are the one `apply_policy`
every path uses; the root rules here mirror `tree_eval` for a tree of depth one (the
map is in docs/architecture.md), and the property tests hold both to tests/reference.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from evalframe._private import schema as S
from evalframe._private.config import Config
from evalframe._private.data.validate import (
    SCORE_VALUE_CHECKS,
    ClampReport,
    folded_score_checks,
    render_keys,
)
from evalframe._private.errors import Problem
from evalframe._private.rules import aggregators
from evalframe._private.rules.boundaries import meets
from evalframe._private.rules.constants import (
    ALL_OR_NOTHING,
    MAXIMUM,
    MINIMUM,
    WEIGHTED_AVERAGE,
)
from evalframe._private.rules.exact_sums import (
    effective_weight,
    fixed,
    fixed_of,
    in_band,
    weight_in_band,
    weighted_mean,
)
from evalframe._private.rules.normalize import normalized_score
from evalframe._private.rules.verdicts import ON_MISSING_ZERO, resolved_threshold
from evalframe._private.scoring.leaves import N_EXPECTED, N_ROWS
from evalframe._private.scoring.policy import BORDERLINE, OUTCOMES_MODE
from evalframe._private.scoring.tree_eval import (
    CFG_THRESHOLD,
    GATE_FIRED,
    ON_MISSING,
    OVERRIDE,
)

FLAT_AGGREGATORS = (WEIGHTED_AVERAGE, MINIMUM, MAXIMUM, ALL_OR_NOTHING)
MAX_EVALUATORS = 62
"""Evaluator ids that fit the Int64 bitmask the duplicate check uses."""

# per-row terms and per-execution partial sums (internal column names)
_EV = "_ev"  # evaluator id (Enum physical)
_LEAF = "_leaf"  # leaf index, null for an evaluator the config does not list
_S = "_s"  # normalized score
_W = "_w"  # effective weight: config > data > 1
N_ALL = "_n_all"
N_NULL = "_n_null"
N_PRESENT = "_n_present"
SWS = "_sws"
SW = "_sw"
W_NULL = "_w_null"
CW_ROWS = "_cw_rows"
S_MIN = "_s_min"
S_MAX = "_s_max"
REQ_ROWS = "_req_rows"
REQ_MS_FAIL = "_req_ms_fail"
REQ_T_NULL = "_req_t_null"
REQ_T_MIN = "_req_t_min"
MASK = "_mask"
# the same sums in fixed point (order-independent, see rules/exact_sums.py), and the rows that
# cannot be summed so (a weight outside [BAND_LO, BAND_HI), an invalid score)
SWS_Q = "_sws_q"
SW_Q = "_sw_q"
W_NULL_Q = "_w_null_q"
CW_ROWS_Q = "_cw_rows_q"
N_OUT = "_n_out"
# value checks folded into the same pass (validate.SCORE_VALUE_CHECKS: `_<fold>` columns)
_CHECKS = tuple(f"_{c.fold}" for c in SCORE_VALUE_CHECKS)
NULL_EVAL = "_null_eval"
CLAMPED = "_clamped"
NULLED = "_nulled"
CHECK_COUNTS = (*_CHECKS, NULL_EVAL, NULLED, CLAMPED)
"""The partials' value-check counts (score_problems and duplicate_problem read them; the
root statistics do not; NULLED and CLAMPED only with clamp)."""


def is_flat(config: Config) -> bool:
    """Whether `config` can be scored by the aggregate-first pass."""
    if config.aggregator not in FLAT_AGGREGATORS:
        return False
    return all(not e.is_composite for e in (config.evaluators or {}).values())


@dataclass(frozen=True)
class Leaves:
    """The flat tree as lookup tables indexed by data evaluator id."""

    names: tuple[str, ...]
    """Evaluator names in the data (Enum categories, sorted)."""
    leaf_of: list[int | None]
    """Data evaluator id -> leaf index (None: not listed, its rows are ignored)."""
    weight: list[float | None]
    """Leaf -> configured weight (None: the data's weight, else 1)."""
    required: list[bool]
    min_score: list[float | None]
    n_leaves: int | None
    """Leaves listed by the config; None when the leaves are each run's evaluators."""
    zero_fill: bool = False
    """on_missing is zero: the weights of null and absent leaves join the denominator."""
    higher_is_better: tuple[bool, ...] = ()
    """Leaf -> its direction (empty: every leaf is higher-is-better, as without a list)."""

    @classmethod
    def of(cls, config: Config, names: tuple[str, ...]) -> Leaves:
        zero = config.on_missing == ON_MISSING_ZERO
        if config.evaluators is None:
            n = len(names)
            return cls(names, list(range(n)), [None] * n, [False] * n, [None] * n, None, zero)
        listed = list(config.evaluators.values())
        index = {name: i for i, name in enumerate(config.evaluators)}
        return cls(
            names,
            [index.get(name) for name in names],
            [e.weight for e in listed],
            [e.required for e in listed],
            [e.min_score for e in listed],
            len(listed),
            zero,
            tuple(e.higher_is_better for e in listed),
        )

    @property
    def configured_weights(self) -> list[float]:
        """Each listed leaf's configured weight, 1 when it has none (absent leaves)."""
        return [1.0 if x is None else x for x in self.weight]

    @property
    def all_higher_is_better(self) -> bool:
        return all(self.higher_is_better)

    def per_row(self, values: list, dtype: pl.DataType) -> pl.Expr:
        """A leaf-indexed list looked up per row by the row's leaf id."""
        return pl.lit(pl.Series(values, dtype=dtype)).gather(pl.col(_LEAF))


def evaluator_names(scores: pl.LazyFrame) -> tuple[str, ...]:
    """The distinct evaluator names of the judge rows (one column scanned)."""
    col = scores.select(pl.col(S.EVALUATOR).cast(pl.String).unique()).collect(engine="streaming")
    return tuple(sorted(col[S.EVALUATOR].drop_nulls()))


LEAF_SCORE = "_leaf_score:"
"""Prefix of the per-leaf columns `execution_partials(leaf_paths=...)` adds: the
leaf's normalized score in the execution (null when absent or null), named by path."""


def paths_of_leaves(leaves: Leaves, config: Config) -> list[str]:
    """The leaf paths in leaf-index order: the config's evaluators, or the data's."""
    return list(config.evaluators) if config.evaluators is not None else list(leaves.names)


def execution_partials(
    scores: pl.LazyFrame,
    leaves: Leaves,
    *,
    clamp: bool,
    leaf_paths: list[str] | None = None,
) -> pl.LazyFrame:
    """The one pass over the judge rows: partial sums per execution key.

    `scores` is the typed scan (declared columns cast, defaults filled). `leaf_paths`
    (`paths_of_leaves`) also keeps each leaf's score per execution (`LEAF_SCORE` + path:
    what compare's evaluator_deltas reads) in the same group-by."""
    score, checks = _checked_score(clamp)
    terms, aggs = _sum_terms(leaves)
    clamp_counts = [pl.col(c).sum().cast(pl.Int64) for c in (NULLED, CLAMPED) if clamp]
    for more_terms, more_aggs in (
        _zero_fill_terms(leaves),
        _configured_terms(leaves),
        ([], clamp_counts),
        _leaf_score_terms(leaf_paths or ()),
    ):
        terms += more_terms
        aggs += more_aggs
    keep = [S.RUN_ID, S.CASE_ID, S.ATTEMPT, *_CHECKS, *((NULLED, CLAMPED) if clamp else ())]
    cfg_w = leaves.per_row(leaves.weight, pl.Float64()) if leaves.n_leaves is not None else None
    w = effective_weight(pl, pl.lit(None) if cfg_w is None else cfg_w, pl.col(S.WEIGHT))
    return (
        _leaf_rows(scores, leaves, score, checks)
        .with_columns(w.alias(_W))
        .select(*keep, *terms)
        .group_by(S.RUN_ID, S.CASE_ID, S.ATTEMPT)
        .agg(aggs)
    )


def _checked_score(clamp: bool) -> tuple[pl.Expr, list[pl.Expr]]:
    """The raw score (clipped into [0, scale_max] and non-finite values nulled with
    `clamp`) and the row terms of the value checks folded into the pass."""
    raw, mx = pl.col(S.SCORE), pl.col(S.SCALE_MAX)
    finite = raw.is_finite()
    checks = [c.expr.fill_null(False).alias(f"_{c.fold}") for c in SCORE_VALUE_CHECKS]
    if not clamp:
        return raw, checks
    score = pl.when(raw.is_not_null() & ~finite).then(None).otherwise(raw.clip(0.0, mx))
    checks += [
        (raw.is_not_null() & ~finite).alias(NULLED),
        (finite & ((raw < 0) | (raw > mx))).fill_null(False).alias(CLAMPED),
    ]
    return score, checks


def _leaf_rows(
    scores: pl.LazyFrame, leaves: Leaves, score: pl.Expr, checks: list[pl.Expr]
) -> pl.LazyFrame:
    """The judge rows with their evaluator id, leaf id and normalized score (a
    lower-is-better leaf's direction looked up by the row's leaf id)."""
    lookup = pl.Series(leaves.leaf_of, dtype=pl.Int32)
    ev = pl.col(S.EVALUATOR).cast(pl.Enum(leaves.names)).to_physical().alias(_EV)
    key = (S.RUN_ID, S.CASE_ID, S.ATTEMPT)
    if leaves.all_higher_is_better:
        rows = scores.select(
            *key, ev, normalized_score(pl, score, pl.col(S.SCALE_MAX)).alias(_S), S.WEIGHT, *checks
        )
        return rows.with_columns(pl.lit(lookup).gather(pl.col(_EV)).alias(_LEAF))
    direction = leaves.per_row(list(leaves.higher_is_better), pl.Boolean())
    return (
        scores.select(*key, ev, score.alias(_S), S.SCALE_MAX, S.WEIGHT, *checks)
        .with_columns(pl.lit(lookup).gather(pl.col(_EV)).alias(_LEAF))
        .with_columns(normalized_score(pl, pl.col(_S), pl.col(S.SCALE_MAX), direction).alias(_S))
    )


_s = pl.col(_S)
_matched = pl.col(_LEAF).is_not_null()
_exact = in_band(pl.col(_W)) & (_s.is_null() | ((_s >= 0.0) & (_s <= 1.0))).fill_null(False)
"""A row summed exactly: weight in band, score null or in [0, 1]."""

Terms = tuple[list[pl.Expr], list[pl.Expr]]
"""Row terms and the aggregations of them per execution."""


def _sum_terms(leaves: Leaves) -> Terms:
    """Counts, Σw·s and Σw (also in fixed point), min/max score, the evaluator bitmask
    and the value-check counts."""
    present = _matched & _s.is_not_null()
    w = pl.col(_W)
    terms: list[pl.Expr] = [
        _matched.alias(N_ROWS),
        (_matched & _s.is_null()).alias(N_NULL),
        (~_matched & pl.col(_EV).is_not_null()).alias(S.N_IGNORED),
        present.alias(N_PRESENT),
        pl.when(present).then(w * _s).alias(SWS),
        pl.when(present).then(w).alias(SW),
        pl.when(present & _exact).then(fixed(pl, w * _s)).alias(SWS_Q),
        pl.when(present & _exact).then(fixed(pl, w)).alias(SW_Q),
        # rows that enter the sums but cannot be summed exactly (null rows: on zero only)
        (_matched & ~_exact & (_s.is_not_null() | pl.lit(leaves.zero_fill))).alias(N_OUT),
        pl.when(_matched).then(_s).alias(_S),
        pl.lit(2, dtype=pl.Int64).pow(pl.col(_EV)).cast(pl.Int64).alias(MASK),
        pl.col(_EV).is_null().alias(NULL_EVAL),
    ]
    counts = (N_ROWS, N_NULL, S.N_IGNORED, N_PRESENT, NULL_EVAL, N_OUT)
    aggs: list[pl.Expr] = [
        pl.len().alias(N_ALL),
        *(pl.col(c).sum().cast(pl.Int64) for c in counts),
        *(pl.col(c).sum() for c in (SWS, SW, SWS_Q, SW_Q)),
        pl.col(_S).min().alias(S_MIN),
        pl.col(_S).max().alias(S_MAX),
        pl.col(MASK).bitwise_or(),
        *(pl.col(c).sum().cast(pl.Int64) for c in _CHECKS),
    ]
    return terms, aggs


def _zero_fill_terms(leaves: Leaves) -> Terms:
    """on_missing: zero only: the weight of null rows, and of the configured leaves
    present (absent = total − this)."""
    if not leaves.zero_fill:
        return [], []
    null_row = _matched & _s.is_null()
    terms = [
        pl.when(null_row).then(pl.col(_W)).alias(W_NULL),
        pl.when(null_row & _exact).then(fixed(pl, pl.col(_W))).alias(W_NULL_Q),
    ]
    sums = [W_NULL, W_NULL_Q]
    if leaves.n_leaves is not None:
        cw1 = leaves.per_row(leaves.configured_weights, pl.Float64())
        terms += [cw1.alias(CW_ROWS), pl.when(in_band(cw1)).then(fixed(pl, cw1)).alias(CW_ROWS_Q)]
        sums += [CW_ROWS, CW_ROWS_Q]
    return terms, [pl.col(c).sum() for c in sums]


def _configured_terms(leaves: Leaves) -> Terms:
    """The required leaves: rows present, below their min_score, null, and the lowest
    score of those gated by the threshold."""
    req = leaves.required
    if leaves.n_leaves is None or not any(req):
        return [], []
    ms = leaves.per_row(leaves.min_score, pl.Float64())
    is_req = leaves.per_row(req, pl.Boolean()).fill_null(False)
    req_ms = is_req & ms.is_not_null()
    req_t = is_req & ms.is_null()
    terms = [
        is_req.alias(REQ_ROWS),
        (req_ms & ~meets(_s, ms).fill_null(False)).alias(REQ_MS_FAIL),
        (req_t & _s.is_null()).alias(REQ_T_NULL),
        pl.when(req_t).then(_s).alias(REQ_T_MIN),
    ]
    aggs = [pl.col(c).sum().cast(pl.Int64) for c in _REQ] + [pl.col(REQ_T_MIN).min()]
    return terms, aggs


def _leaf_score_terms(leaf_paths: Sequence[str]) -> Terms:
    """Each leaf's score per execution (a loop over the leaves, at most 62 columns)."""
    terms = [
        pl.when(pl.col(_LEAF) == i).then(_s).alias(LEAF_SCORE + path)
        for i, path in enumerate(leaf_paths)
    ]
    return terms, [pl.col(LEAF_SCORE + path).max() for path in leaf_paths]


def score_problems(
    partials: pl.DataFrame, scores: pl.LazyFrame, *, clamp: bool
) -> tuple[list[Problem], ClampReport | None]:
    """The value checks of `scores`, from the counts the pass folded in; example keys are
    fetched (a second, filtered scan) only for a check whose count is not zero."""
    from evalframe._private.data.validate import example_keys

    sums = partials.select(
        *(pl.col(c).sum() for c in (*_CHECKS, NULL_EVAL, N_ALL)),
        *(
            pl.when(pl.col(k).is_null()).then(pl.col(N_ALL)).otherwise(0).sum().alias(f"_null_{k}")
            for k in (S.RUN_ID, S.CASE_ID)
        ),
        *((pl.col(c).sum() for c in (CLAMPED, NULLED)) if clamp else ()),
    ).row(0, named=True)
    problems: list[Problem] = []
    key = S.SCORE_KEY
    for check in folded_score_checks(clamp=clamp):
        n = int(sums[f"_{check.fold}"] or 0)
        if n:
            problems.append(
                Problem(
                    S.SCORES, check.column, check.message, n, example_keys(scores, key, check.expr)
                )
            )
    report = None
    if clamp:
        report = ClampReport(clamped=int(sums[CLAMPED] or 0), nulled=int(sums[NULLED] or 0))
    return problems, report


def duplicate_problem(partials: pl.DataFrame, scores: pl.LazyFrame) -> Problem | None:
    """Duplicate (execution, evaluator) keys: an execution's row count differs from the
    number of distinct evaluator bits it set. Keys are listed from a filtered scan."""
    nonnull = pl.col(N_ALL) - pl.col(NULL_EVAL)
    suspects = partials.filter(pl.col(MASK).bitwise_count_ones().cast(pl.Int64) != nonnull)
    if suspects.is_empty():
        return None
    keys = suspects.select(S.EXECUTION_KEY)
    dups = (
        scores.select(S.SCORE_KEY)
        .join(keys.lazy(), on=list(S.EXECUTION_KEY), how="semi")
        .group_by(S.SCORE_KEY)
        .agg(pl.len().alias("_n"))
        .filter(pl.col("_n") > 1)
        .sort(S.SCORE_KEY)
        .collect()
    )
    examples = render_keys(dups, S.SCORE_KEY)
    return Problem(
        S.SCORES, ", ".join(S.SCORE_KEY), "duplicate key (keys listed)", dups.height, examples
    )


def neighbour_duplicates(frame: pl.DataFrame, table: str, keys: tuple[str, ...]) -> Problem | None:
    """Duplicate keys of a table sorted by `keys`: rows equal to the row before. Counted
    like the group-by check (one per duplicated key), listed in key order."""
    same = pl.all_horizontal(
        [pl.col(k).eq_missing(pl.col(k).shift(1)).fill_null(False) for k in keys]
    )
    first_repeat = same & ~same.shift(1).fill_null(False)
    dups = frame.select(*keys, first_repeat.alias("_d")).filter(pl.col("_d"))
    if dups.is_empty():
        return None
    examples = render_keys(dups, keys)
    return Problem(table, ", ".join(keys), "duplicate key (keys listed)", dups.height, examples)


def orphan_problem(partials: pl.DataFrame, executions: pl.DataFrame) -> Problem | None:
    """Score rows whose execution is not in the executions table."""
    orphans = partials.join(
        executions.select(S.EXECUTION_KEY), on=list(S.EXECUTION_KEY), how="anti"
    )
    orphans = orphans.filter(pl.col(S.RUN_ID).is_not_null() & pl.col(S.CASE_ID).is_not_null())
    if orphans.is_empty():
        return None
    examples = render_keys(orphans.sort(S.EXECUTION_KEY), S.EXECUTION_KEY)
    return Problem(
        S.SCORES,
        "",
        "execution is not in the executions table",
        int(orphans[N_ALL].sum()),
        examples,
    )


def root_inputs(frame: pl.LazyFrame, leaves: Leaves, config: Config) -> pl.LazyFrame:
    """Per-execution root statistics for apply_policy — N_MISSING, _root_present, _root,
    GATE_FIRED — from the partial sums joined to the executions (THRESHOLD, N_EXPECTED;
    counts filled with 0 for executions without score rows)."""
    has_rows = pl.col(N_ROWS) > 0
    zero_q = pl.lit(0, dtype=pl.Int128)
    # the sums in fixed point when every term of the execution is in band (`exact`), else
    # the floating-point sums (docs/architecture.md, "Order-independent sums")
    exact = pl.col(N_OUT).fill_null(0) == 0
    sws_q = pl.col(SWS_Q).fill_null(zero_q)
    sw_q = pl.col(SW_Q).fill_null(zero_q)
    if leaves.n_leaves is None:
        n_absent = pl.col(N_EXPECTED) - pl.col(N_ROWS)
        absent_w = n_absent.cast(pl.Float64)
        absent_q = n_absent.cast(pl.Int128) * pl.lit(fixed_of(1.0), dtype=pl.Int128)
    else:
        total = sum(leaves.configured_weights)
        absent_w = pl.lit(total) - pl.col(CW_ROWS).fill_null(0.0)
        cws = leaves.configured_weights
        if all(weight_in_band(w) for w in cws):
            total_q = sum(fixed_of(w) for w in cws)
            absent_q = pl.lit(total_q, dtype=pl.Int128) - pl.col(CW_ROWS_Q).fill_null(zero_q)
        else:  # a configured weight out of band: absent leaves are summed in floating point
            absent_q = pl.lit(None, dtype=pl.Int128)
    n_missing = pl.col(N_NULL) + pl.col(N_EXPECTED) - pl.col(N_ROWS)
    if config.on_missing == ON_MISSING_ZERO:
        present = pl.col(N_PRESENT) + n_missing
        exact = exact & absent_q.is_not_null()
        sw_q = sw_q + pl.col(W_NULL_Q).fill_null(zero_q) + absent_q
        sw = pl.col(SW).fill_null(0.0) + pl.col(W_NULL).fill_null(0.0) + absent_w
        s_min = pl.when(n_missing > 0).then(pl.lit(0.0)).otherwise(pl.col(S_MIN))
        s_max = (
            pl.when(n_missing > 0)
            .then(pl.max_horizontal(pl.col(S_MAX), pl.lit(0.0)))
            .otherwise(pl.col(S_MAX))
        )
    else:
        present = pl.col(N_PRESENT)
        sw = pl.col(SW).fill_null(0.0)
        s_min, s_max = pl.col(S_MIN), pl.col(S_MAX)
    t = resolved_threshold(
        pl,
        pl.lit(config.threshold_override, dtype=pl.Float64),
        pl.col(S.THRESHOLD),
        pl.lit(config.threshold, dtype=pl.Float64),
    )
    wavg = weighted_mean(
        pl, exact=exact, num_q=sws_q, den_q=sw_q, num=pl.col(SWS).fill_null(0.0), den=sw
    )
    no_value = pl.lit(None, dtype=pl.Float64)
    raw = aggregators.aggregate(  # a flat root has no threshold or safety_gate aggregator
        pl,
        aggregator=pl.lit(config.aggregator),
        wavg=wavg,
        s_min=s_min,
        s_max=s_max,
        threshold=t,
        pass_ratio=no_value,
        safety_gate_fired=pl.lit(False),
        wavg_rest=no_value,
    )
    if any(leaves.required):
        req_fail = (
            (pl.col(REQ_MS_FAIL) > 0)
            | (pl.col(REQ_T_NULL) > 0)
            | (pl.col(REQ_ROWS) < sum(leaves.required))
            | (pl.col(REQ_T_MIN).is_not_null() & ~meets(pl.col(REQ_T_MIN), t))
        )
    else:
        req_fail = pl.lit(False)
    root_present = has_rows & (present > 0)
    return frame.with_columns(
        pl.when(has_rows).then(n_missing).otherwise(0).alias(S.N_MISSING),
        root_present.alias("_root_present"),
        aggregators.node_score(pl, present=pl.lit(True), required_failed=req_fail, raw=raw).alias(
            "_root"
        ),
        (root_present & req_fail).fill_null(False).alias(GATE_FIRED),
    )


def run_expected(partials: pl.DataFrame) -> pl.DataFrame:
    """Expected leaves of each run when the config lists none: the evaluators seen in the
    run (OR of its executions' evaluator bitmasks)."""
    return partials.group_by(S.RUN_ID).agg(
        pl.col(MASK).bitwise_or().bitwise_count_ones().cast(pl.Int64).alias(N_EXPECTED)
    )


_COUNTS = (N_ROWS, N_NULL, N_PRESENT, S.N_IGNORED)
_REQ = (REQ_ROWS, REQ_MS_FAIL, REQ_T_NULL)


def execution_frame(
    executions: pl.LazyFrame,
    partials: pl.DataFrame,
    outcome_counts: pl.LazyFrame,
    leaves: Leaves,
    config: Config,
) -> pl.LazyFrame:
    """Executions ⋈ partial sums ⋈ outcome counts, with the root statistics and the
    config's policy columns: the input `apply_policy` turns into verdicts. Rows come out
    in no particular order."""
    key = list(S.EXECUTION_KEY)
    # row order is not kept (keeping it costs more than the join): callers sort the result
    frame = executions.join(partials.lazy(), on=key, how="left").join(
        outcome_counts, on=key, how="left"
    )
    present = set(partials.columns)
    fills = [pl.col(c).fill_null(0) for c in (*_COUNTS, *_REQ) if c in present]
    fills += [pl.col(S.OUTCOMES_TOTAL).fill_null(0), pl.col(S.OUTCOMES_PASSED).fill_null(0)]
    frame = frame.with_columns(fills)
    if leaves.n_leaves is None:
        expected = run_expected(partials).lazy()
        frame = frame.join(expected, on=S.RUN_ID, how="left").with_columns(
            pl.col(N_EXPECTED).fill_null(0)
        )
    else:
        frame = frame.with_columns(pl.lit(leaves.n_leaves, dtype=pl.Int64).alias(N_EXPECTED))
    return root_inputs(frame, leaves, config).with_columns(policy_literals(config))


def policy_literals(config: Config) -> list[pl.Expr]:
    """One config's policy columns as literals (what `apply_policy` reads)."""
    return [
        pl.lit(config.config_id, dtype=pl.String).alias(S.CONFIG_ID),
        pl.lit(config.threshold_override, dtype=pl.Float64).alias(OVERRIDE),
        pl.lit(config.threshold, dtype=pl.Float64).alias(CFG_THRESHOLD),
        pl.lit(config.borderline, dtype=pl.Float64).alias(BORDERLINE),
        pl.lit(config.on_missing, dtype=pl.String).alias(ON_MISSING),
        pl.lit(config.outcomes, dtype=pl.String).alias(OUTCOMES_MODE),
    ]
