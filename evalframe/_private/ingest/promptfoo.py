"""promptfoo `eval -o out.json` results (results version 3). One result is one test ×
prompt × provider; each provider becomes a run. See docs/ingest.md."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import evalframe._private.ingest._common as C
from evalframe._private import schema as S
from evalframe._private.errors import IngestError
from evalframe._private.ingest._common import key

ERROR_REASON = 2
"""`failureReason` of a provider / harness error (1 is an assertion failure)."""
HUMAN = "human"
"""promptfoo's `assertion.type` of a manual rating (the web viewer's thumbs up / down):
the human's verdict on the whole output, a label (docs/judges.md), not a judge score."""


def _provider(row: dict[str, Any]) -> str:
    p = row.get("provider")
    if isinstance(p, dict):
        return str(p.get("label") or p.get("id") or "provider")
    return str(p or "provider")


def _same(a: Any, b: Any) -> bool:
    keys = ("pass", "score", "reason")
    return isinstance(a, dict) and isinstance(b, dict) and all(a.get(k) == b.get(k) for k in keys)


def _components(
    results: list[Any], asserts: list[Any] | None, where: str, prefix: str = ""
) -> list[C.Node]:
    """The assertions of one level, as tree nodes.

    promptfoo flattens an assert-set's results after the set's own entry; those copies
    are skipped. Assertions align with the test's `assert` list by index when it fits.
    """
    out: list[C.Node] = []
    taken: set[str] = set()
    i = 0
    while i < len(results):
        r = results[i]
        if not isinstance(r, dict):
            raise IngestError(f"{where}: componentResults[{i}] must be an object")
        i += 1
        k = len(out)
        spec = asserts[k] if asserts is not None and k < len(asserts) else None
        if not isinstance(spec, dict):
            spec = C.as_dict(r.get("assertion"))
        subs = r.get("componentResults")
        group = isinstance(subs, list) and bool(subs)
        name = spec.get("metric") or spec.get("type") or ("assert-set" if group else "assert")
        name = C.unique_name(str(name), taken)
        path = f"{prefix}{name}"
        children = None
        if isinstance(subs, list) and subs:
            n = len(subs)
            if all(_same(x, y) for x, y in zip(results[i : i + n], subs, strict=False)):
                i += min(n, len(results) - i)
            children = _components(subs, C.typed(spec.get("assert"), list), where, f"{path}/")
        weight = C.number(spec.get("weight"), where, f"weight of assertion {path!r}")
        score = None if group else C.number(r.get("score"), where, f"score of assertion {path!r}")
        passed = C.typed(r.get("pass"), bool)
        fields = {
            S.WEIGHT: 0.0 if spec.get("metricOnly") else weight,
            S.LABEL: None if passed is None else ("pass" if passed else "fail"),
            S.REASON: C.typed(r.get("reason"), str),
            "assertion_type": spec.get("type"),
            "assertion_passed": passed,
        }
        verdict = None if spec.get("metricOnly") else passed
        out.append(C.Node(name, score, weight, spec.get("threshold"), fields, children, verdict))
    return out


def parse(path: Path, opts: C.Options) -> C.Parsed:
    data = C.read_json(path)
    block = C.as_dict(C.as_dict(data).get("results"))
    rows = block.get("results")
    if not isinstance(rows, list):
        raise IngestError(
            f"{path}: not a promptfoo results file (no `results.results` list); hint: write "
            "one with `promptfoo eval -o results.json` or `promptfoo export`."
        )
    version = block.get("version")
    if isinstance(version, int) and version < 2:
        raise IngestError(f"{path}: promptfoo results version {version} is not supported (2+)")
    for i, row in enumerate(rows):
        if not isinstance(row, dict) or not isinstance(row.get("testIdx"), int):
            raise IngestError(f"{path}: results.results[{i}] has no integer `testIdx`")
    groups = _groups(rows)
    ids = C.run_ids(opts.run_id or str(data.get("evalId") or path.stem), groups)
    cases = _case_ids(rows)
    out = C.Parsed()
    attempts: dict[tuple[str, str], int] = {}
    for i, row in enumerate(rows):
        where = f"{path}: results.results[{i}]"
        rid, case = ids[groups[i]], cases[row["testIdx"]]
        attempt = attempts.get((rid, case), -1) + 1
        attempts[rid, case] = attempt
        at = key(rid, case, attempt)
        out.executions.append({**at, **_execution(row, where)})
        if row.get("failureReason") == ERROR_REASON:
            continue
        grading = row.get("gradingResult")
        comps = grading.get("componentResults") if isinstance(grading, dict) else None
        if not isinstance(comps, list):
            continue
        comps = _take_human_ratings(comps, at, out, where)
        test = C.as_dict(row.get("testCase"))
        nodes = _components(comps, C.typed(test.get("assert"), list), where)
        C.emit_tree(nodes, "", at, out, out.tree)
        if not isinstance(test.get("threshold"), int | float):
            # without a test threshold promptfoo passes a test when every assertion passes
            for n in nodes:
                if n.verdict is not None:
                    out.outcomes.append({**at, S.OUTCOME: n.name, S.PASSED: n.verdict})
    created = C.parse_time(block.get("timestamp"))
    for group, rid in ids.items():
        out.runs.append(C.run_row(rid, created, provider=group, eval_id=data.get("evalId")))
    return out


def _take_human_ratings(
    comps: list[Any], key: dict[str, Any], out: C.Parsed, where: str
) -> list[Any]:
    """The component results without promptfoo's manual ratings (`assertion.type` "human",
    which the viewer appends after the test's assertions); each becomes a label of the
    execution's verdict (evaluator null, rater "human") from its `pass`. A rating without
    a boolean `pass` is an IngestError naming the result."""
    kept = []
    for i, r in enumerate(comps):
        if not (isinstance(r, dict) and C.as_dict(r.get("assertion")).get("type") == HUMAN):
            kept.append(r)
            continue
        if not isinstance(r.get("pass"), bool):
            raise IngestError(
                f"{where}: componentResults[{i}] is a manual rating without a true/false "
                f"`pass` (got {r.get('pass')!r})"
            )
        verdict = {S.EVALUATOR: None, S.RATER: S.DEFAULT_RATER, S.LABEL_PASSED: r["pass"]}
        out.labels.append({**key, **verdict, S.LABEL_SCORE: None})
    return kept


def _groups(rows: list[dict[str, Any]]) -> list[str]:
    """Each row's run group: the provider, plus `#promptIdx` if it ran several prompts."""
    prompts: dict[str, set[Any]] = {}
    for row in rows:
        prompts.setdefault(_provider(row), set()).add(row.get("promptIdx"))
    return [
        _provider(row) + (f"#{row.get('promptIdx')}" if len(prompts[_provider(row)]) > 1 else "")
        for row in rows
    ]


def _case_ids(rows: list[dict[str, Any]]) -> dict[int, str]:
    """testIdx -> case id: the test descriptions when they name tests one-to-one."""
    desc: dict[int, Any] = {}
    for row in rows:
        test = C.as_dict(row.get("testCase"))
        desc.setdefault(row["testIdx"], test.get("description"))
    names = list(desc.values())
    if all(isinstance(d, str) and d for d in names) and len(set(names)) == len(names):
        return {idx: str(d) for idx, d in desc.items()}
    return {idx: f"test-{idx}" for idx in desc}


def _execution(row: dict[str, Any], where: str) -> dict[str, Any]:
    test = C.as_dict(row.get("testCase"))
    thr = test.get("threshold")
    response = C.as_dict(row.get("response"))
    usage = C.as_dict(response.get("tokenUsage"))
    error = row.get("failureReason") == ERROR_REASON
    return {
        S.STATUS: S.STATUS_ERROR if error else S.STATUS_OK,
        S.THRESHOLD: float(thr) if isinstance(thr, int | float) and 0 <= thr <= 1 else None,
        S.LATENCY_MS: C.metadata(row.get("latencyMs"), where, "latencyMs"),
        S.COST_USD: C.metadata(row.get("cost"), where, "cost"),
        S.INPUT_TOKENS: C.typed(usage.get("prompt"), int),
        S.OUTPUT_TOKENS: C.typed(usage.get("completion"), int),
        "provider": _provider(row),
        "prompt": C.typed(C.as_dict(row.get("prompt")).get("label"), str),
        C.REPORTED_SCORE: C.metadata(row.get("score"), where, "score"),
        "reported_passed": C.typed(row.get("success"), bool),
        "failure_reason": C.typed(row.get("failureReason"), int),
        "error": row.get("error") if error and isinstance(row.get("error"), str) else None,
    }
