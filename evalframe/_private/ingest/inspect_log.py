"""Inspect AI logs: `.eval` (a zip of header.json + samples/*.json) and `.json` logs.
One log is one run; a sample's epochs are its attempts. See docs/ingest.md."""

from __future__ import annotations

import copy
import math
import zipfile
import zlib
from pathlib import Path
from typing import Any

import evalframe._private.ingest._common as C
from evalframe._private import schema as S
from evalframe._private.errors import IngestError

LETTERS = {"C": 1.0, "P": 0.5, "I": 0.0, "N": 0.0}
"""Inspect's value_to_float for CORRECT, PARTIAL, INCORRECT, NOANSWER."""
ZIP_ZSTD = 93
"""ZIP method 93: Zstandard. Inspect AI compresses `.eval` members with it since 0.3.206;
Python's zipfile reads it only from 3.14, so evalframe reads it itself (`zstandard`)."""
# a compression method zipfile lacks (NotImplementedError), an encrypted member (RuntimeError)
_READ_ERRORS = (UnicodeDecodeError, zipfile.BadZipFile, OSError, EOFError, zlib.error,
                NotImplementedError, RuntimeError, ValueError)  # fmt: skip
Entry = tuple[dict[str, Any], dict[str, Any], str, Any, Any, str | None]
"""A score value: (key, execution row, scorer, sub-key of a dict value or None, value,
explanation)."""


def _value(value: Any) -> float | None:
    """A score value as a float, as Inspect's value_to_float reads it; None if it has none;
    NaN and infinities (numbers or text) as they are (refused where scored)."""
    if isinstance(value, float):  # as the loader kept it: a NaN knows its line
        return value
    if isinstance(value, int):  # bools too
        return float(value)
    if not isinstance(value, str):
        return None
    text = value.strip()
    if text in LETTERS:
        return LETTERS[text]
    if text.lower() in ("yes", "true", "no", "false"):
        return float(text.lower() in ("yes", "true"))
    try:
        return float(text)
    except ValueError:
        return None


def _scale(name: str, value: Any, scales: C.Scales) -> float:
    """Top of a score's raw scale: 1 for letter grades, else --scale-max (default 1)."""
    return 1.0 if isinstance(value, str) and value.strip() in LETTERS else scales.top(name)


def _name(entry: Entry) -> str:
    return entry[2] if entry[3] is None else f"{entry[2]}/{entry[3]}"


def _unreported(results: Any, entries: list[Entry], scales: C.Scales) -> set[str]:
    """Keys of dict-valued scores that the log's own `results.scores` does not report for
    their scorer (Inspect reports one entry per key it computed metrics for; a key without
    one, like the bounds `winrate_low` / `winrate_high` beside `winrate`, is not a score).
    Only scorers the results report at all; a key named in --scale-max is scored."""
    reported: dict[str, set[str]] = {}
    for entry in C.as_dict(results).get("scores") or []:
        if isinstance(entry, dict) and isinstance(entry.get("scorer"), str):
            reported.setdefault(entry["scorer"], set()).add(str(entry.get("name")))
    return {
        _name(e)
        for e in entries
        if e[3] is not None
        and str(e[3]) not in reported.get(e[2], {str(e[3])})
        and _name(e) not in scales
    }


def _off_scale(entries: list[Entry], scales: C.Scales) -> dict[str, tuple[float, float]]:
    """Sub-keys of dict-valued scores with a value outside their scale in some sample
    (raw counts beside 0-1 metrics): name -> (smallest, largest) value. They are kept as
    executions columns instead of scores; a plain (non-dict) score out of scale stays an
    error."""
    spans: dict[str, tuple[float, float]] = {}
    for e in entries:
        num = _value(e[4])
        letter = isinstance(e[4], str) and e[4].strip() in LETTERS
        if e[3] is not None and num is not None and math.isfinite(num) and not letter:
            C.widen(spans, _name(e), num)
    return {n: (lo, hi) for n, (lo, hi) in spans.items() if lo < 0 or hi > scales.top(n)}


def _read_member(zf: zipfile.ZipFile, path: Path, name: str) -> Any:
    """A member's JSON. Zstandard members: their raw bytes (read as if stored, unchecked)
    decompressed with `zstandard` (streaming: frames may not record their size) and checked
    against the size and CRC-32 the archive declares. An Inspect log may hold NaN /
    infinities (a one-sample stderr, a logprob): kept, refused only where a value becomes
    data."""
    info = zf.getinfo(name)
    try:
        if info.compress_type != ZIP_ZSTD:
            text = zf.read(info).decode("utf-8")
        else:
            import zstandard

            raw_info = copy.copy(info)
            raw_info.compress_type, raw_info.file_size = zipfile.ZIP_STORED, info.compress_size
            del raw_info.CRC
            raw = zf.read(raw_info)
            try:
                reader = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True)
                data = reader.read(info.file_size + 1)
            except zstandard.ZstdError as exc:
                raise ValueError(f"corrupt Zstandard data: {exc}") from None
            if len(data) != info.file_size:
                raise ValueError(
                    f"{len(data)} bytes decompressed, the archive declares {info.file_size}"
                )
            if zlib.crc32(data) != info.CRC:
                raise ValueError("CRC-32 mismatch: the member is corrupt")
            text = data.decode("utf-8")
    except _READ_ERRORS as exc:
        raise IngestError(
            f"{path}: member {name} (ZIP method {info.compress_type}) cannot be read "
            f"({type(exc).__name__}: {exc}); hint: the file may be truncated or "
            "corrupt; Inspect writes members deflated (8) or Zstandard (93)."
        ) from None
    return C.load_json_text(text, f"{path}!{name}")


def _read_eval_zip(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise IngestError(
            f"{path}: not a readable Inspect .eval file ({exc}); hint: .eval logs are zip "
            "archives written by Inspect AI."
        ) from None
    with zf:
        names = zf.namelist()
        head_name = next((n for n in ("header.json", "_journal/start.json") if n in names), None)
        if head_name is None:
            raise IngestError(f"{path}: no header.json in this .eval archive")
        header = _read_member(zf, path, head_name)
        samples = [
            _read_member(zf, path, n)
            for n in names
            if n.startswith("samples/") and n.endswith(".json")
        ]
    return header, samples


def parse(path: Path, opts: C.Options) -> C.Parsed:
    if path.suffix == ".eval":
        header, samples = _read_eval_zip(path)
    else:
        header = C.read_json(path)
        found = C.as_dict(header).get("samples")
        samples = found if isinstance(found, list) else []
    if not isinstance(header, dict) or not isinstance(header.get("eval"), dict):
        raise IngestError(f"{path}: not an Inspect log (no `eval` block)")
    ev = header["eval"]
    scales = opts.scales(path)
    rid = opts.run_id or path.stem
    out = C.Parsed()
    entries: list[Entry] = []
    for (case, epoch), s in _keyed(path, samples):
        at = C.key(rid, case, epoch - 1)
        ex = {**at, **_execution(s, f"{path}: sample {case!r} epoch {epoch}"), "epoch": epoch}
        out.executions.append(ex)
        for scorer, sc in C.as_dict(s.get("scores")).items():
            sc = sc if isinstance(sc, dict) else {"value": sc}
            value, expl = sc.get("value"), C.typed(sc.get("explanation"), str)
            items = value.items() if isinstance(value, dict) else [(None, value)]
            entries += [(at, ex, scorer, sub, v, expl) for sub, v in items]
    results = header.get("results")
    unreported = _unreported(results, entries, scales)
    skipped = _off_scale([e for e in entries if _name(e) not in unreported], scales)
    for e in entries:
        at, ex, name, v = e[0], e[1], _name(e), e[4]
        if name in skipped or name in unreported:
            ex[name] = _value(v)
            continue
        where = f"{path}: sample {at[S.CASE_ID]!r} epoch {at[S.ATTEMPT] + 1}: score {name!r}"
        num = _value(v)
        num = None if num is None else C.finite(num, where, "score value")
        scale = _scale(name, v, scales)
        if num is not None and not 0 <= num <= scale:
            raise IngestError(
                f"{where} = {v!r} is outside 0-{scale:g}; hint: pass --scale-max for scorers "
                "on another scale."
            )
        row = {S.SCORE: num, S.SCALE_MAX: scale, S.LABEL: C.typed(v, str), S.REASON: e[5]}
        out.scores.append({**at, S.EVALUATOR: name, **row})
    for name in sorted(unreported):
        out.notes.append(
            f"{path.name}: {name!r} not scored: the log's own metrics do not report this key "
            "of the scorer's dict (an interval bound or a by-product, e.g. winrate_low); "
            f"kept as the executions column `{name}`; hint: --scale-max '{name}=N' scores it."
        )
    for name, (lo, hi) in skipped.items():
        out.notes.append(C.off_scale(path.name, name, lo, hi, scales.top(name), name))
    reported = C.dump_json(results.get("scores")) if isinstance(results, dict) else None
    row = {**C.run_row(rid, C.parse_time(ev.get("created"))), S.LABEL: ev.get("task")}
    row.update(task=ev.get("task"), model=ev.get("model"), eval_status=header.get("status"))
    row.update(eval_id=ev.get("eval_id") or ev.get("task_id"), reported_metrics=reported)
    out.runs.append(row)
    return out


def _keyed(path: Path, samples: list[Any]) -> list[tuple[tuple[str, int], dict[str, Any]]]:
    """((case id, epoch), sample) of every sample, sorted."""
    keyed = []
    for i, s in enumerate(samples):
        if not isinstance(s, dict) or "id" not in s:
            raise IngestError(f"{path}: sample {i} has no `id`")
        epoch = s.get("epoch", 1)
        if isinstance(epoch, bool) or not isinstance(epoch, int):
            raise IngestError(f"{path}: sample {s['id']!r} has a non-integer epoch {epoch!r}")
        if epoch < 1:
            raise IngestError(
                f"{path}: sample {s['id']!r} has epoch {epoch}; Inspect counts epochs from 1."
            )
        keyed.append(((str(s["id"]), epoch), s))
    return sorted(keyed, key=lambda kv: kv[0])


def _execution(s: dict[str, Any], where: str) -> dict[str, Any]:
    usage = C.as_dict(s.get("model_usage"))
    tin: int | float = 0
    tout: int | float = 0
    cost = None
    for model, u in usage.items():
        if isinstance(u, dict):
            at = f"{where}: model_usage[{model!r}]"
            tin += C.count(u.get("input_tokens"), at, "input_tokens") or 0
            tout += C.count(u.get("output_tokens"), at, "output_tokens") or 0
            if isinstance(u.get("total_cost"), int | float):
                cost = (cost or 0.0) + (C.metadata(u["total_cost"], at, "total_cost") or 0.0)
    if all(math.isfinite(t) for t in (tin, tout)) and max(tin, tout) >= 2**63:
        raise IngestError(f"{where}: model_usage token counts add up beyond 2^63-1")
    secs = s.get("total_time")
    secs = C.metadata(secs, where, "total_time") if isinstance(secs, int | float) else None
    error = s.get("error")
    return {
        S.STATUS: S.STATUS_ERROR if error else S.STATUS_OK,
        S.LATENCY_MS: None if secs is None else float(secs) * 1000,
        S.COST_USD: cost,
        S.INPUT_TOKENS: tin if usage else None,
        S.OUTPUT_TOKENS: tout if usage else None,
        "error": (error.get("message") if isinstance(error, dict) else str(error))
        if error
        else None,
    }
