"""An any_of join sees the same dependency on both engines: the local runtime hands the node the candidate that
won; the compiled Argo workflow, walked as Argo runs it, hands its step the same one (the step finds it in the
log), so a role or a choice that reads it decides alike (before, the Argo step saw no dependency at all)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from alas_argo import step_handlers
from alas_argo.cli import main
from alas_argo.engines.argo import to_argo
from alas_argo.log import ExecutionLog, FsStore
from alas_argo.runtime import NodeContext, Runtime
from alas_argo.step_context import StepContext, StepOutput, output_key
from tests.runtime.runtime_helpers import workflow
from tests.workflows.argo_walker import Walker


def _workflow() -> Any:
    # Two candidates both succeed (n = 1, then 9); the join reads the winner, the choice turns on it. (Only on the
    # winner: locally a loser's output exists or not depending on whether it ended before the join was decided.)
    return workflow([
        {"id": "first", "role": "probe", "params": {"n": 1}},
        {"id": "second", "role": "probe", "params": {"n": 9}},
        {"id": "use", "role": "probe", "join": "any_of", "params": {"n": 0}},
        {"id": "route", "kind": "choice", "join": "any_of", "default": "small", "choices": [
            {"when": {"path": "first.n", "op": "ge", "value": 5}, "next": "big"}]},
        {"id": "big", "role": "probe", "params": {"n": 2}}, {"id": "small", "role": "probe", "params": {"n": 3}}],
        [("first", "use"), ("second", "use"), ("first", "route"), ("second", "route")])


def _local_probe(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
    return {"n": ctx.params["n"], "saw": ctx.deps}


def _argo_probe(ctx: StepContext) -> StepOutput:
    return StepOutput({"n": ctx.input.params["n"], "saw": {d: ctx.dep(d)["doc"] for d in ctx.dep_names()}})


def test_an_any_of_join_and_a_choice_after_it_read_the_winner_on_both_engines(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    wf = _workflow()
    local = Runtime({"probe": _local_probe}).run(wf)
    assert local.ok
    monkeypatch.setitem(step_handlers.HANDLERS, "probe", _argo_probe)
    monkeypatch.setenv("ALAS_STORE__KIND", "fs")
    monkeypatch.setenv("ALAS_STORE__ROOT", str(tmp_path))
    walk = Walker(to_argo(wf, image="alas:test"), main, name="any-of").run()
    assert walk.status == "Succeeded", [(p.template, p.exit_code) for p in walk.pods]

    # The winner is the first candidate declared: n = 1, so the choice takes its default on both engines.
    assert local.output("use")["saw"] == {"first": {"n": 1, "saw": {}}}
    assert local.output("route") == {"branch": "small"}
    assert (walk.phases["small"], walk.phases["big"]) == ("Succeeded", "Skipped")
    record = ExecutionLog(FsStore(tmp_path), "any-of").idempotency_get(output_key("any-of", "use"))
    assert record is not None and record["doc"]["saw"] == local.output("use")["saw"]
