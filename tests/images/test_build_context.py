"""The image's build context as the engine sees it: the repository filtered by images/Dockerfile.dockerignore.

A COPY whose source the ignore file filters out fails the build (`"/workflows" not found`), and a check of
the repository alone cannot see it. The matcher follows the engine's rules (moby's patternmatcher: `*` and
`?` stay inside one path element, `**` crosses them, a pattern also matches every path below a matched
directory, `!` re-includes, the last matching pattern wins).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.images.test_dockerfile import ROOT, instructions

DOCKERIGNORE = ROOT / "images" / "Dockerfile.dockerignore"


def _pattern_regex(pattern: str) -> re.Pattern[str]:
    out = ""
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if pattern.startswith("**/", i):
            out += "(?:.*/)?"
            i += 3
            continue
        if pattern.startswith("**", i):
            out += ".*"
            i += 2
            continue
        out += {"*": "[^/]*", "?": "[^/]"}.get(ch, re.escape(ch))
        i += 1
    return re.compile(out + r"\Z")


def parse_ignore(text: str) -> list[tuple[bool, re.Pattern[str]]]:
    """(negated, regex) per rule, in file order."""
    rules: list[tuple[bool, re.Pattern[str]]] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        negated = line.startswith("!")
        pattern = line[1:].strip() if negated else line
        pattern = pattern.strip("/")
        rules.append((negated, _pattern_regex(pattern)))
    return rules


def excluded(path: str, rules: list[tuple[bool, re.Pattern[str]]]) -> bool:
    parts = path.split("/")
    prefixes = ["/".join(parts[: k + 1]) for k in range(len(parts))]
    result = False
    for negated, regex in rules:
        if any(regex.match(p) for p in prefixes):
            result = not negated
    return result


def repository_files() -> list[str]:
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.split("\n")
    return [f for f in listed if f and (ROOT / f).is_file()]


def context(rules: list[tuple[bool, re.Pattern[str]]]) -> list[str]:
    return [f for f in repository_files() if not excluded(f, rules)]


def copy_sources() -> list[str]:
    sources = []
    for kind, args in instructions((ROOT / "images" / "Dockerfile").read_text()):
        if kind != "COPY" or args.startswith("--from="):
            continue
        words = [w for w in args.split() if not w.startswith("--")]
        sources += [w.rstrip("/") for w in words[:-1]]
    return sources


def present(source: str, files: list[str]) -> bool:
    return any(f == source or f.startswith(source + "/") for f in files)


def test_matcher_follows_the_engines_rules() -> None:
    rules = parse_ignore("*\n!alas_argo/**\n**/__pycache__\n!keep/*.txt\n")
    assert excluded("README.md", rules)
    assert not excluded("alas_argo/cli/app.py", rules)
    assert excluded("alas_argo/cli/__pycache__/app.cpython-311.pyc", rules)
    assert not excluded("keep/a.txt", rules)
    assert excluded("keep/sub/a.txt", rules)


def test_the_old_ignore_file_would_have_failed_the_build() -> None:
    # The ignore file before the fix: it left workflows/ out while the Dockerfile copies it.
    old = parse_ignore("*\n!pyproject.toml\n!README.md\n!NOTICE\n!alas_argo/**\n**/__pycache__\n**/*.pyc\n")
    assert not present("workflows", context(old))


@pytest.mark.parametrize("source", copy_sources())
def test_every_copy_source_is_in_the_filtered_context(source: str) -> None:
    files = context(parse_ignore(DOCKERIGNORE.read_text()))
    assert present(source, files), f"COPY {source}: filtered out of the build context by {DOCKERIGNORE.name}"


def test_the_context_stays_small() -> None:
    files = context(parse_ignore(DOCKERIGNORE.read_text()))
    assert not any(f.startswith(("tests/", "bench/", ".git/", "charts/")) for f in files)
    assert not any("__pycache__" in f or f.endswith(".pyc") for f in files)
    assert Path(ROOT / "images" / "wheelhouse" / "README.md").is_file()
