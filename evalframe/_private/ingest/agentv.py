"""AgentV results: a results JSONL file or a run folder's `index.jsonl` (snake_case or
camelCase field names). One line is one test of one target; see docs/ingest.md."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import evalframe._private.ingest._common as C
from evalframe._private import schema as S
from evalframe._private.errors import IngestError

TARGET = "target"
EXECUTION_STATUS = "execution_status"
TOP_EVALUATOR = "score"
"""Evaluator name for a line (or trial) with a score but no per-grader `scores`."""
TOLERANCE = 5e-4
"""A group is recomputable when its children's weighted mean is this close to its score
(AgentV rounds some scores to four decimals)."""
INTERNAL = ".internal"
"""A run bundle's machine folder: RUN/.internal/index.jsonl beside RUN/summary.json."""
CATALOGS = {".indexes", ".cache"}
"""Cross-run folders of a results root (runs.jsonl etc.): not runs, never ingested."""


def expand(path: Path) -> list[Path]:
    """A file as is (a run's summary.json: its index); a folder: its run folders'
    index.jsonl files (RUN/.internal/index.jsonl or RUN/index.jsonl), else its *.jsonl."""
    if path.is_dir():
        for pattern in ("index.jsonl", "*.jsonl"):
            found = sorted(
                p
                for p in path.rglob(pattern)
                if p.is_file() and not set(p.relative_to(path).parts[:-1]) & CATALOGS
            )
            if found:
                return found
        raise IngestError(f"{path}: no index.jsonl or *.jsonl files in this folder")
    if path.name != "summary.json":
        return [path]
    rel = C.typed(C.as_dict(C.read_json(path)).get("index_path"), str)
    for candidate in (rel, f"{INTERNAL}/index.jsonl", "index.jsonl"):
        if candidate and (path.parent / candidate).is_file():
            return [path.parent / candidate]
    raise IngestError(
        f"{path}: no run index beside this summary.json (expected {INTERNAL}/index.jsonl)"
    )


def _run_folder(path: Path) -> Path | None:
    """The run folder of an index.jsonl (RUN/index.jsonl or RUN/.internal/index.jsonl)."""
    if path.name != "index.jsonl":
        return None
    folder = path.parent.parent if path.parent.name == INTERNAL else path.parent
    return folder if folder.name else None


def _run_extras(path: Path, target: str) -> dict[str, Any]:
    """From the run's summary.json, if there is one: experiment and the pass rate AgentV
    reported for this target."""
    folder = _run_folder(path)
    if folder is None or not (folder / "summary.json").is_file():
        return {}
    data = C.as_dict(C.read_json(folder / "summary.json"))
    rate = C.as_dict(C.as_dict(data.get("run_summary")).get(target)).get("pass_rate")
    rate = rate.get("mean") if isinstance(rate, dict) else rate
    return {
        "experiment": C.typed(C.as_dict(data.get("metadata")).get("experiment"), str),
        "reported_pass_rate": float(rate) if C.is_number(rate) else None,
    }


def _graders(entries: list[Any], where: str) -> list[C.Node]:
    taken: set[str] = set()
    out = []
    for i, raw in enumerate(entries):
        if not isinstance(raw, dict):
            raise IngestError(f"{where}: scores[{i}] must be an object, got {raw!r}")
        e = C.snake_keys(raw)
        name = C.unique_name(str(e.get("name") or e.get("type") or f"grader{i + 1}"), taken)
        score = C.number(e.get("score"), where, f"score of grader {name!r}")
        weight = C.number(e.get("weight"), where, f"weight of grader {name!r}")
        kids = e.get("scores")
        children = _graders(kids, where) if isinstance(kids, list) and kids else None
        fields = {
            S.WEIGHT: weight,
            S.LABEL: e.get("verdict"),
            S.REASON: C.typed(e.get("reasoning", e.get("reason")), str),
            "grader_type": e.get("type"),
        }
        out.append(C.Node(name, score, weight, e.get("threshold"), fields, children))
    return out


def _find_opaque(graders: list[C.Node], prefix: str, opaque: set[str]) -> None:
    """Add the paths of the groups whose score is not their children's weighted mean."""
    for g in graders:
        if g.children is None:
            continue
        path = f"{prefix}{g.name}"
        scored = [
            (c.score, 1.0 if c.weight is None else c.weight)
            for c in g.children
            if c.score is not None
        ]
        if g.score is not None and scored:
            wsum = sum(w for _s, w in scored)
            wavg = sum(w * s for s, w in scored) / wsum if wsum > 0 else 0.0
            if abs(wavg - g.score) > TOLERANCE:
                opaque.add(path)
        _find_opaque(g.children, f"{path}/", opaque)


def _executions(row: dict[str, Any], where: str) -> list[dict[str, Any]]:
    """One dict per attempt: attempt, status, score, verdict, graders."""
    trials = row.get("attempts")
    if not (isinstance(trials, list) and trials):
        return [{**row, "attempt": _sample(row) - 1}]
    out = []
    for i, raw in enumerate(trials):
        t = C.snake_keys(raw) if isinstance(raw, dict) else {}
        if not t:
            raise IngestError(f"{where}: attempts[{i}] must be an object")
        attempt = t.get("attempt", i)
        if isinstance(attempt, bool) or not isinstance(attempt, int):
            raise IngestError(f"{where}: attempts[{i}].attempt must be an integer")
        status = t.get(EXECUTION_STATUS) or row.get(EXECUTION_STATUS)
        out.append({**t, "attempt": attempt, EXECUTION_STATUS: status})
    return out


def _sample(row: dict[str, Any]) -> int:
    """`sample_index` of a run-bundle row (1-based; repeats of a test), else 1."""
    value = row.get("sample_index")
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 1


def parse(path: Path, opts: C.Options) -> C.Parsed:
    lines = [(n, C.snake_keys(obj)) for n, obj in C.iter_jsonl(path)]
    if not lines:
        raise IngestError(f"{path}: no results in this file")
    targets = [str(row.get(TARGET) or "default") for _, row in lines]
    folder = _run_folder(path)
    ids = C.run_ids(opts.run_id or (folder or path).name.removesuffix(".jsonl"), targets)
    # first pass: validate lines, build grader trees, find groups the tree cannot recompute
    items = []
    opaque: set[str] = set()
    seen: dict[tuple[str, str, int], int] = {}
    for (lineno, row), target in zip(lines, targets, strict=True):
        where = f"{path}:{lineno}"
        case = row.get("test_id", row.get("id"))
        if not isinstance(case, str | int) or isinstance(case, bool) or case == "":
            raise IngestError(f"{where}: missing `test_id` (or `testId`); every line needs one")
        rid, case = ids[target], str(case)
        first = seen.setdefault((rid, case, _sample(row)), lineno)
        if first != lineno:
            raise IngestError(
                f"{where}: test {case!r} of target {target!r} already appeared on line "
                f"{first}; hint: put repeated runs in separate files or run folders."
            )
        for ex in _executions(row, where):
            scores = ex.get("scores")
            graders = _graders(scores, where) if isinstance(scores, list) and scores else None
            _find_opaque(graders or [], "", opaque)
            items.append((where, row, target, rid, case, ex, graders))
    out = C.Parsed()
    created: dict[str, Any] = {}
    for where, row, target, rid, case, ex, graders in items:
        C.earliest(created, rid, C.parse_time(row.get("timestamp")))
        at = C.key(rid, case, ex["attempt"])
        score = C.metadata(ex.get("score"), where, "score")
        out.executions.append(
            {**at, **_execution_fields(row, ex, where), TARGET: target, C.REPORTED_SCORE: score}
        )
        if graders:
            C.emit_tree(graders, "", at, out, out.tree, opaque)
        elif score is not None:
            out.tree.setdefault(TOP_EVALUATOR, {})
            value = C.finite(score, where, "score")
            verdict = ex.get("verdict")
            out.scores.append({**at, S.EVALUATOR: TOP_EVALUATOR, S.SCORE: value, S.LABEL: verdict})
    target_of = {rid: t for t, rid in ids.items()}
    for rid, ts in created.items():
        target = target_of[rid]
        out.runs.append(C.run_row(rid, ts, target=target, **_run_extras(path, target)))
    return out


def _execution_fields(row: dict[str, Any], ex: dict[str, Any], where: str) -> dict[str, Any]:
    usage = C.snake_keys(ex.get("token_usage") or row.get("token_usage") or {})
    tags = row.get("tags")
    status = str(ex.get(EXECUTION_STATUS) or "ok").lower()
    return {
        S.STATUS: S.STATUS_ERROR if "error" in status else S.STATUS_OK,
        S.LATENCY_MS: C.metadata(
            ex.get("duration_ms", row.get("duration_ms")), where, "duration_ms"
        ),
        S.COST_USD: C.metadata(ex.get("cost_usd", row.get("cost_usd")), where, "cost_usd"),
        S.INPUT_TOKENS: C.count(
            usage.get("input", usage.get("input_tokens")), where, "input tokens"
        ),
        S.OUTPUT_TOKENS: C.count(
            usage.get("output", usage.get("output_tokens")), where, "output tokens"
        ),
        S.TAGS: [str(t) for t in tags] if isinstance(tags, list) else None,
        "suite": C.typed(row.get("suite"), str),
        EXECUTION_STATUS: ex.get(EXECUTION_STATUS),
        "reported_verdict": C.typed(ex.get("verdict"), str),
    }
