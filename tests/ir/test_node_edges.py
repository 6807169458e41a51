"""The IR node model (alas_argo.ir.node) at the edges mutation testing found unpinned: the node id's pattern at
both ends, every side-effect value on the wire, the repair spec's required handler and its two bounds with their
defaults, ``maxConcurrency`` (a whole number, at least 1), and the digest, which is the hash of the wire form.

Each refusal is read through :func:`parse_workflow` (what the CLI and the controller use), whose problem names
the node and the field."""

from __future__ import annotations

from typing import Any

import pytest

from alas_argo.ir import Node, RepairSpec, SideEffect, content_hash, parse_workflow


def _problems(node: dict[str, Any]) -> list[str]:
    """The problems parse_workflow finds in a one-node workflow (empty if it parses)."""
    wf, problems = parse_workflow({"name": "w", "nodes": [node]})
    assert (wf is None) == bool(problems)
    return [str(p) for p in problems]


PATTERN = "String should match pattern '^[A-Za-z_][\\w-]*$'"


@pytest.mark.parametrize("node_id", ["a", "_a", "A9", "plan-1_b", "x--y"])
def test_ids_of_a_letter_or_underscore_then_word_characters_or_dashes_parse(node_id: str) -> None:
    assert _problems({"id": node_id, "role": "r"}) == []


@pytest.mark.parametrize("node_id", ["1a", "-a", "a.b", "a b", "a/b", "a:", "b\n"])
def test_other_ids_are_refused_naming_the_pattern(node_id: str) -> None:
    # A pattern that were only searched for (no ^ or no $) would take "1a" ("a" matches) or "a.b" ("b" matches):
    # Argo task names and ASL state names are built from these ids.
    assert _problems({"id": node_id, "role": "r"}) == [f"node {node_id}: nodes.0.id: {PATTERN}"]


@pytest.mark.parametrize("value", list(SideEffect))
def test_every_side_effect_value_parses_from_and_dumps_to_its_wire_spelling(value: SideEffect) -> None:
    node = Node.model_validate({"id": "a", "role": "r", "sideEffect": value.value})
    assert node.side_effect is value
    assert node.to_json()["sideEffect"] == value.value


def test_side_effects_are_spelt_as_documented() -> None:
    assert [v.value for v in SideEffect] == ["none", "read", "write", "external"]


def test_a_repair_spec_needs_a_patch_role_and_defaults_to_one_patch_and_one_replan() -> None:
    assert _problems({"id": "a", "role": "r", "repair": {}}) == ["node a: nodes.0.repair.patch: Field required"]
    assert _problems({"id": "a", "role": "r", "repair": {"patch": ""}}) == [
        "node a: nodes.0.repair.patch: String should have at least 1 character"]
    spec = RepairSpec(patch="fix")
    assert (spec.replan, spec.max_patches, spec.max_replans) == (None, 1, 1)
    # No replan role unless one is given: the runtime and both compilers add a replan level only when it is set.
    assert spec.to_json() == {"patch": "fix", "maxPatches": 1, "maxReplans": 1}


@pytest.mark.parametrize("field", ["maxPatches", "maxReplans"])
def test_a_repair_spec_bound_is_at_least_one(field: str) -> None:
    assert _problems({"id": "a", "role": "r", "repair": {"patch": "fix", field: 0}}) == [
        f"node a: nodes.0.repair.{field}: Input should be greater than or equal to 1"]
    node = Node.model_validate({"id": "a", "role": "r", "repair": {"patch": "fix", field: 1}})
    assert node.repair is not None and node.repair.to_json()[field] == 1


def test_max_concurrency_is_a_whole_number_of_at_least_one() -> None:
    assert _problems({"id": "m", "role": "r", "maxConcurrency": 0}) == [
        "node m: nodes.0.maxConcurrency: Input should be greater than or equal to 1"]
    assert _problems({"id": "m", "role": "r", "maxConcurrency": 1.5}) == [
        "node m: nodes.0.maxConcurrency: Input should be a valid integer, got a number with a fractional part"]
    assert Node(id="m", role="r", max_concurrency=1).to_json()["maxConcurrency"] == 1


def test_the_digest_is_the_hash_of_the_wire_form() -> None:
    node = Node(id="a", role="r", max_concurrency=2, params={"k": 1})
    wire = node.to_json()
    assert "maxConcurrency" in wire and "compensation" not in wire  # camelCase, no None fields
    assert node.digest() == content_hash(wire)
    # The same definition spelt in snake_case hashes the same; any other field changes it.
    same = Node.model_validate({"id": "a", "role": "r", "max_concurrency": 2, "params": {"k": 1}})
    assert same.digest() == node.digest()
    for other in (node.model_copy(update={"max_concurrency": 3}), node.model_copy(update={"params": {"k": 2}}),
                  node.model_copy(update={"role": "s"})):
        assert other.digest() != node.digest()
