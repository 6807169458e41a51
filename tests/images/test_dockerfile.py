"""Static checks of images/Dockerfile (scripts/cluster builds it for real): pinned base, multi-stage,
non-root final stage without build tools, `alas` as the entrypoint."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "images" / "Dockerfile"
BUILD_TOOLS = re.compile(r"\b(gcc|g\+\+|clang|build-essential|make|cmake|python3?-dev|libc6?-dev|cargo|rustc)\b")


def instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, with continuation lines joined and comments dropped."""
    out: list[tuple[str, str]] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line, pending = pending + line, ""
        word, _, rest = line.partition(" ")
        out.append((word.upper(), rest.strip()))
    return out


def stages(text: str) -> list[list[tuple[str, str]]]:
    found: list[list[tuple[str, str]]] = []
    for ins in instructions(text):
        if ins[0] == "FROM":
            found.append([])
        if found:
            found[-1].append(ins)
    return found


TEXT = DOCKERFILE.read_text()
STAGES = stages(TEXT)
FINAL = STAGES[-1]


def args_defaults() -> dict[str, str]:
    return dict(arg.split("=", 1) for kind, arg in instructions(TEXT) if kind == "ARG" and "=" in arg)


def test_base_image_is_pinned() -> None:
    base = args_defaults()["PYTHON_IMAGE"]
    assert re.fullmatch(r"python:3\.11\.\d+-slim-bookworm(@sha256:[0-9a-f]{64})?", base), base
    for kind, arg in instructions(TEXT):
        if kind == "FROM":
            image = arg.split()[0]
            assert image == "${PYTHON_IMAGE}" or re.search(r":\d+\.\d+\.\d+|@sha256:", image), image
            assert not image.endswith(":latest")


def test_multi_stage_with_named_build_stage() -> None:
    assert len(STAGES) >= 2
    assert STAGES[0][0][1].endswith(" AS build")
    copies = [arg for kind, arg in FINAL if kind == "COPY"]
    assert copies and all(c.startswith("--from=build ") for c in copies), "runtime copies only the venv"


def test_final_stage_runs_as_a_numeric_non_root_user() -> None:
    users = [arg for kind, arg in FINAL if kind == "USER"]
    assert users, "no USER in the final stage"
    uid = users[-1].split(":")[0]
    assert uid.isdigit() and int(uid) != 0, users[-1]
    # The chart's securityContext.runAsUser must be the same UID.
    values = (ROOT / "charts" / "alas" / "values.yaml").read_text()
    assert re.search(rf"securityContext:\s*\n\s*runAsUser: {uid}\b", values)


def test_no_build_tools_in_the_final_stage() -> None:
    for kind, arg in FINAL:
        if kind == "RUN":
            assert not BUILD_TOOLS.search(arg), arg
            assert "apt-get install" not in arg and "pip install" not in arg, arg


@pytest.mark.parametrize("stage", range(len(STAGES)))
def test_no_compiler_installed_in_any_stage(stage: int) -> None:
    for kind, arg in STAGES[stage]:
        if kind == "RUN" and "apt-get install" in arg:
            assert not BUILD_TOOLS.search(arg), arg


def test_entrypoint_is_alas() -> None:
    entry = [arg for kind, arg in FINAL if kind == "ENTRYPOINT"]
    assert entry and json.loads(entry[-1]) == ["alas"]


def test_installs_the_cluster_extra_from_the_copied_sources() -> None:
    build = STAGES[0]
    # The sources, or a wheel of them built on the host (it carries the compiled tabu search).
    install = [arg for kind, arg in build if kind == "RUN" and '"$src[cluster]"' in arg]
    assert install and "src=." in install[0] and "/wheelhouse/alas_argo-*.whl" in install[0]
    for kind, arg in build:
        if kind == "COPY" and not arg.startswith("--from"):
            *sources, _dest = arg.split()
            for src in sources:
                assert (ROOT / src).exists(), f"COPY source {src} does not exist"
    ignore = (ROOT / "images" / "Dockerfile.dockerignore").read_text().splitlines()
    assert ignore[ignore.index("*") + 1:] and "!alas_argo/**" in ignore


def test_read_only_root_filesystem_friendly() -> None:
    env = " ".join(arg for kind, arg in FINAL if kind == "ENV")
    assert "HOME=/tmp" in env and "PYTHONDONTWRITEBYTECODE=1" in env and "MPLCONFIGDIR=/tmp" in env


def test_the_parser_sees_a_bad_dockerfile(tmp_path: Path) -> None:
    """The checks above can fail: a root, single-stage file with gcc is caught by the same helpers."""
    bad = "FROM python:latest\nRUN apt-get update && \\\n    apt-get install -y gcc\nUSER root\nENTRYPOINT alas\n"
    (final,) = stages(bad)
    assert [k for k, _ in final] == ["FROM", "RUN", "USER", "ENTRYPOINT"]
    assert BUILD_TOOLS.search(final[1][1])
    assert not final[2][1].isdigit()
