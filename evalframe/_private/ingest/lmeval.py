"""lm-evaluation-harness per-sample logs: `samples_<task>_<timestamp>.jsonl`, written by
`lm_eval ... --log_samples --output_path OUT` as OUT/<model>/samples_<task>_<ts>.jsonl beside
results_<ts>.json. One line is one document of one task under one filter; its metric values
(`"acc": 1.0`, ...) are the scores. See docs/ingest.md."""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import evalframe._private.ingest._common as C
from evalframe._private import schema as S
from evalframe._private.errors import IngestError

NOT_METRICS = frozenset(
    {"doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "filter", "metrics",
     "doc_hash", "prompt_hash", "target_hash", "task_name"}
)  # fmt: skip
UNBOUNDED = frozenset({"perplexity", "word_perplexity", "byte_perplexity", "bits_per_byte"})
"""lm-eval metrics with no finite top (lower is better): never normalized to 0-1
(docs/scoring.md#one-scale)."""
_NAME = re.compile(r"^samples_(?P<task>.+)_(?P<ts>\d{4}-\d{2}-\d{2}T[\d.\-:]+)$")


def file_parts(path: Path) -> tuple[str, str | None]:
    """(task, timestamp) from `samples_<task>_<timestamp>.jsonl`; timestamp None if absent."""
    stem = path.name.removesuffix(".jsonl")
    match = _NAME.match(stem)
    if match:
        return match["task"], match["ts"]
    if not stem.startswith("samples_"):
        raise IngestError(
            f"{path}: not an lm-evaluation-harness samples file (samples_<task>_<time>.jsonl)"
        )
    return stem.removeprefix("samples_"), None


def run_base(path: Path) -> str:
    """Run id: the model folder (lm_eval writes OUT/<model>/), plus the timestamp."""
    _task, ts = file_parts(path)
    model = path.parent.name or "lm-eval"
    return f"{model}/{ts}" if ts else model


def runs(files: list[Path], run_id: str | None) -> list[list[Path]]:
    """The samples files grouped into runs (one model folder and timestamp each)."""
    groups: dict[str, list[Path]] = {}
    for f in files:
        groups.setdefault(run_id or run_base(f), []).append(f)
    return list(groups.values())


def parse(paths: list[Path], opts: C.Options) -> C.Parsed:
    """The samples files of one run (one timestamp of one model)."""
    scales = opts.scales(paths[0])
    rid = opts.run_id or run_base(paths[0])
    out = C.Parsed()
    executions, values, metric_of, files = _samples(paths, rid)
    spans: dict[str, tuple[float, float]] = {}
    infinite: set[str] = set()  # evaluators with an infinite value
    for (_case, evaluator), (_where, value) in values.items():
        num = _number(value)
        if num is not None and math.isinf(num):
            infinite.add(evaluator)
        elif num is not None and not math.isnan(num):
            C.widen(spans, evaluator, num)
    off = {n: s for n, s in spans.items() if s[0] < 0 or s[1] > scales.top(n)}
    tasks = list(dict.fromkeys(file_parts(p)[0] for p in paths))
    # results_<timestamp>.json beside the samples files, when it is there: the tasks'
    # aggregates (they may hold a NaN stderr: kept, stored as the string "NaN") and their
    # `higher_is_better` map ({task: {metric: bool}}). A metric the tasks disagree on stays
    # higher-is-better, with a note; without a results file every metric is higher.
    ts = file_parts(paths[0])[1]
    found = paths[0].parent / f"results_{ts}.json"
    results = C.as_dict(C.read_json(found)) if ts and found.is_file() else {}
    flags: dict[str, set[bool]] = {}
    for task in tasks:
        for metric, flag in C.as_dict(C.as_dict(results.get("higher_is_better")).get(task)).items():
            if isinstance(flag, bool):
                flags.setdefault(metric, set()).add(flag)
    lower = {e for e, m in metric_of.items() if flags.get(m) == {False}}
    for evaluator in [e for e, m in metric_of.items() if len(flags.get(m, ())) > 1]:
        out.notes.append(
            f"{_named(files[evaluator])}: {evaluator!r}: the tasks of this run disagree on "
            "whether higher is better (results `higher_is_better`); scored as higher-is-better."
        )
    unbounded = {e for e in lower if metric_of[e] in UNBOUNDED}
    # a lower-is-better metric that reaches infinity has no finite top either
    unbounded |= lower & infinite
    # scalars only (lists have their note below), and not those outside the scale (same)
    unbounded = {e for e in unbounded if (e in spans or e in infinite) and e not in off}
    for evaluator in sorted(unbounded):
        out.notes.append(
            f"{_named(files[evaluator])}: {evaluator!r} not scored: lower is better and it "
            "has no finite top (a perplexity, or an error that reaches infinity), so it cannot "
            f"be normalized to 0-1; kept as the executions column `{evaluator}`."
        )
    for (case, evaluator), (where, value) in values.items():
        num = _number(value)
        if num is None or evaluator in off or evaluator in unbounded:
            executions[case][evaluator] = num if num is not None else C.dump_json(value)
            continue
        score = {S.SCORE: C.finite(num, where, repr(evaluator)), S.SCALE_MAX: scales.top(evaluator)}
        out.scores.append({**C.key(rid, case), S.EVALUATOR: evaluator, **score})
    for evaluator in sorted({e for (_c, e), (_w, v) in values.items() if _number(v) is None}):
        out.notes.append(
            f"{_named(files[evaluator])}: {evaluator!r} not scored: its values are not single "
            "numbers (lm-eval aggregates them itself, e.g. perplexities); kept as the executions "
            f"column `{evaluator}` (JSON)."
        )
    for evaluator, (lo, hi) in sorted(off.items()):
        top = scales.top(evaluator)
        out.notes.append(C.off_scale(_named(files[evaluator]), evaluator, lo, hi, top, evaluator))
    scored = {row[S.EVALUATOR] for row in out.scores}
    out.leaf_settings = {e: {"higher_is_better": False} for e in sorted(lower & scored)}
    out.executions.extend(executions.values())
    out.runs.append(_run_row(paths, rid, results))
    return out


def _samples(paths: list[Path], rid: str) -> tuple[dict, dict, dict[str, str], dict]:
    """The run's samples: executions by case; each metric value with where it is, by
    (case, evaluator) (an evaluator is a metric under a filter); lm-eval's metric name of
    each evaluator; the samples files holding each evaluator."""
    lines: list[tuple[str, Path, str, dict[str, Any]]] = []  # (task, file, where, line)
    for path in paths:
        task, _ts = file_parts(path)
        for lineno, obj in C.iter_jsonl(path):
            where = f"{path}:{lineno}"
            doc = obj.get("doc_id")
            if isinstance(doc, bool) or not isinstance(doc, int | str):
                raise IngestError(f"{where}: missing `doc_id`; every line needs one")
            lines.append((task, path, where, obj))
    if not lines:
        raise IngestError(f"{paths[0]}: no samples in this file")
    values: dict[tuple[str, str], tuple[str, Any]] = {}
    executions: dict[str, dict[str, Any]] = {}
    files: dict[str, list[str]] = {}
    metric_of: dict[str, str] = {}
    for task, path, where, obj in lines:
        case = f"{task}/{obj['doc_id']}"
        filt = obj.get("filter") if isinstance(obj.get("filter"), str) else "none"
        names = obj.get("metrics")
        if not isinstance(names, list):
            names = [k for k, v in obj.items() if k not in NOT_METRICS and C.is_number(v)]
        target = None if obj.get("target") is None else str(obj.get("target"))
        ex = executions.setdefault(
            case, {**C.key(rid, case), S.STATUS: S.STATUS_OK, "task": task, "target": target}
        )
        if filt == "none" or ex.get("response") is None:
            ex["response"] = _response(obj.get("filtered_resps"))
        for name in names:
            if not isinstance(name, str) or name not in obj:
                continue
            evaluator = name if filt == "none" else f"{name},{filt}"
            metric_of[evaluator] = name
            if (case, evaluator) in values:
                raise IngestError(f"{where}: {evaluator!r} of {case!r} appears twice")
            values[case, evaluator] = (where, obj[name])
            holders = files.setdefault(evaluator, [])
            if path.name not in holders:
                holders.append(path.name)
    return executions, values, metric_of, files


def _number(value: Any) -> float | None:
    """A metric value as a float (NaN and infinities as they are, refused where scored);
    None for lists and other non-numbers."""
    if isinstance(value, int):  # bools too
        return float(value)
    return value if isinstance(value, float) else None


def _response(resps: Any) -> str | None:
    """The first filtered response, as text."""
    while isinstance(resps, list) and resps:
        resps = resps[0]
    return None if resps is None or isinstance(resps, list) else str(resps)


def _named(names: list[str]) -> str:
    """The samples files an evaluator's values came from, for a note."""
    return ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")


def _groups_of(tasks: list[str], subtasks: Any) -> list[str]:
    """The groups (results `group_subtasks`) that hold any of `tasks`, transitively."""
    if not isinstance(subtasks, dict):
        return []
    found: list[str] = []
    wanted = set(tasks)
    changed = True
    while changed:
        changed = False
        for group, members in subtasks.items():
            listed = {str(m) for m in members} if isinstance(members, list) else set()
            if group not in wanted and wanted & listed:
                wanted.add(group)
                found.append(group)
                changed = True
    return found


def _run_row(paths: list[Path], rid: str, data: dict[str, Any]) -> dict[str, Any]:
    _task, ts = file_parts(paths[0])
    tasks = [file_parts(p)[0] for p in paths]
    reported, model = None, None
    if isinstance(data.get("results"), dict):
        found, groups = data["results"], C.as_dict(data.get("groups"))
        kept = {t: found.get(t) for t in tasks}
        for group in _groups_of(tasks, data.get("group_subtasks")):
            # a group's aggregate over its subtasks (in `groups` in newer versions)
            kept[group] = groups.get(group, found.get(group))
        reported, model = C.dump_json(kept), C.typed(data.get("model_name"), str)
    date = data.get("date")
    created = None
    if C.is_number(date) and 0 < date < 1e11:
        # the results file's own start time: seconds since the epoch, UTC
        created = datetime.fromtimestamp(float(date), UTC).replace(tzinfo=None)
    elif ts:
        # the file-name timestamp is lm-eval's local clock, not UTC (docs/ingest.md)
        day, _, clock = ts.partition("T")
        created = C.parse_time(f"{day}T{clock.replace('-', ':', 2)}")
    files = ",".join(str(p) for p in paths)
    model = model or paths[0].parent.name or None
    return C.run_row(rid, created, model=model, tasks=",".join(tasks), reported_metrics=reported,
                     **{C.SOURCE_FILE: files})  # fmt: skip
