"""Ready-set scheduling of one run.

The scheduler thread owns every decision: which pending node becomes ready or is skipped (all_of and
any_of joins, choice arcs, catch arcs), which failure is caught or absorbed or fails the run, and which
any_of losers are skipped or cancelled. Task and map nodes are handed to a thread pool (where the
:class:`~alas_argo.runtime.lifecycle.NodeRunner` drives them); choice and parallel nodes are evaluated
inline. A node's result counts only once the scheduler has *settled* it, so no decision races with a
worker that has changed a state but not yet reported back.

A stop request (SIGINT / SIGTERM, :mod:`alas_argo.interrupts`) ends the run without failing it: nothing new
is dispatched, the nodes in flight finish or stop (a stopped search raises ``Interrupted`` in its node's
thread), what finished keeps its result, and nothing is compensated, so the run can be resumed.

A damaged execution log (an :class:`~alas_argo.errors.IntegrityError` from the journal, such as an idempotency
record that was edited or truncated behind the log's back) ends the run the same way but with that error: it is
no failure of the node that met it, and failing the node would compensate the run's commits (retract the plan
in force) in a log that no longer holds together, and print a node's failure instead of naming the record.
"""

from __future__ import annotations

import concurrent.futures as cf
from collections import defaultdict
from typing import Any

from alas_argo import interrupts
from alas_argo.errors import IntegrityError, WorkflowError
from alas_argo.ir.node import Join, Node, NodeKind
from alas_argo.ir.policy import OnFailure
from alas_argo.ir.workflow import Dependency, Via
from alas_argo.runtime.lifecycle import NodeRunner, Outcome
from alas_argo.runtime.policies import evaluate, matches
from alas_argo.runtime.run_state import Cancelled, RunState
from alas_argo.runtime.states import TERMINAL, NodeState

__all__ = ["Scheduler"]

_WAIT, _SAT, _DEAD = "wait", "satisfied", "dead"


class Scheduler:
    """The scheduler of one run (use once)."""

    def __init__(self, run: RunState, runner: NodeRunner, pool: cf.ThreadPoolExecutor) -> None:
        self.run, self.runner, self.pool = run, runner, pool
        wf = run.workflow
        self.nodes = wf.node_map()
        comp = wf.compensation_ids()
        self.graph = [n.id for n in wf.nodes if n.id not in comp]
        self.preds: dict[str, list[Dependency]] = defaultdict(list)
        self.succs: dict[str, list[str]] = defaultdict(list)
        for d in wf.dependencies():
            self.preds[d.target].append(d)
            self.succs[d.source].append(d.target)
        self.group_of = {b: n for n in wf.nodes if n.kind is NodeKind.PARALLEL for b in n.branches}
        self.settled: set[str] = set()
        self.chosen: dict[str, str] = {}
        self.caught: dict[str, str] = {}
        self.absorbed: set[str] = set()
        #: Nodes skipped by their own gate (``when``): a plain edge from one is satisfied, as Argo's bare
        #: ``depends`` on a Skipped task is; a node skipped because its dependencies died is not among them.
        self.gated: set[str] = set()
        self.inflight: dict[cf.Future[Outcome | None], str] = {}
        self.held: list[tuple[str, dict[str, Any]]] = []
        self.failed_node: str | None = None
        self.mode: OnFailure | None = None
        #: The stop request that ended the run, if one did, and the nodes it stopped in flight.
        self.interrupted: interrupts.Interrupted | None = None
        self.stopped: list[str] = []

    def drive(self) -> tuple[str | None, OnFailure | None]:
        """Run until nothing can progress; returns the node that failed the run and its failure mode.

        After a stop request it returns once the nodes in flight are done, with ``interrupted`` set.
        """
        dirty = set(self.graph)
        while True:
            if self.interrupted is None and (signum := interrupts.stop_requested()) is not None:
                self.interrupted = interrupts.Interrupted(signum)
            if self.interrupted is None:
                while dirty and self.failed_node is None:
                    dirty = self._decide(dirty)
                # A failing run submits nothing more: held nodes are cancelled, not handed to an idle worker.
                if self.failed_node is not None:
                    self._abort()
                else:
                    self._dispatch_held()
            else:
                self._hold_back()
            if not self.inflight:
                if dirty and self.failed_node is None and self.interrupted is None:
                    continue
                break
            done, _ = cf.wait(list(self.inflight), return_when=cf.FIRST_COMPLETED)
            for fut in done:
                node_id = self.inflight.pop(fut)
                try:
                    outcome = fut.result()
                except interrupts.Interrupted as e:
                    self._stopped(node_id, e)
                    continue
                except IntegrityError:
                    # Nothing queued starts; the nodes in flight finish as the pool closes; a resume (once the
                    # record is restored) runs the rest.
                    for queued in list(self.inflight):
                        if queued.cancel():
                            del self.inflight[queued]
                    raise
                dirty |= self._settle(node_id, outcome)
        return self.failed_node, self.mode

    def _hold_back(self) -> None:
        """A stop was requested: queued nodes never start (they stay pending, to run on resume)."""
        for fut, node_id in list(self.inflight.items()):
            if fut.cancel():
                del self.inflight[fut]
                self.run.move(node_id, NodeState.CANCELLED, error=self.interrupted)
        for node_id, _ in self.held:
            self.run.move(node_id, NodeState.CANCELLED, error=self.interrupted)
        self.held = []

    def _stopped(self, node_id: str, error: interrupts.Interrupted) -> None:
        """A node whose work stopped on the request: cancelled, not failed (no retry, no compensation)."""
        if self.interrupted is None:
            self.interrupted = error
        self.stopped.append(node_id)
        self.settled.add(node_id)
        if self.run.state(node_id) not in TERMINAL:
            self.run.move(node_id, NodeState.CANCELLED, error=error)

    def _status(self, d: Dependency) -> str:
        if d.source not in self.settled:
            return _WAIT
        s = self.run.state(d.source)
        if d.via is Via.CATCH:
            return _SAT if self.caught.get(d.source) == d.target else _DEAD
        if s is NodeState.EXECUTED:
            if d.via is Via.CHOICE:
                return _SAT if self.chosen.get(d.source) == d.target else _DEAD
            return _SAT
        if s is NodeState.FAILED and d.source in self.absorbed and d.via is not Via.CHOICE:
            return _SAT
        if s is NodeState.SKIPPED and d.source in self.gated and d.via is Via.EDGE:
            return _SAT
        return _DEAD

    def _decide(self, candidates: set[str]) -> set[str]:
        """Move pending candidates to ready or skipped; returns the nodes to look at next."""
        nxt: set[str] = set()
        for node_id in [i for i in self.graph if i in candidates]:
            if self.run.state(node_id) is not NodeState.PENDING:
                continue
            node, preds = self.nodes[node_id], self.preds[node_id]
            statuses = [self._status(d) for d in preds]
            if node.join is Join.ANY_OF:
                verdict, winner = _DEAD, None
                for d, st in zip(preds, statuses, strict=True):
                    if st == _WAIT:
                        verdict = _WAIT
                        break
                    # A candidate wins only by executing: a failure absorbed by on_failure "skip" is a
                    # loss here, not a success without output.
                    # A gated-off candidate does not win either (Argo: `.Succeeded` is false for Skipped).
                    if st == _SAT and self.run.state(d.source) is NodeState.EXECUTED:
                        verdict, winner = _SAT, d
                        break
                used = [winner] if winner is not None else []
            else:
                verdict = _DEAD if _DEAD in statuses else _WAIT if _WAIT in statuses else _SAT
                used = [d for d, st in zip(preds, statuses, strict=True) if st == _SAT]
            if verdict == _WAIT:
                continue
            closed = verdict == _SAT and node.when is not None and not evaluate(
                node.when, {"inputs": self.run.inputs, **self.run.outputs})
            if closed:
                self.gated.add(node_id)
            if verdict == _DEAD or closed:
                self.run.move(node_id, NodeState.SKIPPED)
                self.settled.add(node_id)
                nxt.update(self.succs[node_id])
                continue
            deps = {d.source: self.run.outputs[d.source] for d in used
                    if d.via is not Via.CATCH and d.source in self.run.outputs}
            self.run.move(node_id, NodeState.READY)
            if node.join is Join.ANY_OF and winner is not None:
                nxt |= self._drop_losers(node_id, winner)
            nxt |= self._start(node, deps, used)
        return nxt

    def _drop_losers(self, node_id: str, winner: Dependency) -> set[str]:
        """any_of: candidates after the winner that have not finished are skipped (or cancelled)."""
        changed: set[str] = set()
        for d in self.preds[node_id]:
            src = d.source
            if src == winner.source or src in self.settled or self.run.state(src) in TERMINAL:
                continue
            fut = next((f for f, i in self.inflight.items() if i == src), None)
            state = self.run.state(src)
            if state in (NodeState.PENDING, NodeState.READY) and (fut is None or fut.cancel()):
                if fut is not None:
                    del self.inflight[fut]
                self.held = [(i, dp) for i, dp in self.held if i != src]
                self.run.move(src, NodeState.SKIPPED)
            else:
                self.run.cancel_events[src].set()
                self.run.move(src, NodeState.CANCELLED)
            if fut is None or fut.cancelled():
                self.settled.add(src)
                changed.update(self.succs[src])
        return changed

    def _start(self, node: Node, deps: dict[str, Any], used: list[Dependency]) -> set[str]:
        run = self.run
        if node.kind is NodeKind.CHOICE:
            run.move(node.id, NodeState.RUNNING, attempt=1)
            scope = {"inputs": run.inputs, **run.outputs}
            target = next((b.next for b in node.choices if evaluate(b.when, scope)), node.default)
            if target is None:
                err = WorkflowError("no branch condition holds and there is no default", where={"node": node.id})
                run.errors[node.id] = err
                run.move(node.id, NodeState.FAILED, error=err)
                return self._settle(node.id, Outcome(False, error=err))
            self.chosen[node.id] = target
            run.executed(node.id, {"branch": target}, side_effecting=False)
            return self._settle(node.id, Outcome(True, {"branch": target}))
        if node.kind is NodeKind.PARALLEL:
            run.move(node.id, NodeState.RUNNING, attempt=1)
            out = {b: run.outputs.get(b) for b in node.branches}
            run.executed(node.id, out, side_effecting=False)
            return self._settle(node.id, Outcome(True, out))
        caught_from = next((d.source for d in used if d.via is Via.CATCH), None)
        if caught_from is not None:
            run.failures[node.id] = self.runner.failure_of(caught_from)
        self.held.append((node.id, deps))
        return set()

    def _dispatch_held(self) -> None:
        still: list[tuple[str, dict[str, Any]]] = []
        for node_id, deps in self.held:
            group = self.group_of.get(node_id)
            if group is not None and group.max_concurrency is not None:
                busy = sum(1 for i in self.inflight.values() if self.group_of.get(i) is group)
                if busy >= group.max_concurrency:
                    still.append((node_id, deps))
                    continue
            self.inflight[self.pool.submit(self._life, self.nodes[node_id], deps)] = node_id
        self.held = still

    def _life(self, node: Node, deps: dict[str, Any]) -> Outcome | None:
        try:
            return self.runner.run_node(node, deps)
        except Cancelled:
            return None
        except IntegrityError:
            raise  # the log is damaged, not the node: drive() ends the run with it
        except Exception as e:
            # A failure outside the attempts (bad key template, missing handler) still fails the node.
            if self.run.state(node.id) is NodeState.READY:
                self.run.move(node.id, NodeState.RUNNING, attempt=1)
            if self.run.state(node.id) not in TERMINAL:
                self.run.errors[node.id] = e
                self.run.move(node.id, NodeState.FAILED, error=e)
            return Outcome(False, error=e)

    def _settle(self, node_id: str, outcome: Outcome | None) -> set[str]:
        """Take a finished node into account: route failures (catch, on_failure)."""
        self.settled.add(node_id)
        if outcome is not None and not outcome.ok and self.run.state(node_id) is NodeState.FAILED:
            assert outcome.error is not None
            policy = self.run.workflow.policy_for(self.nodes[node_id])
            route = next((c for c in policy.catch if matches(c.errors, outcome.error)), None)
            if route is not None:
                self.caught[node_id] = route.next
            elif policy.on_failure is OnFailure.SKIP:
                self.absorbed.add(node_id)
            elif self.failed_node is None:
                self.failed_node, self.mode = node_id, policy.on_failure
        return set(self.succs[node_id])

    def _abort(self) -> None:
        """The run is failing: nothing new starts; queued nodes are cancelled, running ones finish."""
        for fut, node_id in list(self.inflight.items()):
            if fut.cancel():
                del self.inflight[fut]
                self.run.move(node_id, NodeState.CANCELLED)
        for node_id, _ in self.held:
            self.run.move(node_id, NodeState.CANCELLED)
        self.held = []
        for node_id in self.graph:
            if self.run.state(node_id) in (NodeState.PENDING, NodeState.READY) and \
                    node_id not in self.inflight.values():
                self.run.move(node_id, NodeState.CANCELLED)
