"""A slow, exact reference of the statistics of docs/statistics.md: pass@k / pass^k with
`math.comb` and `Fraction`, Benjamini–Hochberg and Holm by their definitions, slices by filtering
rows, variance components, the noise floor and the per-evaluator signed-rank tests.

Written from docs/statistics.md, not from the engine: plain loops over
dicts, exact arithmetic until the output.
"""

from __future__ import annotations

import math
from collections import defaultdict
from fractions import Fraction
from typing import Any

Row = dict[str, Any]
EPS = Fraction(1, 10**9)


def pass_at_k_case(n: int, c: int, k: int) -> Fraction | None:
    """1 − C(n−c, k)/C(n, k); None when n < k."""
    if n < k:
        return None
    return 1 - Fraction(math.comb(n - c, k), math.comb(n, k))


def pass_all_k_case(n: int, c: int, k: int) -> Fraction | None:
    """C(c, k)/C(n, k); None when n < k."""
    if n < k:
        return None
    return Fraction(math.comb(c, k), math.comb(n, k))


def mean_and_se(values: list[Fraction]) -> tuple[Fraction | None, float | None]:
    """Exact mean (None if empty) and sample SD / √G (None when G < 2)."""
    g = len(values)
    if g == 0:
        return None, None
    mean = sum(values, Fraction(0)) / g
    if g < 2:
        return mean, None
    var = sum(((v - mean) ** 2 for v in values), Fraction(0)) / (g - 1)
    return mean, math.sqrt(var / g)


def pass_k_columns(case_rows: list[Row], ks: list[int]) -> dict[str, Row]:
    """run_id -> {pass_at_<k>, pass_at_<k>_se, pass_all_<k>, pass_all_<k>_se} from
    case_summary rows (attempts n, n_passed c)."""
    by_run: dict[str, list[Row]] = defaultdict(list)
    for r in case_rows:
        by_run[r["run_id"]].append(r)
    out: dict[str, Row] = {}
    for run, rows in by_run.items():
        cols: Row = {}
        for k in ks:
            for name, fn in (("pass_at", pass_at_k_case), ("pass_all", pass_all_k_case)):
                vals = [fn(r["attempts"], r["n_passed"], k) for r in rows]
                mean, se = mean_and_se([v for v in vals if v is not None])
                cols[f"{name}_{k}"] = mean
                cols[f"{name}_{k}_se"] = se
        out[run] = cols
    return out


def bh_q_values(pvalues: list[Fraction | float]) -> list[Fraction]:
    """q_(i) = min_{j >= i} min(1, m·p_(j)/j) over the p-values sorted ascending, returned
    in input order (ties: the minimum over j >= i makes tied p-values equal)."""
    m = len(pvalues)
    ps = [Fraction(p) for p in pvalues]
    order = sorted(range(m), key=lambda i: ps[i])
    q = [Fraction(0)] * m
    for rank, i in enumerate(order, start=1):
        q[i] = min(min(Fraction(1), m * ps[order[j - 1]] / j) for j in range(rank, m + 1))
    return q


def slice_of(rows: list[Row], by: str) -> dict[str | None, list[Row]]:
    """Execution rows grouped by slice value: each distinct tag (none -> None) for
    by="tag", else the column's value as a string (None stays None)."""
    out: dict[str | None, list[Row]] = defaultdict(list)
    for r in rows:
        if by == "tag":
            tags = sorted(set(r.get("tags") or []))
            for t in tags or [None]:
                out[t].append(r)
        else:
            v = r.get(by)
            out[None if v is None else str(v)].append(r)
    return out


Z_975 = 1.959963984540054
"""The 0.975 quantile of the standard normal, to double precision (a literal here, so the
reference does not share the engine's NormalDist call)."""


def normal_cdf(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2))


def power(delta: float, se: float) -> float:
    """Power of the two-sided 5 % z-test to see a true change delta with standard error se:
    P(|Z + δ/se| > z_.975) = Φ(δ/se − z) + Φ(−δ/se − z); se = 0: 1 for δ ≠ 0, 0.05 at 0."""
    if se == 0:
        return 0.05 if delta == 0 else 1.0
    shift = abs(delta) / se
    return normal_cdf(shift - Z_975) + normal_cdf(-shift - Z_975)


def variance_components(exec_rows: list[Row]) -> list[Row]:
    """One row per (config, run, measure) of docs/statistics.md#variance-components, by the
    one-way ANOVA formulas in exact arithmetic (scored executions only)."""
    groups: dict[tuple, dict[str, list[Fraction]]] = defaultdict(lambda: defaultdict(list))
    for r in exec_rows:
        if r["score"] is None:
            continue
        for measure, value in (("score", Fraction(r["score"])), ("passed", Fraction(r["passed"]))):
            groups[(r["config_id"], r["run_id"], measure)][r["case_id"]].append(value)
    out = []
    for (config_id, run_id, measure), cases in sorted(groups.items()):
        a = len(cases)
        n = sum(len(v) for v in cases.values())
        row: Row = {
            "config_id": config_id,
            "run_id": run_id,
            "measure": measure,
            "cases": a,
            "values": n,
            "mean_attempts": Fraction(n, a),
            "var_within": None,
            "var_between": None,
            "icc": None,
        }
        if a >= 2 and n - a >= 1:
            grand = sum(sum(v) for v in cases.values()) / n
            means = {c: sum(v) / len(v) for c, v in cases.items()}
            msb = sum(len(v) * (means[c] - grand) ** 2 for c, v in cases.items()) / (a - 1)
            msw = sum((y - means[c]) ** 2 for c, v in cases.items() for y in v) / (n - a)
            n0 = (n - Fraction(sum(len(v) ** 2 for v in cases.values()), n)) / (a - 1)
            between = max(Fraction(0), (msb - msw) / n0)
            row["var_within"], row["var_between"] = msw, between
            row["icc"] = between / (between + msw) if between + msw > 0 else None
        out.append(row)
    return out


def noise_floor(case_rows: list[Row], group_of: dict[tuple[str, str], str]) -> list[Row]:
    """docs/statistics.md#noise-floor by its definition: every unordered pair of runs of a
    replicate group, exact arithmetic. `group_of`: (config_id, run_id) -> group."""
    cases: dict[tuple, dict[str, Row]] = defaultdict(dict)
    members: dict[tuple[str, str], set[str]] = defaultdict(set)
    for (config_id, run_id), group in group_of.items():
        members[(config_id, group)].add(run_id)
    for r in case_rows:
        if r["passed"] is not None:
            cases[(r["config_id"], r["run_id"])][r["case_id"]] = r
    out = []
    for (config_id, group), runs in sorted(members.items()):
        if len(runs) < 2:
            continue
        dps, dss, flips, shared_total = [], [], 0, 0
        for i in sorted(runs):
            for j in sorted(runs):
                if not i < j:
                    continue
                a, b = cases[(config_id, i)], cases[(config_id, j)]
                shared = sorted(set(a) & set(b))
                if not shared:
                    continue
                dps.append(
                    Fraction(
                        sum(b[c]["passed"] for c in shared) - sum(a[c]["passed"] for c in shared),
                        len(shared),
                    )
                )
                both = [
                    c for c in shared if a[c]["score"] is not None and b[c]["score"] is not None
                ]
                if both:
                    mean_b = sum(Fraction(b[c]["score"]) for c in both) / len(both)
                    mean_a = sum(Fraction(a[c]["score"]) for c in both) / len(both)
                    dss.append(mean_b - mean_a)
                flips += sum(a[c]["passed"] != b[c]["passed"] for c in shared)
                shared_total += len(shared)
        out.append(
            {
                "config_id": config_id,
                "replicate_group": group,
                "runs": len(runs),
                "pairs": len(dps),
                "shared_cases": shared_total,
                "rms_pass_rate_delta": math.sqrt(sum(d * d for d in dps) / len(dps))
                if dps
                else None,
                "rms_mean_score_delta": math.sqrt(sum(d * d for d in dss) / len(dss))
                if dss
                else None,
                "flip_rate": Fraction(flips, shared_total) if shared_total else None,
            }
        )
    return out


def holm(pvalues: list[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the input order."""
    order = sorted(range(len(pvalues)), key=lambda i: pvalues[i])
    m, running, out = len(pvalues), 0.0, [0.0] * len(pvalues)
    for k, i in enumerate(order, start=1):
        running = max(running, min(1.0, (m - k + 1) * pvalues[i]))
        out[i] = running
    return out


def signed_rank(d: list[Fraction]) -> tuple[int, float | None]:
    """n_nonzero and the Wilcoxon z of the paired differences d (ties within EPS chained,
    average ranks, tie-corrected variance, no continuity correction)."""
    nonzero = sorted((x for x in d if abs(x) > EPS), key=abs)
    n = len(nonzero)
    if n == 0:
        return 0, None
    groups: list[list[Fraction]] = []
    for x in nonzero:
        if groups and abs(x) - abs(groups[-1][-1]) <= EPS:
            groups[-1].append(x)
        else:
            groups.append([x])
    w_plus, ties, start = Fraction(0), Fraction(0), 1
    for g in groups:
        t = len(g)
        rank = Fraction(2 * start + t - 1, 2)
        w_plus += rank * sum(1 for x in g if x > 0)
        ties += Fraction(t**3 - t, 48)
        start += t
    var = Fraction(n * (n + 1) * (2 * n + 1), 24) - ties
    return n, float(w_plus - Fraction(n * (n + 1), 4)) / math.sqrt(var)


def evaluator_tests(rows: list[Row]) -> list[Row]:
    """evaluator_tests from evaluator_deltas rows (dicts with config_id, baseline_run_id,
    candidate_run_id, path, baseline_score, candidate_score), leaves only."""
    paths = {r["path"] for r in rows}
    leaves = {p for p in paths if not any(o.startswith(p + "/") for o in paths)}
    ds: dict[tuple, list[Fraction]] = defaultdict(list)
    for r in rows:
        b, c = r["baseline_score"], r["candidate_score"]
        if r["path"] in leaves and b is not None and c is not None:
            key = (r["config_id"], r["baseline_run_id"], r["candidate_run_id"], r["path"])
            ds[key].append(Fraction(c) - Fraction(b))
    out = []
    for key, d in sorted(ds.items()):
        n = len(d)
        mean = sum(d) / n
        var = sum((x - mean) ** 2 for x in d) / (n - 1) if n >= 2 else None
        d_z = None if var is None or var <= EPS * EPS else float(mean) / math.sqrt(var)
        n_nonzero, z = signed_rank(d)
        p = None if z is None else 2 * (1 - normal_cdf(abs(z)))
        names = ("config_id", "baseline_run_id", "candidate_run_id", "path")
        out.append({**dict(zip(names, key, strict=True)), "n_cases": n, "mean_delta": float(mean)})
        out[-1].update(d_z=d_z, n_nonzero=n_nonzero, wilcoxon_z=z, p_value=p)
    by_pair: dict[tuple, list[Row]] = defaultdict(list)
    for r in out:
        if r["p_value"] is not None:
            by_pair[(r["config_id"], r["baseline_run_id"], r["candidate_run_id"])].append(r)
    for r in out:
        r["p_holm"] = None
    for group in by_pair.values():
        for r, q in zip(group, holm([r["p_value"] for r in group]), strict=True):
            r["p_holm"] = q
    return out
