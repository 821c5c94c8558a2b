"""The repository is self-contained: no file refers to a contract document outside it, every
relative link and every reference to a docs page resolves to a file and a heading, and every
module or folder docs/architecture.md names exists."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ["evalframe", "sql", "tests", "notebooks", "benchmarks", "docs"]
TOP_FILES = ["README.md", "CHANGELOG.md", "pyproject.toml"]
SUFFIXES = {".py", ".sql", ".md", ".ipynb", ".toml", ".yaml", ".yml", ".txt"}

# "SPEC §6", "SPEC.md", "the SPEC": a document that is not in the repository
OUTSIDE_DOC = re.compile(r"\bSPEC\b(?:\.md)?|§\s?\d")
MD_LINK = re.compile(r"\]\(([^)\s]+)\)")
DOC_REF = re.compile(r"(?<![\w/.])((?:\.\./)*docs/[\w-]+\.md)(#[\w-]+)?")


def repo_files() -> list[Path]:
    files = [ROOT / name for name in TOP_FILES]
    for folder in FOLDERS:
        files += [p for p in (ROOT / folder).rglob("*") if p.suffix in SUFFIXES]
    return sorted(p for p in files if p.is_file() and "__pycache__" not in p.parts)


def anchor(heading: str) -> str:
    """GitHub's anchor of a markdown heading."""
    text = unicodedata.normalize("NFC", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(md: Path) -> set[str]:
    out: set[str] = set()
    in_code = False
    for line in md.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            in_code = not in_code
        elif not in_code and (m := re.match(r"#{1,6}\s+(.*)", line)):
            base = anchor(m.group(1))
            name, n = base, 1
            while name in out:  # a repeated heading gets -1, -2, ...
                name, n = f"{base}-{n}", n + 1
            out.add(name)
    return out


def test_no_file_refers_to_an_outside_contract_document() -> None:
    this = Path(__file__).resolve()
    found = [
        f"{p.relative_to(ROOT)}:{i}: {line.strip()[:90]}"
        for p in repo_files()
        if p != this
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if OUTSIDE_DOC.search(line)
    ]
    assert not found, "references to a document outside the repository:\n" + "\n".join(found)


def broken_refs() -> list[str]:
    broken = []
    for p in repo_files():
        text = p.read_text(encoding="utf-8")
        targets: list[tuple[Path, str | None, str]] = []
        if p.suffix == ".md":
            for link in MD_LINK.findall(text):
                if re.match(r"[a-z]+:", link):
                    continue  # http:, https:, mailto:
                path, _, frag = link.partition("#")
                target = (p.parent / path).resolve() if path else p
                targets.append((target, frag or None, link))
        for ref, frag in DOC_REF.findall(text):
            base = ROOT if not ref.startswith("..") else p.parent
            target = (base / ref).resolve()
            if not target.exists() and p.suffix == ".md":
                target = (p.parent / ref).resolve()
            targets.append((target, frag[1:] or None, ref + frag))
        for target, frag, shown in targets:
            where = f"{p.relative_to(ROOT)}: {shown}"
            if not target.exists():
                broken.append(f"{where} (no such file)")
            elif frag and target.suffix == ".md" and frag not in anchors(target):
                broken.append(f"{where} (no such heading)")
    return sorted(set(broken))


def test_every_link_and_docs_reference_resolves() -> None:
    broken = broken_refs()
    assert not broken, "links to missing files or headings:\n" + "\n".join(broken)


ARCH_PATH = re.compile(r"`((?:evalframe|sql)/[\w./-]*)`")


def architecture_paths() -> list[str]:
    return sorted(set(ARCH_PATH.findall((ROOT / "docs/architecture.md").read_text())))


def test_architecture_names_paths() -> None:
    assert len(architecture_paths()) >= 10


@pytest.mark.parametrize("path", architecture_paths())
def test_architecture_path_exists(path: str) -> None:
    assert (ROOT / path).exists(), f"docs/architecture.md names `{path}`, which does not exist"


def test_anchor_follows_github() -> None:
    assert anchor("Composite nodes (and the root)") == "composite-nodes-and-the-root"
    assert anchor("pass@k and pass^k") == "passk-and-passk"
    assert anchor("`run_deltas`") == "run_deltas"
    assert anchor("Sizes (`--memory-limit`)") == "sizes---memory-limit"
