"""Inspect AI logs: `.eval` (a zip of header.json + samples/*.json) and `.json` logs.
One log is one run; a sample's epochs are its attempts. See docs/ingest.md."""

from __future__ import annotations

import json
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evalframe._private import schema as S
from evalframe._private.ingest._common import (
    SOURCE_FILE,
    SOURCE_FORMAT,
    IngestError,
    Parsed,
    load_json_text,
    parse_scale_max,
    parse_time,
    read_json,
)

FORMAT = "inspect"
EPOCH = "epoch"
MODEL = "model"
TASK = "task"
EVAL_STATUS = "eval_status"
REPORTED_METRICS = "reported_metrics"
LETTERS = {"C": 1.0, "P": 0.5, "I": 0.0, "N": 0.0}
"""Inspect's value_to_float for CORRECT, PARTIAL, INCORRECT, NOANSWER."""


def _value(value: Any) -> float | None:
    """A score value as a float, as Inspect's value_to_float reads it; None if it has none."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        text = value.strip()
        if text in LETTERS:
            return LETTERS[text]
        if text.lower() in ("yes", "true"):
            return 1.0
        if text.lower() in ("no", "false"):
            return 0.0
        try:
            return float(text)
        except ValueError:
            return None
    return None


def _read_eval_zip(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise IngestError(
            f"{path}: not a readable Inspect .eval file ({exc}); hint: .eval logs are zip "
            "archives written by Inspect AI."
        ) from None
    with zf:
        names = zf.namelist()
        head_name = next((n for n in ("header.json", "_journal/start.json") if n in names), None)
        if head_name is None:
            raise IngestError(f"{path}: no header.json in this .eval archive")

        def load(name: str) -> Any:
            try:
                text = zf.read(name).decode("utf-8")
            except (UnicodeDecodeError, zipfile.BadZipFile, OSError) as exc:
                raise IngestError(f"{path}!{name}: cannot read ({exc})") from None
            return load_json_text(text, f"{path}!{name}")

        header = load(head_name)
        samples = [load(n) for n in names if n.startswith("samples/") and n.endswith(".json")]
    return header, samples


def parse(
    path: Path,
    *,
    run_id: str | None = None,
    scale_max: float | str | Mapping[str, float] | None = None,
) -> Parsed:
    """Parse one Inspect log into row dicts."""
    if path.suffix == ".eval":
        header, samples = _read_eval_zip(path)
    else:
        header = read_json(path)
        samples = header.get("samples") if isinstance(header, dict) else None
        samples = samples or []
    if not isinstance(header, dict) or not isinstance(header.get("eval"), dict):
        raise IngestError(f"{path}: not an Inspect log (no `eval` block)")
    ev = header["eval"]
    scales = parse_scale_max(scale_max, str(path))
    rid = run_id or path.stem
    out = Parsed()
    keyed = []
    for i, s in enumerate(samples):
        if not isinstance(s, dict) or "id" not in s:
            raise IngestError(f"{path}: sample {i} has no `id`")
        epoch = s.get("epoch", 1)
        if isinstance(epoch, bool) or not isinstance(epoch, int):
            raise IngestError(f"{path}: sample {s['id']!r} has a non-integer epoch {epoch!r}")
        keyed.append(((str(s["id"]), epoch), s))
    keyed.sort(key=lambda kv: (kv[0][0], kv[0][1]))
    for (case, epoch), s in keyed:
        key = {S.RUN_ID: rid, S.CASE_ID: case, S.ATTEMPT: epoch - 1}
        out.executions.append({**key, **_execution(s), EPOCH: epoch})
        scores = s.get("scores") if isinstance(s.get("scores"), dict) else {}
        for scorer, sc in scores.items():
            sc = sc if isinstance(sc, dict) else {"value": sc}
            value = sc.get("value")
            items = value.items() if isinstance(value, dict) else [(None, value)]
            for sub, v in items:
                name = scorer if sub is None else f"{scorer}/{sub}"
                num = _value(v)
                top = scales.get(name, scales.get("*", 1.0))
                scale = 1.0 if isinstance(v, str) and v.strip() in LETTERS else top
                if num is not None and not 0 <= num <= scale:
                    raise IngestError(
                        f"{path}: sample {case!r} epoch {epoch}: score {name!r} = {v!r} is "
                        f"outside 0-{scale:g}; hint: pass --scale-max for scorers on another "
                        "scale."
                    )
                expl = sc.get("explanation")
                out.scores.append(
                    {
                        **key,
                        S.EVALUATOR: name,
                        S.SCORE: num,
                        S.SCALE_MAX: scale,
                        S.LABEL: v if isinstance(v, str) else None,
                        S.REASON: expl if isinstance(expl, str) else None,
                    }
                )
    results = header.get("results")
    out.runs.append(
        {
            S.RUN_ID: rid,
            S.CREATED_AT: parse_time(ev.get("created")),
            S.LABEL: ev.get("task"),
            TASK: ev.get("task"),
            MODEL: ev.get("model"),
            EVAL_STATUS: header.get("status"),
            "eval_id": ev.get("eval_id") or ev.get("task_id"),
            REPORTED_METRICS: json.dumps(results.get("scores"))
            if isinstance(results, dict)
            else None,
            SOURCE_FILE: str(path),
            SOURCE_FORMAT: FORMAT,
        }
    )
    return out


def _execution(s: dict[str, Any]) -> dict[str, Any]:
    usage = s.get("model_usage") if isinstance(s.get("model_usage"), dict) else {}
    tin = tout = 0
    cost = None
    for u in usage.values():
        if isinstance(u, dict):
            tin += int(u.get("input_tokens") or 0)
            tout += int(u.get("output_tokens") or 0)
            if isinstance(u.get("total_cost"), int | float):
                cost = (cost or 0.0) + float(u["total_cost"])
    secs = s.get("total_time")
    error = s.get("error")
    return {
        S.STATUS: S.STATUS_ERROR if error else S.STATUS_OK,
        S.LATENCY_MS: float(secs) * 1000 if isinstance(secs, int | float) else None,
        S.COST_USD: cost,
        S.INPUT_TOKENS: tin if usage else None,
        S.OUTPUT_TOKENS: tout if usage else None,
        "error": (error.get("message") if isinstance(error, dict) else str(error))
        if error
        else None,
    }
