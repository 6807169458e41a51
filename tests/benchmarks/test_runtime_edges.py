"""`alas bench runtime`'s arithmetic and wiring, with the clocks and the runtime replaced.

The one real run (tests/cli/test_ir_commands.py) can only check that figures are positive: wall and CPU time
vary. Here every clock is scripted and :class:`~alas_argo.runtime.executor.Runtime` is a stand-in that records
what it was asked to run, so each figure is known in advance: the burn loop runs exactly as many rounds as its
CPU budget allows, the overhead per node is the best run divided by the node count, the speed-up keeps each
configuration's shortest wall time and divides 1 process worker's by 2's, and the report
hands every argument on. No assertion reads the wall clock.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pytest

import alas_argo.benchmarks.runtime as runtime
from alas_argo.benchmarks.runtime import OverheadFigure, SpeedupFigure
from alas_argo.ir.workflow import Edge, Workflow


def rounds_of(k: int) -> int:
    """The burn loop's ``x`` after ``k`` rounds of its 10,000 steps (the oracle for the round count)."""
    x = 0
    for _ in range(k):
        for i in range(10_000):
            x = (x * 31 + i) % 1_000_003
    return x


class ScriptedTime:
    """``time`` as the module uses it: ``thread_time`` moves ``step`` further on every call (so each check of the
    burn loop is one step of CPU time), ``time`` and ``perf_counter`` hand out the values given, in order."""

    def __init__(self, *, cpu_start: float = 64.0, step: float = 0.0625, wall: Iterator[float] | None = None,
                 perf: Iterator[float] | None = None) -> None:
        self.cpu, self.step = cpu_start - step, step
        self.wall, self.perf = wall or iter([1000.0, 1007.0]), perf or iter([])

    def thread_time(self) -> float:
        self.cpu += self.step
        return self.cpu

    def time(self) -> float:
        return next(self.wall)

    def perf_counter(self) -> float:
        return next(self.perf)


# -- burn and the workflows ----------------------------------------------------------------------------------


def test_burn_runs_until_its_cpu_budget_is_spent(monkeypatch: pytest.MonkeyPatch) -> None:
    """0.125 s at 0.0625 s per check: one round (the check at exactly 0.125 s ends it); CPU is measured from the
    first reading (64.0) to the last (64.1875), and the wall clock's two readings are the node's start and end."""
    monkeypatch.setattr(runtime, "time", ScriptedTime())
    out = runtime.burn(SimpleNamespace(params={"seconds": 0.125}), {})  # type: ignore[arg-type]
    assert out == {"pid": os.getpid(), "cpu": 0.1875, "start": 1000.0, "end": 1007.0, "x": rounds_of(1)}


def test_burn_spends_0_2_s_without_a_seconds_parameter(monkeypatch: pytest.MonkeyPatch) -> None:
    """The default budget is 0.2 s: checks at 0.0625, 0.125 and 0.1875 s go on, the one at 0.25 s stops."""
    monkeypatch.setattr(runtime, "time", ScriptedTime())
    out = runtime.burn(SimpleNamespace(params={}), {})  # type: ignore[arg-type]
    assert out["x"] == rounds_of(3) and out["cpu"] == 0.3125


def test_noop_returns_no_outputs() -> None:
    assert runtime.noop(SimpleNamespace(params={}), {"a": 1}) == {}  # type: ignore[arg-type]


def test_chain_links_every_node_to_the_next_and_fan_links_none() -> None:
    chain, fan = runtime.chain(3), runtime.fan(3)
    assert [n.id for n in chain.nodes] == [n.id for n in fan.nodes] == ["n0", "n1", "n2"]
    assert {n.role for n in chain.nodes} == {n.role for n in fan.nodes} == {"noop"}
    assert chain.edges == [Edge(source="n0", target="n1"), Edge(source="n1", target="n2")]
    assert fan.edges == [] and (chain.name, fan.name) == ("bench-chain", "bench-fan")


# -- measure_overhead ----------------------------------------------------------------------------------------


@dataclass
class FakeRuntime:
    """Stands in for Runtime: records each construction and run, answers with scripted results."""

    results: Iterator[Any]
    made: list[dict[str, Any]] = field(default_factory=list)
    ran: list[Workflow] = field(default_factory=list)

    def __call__(self, handlers: dict[str, Any], **kwargs: Any) -> FakeRuntime:
        self.made.append({"roles": sorted(handlers), **kwargs})
        return self

    def run(self, wf: Workflow) -> Any:
        self.ran.append(wf)
        return next(self.results)


def _ok(seconds: float = 0.0, outputs: dict[str, Any] | None = None) -> SimpleNamespace:
    return SimpleNamespace(ok=True, seconds=seconds, outputs=outputs or {}, errors={})


def test_overhead_keeps_the_best_run_per_shape_and_divides_by_the_nodes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Validation timed once per shape (1.23456 ms -> 1.23), the best of the repeats (not the first or last) in
    ms to 2 places, and ms/node to 4 places; each repeat a fresh thread-pool Runtime with the workers given."""
    fake = FakeRuntime(iter([_ok(0.0305), _ok(0.0201234), _ok(0.0403), _ok(0.05), _ok(0.0123456), _ok(0.9)]))
    monkeypatch.setattr(runtime, "Runtime", fake)
    monkeypatch.setattr(runtime, "time", ScriptedTime(perf=iter([10.0, 10.00123456, 20.0, 20.0045678])))
    figures = runtime.measure_overhead(8, repeats=3, workers=5)
    assert figures == [OverheadFigure("chain", 8, "thread", 5, 1.23, 20.12, 2.5154),
                       OverheadFigure("fan", 8, "thread", 5, 4.57, 12.35, 1.5432)]
    assert fake.made == [{"roles": ["noop"], "max_workers": 5}] * 6
    assert [wf.name for wf in fake.ran] == ["bench-chain"] * 3 + ["bench-fan"] * 3
    assert all(len(wf.nodes) == 8 for wf in fake.ran)


def test_overhead_defaults_are_500_nodes_best_of_3_on_2_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeRuntime(iter([_ok(0.5)] * 6))
    monkeypatch.setattr(runtime, "Runtime", fake)
    figures = runtime.measure_overhead()
    assert [(f.nodes, f.workers, f.run_ms, f.ms_per_node) for f in figures] == [(500, 2, 500.0, 1.0)] * 2
    assert len(fake.ran) == 6 and {len(wf.nodes) for wf in fake.ran} == {500}


def test_a_failed_run_stops_the_benchmark_naming_its_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    failed = SimpleNamespace(ok=False, seconds=0.0, outputs={}, errors={"n3": "boom"})
    monkeypatch.setattr(runtime, "Runtime", FakeRuntime(iter([failed])))
    with pytest.raises(RuntimeError, match=r"^benchmark run failed: \{'n3': 'boom'\}$"):
        runtime.measure_overhead(4, repeats=1)
    monkeypatch.setattr(runtime, "Runtime", FakeRuntime(iter([failed])))
    with pytest.raises(RuntimeError, match=r"^benchmark run failed: \{'n3': 'boom'\}$"):
        runtime.measure_speedup(2)


# -- measure_speedup -----------------------------------------------------------------------------------------


def _burned(*nodes: tuple[int, float, float, float]) -> SimpleNamespace:
    """A run's result whose burn nodes report (pid, cpu, start, end)."""
    return _ok(outputs={f"b{i}": {"pid": pid, "cpu": cpu, "start": start, "end": end}
                        for i, (pid, cpu, start, end) in enumerate(nodes)})


def test_speedup_figures_come_from_what_the_nodes_report(monkeypatch: pytest.MonkeyPatch) -> None:
    """Wall = last end - first start, CPU = the sum, busy cores = CPU / wall, processes = distinct pids; the
    configurations in order process x1, process x2, thread x2, each a Runtime of that pool and size."""
    fake = FakeRuntime(iter([
        _burned((7, 0.25, 100.0, 100.3), (7, 0.25, 100.3, 100.6)),
        _burned((8, 0.2502, 200.0, 200.3), (9, 0.2505, 200.01, 200.3002)),
        _burned((5, 0.25, 300.0, 300.3), (5, 0.25, 300.3, 300.6)),
    ]))
    monkeypatch.setattr(runtime, "Runtime", fake)
    figures = runtime.measure_speedup(2, seconds=0.125)
    assert figures == [SpeedupFigure("process", 1, 2, 0.6, 0.5, 0.83, 1),
                       SpeedupFigure("process", 2, 2, 0.3, 0.501, 1.67, 2),
                       SpeedupFigure("thread", 2, 2, 0.6, 0.5, 0.83, 1)]
    assert fake.made == [{"roles": ["burn"], "max_workers": 1, "pool": "process"},
                         {"roles": ["burn"], "max_workers": 2, "pool": "process"},
                         {"roles": ["burn"], "max_workers": 2, "pool": "thread"}]
    wf = fake.ran[0]
    assert [(n.id, n.role, n.params) for n in wf.nodes] == [("b0", "burn", {"seconds": 0.125}),
                                                           ("b1", "burn", {"seconds": 0.125})]


def test_speedup_rounds_each_figure(monkeypatch: pytest.MonkeyPatch) -> None:
    """Wall and CPU to 3 places, busy cores to 2."""
    monkeypatch.setattr(runtime, "Runtime", FakeRuntime(iter([
        _burned((1, 0.123456, 0.0, 0.654321))] + [_burned((1, 0.1, 0.0, 1.0))] * 2)))
    first = runtime.measure_speedup(1)[0]
    assert (first.wall_s, first.cpu_s, first.busy_cores) == (0.654, 0.123, 0.19)


def test_speedup_keeps_each_configurations_shortest_wall(monkeypatch: pytest.MonkeyPatch) -> None:
    """Repeats interleave the configurations; a later, faster repeat replaces an earlier one, a later, slower one
    does not. (Which of two equal walls is kept is not promised: both are the shortest.)"""
    fake = FakeRuntime(iter([
        _burned((1, 0.2, 0.0, 0.5)), _burned((2, 0.2, 0.0, 0.25)), _burned((3, 0.2, 0.0, 0.5)),  # repeat 1
        _burned((4, 0.2, 0.0, 0.4)), _burned((5, 0.2, 0.0, 0.25)), _burned((6, 0.2, 0.0, 0.9)),  # repeat 2
    ]))
    monkeypatch.setattr(runtime, "Runtime", fake)
    figures = runtime.measure_speedup(1, repeats=2)
    assert [(f.pool, f.workers, f.wall_s) for f in figures] == [("process", 1, 0.4), ("process", 2, 0.25),
                                                                ("thread", 2, 0.5)]
    assert len(fake.ran) == 6


def test_speedup_defaults_are_4_tasks_of_a_quarter_second_once(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeRuntime(iter([_burned((1, 0.1, 0.0, 1.0))] * 3))
    monkeypatch.setattr(runtime, "Runtime", fake)
    figures = runtime.measure_speedup()
    assert len(fake.ran) == 3 and [f.tasks for f in figures] == [4, 4, 4]
    assert [n.params for n in fake.ran[0].nodes] == [{"seconds": 0.25}] * 4


# -- report --------------------------------------------------------------------------------------------------


def test_report_hands_every_argument_on_and_divides_one_process_by_two(monkeypatch: pytest.MonkeyPatch) -> None:
    """The thread pool's figure comes between the process ones and must not be taken for either; the 1-minute
    load average is the first of the three; the target is 1 ms per node, met only when every shape meets it."""
    calls: list[tuple[str, tuple[Any, ...]]] = []
    overhead = [OverheadFigure("chain", 9, "thread", 2, 0.5, 9.0, 1.0),
                OverheadFigure("fan", 9, "thread", 2, 0.5, 4.5, 0.5)]
    speed = [SpeedupFigure("thread", 2, 3, 0.7, 0.7, 1.0, 1), SpeedupFigure("process", 2, 3, 0.3, 0.6, 2.0, 2),
             SpeedupFigure("process", 1, 3, 0.9, 0.6, 0.67, 1)]

    def measure_overhead(*args: Any) -> list[OverheadFigure]:
        calls.append(("overhead", args))
        return overhead

    def measure_speedup(*args: Any) -> list[SpeedupFigure]:
        calls.append(("speedup", args))
        return speed

    monkeypatch.setattr(runtime, "measure_overhead", measure_overhead)
    monkeypatch.setattr(runtime, "measure_speedup", measure_speedup)
    monkeypatch.setattr(runtime.os, "getloadavg", lambda: (1.23456, 7.0, 9.0))
    monkeypatch.setattr(runtime.os, "cpu_count", lambda: 6)
    doc = runtime.report(9, 3, 0.125, 7)
    assert calls == [("overhead", (9, 7)), ("speedup", (3, 0.125, 7))]
    assert doc == {"cpu_count": 6, "load_average_1m": 1.23,
                   "overhead": [{"shape": "chain", "nodes": 9, "pool": "thread", "workers": 2, "validate_ms": 0.5,
                                 "run_ms": 9.0, "ms_per_node": 1.0},
                                {"shape": "fan", "nodes": 9, "pool": "thread", "workers": 2, "validate_ms": 0.5,
                                 "run_ms": 4.5, "ms_per_node": 0.5}],
                   "speedup": [{"pool": "thread", "workers": 2, "tasks": 3, "wall_s": 0.7, "cpu_s": 0.7,
                                "busy_cores": 1.0, "distinct_pids": 1},
                               {"pool": "process", "workers": 2, "tasks": 3, "wall_s": 0.3, "cpu_s": 0.6,
                                "busy_cores": 2.0, "distinct_pids": 2},
                               {"pool": "process", "workers": 1, "tasks": 3, "wall_s": 0.9, "cpu_s": 0.6,
                                "busy_cores": 0.67, "distinct_pids": 1}],
                   "process_speedup_2_over_1": 3.0, "target_ms_per_node": 1.0, "overhead_target_met": True}
    overhead[0] = OverheadFigure("chain", 9, "thread", 2, 0.5, 9.9, 1.1)
    speed[1] = SpeedupFigure("process", 2, 3, 0.7, 0.6, 0.86, 2)
    doc = runtime.report(9, 3, 0.125)
    assert calls[-2:] == [("overhead", (9, 3)), ("speedup", (3, 0.125, 3))]  # best of 3 by default
    assert doc["overhead_target_met"] is False and doc["process_speedup_2_over_1"] == 1.29
