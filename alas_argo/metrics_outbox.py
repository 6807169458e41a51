"""The metrics of short-lived step pods, handed to the controller through the log's store.

Prometheus scrapes long-running processes; a workflow's step pod lives for seconds, so whatever it counted
(validator verdicts, commits, log-append latency, LLM tokens, run outcomes) would die with it. Instead, when
`alas step` ends it writes its counter and histogram samples as one report under ``metrics/`` in the store
every step already writes to, and the controller folds the reports into its own exposition: a panel on
``alas_validations_total`` then counts every validation of every pod, and ``rate()`` works because the
controller's counters only ever grow.

With several controller replicas each report is folded by exactly one: a replica first creates a marker
under ``metrics-claims/`` (create-only), and only the replica whose marker it is folds the report, so
``sum()`` over replicas counts each pod once. A controller reads reports written in the last ``lookback``
seconds before each poll; a report older than that when a controller starts was folded by an earlier one
(whose counters reset with it) or is not counted. A report is small (a few kilobytes) and is never
deleted by the project (the log's store is append-only); an S3 lifecycle rule on ``metrics/`` and
``metrics-claims/`` can expire them.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

from alas_argo import metrics
from alas_argo.errors import AlasError, InputError, TransientError
from alas_argo.json_limits import load_json
from alas_argo.log.store import RecordNotFound, Store

__all__ = ["CLAIMS", "OUTBOX", "MetricsInbox", "read_report", "write_report"]

log = logging.getLogger(__name__)

#: Where step pods write their reports, and where a controller claims one before folding it.
OUTBOX = "metrics/"
CLAIMS = "metrics-claims/"
_FORMAT = 1


def _stamp(t: float) -> str:
    # Sorts as it reads: a listing after the stamp of (now - lookback) starts at the window.
    return time.strftime("%Y%m%dT%H%M%S", time.gmtime(t)) + f".{int(t % 1 * 1e6):06d}Z"


# What this process reported already: a report carries only what grew since the last one, so a process
# that runs several steps (tests, a future long-lived runner) never hands the same count on twice.
_reported: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
_reported_lock = threading.Lock()


def write_report(store: Store, *, source: str, clock: Callable[[], float] = time.time) -> str | None:
    """Write what this process's counters and histograms gained since its last report as one report;
    return its key (None if nothing grew). ``source`` says who wrote it (e.g. the step kind).

    Raises:
        StoreError: The store refused or did not answer; the samples stay due for the next report.
    """
    with _reported_lock:
        now = {(p.name, p.labels): p.value for p in metrics.samples()}
        # What grew, and series that are new at 0 (the receiving side creates them too).
        grown = {k: v - _reported.get(k, 0.0) for k, v in now.items() if k not in _reported or v > _reported[k]}
        if not grown:
            return None
        key = f"{OUTBOX}{_stamp(clock())}-{uuid.uuid4().hex[:12]}.json"
        doc = {"format": _FORMAT, "source": source,
               "samples": [[name, dict(labels), value] for (name, labels), value in sorted(grown.items())]}
        store.put(key=key, data=json.dumps(doc, sort_keys=True, separators=(",", ":")).encode())
        _reported.update(now)
    return key


def read_report(data: bytes, *, where: str) -> list[metrics.Point]:
    """The samples of one report.

    Raises:
        InputError: Not a report of a format this version reads.
    """
    doc: Any = load_json(data, where=where)
    if not isinstance(doc, dict) or doc.get("format") != _FORMAT or not isinstance(doc.get("samples"), list):
        raise InputError(f"not a metrics report of format {_FORMAT}", where=where)
    points = []
    for item in doc["samples"]:
        if (isinstance(item, list) and len(item) == 3 and isinstance(item[0], str) and isinstance(item[1], dict)
                and all(isinstance(v, str) for v in item[1].values())
                and isinstance(item[2], (int, float)) and not isinstance(item[2], bool)):
            points.append(metrics.Point(item[0], tuple(sorted(item[1].items())), float(item[2])))
    return points


class MetricsInbox:
    """The controller's side: claims and folds the reports step pods wrote (see the module docstring).

    Args:
        store: The log's store the step pods write to.
        owner: This replica's claim marker content; unique per process (the default is host, pid and a
            random part), so two replicas can never both hold a claim.
        lookback: Seconds of reports read before each poll.
    """

    def __init__(self, store: Store, *, owner: str | None = None, lookback: float = 600.0,
                 clock: Callable[[], float] = time.time) -> None:
        self.store, self.lookback, self._clock = store, lookback, clock
        self.owner = owner or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._seen: set[str] = set()
        # Reports this replica claimed and could not read yet (the store did not answer): no other replica will.
        self._claimed: set[str] = set()

    def poll(self) -> int:
        """Fold every report of the window that no replica claimed before; return how many this call folded.

        Raises:
            StoreError: The store refused (the next poll tries again).
            StoreUnavailable: The store did not answer (the next poll tries again, and reads a report this
                replica claimed but could not read).
        """
        now = self._clock()
        start = f"{OUTBOX}{_stamp(now - self.lookback)}"
        folded = 0
        for key in self.store.list(prefix=OUTBOX, start_after=start):
            if key in self._seen:
                continue
            name = key[len(OUTBOX):]
            if key not in self._claimed and not self.store.put_if_absent(key=CLAIMS + name,
                                                                         data=self.owner.encode()):
                self._seen.add(key)  # another replica's
                continue
            self._claimed.add(key)
            try:
                points = read_report(self.store.get(key=key), where=self.store.where(key))
            except TransientError:
                raise  # still claimed by this replica: read on the next poll
            except RecordNotFound:
                points = None
            except AlasError as e:
                log.warning("metrics report skipped: %s", e)
                points = None
            self._seen.add(key)
            self._claimed.discard(key)
            if points is not None:
                metrics.fold_samples(points)
                folded += 1
        # Remembered for one more window: a clock stepped back lists them again, and S3 takes this replica's own
        # claim (the same bytes) for a new one.
        kept = f"{OUTBOX}{_stamp(now - 2 * self.lookback)}"
        self._seen = {k for k in self._seen if k > kept}
        self._claimed = {k for k in self._claimed if k > start}
        return folded

    def run(self, stop: threading.Event, *, interval: float = 5.0) -> None:
        """Poll every ``interval`` seconds until ``stop`` is set (meant for a daemon thread)."""
        while not stop.wait(interval):
            try:
                self.poll()
            except AlasError as e:  # any of the store's errors: the thread lives as long as the controller
                log.warning("metrics reports not read this time: %s", e)
