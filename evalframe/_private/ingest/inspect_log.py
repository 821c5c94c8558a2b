"""Inspect AI logs: `.eval` (a zip of header.json + samples/*.json) and `.json` logs.
One log is one run; a sample's epochs are its attempts. See docs/ingest.md."""

from __future__ import annotations

import math
import struct
import zipfile
import zlib
from pathlib import Path
from typing import Any

from evalframe._private import schema as S
from evalframe._private.ingest._common import (
    IngestError,
    Options,
    Parsed,
    Scales,
    as_dict,
    count,
    dump_json,
    finite,
    key,
    load_json_text,
    metadata,
    off_scale,
    parse_time,
    read_json,
    typed,
    widen,
)

EPOCH = "epoch"
MODEL = "model"
TASK = "task"
EVAL_STATUS = "eval_status"
REPORTED_METRICS = "reported_metrics"
LETTERS = {"C": 1.0, "P": 0.5, "I": 0.0, "N": 0.0}
"""Inspect's value_to_float for CORRECT, PARTIAL, INCORRECT, NOANSWER."""


def _value(value: Any) -> float | None:
    """A score value as a float, as Inspect's value_to_float reads it; None if it has none;
    NaN and infinities (numbers or text) as they are (refused where scored)."""
    if isinstance(value, float):
        return value
    if isinstance(value, int):  # bools too
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


def _letter(value: Any) -> bool:
    return isinstance(value, str) and value.strip() in LETTERS


def _scale(name: str, value: Any, scales: Scales) -> float:
    """Top of a score's raw scale: 1 for letter grades, else --scale-max (default 1)."""
    if _letter(value):
        return 1.0
    return scales.top(name)


def _at(path: Path, key: dict[str, Any], name: str) -> str:
    """Where a score value is: file, sample, epoch and score name."""
    return f"{path}: sample {key[S.CASE_ID]!r} epoch {key[S.ATTEMPT] + 1}: score {name!r}"


def _name(entry: tuple[Any, ...]) -> str:
    scorer, sub = entry[2], entry[3]
    return scorer if sub is None else f"{scorer}/{sub}"


def _unreported(results: Any, entries: list[tuple[Any, ...]], scales: Scales) -> set[str]:
    """Keys of dict-valued scores that the log's own `results.scores` does not report for
    their scorer (Inspect reports one entry per key it computed metrics for; a key without
    one, like the bounds `winrate_low` / `winrate_high` beside `winrate`, is not a score).
    Only scorers the results report at all; a key named in --scale-max is scored."""
    reported: dict[str, set[str]] = {}
    for entry in as_dict(results).get("scores") or []:
        if isinstance(entry, dict) and isinstance(entry.get("scorer"), str):
            reported.setdefault(entry["scorer"], set()).add(str(entry.get("name")))
    return {
        _name(e)
        for e in entries
        if e[3] is not None
        and e[2] in reported
        and str(e[3]) not in reported[e[2]]
        and _name(e) not in scales
    }


def _off_scale(entries: list[tuple[Any, ...]], scales: Scales) -> dict[str, tuple[float, float]]:
    """Sub-keys of dict-valued scores with a value outside their scale in some sample
    (raw counts beside 0-1 metrics): name -> (smallest, largest) value. They are kept as
    executions columns instead of scores; a plain (non-dict) score out of scale stays an
    error."""
    spans: dict[str, tuple[float, float]] = {}
    for _key, _ex, scorer, sub, v, _expl in entries:
        num = _value(v)
        if sub is None or num is None or not math.isfinite(num) or _letter(v):
            continue
        widen(spans, f"{scorer}/{sub}", num)
    return {n: (lo, hi) for n, (lo, hi) in spans.items() if lo < 0 or hi > _scale(n, None, scales)}


ZIP_ZSTD = 93
"""ZIP method 93: Zstandard. Inspect AI compresses `.eval` members with it since 0.3.206;
Python's zipfile reads it only from 3.14, so evalframe reads it itself (`zstandard`)."""
_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")
_READ_ERRORS = (
    UnicodeDecodeError,
    zipfile.BadZipFile,
    OSError,
    EOFError,
    zlib.error,
    NotImplementedError,  # a compression method zipfile lacks (other than zstd)
    RuntimeError,  # an encrypted member
    ValueError,
)


def _read_zstd_member(path: Path, info: zipfile.ZipInfo) -> bytes:
    """The bytes of a method-93 member: its raw data from the archive, decompressed with
    `zstandard` (streaming: frames may not record their size), checked against the
    size and CRC-32 the archive declares."""
    import zstandard

    if info.flag_bits & 0x1:
        raise ValueError("the member is encrypted")
    with path.open("rb") as fh:
        fh.seek(info.header_offset)
        header = fh.read(_LOCAL_HEADER.size)
        if len(header) != _LOCAL_HEADER.size or header[:4] != b"PK\x03\x04":
            raise zipfile.BadZipFile("bad local file header")
        fields = _LOCAL_HEADER.unpack(header)
        fh.seek(fields[-2] + fields[-1], 1)  # the name and extra field
        raw = fh.read(info.compress_size)
    if len(raw) != info.compress_size:
        raise EOFError("the archive ends inside the member")
    try:
        reader = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True)
        data = reader.read(info.file_size + 1)
    except zstandard.ZstdError as exc:
        raise ValueError(f"corrupt Zstandard data: {exc}") from None
    if len(data) != info.file_size:
        raise ValueError(f"{len(data)} bytes decompressed, the archive declares {info.file_size}")
    if zlib.crc32(data) != info.CRC:
        raise ValueError("CRC-32 mismatch: the member is corrupt")
    return data


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

        def load(name: str) -> Any:
            # an Inspect log may hold NaN / infinities (a one-sample stderr, a logprob):
            # kept, and refused only where a value becomes data
            try:
                info = zf.getinfo(name)
                raw = (
                    _read_zstd_member(path, info)
                    if info.compress_type == ZIP_ZSTD
                    else zf.read(info)
                )
                text = raw.decode("utf-8")
            except _READ_ERRORS as exc:
                method = zf.getinfo(name).compress_type
                raise IngestError(
                    f"{path}: member {name} (ZIP method {method}) cannot be read "
                    f"({type(exc).__name__}: {exc}); hint: the file may be truncated or "
                    "corrupt; Inspect writes members deflated (8) or Zstandard (93)."
                ) from None
            return load_json_text(text, f"{path}!{name}")

        header = load(head_name)
        samples = [load(n) for n in names if n.startswith("samples/") and n.endswith(".json")]
    return header, samples


def parse(path: Path, opts: Options) -> Parsed:
    """Parse one Inspect log into row dicts."""
    if path.suffix == ".eval":
        header, samples = _read_eval_zip(path)
    else:
        header = read_json(path)
        found = as_dict(header).get("samples")
        samples = found if isinstance(found, list) else []
    if not isinstance(header, dict) or not isinstance(header.get("eval"), dict):
        raise IngestError(f"{path}: not an Inspect log (no `eval` block)")
    ev = header["eval"]
    scales = opts.scales(path)
    rid = opts.run_id or path.stem
    out = Parsed()
    entries: list[tuple[dict[str, Any], dict[str, Any], str, str | None, Any, str | None]] = []
    # (key, execution, scorer, sub-key or None, value, explanation)
    for (case, epoch), s in _keyed(path, samples):
        at = key(rid, case, epoch - 1)
        ex = {**at, **_execution(s, f"{path}: sample {case!r} epoch {epoch}"), EPOCH: epoch}
        out.executions.append(ex)
        for scorer, sc in as_dict(s.get("scores")).items():
            sc = sc if isinstance(sc, dict) else {"value": sc}
            value = sc.get("value")
            expl = typed(sc.get("explanation"), str)
            items = value.items() if isinstance(value, dict) else [(None, value)]
            entries += [(at, ex, scorer, sub, v, expl) for sub, v in items]
    results = header.get("results")
    unreported = _unreported(results, entries, scales)
    skipped = _off_scale([e for e in entries if _name(e) not in unreported], scales)
    for at, ex, scorer, sub, v, expl in entries:
        name = scorer if sub is None else f"{scorer}/{sub}"
        if name in skipped or name in unreported:
            ex[name] = _value(v)
        else:
            out.scores.append(_score(path, at, name, v, expl, scales))
    for name in sorted(unreported):
        out.notes.append(
            f"{path.name}: {name!r} not scored: the log's own metrics do not report this key "
            "of the scorer's dict (an interval bound or a by-product, e.g. winrate_low); "
            f"kept as the executions column `{name}`; hint: --scale-max '{name}=N' scores it."
        )
    for name, (lo, hi) in skipped.items():
        top = _scale(name, None, scales)
        out.notes.append(off_scale(path.name, name, lo, hi, top, name))
    out.runs.append(
        {
            S.RUN_ID: rid,
            S.CREATED_AT: parse_time(ev.get("created")),
            S.LABEL: ev.get("task"),
            TASK: ev.get("task"),
            MODEL: ev.get("model"),
            EVAL_STATUS: header.get("status"),
            "eval_id": ev.get("eval_id") or ev.get("task_id"),
            REPORTED_METRICS: dump_json(results.get("scores"))
            if isinstance(results, dict)
            else None,
        }
    )
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


def _score(
    path: Path, at: dict[str, Any], name: str, v: Any, expl: str | None, scales: Scales
) -> dict[str, Any]:
    """The score row of one value: Inspect's value_to_float, within its scale."""
    num = _value(v)
    num = None if num is None else finite(num, _at(path, at, name), "score value")
    scale = _scale(name, v, scales)
    if num is not None and not 0 <= num <= scale:
        raise IngestError(
            f"{path}: sample {at[S.CASE_ID]!r} epoch {at[S.ATTEMPT] + 1}: score "
            f"{name!r} = {v!r} is outside 0-{scale:g}; hint: pass --scale-max for "
            "scorers on another scale."
        )
    return {
        **at,
        S.EVALUATOR: name,
        S.SCORE: num,
        S.SCALE_MAX: scale,
        S.LABEL: typed(v, str),
        S.REASON: expl,
    }


def _execution(s: dict[str, Any], where: str) -> dict[str, Any]:
    usage = as_dict(s.get("model_usage"))
    tin: int | float = 0
    tout: int | float = 0
    cost = None
    for model, u in usage.items():
        if isinstance(u, dict):
            at = f"{where}: model_usage[{model!r}]"
            tin += count(u.get("input_tokens"), at, "input_tokens") or 0
            tout += count(u.get("output_tokens"), at, "output_tokens") or 0
            if isinstance(u.get("total_cost"), int | float):
                cost = (cost or 0.0) + (metadata(u["total_cost"], at, "total_cost") or 0.0)
    if all(math.isfinite(t) for t in (tin, tout)) and max(tin, tout) >= 2**63:
        raise IngestError(f"{where}: model_usage token counts add up beyond 2^63-1")
    secs = s.get("total_time")
    if isinstance(secs, int | float):
        secs = metadata(secs, where, "total_time")
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
