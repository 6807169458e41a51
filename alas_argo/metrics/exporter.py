"""Exporting the metrics: this process's samples, the samples other processes handed to it, and the
Prometheus text exposition and HTTP endpoint that show both.

Short-lived step pods cannot be scraped; they hand their samples on (:mod:`alas_argo.metrics_outbox`), the
controller folds them in with :func:`fold_samples`, and one scrape of the controller shows its own samples plus
the folded ones.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any, NamedTuple
from wsgiref.simple_server import WSGIServer

from prometheus_client import Counter, Histogram, generate_latest, start_http_server
from prometheus_client.metrics_core import Metric
from prometheus_client.samples import Sample

from alas_argo.metrics import series
from alas_argo.metrics.series import REGISTRY, UP, label_value

__all__ = ["Point", "exposition", "fold_samples", "samples", "serve"]


class Point(NamedTuple):
    """One sample of a counter or histogram: its sample name (``alas_runs_total``, ``..._bucket``), its
    labels (sorted pairs) and its value."""

    name: str
    labels: tuple[tuple[str, str], ...]
    value: float


# Samples other processes handed to this one (short-lived step pods, through the controller): added to this
# process's own samples in the exposition, so one scrape shows both.
_folded: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
_folded_lock = threading.Lock()


def _additive() -> dict[str, tuple[str, tuple[str, ...]]]:
    """Sample names of this registry's counters and histograms -> (family, label names a sample carries)."""
    out: dict[str, tuple[str, tuple[str, ...]]] = {}
    # Every counter and histogram the series module defines (a metric added later is foldable without a list
    # to update).
    for collector in [v for v in vars(series).values() if isinstance(v, (Counter, Histogram))]:
        # The client library has no public accessor for a metric's name and label names.
        family, names = collector._name, tuple(collector._labelnames)
        if isinstance(collector, Histogram):
            out.update({f"{family}_bucket": (family, (*names, "le")), f"{family}_sum": (family, names),
                        f"{family}_count": (family, names)})
        else:
            out[f"{family}_total"] = (family, names)
    return out


_ADDITIVE = _additive()
_ADDITIVE_FAMILIES = frozenset(family for family, _ in _ADDITIVE.values())


def _exposition_order(key: tuple[str, tuple[tuple[str, str], ...]]) -> tuple[Any, ...]:
    """A histogram's series the way the client library writes them: per label set, buckets by bound, then
    count and sum."""
    name, labels = key
    le = dict(labels).get("le")
    rank = 0 if name.endswith("_bucket") else 1 if name.endswith("_count") else 2
    return tuple(kv for kv in labels if kv[0] != "le"), rank, float(le) if le is not None else 0.0


def samples() -> list[Point]:
    """This process's counter and histogram samples (what a step pod hands on), zeros included: a series
    created at 0 (both verdicts, both fallback flags) is what lets a ratio read 0 instead of "no data"."""
    return [Point(s.name, tuple(sorted(s.labels.items())), float(s.value))
            for family in REGISTRY.collect() for s in family.samples if s.name in _ADDITIVE]


def fold_samples(points: Iterable[Point]) -> int:
    """Add samples another process reported to this process's exposition; return how many were taken.

    A sample is taken only when it names one of the project's counters or histograms with exactly that
    metric's labels, its value is a finite non-negative number, and its label values pass
    :func:`label_value` (their shape, and at most ``MAX_LABEL_VALUES`` values per label, so a report cannot
    explode the number of series). They are not checked against the closed lists some counting helpers
    apply (an outcome outside ``RunOutcome``, a route outside ``HTTP_ROUTES``): a report of the same image
    never holds one, and one that did would show as its own series, not as ``other``.
    """
    taken = []
    for name, labels, value in points:
        known = _ADDITIVE.get(name)
        if known is None or tuple(k for k, _ in labels) != tuple(sorted(known[1])):
            continue
        if not (isinstance(value, (int, float)) and 0 <= value < float("inf")):
            continue
        clean = tuple((k, v if k == "le" else label_value(k, v)) for k, v in labels)
        taken.append(((name, clean), float(value)))
    with _folded_lock:
        for key, value in taken:
            _folded[key] = _folded.get(key, 0.0) + value
    return len(taken)


class _WithFolded:
    """A collector view of :data:`REGISTRY` whose samples include the folded ones."""

    def collect(self) -> Iterable[Metric]:
        with _folded_lock:
            folded = dict(_folded)
        for family in REGISTRY.collect():
            if family.name not in _ADDITIVE_FAMILIES:
                yield family
                continue
            merged = Metric(family.name, family.documentation, family.type, family.unit)
            own = {(s.name, tuple(sorted(s.labels.items()))) for s in family.samples}
            for s in family.samples:
                more = folded.get((s.name, tuple(sorted(s.labels.items()))), 0.0)
                merged.samples.append(Sample(s.name, s.labels, s.value + more, s.timestamp, s.exemplar))
            extra = sorted((k for k in folded if _ADDITIVE[k[0]][0] == family.name and k not in own),
                           key=_exposition_order)
            merged.samples.extend(Sample(name, dict(labels), folded[(name, labels)]) for name, labels in extra)
            yield merged

    def restricted_registry(self, names: Iterable[str]) -> _Restricted:
        """The view narrowed to the sample names given: the client library's endpoint calls this for
        ``/metrics?name[]=...`` (without it, such a request failed with a 500)."""
        return _Restricted(self, frozenset(names))


class _Restricted:
    """Only the samples of the names asked for, each family that has one under its own HELP/TYPE (what the
    client library's restricted registry gives)."""

    def __init__(self, view: _WithFolded, names: frozenset[str]) -> None:
        self._view, self._names = view, names

    def collect(self) -> Iterable[Metric]:
        for family in self._view.collect():
            kept = [s for s in family.samples if s.name in self._names]
            if kept:
                narrowed = Metric(family.name, family.documentation, family.type, family.unit)
                narrowed.samples = kept
                yield narrowed


def exposition() -> bytes:
    """The current metrics in the Prometheus text format (this process's and the folded ones)."""
    return generate_latest(_WithFolded())


def serve(host: str = "127.0.0.1", port: int = 9464) -> WSGIServer:
    """Serve the metrics (this process's and the folded ones, as :func:`exposition` renders them) on
    ``http://host:port/metrics`` from a daemon thread.

    Returns:
        The running server; ``server.server_port`` is the bound port (useful with ``port=0``), and
        ``server.shutdown()`` stops it.
    """
    # The client library only calls collect() on what it is given: the folded view serves like a registry.
    server, _thread = start_http_server(port, addr=host, registry=_WithFolded())
    UP.set(1)
    return server
