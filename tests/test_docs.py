"""The documentation says what the code does: every link, path, module and command it names exists, and its
tables of contract fields and metrics are the code's.

Checked pages: ``docs/*.md`` and the top-level ``README.md``.
"""

from __future__ import annotations

import argparse
import importlib
import re
from pathlib import Path

import pytest
from pydantic import BaseModel

from alas_argo import metrics
from alas_argo.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
PAGES = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]
IDS = [str(p.relative_to(ROOT)) for p in PAGES]

_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
_SPAN = re.compile(r"`([^`\n]+)`")
_FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.M | re.S)
_HEADING = re.compile(r"^#{1,6}\s+(.*)$", re.M)
#: A repository path as the pages write it: under one of these top-level entries, or one of these files.
_PATH = re.compile(r"^(?:(?:alas_argo|tests|charts|observability|scripts|images|operators|workflows|bench|docs|\.ci)"
                   r"(?:/[\w.\-]+)*/?|README\.md|pyproject\.toml|NOTICE|kind-config\.yaml)$")
_DOTTED = re.compile(r"^alas_argo(?:\.\w+)+$")
_MODULE_FILE = re.compile(r"^[a-z_][a-z0-9_]*\.py$")


def _text(page: Path) -> str:
    return page.read_text(encoding="utf-8")


def _prose(text: str) -> str:
    """The page without its fenced code blocks."""
    return _FENCE.sub("", text)


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    return {slug(h) for h in _HEADING.findall(_prose(_text(page)))}


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_links_resolve(page: Path) -> None:
    broken = []
    for target in _LINK.findall(_prose(_text(page))):
        if re.match(r"^[a-z]+:", target):
            continue  # a URL: not ours to check offline
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            broken.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            broken.append(f"{target}: no heading with that anchor in {dest.name}")
    assert not broken, broken


def _spans(page: Path) -> list[str]:
    return [s.strip().rstrip(".,;:") for s in _SPAN.findall(_prose(_text(page)))]


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_paths_exist(page: Path) -> None:
    missing = [s for s in _spans(page) if _PATH.match(s) and not (ROOT / s).exists()]
    assert not missing, missing


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_module_files_exist(page: Path) -> None:
    """A bare module name (`lcrp.py`) names a file of the package somewhere."""
    known = {p.name for p in (ROOT / "alas_argo").rglob("*.py")} | {p.name for p in ROOT.glob("*/*.py")}
    missing = [s for s in _spans(page) if _MODULE_FILE.match(s) and s not in known]
    assert not missing, missing


def _resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            if not hasattr(obj, name):
                return False
            obj = getattr(obj, name)
        return True
    return False


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_dotted_names_resolve(page: Path) -> None:
    names = {m.group(0) for s in _SPAN.findall(_text(page)) for m in re.finditer(r"alas_argo(?:\.\w+)+", s)}
    unresolved = [n for n in sorted(names) if _DOTTED.match(n) and not _resolves(n)]
    assert not unresolved, unresolved


def _segments(text: str) -> list[str]:
    """Shell command segments of a page: its inline code spans and the lines of its code blocks, split at
    ``&&``, ``;``, ``|`` (a pipe between words) and ``#`` comments."""
    pieces = [line for block in _FENCE.findall(text) for line in block.splitlines()]
    pieces += _SPAN.findall(_prose(text))
    out = []
    for piece in pieces:
        piece = re.sub(r"\s#.*$", "", piece)
        out += [s.strip() for s in re.split(r"&&|;|\s\|\s", piece)]
    return out


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def check_command(words: list[str]) -> list[str]:
    """What is wrong with ``alas`` + ``words``: unknown (sub)commands and options (empty when it is real)."""
    parser, path, problems = build_parser(), ["alas"], []
    for raw in words:
        word = raw.replace("\\", "").strip("[]()`'\",.")
        if not word or word in ("...", "…"):
            continue
        subs = _subparsers(parser)
        if word.startswith("--"):
            option = word.split("=", 1)[0].split("|", 1)[0]
            if option not in parser._option_string_actions:
                problems.append(f"{' '.join(path)}: no option {option}")
            continue
        if subs and not word.startswith("-"):
            choices = word.split("|")
            unknown = [c for c in choices if c not in subs]
            if unknown:
                problems.append(f"{' '.join(path)}: no subcommand {', '.join(unknown)}")
                return problems
            parser, path = subs[choices[0]], [*path, choices[0]]
    return problems


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_alas_commands_exist(page: Path) -> None:
    commands = [s.split()[1:] for s in _segments(_text(page)) if s.split()[:1] == ["alas"]]
    assert commands, "no alas command found: the check would be vacuous"
    problems = [p for words in commands for p in check_command(words)]
    assert not problems, problems


def test_the_command_check_catches_mistakes() -> None:
    assert check_command(["log", "verify", "RUN"]) == []
    assert check_command(["run", "ta01", "--disrupt", "breakdown", "--seed", "7"]) == []
    assert check_command(["ir", "schema|validate|export"]) == []
    assert check_command(["log", "verfy"])
    assert check_command(["run", "ta01", "--disrupts", "x"])
    assert check_command(["frobnicate"])


def test_cluster_commands_exist() -> None:
    script = (ROOT / "scripts" / "cluster").read_text(encoding="utf-8")
    known = set(re.findall(r"^\s+([a-z0-9]+)\)", script, re.M))
    used = {s.split()[1] for page in PAGES for s in _segments(_text(page))
            if s.split()[:1] == ["scripts/cluster"] and len(s.split()) > 1}
    assert used, "no scripts/cluster command found"
    assert used <= known, used - known


def _tables_under_models(text: str) -> list[tuple[str, set[str]]]:
    """(model path, field names) for each field table that follows a heading naming a model."""
    found = []
    sections = re.split(r"^#{1,6}\s+", _prose(text), flags=re.M)
    for section in sections:
        heading, _, body = section.partition("\n")
        model = re.search(r"`(alas_argo(?:\.\w+)+)`", heading)
        rows = [r for r in body.splitlines() if r.startswith("|")]
        if not model or not rows or not rows[0].startswith("| field"):
            continue
        fields = {m.group(1) for r in rows[2:] if (m := re.match(r"\|\s*`(\w+)`", r))}
        found.append((model.group(1), fields))
    return found


def _load(dotted: str) -> type[BaseModel]:
    module, _, name = dotted.rpartition(".")
    model = getattr(importlib.import_module(module), name)
    assert isinstance(model, type) and issubclass(model, BaseModel), dotted
    return model


def test_contract_tables_match_the_models() -> None:
    tables = _tables_under_models(_text(ROOT / "docs" / "contracts.md"))
    documented = {model for model, _ in tables}
    assert {"alas_argo.jssp.instance.Instance", "alas_argo.jssp.schedule.Schedule",
            "alas_argo.jssp.disruption.Disruption", "alas_argo.jssp.verdict.ValidationReport",
            "alas_argo.jssp.repair.result.RepairResult"} <= documented
    wrong = {model: (sorted(fields), sorted(_load(model).model_fields))
             for model, fields in tables if fields != set(_load(model).model_fields)}
    assert not wrong, wrong


def test_metrics_table_matches_the_registry() -> None:
    text = _text(ROOT / "docs" / "operations.md")
    section = text.split("## Metrics", 1)[1].split("\n## ", 1)[0]
    documented = set(re.findall(r"`(alas_[a-z_]+)`", section))
    defined = {f.name + ("_total" if f.type == "counter" else "") for f in metrics.REGISTRY.collect()}
    assert documented == defined, (sorted(documented - defined), sorted(defined - documented))


def test_module_map_names_every_package_and_top_level_module() -> None:
    text = _text(ROOT / "docs" / "architecture.md")
    base = ROOT / "alas_argo"
    wanted = [f"alas_argo/{p.parent.relative_to(base)}/" for p in base.rglob("__init__.py") if p.parent != base]
    wanted += [f"alas_argo/{p.name}" for p in base.glob("*.py") if p.name != "__init__.py"]
    assert not [w for w in sorted(wanted) if f"`{w}`" not in text]


def test_module_map_rows_name_files_of_their_package() -> None:
    """In the module map, a bare module name in a package's row is a file of that package."""
    text = _text(ROOT / "docs" / "architecture.md")
    section = text.split("## Packages and modules", 1)[1].split("\n## ", 1)[0]
    wrong = []
    for row in (r for r in section.splitlines() if r.startswith("| `alas_argo/")):
        first = row.split("|")[1]
        dirs = [ROOT / d for d in re.findall(r"`(alas_argo/[\w/]+/)`", first)]
        for name in re.findall(r"`([a-z_][a-z0-9_]*\.py)`", row):
            if dirs and not any((d / name).exists() for d in dirs):
                wrong.append(f"{first.strip()}: {name}")
    assert not wrong, wrong


def test_nothing_points_at_a_design_file_the_repository_lacks() -> None:
    """The docs replaced the shared notes' DESIGN.md: no page, help text or docstring sends readers there."""
    own = Path(__file__).resolve()
    suffixes = {".py", ".md", ".yaml", ".toml", ".txt", ".json", ".tpl"}
    def shipped(p: Path) -> bool:
        rel = p.relative_to(ROOT).parts
        return p.suffix in suffixes and p != own and not any(part.startswith(".") for part in rel) and p.is_file()

    hits = [str(p.relative_to(ROOT)) for p in ROOT.rglob("*")
            if shipped(p) and "DESIGN.md" in p.read_text(encoding="utf-8", errors="replace")]
    assert not hits, hits
