"""DeepEval test runs: the JSON `deepeval test run` saves (`.deepeval/.latest_test_run.json`,
whose test run sits under `testRunData`, or a saved `test_run_*.json`). One test case is one
execution; each entry of its `metricsData` is one score. See docs/ingest.md."""

from __future__ import annotations

import json
import re
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

import evalframe._private.ingest._common as C
from evalframe._private import schema as S
from evalframe._private.errors import IngestError

LOWER_IS_BETTER = frozenset({"Hallucination", "Bias", "Toxicity"})
"""DeepEval's metrics whose success means score <= threshold: the direction of a metric
none of whose scores differs from its threshold (so its success cannot reveal it)."""
_SAVED = re.compile(r"^test_run_(\d{8}_\d{6})$")
"""A test run saved to DEEPEVAL_RESULTS_FOLDER: test_run_YYYYMMDD_HHMMSS.json (local time)."""


def run_id_of(path: Path, data: dict[str, Any]) -> str:
    """`identifier` when the run has one; for `.latest_test_run.json` the project folder
    (the one holding `.deepeval/`) plus `/latest_test_run`, so two projects' latest runs do
    not collide; else the file name (leading dot dropped)."""
    ident = data.get("identifier")
    if isinstance(ident, str) and ident:
        return ident
    if path.name != ".latest_test_run.json":
        return path.stem.lstrip(".")
    folder = path.resolve().parent
    folder = folder.parent if folder.name == ".deepeval" else folder
    if not folder.name:
        raise IngestError(
            f"{path}: a `.latest_test_run.json` outside a named project folder has no run id "
            "of its own; hint: pass --run-id (e.g. --run-id myproject/2026-07-22)."
        )
    return f"{folder.name}/latest_test_run"


def _saved_time(path: Path) -> datetime | None:
    """The time in a saved test run's name, as written: DeepEval takes it from the local
    clock."""
    match = _SAVED.match(path.stem)
    try:
        return None if match is None else datetime.strptime(match[1], "%Y%m%d_%H%M%S")
    except ValueError:
        return None


def parse(path: Path, opts: C.Options) -> C.Parsed:
    data = C.read_json(path)
    if isinstance(data, dict) and isinstance(data.get("testRunData"), dict):
        data = data["testRunData"]
    cases = data.get("testCases") if isinstance(data, dict) else None
    convos = data.get("conversationalTestCases") if isinstance(data, dict) else None
    if not isinstance(data, dict) or not (isinstance(cases, list) or isinstance(convos, list)):
        raise IngestError(
            f"{path}: not a DeepEval test run (no `testCases` list); hint: the file "
            "`deepeval test run` saves is .deepeval/.latest_test_run.json."
        )
    rid = opts.run_id or run_id_of(path, data)
    out = C.Parsed()
    entries = [("testCases", i, c) for i, c in enumerate(cases or [])]
    entries += [("conversationalTestCases", i, c) for i, c in enumerate(convos or [])]
    ids = _case_ids(path, entries, out.notes)
    evidence: dict[str, set[bool]] = {}  # metric -> directions its successes reveal
    thresholds: dict[str, set[float | None]] = {}
    for block, i, case in entries:
        where = f"{path}: {block}[{i}]"
        at = C.key(rid, ids[block, i])
        metrics = case.get("metricsData") or []
        if not isinstance(metrics, list):
            raise IngestError(f"{where}: `metricsData` must be a list")
        errors = sum(_metric(m, f"{where}.metricsData[{j}]", at, out, evidence, thresholds)
                     for j, m in enumerate(metrics))  # fmt: skip
        secs = C.metadata(case.get("completionTime"), where, "completionTime")
        tags = case.get("tags")
        out.executions.append(
            {
                **at,
                S.STATUS: S.STATUS_ERROR if metrics and errors == len(metrics) else S.STATUS_OK,
                S.LATENCY_MS: None if secs is None else secs * 1000,
                S.COST_USD: C.metadata(case.get("tokenCost"), where, "tokenCost"),
                S.INPUT_TOKENS: C.count(case.get("inputTokenCount"), where, "inputTokenCount"),
                S.OUTPUT_TOKENS: C.count(case.get("outputTokenCount"), where, "outputTokenCount"),
                S.TAGS: [str(t) for t in tags] if isinstance(tags, list) else None,
                "reported_passed": C.typed(case.get("success"), bool),
                "evaluation_cost": C.metadata(case.get("evaluationCost"), where, "evaluationCost"),
                "order": case.get("order") if _is_order(case.get("order")) else None,
            }
        )
    out.leaf_settings = _leaf_settings(path, evidence, thresholds, out.notes)
    reported = data.get("metricsScores")  # DeepEval's own per-metric aggregate
    out.runs.append(
        C.run_row(
            rid,
            _saved_time(path),
            test_file=C.typed(data.get("testFile"), str),
            test_passed=data.get("testPassed"),
            test_failed=data.get("testFailed"),
            reported_metrics=json.dumps(reported) if isinstance(reported, list) else None,
        )
    )
    return out


def _metric(
    m: Any,
    where: str,
    at: dict[str, Any],
    out: C.Parsed,
    evidence: dict[str, set[bool]],
    thresholds: dict[str, set[float | None]],
) -> bool:
    """One entry of a test case's `metricsData` to a score row (and an outcome row with
    DeepEval's own verdict); its direction evidence and threshold recorded. True when
    DeepEval counts it as a metric error (no score or no success)."""
    if not isinstance(m, dict) or not isinstance(m.get("name"), str):
        raise IngestError(f"{where}: a metric needs a `name`")
    score = C.number(m.get("score"), where, "score")
    if score is not None and not 0 <= score <= 1:
        raise IngestError(f"{where}: score {score} of {m['name']!r} is outside 0-1")
    success = C.typed(m.get("success"), bool)
    errored = score is None or success is None
    score = None if errored else score
    threshold = C.number(m.get("threshold"), where, "threshold")
    thresholds.setdefault(m["name"], set()).add(threshold)
    seen = evidence.setdefault(m["name"], set())
    if score is not None and threshold is not None and score != threshold:
        # above the threshold: success iff higher is better; below: iff lower (equal
        # succeeds either way and reveals nothing)
        seen.add(success if score > threshold else not success)
    out.scores.append(
        {
            **at,
            S.EVALUATOR: m["name"],
            S.SCORE: score,
            S.LABEL: None if score is None else ("pass" if success else "fail"),
            S.REASON: C.typed(m.get("error"), str) or C.typed(m.get("reason"), str),
            "metric_threshold": threshold,
            "evaluation_model": C.typed(m.get("evaluationModel"), str),
            "evaluation_cost": C.metadata(m.get("evaluationCost"), where, "evaluationCost"),
            "flaky": bool(m.get("flaky", False)),
        }
    )
    if success is not None and not m.get("flaky"):
        # DeepEval's own verdict (an errored metric has success false): a test case
        # passes when every non-flaky metric succeeded
        out.outcomes.append({**at, S.OUTCOME: m["name"], S.PASSED: success})
    return errored


def _leaf_settings(
    path: Path,
    evidence: dict[str, set[bool]],
    thresholds: dict[str, set[float | None]],
    notes: list[str],
) -> dict[str, dict[str, Any]]:
    """Each metric's config entry, as DeepEval judged it. The direction: a metric
    succeeds when score >= threshold (higher is better) or, for Hallucination, Bias,
    Toxicity and custom metrics so written, when score <= threshold (lower is better);
    a success above or a failure below the threshold reveals the first, the converse the
    second. Its pass boundary: the threshold on the normalized scale (1 - threshold for a
    lower-is-better metric) when the metric has one threshold in the run."""
    out: dict[str, dict[str, Any]] = {}
    for name, seen in evidence.items():
        higher = next(iter(seen)) if len(seen) == 1 else name not in LOWER_IS_BETTER
        if len(seen) > 1:
            notes.append(
                f"{path.name}: {name!r}: its successes fit neither direction (score >= "
                "threshold nor score <= threshold); scored as "
                f"{'higher' if higher else 'lower'}-is-better."
            )
        entry: dict[str, Any] = {} if higher else {"higher_is_better": False}
        (threshold, *more) = thresholds.get(name) or {None}
        if threshold is not None and not more and 0 <= threshold <= 1:
            entry["min_score"] = threshold if higher else round(1.0 - threshold, 12)
        out[name] = entry
    return out


def _is_order(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _case_ids(
    path: Path, entries: list[tuple[str, int, Any]], notes: list[str]
) -> dict[tuple[str, int], str]:
    """case_id of every test case. DeepEval's key of a test case is its `order` (unique in
    a run; the position when absent), not its `name`: an unnamed case is named
    `test_case_{n}` with a counter that restarts at every evaluate() call, so names repeat
    when calls accumulate into one run. A unique name is the case_id (comparable across
    runs); a repeated name gets its order, `NAME#ORDER`."""
    keys: dict[tuple[str, int], tuple[str, int]] = {}  # (block, i) -> (name, order)
    owner: dict[tuple[str, int], str] = {}  # (block, order) -> where
    for block, i, case in entries:
        where = f"{path}: {block}[{i}]"
        if not isinstance(case, dict):
            raise IngestError(f"{where}: must be an object")
        order = case.get("order", i)
        if not _is_order(order):
            raise IngestError(f"{where}: `order` must be an integer, got {order!r}")
        first = owner.setdefault((block, order), where)
        if first != where:
            raise IngestError(
                f"{where}: test case order {order} repeats {first} (the order is the key of "
                "a DeepEval test case)"
            )
        name = case.get("name")
        keys[block, i] = (name if isinstance(name, str) and name else f"{block}-{order}", order)
    counts = Counter(name for name, _order in keys.values())
    repeated = sorted(n for n, c in counts.items() if c > 1)
    if repeated:
        shown = ", ".join(repr(n) for n in repeated[:3]) + (" ..." if len(repeated) > 3 else "")
        notes.append(
            f"{path.name}: {len(repeated)} test-case names repeat ({shown}: evaluate() calls "
            "accumulated into one run); those cases are keyed by DeepEval's `order`, "
            "case_id `NAME#ORDER`."
        )
    out = {k: (f"{n}#{o}" if counts[n] > 1 else n) for k, (n, o) in keys.items()}
    if len(set(out.values())) != len(out):  # a name that looks like `NAME#ORDER` itself
        out = {(b, i): f"{n}#{o}" if b == "testCases" else f"{n}#{b}-{o}"
               for (b, i), (n, o) in keys.items()}  # fmt: skip
    return out
