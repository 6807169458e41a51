"""The closed taxonomy of event types (alas_argo/log/events.py) is the one docs/execution-log.md states: every
documented type exists under its documented name and nothing else does. The names are stored in every log
(each event's `type`), so a renamed or dropped type would make older logs unreadable; an unknown type is
refused on append.

mutmut leaves class bodies alone, so the module has no mutmut mutants; hand mutants (bench/README.md, fifteenth
session: a type renamed or dropped) showed no test compared the enum with its documentation.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from alas_argo.errors import ContractError
from alas_argo.log import EventType, ExecutionLog, FsStore

DOC = Path(__file__).resolve().parents[2] / "docs" / "execution-log.md"


def _documented() -> set[str]:
    """The names of the `type` row: `a.*` (x, y) groups, `a.b`, and `a.b`/`c` (a.b and a.c)."""
    (row,) = [line for line in DOC.read_text(encoding="utf-8").splitlines() if line.startswith("| `type` |")]
    names: set[str] = set()
    for prefix, members in re.findall(r"`(\w+)\.\*` \(([^)]*)\)", row):
        names |= {f"{prefix}.{m.strip()}" for m in members.split(",")}
    for first, rest in re.findall(r"`(\w+\.\w+)`((?:/`\w+`)*)", row):
        names.add(first)
        names |= {f"{first.split('.')[0]}.{m}" for m in re.findall(r"/`(\w+)`", rest)}
    return names


def test_the_taxonomy_is_the_documented_one() -> None:
    assert {t.value for t in EventType} == _documented()


def test_an_unknown_type_is_refused_and_each_known_one_is_stored_by_its_name(tmp_path: Path) -> None:
    log = ExecutionLog(FsStore(tmp_path / "store"), "r")
    with pytest.raises(ContractError) as refused:
        log.append("node.timedout", payload={})
    assert refused.value.message == "unknown event type 'node.timedout'" and refused.value.where == "run r"
    event = log.append("node.timed_out", payload={})
    assert event.type is EventType.NODE_TIMED_OUT
    assert [e.type.value for e in log.events()] == ["node.timed_out"]
