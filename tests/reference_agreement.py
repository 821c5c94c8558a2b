"""A slow, exact reference for docs/judges.md (judges measured against human labels).

Plain Python over lists of dicts, `fractions.Fraction` everywhere a count becomes a rate,
one group at a time: Cohen's κ from its textbook form (p_o − p_e)/(1 − p_e), Krippendorff's
α from the coincidence matrix (D_o / D_e), the prediction-powered pass rate from its
definition (two sample means and variances), the agreement curve by trying every
threshold. Written from docs/judges.md, not from the engine. The execution rows (status,
verdict, passed, threshold) come from the scoring reference (tests/reference.py).

Normalized scores are the floats score / scale_max (the number the tables hold), read as
exact fractions; "s meets t" is s ≥ t − EPS with EPS = 10⁻⁹ exactly.
"""

from __future__ import annotations

import math
from collections import defaultdict
from fractions import Fraction
from typing import Any

from evalframe._private.config import Config
from evalframe._private.rules.constants import Z_95
from tests import reference as ref

EPS = ref.EPS


def _key(row: dict) -> tuple[str, str, int]:
    return ref._key(row)


def _s(score: float | None, scale: float | None) -> Fraction | None:
    """The normalized score as the float score / scale, read exactly."""
    if score is None or scale is None:
        return None
    return Fraction(score / scale)


def _leaves(config: Config, scores: list[dict]) -> dict[str, Fraction | None]:
    """Data evaluator value -> the min_score of the leaf it names (None: the execution
    threshold), for the values that name a leaf."""
    root = ref.build_tree(config, scores)
    leaves = {leaf.path: leaf for leaf in root.leaves()}
    match = ref.leaf_matcher(root, config.evaluators is None)
    names = {row["evaluator"] for row in scores}
    out: dict[str, Fraction | None] = {}
    candidates = names | set(leaves) | {leaf.name for leaf in leaves.values()}
    for name in candidates:
        path = match(name)
        if path is None:
            continue
        spec = leaves[path].spec
        out[name] = None if spec is None or spec.min_score is None else Fraction(spec.min_score)
    return out


def labeled_rows(
    ex_rows: list[dict], scores: list[dict], labels: list[dict], config: Config
) -> list[dict]:
    """One row per label of a judged execution whose judge decision exists: run_id,
    evaluator, rater, the execution key, judge (bool), label (bool or None), s_judge,
    s_label (evaluator rows only)."""
    judged = {_key(r): r for r in ex_rows if r["status"] == "ok" and r["verdict"] != "unscored"}
    leaves = _leaves(config, scores)
    judge_rows = {(*_key(r), r["evaluator"]): r for r in scores}
    out = []
    for lab in labels:
        k = _key(lab)
        if k not in judged:
            continue
        ex = judged[k]
        ev = lab.get("evaluator")
        rater = lab.get("rater") or "human"
        row: dict[str, Any] = {
            "run_id": k[0],
            "case_id": k[1],
            "attempt": k[2],
            "evaluator": ev,
            "rater": rater,
            "label": lab.get("label_passed"),
            "s_judge": None,
            "s_label": None,
        }
        if ev is None:
            row["judge"] = ex["passed"]
        else:
            if ev not in leaves:
                continue  # a composite node or outside the tree: ignored
            judge = judge_rows.get((*k, ev))
            if judge is None or judge.get("score") is None:
                continue  # the judge did not score this leaf
            scale = judge.get("scale_max") or 1.0
            s = _s(judge["score"], scale)
            assert s is not None
            bound = leaves[ev] if leaves[ev] is not None else ex["threshold"]
            row["judge"] = s >= bound - EPS
            row["s_judge"] = s
            if lab.get("label_score") is not None:
                row["s_label"] = _s(lab["label_score"], lab.get("scale_max") or scale)
        out.append(row)
    return out


def _ratio(a: int, b: int) -> Fraction | None:
    return Fraction(a, b) if b else None


def kappa(tp: int, fp: int, fn: int, tn: int) -> Fraction | None:
    """Cohen's κ = (p_o − p_e)/(1 − p_e); None when n = 0 or p_e = 1."""
    n = tp + fp + fn + tn
    if n == 0:
        return None
    p_o = Fraction(tp + tn, n)
    p_e = Fraction((tp + fp) * (tp + fn) + (fn + tn) * (fp + tn), n * n)
    return None if p_e == 1 else (p_o - p_e) / (1 - p_e)


def _counts(pairs: list[tuple[bool, bool]]) -> dict[str, int]:
    return {
        "n_labeled": len(pairs),
        "tp": sum(1 for j, h in pairs if j and h),
        "fp": sum(1 for j, h in pairs if j and not h),
        "fn": sum(1 for j, h in pairs if not j and h),
        "tn": sum(1 for j, h in pairs if not j and not h),
    }


def _rates(c: dict[str, int]) -> dict[str, Fraction | None]:
    return {
        "kappa": kappa(c["tp"], c["fp"], c["fn"], c["tn"]),
        "sensitivity": _ratio(c["tp"], c["tp"] + c["fn"]),
        "specificity": _ratio(c["tn"], c["tn"] + c["fp"]),
    }


def krippendorff_alpha(items: list[list[bool]]) -> Fraction | None:
    """Nominal α over items (each the values of its raters) from the coincidence matrix:
    α = 1 − D_o/D_e over the items with at least two values; None when there are none or
    D_e = 0."""
    pairable = [values for values in items if len(values) >= 2]
    if not pairable:
        return None
    o: dict[tuple[bool, bool], Fraction] = defaultdict(Fraction)
    for values in pairable:
        m = len(values)
        for i, a in enumerate(values):
            for j, b in enumerate(values):
                if i != j:
                    o[(a, b)] += Fraction(1, m - 1)
    n_c = {c: sum(o[(c, k)] for k in (False, True)) for c in (False, True)}
    n = sum(n_c.values())
    d_o = sum(o[(c, k)] for c in (False, True) for k in (False, True) if c != k) / n
    d_e = sum(n_c[c] * n_c[k] for c in (False, True) for k in (False, True) if c != k) / (
        n * (n - 1)
    )
    return None if d_e == 0 else 1 - d_o / d_e


def curve(rows: list[dict]) -> list[dict]:
    """agreement_curve: per (run, evaluator, rater) of evaluator rows with a label, every
    distinct judge score t as the threshold, by trying each."""
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for r in rows:
        if r["evaluator"] is not None and r["label"] is not None:
            groups[(r["run_id"], r["evaluator"], r["rater"])].append(r)
    out = []
    for (run, ev, rater), members in groups.items():
        for t in sorted({r["s_judge"] for r in members}):
            pairs = [(r["s_judge"] >= t - EPS, r["label"]) for r in members]
            c = _counts(pairs)
            out.append(
                {"run_id": run, "evaluator": ev, "rater": rater, "threshold": t, **c, **_rates(c)}
            )
    return out


Z = 1.96


def wilson(k: int, n: int) -> tuple[float, float] | None:
    """The 95 % Wilson score bounds of k successes in n trials (None when n = 0), by the
    textbook formula."""
    if n == 0:
        return None
    p, z2 = k / n, Z * Z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def admission(c: dict, kappa_value: Any, judges: Any) -> dict[str, Any]:
    """sensitivity_low, specificity_low and admitted of one rater row (docs/judges.md)."""
    sens, spec = wilson(c["tp"], c["tp"] + c["fn"]), wilson(c["tn"], c["tn"] + c["fp"])
    low = {"sensitivity_low": sens and sens[0], "specificity_low": spec and spec[0]}
    ok = c["n_labeled"] >= judges.min_labeled
    for value, limit in (
        (low["sensitivity_low"], judges.min_sensitivity),
        (low["specificity_low"], judges.min_specificity),
        (kappa_value, judges.min_kappa),
    ):
        if limit is not None:
            ok = ok and value is not None and float(value) >= limit - EPS
    return {**low, "admitted": ok}


def recommended_threshold(curve_rows: list[dict], max_false_pass: Any) -> Any:
    """The smallest curve threshold whose false passes fp in nf = fp + tn have a Wilson
    upper bound at most max_false_pass (EPS); None when none has, nf = 0 or no limit."""
    if max_false_pass is None:
        return None
    fits = [
        c["threshold"]
        for c in curve_rows
        if (b := wilson(c["fp"], c["fp"] + c["tn"])) is not None and b[1] <= max_false_pass + EPS
    ]
    return min(fits) if fits else None


def judge_agreement(rows: list[dict], judges: Any = None) -> list[dict]:
    """judge_agreement rows keyed (run_id, evaluator, rater); rater None = the α row. With
    `judges` (the config's section) also the admission columns."""
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for r in rows:
        if r["label"] is not None:
            groups[(r["run_id"], r["evaluator"], r["rater"])].append(r)
    best: dict[tuple, Fraction] = {}
    for c in curve(rows):
        k = (c["run_id"], c["evaluator"], c["rater"])
        if c["kappa"] is None:
            continue
        if (
            k not in best
            or c["kappa"] > best[k][0]
            or (c["kappa"] == best[k][0] and c["threshold"] < best[k][1])
        ):
            best[k] = (c["kappa"], c["threshold"])  # type: ignore[assignment]
    out = []
    for (run, ev, rater), members in groups.items():
        c = _counts([(r["judge"], r["label"]) for r in members])
        diffs = [
            r["s_judge"] - r["s_label"]
            for r in members
            if r["s_judge"] is not None and r["s_label"] is not None
        ]
        out.append(
            {
                "run_id": run,
                "evaluator": ev,
                "rater": rater,
                **c,
                "agreement": _ratio(c["tp"] + c["tn"], c["n_labeled"]),
                **_rates(c),
                "score_mae": sum(abs(d) for d in diffs) / len(diffs) if diffs else None,
                "score_bias": sum(diffs) / len(diffs) if diffs else None,
                "krippendorff_alpha": None,
                "best_kappa_threshold": best[(run, ev, rater)][1]  # type: ignore[index]
                if (run, ev, rater) in best
                else None,
            }
        )
        if judges is not None:
            out[-1].update(admission(c, out[-1]["kappa"], judges))
            group = [
                x
                for x in curve(rows)
                if (x["run_id"], x["evaluator"], x["rater"]) == (run, ev, rater)
            ]
            out[-1]["recommended_threshold"] = recommended_threshold(group, judges.max_false_pass)
    items: dict[tuple, dict[tuple, list[bool]]] = defaultdict(lambda: defaultdict(list))
    for (run, ev, _rater), members in groups.items():
        for r in members:
            items[(run, ev)][(r["case_id"], r["attempt"])].append(r["label"])
    for (run, ev), by_item in items.items():
        row: dict[str, Any] = dict.fromkeys(out[0]) if out else {}
        row.update(run_id=run, evaluator=ev, rater=None)
        row["krippendorff_alpha"] = krippendorff_alpha(list(by_item.values()))
        out.append(row)
    return out


def _mean(xs: list[Fraction]) -> Fraction:
    return sum(xs, Fraction(0)) / len(xs)


def _var(xs: list[Fraction]) -> Fraction:
    """Sample variance (divisor n − 1); 0 for a single value."""
    if len(xs) < 2:
        return Fraction(0)
    m = _mean(xs)
    return sum(((x - m) ** 2 for x in xs), Fraction(0)) / (len(xs) - 1)


def ppi(ex_rows: list[dict], labels: list[dict]) -> dict[str, dict[str, Any]]:
    """Per run with judged executions: n_labeled, ppi_pass_rate (exact), its se and
    interval (floats: a square root)."""
    h: dict[tuple, list[bool]] = defaultdict(list)
    for lab in labels:
        if lab.get("evaluator") is None and lab.get("label_passed") is not None:
            h[_key(lab)].append(lab["label_passed"])
    by_run: dict[str, list[tuple[Fraction, Fraction | None]]] = defaultdict(list)
    for r in ex_rows:
        if r["status"] != "ok" or r["verdict"] == "unscored":
            continue
        k = _key(r)
        hv = _mean([Fraction(int(v)) for v in h[k]]) if h.get(k) else None
        by_run[r["run_id"]].append((Fraction(int(r["passed"])), hv))
    out = {}
    for run, pairs in by_run.items():
        lab = [(j, hv) for j, hv in pairs if hv is not None]
        unl = [j for j, hv in pairs if hv is None]
        n, n_u = len(lab), len(unl)
        est: Fraction | None
        se: float | None = None
        if n == 0:
            est = None
        elif n_u == 0:
            est = _mean([hv for _, hv in lab])  # type: ignore[misc]
            if n >= 2:
                se = math.sqrt(_var([hv for _, hv in lab]) / n)  # type: ignore[misc]
        else:
            d = [hv - j for j, hv in lab]  # type: ignore[operator]
            est = _mean(unl) + _mean(d)
            if n >= 2:
                se = math.sqrt(_var(unl) / n_u + _var(d) / n)
        out[run] = {
            "n_labeled": n,
            "ppi_pass_rate": est,
            "ppi_pass_rate_se": se,
            "ppi_pass_rate_ci_low": None if se is None else float(est) - Z_95 * se,  # type: ignore[arg-type]
            "ppi_pass_rate_ci_high": None if se is None else float(est) + Z_95 * se,  # type: ignore[arg-type]
        }
    return out
