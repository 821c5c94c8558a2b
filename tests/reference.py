"""A slow, independent reference implementation of the scoring rules in docs/scoring.md.

Plain Python over lists of dicts, exact arithmetic with `fractions.Fraction`, one
execution at a time, the evaluator tree evaluated by recursion. It is written from
docs/scoring.md, docs/tables.md and docs/config.md, not from the engine, so that the property tests
in `test_reference_properties.py` compare two independent readings of the same rules.

Inputs are rows as plain dicts, as they would be written to the input tables; optional
columns may be absent or None and get the defaults of docs/tables.md#input-tables (attempt 0,
scale_max 1.0, status "ok").
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from evalframe._private.config import Config, Evaluator

EPS = Fraction(1, 10**9)
ROOT = ""
SEP = "/"


def meets(x: Fraction, b: Fraction) -> bool:
    """x meets boundary b: x >= b - EPS."""
    return x >= b - EPS


def frac(x: Any) -> Fraction | None:
    return None if x is None else Fraction(x)


# --- input normalization ---------------------------------------------------------------


def _key(row: dict) -> tuple[str, str, int]:
    attempt = row.get("attempt")
    return (row["run_id"], row["case_id"], 0 if attempt is None else int(attempt))


def _scale_max(row: dict) -> Fraction:
    sm = row.get("scale_max")
    return Fraction(1) if sm is None else Fraction(sm)


def _status(row: dict) -> str:
    st = row.get("status")
    return "ok" if st is None else st


# --- the evaluator tree ----------------------------------------------------------------


@dataclass
class Node:
    name: str
    path: str
    spec: Evaluator | None  # None for the root and for flat (data-derived) leaves
    children: list[Node] = field(default_factory=list)
    aggregator: str | None = None  # None for leaves
    required_children: tuple[str, ...] = ()

    @property
    def is_leaf(self) -> bool:
        return self.aggregator is None

    def walk(self):
        yield self
        for child in self.children:
            yield from child.walk()

    def leaves(self) -> list[Node]:
        return [n for n in self.walk() if n.is_leaf]


def _join(parent: str, name: str) -> str:
    return name if parent == ROOT else parent + SEP + name


def _build_entries(entries: dict[str, Evaluator], parent: str) -> list[Node]:
    out = []
    for name, spec in entries.items():
        path = _join(parent, name)
        if spec.is_composite:
            node = Node(
                name=name,
                path=path,
                spec=spec,
                children=_build_entries(spec.children or {}, path),
                aggregator=spec.effective_aggregator,
                required_children=tuple(spec.required_children),
            )
        else:
            node = Node(name=name, path=path, spec=spec)
        out.append(node)
    return out


def build_tree(config: Config, scores: list[dict]) -> Node:
    """The config's tree, or (without `evaluators`) a flat tree over the data evaluators."""
    if config.evaluators is not None:
        children = _build_entries(config.evaluators, ROOT)
    else:
        names = sorted({row["evaluator"] for row in scores})
        children = [Node(name=n, path=n, spec=None) for n in names]
    return Node(
        name=ROOT,
        path=ROOT,
        spec=None,
        children=children,
        aggregator=config.aggregator,
        required_children=tuple(config.required_children),
    )


def leaf_matcher(root: Node, flat: bool):
    """Return evaluator-name -> leaf path (None when the row matches no leaf)."""
    leaves = root.leaves()
    by_path = {leaf.path: leaf.path for leaf in leaves}
    if flat:
        return lambda ev: by_path.get(ev)
    name_count: dict[str, int] = defaultdict(int)
    for leaf in leaves:
        name_count[leaf.name] += 1
    by_name = {leaf.name: leaf.path for leaf in leaves if name_count[leaf.name] == 1}

    def match(ev: str) -> str | None:
        if ev in by_path:
            return by_path[ev]
        return by_name.get(ev)

    return match


# --- evaluating one execution ----------------------------------------------------------


@dataclass
class Result:
    path: str
    score: Fraction | None
    passed: bool
    missing: bool
    weight: Fraction
    children_passed: int | None = None
    children_present: int | None = None
    gate_fired: bool = False  # required gate or safety gate fired (composites)
    raw_score: Fraction | None = None  # leaves: the matched row's raw score
    score_label: str | None = None  # leaves with score_ranges

    @property
    def present(self) -> bool:
        return self.score is not None


@dataclass
class Ctx:
    rows: dict[str, dict]  # leaf path -> matched score row
    expected: set[str]  # leaf paths expected for this execution
    on_missing: str
    T: Fraction
    out: list[Result]


def _wavg(items: list[Result]) -> Fraction:
    total_w = sum((r.weight for r in items), Fraction(0))
    if total_w == 0:
        return Fraction(0)
    return sum((r.weight * r.score for r in items), Fraction(0)) / total_w


def _boundary(node: Node, T: Fraction) -> Fraction:
    if node.spec is not None and node.spec.min_score is not None:
        return Fraction(node.spec.min_score)
    return T


def _config_weight(node: Node) -> Fraction | None:
    if node.spec is not None and node.spec.weight is not None:
        return Fraction(node.spec.weight)
    return None


def _eval_leaf(node: Node, ctx: Ctx) -> Result:
    row = ctx.rows.get(node.path)
    weight = _config_weight(node)
    if weight is None:
        data_w = None if row is None else row.get("weight")
        weight = Fraction(1) if data_w is None else Fraction(data_w)
    s = None
    if row is not None and row.get("score") is not None:
        s = normalized(node, row)
    missing = node.path in ctx.expected and s is None
    if s is None:
        if missing and ctx.on_missing == "zero":
            return Result(node.path, Fraction(0), False, True, weight)
        return Result(node.path, None, False, missing, weight)
    raw = Fraction(row["score"])
    passed = meets(s, _boundary(node, ctx.T))
    return Result(node.path, s, passed, False, weight, raw_score=raw, score_label=_label(node, raw))


def normalized(node: Node, row: dict) -> Fraction:
    """docs/scoring.md#one-scale: s = score / scale_max, or 1 - score / scale_max for a leaf whose
    config entry says `higher_is_better: false` (flat data-derived leaves: higher)."""
    ratio = Fraction(row["score"]) / _scale_max(row)
    lower = node.spec is not None and not node.spec.higher_is_better
    return 1 - ratio if lower else ratio


def _label(node: Node, raw: Fraction) -> str | None:
    """The label of the first band (config order) with lo <= raw <= hi."""
    ranges = None if node.spec is None else node.spec.score_ranges
    for key, label in (ranges or {}).items():
        lo, hi = (Fraction(float(part)) for part in key.split("-", 1))
        if lo <= raw <= hi:
            return label
    return None


def _eval(node: Node, ctx: Ctx, is_root: bool = False) -> Result:
    if node.is_leaf:
        res = _eval_leaf(node, ctx)
        ctx.out.append(res)
        return res
    kids = [(child, _eval(child, ctx)) for child in node.children]
    cfg_w = None if is_root else _config_weight(node)
    weight = Fraction(1) if cfg_w is None else cfg_w
    agg = node.aggregator
    present = [(c, r) for c, r in kids if r.present]
    res = Result(node.path, None, False, True, weight)
    if agg == "threshold":
        res.children_present = len(present)
        res.children_passed = sum(1 for _, r in present if r.passed)
    if not present:
        ctx.out.append(res)
        return res
    res.missing = False
    P = [r for _, r in present]
    t = T = ctx.T
    if not is_root and node.spec is not None and node.spec.threshold is not None:
        t = Fraction(node.spec.threshold)
    boundary = T if is_root else _boundary(node, T)
    gate_held = True
    if agg == "weighted_average":
        score = _wavg(P)
    elif agg == "minimum":
        score = min(r.score for r in P)
    elif agg == "maximum":
        score = max(r.score for r in P)
    elif agg == "all_or_nothing":
        score = _wavg(P) if all(meets(r.score, t) for r in P) else Fraction(0)
    elif agg == "safety_gate":
        R = set(node.required_children)
        gate_held = all(r.present and r.passed for c, r in kids if c.name in R)
        if not gate_held:
            score = Fraction(0)
        else:
            rest = [r for c, r in present if c.name not in R]
            score = _wavg(rest) if rest else _wavg(P)
    elif agg == "threshold":
        score = Fraction(res.children_passed, res.children_present)
    else:  # pragma: no cover
        raise ValueError(f"unknown aggregator {agg}")
    if agg == "threshold":
        passed = meets(score, t)
    elif agg == "safety_gate":
        passed = gate_held and meets(score, boundary)
    else:
        passed = meets(score, boundary)
    required_gate = any(
        c.spec is not None and c.spec.required and not (r.present and r.passed) for c, r in kids
    )
    if required_gate:
        score, passed = Fraction(0), False
    res.score = score
    res.passed = passed
    res.gate_fired = required_gate or not gate_held
    ctx.out.append(res)
    return res


# --- the public functions ----------------------------------------------------------------


def _resolve_threshold(config: Config, ex_row: dict | None) -> Fraction:
    if config.threshold_override is not None:
        return Fraction(config.threshold_override)
    if ex_row is not None and ex_row.get("threshold") is not None:
        return Fraction(ex_row["threshold"])
    return Fraction(config.threshold)


def _executions(scores: list[dict], executions: list[dict] | None) -> dict[tuple, dict]:
    if executions is None:
        return {k: {"status": "ok"} for k in {_key(r) for r in scores}}
    return {_key(r): r for r in executions}


def _score_all(
    scores: list[dict],
    executions: list[dict] | None,
    outcomes: list[dict] | None,
    config: Config,
) -> tuple[list[dict], list[dict]]:
    flat = config.evaluators is None
    root = build_tree(config, scores)
    match = leaf_matcher(root, flat)
    all_leaves = {leaf.path for leaf in root.leaves()}
    run_evaluators: dict[str, set[str]] = defaultdict(set)
    rows_by_exec: dict[tuple, list[dict]] = defaultdict(list)
    for r in scores:
        run_evaluators[r["run_id"]].add(r["evaluator"])
        rows_by_exec[_key(r)].append(r)
    outcomes_by_exec: dict[tuple, list[bool]] = defaultdict(list)
    for o in outcomes or []:
        outcomes_by_exec[_key(o)].append(bool(o["passed"]))
    T_bl = None if config.borderline is None else Fraction(config.borderline)
    cfg_id = config.config_id

    ex_out: list[dict] = []
    ev_out: list[dict] = []
    for key, ex in _executions(scores, executions).items():
        run_id, case_id, attempt = key
        T = _resolve_threshold(config, ex)
        outs = outcomes_by_exec.get(key, [])
        row = {
            "run_id": run_id,
            "case_id": case_id,
            "attempt": attempt,
            "config_id": cfg_id,
            "status": _status(ex),
            "threshold": T,
            "score": None,
            "verdict": "error",
            "passed": False,
            "required_failed": False,
            "judge_error": False,
            "n_missing": 0,
            "n_ignored": 0,
            "outcomes_total": len(outs),
            "outcomes_passed": sum(outs),
            "latency_ms": ex.get("latency_ms"),
            "cost_usd": ex.get("cost_usd"),
            "input_tokens": ex.get("input_tokens"),
            "output_tokens": ex.get("output_tokens"),
        }
        ex_out.append(row)
        if row["status"] == "error":
            continue

        expected = all_leaves if not flat else (run_evaluators[run_id] & all_leaves)
        matched: dict[str, dict] = {}
        n_ignored = 0
        for r in rows_by_exec.get(key, []):
            path = match(r["evaluator"])
            if path is None:
                n_ignored += 1
                continue
            assert path not in matched, f"two rows match leaf {path!r} for {key}"
            matched[path] = r
        row["n_ignored"] = n_ignored
        unscored = not matched
        ctx = Ctx(matched, expected, config.on_missing, T, [])
        root_res = _eval(root, ctx, is_root=True)
        leaf_results = [r for r in ctx.out if r.path in all_leaves]
        n_missing = sum(1 for r in leaf_results if r.missing)
        row["n_missing"] = n_missing

        if unscored:
            score = None
        else:
            row["required_failed"] = root_res.gate_fired
            row["judge_error"] = config.on_missing == "fail" and n_missing > 0
            score = Fraction(0) if row["judge_error"] else root_res.score
            for r in ctx.out:
                if r.path in all_leaves and r.path not in expected:
                    # a flat tree's leaf that this run never scored: not part of the
                    # run's tree, no row (docs are silent; the engine does the same)
                    continue
                ev_out.append(
                    {
                        "run_id": run_id,
                        "case_id": case_id,
                        "attempt": attempt,
                        "config_id": cfg_id,
                        "path": r.path,
                        "score": r.score,
                        "passed": r.passed,
                        "missing": r.missing,
                        "children_passed": r.children_passed,
                        "children_present": r.children_present,
                        "weight": r.weight,
                        "raw_score": r.raw_score,
                        "score_label": r.score_label,
                        "is_leaf": r.path in all_leaves,
                        "depth": 0 if r.path == ROOT else r.path.count(SEP) + 1,
                        "parent": None if r.path == ROOT else r.path.rpartition(SEP)[0],
                    }
                )
        row["score"] = score

        if score is None:
            verdict = "unscored"
        elif row["judge_error"] or row["required_failed"]:
            verdict = "fail"
        elif meets(score, T):
            verdict = "pass"
        elif T_bl is not None and meets(score, T_bl):
            verdict = "borderline"
        else:
            verdict = "fail"
        row["verdict"] = verdict

        if row["judge_error"]:
            passed = False
        elif config.outcomes == "gate":
            passed = all(outs) if outs else verdict == "pass"
        elif config.outcomes == "ignore":
            passed = verdict == "pass"
        else:  # both
            passed = verdict == "pass" and all(outs)
        row["passed"] = passed
    return ex_out, ev_out


def execution_scores(
    scores: list[dict],
    executions: list[dict] | None,
    outcomes: list[dict] | None,
    config: Config,
) -> list[dict]:
    """One row per execution (docs/scoring.md "The execution")."""
    return _score_all(scores, executions, outcomes, config)[0]


def evaluator_scores(
    scores: list[dict],
    executions: list[dict] | None,
    outcomes: list[dict] | None,
    config: Config,
) -> list[dict]:
    """One row per scored ok execution x tree node, the root included as path ""."""
    return _score_all(scores, executions, outcomes, config)[1]


# --- summaries ---------------------------------------------------------------------------


def _mean(values: list[Fraction]) -> Fraction | None:
    return sum(values, Fraction(0)) / len(values) if values else None


def _sum_or_none(values: list) -> Fraction | None:
    vals = [Fraction(v) for v in values if v is not None]
    return sum(vals, Fraction(0)) if vals else None


def case_summary(exec_rows: list[dict], config: Config) -> list[dict]:
    """One row per run x case (docs/scoring.md#cases "Cases")."""
    groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for r in exec_rows:
        groups[(r["run_id"], r["case_id"])].append(r)
    out = []
    for (run_id, case_id), rows in sorted(groups.items()):
        attempts = len(rows)
        scores = [Fraction(r["score"]) for r in rows if r["score"] is not None]
        n_passed = sum(1 for r in rows if r["passed"])
        how = config.attempts.score
        if not scores:
            score = None
        elif how == "mean":
            score = _mean(scores)
        elif how == "min":
            score = min(scores)
        else:
            score = max(scores)
        rule = config.attempts.passed
        if rule == "all":
            passed = n_passed == attempts
        elif rule == "any":
            passed = n_passed >= 1
        else:
            passed = 2 * n_passed > attempts
        lat = [Fraction(r["latency_ms"]) for r in rows if r.get("latency_ms") is not None]
        out.append(
            {
                "run_id": run_id,
                "case_id": case_id,
                "config_id": config.config_id,
                "attempts": attempts,
                "errored": sum(1 for r in rows if r["status"] == "error"),
                "scored": len(scores),
                "unscored": sum(1 for r in rows if r["status"] == "ok" and r["score"] is None),
                "score": score,
                "n_passed": n_passed,
                "pass_rate": Fraction(n_passed, attempts),
                "passed": passed,
                "flaky": 0 < n_passed < attempts,
                "latency_mean": _mean(lat),
                "cost_usd": _sum_or_none([r.get("cost_usd") for r in rows]),
            }
        )
    return out


def _quantile(sorted_vals: list[Fraction], q: Fraction) -> Fraction | None:
    """Linear interpolation between closest ranks (quantile_cont)."""
    if not sorted_vals:
        return None
    pos = q * (len(sorted_vals) - 1)
    lo = math.floor(pos)
    hi = math.ceil(pos)
    frac_part = pos - lo
    return sorted_vals[lo] + (sorted_vals[hi] - sorted_vals[lo]) * frac_part


def clustered_se(values: list[tuple[str, Fraction]]) -> float | None:
    """sqrt(G/(G-1) * sum_c (sum_{i in c} (x_i - mean))^2) / n, null when G < 2."""
    n = len(values)
    clusters: dict[str, list[Fraction]] = defaultdict(list)
    for case, x in values:
        clusters[case].append(x)
    G = len(clusters)
    if G < 2:
        return None
    mean = sum((x for _, x in values), Fraction(0)) / n
    ss = sum((sum((x - mean for x in xs), Fraction(0)) ** 2 for xs in clusters.values()), 0)
    inner = Fraction(G, G - 1) * ss
    return math.sqrt(float(inner)) / n


def pass_rate_lower(p: Fraction | None, se: float | None, cases: int) -> float | None:
    """The Wilson lower bound (z = 1.96) of p over n_eff = p(1 − p)/se² (at least 1) when
    se > 0 and 0 < p < 1, else the cases (docs/statistics.md#gate-on-a-bound)."""
    if p is None:
        return None
    informative = se is not None and se > 0 and 0 < p < 1
    n = max(1.0, float(p * (1 - p)) / (se * se)) if informative else float(cases)  # type: ignore[operator]
    if n <= 0:
        return None
    z, q = 1.96, float(p)
    centre = (q + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(q * (1 - q) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return min(1.0, max(0.0, centre - half))


def run_summary(
    exec_rows: list[dict], config: Config, runs: list[dict] | None = None
) -> list[dict]:
    """One row per run (docs/scoring.md#runs "Runs")."""
    by_run: dict[str, list[dict]] = defaultdict(list)
    for r in exec_rows:
        by_run[r["run_id"]].append(r)
    run_ids = set(by_run) | {r["run_id"] for r in runs or []}
    cases_by_run: dict[str, list[dict]] = defaultdict(list)
    for c in case_summary(exec_rows, config):
        cases_by_run[c["run_id"]].append(c)
    run_meta = {r["run_id"]: {k: v for k, v in r.items() if k != "run_id"} for r in runs or []}
    meta_columns = sorted({k for meta in run_meta.values() for k in meta})
    gate_score = Fraction(config.run_gates.min_mean_score)
    gate_rate = Fraction(config.run_gates.min_pass_rate)
    out = []
    for run_id in sorted(run_ids):
        rows = by_run.get(run_id, [])
        cases = cases_by_run.get(run_id, [])
        n = len(rows)
        passed = sum(1 for r in rows if r["passed"])
        errored = sum(1 for r in rows if r["status"] == "error")
        unscored = sum(1 for r in rows if r["status"] == "ok" and r["score"] is None)
        failed = sum(
            1 for r in rows if not r["passed"] and r["status"] != "error" and r["score"] is not None
        )
        scored = [(r["case_id"], Fraction(r["score"])) for r in rows if r["score"] is not None]
        pass_rate = Fraction(passed, n) if n else None
        mean_score = _mean([x for _, x in scored])
        lat = sorted(Fraction(r["latency_ms"]) for r in rows if r.get("latency_ms") is not None)
        mean_gate = mean_score is not None and meets(mean_score, gate_score)
        rate_gate = pass_rate is not None and meets(pass_rate, gate_rate)
        pass_se = clustered_se([(r["case_id"], Fraction(int(r["passed"]))) for r in rows])
        lower = pass_rate_lower(pass_rate, pass_se, len(cases))
        bound = config.run_gates.min_pass_rate_lower
        bound_gate = bound is None or (
            lower is not None and meets(Fraction(lower), Fraction(bound))
        )
        gates = {"min_mean_score": mean_gate, "min_pass_rate": rate_gate}
        gates["min_pass_rate_lower"] = bound_gate
        out.append(
            {
                "run_id": run_id,
                "config_id": config.config_id,
                "executions": n,
                "cases": len(cases),
                "passed": passed,
                "failed": failed,
                "errored": errored,
                "unscored": unscored,
                "n_pass": sum(1 for r in rows if r["verdict"] == "pass"),
                "n_borderline": sum(1 for r in rows if r["verdict"] == "borderline"),
                "n_fail": sum(1 for r in rows if r["verdict"] == "fail"),
                "pass_rate": pass_rate,
                "mean_score": mean_score,
                "case_pass_rate": (
                    Fraction(sum(1 for c in cases if c["passed"]), len(cases)) if cases else None
                ),
                "pass_rate_se": pass_se,
                "mean_score_se": clustered_se(scored),
                "latency_mean": _mean(lat),
                "latency_p50": _quantile(lat, Fraction(1, 2)),
                "latency_p95": _quantile(lat, Fraction(95, 100)),
                "latency_max": lat[-1] if lat else None,
                "cost_usd": _sum_or_none([r.get("cost_usd") for r in rows]),
                "input_tokens": _sum_or_none([r.get("input_tokens") for r in rows]),
                "output_tokens": _sum_or_none([r.get("output_tokens") for r in rows]),
                "min_mean_score": gate_score,
                "min_pass_rate": gate_rate,
                "mean_score_gate": mean_gate,
                "pass_rate_gate": rate_gate,
                "min_pass_rate_lower": bound,
                "pass_rate_lower": lower,
                "pass_rate_lower_gate": bound_gate,
                "run_passed": all(gates.values()),
                "run_gate_failures": [key for key, held in gates.items() if not held],
                **{k: run_meta.get(run_id, {}).get(k) for k in meta_columns},
            }
        )
    return out
