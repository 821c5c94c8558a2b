"""A slow, exact reference of the statistics of docs/statistics.md: pass@k / pass^k with
`math.comb` and `Fraction`, Benjamini–Hochberg and Holm by their definitions, slices by filtering
rows, variance components, the noise floor and the per-evaluator signed-rank tests.

Written from docs/statistics.md, not from the engine: plain loops over
dicts, exact arithmetic until the output.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
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


def _solve(a: list[list[float]], v: list[float]) -> list[float]:
    """x with a x = v, Gaussian elimination with partial pivoting."""
    n = len(v)
    m = [[*row, v[i]] for i, row in enumerate(a)]
    for k in range(n):
        pivot = max(range(k, n), key=lambda i: abs(m[i][k]))
        m[k], m[pivot] = m[pivot], m[k]
        for i in range(k + 1, n):
            f = m[i][k] / m[k][k]
            for j in range(k, n + 1):
                m[i][j] -= f * m[k][j]
    x = [0.0] * n
    for i in reversed(range(n)):
        x[i] = (m[i][n] - sum(m[i][j] * x[j] for j in range(i + 1, n))) / m[i][i]
    return x


def rasch(cells: dict[tuple[str, str], int], lam: float = 0.1) -> tuple[dict, dict]:
    """θ_r and b_c of the penalized Rasch fit by full Newton steps to a gradient of 1e-12."""
    runs = sorted({r for r, _ in cells})
    cases = sorted({c for _, c in cells})
    theta = dict.fromkeys(runs, 0.0)
    b = dict.fromkeys(cases, 0.0)
    for _ in range(200):
        p = {k: 1 / (1 + math.exp(-(theta[k[0]] - b[k[1]]))) for k in cells}
        grad = [sum(cells[k] - p[k] for k in cells if k[0] == r) - lam * theta[r] for r in runs]
        grad += [-sum(cells[k] - p[k] for k in cells if k[1] == c) - lam * b[c] for c in cases]
        if max((abs(g) for g in grad), default=0.0) < 1e-12:
            break
        n = len(runs) + len(cases)
        h = [[0.0] * n for _ in range(n)]  # the negative Hessian
        index = {("r", r): i for i, r in enumerate(runs)}
        index |= {("c", c): len(runs) + i for i, c in enumerate(cases)}
        for (r, c), pk in p.items():
            w = pk * (1 - pk)
            i, j = index[("r", r)], index[("c", c)]
            h[i][i] += w
            h[j][j] += w
            h[i][j] -= w
            h[j][i] -= w
        for i in range(n):
            h[i][i] += lam
        step = _solve(h, grad)
        for r in runs:
            theta[r] += step[index[("r", r)]]
        for c in cases:
            b[c] += step[index[("c", c)]]
    return theta, b


def _pearson(x: list[Fraction], y: list[Fraction]) -> float | None:
    if len(set(x)) < 2 or len(set(y)) < 2:
        return None
    mx, my = sum(x) / len(x), sum(y) / len(y)
    sxy = sum((a - mx) * (c - my) for a, c in zip(x, y, strict=True))
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((c - my) ** 2 for c in y)
    return float(sxy) / math.sqrt(float(sxx) * float(syy))


def case_difficulty(y: dict[tuple[str, str], int]) -> tuple[dict[str, Row], dict[str, Row]]:
    """(per case, per run) rows of one series: y maps (run, case) to passed as 0/1."""
    cases = {c: {"runs": 0, "passes": 0, "flag": None} for _, c in y}
    runs = {r: {"cases": 0, "flag": None} for r, _ in y}
    for (r, c), v in y.items():
        cases[c]["runs"] += 1
        cases[c]["passes"] += v
        runs[r]["cases"] += 1
    left = dict(y)
    while True:
        gone = {}
        for axis, rows in ((1, cases), (0, runs)):
            values: dict[str, list[int]] = defaultdict(list)
            for k, v in left.items():
                values[k[axis]].append(v)
            for key, vs in values.items():
                if all(vs) or not any(vs):
                    rows[key]["flag"] = "always_passes" if all(vs) else "never_passes"
                    gone[(axis, key)] = True
        if not gone:
            break
        left = {k: v for k, v in left.items() if (1, k[1]) not in gone and (0, k[0]) not in gone}
    theta, b = rasch(left)
    for r, t in theta.items():
        w = [p * (1 - p) for p in (1 / (1 + math.exp(b[c] - t)) for (rr, c) in left if rr == r)]
        runs[r].update(ability=t, ability_se=1 / math.sqrt(sum(w) + 0.1))
    n_run = Counter(r for r, _ in left)
    s_run: dict[str, int] = defaultdict(int)
    for (r, _), v in left.items():
        s_run[r] += v
    for c, d in b.items():
        w = [p * (1 - p) for p in (1 / (1 + math.exp(d - theta[r])) for (r, cc) in left if cc == c)]
        pairs = [
            (Fraction(v), Fraction(s_run[r] - v, n_run[r] - 1))
            for (r, cc), v in left.items()
            if cc == c and n_run[r] >= 2
        ]
        disc = _pearson([p[0] for p in pairs], [p[1] for p in pairs])
        cases[c].update(difficulty=d, difficulty_se=1 / math.sqrt(sum(w) + 0.1))
        cases[c]["discrimination"] = disc
        if disc is not None and disc < 0 and cases[c]["runs"] >= 5:
            cases[c]["flag"] = "negative_discrimination"
    for row in cases.values():
        for k in ("difficulty", "difficulty_se", "discrimination"):
            row.setdefault(k, None)
    for row in runs.values():
        row.setdefault("ability", None)
        row.setdefault("ability_se", None)
    return cases, runs
