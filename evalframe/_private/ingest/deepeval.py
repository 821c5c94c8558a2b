"""DeepEval test runs: the JSON `deepeval test run` saves (`.deepeval/.latest_test_run.json`,
whose test run sits under `testRunData`, or a saved `test_run_*.json`). One test case is one
execution; each entry of its `metricsData` is one score. See docs/ingest.md."""

from __future__ import annotations

import json
from pathlib import Path

from evalframe._private import schema as S
from evalframe._private.ingest._common import (
    SOURCE_FILE,
    SOURCE_FORMAT,
    IngestError,
    Parsed,
    count,
    number,
    read_json,
)

FORMAT = "deepeval"
REPORTED_PASSED = "reported_passed"
METRIC_THRESHOLD = "metric_threshold"
EVALUATION_MODEL = "evaluation_model"
EVALUATION_COST = "evaluation_cost"
FLAKY = "flaky"
REPORTED_METRICS = "reported_metrics"
"""DeepEval's own per-metric aggregate (`metricsScores`: scores, passes, fails, errors)."""


def parse(path: Path, *, run_id: str | None = None) -> Parsed:
    """Parse one DeepEval test-run JSON file into row dicts."""
    data = read_json(path)
    if isinstance(data, dict) and isinstance(data.get("testRunData"), dict):
        data = data["testRunData"]
    cases = data.get("testCases") if isinstance(data, dict) else None
    convos = data.get("conversationalTestCases") if isinstance(data, dict) else None
    if not isinstance(cases, list) and not isinstance(convos, list):
        raise IngestError(
            f"{path}: not a DeepEval test run (no `testCases` list); hint: the file "
            "`deepeval test run` saves is .deepeval/.latest_test_run.json."
        )
    assert isinstance(data, dict)
    ident = data.get("identifier")
    rid = run_id or (ident if isinstance(ident, str) and ident else path.stem.lstrip("."))
    out = Parsed()
    seen: dict[str, str] = {}
    entries = [("testCases", i, c) for i, c in enumerate(cases or [])]
    entries += [("conversationalTestCases", i, c) for i, c in enumerate(convos or [])]
    for block, i, case in entries:
        where = f"{path}: {block}[{i}]"
        if not isinstance(case, dict):
            raise IngestError(f"{where}: must be an object")
        name = case.get("name")
        case_id = name if isinstance(name, str) and name else f"{block}-{i}"
        if case_id in seen:
            raise IngestError(f"{where}: test case name {case_id!r} repeats {seen[case_id]}")
        seen[case_id] = where
        key = {S.RUN_ID: rid, S.CASE_ID: case_id, S.ATTEMPT: 0}
        metrics = case.get("metricsData") or []
        if not isinstance(metrics, list):
            raise IngestError(f"{where}: `metricsData` must be a list")
        errors = 0
        for j, m in enumerate(metrics):
            mw = f"{where}.metricsData[{j}]"
            if not isinstance(m, dict) or not isinstance(m.get("name"), str):
                raise IngestError(f"{mw}: a metric needs a `name`")
            score = number(m.get("score"), mw, "score")
            if score is not None and not 0 <= score <= 1:
                raise IngestError(f"{mw}: score {score} of {m['name']!r} is outside 0-1")
            success = m.get("success") if isinstance(m.get("success"), bool) else None
            error = m.get("error") if isinstance(m.get("error"), str) else None
            if score is None or success is None:
                errors += 1  # DeepEval counts these as metric errors
                score = None
            reason = m.get("reason")
            out.scores.append(
                {
                    **key,
                    S.EVALUATOR: m["name"],
                    S.SCORE: score,
                    S.LABEL: None if score is None else ("pass" if success else "fail"),
                    S.REASON: error or (reason if isinstance(reason, str) else None),
                    METRIC_THRESHOLD: number(m.get("threshold"), mw, "threshold"),
                    EVALUATION_MODEL: m.get("evaluationModel")
                    if isinstance(m.get("evaluationModel"), str)
                    else None,
                    EVALUATION_COST: number(m.get("evaluationCost"), mw, "evaluationCost"),
                    FLAKY: bool(m.get("flaky", False)),
                }
            )
            if success is not None and not m.get("flaky"):
                # DeepEval's own verdict (an errored metric has success false): a test case
                # passes when every non-flaky metric succeeded
                out.outcomes.append({**key, S.OUTCOME: m["name"], S.PASSED: success})
        secs = number(case.get("completionTime"), where, "completionTime")
        tokens_in, tokens_out = case.get("inputTokenCount"), case.get("outputTokenCount")
        tags = case.get("tags")
        out.executions.append(
            {
                **key,
                S.STATUS: S.STATUS_ERROR if metrics and errors == len(metrics) else S.STATUS_OK,
                S.LATENCY_MS: None if secs is None else secs * 1000,
                S.COST_USD: number(case.get("tokenCost"), where, "tokenCost"),
                S.INPUT_TOKENS: count(tokens_in, where, "inputTokenCount"),
                S.OUTPUT_TOKENS: count(tokens_out, where, "outputTokenCount"),
                S.TAGS: [str(t) for t in tags] if isinstance(tags, list) else None,
                REPORTED_PASSED: case.get("success")
                if isinstance(case.get("success"), bool)
                else None,
                EVALUATION_COST: number(case.get("evaluationCost"), where, "evaluationCost"),
            }
        )
    reported = data.get("metricsScores")
    out.runs.append(
        {
            S.RUN_ID: rid,
            S.LABEL: rid,
            "test_file": data.get("testFile") if isinstance(data.get("testFile"), str) else None,
            "test_passed": data.get("testPassed"),
            "test_failed": data.get("testFailed"),
            REPORTED_METRICS: json.dumps(reported) if isinstance(reported, list) else None,
            SOURCE_FILE: str(path),
            SOURCE_FORMAT: FORMAT,
        }
    )
    return out
