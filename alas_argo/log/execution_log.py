"""The versioned execution log of one run: append-only events in a hash chain, immutable plan versions,
retractions, idempotency records, and the head that anchors them (docs/execution-log.md).

Layout under the store: see :mod:`alas_argo.log.layout`.

Opening, reading and appending events (through the head, without a lock service) belong to the chain,
:class:`~alas_argo.log.chain.EventChain`, which this class extends. Plan version numbers come from the
chain too: a committer writes the plan object at the next free number, then appends a ``plan.committed``
event whose guard re-checks, against the state of the complete chain prefix, that no other event claimed
that number (whatever plan it holds), that the idempotency key was not used, and the compare-and-swap
condition.

The plan in force ("current") is the latest committed version, in chain order, that was not retracted; a
retraction (``plan.retracted``) is how a compensation undoes a commit without editing anything.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from alas_argo import metrics
from alas_argo.errors import ConflictError, InputError, IntegrityError, StoreUnavailable
from alas_argo.log.chain import EventChain
from alas_argo.log.event import Event, canonical_json
from alas_argo.log.events import EventType
from alas_argo.log.head import LogHead, VersionRef
from alas_argo.log.idempotency import IdempotencyRecords
from alas_argo.log.layout import check_run_id, event_key, plan_key
from alas_argo.log.plans import PlanDiff, decode_plan, diff_plans, encode_plan, plan_hash
from alas_argo.log.store import RecordNotFound
from alas_argo.log.verification import VerifyReport, verify_log

# check_run_id, event_key and plan_key live in layout; re-exported here because callers import them from here.
__all__ = ["ExecutionLog", "check_run_id", "event_key", "plan_key"]

def _check_current(head: LogHead, expect: int | None, run_id: str) -> None:
    """Compare-and-swap condition of a commit: ConflictError unless ``expect`` (0: none) is in force."""
    if expect is not None and (head.current or 0) != expect:
        now = f"plan v{head.current} is current" if head.current else "no plan is current"
        raise ConflictError(f"{now}, not v{expect}", where=f"run {run_id}")


class _VersionTaken(Exception):
    """Internal: the plan version chosen was claimed by another committer first."""


class ExecutionLog(EventChain):
    """Read and append the log of one run: its events (the chain's), plan versions, idempotency records.

    Takes the arguments of :class:`~alas_argo.log.chain.EventChain`.
    """

    @property
    def _idempotency(self) -> IdempotencyRecords:
        # Stateless and cheap: built on use, so the chain's constructor serves this class unchanged.
        return IdempotencyRecords(self.store, self.run_id, self._clock, self.seal_key)

    # -- plan versions -----------------------------------------------------------------------------------

    def commit_plan(self, schedule_doc: Mapping[str, Any], *, node_id: str | None = None,
                    reason: str = "commit", parent_version: int | None = None,
                    meta: Mapping[str, Any] | None = None, attempt: int | None = None,
                    expect_current: int | None = None, idempotency_key: str | None = None) -> int:
        """Store ``schedule_doc`` as a new immutable version and record it; return the version number.

        The plan object is written first and the ``plan.committed`` event second, so an event never names
        a plan that is not there; a crash in between leaves an unreferenced object that the next commit
        skips (or re-uses when the bytes are identical) and that verify reports as a warning. A version
        number is never shared: a commit that finds its number claimed by another commit takes the next,
        even when both hold the same plan (two requests that happen to give equal plans are two commits).

        Args:
            expect_current: Compare-and-swap: commit only if this is still the version in force when the
                ``plan.committed`` event lands (checked against the complete chain prefix by the same
                create-only-if-absent put), else raise :class:`ConflictError`; ``0`` means "no plan in force".
                A writer that derived its plan from version v passes v, so no concurrent update is lost.
            idempotency_key: Exactly-once commit: when a ``plan.committed`` event with this key is already
                in the chain, its version is returned and nothing is written. Checked by the same guard,
                so it holds across a crash between the commit and any later bookkeeping (a resumed node
                re-committing with the same key gets the version it committed before the crash).
        """
        doc = json.loads(canonical_json(dict(schedule_doc)))
        data, digest = encode_plan(doc), plan_hash(doc)
        with self._lock:
            version = 0
            for _ in range(self.max_append_attempts):
                head = self._state()
                if idempotency_key is not None and (done := head.commit_keys.get(idempotency_key)) is not None:
                    return done
                # Fail before writing the plan object: a writer that is already stale leaves no orphan.
                _check_current(head, expect_current, self.run_id)
                version = max(version + 1, head.max_version + 1)
                key = plan_key(self.run_id, version)
                if not self.store.put_if_absent(key=key, data=data) and self.store.get(key=key) != data:
                    continue  # another committer's object (or a crashed commit's) holds this number

                def guard(h: LogHead, v: int = version) -> Event | None:
                    if idempotency_key is not None and (done := h.commit_keys.get(idempotency_key)) is not None:
                        ref = h.ref(done)
                        return self._event_at(ref.seq) if ref is not None else None
                    if h.ref(v) is not None:
                        raise _VersionTaken
                    _check_current(h, expect_current, self.run_id)
                    return None

                payload = {"version": version, "key": key, "plan_hash": digest, "bytes": len(data),
                           "makespan": doc.get("makespan"), "reason": reason,
                           "parent_version": parent_version, "meta": dict(meta or {})}
                if idempotency_key is not None:
                    payload["idempotency_key"] = idempotency_key
                try:
                    event = self._append({"type": EventType.PLAN_COMMITTED, "payload": payload,
                                          "node_id": node_id, "attempt": attempt,
                                          "correlation_id": self.correlation_id, "redact": []}, guard=guard)
                except _VersionTaken:
                    continue
                return int(event.payload["version"])
        raise StoreUnavailable("gave up committing a plan: every version number was taken",
                               where=self.store.where(f"runs/{self.run_id}"))

    def retract(self, version: int, *, node_id: str | None = None, reason: str = "retract",
                attempt: int | None = None) -> Event:
        """Withdraw ``version``: append ``plan.retracted``, after which the version in force is the latest
        committed one that is not retracted (or none). Nothing is deleted; retracting twice is a no-op that
        returns the first retraction.

        Raises:
            InputError: The run has no such version.
        """
        appended = [False]  # the guard's last decision: True when the append that followed was ours
        with self._lock:
            def guard(h: LogHead) -> Event | None:
                appended[0] = False
                if version in h.retracted:
                    return self._event_at(h.retracted[version])
                if h.ref(version) is None:
                    raise InputError(f"run {self.run_id} has no plan version {version} to retract",
                                     where=self.store.location)
                appended[0] = True
                return None

            event = self._append({"type": EventType.PLAN_RETRACTED, "payload": {"version": version, "reason": reason},
                                  "node_id": node_id, "attempt": attempt, "correlation_id": self.correlation_id,
                                  "redact": []}, guard=guard)
        if appended[0]:
            metrics.count_plan_retracted()
        return event

    def versions(self) -> list[int]:
        """Committed version numbers, ascending (retracted ones included: they stay readable)."""
        return sorted(r.version for r in self._state().versions)

    def retracted(self) -> list[int]:
        """Retracted version numbers, ascending."""
        return sorted(self._state().retracted)

    def current_version(self) -> int | None:
        """The version in force, or None (nothing committed, or everything retracted)."""
        return self._state().current

    def version_ref(self, version: int) -> VersionRef | None:
        """Where ``version`` is recorded and stored (and the disruption observed before it), or None."""
        return self._known().ref(version) or self._state().ref(version)

    def plan_event(self, version: int) -> Event:
        """The ``plan.committed`` event of ``version``; InputError when there is none."""
        ref = self.version_ref(version)
        if ref is None:
            raise InputError(f"run {self.run_id} has no plan version {version}", where=self.store.location)
        return self._event_at(ref.seq)

    def plan(self, version: int) -> dict[str, Any]:
        """The plan document of ``version``, checked against the hash its commit recorded.

        Raises:
            InputError: No such version. IntegrityError: the stored object is missing or altered.
        """
        ref = self.version_ref(version)
        if ref is None:
            raise InputError(f"run {self.run_id} has no plan version {version}", where=self.store.location)
        return self._load_plan(ref)

    def _load_plan(self, ref: VersionRef) -> dict[str, Any]:
        version, where = ref.version, self.store.where(ref.key)
        try:
            data = self.store.get(key=ref.key)
        except RecordNotFound:
            raise IntegrityError(f"plan v{version} is referenced by event {ref.seq} but missing",
                                 where=where) from None
        doc = decode_plan(data, where=where)
        if plan_hash(doc) != ref.plan_hash:
            raise IntegrityError(f"plan v{version} does not match the hash recorded by event {ref.seq}",
                                 where=where)
        return doc

    def current_plan(self) -> tuple[int, dict[str, Any]] | None:
        """(version, document) of the plan in force, or None (nothing committed, or all retracted)."""
        head = self._state()
        ref = None if head.current is None else head.ref(head.current)
        return None if ref is None else (ref.version, self._load_plan(ref))

    def diff(self, a: int, b: int) -> PlanDiff:
        """Operations moved and makespan change from version ``a`` to version ``b``."""
        return diff_plans(self.plan(a), self.plan(b), version_a=a, version_b=b)

    def restore(self, version: int, *, node_id: str | None = None) -> int:
        """Make ``version`` current again by committing it as a new version (nothing is ever deleted)."""
        return self.commit_plan(self.plan(version), node_id=node_id, reason=f"restore of v{version}",
                                parent_version=version)

    # -- idempotency -------------------------------------------------------------------------------------

    def idempotency_get(self, key: str) -> dict[str, Any] | None:
        """The result recorded under ``key``, or None."""
        return self._idempotency.get(key)

    def idempotency_put(self, key: str, result: Mapping[str, Any]) -> dict[str, Any]:
        """Record ``result`` under ``key`` unless a result is there already; return the winning result."""
        return self._idempotency.put(key, result)

    def idempotency_claim(self, key: str, result: Mapping[str, Any]) -> dict[str, Any]:
        """Like :meth:`idempotency_put`, but return the whole winning record (its ``hash`` included), for an
        event that should name the record it relies on."""
        return self._idempotency.claim(key, result)

    # -- the runtime's Journal protocol --------------------------------------------------------------------

    def record(self, type: EventType | str, *, node_id: str | None = None, attempt: int | None = None,
               payload: Mapping[str, Any] | None = None, redact: Iterable[str] = ()) -> None:
        """Journal protocol: append an event."""
        self.append(type, payload=payload, node_id=node_id, attempt=attempt, redact=redact)

    def get_idempotent(self, key: str) -> dict[str, Any] | None:
        """Journal protocol: the recorded result for ``key``."""
        return self.idempotency_get(key)

    def find_idempotent(self, key: str) -> tuple[dict[str, Any], str | None] | None:
        """Journal protocol: the recorded result for ``key`` and its record's hash, from one read."""
        record = self._idempotency.record(key)
        if record is None:
            return None
        digest = record.get("hash")
        return dict(record["result"]), digest if isinstance(digest, str) else None

    def put_idempotent(self, key: str, result: dict[str, Any]) -> str | None:
        """Journal protocol: record ``result`` under ``key`` (first writer wins); the winning record's hash."""
        winner = self.idempotency_claim(key, result).get("hash")
        return winner if isinstance(winner, str) else None

    # -- integrity ---------------------------------------------------------------------------------------

    def verify(self) -> VerifyReport:
        """Check the chain, the head, the seals, plan objects and idempotency records (verification.verify_log)."""
        return verify_log(self.store, self.run_id, key=self.seal_key)
