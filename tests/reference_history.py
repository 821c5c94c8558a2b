"""Slow, exact references of docs/history.md (history): plain Python and fractions, one run or
one case at a time. Φ is math.erf. Used by tests/test_history.py."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from fractions import Fraction as F
from typing import Any

EPS = F(1, 10**9)
Z = F(196, 100)


def order(runs: Sequence[dict[str, Any]], series: str | None, window: int | None) -> dict:
    """series value (text or None) -> its runs in the series order, the last `window`."""
    groups: dict[Any, list[dict[str, Any]]] = {}
    for run in runs:
        value = run.get(series) if series is not None else None
        groups.setdefault(None if value is None else str(value), []).append(run)
    out = {}
    for key, group in groups.items():
        ranked = sorted(
            group,
            key=lambda r: (r.get("created_at") is None, r.get("created_at") or 0, r["run_id"]),
        )
        out[key] = ranked[-window:] if window is not None else ranked
    return out


def _median(values: list[F]) -> F:
    v = sorted(values)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def weights(se: Sequence[float | None]) -> tuple[list[F], int]:
    """(w per run, number of runs with a usable se)."""
    own = [None if s is None or s <= 0 or math.isnan(s) else 1 / F(s) ** 2 for s in se]
    usable = [w for w in own if w is not None]
    fill = _median(usable) if usable else F(1)
    return [fill if w is None else w for w in own], len(usable)


def trend(ys: Sequence[float | None], ses: Sequence[float | None]) -> dict[str, Any]:
    """slope, slope_se, ci_low, ci_high, degrading of y on the index (null y left out)."""
    pts = [(F(i), F(y), s) for i, (y, s) in enumerate(zip(ys, ses, strict=True)) if y is not None]
    w, _ = weights([s for _, _, s in pts])
    n = len(pts)
    out: dict[str, Any] = dict.fromkeys(("slope", "slope_se", "ci_low", "ci_high"))
    out["degrading"] = False
    if n < 2:
        return out
    sw = sum(w)
    xb = sum(wi * x for wi, (x, _, _) in zip(w, pts, strict=True)) / sw
    yb = sum(wi * y for wi, (_, y, _) in zip(w, pts, strict=True)) / sw
    sxx = sum(wi * (x - xb) ** 2 for wi, (x, _, _) in zip(w, pts, strict=True))
    sxy = sum(wi * (x - xb) * (y - yb) for wi, (x, y, _) in zip(w, pts, strict=True))
    slope = sxy / sxx
    out["slope"] = slope
    if n >= 3:
        ssr = sum(
            wi * (y - yb - slope * (x - xb)) ** 2 for wi, (x, y, _) in zip(w, pts, strict=True)
        )
        se = F(math.sqrt(ssr / (n - 2) / sxx))
        out["slope_se"] = se
        out["ci_low"], out["ci_high"] = slope - Z * se, slope + Z * se
        out["degrading"] = out["ci_high"] < -EPS
    return out


def phi(z: float) -> float:
    return 0.5 * (1 + math.erf(z / math.sqrt(2)))


def change_point(
    ids: Sequence[str], ys: Sequence[float | None], ses: Sequence[float | None]
) -> dict[str, Any]:
    """change_run_id, change_z, change_p and the best |z| and the runner-up (for ties)."""
    pts = [(r, F(y), s) for r, y, s in zip(ids, ys, ses, strict=True) if y is not None]
    w, usable = weights([s for _, _, s in pts])
    n = len(pts)
    none = {"change_run_id": None, "change_z": None, "change_p": None, "gap": math.inf}
    if n < 2 or usable == 0:
        return none
    zs = []
    for t in range(1, n):
        wb, wa = sum(w[:t]), sum(w[t:])
        mb = sum(wi * y for wi, (_, y, _) in zip(w[:t], pts[:t], strict=True)) / wb
        ma = sum(wi * y for wi, (_, y, _) in zip(w[t:], pts[t:], strict=True)) / wa
        zs.append((ma - mb) / F(math.sqrt(1 / wb + 1 / wa)))
    best = max(range(len(zs)), key=lambda i: (abs(zs[i]), -i))
    z = float(zs[best])
    others = sorted((abs(v) for i, v in enumerate(zs) if i != best), reverse=True)
    gap = float(abs(zs[best]) - others[0]) if others else math.inf
    p = min(1.0, (n - 1) * 2 * (1 - phi(abs(z))))
    return {"change_run_id": pts[best + 1][0], "change_z": z, "change_p": p, "gap": gap}


def flips(history: Sequence[bool | None]) -> tuple[int, int, int, bool | None]:
    """(runs, passes, flips, last_passed) of one case's passed values in series order."""
    seen = [p for p in history if p is not None]
    changes = sum(a != b for a, b in itertools.pairwise(seen))
    return len(seen), sum(seen), changes, (seen[-1] if seen else None)


def beta_binomial(cases: Sequence[tuple[int, int]]) -> tuple[F, F]:
    """(a, b) of the method of moments over the (runs, passes) of the K cases."""
    k = len(cases)
    if k < 2:
        return F(1), F(1)
    p = F(sum(s for _, s in cases), sum(m for m, _ in cases))
    rates = [F(s, m) for m, s in cases]
    mean = sum(rates) / k
    s2 = sum((r - mean) ** 2 for r in rates) / (k - 1)
    mbar = F(sum(m for m, _ in cases), k)
    if mbar <= 1 or p in (0, 1):
        return F(1), F(1)
    rho = (s2 - p * (1 - p) / mbar) / (p * (1 - p) * (1 - 1 / mbar))
    if not EPS < rho < 1 - EPS:  # ρ in (0, 1) with the boundaries of docs/scoring.md#boundaries
        return F(1), F(1)
    return p * (1 / rho - 1), (1 - p) * (1 / rho - 1)


def case_rows(
    cases: dict[str, Sequence[bool | None]], min_runs: int, flaky: float
) -> dict[str, dict[str, Any]]:
    """case_history rows of one series: case -> columns."""
    counted = {c: flips(h) for c, h in cases.items()}
    counted = {c: v for c, v in counted.items() if v[0] > 0}
    a, b = beta_binomial([(m, s) for m, s, _, _ in counted.values()])
    out = {}
    for case, (m, s, f, last) in counted.items():
        rate = F(f, m - 1) if m >= 2 else None
        out[case] = {
            "runs": m,
            "passes": s,
            "pass_rate": F(s, m),
            "flips": f,
            "flip_rate": rate,
            "shrunk_pass_rate": (s + a) / (m + a + b),
            "last_passed": last,
            "quarantine": m >= min_runs and rate is not None and rate >= F(flaky) - EPS,
        }
    return out
