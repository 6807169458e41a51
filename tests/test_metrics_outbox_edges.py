"""Edges of alas_argo.metrics_outbox left open by mutation testing: a report's key (its time to the microsecond,
so keys sort as the reports were written) and its bytes, the default window and owner, a poll that goes on past
another replica's claim, a report gone since the listing and malformed reports (each logged, none stopping the
poll, every good one counted), the polling loop's interval and its log line, and a store that does not answer:
the loop keeps polling, and a report this replica claimed but could not read is read on its next poll, once."""

from __future__ import annotations

import builtins
import json
import logging
import os
import re
import socket
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from alas_argo import metrics
from alas_argo.errors import AlasError, ConflictError, InputError, IntegrityError, StoreError, StoreUnavailable
from alas_argo.log import FsStore
from alas_argo.metrics_outbox import CLAIMS, OUTBOX, MetricsInbox, read_report, write_report
from tests.test_metrics_outbox import exposed

T = 1_000_001.25  # 1970-01-12 13:46:41.25 UTC: an odd second and a quarter
AT_T = "19700112T134641.250000Z"
COMPENSATED = ("alas_runs_total", "compensated")


def settled(tmp_path: Path) -> None:
    """Report what this process counted so far to a store of its own, so the next report holds only what a
    test adds and the test's store holds only the test's reports."""
    write_report(FsStore(tmp_path / "earlier"), source="earlier tests")


def hand_put(store: FsStore, stamp: str, tag: str, compensated: float) -> str:
    """A report as a step pod writes it, under a chosen key; return the key."""
    key = f"{OUTBOX}{stamp}-{tag}.json"
    doc = {"format": 1, "source": "step", "samples": [["alas_runs_total", {"outcome": "compensated"}, compensated]]}
    store.put(key=key, data=json.dumps(doc).encode())
    return key


def at(t: float) -> Callable[[], float]:
    """A clock stopped at ``t``."""
    return lambda: t


def compensated_runs() -> float:
    return exposed("alas_runs_total", outcome="compensated")


def near_t() -> float:
    """An inbox's clock a minute after T: the reports at and around T are in its window."""
    return T + 60


class Ticks(threading.Event):
    """A stop event for :meth:`MetricsInbox.run` that records each wait and lets ``polls`` polls happen,
    without waiting."""

    def __init__(self, polls: int) -> None:
        super().__init__()
        self.waits: list[float | None] = []
        self._left = polls

    def wait(self, timeout: float | None = None) -> bool:
        self.waits.append(timeout)
        if self._left == 0:
            return True
        self._left -= 1
        return False


class Failing(FsStore):
    """A local store whose ``list`` or ``get`` of a report raises the given error once."""

    def __init__(self, root: Path, *, on_list: AlasError | None = None, on_get: AlasError | None = None) -> None:
        super().__init__(root)
        self.on_list, self.on_get = on_list, on_get

    def list(self, *, prefix: str, start_after: str | None = None) -> builtins.list[str]:
        if self.on_list is not None:
            e, self.on_list = self.on_list, None
            raise e
        return super().list(prefix=prefix, start_after=start_after)

    def get(self, *, key: str) -> bytes:
        if self.on_get is not None and key.startswith(OUTBOX):
            e, self.on_get = self.on_get, None
            raise e
        return super().get(key=key)


# -- the report ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("t", "stamp"), [(T, AT_T), (1_000_001.9999995, "19700112T134641.999999Z"),
                                         (1_000_000.0, "19700112T134640.000000Z")])
def test_a_report_key_is_its_utc_time_to_the_microsecond_and_twelve_hex_digits(
        tmp_path: Path, t: float, stamp: str) -> None:
    settled(tmp_path)
    metrics.count_run_outcome(metrics.RunOutcome.COMPENSATED)
    key = write_report(FsStore(tmp_path / "s"), source="step", clock=lambda: t)
    assert key is not None and re.fullmatch(rf"metrics/{re.escape(stamp)}-[0-9a-f]{{12}}\.json", key), key


def test_report_keys_sort_as_the_reports_were_written(tmp_path: Path) -> None:
    store = FsStore(tmp_path / "s")
    keys = []
    for t in (999_999.75, 1_000_000.5, 1_000_000.500001, T, 1_000_010.0, 1_003_600.0):
        settled(tmp_path)
        metrics.count_run_outcome(metrics.RunOutcome.COMPENSATED)
        keys.append(write_report(store, source="step", clock=at(t)))
    assert store.list(prefix=OUTBOX) == keys


def test_a_report_is_compact_json_with_sorted_keys_naming_its_source(tmp_path: Path) -> None:
    settled(tmp_path)
    store = FsStore(tmp_path / "s")
    metrics.count_run_outcome(metrics.RunOutcome.COMPENSATED)
    key = write_report(store, source="step commit")
    assert key is not None
    assert store.get(key=key) == (b'{"format":1,"samples":[["alas_runs_total",{"outcome":"compensated"},1.0]],'
                                  b'"source":"step commit"}')


def test_a_document_of_another_format_is_refused_naming_the_report() -> None:
    for data in (b'{"format": 2, "samples": []}', b'{"samples": []}', b'{"format": 1, "samples": {}}', b"[1]"):
        with pytest.raises(InputError) as refused:
            read_report(data, where="fs:/s/metrics/x.json")
        assert refused.value.message == "not a metrics report of format 1"
        assert refused.value.where == "fs:/s/metrics/x.json"


# -- the inbox ----------------------------------------------------------------------------------------------


def test_the_default_window_is_the_last_600_seconds_to_the_microsecond(tmp_path: Path) -> None:
    store = FsStore(tmp_path)
    hand_put(store, AT_T, "a", 1.0)
    assert MetricsInbox(store, clock=lambda: T + 600.000001).poll() == 0  # a microsecond too old
    assert store.list(prefix=CLAIMS) == []
    assert MetricsInbox(store, clock=lambda: T + 599.999999).poll() == 1


def test_the_default_owner_is_host_pid_and_eight_hex_digits_and_marks_the_claims(tmp_path: Path) -> None:
    store = FsStore(tmp_path)
    inbox = MetricsInbox(store, clock=near_t)
    assert re.fullmatch(rf"{re.escape(socket.gethostname())}:{os.getpid()}:[0-9a-f]{{8}}", inbox.owner)
    assert MetricsInbox(store).owner != inbox.owner
    hand_put(store, AT_T, "a", 1.0)
    assert inbox.poll() == 1
    assert store.get(key=f"{CLAIMS}{AT_T}-a.json") == inbox.owner.encode()


def test_a_report_another_replica_claimed_is_passed_over_and_the_poll_goes_on(tmp_path: Path) -> None:
    store = FsStore(tmp_path)
    hand_put(store, AT_T, "a", 1.0)
    assert MetricsInbox(store, owner="replica-a", clock=near_t).poll() == 1
    hand_put(store, "19700112T134642.000000Z", "b", 2.0)
    hand_put(store, "19700112T134643.000000Z", "c", 4.0)
    before = compensated_runs()
    assert MetricsInbox(store, owner="replica-b", clock=near_t).poll() == 2
    assert compensated_runs() == before + 6.0
    owners = {k.removeprefix(CLAIMS): store.get(key=k) for k in store.list(prefix=CLAIMS)}
    assert owners == {f"{AT_T}-a.json": b"replica-a", "19700112T134642.000000Z-b.json": b"replica-b",
                      "19700112T134643.000000Z-c.json": b"replica-b"}


def test_a_report_gone_since_the_listing_is_passed_over_and_the_poll_goes_on(tmp_path: Path) -> None:
    class Expiring(FsStore):
        """Lists a report that an S3 lifecycle rule expired before it was read."""

        def list(self, *, prefix: str, start_after: str | None = None) -> builtins.list[str]:
            return sorted([*super().list(prefix=prefix, start_after=start_after), f"{OUTBOX}{AT_T}-gone.json"])

    store = Expiring(tmp_path)
    hand_put(store, "19700112T134642.000000Z", "b", 2.0)
    before = compensated_runs()
    assert MetricsInbox(store, clock=near_t).poll() == 1
    assert compensated_runs() == before + 2.0


def test_malformed_reports_are_each_logged_and_skipped_and_every_good_one_counted(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    store = FsStore(tmp_path)
    store.put(key=f"{OUTBOX}{AT_T}-a.json", data=b'{"format": 1, "samples": ')
    store.put(key=f"{OUTBOX}19700112T134641.500000Z-b.json", data=b'{"format": 2, "samples": []}')
    hand_put(store, "19700112T134642.000000Z", "c", 2.0)
    hand_put(store, "19700112T134643.000000Z", "d", 4.0)
    inbox = MetricsInbox(store, clock=near_t)
    before = compensated_runs()
    with caplog.at_level(logging.WARNING, logger="alas_argo.metrics_outbox"):
        assert inbox.poll() == 2
    assert compensated_runs() == before + 6.0
    where = store.where(OUTBOX)
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 2
    assert messages[0].startswith(f"metrics report skipped: {where}{AT_T}-a.json line 1 column ")
    assert messages[0].endswith(": invalid JSON: Expecting value")
    assert messages[1] == (f"metrics report skipped: {where}19700112T134641.500000Z-b.json: "
                           "not a metrics report of format 1")
    assert inbox.poll() == 0 and len(caplog.records) == 2  # each is skipped once


# -- the loop and a store that does not answer --------------------------------------------------------------


def test_the_loop_polls_every_five_seconds_until_stopped(tmp_path: Path) -> None:
    store = FsStore(tmp_path)
    hand_put(store, AT_T, "a", 1.0)
    ticks = Ticks(polls=2)
    before = compensated_runs()
    MetricsInbox(store, clock=near_t).run(ticks)
    assert ticks.waits == [5.0, 5.0, 5.0] and compensated_runs() == before + 1.0
    other = Ticks(polls=1)
    MetricsInbox(FsStore(tmp_path / "other"), clock=near_t).run(other, interval=0.25)
    assert other.waits == [0.25, 0.25]


def test_the_loop_stopped_before_its_first_poll_reads_nothing(tmp_path: Path) -> None:
    store = FsStore(tmp_path)
    hand_put(store, AT_T, "a", 1.0)
    MetricsInbox(store, clock=near_t).run(Ticks(polls=0))
    assert store.list(prefix=CLAIMS) == []


@pytest.mark.parametrize("error", [StoreError("listing refused", where="fs:/s"),
                                   StoreUnavailable("S3 list failed after 4 attempts", where="http://minio"),
                                   ConflictError("listing changed under the reader", where="fs:/s"),
                                   IntegrityError("a listed key is not the store's", where="fs:/s")])
def test_the_loop_logs_a_store_that_refused_or_did_not_answer_and_polls_again(
        tmp_path: Path, caplog: pytest.LogCaptureFixture, error: AlasError) -> None:
    store = Failing(tmp_path, on_list=error)
    hand_put(store, AT_T, "a", 1.0)
    before = compensated_runs()
    with caplog.at_level(logging.WARNING, logger="alas_argo.metrics_outbox"):
        MetricsInbox(store, clock=near_t).run(Ticks(polls=2), interval=0.0)
    assert [r.getMessage() for r in caplog.records] == [f"metrics reports not read this time: {error}"]
    assert compensated_runs() == before + 1.0


def test_a_claimed_report_the_store_did_not_answer_for_is_read_on_the_next_poll_once(tmp_path: Path) -> None:
    """The claim is this replica's: another replica passes over the report, and this one must read it later,
    or its counts are lost."""
    store = Failing(tmp_path, on_get=StoreUnavailable("S3 get failed after 4 attempts", where="http://minio"))
    hand_put(store, AT_T, "a", 2.0)
    first, second = MetricsInbox(store, owner="replica-a", clock=near_t), MetricsInbox(store, owner="replica-b",
                                                                                       clock=near_t)
    before = compensated_runs()
    with pytest.raises(StoreUnavailable):
        first.poll()
    assert compensated_runs() == before
    assert second.poll() == 0
    assert first.poll() == 1
    assert compensated_runs() == before + 2.0
    assert first.poll() == 0 and second.poll() == 0
    assert compensated_runs() == before + 2.0


def test_a_clock_stepped_back_does_not_fold_a_report_again(tmp_path: Path) -> None:
    """After a report has left the window (and the inbox's memory), a clock stepped back must not bring it back:
    S3 answers a create-only write of bytes identical to an existing object's as created (a retried request whose
    first answer was lost), so this replica's own claim would not stop it."""

    class ClaimsLikeS3(FsStore):
        def put_if_absent(self, *, key: str, data: bytes) -> bool:
            return super().put_if_absent(key=key, data=data) or self.get(key=key) == data

    store = ClaimsLikeS3(tmp_path)
    hand_put(store, AT_T, "a", 2.0)
    now = [T + 60]
    inbox = MetricsInbox(store, owner="replica-a", clock=lambda: now[0])
    before = compensated_runs()
    assert inbox.poll() == 1
    now[0] = T + 700  # out of the window
    assert inbox.poll() == 0
    now[0] = T + 590  # the clock stepped back 110 s
    assert inbox.poll() == 0
    assert compensated_runs() == before + 2.0
