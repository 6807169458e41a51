"""Property-based checks of DAG validation on random graphs."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from alas_argo.ir import Edge, Node, Workflow, validate


@st.composite
def forward_graphs(draw: st.DrawFn) -> tuple[int, list[tuple[int, int]]]:
    n = draw(st.integers(min_value=2, max_value=12))
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    edges = draw(st.lists(st.sampled_from(pairs), unique=True, max_size=20))
    return n, edges


def _wf(n: int, edges: list[tuple[int, int]]) -> Workflow:
    return Workflow(name="p", nodes=[Node(id=f"n{i}", role="r") for i in range(n)],
                    edges=[Edge(source=f"n{a}", target=f"n{b}") for a, b in edges])


@settings(max_examples=60, deadline=None)
@given(forward_graphs())
def test_edges_that_only_go_forward_are_always_valid(graph: tuple[int, list[tuple[int, int]]]) -> None:
    assert validate(_wf(*graph)) == []


@settings(max_examples=60, deadline=None)
@given(forward_graphs(), st.data())
def test_a_back_edge_on_a_path_is_always_a_cycle(graph: tuple[int, list[tuple[int, int]]],
                                                 data: st.DataObject) -> None:
    n, edges = graph
    if not edges:
        return
    a, b = data.draw(st.sampled_from(edges))
    problems = validate(_wf(n, [*edges, (b, a)]))
    cyclic = {p.node for p in problems if p.code == "cycle"}
    assert {f"n{a}", f"n{b}"} <= cyclic
    assert all(p.code == "cycle" for p in problems)
