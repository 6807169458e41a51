"""The CRDs obey the API server's structural-schema rules (tests/operators/crd_structure.py), and the lint
finds each kind of violation it claims to, starting with the one that made both CRDs unusable:
``additionalProperties: false`` next to ``properties``."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.operators.crd_structure import lint_crd

ROOT = Path(__file__).resolve().parents[2]
CRDS = sorted((ROOT / "operators" / "crds").glob("*.yaml")) + sorted((ROOT / "charts" / "alas" / "crds").glob("*.yaml"))


def planrun() -> dict[str, Any]:
    return dict(yaml.safe_load((ROOT / "operators" / "crds" / "planruns.alas.dev.yaml").read_text()))


def root(crd: dict[str, Any]) -> Any:
    return crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]


def spec(crd: dict[str, Any]) -> Any:
    return root(crd)["properties"]["spec"]


@pytest.mark.parametrize("path", CRDS, ids=lambda p: f"{p.parent.parent.name}/{p.name}")
def test_every_crd_is_structural(path: Path) -> None:
    assert [str(p) for p in lint_crd(yaml.safe_load(path.read_text()))] == []


def test_properties_with_additional_properties_false_is_refused() -> None:
    """The defect of issue 14: the API server answers 'additionalProperties and properties are mutual
    exclusive' and creates nothing."""
    crd = planrun()
    spec(crd)["additionalProperties"] = False
    assert [str(p) for p in lint_crd(crd)] == [
        "spec.versions[0].schema.openAPIV3Schema.properties[spec].additionalProperties: "
        "additionalProperties and properties are mutual exclusive"]
    spec(crd)["additionalProperties"] = True  # allowed: it says nothing properties do not
    assert lint_crd(crd) == []


def _mutate(crd: dict[str, Any], case: str) -> None:
    s, props = spec(crd), spec(crd)["properties"]
    if case == "missing type":
        del props["instance"]["type"]
    elif case == "array without items":
        del props["seeds"]["items"]
    elif case == "type in oneOf":
        s["oneOf"][0]["type"] = "object"
    elif case == "description in oneOf":
        s["oneOf"][1]["description"] = "the suite"
    elif case == "nullable in not":
        s["not"] = {"nullable": True}
    elif case == "root anyOf names an unknown field":
        del crd["spec"]["versions"][0]["subresources"]  # with /status, the root may not hold anyOf at all
        root(crd)["anyOf"] = [{"properties": {"spek": {"minProperties": 1}}}, {"required": ["spec"]}]
    elif case == "uniqueItems":
        props["seeds"]["uniqueItems"] = True
    elif case == "$ref":
        props["planner"] = {"$ref": "#/definitions/planner"}
    elif case == "null type":
        props["planner"]["type"] = "null"
    elif case == "unknown keyword":
        props["planner"]["enumm"] = ["x"]
    elif case == "preserve-unknown-fields false":
        root(crd)["properties"]["status"]["x-kubernetes-preserve-unknown-fields"] = False
    elif case == "additionalProperties at the root":
        root(crd)["additionalProperties"] = {"type": "string"}
    elif case == "oneOf at the root with status":
        root(crd)["oneOf"] = [{"required": ["spec"]}]
    elif case == "invalid default":
        props["planner"]["default"] = "oracle"
    elif case == "int-or-string and preserve":
        props["timeLimit"] = {"x-kubernetes-int-or-string": True, "x-kubernetes-preserve-unknown-fields": True}
    else:
        raise AssertionError(case)


CASES = {
    "missing type": "properties[instance].type: must not be empty for specified object fields",
    "array without items": "properties[seeds].items: must be specified",
    "type in oneOf": "oneOf[0].type: must be undefined to be structural",
    "description in oneOf": "oneOf[1].description: must be undefined to be structural",
    "nullable in not": "properties[spec].not.nullable: must be undefined to be structural",
    "root anyOf names an unknown field": "openAPIV3Schema.properties[spek]: is required because it is defined in",
    "uniqueItems": "properties[seeds].uniqueItems: uniqueItems cannot be set to true",
    "$ref": "properties[planner].$ref: $ref is not supported",
    "null type": "properties[planner].type: type cannot be set to null",
    "unknown keyword": "properties[planner].enumm: unknown JSONSchemaProps field",
    "preserve-unknown-fields false": "x-kubernetes-preserve-unknown-fields: must be true or undefined",
    "additionalProperties at the root": "openAPIV3Schema.additionalProperties: must not be used at the root",
    "oneOf at the root with status": "openAPIV3Schema.oneOf: only description, type, properties",
    "invalid default": "properties[planner].default: default is not valid against its schema",
    "int-or-string and preserve": "must be false if x-kubernetes-int-or-string is true",
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_lint_finds(case: str) -> None:
    crd = copy.deepcopy(planrun())
    _mutate(crd, case)
    problems = [str(p) for p in lint_crd(crd)]
    assert any(CASES[case] in p for p in problems), problems


def test_int_or_string_patterns_are_structural() -> None:
    crd = planrun()
    spec(crd)["properties"]["budget"] = {"x-kubernetes-int-or-string": True,
                                        "anyOf": [{"type": "integer"}, {"type": "string"}]}
    spec(crd)["properties"]["window"] = {"x-kubernetes-int-or-string": True, "allOf": [
        {"anyOf": [{"type": "integer"}, {"type": "string"}]}, {"pattern": "^[0-9]+"}]}
    assert lint_crd(crd) == []


def test_nested_value_validations_are_not_checked_for_completeness() -> None:
    """apiextensions v0.31 checks completeness from the root's value validations only: a oneOf under spec
    naming a field spec lacks is accepted (seen with its ValidateCustomResourceDefinition), so the lint
    accepts it too rather than refuse what the API server takes."""
    crd = planrun()
    spec(crd)["oneOf"][0]["properties"] = {"instanse": {"minLength": 1}}
    assert lint_crd(crd) == []
