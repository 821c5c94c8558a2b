"""The results store: one result set per config (or grid), committed all or nothing.

Layout of a dataset's store (the default output of score, compare, sweep and demo):

    DATASET/results/result_set=<id>            -> ../.evalframe/results.store/v-<id>-<token>
    DATASET/.evalframe/results.store/v-<id>-<token>/<table>.parquet   (immutable)
    DATASET/.evalframe/results.store/v-<id>-<token>.json              (the set's manifest)
    DATASET/.evalframe/results.store/lock                             (one writer at a time)

`results/` holds nothing but one link per set, so `results/*/<table>.parquet` (with hive
partitioning: a `result_set` column) reads every set of a table in any engine. `<id>` is
the config_id of the set's config (for a sweep, the same hash over the grid's configs).

A `--out DIR` folder is a single set: `DIR` itself is the link (to
`DIR/../.evalframe/DIR.set/v-...`), so `DIR/<table>.parquet` are the set's tables.

A commit writes a complete new version folder and its manifest, then replaces the set's
link with one atomic rename (see fsops). A set holds, for one config, the tables of every
command run under it on the same inputs: re-running a command replaces that command's
tables; the tables of other commands are kept only while the input fingerprint and the
config are unchanged (else they would describe other inputs, and are dropped).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from evalframe._private import schema as S
from evalframe._private.errors import (
    CorruptManifestError,
    ResultsNotFoundError,
    SetReplacedError,
    StoreError,
)
from evalframe._private.store import fsops
from evalframe._private.store.fingerprint import input_files
from evalframe._private.store.fingerprint import inputs_fingerprint as fingerprint_of
from evalframe._private.store.fingerprint import matches as fingerprint_matches
from evalframe._private.store.fsops import INTERNALS
from evalframe._private.store.lock import writer_lock
from evalframe._private.version import __version__

SET_PREFIX = "result_set="
"""The hive partition key of a set's folder in a store."""
SET_COLUMN = "result_set"
"""The column naming the set a row comes from in all-sets reads (`NAME_all`, config_id='all')."""
MANIFEST_FORMAT = 1
METADATA_CONFIG = "evalframe.config"
METADATA_VERSION = "evalframe.version"
METADATA_SET = "evalframe.result_set"
METADATA_COMMAND = "evalframe.command"
METADATA_CREATED = "evalframe.created_at"
METADATA_KEYS = (
    METADATA_CONFIG,
    METADATA_VERSION,
    METADATA_SET,
    METADATA_COMMAND,
    METADATA_CREATED,
)


def set_id_for(config_json: str | None) -> str:
    """The id of the set of a config: its config_id (sha256 of the canonical JSON, 12 hex
    digits); for a grid, the same hash over the JSON list of its configs."""
    if config_json is None:
        return "unconfigured"
    return hashlib.sha256(config_json.encode()).hexdigest()[:12]


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="microseconds")


@dataclass(frozen=True)
class ResultSet:
    """One committed set: its id, the immutable version folder to read and its manifest."""

    set_id: str
    folder: Path
    """The version folder holding `<table>.parquet` (read from here: it never changes)."""
    slot: Path
    """The visible path of the set (results/result_set=<id>, or the --out folder)."""
    manifest: dict[str, Any] = field(default_factory=dict)

    @property
    def created_at(self) -> str:
        if "created_at" in self.manifest:
            return str(self.manifest["created_at"])
        stamp = self.folder.stat().st_mtime  # a folder of Parquet files evalframe did not write
        return dt.datetime.fromtimestamp(stamp, dt.UTC).isoformat(timespec="microseconds")

    @property
    def sequence(self) -> int:
        """The set's commit number in its store (0: recorded by no commit)."""
        value = self.manifest.get("sequence", 0)
        return value if isinstance(value, int) else 0

    def order(self) -> tuple[int, str, str]:
        """Sort key, oldest first: the commit number, then the recorded commit time (both
        from the manifest: never a path or a modification time)."""
        return (self.sequence, str(self.manifest.get("created_at", "")), self.set_id)

    def dataset(self) -> Path | None:
        """The dataset the set was computed from: recorded relative to the set's folder
        (so a copied dataset's sets judge the copy), else the recorded absolute path."""
        relative = self.manifest.get("dataset_relative")
        if isinstance(relative, str):
            return Path(os.path.normpath(self.slot.parent / relative))
        recorded = self.manifest.get("dataset")
        return Path(recorded) if isinstance(recorded, str) else None

    def _replaced(self) -> SetReplacedError:
        return SetReplacedError(
            f"result set {self.set_id} was replaced by a newer commit while it was being "
            "read; hint: read it again."
        )

    @property
    def tables(self) -> dict[str, Path]:
        """Table name -> file, for every `<table>.parquet` in the set."""
        if not self.folder.is_dir():
            raise self._replaced()
        return {p.name.removesuffix(".parquet"): p for p in sorted(self.folder.glob("*.parquet"))}

    @property
    def commands(self) -> list[str]:
        tables = self.manifest.get("tables", {})
        return sorted({t["command"] for t in tables.values() if t.get("command")})

    def rows(self) -> dict[str, int]:
        """Rows per table (from the manifest, else from the Parquet footers)."""
        known = self.manifest.get("tables", {})
        out = {}
        for name, path in self.tables.items():
            if name in known and "rows" in known[name]:
                out[name] = int(known[name]["rows"])
            else:
                import pyarrow.parquet as pq

                out[name] = pq.read_metadata(path).num_rows
        return out

    def stale(self) -> bool | None:
        """True when the dataset's input tables changed since the set was computed (or
        the dataset is gone); None when the set records no inputs."""
        recorded = self.manifest.get("inputs_fingerprint")
        dataset = self.dataset()
        if not isinstance(recorded, str) or dataset is None:
            return None
        return not fingerprint_matches(dataset, recorded)

    def describe(self, latest: bool) -> dict[str, Any]:
        """The set as a plain dict (`evalframe results --json`, `evalframe sql` result_sets)."""
        rows = self.rows()
        config = self.manifest.get("config")
        return {
            "result_set": self.set_id,
            "latest": latest,
            "commands": self.commands,
            "created_at": self.created_at,
            "configs": len(config) if isinstance(config, list) else (1 if config else None),
            "tables": rows,
            "rows": sum(rows.values()),
            "stale": self.stale(),
            "evalframe_version": self.manifest.get("evalframe_version"),
            "dataset": self.manifest.get("dataset"),
            "path": str(self.slot),
        }

    def read(self, name: str) -> pl.DataFrame:
        path = self.tables.get(name)
        if path is None and _resolved_version(self.slot) not in (None, self.folder):
            raise self._replaced()
        if path is None:
            raise ResultsNotFoundError(
                f"result set {self.set_id} has no table {name!r} (it has "
                f"{', '.join(self.tables) or 'none'})."
            )
        try:
            return pl.read_parquet(path)
        except Exception as exc:
            if not path.exists():
                raise self._replaced() from None
            raise self.damaged(name, exc) from None

    def damaged(self, name: str, exc: BaseException) -> ResultsNotFoundError:
        """The error for a table of this set that cannot be read as evalframe wrote it."""
        path = self.tables.get(name, self.folder / f"{name}.parquet")
        wrote = " / ".join(f"`evalframe {c}`" for c in self.commands) or "the command"
        return ResultsNotFoundError(
            f"result table {name} of set {self.set_id} ({path}) cannot be read as evalframe "
            f"wrote it: {type(exc).__name__}: {str(exc).splitlines()[0]}; "
            f"hint: re-run {wrote} to write the set again, or move the file away."
        )


def _manifest_path(version: Path) -> Path:
    return version.parent / f"{version.name}.json"


def _manifest_of(version: Path) -> dict[str, Any]:
    """The manifest of a version ({} when it has none); CorruptManifestError (naming the
    file) when it is not what evalframe writes."""
    path = _manifest_path(version)
    try:
        text = path.read_text()
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise _corrupt(path, f"cannot be read ({exc})") from None
    try:
        manifest = json.loads(text)
    except ValueError as exc:
        raise _corrupt(path, f"is not valid JSON ({exc})") from None
    problem = _manifest_problem(manifest)
    if problem is not None:
        raise _corrupt(path, problem)
    return manifest


def _corrupt(path: Path, problem: str) -> CorruptManifestError:
    return CorruptManifestError(
        f"the manifest of a result set, {path}, {problem}; it is evalframe's bookkeeping "
        "and was changed or damaged; hint: re-run the command that wrote the set (it "
        "writes a new version), or remove the set's link in the results folder."
    )


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _manifest_problem(m: Any) -> str | None:
    """What is wrong with a parsed manifest (None: nothing)."""
    if not isinstance(m, dict):
        return f"holds a JSON {type(m).__name__}, not an object"
    texts = ("result_set", "created_at", "command", "dataset", "dataset_relative")
    for key in (*texts, "inputs_fingerprint"):
        if m.get(key) is not None and not isinstance(m[key], str):
            return f"has {'an' if key[0] == 'i' else 'a'} {key!r} that is not a string"
    if "sequence" in m and not (_is_int(m["sequence"]) and m["sequence"] >= 0):
        return "has a 'sequence' that is not a whole number >= 0"
    tables = m.get("tables", {})
    if not isinstance(tables, dict):
        return "has 'tables' that is not an object"
    for name, info in tables.items():
        if not isinstance(info, dict):
            return f"has table {name!r} described by a {type(info).__name__}, not an object"
        if "rows" in info and not (_is_int(info["rows"]) and info["rows"] >= 0):
            return f"has table {name!r} with rows {info['rows']!r}, not a whole number >= 0"
        if info.get("command") is not None and not isinstance(info["command"], str):
            return f"has table {name!r} with a 'command' that is not a string"
    return None


def _copied_manifest(
    internals: Path, set_id: str, folder: Path
) -> tuple[dict[str, Any], str | None]:
    """The manifest of a set copied as a plain folder (`cp -rL`), and the name of the
    (copied) version it belongs to: the manifest of this set id whose tables' commit
    times are the ones recorded in the folder's Parquet files. Without one (only
    `results/` was copied), the latest commit time recorded in the files."""
    stamps: dict[str, str | None] = {}
    for path in sorted(folder.glob("*.parquet")):
        try:
            stamps[path.stem] = read_metadata(path).get(METADATA_CREATED)
        except Exception:  # not a Parquet file evalframe wrote: no stamp
            stamps[path.stem] = None
    known = [v for v in stamps.values() if v is not None]
    if not known:
        return {}, None
    if not internals.is_symlink() and internals.is_dir():
        prefix = f"v-{set_id}-"
        for entry in sorted(internals.iterdir()):
            if not (entry.name.startswith(prefix) and entry.name.endswith(".json")):
                continue
            try:
                manifest = _manifest_of(entry.with_suffix(""))
            except CorruptManifestError:
                continue
            tables = manifest.get("tables", {})
            recorded = {n: t.get("created_at") for n, t in tables.items()}
            if manifest.get("result_set") == set_id and recorded == stamps:
                return manifest, entry.name.removesuffix(".json")
    return {"created_at": max(known)}, None


def _resolved_version(slot: Path) -> Path | None:
    """The version folder a slot link points at (None: not a link, or dangling)."""
    if not slot.is_symlink():
        return None
    target = (slot.parent / os.readlink(slot)).resolve()
    return target if target.is_dir() else None


def normal_path(path: str | Path) -> Path:
    """Absolute path with the parent resolved but the last part kept (it may be a link)."""
    p = Path(path).expanduser().absolute()
    return p.parent.resolve() / p.name


def is_store(path: str | Path) -> bool:
    """A results store: a real folder whose sets are `result_set=<id>` entries."""
    p = normal_path(path)
    if p.is_symlink() or not p.is_dir():
        return False
    return ResultStore(p).internals.is_dir() or any(p.glob(f"{SET_PREFIX}*"))


def dataset_root(dataset: str | Path | None) -> Path | None:
    if dataset is None:
        return None
    d = Path(dataset).expanduser().resolve()
    return d if d.is_dir() else d.parent


def default_store(dataset: str | Path) -> Path:
    """Where score, compare and sweep write by default: DATASET/results."""
    d = Path(dataset)
    return (d if d.is_dir() else d.parent) / "results"


def inside_internals(norm: Path) -> str | None:
    """What evalframe keeps in the `.evalframe` folder `norm` is inside (None: not inside
    one): the versions of input tables or of result sets, which must never change."""
    parts = norm.parts
    if INTERNALS not in parts:
        return None
    i = parts.index(INTERNALS)
    owner = Path(*parts[:i])
    try:  # only a `.evalframe` folder that evalframe made
        made = [c.name for c in (owner / INTERNALS).iterdir()]
    except OSError:
        return None
    if not any(n == "inputs" or n.endswith((".store", ".set")) for n in made):
        return None
    sub = parts[i + 1] if len(parts) > i + 1 else ""
    if sub == "inputs":
        return f"the versions of {owner}'s input tables"
    if sub.endswith(".store"):
        return f"a result set of the results store {owner / sub.removesuffix('.store')}"
    if sub.endswith(".set"):
        return f"the result set {owner / sub.removesuffix('.set')} (an --out folder)"
    return f"evalframe's internal folder {owner / INTERNALS}"


def check_location(target: Path, dataset: str | Path | None, *, store: bool) -> None:
    """Refuse an output location that would damage the dataset or a result set, or
    cannot be written."""
    what = "results store" if store else "output folder"
    root = dataset_root(dataset)
    norm = normal_path(target)  # a set's own link (an earlier --out) is not followed
    real = target.resolve()
    if not store and is_store(norm.parent):
        raise StoreError(
            f"{what} {target} is inside the results store {norm.parent}, whose entries are "
            "result sets written by evalframe; hint: read the store's sets with `evalframe "
            "results`, or pick a folder outside it."
        )
    if root is not None and dataset is not None and Path(dataset).exists():
        if real == root or root.is_relative_to(real):
            raise StoreError(
                f"{what} {target} holds the dataset {root}; writing there would replace "
                "the input tables; hint: use a new folder, e.g. DATASET/results or --out out/."
            )
        for name in S.STORED_INPUT_TABLES:
            for p in (root / name, root / f"{name}.parquet"):
                inside = norm == p or norm.is_relative_to(p)
                if inside or real == p.resolve() or real.is_relative_to(p.resolve()):
                    raise StoreError(
                        f"{what} {target} is inside the dataset's input table {name}; "
                        "writing there would turn outputs into input rows; hint: pick a "
                        f"folder outside {root}'s input tables, e.g. {root / 'results'}."
                    )
    owner = inside_internals(norm)
    if owner is not None:
        raise StoreError(
            f"{what} {target} is inside {owner}, which evalframe keeps unchanged; hint: "
            "pick a folder outside it, e.g. --out out/."
        )
    fsops.check_writable_folder(target, what)


# --- committing ------------------------------------------------------------------------------
def _refusal(out: Path, dataset: Path) -> StoreError | None:
    """`check_location`'s refusal of `out` as a report file (None: allowed); not its last
    check, that an output location is a folder: an existing report file is replaced."""
    try:
        check_location(out, dataset, store=False)
    except StoreError as exc:
        try:
            if out.is_file():
                fsops.check_writable_folder(out, "output folder")
        except StoreError as folder_exc:
            if str(folder_exc) == str(exc):
                return None
        return exc
    return None


def check_report_path(out: Path, dataset: Path, default: Path) -> None:
    """Refuse a report file that would damage the dataset or a result set: the locations
    `score --out` refuses (an input table, a results store, a version folder of a result
    set: `check_location`), a folder, or a link (the file is replaced, which would remove
    a link evalframe did not write). StoreError (exit 2) names the path and suggests
    `default`, the report's default path."""
    refused = _refusal(out, dataset)
    if refused is not None:
        raise StoreError(
            f"{refused} For the report, --out names the HTML file to write, e.g. "
            f"--out {default} (the default)."
        )
    if out.is_symlink():
        raise StoreError(
            f"report file {out} is a link; the report replaces the file at its path, which "
            "would remove a link evalframe did not write; hint: pass a new file name, e.g. "
            f"--out {default}."
        )
    if out.is_dir():
        inside = out / "report.html"
        raise StoreError(
            f"report file {out} is a folder; --out names the HTML file to write; hint: "
            f"--out {default if _refusal(inside, dataset) else inside}."
        )
    fsops.check_writable_folder(out.parent, "report folder")


def _cleanup(internals: Path, referenced: set[str]) -> None:
    """Remove what interrupted commits left: scratch links and unreferenced versions
    (only inside `internals` itself: never through a link to another folder)."""
    if internals.is_symlink() or not internals.is_dir():
        return
    for entry in fsops.leftovers(internals, referenced):
        fsops.remove_tree(entry)


def _commit_version(
    internals: Path,
    slot: Path,
    set_id: str,
    frames: Mapping[str, pl.DataFrame | pl.LazyFrame],
    carry: dict[str, Path],
    manifest: dict[str, Any],
    metadata: dict[str, str],
) -> ResultSet:
    """Write a complete version and its manifest, then swap the slot's link to it. What
    an ordinary failure (disk full) half-wrote is removed before the error is raised."""
    version = internals / f"v-{set_id}-{fsops.token()}"
    os.mkdir(version)
    try:
        for name, frame in frames.items():
            fsops.write_parquet(frame, version / f"{name}.parquet", metadata)
        for name, src in carry.items():
            fsops.link_or_copy(src, version / f"{name}.parquet")
        fsops.fsync_path(version)
        fsops.write_bytes(
            _manifest_path(version), json.dumps(manifest, indent=2, sort_keys=True).encode()
        )
        fsops.fsync_path(internals)
        old = fsops.own_version(slot, internals)  # only ever one of our own versions
        if slot.is_dir() and not slot.is_symlink():  # an empty folder made by the user
            os.rmdir(slot)
    except Exception:
        with contextlib.suppress(OSError):
            fsops.remove_tree(version)
            fsops.remove_tree(_manifest_path(version))
        raise
    fsops.swap_link(slot, os.path.relpath(version, slot.parent), internals)  # the commit
    if old is not None and old != version:
        with contextlib.suppress(OSError):  # best effort: else the next writer removes it
            fsops.remove_tree(old)
            fsops.remove_tree(_manifest_path(old))
    return ResultSet(set_id, version, slot, manifest)


def _manifest(
    set_id: str,
    command: str | None,
    config_json: str | None,
    frames: Mapping[str, pl.DataFrame | pl.LazyFrame],
    dataset: str | Path | None,
    fingerprint: str | None,
    created_at: str,
    kept: Mapping[str, Any],
    *,
    base: Path,
    sequence: int,
) -> tuple[dict[str, Any], dict[str, str]]:
    """The manifest of a commit and the key-value metadata of its Parquet files. `base`:
    the folder the set's link is in (the dataset is also recorded relative to it);
    `sequence`: the commit's number in its store (what "latest" is ordered by)."""
    tables = dict(kept)
    for name, frame in frames.items():
        tables[name] = {
            "rows": frame.lazy().select(pl.len()).collect().item(),
            "columns": frame.collect_schema().names(),
            "command": command,
            "created_at": created_at,
        }
    where = Path(dataset).resolve() if dataset is not None else None
    metadata = {
        METADATA_VERSION: __version__,
        METADATA_SET: set_id,
        METADATA_CREATED: created_at,
        METADATA_CONFIG: config_json,
        METADATA_COMMAND: command,
    }
    manifest = {
        "format": MANIFEST_FORMAT,
        "result_set": set_id,
        "config_id": set_id,
        "config": json.loads(config_json) if config_json is not None else None,
        "evalframe_version": __version__,
        "command": command,
        "created_at": created_at,
        "dataset": str(where) if where is not None else None,
        "dataset_relative": os.path.relpath(where, base.resolve()) if where is not None else None,
        "sequence": sequence,
        "inputs_fingerprint": fingerprint,
        "inputs": input_files(dataset) if dataset is not None and Path(dataset).exists() else None,
        "tables": dict(sorted(tables.items())),
    }
    return manifest, {k: v for k, v in metadata.items() if v is not None}


class _Sets:
    """What a results store and a `--out` folder share: reading their sets, and a commit
    that writes a whole new version, then swaps one link (all or nothing), under the
    writer lock (one writer at a time)."""

    STORE = False
    WHAT = ""
    """How errors name the location."""
    SUFFIX = ""
    """The location's folder in `.evalframe`: `<name>.store` or `<name>.set`."""

    def __init__(self, path: str | Path, *, lock_timeout: float | None = None):
        self.path = normal_path(path)
        self.internals = self.path.parent / INTERNALS / f"{self.path.name}.{self.SUFFIX}"
        self.lock_timeout = lock_timeout

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self.path)!r})"

    def sets(self) -> list[ResultSet]:
        raise NotImplementedError

    def latest(self) -> ResultSet | None:
        sets = self.sets()
        return sets[-1] if sets else None

    def read(self, name: str, config_id: str | None = None) -> pl.DataFrame:
        return read_from_sets(self.sets(), name, config_id, where=str(self.path))

    def _slot(self, set_id: str) -> Path:
        return self.path

    def _check_slot(self, slot: Path) -> None:
        """Refuse to replace a slot that is not evalframe's (nothing is touched)."""

    def _referenced(self) -> set[str]:
        """The versions a set uses (never removed by a cleanup)."""
        version = _resolved_version(self.path)
        return {version.name} if version is not None else set()

    def _sequence(self, old: dict[str, Any]) -> int:
        """The commit's number: 1 + the highest of the location's sets."""
        return int(old.get("sequence", 0)) + 1  # (a manifest's sequence is a whole number)

    def _carried(
        self,
        old: dict[str, Any],
        version: Path | None,
        command: str | None,
        frames: Mapping[str, Any],
        fingerprint: str | None,
    ) -> tuple[dict[str, Path], dict[str, Any]]:
        """Tables of the old version the new one keeps (file, manifest entry)."""
        return {}, {}

    def commit(
        self,
        command: str | None,
        config_json: str | None,
        tables: Mapping[str, pl.DataFrame | pl.LazyFrame],
        *,
        dataset: str | Path | None = None,
        inputs_fingerprint: str | None = None,
        set_id: str | None = None,
    ) -> ResultSet:
        """Commit `tables` as the set of `config_json` (a store: replacing `command`'s
        tables of that set; a folder: replacing its set), all or nothing; one writer at
        a time."""
        if self.STORE and self.path.is_symlink():
            raise StoreError(
                f"{self.path} holds a single result set (written with --out or "
                "write_tables(..., store=False)), not a results store; hint: move it away or "
                "pass --out to write elsewhere."
            )
        check_location(self.path, dataset, store=self.STORE)
        set_id = set_id or set_id_for(config_json)
        if inputs_fingerprint is None and dataset is not None:
            inputs_fingerprint = fingerprint_of(dataset)
        for name in tables:
            if not name or "/" in name or name.startswith((".", "_")):
                raise StoreError(f"table name {name!r} cannot be a file name; hint: use a_b_c.")
        # LazyFrames stay lazy: they are streamed into their files (sink_parquet), so a
        # table larger than memory (the pipeline's spilled execution_scores) never is in it
        fsops.check_own_internals(self.path.parent, self.internals)
        slot = self._slot(set_id)
        self._check_slot(slot)  # (again under the lock)
        try:
            slot.parent.mkdir(parents=True, exist_ok=True)
            with writer_lock(
                self.internals,
                f"{self.WHAT} {self.path}",
                timeout=self.lock_timeout,
                label=command or "",
            ):
                self._check_slot(slot)  # before anything is removed
                _cleanup(self.internals, self._referenced())
                created = _now()
                old_version = fsops.own_version(slot, self.internals)
                old: dict[str, Any] = {}
                if old_version is not None:
                    with contextlib.suppress(CorruptManifestError):  # replaced: carry nothing
                        old = _manifest_of(old_version)
                carry, kept = self._carried(old, old_version, command, tables, inputs_fingerprint)
                manifest, metadata = _manifest(
                    set_id,
                    command,
                    config_json,
                    tables,
                    dataset,
                    inputs_fingerprint,
                    created,
                    kept,
                    base=slot.parent,
                    sequence=self._sequence(old),
                )
                result = _commit_version(
                    self.internals, slot, set_id, tables, carry, manifest, metadata
                )
                self._after_commit()
                return result
        except OSError as exc:
            # remove this commit's leftovers; never under another writer's feet: only when
            # the lock can be had at once
            lock = writer_lock(self.internals, "cleanup", timeout=0.0, on_wait=lambda _m: None)
            with contextlib.suppress(OSError, StoreError), lock:
                _cleanup(self.internals, self._referenced())
            raise fsops.os_error(exc, f"{self.WHAT} {self.path}") from exc

    def _after_commit(self) -> None:
        pass


class ResultStore(_Sets):
    """A folder of result sets side by side (`result_set=<id>`), one per config or grid."""

    STORE = True
    WHAT = "results store"
    SUFFIX = "store"

    def slot(self, set_id: str) -> Path:
        return self.path / f"{SET_PREFIX}{set_id}"

    _slot = slot

    def _entries(self) -> list[Path]:
        return sorted(self.path.glob(f"{SET_PREFIX}*")) if self.path.is_dir() else []

    def _set_of(self, entry: Path) -> tuple[ResultSet, str | None] | None:
        """The set of an entry with the name of the version holding its manifest. Links
        to anything but this store's own versions are no sets (never read through). A
        plain folder (a store copied with `cp -rL`) gets the copied manifest whose tables
        it holds."""
        set_id = entry.name.removeprefix(SET_PREFIX)
        version = fsops.own_version(entry, self.internals)
        if version is not None:
            return ResultSet(set_id, version, entry, _manifest_of(version)), version.name
        if entry.is_dir() and not entry.is_symlink():  # a copied store: plain folders
            manifest, name = _copied_manifest(self.internals, set_id, entry)
            return ResultSet(set_id, entry, entry, manifest), name
        return None

    def sets(self) -> list[ResultSet]:
        """Every complete set, oldest first (a reader: never blocks, never waits)."""
        found = [s for entry in self._entries() if (s := self._set_of(entry)) is not None]
        return sorted((s for s, _ in found), key=ResultSet.order)

    def get(self, set_id: str) -> ResultSet:
        for s in self.sets():
            if s.set_id == set_id:
                return s
        known = ", ".join(s.set_id for s in self.sets()) or "none"
        raise ResultsNotFoundError(
            f"no result set {set_id!r} in {self.path} (sets: {known}); hint: "
            "`evalframe results DATASET` lists them."
        )

    def _referenced(self) -> set[str]:
        """Versions a set uses: linked to, or holding a copied set's manifest."""
        refs = set()
        for entry in self._entries():
            if entry.is_symlink():
                target = (entry.parent / os.readlink(entry)).resolve()
                refs.add(target.name)  # even a dangling link: never remove its target
            elif entry.is_dir():
                with contextlib.suppress(CorruptManifestError, OSError):
                    found = self._set_of(entry)
                    if found is not None and found[1] is not None:
                        refs.add(found[1])
        return refs

    def _sequence(self, old: dict[str, Any]) -> int:
        """1 + the highest commit number of the store's sets (corrupt manifests count 0)."""
        top = 0
        for entry in self._entries():
            with contextlib.suppress(CorruptManifestError):
                found = self._set_of(entry)
                top = max(top, found[0].sequence if found is not None else 0)
        return top + 1

    def _check_slot(self, slot: Path) -> None:
        """Refuse to replace a slot that is not evalframe's: a link to anything but one of
        this store's versions, a file, or a folder holding files (e.g. a set copied with
        `cp -rL`). Missing, one of our links, or an empty folder is fine."""
        if slot.is_symlink():
            if not fsops.is_own_link(slot, self.internals):
                raise fsops.foreign_link_error(slot, "result set")
        elif slot.exists() and not slot.is_dir():
            raise StoreError(
                f"result set {slot} is a file, not a link evalframe wrote; evalframe touched "
                "nothing; hint: move it away and re-run."
            )
        elif slot.exists() and any(slot.iterdir()):
            raise StoreError(
                f"result set {slot} is a folder of files (a copy made with `cp -rL`?), not the "
                "link evalframe writes; evalframe replaces no folder it did not make and "
                f"touched nothing; hint: move {slot} away (or write with --out elsewhere) and "
                "re-run."
            )

    def _carried(
        self,
        old: dict[str, Any],
        version: Path | None,
        command: str | None,
        frames: Mapping[str, Any],
        fingerprint: str | None,
    ) -> tuple[dict[str, Path], dict[str, Any]]:
        """The old set's tables of other commands that stay valid (same inputs)."""
        carry: dict[str, Path] = {}
        kept: dict[str, Any] = {}
        if version is None or command is None or fingerprint is None:
            return carry, kept
        if old.get("inputs_fingerprint") != fingerprint:
            return carry, kept
        for name, info in old.get("tables", {}).items():
            path = version / f"{name}.parquet"
            if name in frames or info.get("command") in (None, command) or not path.is_file():
                continue
            carry[name], kept[name] = path, info
        return carry, kept

    def _after_commit(self) -> None:
        """Remove the flat `<table>.parquet` and `.tmp` files of evalframe < 0.3."""
        with contextlib.suppress(OSError):
            for entry in self.path.iterdir():
                if entry.is_symlink() or not entry.is_file():
                    continue
                temp = entry.name.startswith(".") and entry.name.endswith(".tmp")
                ours = entry.suffix == ".parquet" and METADATA_VERSION in read_metadata(entry)
                if temp or ours:
                    entry.unlink(missing_ok=True)


class ResultFolder(_Sets):
    """A `--out DIR` folder: one set whose tables are DIR/<table>.parquet. DIR is a link
    to a version folder in DIR/../.evalframe/DIR.set/, swapped atomically per commit."""

    WHAT = "output folder"
    SUFFIX = "set"

    def sets(self) -> list[ResultSet]:
        version = _resolved_version(self.path)
        if version is not None:
            ours = fsops.is_own_link(self.path, self.internals)
            manifest = _manifest_of(version) if ours else {}
            set_id = manifest.get("result_set") or self.path.name
            return [ResultSet(set_id, version, self.path, manifest)]
        if self.path.is_dir() and any(self.path.glob("*.parquet")):  # a plain folder
            return [ResultSet(self.path.name, self.path, self.path, {})]
        return []

    def _check_slot(self, slot: Path) -> None:
        if slot.is_symlink() and not fsops.is_own_link(slot, self.internals):
            raise StoreError(
                f"output folder {slot} is a link not written by evalframe; hint: pick a new "
                "folder for --out."
            )
        if not slot.is_symlink() and slot.exists():
            if not slot.is_dir():
                raise StoreError(f"output folder {slot} is a file; hint: pick a folder path.")
            if any(slot.iterdir()):
                raise StoreError(
                    f"output folder {slot} already holds files not written as an evalframe "
                    "result set; --out replaces the whole folder with the set, so it must be "
                    "new, empty, or an earlier --out of evalframe; hint: pick a new folder "
                    "or empty this one."
                )


# --- reading ---------------------------------------------------------------------------------
def read_from_sets(
    sets: list[ResultSet], name: str, config_id: str | None, *, where: str
) -> pl.DataFrame:
    """One table of the latest set (None), of one set (its id), or of all sets ('all',
    with a `result_set` column)."""
    if not sets:
        raise ResultsNotFoundError(
            f"no result sets in {where}; hint: run `evalframe score DATASET` first."
        )
    having = [s for s in sets if name in s.tables]
    if config_id == "all":
        if not having:
            raise ResultsNotFoundError(_missing(name, sets, where))
        frames = [s.read(name).with_columns(pl.lit(s.set_id).alias(SET_COLUMN)) for s in having]
        return pl.concat(frames, how="diagonal_relaxed")
    matches = [s for s in sets if config_id in (None, s.set_id)]
    if not matches:
        raise ResultsNotFoundError(
            f"no result set {config_id!r} in {where} (sets: {', '.join(s.set_id for s in sets)}); "
            "hint: `evalframe results DATASET` lists them; config_id='all' reads every set."
        )
    chosen = matches[-1] if config_id is None else matches[0]
    if name not in chosen.tables:
        raise ResultsNotFoundError(
            _missing(name, sets, where, chosen=chosen, latest=config_id is None)
        )
    return chosen.read(name)


def _missing(
    name: str,
    sets: list[ResultSet],
    where: str,
    *,
    chosen: ResultSet | None = None,
    latest: bool = False,
) -> str:
    others = [s.set_id for s in sets if name in s.tables]
    head = (
        f"the {'latest ' if latest else ''}result set {chosen.set_id} in {where} has no table "
        f"{name!r} (it has {', '.join(chosen.tables)})"
        if chosen is not None
        else f"no result set in {where} has a table {name!r}"
    )
    hint = (
        f"; it is in set(s) {', '.join(others)}: pass config_id=<id>, or 'all'"
        if others
        else "; hint: run the command that writes it (score, compare or sweep)"
    )
    return head + hint + "."


def looks_like_dataset(path: Path) -> bool:
    """A DuckDB file, or a folder holding a `scores` table."""
    return path.is_file() or (path / f"{S.SCORES}.parquet").is_file() or (path / S.SCORES).is_dir()


def open_results(path: str | Path) -> ResultStore | ResultFolder:
    """The results at `path`: a dataset (its DATASET/results), a store, or one set's folder
    (an --out folder, or any folder of `<table>.parquet` files). A path that does not exist
    is a ResultsNotFoundError."""
    p = normal_path(path)
    if not p.exists() and not p.is_symlink():
        raise ResultsNotFoundError(
            f"{path} does not exist; hint: pass a dataset folder, a results store or a "
            "folder written with --out."
        )
    if p.exists() and not p.is_symlink() and looks_like_dataset(p):
        p = normal_path(default_store(p))
    if is_store(p):
        return ResultStore(p)
    if p.is_symlink() or (p.is_dir() and any(p.glob("*.parquet"))):
        return ResultFolder(p)
    return ResultStore(p)


def read_results(
    dataset_or_store: str | Path, table: str, config_id: str | None = None
) -> pl.DataFrame:
    """Read one result table: of the latest set (default), of one set (`config_id`: the
    set's id, a config_id or a sweep grid's id), or of every set (`config_id="all"`, with
    a `result_set` column). `dataset_or_store` is a dataset folder (its results/ store),
    a store, or a folder written with `--out`.

    Example: `ef.read_results("runs/", "run_summary", config_id="all")`
    """
    try:
        return open_results(dataset_or_store).read(table, config_id)
    except SetReplacedError:  # a writer replaced the set just now: read the new one
        return open_results(dataset_or_store).read(table, config_id)


def read_metadata(path: str | Path) -> dict[str, str]:
    """The evalframe key-value metadata of a Parquet file written by `write_tables`."""
    import pyarrow.parquet as pq

    raw = pq.read_metadata(path).metadata or {}
    return {k.decode(): v.decode() for k, v in raw.items() if k.decode() in METADATA_KEYS}
