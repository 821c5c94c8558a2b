"""A slow, plain-Python reference of docs/compare.md (comparing runs), in exact arithmetic.

Written from docs/compare.md, not from the engine: rows are dicts, numbers
are `Fraction`s until the output, every loop is explicit. The property tests check that
the polars engine returns the same tables.
"""

from __future__ import annotations

import math
from collections import defaultdict
from fractions import Fraction
from typing import Any

from tests.reference_decide import decide

EPS = Fraction("1e-9")
Z = Fraction("1.96")
MDE = 2.801585  # z_.975 + z_.80 (docs/statistics.md#power)
Row = dict[str, Any]


def frac(x: float | None) -> Fraction | None:
    return None if x is None else Fraction(x)


def exceeds(x: Fraction | None, limit: float) -> bool:
    """x exceeds L ⇔ x > L + 1e-9; a missing x exceeds nothing."""
    return x is not None and x > Fraction(limit) + EPS


def out(x: Fraction | None) -> float | None:
    return None if x is None else float(x)


def mcnemar(n01: int, n10: int) -> Fraction:
    """min(1, 2·P(X <= min(n01, n10))), X ~ Binomial(n01 + n10, 1/2); 1 with no flips."""
    n = n01 + n10
    if n == 0:
        return Fraction(1)
    k = min(n01, n10)
    tail = Fraction(sum(math.comb(n, i) for i in range(k + 1)), 2**n)
    return min(Fraction(1), 2 * tail)


def status(
    b: Row | None,
    c: Row | None,
    b_score: Fraction | None,
    c_score: Fraction | None,
    limit: float,
    *,
    b_scored: bool,
    c_scored: bool,
    use_passed: bool,
) -> str:
    if b is None:
        return "new"
    if c is None:
        return "removed"
    if not b_scored or not c_scored:
        return "error"
    if use_passed:
        if b["passed"] and not c["passed"]:
            return "regression"
        if not b["passed"] and c["passed"]:
            return "improvement"
    if b_score is not None and c_score is not None:
        delta = c_score - b_score
        if exceeds(-delta, limit):
            return "regression"
        if exceeds(delta, limit):
            return "improvement"
    return "unchanged"


def unique_pairs(pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    seen: list[tuple[str, str]] = []
    for p in pairs:
        if tuple(p) not in seen:
            seen.append(tuple(p))
    return seen


def mean_and_se(values: list[Fraction]) -> tuple[Fraction | None, float | None]:
    """Exact mean, and sample SD / √n (None when n < 2)."""
    n = len(values)
    if n == 0:
        return None, None
    mean = sum(values, Fraction(0)) / n
    if n < 2:
        return mean, None
    var = sum(((v - mean) ** 2 for v in values), Fraction(0)) / (n - 1)
    return mean, math.sqrt(var / n)


def case_is_scored(row: Row) -> bool:
    return (row["scored"] or 0) > 0 and row["score"] is not None


def reference_compare(
    case_summary: list[Row],
    pairs: list[tuple[str, str]],
    limits: dict[str, dict[str, float]],
    run_summary: list[Row],
    evaluator_scores: list[Row] | None = None,
) -> dict[str, list[Row]]:
    """`limits`: config_id -> the four compare limits (max_pass_rate_drop, ...)."""
    config_ids = sorted(limits)
    pairs = unique_pairs(pairs)
    by_run: dict[tuple[str, str], dict[str, Row]] = defaultdict(dict)
    for row in case_summary:
        by_run[(row["config_id"], row["run_id"])][row["case_id"]] = row
    runs = {(r["config_id"], r["run_id"]): r for r in run_summary}

    case_rows: list[Row] = []
    run_rows: list[Row] = []
    for cid in config_ids:
        lim = limits[cid]
        for b_run, c_run in pairs:
            base, cand = by_run[(cid, b_run)], by_run[(cid, c_run)]
            counts = dict.fromkeys(
                ["new", "removed", "error", "regression", "improvement", "unchanged"], 0
            )
            paired: list[Fraction] = []
            pass_d: list[int] = []
            n01 = n10 = 0
            for case in sorted(set(base) | set(cand)):
                b, c = base.get(case), cand.get(case)
                bs = frac(b["score"]) if b else None
                cs = frac(c["score"]) if c else None
                st = status(
                    b,
                    c,
                    bs,
                    cs,
                    lim["case_delta"],
                    b_scored=b is not None and case_is_scored(b),
                    c_scored=c is not None and case_is_scored(c),
                    use_passed=True,
                )
                counts[st] += 1
                delta = cs - bs if bs is not None and cs is not None else None
                if b and c:
                    if case_is_scored(b) and case_is_scored(c):
                        paired.append(delta)
                    n01 += bool(b["passed"]) and not c["passed"]
                    n10 += (not b["passed"]) and bool(c["passed"])
                    if b["passed"] is not None and c["passed"] is not None:
                        pass_d.append(int(c["passed"]) - int(b["passed"]))
                row = {
                    "config_id": cid,
                    "baseline_run_id": b_run,
                    "candidate_run_id": c_run,
                    "case_id": case,
                }
                for side, r in (("baseline", b), ("candidate", c)):
                    for col in ("score", "passed", "pass_rate", "latency_mean"):
                        row[f"{side}_{col}"] = r[col] if r else None
                row["score_delta"] = out(delta)
                row["status"] = st
                case_rows.append(row)

            rb, rc = runs.get((cid, b_run), {}), runs.get((cid, c_run), {})
            run: Row = {"config_id": cid, "baseline_run_id": b_run, "candidate_run_id": c_run}
            deltas = {}
            for col, name in (
                ("pass_rate", "pass_rate_delta"),
                ("mean_score", "mean_score_delta"),
                ("latency_mean", "latency_mean_delta"),
                ("latency_p95", "latency_p95_delta"),
                ("cost_usd", "cost_delta"),
            ):
                x, y = frac(rb.get(col)), frac(rc.get(col))
                run[f"baseline_{col}"], run[f"candidate_{col}"] = out(x), out(y)
                deltas[col] = y - x if x is not None and y is not None else None
                run[name] = out(deltas[col])
            for st, n in counts.items():
                run[f"n_{st}"] = n
            n = len(paired)
            mean = sum(paired, Fraction(0)) / n if n else None
            se = None
            if n >= 2:
                var = sum(((d - mean) ** 2 for d in paired), Fraction(0)) / (n - 1)
                se = math.sqrt(var / n)
            run["n_paired"] = n
            run["mean_delta"] = out(mean)
            run["mean_delta_se"] = se
            run["mean_delta_ci_low"] = None if se is None else float(mean) - float(Z) * se
            run["mean_delta_ci_high"] = None if se is None else float(mean) + float(Z) * se
            run["n_passed_to_failed"], run["n_failed_to_passed"] = n01, n10
            run["mcnemar_p"] = float(mcnemar(n01, n10))
            pass_mean, pass_se = mean_and_se([Fraction(d) for d in pass_d])
            run["paired_pass_delta"] = out(pass_mean)
            run["paired_pass_delta_se"] = pass_se
            pass_high = None if pass_se is None else float(pass_mean) + float(Z) * pass_se
            run["paired_pass_delta_ci_low"] = (
                None if pass_se is None else float(pass_mean) - float(Z) * pass_se
            )
            run["paired_pass_delta_ci_high"] = pass_high
            run["mde_pass_rate"] = None if pass_se is None else MDE * pass_se
            run["mde_mean_score"] = None if se is None else MDE * se
            strict = bool(lim.get("require_significance", False))
            reasons = []
            pr = deltas["pass_rate"]
            significant = not strict or (pass_high is not None and pass_high < 0)
            if pr is not None and exceeds(-pr, lim["max_pass_rate_drop"]) and significant:
                reasons.append("pass_rate_drop")
            ms = deltas["mean_score"]
            mean_high = run["mean_delta_ci_high"]
            significant = not strict or (mean_high is not None and mean_high < 0)
            if ms is not None and exceeds(-ms, lim["max_mean_score_drop"]) and significant:
                reasons.append("mean_score_drop")
            lb = frac(rb.get("latency_mean"))
            lat = deltas["latency_mean"]
            if lat is not None and lb > 0 and exceeds(lat / lb, lim["max_latency_increase"]):
                reasons.append("latency_increase")
            run["reasons"] = reasons
            run["regression_detected"] = bool(reasons)
            run.update(
                decide(
                    run,
                    lim.get("pass_rate_margin", 0.05),
                    lim.get("mean_score_margin", 0.05),
                    lim["max_latency_increase"],
                )
            )
            run_rows.append(run)

    eval_rows: list[Row] = []
    if evaluator_scores is not None:
        values: dict[tuple, list[Fraction]] = defaultdict(list)
        keys: dict[tuple[str, str], set[tuple[str, str]]] = defaultdict(set)
        for r in evaluator_scores:
            if r["path"] == "":
                continue
            k = (r["config_id"], r["run_id"], r["case_id"], r["path"])
            values[k]  # the key exists even when every score is null
            keys[(r["config_id"], r["run_id"])].add((r["case_id"], r["path"]))
            if r["score"] is not None:
                values[k].append(Fraction(r["score"]))

        def mean_of(k: tuple) -> Fraction | None:
            xs = values[k]
            return sum(xs, Fraction(0)) / len(xs) if xs else None

        for cid in config_ids:
            for b_run, c_run in pairs:
                kb, kc = keys[(cid, b_run)], keys[(cid, c_run)]
                for case, path in sorted(kb | kc):
                    b = {} if (case, path) in kb else None
                    c = {} if (case, path) in kc else None
                    bs = mean_of((cid, b_run, case, path)) if b is not None else None
                    cs = mean_of((cid, c_run, case, path)) if c is not None else None
                    st = status(
                        b,
                        c,
                        bs,
                        cs,
                        limits[cid]["case_delta"],
                        b_scored=bs is not None,
                        c_scored=cs is not None,
                        use_passed=False,
                    )
                    eval_rows.append(
                        {
                            "config_id": cid,
                            "baseline_run_id": b_run,
                            "candidate_run_id": c_run,
                            "case_id": case,
                            "path": path,
                            "baseline_score": out(bs),
                            "candidate_score": out(cs),
                            "score_delta": out(cs - bs)
                            if bs is not None and cs is not None
                            else None,
                            "status": st,
                        }
                    )
    return {"case_deltas": case_rows, "evaluator_deltas": eval_rows, "run_deltas": run_rows}
