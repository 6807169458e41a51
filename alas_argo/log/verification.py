"""Verification of a run's log: the hash chain, sequence gaps and every plan an event refers to.

What it proves and what it cannot: any edit of a stored event (a changed byte re-hashes differently), a
removed or inserted event in the middle (a gap, or a ``prev_hash`` that no longer matches), an event moved
between runs, and a missing or altered plan object are all detected and named by sequence number and key.
Removing events from the *end* of a run leaves a shorter but consistent chain; a hash chain alone cannot
see that (it would need the head hash anchored elsewhere), although plan objects left behind by the removed
commits show up as warnings.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from alas_argo.errors import IntegrityError
from alas_argo.log.event import GENESIS_HASH, Event, event_hash
from alas_argo.log.events import EventType
from alas_argo.log.plans import decode_plan, plan_hash
from alas_argo.log.store import RecordNotFound, Store

__all__ = ["Problem", "VerifyReport", "verify_log"]

_EVENT_NAME = re.compile(r"^(\d{8})\.json$")
_PLAN_NAME = re.compile(r"^v(\d{4,})\.json$")


class Problem(BaseModel):
    """One integrity violation."""

    model_config = ConfigDict(frozen=True)

    code: str = Field(description="gap, unreadable, bad_hash, broken_chain, seq_mismatch, run_mismatch, "
                                  "stray_key, duplicate_version, plan_missing, plan_unreadable, "
                                  "plan_hash_mismatch.")
    seq: int | None = Field(description="Sequence number of the event concerned, when there is one.")
    key: str = Field(description="Store key concerned.")
    message: str = Field(description="What is wrong, in one sentence.")


class VerifyReport(BaseModel):
    """The verdict on one run's log."""

    model_config = ConfigDict(frozen=True)

    run_id: str = Field(description="The run verified.")
    ok: bool = Field(description="True when no problem was found.")
    events: int = Field(description="Event records found.")
    versions: int = Field(description="Plan versions committed.")
    problems: list[Problem] = Field(default_factory=list, description="Violations, in sequence order.")
    warnings: list[str] = Field(default_factory=list, description="Oddities that break nothing.")

    @property
    def first_bad(self) -> Problem | None:
        """The first problem in sequence order."""
        return self.problems[0] if self.problems else None

    def summary(self) -> str:
        """One line for people."""
        if self.ok:
            return f"run {self.run_id}: intact ({self.events} events, {self.versions} plan versions)"
        bad = self.problems[0]
        at = f"event {bad.seq}" if bad.seq is not None else bad.key
        return (f"run {self.run_id}: BROKEN at {at}: {bad.message} "
                f"({len(self.problems)} problem(s); {bad.key})")

    def to_json(self) -> dict[str, Any]:
        """The report as JSON."""
        return {**self.model_dump(mode="json"),
                "first_bad": self.first_bad.model_dump(mode="json") if self.first_bad else None}


def _check_plan(store: Store, event: Event, key: str, problems: list[Problem]) -> None:
    version, where = event.payload.get("version"), f"{store.location}/{key}"
    try:
        doc = decode_plan(store.get(key=key), where=where)
    except RecordNotFound:
        problems.append(Problem(code="plan_missing", seq=event.seq, key=key,
                                message=f"plan v{version} referenced by event {event.seq} is missing"))
        return
    except IntegrityError as e:
        problems.append(Problem(code="plan_unreadable", seq=event.seq, key=key, message=e.message))
        return
    if plan_hash(doc) != event.payload.get("plan_hash"):
        problems.append(Problem(code="plan_hash_mismatch", seq=event.seq, key=key,
                                message=f"plan v{version} differs from the hash event {event.seq} recorded"))


def verify_log(store: Store, run_id: str) -> VerifyReport:
    """Verify every record of ``run_id`` in ``store`` (a fresh read: nothing cached is trusted)."""
    prefix = f"runs/{run_id}/events/"
    problems: list[Problem] = []
    by_seq: dict[int, str] = {}
    for key in store.list(prefix=prefix):
        m = _EVENT_NAME.match(key[len(prefix):])
        if m:
            by_seq[int(m.group(1))] = key
        else:
            problems.append(Problem(code="stray_key", seq=None, key=key, message="not an event record name"))
    prev: str | None = GENESIS_HASH
    expected = 0
    versions: dict[int, str] = {}
    referenced: set[str] = set()
    for seq in sorted(by_seq):
        key = by_seq[seq]
        if seq != expected:
            problems.append(Problem(code="gap", seq=expected, key=f"{prefix}{expected:08d}.json",
                                    message=f"events {expected}..{seq - 1} are missing"))
            prev = None  # the chain cannot be checked across the hole
        expected = seq + 1
        try:
            event = Event.from_bytes(store.get(key=key), where=key)
        except IntegrityError as e:
            problems.append(Problem(code="unreadable", seq=seq, key=key, message=e.message))
            prev = None
            continue
        if event.seq != seq:
            problems.append(Problem(code="seq_mismatch", seq=seq, key=key,
                                    message=f"record says seq {event.seq}"))
        if event.run_id != run_id:
            problems.append(Problem(code="run_mismatch", seq=seq, key=key,
                                    message=f"record belongs to run {event.run_id!r}"))
        if event_hash(event.body()) != event.hash:
            problems.append(Problem(code="bad_hash", seq=seq, key=key,
                                    message="content does not match its hash (edited)"))
        if prev is not None and event.prev_hash != prev:
            problems.append(Problem(code="broken_chain", seq=seq, key=key,
                                    message="prev_hash does not match the previous event"))
        prev = event.hash
        if event.type is EventType.PLAN_COMMITTED:
            version, plan_key = int(event.payload.get("version", -1)), str(event.payload.get("key", ""))
            digest = str(event.payload.get("plan_hash"))
            if versions.get(version, digest) != digest:
                problems.append(Problem(code="duplicate_version", seq=seq, key=key,
                                        message=f"plan v{version} was already committed with other content"))
            versions[version] = digest
            referenced.add(plan_key)
            _check_plan(store, event, plan_key, problems)
    warnings = [f"plan object {k} is not referenced by any event (an interrupted commit)"
                for k in store.list(prefix=f"runs/{run_id}/plans/")
                if _PLAN_NAME.match(k.rsplit("/", 1)[-1]) and k not in referenced]
    problems.sort(key=lambda p: (p.seq if p.seq is not None else -1))
    return VerifyReport(run_id=run_id, ok=not problems, events=len(by_seq), versions=len(versions),
                        problems=problems, warnings=warnings)
