"""Hypothesis strategies: random evaluation datasets and scoring configs.

A *scenario* is a config mapping plus the four input tables as lists of row dicts (the
form `tests/reference.py` takes); `frames()` turns the tables into polars frames for
the engine. The generators are biased towards the cases that break scoring engines:
scores that land exactly on a threshold (0-5 integers with weights 0.15 / 0.125 / 0.1,
0.8 = 4/5), null and missing scores, zero weights, required evaluators, repeated
attempts, errored and unscored executions, runs that only exist in the `runs` table,
and composite trees of depth <= 3 over a small pool of names (repeated leaf names
exercise the "unique name or full path" matching rule).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import polars as pl
from hypothesis import strategies as st

from evalframe._private.config import CONNEXITY_WEIGHTS
from evalframe._private.rules.constants import AGGREGATORS

THRESHOLDS = (0.0, 0.5, 0.6, 0.7, 0.75, 0.8, 0.9, 1.0)
BORDERLINES = (0.0, 0.4, 0.5, 0.6, 0.7, 0.75, 0.8)
WEIGHTS = (0.0, 0.1, 0.125, 0.15, 0.3, 0.5, 1.0, 2.0, 3.0)
UNIT_GRID = (0.0, 0.1, 0.2, 0.25, 0.4, 0.5, 0.6, 0.69, 0.7, 0.75, 0.8, 0.85, 0.9, 1.0)
LEAF_POOL = ("a", "b", "c", "d", "e")
GROUP_POOL = ("g1", "g2", "g3")
EXTRA_EVALUATORS = ("zz", "g1")  # never leaves: rows that match nothing are ignored
RUN_POOL = ("r1", "r2", "r3")
CASE_POOL = ("c1", "c2", "c3")

# --- configs ---------------------------------------------------------------------------


def _maybe(strategy: st.SearchStrategy, p_none: float = 0.5) -> st.SearchStrategy:
    """None with probability roughly p_none (hypothesis shrinks towards None)."""
    weight = max(1, round(10 * (1 - p_none)))
    return st.one_of(st.none(), *([strategy] * weight)) if p_none < 1 else st.none()


@st.composite
def leaf_entry(draw) -> dict[str, Any]:
    entry: dict[str, Any] = {}
    w = draw(_maybe(st.sampled_from(WEIGHTS), 0.4))
    if w is not None:
        entry["weight"] = w
    if draw(st.integers(0, 7)) == 0:
        entry["required"] = True
    ms = draw(_maybe(st.sampled_from(THRESHOLDS), 0.75))
    if ms is not None:
        entry["min_score"] = ms
    return entry


SCORE_RANGES = (
    {"0-2": "low", "3-5": "high"},
    {"0-3": "first", "2-5": "overlap"},  # the first band in config order wins
    {"0-0.5": "bad", "0.5-1": "good"},
    {"4-4": "four"},
)


@st.composite
def plain_leaf_entry(draw) -> dict[str, Any]:
    """A leaf entry that may carry score_ranges (labels, never gates)."""
    entry = draw(leaf_entry())
    if draw(st.integers(0, 4)) == 0:
        entry["score_ranges"] = dict(draw(st.sampled_from(SCORE_RANGES)))
    return entry


@st.composite
def entries(draw, depth: int) -> dict[str, dict[str, Any]]:
    """A mapping name -> entry; composites only above depth 3."""
    n = draw(st.integers(1, 3))
    out: dict[str, dict[str, Any]] = {}
    for _ in range(n):
        composite = depth < 3 and draw(st.integers(0, 4)) < 2
        pool = GROUP_POOL if composite else LEAF_POOL
        name = draw(st.sampled_from([p for p in pool if p not in out] or ["zz"]))
        if name == "zz":
            continue
        out[name] = draw(composite_entry(depth + 1)) if composite else draw(plain_leaf_entry())
    return out


@st.composite
def composite_entry(draw, depth: int) -> dict[str, Any]:
    entry = draw(leaf_entry())
    entry["children"] = draw(entries(depth))
    agg = draw(st.sampled_from((None, *AGGREGATORS)))
    if agg is not None:
        entry["aggregator"] = agg
    if agg in ("threshold", "all_or_nothing"):
        t = draw(_maybe(st.sampled_from((0.0, 0.25, 0.5, 0.7, 0.75, 0.8, 1.0)), 0.3))
        if t is not None:
            entry["threshold"] = t
    if agg == "safety_gate":
        names = sorted(entry["children"])
        entry["required_children"] = draw(st.lists(st.sampled_from(names), unique=True))
    return entry


def leaf_paths(evaluators: dict[str, dict[str, Any]], parent: str = "") -> list[str]:
    out = []
    for name, entry in evaluators.items():
        path = f"{parent}/{name}" if parent else name
        if "children" in entry:
            out += leaf_paths(entry["children"], path)
        else:
            out.append(path)
    return out


@st.composite
def configs(draw, family: str) -> dict[str, Any]:
    """A config mapping (for `config_from_dict`) of the given family: flat / tree /
    connexity."""
    cfg: dict[str, Any] = {}
    threshold = draw(st.sampled_from(THRESHOLDS))
    cfg["threshold"] = threshold
    borderline = draw(
        st.one_of(st.none(), st.sampled_from([b for b in BORDERLINES if b <= threshold]))
    )
    cfg["borderline"] = borderline
    if draw(st.integers(0, 9)) == 0:
        cfg["threshold_override"] = draw(st.sampled_from(THRESHOLDS))
        if borderline is not None and borderline > cfg["threshold_override"]:
            cfg["borderline"] = None
    cfg["aggregator"] = draw(st.sampled_from(AGGREGATORS))
    cfg["on_missing"] = draw(st.sampled_from(("skip", "zero", "fail")))
    cfg["outcomes"] = draw(st.sampled_from(("gate", "ignore", "both")))
    cfg["attempts"] = {
        "score": draw(st.sampled_from(("mean", "min", "max"))),
        "passed": draw(st.sampled_from(("all", "any", "majority"))),
    }
    cfg["run_gates"] = {
        "min_mean_score": draw(st.sampled_from(THRESHOLDS)),
        "min_pass_rate": draw(st.sampled_from((0.0, 0.5, 0.75, 1.0))),
        "min_pass_rate_lower": draw(st.sampled_from((None, 0.0, 0.3, 0.6))),
    }
    if family == "tree":
        cfg["evaluators"] = draw(entries(1))
    elif family == "connexity":
        cfg["evaluators"] = {
            name: {"weight": w, **draw(st.fixed_dictionaries({}, optional=_CX_OPTIONAL))}
            for name, w in CONNEXITY_WEIGHTS.items()
        }
        if draw(st.booleans()):
            cfg["aggregator"] = "weighted_average"
    if cfg["aggregator"] == "safety_gate" and cfg.get("evaluators"):
        names = sorted(cfg["evaluators"])
        cfg["required_children"] = draw(st.lists(st.sampled_from(names), unique=True))
    return cfg


_CX_OPTIONAL = {
    "required": st.just(True),
    "min_score": st.sampled_from((0.5, 0.6, 0.8)),
}

# --- datasets --------------------------------------------------------------------------


def data_evaluator_names(draw, cfg: dict[str, Any]) -> list[str]:
    """The evaluator strings the data may use for a config: for a nested leaf whose name
    is unique, either its path or its name (never both: two rows would match one leaf)."""
    evaluators = cfg.get("evaluators")
    if evaluators is None:
        return list(draw(st.sampled_from([LEAF_POOL[:2], LEAF_POOL[:3], LEAF_POOL])))
    paths = leaf_paths(evaluators)
    names = [p.rsplit("/", 1)[-1] for p in paths]
    out: list[str] = []
    for path, name in zip(paths, names, strict=True):
        if "/" in path and names.count(name) == 1 and name not in paths and draw(st.booleans()):
            out.append(name)
        else:
            out.append(path)
    out += [e for e in EXTRA_EVALUATORS if draw(st.integers(0, 3)) == 0]
    # a bare name that is a top-level leaf, ambiguous, or unknown (never the unique name
    # of a nested leaf already addressed by its path)
    safe = [n for n in LEAF_POOL if n in paths or names.count(n) != 1]
    if safe and draw(st.integers(0, 3)) == 0:
        out.append(draw(st.sampled_from(safe)))
    return sorted(set(out))


@st.composite
def raw_score(draw, kind: str) -> tuple[float | None, float]:
    if draw(st.integers(0, 9)) == 0:
        return None, 5.0 if kind == "int5" else 1.0
    if kind == "mixed":
        kind = draw(st.sampled_from(("int5", "unit", "int10")))
    if kind == "int5":
        return float(draw(st.one_of(st.integers(0, 5), st.integers(3, 5)))), 5.0
    if kind == "int10":
        return float(draw(st.integers(0, 10))), 10.0
    if draw(st.integers(0, 5)) == 0:
        return draw(st.floats(0.0, 1.0, allow_nan=False, allow_infinity=False)), 1.0
    return draw(st.sampled_from(UNIT_GRID)), 1.0


@dataclass
class Scenario:
    config: dict[str, Any]
    scores: list[dict[str, Any]]
    executions: list[dict[str, Any]] | None
    outcomes: list[dict[str, Any]] | None
    runs: list[dict[str, Any]] | None
    scores_columns: tuple[str, ...]
    executions_columns: tuple[str, ...]

    def tables(self) -> dict[str, list[dict[str, Any]] | None]:
        return {
            "scores": self.scores,
            "executions": self.executions,
            "outcomes": self.outcomes,
            "runs": self.runs,
        }


@st.composite
def scenarios(draw, family: str | None = None) -> Scenario:
    family = family or draw(st.sampled_from(("flat", "tree", "tree", "connexity")))
    cfg = draw(configs(family))
    names = data_evaluator_names(draw, cfg)
    kind = draw(st.sampled_from(("int5", "int5", "unit", "mixed")))
    with_executions = draw(st.integers(0, 4)) > 1

    runs = RUN_POOL[: draw(st.integers(1, 3))]
    keys: list[tuple[str, str, int]] = []
    for run in runs:
        cases = draw(st.lists(st.sampled_from(CASE_POOL), min_size=1, max_size=3, unique=True))
        for case in cases:
            attempts = draw(st.sampled_from(((0,), (0,), (0, 1), (0, 1, 2), (1,))))
            keys += [(run, case, a) for a in attempts]

    run_names = {run: [n for n in names if draw(st.integers(0, 5)) > 0] for run in runs}
    scores: list[dict[str, Any]] = []
    scored_keys = []
    for run, case, attempt in keys:
        chosen = [n for n in run_names[run] if draw(st.integers(0, 5)) > 0]
        if with_executions and draw(st.integers(0, 7)) == 0:
            chosen = []  # an unscored execution
        if draw(st.integers(0, 9)) == 0:
            chosen.append(draw(st.sampled_from(names)))
        if chosen:
            scored_keys.append((run, case, attempt))
        common = draw(raw_score(kind))
        for name in sorted(set(chosen)):
            if draw(st.booleans()):  # all alike: weighted means land exactly on it
                score, scale_max = common
            else:
                score, scale_max = draw(raw_score(kind))
            scores.append(
                {
                    "run_id": run,
                    "case_id": case,
                    "attempt": attempt,
                    "evaluator": name,
                    "score": score,
                    "scale_max": scale_max,
                    "weight": draw(_maybe(st.sampled_from(WEIGHTS), 0.6)),
                }
            )
    scores_columns = ["run_id", "case_id", "attempt", "evaluator", "score", "scale_max"]
    if draw(st.booleans()):
        scores_columns.append("weight")
    if all(r["attempt"] == 0 for r in scores) and draw(st.booleans()):
        scores_columns.remove("attempt")
    if all(r["scale_max"] == 1.0 for r in scores) and draw(st.booleans()):
        scores_columns.remove("scale_max")
    scores = [{k: r[k] for k in scores_columns} for r in scores]

    executions = None
    executions_columns: tuple[str, ...] = ()
    exec_keys = scored_keys
    if with_executions:
        exec_keys = keys
        all_error_run = draw(st.sampled_from((None, None, None, *runs)))
        executions = []
        for run, case, attempt in keys:
            error = run == all_error_run or draw(st.integers(0, 5)) == 0
            executions.append(
                {
                    "run_id": run,
                    "case_id": case,
                    "attempt": attempt,
                    "status": "error" if error else draw(st.sampled_from(("ok", "ok", None))),
                    "threshold": draw(_maybe(st.sampled_from(THRESHOLDS), 0.6)),
                    "latency_ms": draw(
                        _maybe(st.sampled_from((0.0, 100.0, 250.0, 1234.5, 3000.0)), 0.2)
                    ),
                    "cost_usd": draw(_maybe(st.sampled_from((0.0, 0.001, 0.02, 0.5)), 0.3)),
                    "input_tokens": draw(_maybe(st.integers(0, 5000), 0.3)),
                    "output_tokens": draw(_maybe(st.integers(0, 5000), 0.3)),
                }
            )
        cols = ["run_id", "case_id", "attempt"]
        cols += [
            c
            for c in ("status", "threshold", "latency_ms", "cost_usd", "input_tokens")
            if draw(st.integers(0, 4)) > 0
        ]
        cols.append("output_tokens")
        executions_columns = tuple(cols)
        executions = [{k: r[k] for k in cols} for r in executions]

    outcomes = None
    if exec_keys and draw(st.booleans()):
        outcomes = []
        for run, case, attempt in exec_keys:
            for name in ("o1", "o2")[: draw(st.integers(0, 2))]:
                outcomes.append(
                    {
                        "run_id": run,
                        "case_id": case,
                        "attempt": attempt,
                        "outcome": name,
                        "passed": draw(st.integers(0, 3)) > 0,
                    }
                )

    runs_table = None
    if draw(st.booleans()):
        listed = draw(st.lists(st.sampled_from((*runs, "r0")), unique=True))
        runs_table = [{"run_id": r, "label": f"label-{r}"} for r in listed]

    return Scenario(
        config=cfg,
        scores=scores,
        executions=executions,
        outcomes=outcomes,
        runs=runs_table,
        scores_columns=tuple(scores_columns),
        executions_columns=executions_columns,
    )


# --- polars frames -----------------------------------------------------------------------

_DTYPES: dict[str, pl.DataType] = {
    "run_id": pl.String(),
    "case_id": pl.String(),
    "attempt": pl.Int64(),
    "evaluator": pl.String(),
    "score": pl.Float64(),
    "scale_max": pl.Float64(),
    "weight": pl.Float64(),
    "status": pl.String(),
    "threshold": pl.Float64(),
    "latency_ms": pl.Float64(),
    "cost_usd": pl.Float64(),
    "input_tokens": pl.Int64(),
    "output_tokens": pl.Int64(),
    "outcome": pl.String(),
    "passed": pl.Boolean(),
    "label": pl.String(),
}

_DEFAULT_COLUMNS = {
    "outcomes": ("run_id", "case_id", "attempt", "outcome", "passed"),
    "runs": ("run_id", "label"),
}


def frame(rows: list[dict[str, Any]], columns: tuple[str, ...]) -> pl.DataFrame:
    schema = {c: _DTYPES[c] for c in columns}
    return pl.DataFrame([{c: r[c] for c in columns} for r in rows], schema=schema, orient="row")


def frames(sc: Scenario, order: dict[str, list[int]] | None = None) -> dict[str, Any]:
    """The scenario's tables as polars frames (None for absent tables); `order` gives a
    row permutation per table."""

    def pick(name: str, rows, columns):
        if rows is None:
            return None
        if order and name in order:
            rows = [rows[i] for i in order[name]]
        return frame(rows, columns)

    return {
        "scores": pick("scores", sc.scores, sc.scores_columns),
        "executions": pick("executions", sc.executions, sc.executions_columns),
        "outcomes": pick("outcomes", sc.outcomes, _DEFAULT_COLUMNS["outcomes"]),
        "runs": pick("runs", sc.runs, _DEFAULT_COLUMNS["runs"]),
    }
