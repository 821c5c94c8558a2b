"""What-if at scale (docs/sweep.md): `sweep` — run_summary for every (config × run) of a grid —
and `threshold_curve` — pass rate as an exact step function of the threshold.

The configs of a sweep share one evaluator tree. The tree is evaluated once per distinct
*tree key* (weights, on_missing, node flags; the threshold only where the tree reads it),
then configs are applied as a table joined to the execution rows, in chunks that bound
memory. Nothing loops over rows or executions in Python; the chunk loop only bounds the
size of one query.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from evalframe._private import schema as S
from evalframe._private.config import (
    PRESETS,
    Config,
    config_from_dict,
    merge_config_dicts,
    read_config_file,
)
from evalframe._private.data.dataset import Dataset
from evalframe._private.data.keyed import EXEC
from evalframe._private.errors import ConfigError
from evalframe._private.rules import runs
from evalframe._private.scoring.execution_scores import (
    apply_policy,
    execution_inputs,
    root_rows,
    scoring_plan,
)
from evalframe._private.scoring.leaves import N_EXPECTED, N_ROWS
from evalframe._private.scoring.policy import ATTEMPT_PASSED, TREE
from evalframe._private.scoring.tree import CFG
from evalframe._private.summaries.run_summary import (
    case_level,
    configured_ks,
    finish_run_summary,
    mask_unasked_ks,
)

SWEEPABLE = (
    "threshold",
    "borderline",
    "on_missing",
    "outcomes",
    "attempts.score",
    "attempts.passed",
    "run_gates.min_mean_score",
    "run_gates.min_pass_rate",
    "run_gates.min_pass_rate_lower",
    "compare.max_pass_rate_drop",
    "compare.max_mean_score_drop",
    "compare.max_latency_increase",
    "compare.case_delta",
    "compare.require_significance",
    "history.min_runs",
    "history.flaky_flip_rate",
    "decide.pass_rate_margin",
    "decide.mean_score_margin",
)
"""Scalar config fields a grid may list values for (dotted = nested)."""

GRID_KEYS = ("preset", "base", "grid", "weights", "configs")
PARAM_PREFIX = "sweep_"
WEIGHTS_PARAM = "weights"
ROWS_PER_CHUNK = 25_000_000
MAX_CONFIGS = 100_000
"""Largest grid expanded without an explicit `max_configs` (CLI `--max-configs`)."""
"""Execution rows (configs × executions) assembled per query."""


@dataclasses.dataclass(frozen=True)
class Grid:
    """Configs of a sweep plus the swept value of each parameter for each config."""

    configs: list[Config]
    params: pl.DataFrame  # config_id + one `sweep_<param>` column per swept parameter
    base: Config

    def canonical_json(self) -> str:
        """The metadata JSON of a sweep's result set: one config's JSON as is, several as
        a JSON list."""
        if len(self.configs) == 1:
            return self.configs[0].canonical_json()
        return json.dumps([json.loads(c.canonical_json()) for c in self.configs], sort_keys=True)


def param_column(name: str) -> str:
    return PARAM_PREFIX + name.replace(".", "_")


def _set_dotted(data: dict[str, Any], dotted: str, value: Any) -> dict[str, Any]:
    head, _, rest = dotted.partition(".")
    out = dict(data)
    out[head] = _set_dotted(dict(out.get(head) or {}), rest, value) if rest else value
    return out


def _flatten(grid: dict[str, Any], prefix: str = "") -> dict[str, list[Any]]:
    flat: dict[str, list[Any]] = {}
    for key, value in grid.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            flat |= _flatten(value, f"{name}.")
        else:
            flat[name] = value if isinstance(value, list) else [value]
    return flat


def _apply_weights(data: dict[str, Any], weights: dict[str, float]) -> dict[str, Any]:
    """Set evaluator weights by path ("group/child"); without an evaluators list in the
    base, the weight set becomes the list (other evaluators are then ignored)."""
    out = dict(data)
    tree = {k: dict(v or {}) for k, v in (out.get("evaluators") or {}).items()}
    for path, weight in weights.items():
        names = path.split("/")
        level = tree
        for i, name in enumerate(names):
            if name not in level:
                if out.get("evaluators") is not None:
                    raise ConfigError(
                        f"weight set names evaluator {path!r}, which is not in the base "
                        "config's tree; hint: use the node's path, e.g. group/child."
                    )
                level[name] = {}
            if i == len(names) - 1:
                level[name] = {**level[name], "weight": weight}
            else:
                level[name] = {**level[name], "children": dict(level[name].get("children") or {})}
                level = level[name]["children"]
    out["evaluators"] = tree
    return out


def grid_from_dict(
    spec: dict[str, Any],
    *,
    source: str = "grid",
    evaluators: Sequence[str] = (),
    max_configs: int = MAX_CONFIGS,
) -> Grid:
    """Expand a grid spec (see docs/sweep.md) into configs and their parameter table.

    `evaluators` (the data's evaluator names) lets weight sets apply to a base config that
    lists none: the base then lists every data evaluator, so a set only changes weights."""
    unknown = set(spec) - set(GRID_KEYS)
    if unknown:
        raise ConfigError(
            f"{source}: unknown top-level key(s) {sorted(unknown)}; hint: a grid file has "
            f"{', '.join(GRID_KEYS)} (swept values go under `grid:`)."
        )
    preset = spec.get("preset") or "default"
    if preset not in PRESETS:
        raise ConfigError(f"{source}: unknown preset {preset!r}; hint: {', '.join(PRESETS)}.")
    base_spec = spec.get("base") or {}
    if isinstance(base_spec, str):
        base_spec = read_config_file(Path(source).parent / base_spec)
    base = merge_config_dicts(PRESETS[preset], base_spec)
    axes = _flatten(spec.get("grid") or {})
    bad = [k for k in axes if k not in SWEEPABLE]
    if bad:
        raise ConfigError(
            f"{source}: cannot sweep {bad}; hint: sweepable fields are {', '.join(SWEEPABLE)};"
            " weights go under `weights:` as named sets."
        )
    weight_sets: dict[str, dict[str, float]] = spec.get("weights") or {}
    if weight_sets and base.get("evaluators") is None:
        if not evaluators:
            raise ConfigError(
                f"{source}: weight sets need the evaluators they weigh; hint: list "
                "`evaluators` under `base:` (or sweep through the CLI, which uses the data's)."
            )
        base = {**base, "evaluators": {name: {} for name in sorted(evaluators)}}
    names = list(axes)
    n_configs = math.prod(len(v) for v in axes.values()) * max(1, len(weight_sets))
    n_configs += len(spec.get("configs") or [])
    if n_configs > max_configs:
        raise ConfigError(
            f"{source}: the grid expands to {n_configs:,} configs, more than the limit of "
            f"{max_configs:,}; hint: pass --max-configs {n_configs} (API: max_configs=) if "
            "you mean it, or sweep fewer values."
        )
    combos = list(itertools.product(*axes.values())) if axes else [()]
    rows: list[dict[str, Any]] = []
    datas: list[dict[str, Any]] = []
    for combo in combos:
        set_names: list[str | None] = [*weight_sets] or [None]
        for set_name in set_names:
            data = dict(base)
            row: dict[str, Any] = {}
            for name, value in zip(names, combo, strict=True):
                data = _set_dotted(data, name, value)
                row[name] = value
            if set_name is not None:
                data = _apply_weights(data, weight_sets[set_name] or {})
                row[WEIGHTS_PARAM] = set_name
            datas.append(data)
            rows.append(row)
    for i, override in enumerate(spec.get("configs") or []):
        datas.append(merge_config_dicts(base, override))
        rows.append({"config": i} | {k: v for k, v in _flatten(override).items()})
    configs = [config_from_dict(d, source=f"{source} config {i}") for i, d in enumerate(datas)]
    param_names = list(dict.fromkeys(k for r in rows for k in r))
    params = pl.DataFrame(
        {
            S.CONFIG_ID: [c.config_id for c in configs],
            **{param_column(n): [_scalar(r.get(n)) for r in rows] for n in param_names},
        },
        strict=False,
    ).unique(S.CONFIG_ID, keep="first", maintain_order=True)
    unique = list({c.config_id: c for c in configs}.values())
    return Grid(configs=unique, params=params, base=config_from_dict(base, source=source))


def _scalar(value: Any) -> Any:
    return value[0] if isinstance(value, list) and len(value) == 1 else value


def load_grid(
    path: str | Path, *, evaluators: Sequence[str] = (), max_configs: int = MAX_CONFIGS
) -> Grid:
    """Read a grid file (YAML or JSON)."""
    return grid_from_dict(
        read_config_file(path, "grid"),
        source=str(path),
        evaluators=evaluators,
        max_configs=max_configs,
    )


RUN_IDX = "_run"
CASE_IDX = "_case"
RUN_KEY_INT = "_rk"
N_SAME = "_n_same"
"""Executions in one distinct state (sweep crosses configs with states)."""
STATE_ROWS_PER_CHUNK = 4_000_000
"""(config × state) rows per query when configs are crossed with execution states."""


def sweep(
    dataset: Dataset,
    configs: Sequence[Config] | Grid,
    *,
    rows_per_chunk: int = ROWS_PER_CHUNK,
    on_chunk: Callable[[int, int], None] | None = None,
) -> pl.DataFrame:
    """`sweep`: run_summary rows for every (config × run), plus `sweep_*` parameter
    columns when given a Grid.

    The tree is evaluated once per distinct tree key; then each chunk of configs is a
    table crossed with lean integer-keyed execution rows, verdicts are applied by the same
    expressions as `score`, and the run statistics are aggregated on packed integer keys.
    Latency, cost and token statistics do not depend on the config and are computed once.
    """
    grid = configs if isinstance(configs, Grid) else None
    config_list = list(grid.configs) if grid is not None else list(configs)  # type: ignore[arg-type]
    if not config_list:
        raise ConfigError("sweep needs at least one config; hint: check the grid file.")
    plan = scoring_plan(dataset, config_list)
    lean, run_ids, per_run = _lean_inputs(dataset, plan)
    policy = plan.policy.collect()
    n_runs = max(1, run_ids.height)
    n_cases = int(lean[CASE_IDX].max() or 0) + 1  # type: ignore[arg-type]
    single = lean.height == 0 or lean[S.ATTEMPT].min() == lean[S.ATTEMPT].max()
    weight = N_SAME if single and not configured_ks(config_list) else None
    lean_root, per_config = _root_states(lean, plan, policy, weighted=weight is not None)
    if weight is not None:
        rows_per_chunk = min(rows_per_chunk, STATE_ROWS_PER_CHUNK)
    per_chunk = max(1, rows_per_chunk // max(per_config, 1))
    parts: list[pl.DataFrame] = []
    n_chunks = -(-len(config_list) // per_chunk)
    for k, start in enumerate(range(0, len(config_list), per_chunk)):
        chunk_policy = policy.filter((pl.col(CFG) >= start) & (pl.col(CFG) < start + per_chunk))
        rows = apply_policy(
            # executions × their tree groups' root rows (small), then × each group's configs
            lean_root.lazy().join(chunk_policy.lazy(), on=TREE, how="inner")
        ).with_columns((pl.col(CFG).cast(pl.Int64) * n_runs + pl.col(RUN_IDX)).alias(RUN_KEY_INT))
        chunk_configs = config_list[start : start + per_chunk]
        summary = _chunk_summary(
            rows, single=single, n_cases=n_cases, ks=configured_ks(chunk_configs), weight=weight
        ).collect()
        decoded = _decode(summary.lazy(), n_runs, chunk_policy, run_ids, per_run)
        parts.append(
            finish_run_summary(
                mask_unasked_ks(decoded, chunk_configs), chunk_configs, dataset.runs
            ).collect()
        )
        if on_chunk is not None:
            on_chunk(k + 1, n_chunks)
    result = pl.concat(parts, how="diagonal_relaxed")
    if grid is not None:
        result = result.join(grid.params, on=S.CONFIG_ID, how="left")
    return result


_LEAN_COLUMNS = [
    EXEC,
    RUN_IDX,
    CASE_IDX,
    S.STATUS,
    S.THRESHOLD,
    N_ROWS,
    S.N_MISSING,
    S.N_IGNORED,
    N_EXPECTED,
    S.OUTCOMES_TOTAL,
    S.OUTCOMES_PASSED,
    S.ATTEMPT,
]


def _lean_inputs(dataset: Dataset, plan: Any) -> tuple[pl.DataFrame, ...]:
    """The integer-keyed execution rows the verdict rules read, run index → run_id, and
    the per-run statistics that do not depend on the config (computed once)."""
    inputs = execution_inputs(dataset, plan).with_columns(
        (pl.col(S.RUN_ID).rank("dense") - 1).cast(pl.Int64).alias(RUN_IDX),
        (pl.struct(S.RUN_ID, S.CASE_ID).rank("dense") - 1).cast(pl.Int64).alias(CASE_IDX),
    )
    return tuple(
        pl.collect_all(
            [
                inputs.select(_LEAN_COLUMNS),
                inputs.select(RUN_IDX, S.RUN_ID).unique(),
                inputs.group_by(RUN_IDX).agg(*runs.cost_aggregations(pl)),
            ]
        )
    )


def _root_states(
    lean: pl.DataFrame, plan: Any, policy: pl.DataFrame, *, weighted: bool
) -> tuple[pl.DataFrame, int]:
    """The rows a config is crossed with, and how many of them one config has.

    `weighted` (one attempt per case, no pass@k): executions of a run in the same state
    (every input of the verdict rules) behave alike under every config of the group, so
    the configs are crossed with the distinct states and their counts, not with the
    executions; one tree group (weight set, on_missing) at a time: its root rows, then
    its states. Otherwise each execution once per tree group, with that group's root
    values."""
    trees = policy.select(TREE).unique().sort(TREE)
    if not weighted:
        root = lean.join(trees, how="cross").join(
            root_rows(plan).collect(), on=[TREE, EXEC], how="left"
        )
        return root, lean.height
    lean = lean.drop(CASE_IDX, S.ATTEMPT)
    states = pl.concat(
        [
            _states(lean, _group_root(plan, tree), trees.filter(pl.col(TREE) == tree))
            for tree in trees[TREE]  # a loop over tree groups, not rows
        ],
        how="diagonal_relaxed",
    )
    # the states of its tree group, at most the largest group's
    return states, int(states.group_by(TREE).len()["len"].max() or 0)  # type: ignore[arg-type]


def _group_root(plan: Any, tree: int) -> pl.DataFrame:
    """The root rows of one tree group of the plan (`root_rows` on that group alone)."""
    one = dataclasses.replace(plan, tree_policy=plan.tree_policy.filter(pl.col(CFG) == tree))
    return root_rows(one).collect()


def _states(lean: pl.DataFrame, root: pl.DataFrame, trees: pl.DataFrame) -> pl.DataFrame:
    """The distinct execution states per tree group with their counts (`N_SAME`): each
    execution's row in `lean` with its tree group's root values (`root`; every tree group
    holds root rows for the same executions, those with leaf rows), null for an
    execution without leaf rows, grouped by every column but the execution id."""
    first = root.filter(pl.col(TREE) == pl.col(TREE).min()).select(EXEC)
    rows = pl.concat(
        [
            root.lazy().join(lean.lazy(), on=EXEC, how="inner"),
            lean.lazy().join(first.lazy(), on=EXEC, how="anti").join(trees.lazy(), how="cross"),
        ],
        how="diagonal_relaxed",
    )
    keep = [c for c in rows.collect_schema().names() if c != EXEC]
    return rows.group_by(keep).agg(pl.len().cast(pl.Int64).alias(N_SAME)).collect()


def _chunk_summary(
    rows: pl.LazyFrame,
    *,
    single: bool,
    n_cases: int,
    ks: Sequence[int] = (),
    weight: str | None = None,
) -> pl.LazyFrame:
    """Run statistics per packed (config, run) key from verdict rows of one chunk; with
    `ks`, pass@k / pass^k per k (attempts.k of the chunk's configs). With `weight` (one
    attempt per case, no `ks`), each row is a distinct execution state standing for that
    many executions."""
    score = pl.col(S.SCORE)
    if weight is not None:
        w = pl.col(weight)
        base = rows.group_by(RUN_KEY_INT).agg(*runs.execution_aggregations(pl, w))
        states = rows.select(
            RUN_KEY_INT,
            ATTEMPT_PASSED,
            weight,
            pl.lit(1.0).alias(runs.CASE_N),
            pl.col(S.PASSED).cast(pl.Float64).alias(runs.CASE_K),
            score.is_not_null().cast(pl.Float64).alias(runs.CASE_NS),
            score.fill_null(0.0).alias(runs.CASE_SS),
        )
        levels = (
            states.with_columns(
                *runs.case_level_terms(pl, [RUN_KEY_INT], pl.col(ATTEMPT_PASSED), w)
            )
            .group_by(RUN_KEY_INT)
            .agg(*runs.case_level_aggregations(pl, w))
        )
        return base.join(levels, on=RUN_KEY_INT, how="left")
    base = rows.group_by(RUN_KEY_INT).agg(*runs.execution_aggregations(pl))
    if single:  # one attempt per case: the case rows are the execution rows
        per_case = rows.select(
            RUN_KEY_INT,
            ATTEMPT_PASSED,
            pl.lit(1.0).alias("_n"),
            pl.col(S.PASSED).cast(pl.Float64).alias("_k"),
            score.is_not_null().cast(pl.Float64).alias("_ns"),
            score.fill_null(0.0).alias("_ss"),
        )
    else:
        case_key = pl.col(CFG).cast(pl.Int64) * n_cases + pl.col(CASE_IDX)
        per_case = rows.group_by(case_key.alias("_ck")).agg(
            pl.col(RUN_KEY_INT).first(),
            pl.col(ATTEMPT_PASSED).first(),
            pl.len().cast(pl.Float64).alias("_n"),
            pl.col(S.PASSED).sum().cast(pl.Float64).alias("_k"),
            score.is_not_null().sum().cast(pl.Float64).alias("_ns"),
            score.sum().alias("_ss"),
        )
    return base.join(case_level(per_case, [RUN_KEY_INT], ks), on=RUN_KEY_INT, how="left")


def _decode(
    summary: pl.LazyFrame,
    n_runs: int,
    policy: pl.DataFrame,
    run_ids: pl.DataFrame,
    per_run: pl.DataFrame,
) -> pl.LazyFrame:
    """Packed keys back to config_id and run_id; the config-independent run columns."""
    return (
        summary.with_columns(
            (pl.col(RUN_KEY_INT) // n_runs).cast(pl.Int32).alias(CFG),
            (pl.col(RUN_KEY_INT) % n_runs).alias(RUN_IDX),
        )
        .join(policy.lazy().select(CFG, S.CONFIG_ID), on=CFG, how="left")
        .join(run_ids.lazy(), on=RUN_IDX, how="left")
        .join(per_run.lazy(), on=RUN_IDX, how="left")
        .drop(RUN_KEY_INT, CFG, RUN_IDX)
    )
