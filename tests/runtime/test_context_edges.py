"""Edges of alas_argo.runtime.context left open by mutation testing: ``NodeContext.portable`` is the copy the
dispatcher hands a process-pool worker or a forked child, so it must pickle whatever Mappings the context
was made with (the runtime's own are plain dicts, which pickle anyway, so no runtime test saw a dropped copy)
and keep the run's inputs, the dependencies' outputs and the params; it drops only the cancel event, which
does not pickle."""

from __future__ import annotations

import pickle
import threading
from types import MappingProxyType

from alas_argo.runtime import NodeContext
from alas_argo.runtime.context import Failure


def test_a_portable_copy_pickles_and_keeps_everything_but_the_cancel_event() -> None:
    cancel = threading.Event()
    cancel.set()
    ctx = NodeContext(node_id="n", role="r", attempt=2, run_id="run-1", workflow="wf", plan_version=3,
                      inputs=MappingProxyType({"instance": "ft06"}), deps=MappingProxyType({"a": {"x": 1}}),
                      params=MappingProxyType({"p": [1, 2]}), item={"job": 0}, index=0, iteration=1,
                      previous={"y": 2}, failure=Failure("E", "TransientError", "boom"), level="patch",
                      cancel_event=cancel)
    assert ctx.cancelled()
    portable = ctx.portable()
    assert portable.cancel_event is None and not portable.cancelled()
    assert (portable.inputs, portable.deps, portable.params) == ({"instance": "ft06"}, {"a": {"x": 1}}, {"p": [1, 2]})
    assert all(type(m) is dict for m in (portable.inputs, portable.deps, portable.params))
    back = pickle.loads(pickle.dumps(portable))
    assert back == ctx  # the cancel event is not compared; every other field came across
    assert (back.item, back.index, back.iteration, back.previous, back.level) == ({"job": 0}, 0, 1, {"y": 2}, "patch")
    assert back.failure == Failure("E", "TransientError", "boom")
