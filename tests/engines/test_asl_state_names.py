"""ASL state names stay within the 80 characters the States Language allows (Step Functions refuses a longer one
when the state machine is created): a node id that would make a longer name, its own or one derived from it (a
ladder rung, an undo state, a gate), is refused at compile time naming the node, not at deployment."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from alas_argo.engines import asl_names as an
from alas_argo.engines.asl import to_asl
from alas_argo.engines.conformance import UnsupportedFeature
from alas_argo.ir import Condition, Edge, Node, RepairSpec, Workflow


def _chain(node: Node) -> Workflow:
    return Workflow(name="names", nodes=[Node(id="first", role="w"), node, Node(id="after", role="z"),
                                         Node(id="undo", role="revert")],
                    edges=[Edge(source="first", target=node.id), Edge(source=node.id, target="after")])


def _refused(wf: Workflow) -> UnsupportedFeature:
    with pytest.raises(UnsupportedFeature) as raised:
        to_asl(wf)
    return raised.value


def test_a_node_id_of_80_characters_compiles_and_81_is_refused_naming_the_node() -> None:
    longest = "n" * an.MAX_STATE_NAME
    assert longest in to_asl(_chain(Node(id=longest, role="task")))["States"]
    too_long = "n" * (an.MAX_STATE_NAME + 1)
    e = _refused(_chain(Node(id=too_long, role="task")))
    assert (e.engine, e.node, e.feature) == ("asl", too_long, "node_id")
    assert f"state name {too_long!r} has 81 characters; ASL allows at most 80: shorten the node id" in str(e)


@pytest.mark.parametrize(("make", "suffix_or_prefix"), [
    # The ladder's last rung, `<node>/replan`.
    (lambda i: Node(id=i, role="repairer", repair=RepairSpec(patch="p", replan="r")), "/replan"),
    # The undo state of a committed step, `alas-undo-<node>`.
    (lambda i: Node(id=i, role="commit", side_effect="write", compensation="undo"), an.UNDO_PREFIX),
    # The Choice in front of a gated step, `<node>/gate`.
    (lambda i: Node(id=i, role="task", when=Condition(path="first.ok", op="truthy")), an.GATE_SUFFIX),
])
def test_a_name_derived_from_the_node_id_counts_too(make: Callable[[str], Node], suffix_or_prefix: str) -> None:
    fits = "d" * (an.MAX_STATE_NAME - len(suffix_or_prefix))
    names = set(to_asl(_chain(make(fits)))["States"])
    assert {fits + suffix_or_prefix, suffix_or_prefix + fits} & names  # the derived name is there, at 80
    e = _refused(_chain(make(fits + "d")))
    assert e.node == fits + "d" and "has 81 characters" in str(e)
