"""Scheduling: independent nodes in parallel, choice, parallel groups, map fan-out, any_of joins."""

from __future__ import annotations

import threading
import time
from typing import Any

from alas_argo.errors import TransientError
from alas_argo.runtime import FakeClock, NodeContext, NodeState, Runtime, StateChange
from tests.runtime.runtime_helpers import Calls, workflow


def echo(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
    return {"id": ctx.node_id, "deps": sorted(ctx.deps)}


def test_independent_nodes_really_run_at_the_same_time() -> None:
    barrier = threading.Barrier(2, timeout=2)

    def meet(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        barrier.wait()  # breaks (BrokenBarrierError) unless both nodes are running at once
        return {"id": ctx.node_id}
    wf = workflow([{"id": "a", "role": "meet"}, {"id": "b", "role": "meet"}, {"id": "j", "role": "echo"}],
                  [("a", "j"), ("b", "j")])
    result = Runtime({"meet": meet, "echo": echo}, max_workers=2).run(wf)
    assert result.ok and result.output("j") == {"id": "j", "deps": ["a", "b"]}


def test_listener_sees_every_change_in_order_and_context_carries_run_inputs() -> None:
    changes: list[StateChange] = []

    def read(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        return {"instance": ctx.inputs["instance"], "run": ctx.run_id, "wf": ctx.workflow}
    result = Runtime({"read": read}, listener=changes.append).run(
        workflow([{"id": "a", "role": "read"}]), {"instance": "ft06"}, run_id="r7")
    assert result.output("a") == {"instance": "ft06", "run": "r7", "wf": "t"}
    assert [(c.old, c.new) for c in changes] == [("pending", "ready"), ("ready", "running"),
                                                 ("running", "executed")]
    assert changes == result.changes


def choice_wf() -> Any:
    return workflow([
        {"id": "measure", "role": "measure"},
        {"id": "route", "kind": "choice", "choices": [
            {"when": {"path": "measure.gap", "op": "gt", "value": 0.1}, "next": "optimize"},
            {"when": {"path": "inputs.force", "op": "truthy"}, "next": "optimize"}], "default": "accept"},
        {"id": "optimize", "role": "echo"}, {"id": "accept", "role": "echo"},
        {"id": "after_opt", "role": "echo"},
        {"id": "finish", "role": "echo", "join": "any_of"}],
        [("measure", "route"), ("optimize", "after_opt"), ("after_opt", "finish"), ("accept", "finish")])


def test_choice_takes_the_first_branch_that_holds_and_skips_the_rest() -> None:
    def measure(gap: float) -> Any:
        return lambda ctx, inputs: {"gap": gap}
    taken = Runtime({"measure": measure(0.5), "echo": echo}).run(choice_wf())
    assert taken.output("route") == {"branch": "optimize"}
    assert taken.states["accept"] is NodeState.SKIPPED and taken.states["after_opt"] is NodeState.EXECUTED
    assert taken.output("finish")["deps"] == ["after_opt"]
    default = Runtime({"measure": measure(0.0), "echo": echo}).run(choice_wf())
    assert default.output("route") == {"branch": "accept"}
    assert default.states["optimize"] is NodeState.SKIPPED and default.states["after_opt"] is NodeState.SKIPPED
    assert default.output("finish")["deps"] == ["accept"]
    forced = Runtime({"measure": measure(0.0), "echo": echo}).run(choice_wf(), {"force": True})
    assert forced.output("route") == {"branch": "optimize"}


def test_choice_without_a_matching_branch_or_default_fails() -> None:
    wf = workflow([{"id": "c", "kind": "choice", "choices": [{"when": {"path": "inputs.x", "op": "exists"},
                                                              "next": "a"}]}, {"id": "a", "role": "echo"}])
    result = Runtime({"echo": echo}).run(wf)
    assert not result.ok and "no branch condition holds" in result.errors["c"]


def test_parallel_group_collects_its_branches_within_max_concurrency() -> None:
    lock, running, peak = threading.Lock(), [0], [0]

    def work(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        time.sleep(0.02)
        with lock:
            running[0] -= 1
        return {"by": ctx.node_id}
    nodes: list[dict[str, Any]] = [{"id": f"w{i}", "role": "work"} for i in range(4)]
    nodes.append({"id": "group", "kind": "parallel", "branches": ["w0", "w1", "w2", "w3"], "maxConcurrency": 1})
    nodes.append({"id": "after", "role": "echo"})
    result = Runtime({"work": work, "echo": echo}, max_workers=2).run(workflow(nodes, [("group", "after")]))
    assert result.ok and peak[0] == 1
    assert result.output("group") == {f"w{i}": {"by": f"w{i}"} for i in range(4)}
    assert result.output("after")["deps"] == ["group"]


def test_map_fans_out_over_a_previous_output_and_keeps_item_order() -> None:
    def split(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        return {"jobs": [3, 1, 2, 0]}

    def agent(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        time.sleep(0.005 * inputs["item"])
        return {"job": inputs["item"], "index": ctx.index}
    wf = workflow([{"id": "split", "role": "split"},
                   {"id": "agents", "kind": "map", "role": "agent", "items": "split.jobs",
                    "output": {"required": ["job"]}}, {"id": "merge", "role": "echo"}],
                  [("split", "agents"), ("agents", "merge")])
    result = Runtime({"split": split, "agent": agent, "echo": echo}).run(wf)
    assert result.output("agents") == [{"job": j, "index": i} for i, j in enumerate([3, 1, 2, 0])]


def test_map_over_run_inputs_retries_only_the_failed_items() -> None:
    calls = Calls()

    def agent(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        calls.add(ctx)
        if inputs["item"] == "b" and ctx.attempt == 1:
            raise TransientError("flaky item")
        return {"v": inputs["item"]}
    wf = workflow([{"id": "m", "kind": "map", "role": "agent", "items": "inputs.xs", "policyRef": "p"}],
                  policies={"p": {"retry": {"maxAttempts": 2, "backoff": {"initial": 0}}}})
    result = Runtime({"agent": agent}, clock=FakeClock()).run(wf, {"xs": ["a", "b", "c"]})
    assert result.output("m") == [{"v": "a"}, {"v": "b"}, {"v": "c"}]
    assert sorted(c[2] for c in calls.log) == [1, 1, 1, 2] and result.attempts["m"] == 2


def test_map_items_must_be_a_list() -> None:
    wf = workflow([{"id": "m", "kind": "map", "role": "agent", "items": "inputs.xs"}])
    result = Runtime({"agent": echo}).run(wf, {"xs": 5})
    assert not result.ok and "is not a list" in result.errors["m"]


def candidates(delays: dict[str, float], failing: set[str]) -> Any:
    def cand(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        time.sleep(delays.get(ctx.node_id, 0))
        if ctx.node_id in failing:
            raise ValueError("candidate failed")
        return {"by": ctx.node_id}
    return cand


def any_of_wf(gated: bool = False) -> Any:
    nodes = [{"id": c, "role": "cand", "policyRef": "s"} for c in ("first", "second", "third")]
    nodes.append({"id": "pick", "role": "echo", "join": "any_of"})
    edges = [("first", "pick"), ("second", "pick"), ("third", "pick")]
    if gated:
        nodes.append({"id": "gate", "role": "cand"})
        edges.append(("gate", "third"))
    return workflow(nodes, edges, policies={"s": {"onFailure": "skip"}})


def test_any_of_first_success_in_declared_order_wins_even_if_it_finishes_last() -> None:
    # first is slow, second finishes long before it, third waits behind a slow gate.
    cand = candidates({"first": 0.15, "gate": 0.4}, set())
    result = Runtime({"cand": cand, "echo": echo}, max_workers=3).run(any_of_wf(gated=True))
    assert result.ok and result.output("pick")["deps"] == ["first"]
    assert result.states["second"] is NodeState.EXECUTED  # finished first, still loses to declared order
    assert result.states["third"] is NodeState.SKIPPED  # not started when the winner was known


def test_any_of_cancels_candidates_still_running() -> None:
    started = {"second": threading.Event(), "third": threading.Event()}

    def cand(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        if ctx.node_id == "first":  # win only once both rivals are surely running
            assert all(e.wait(2) for e in started.values())
        else:
            started[ctx.node_id].set()
            time.sleep(0.3)
        return {"by": ctx.node_id}
    result = Runtime({"cand": cand, "echo": echo}, max_workers=3).run(any_of_wf())
    assert result.output("pick")["deps"] == ["first"]
    assert result.states["second"] is NodeState.CANCELLED and result.states["third"] is NodeState.CANCELLED
    assert "second" not in result.outputs and result.history("second")[-2:] == ["running", "cancelled"]


def test_any_of_falls_through_failed_candidates_in_order() -> None:
    cand = candidates({"second": 0.05}, {"first"})
    result = Runtime({"cand": cand, "echo": echo}, max_workers=3).run(any_of_wf())
    assert result.ok and result.states["first"] is NodeState.FAILED
    assert result.output("pick")["deps"] == ["second"]


def test_any_of_with_no_successful_candidate_is_skipped() -> None:
    result = Runtime({"cand": candidates({}, {"first", "second", "third"}), "echo": echo}).run(any_of_wf())
    assert result.ok and result.states["pick"] is NodeState.SKIPPED


def test_a_failing_listener_does_not_fail_the_run() -> None:
    def broken(change: StateChange) -> None:
        raise RuntimeError("display gone")
    result = Runtime({"echo": echo}, listener=broken).run(workflow([{"id": "a", "role": "echo"}]))
    assert result.ok and result.listener_errors[0] == "RuntimeError: display gone"
    assert len(result.listener_errors) == 3


def gated_wf() -> Any:
    """count -> a (gate count.n >= 1) -> b (gate count.n >= 2) -> after; a join `any` over a and after."""
    return workflow([
        {"id": "count", "role": "count"},
        {"id": "a", "role": "echo", "when": {"path": "count.n", "op": "ge", "value": 1}},
        {"id": "b", "role": "echo", "when": {"path": "count.n", "op": "ge", "value": 2}},
        {"id": "after", "role": "echo"},
        {"id": "any", "role": "echo", "join": "any_of"}],
        [("count", "a"), ("a", "b"), ("b", "after"), ("b", "any"), ("after", "any")])


def test_a_closed_gate_skips_its_node_and_a_plain_edge_from_it_is_satisfied() -> None:
    """As Argo's `when` false -> Skipped, and a bare `depends` on a Skipped task holds: the node after a gated one
    still runs, without the gated node's output; an any_of join is not won by a skipped candidate."""
    def count(n: int) -> Any:
        return lambda ctx, inputs: {"n": n}
    one = Runtime({"count": count(1), "echo": echo}).run(gated_wf())
    assert one.ok
    assert one.states["a"] is NodeState.EXECUTED and one.states["b"] is NodeState.SKIPPED
    assert one.output("after") == {"id": "after", "deps": []}  # b's output does not exist
    assert one.output("any") == {"id": "any", "deps": ["after"]}
    none = Runtime({"count": count(0), "echo": echo}).run(gated_wf())
    assert none.ok and none.states["a"] is NodeState.SKIPPED and none.states["b"] is NodeState.SKIPPED
    assert none.output("after") == {"id": "after", "deps": []}
    both = Runtime({"count": count(2), "echo": echo}).run(gated_wf())
    # Open gates: b runs on a's output and wins the any_of join (the later candidate `after` is dropped).
    assert both.output("b") == {"id": "b", "deps": ["a"]} and both.output("any") == {"id": "any", "deps": ["b"]}


def test_a_node_skipped_by_its_choice_does_not_satisfy_its_dependents() -> None:
    """Only the node's own closed gate lets a skip pass through: a gated choice target the choice did not take
    is skipped as before, and so is what depends on it (Argo: the task would be Skipped by its choice `when`
    too, but its consumers there are any_of joins; the runtime keeps its stricter choice semantics)."""
    wf = workflow([{"id": "count", "role": "count"},
                   {"id": "route", "kind": "choice", "choices": [
                       {"when": {"path": "count.n", "op": "ge", "value": 5}, "next": "a"}], "default": "other"},
                   {"id": "a", "role": "echo", "when": {"path": "count.n", "op": "ge", "value": 0}},
                   {"id": "after", "role": "echo"}, {"id": "other", "role": "echo"}],
                  [("count", "route"), ("a", "after")])
    result = Runtime({"count": lambda ctx, inputs: {"n": 0}, "echo": echo}).run(wf)
    assert result.ok and result.output("other") == {"id": "other", "deps": ["route"]}
    assert result.states["a"] is NodeState.SKIPPED and result.states["after"] is NodeState.SKIPPED
