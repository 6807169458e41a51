"""A lint of CustomResourceDefinition schemas for the rules the API server enforces and
``kubernetes-validate`` cannot see (it checks the CRD object's shape, not what its schema says).

The rules follow apiextensions-apiserver v0.31 (``pkg/apiserver/schema/validation.go``, ``complete.go``
and ``pkg/apis/apiextensions/validation/validation.go``):

- structural: every node of the structural part (the root, ``properties``, ``items``,
  ``additionalProperties``) has a ``type`` unless it sets ``x-kubernetes-int-or-string`` or
  ``x-kubernetes-preserve-unknown-fields``; arrays have ``items``; the root is an object without
  ``additionalProperties``; ``properties`` and ``additionalProperties`` (other than ``true``) exclude each
  other;
- value validations (``allOf``, ``anyOf``, ``oneOf``, ``not``) carry no ``type``, ``default``, ``title``,
  ``description``, ``nullable``, ``additionalProperties`` or ``x-kubernetes-*`` (save the int-or-string
  ``anyOf`` pattern), and every property or ``items`` that those of the root name exists in the
  structural part (``complete.go`` checks the root's value validations only, and so does this lint);
- keywords the API server refuses: ``$ref``, ``id``, ``definitions``, ``dependencies``,
  ``patternProperties``, ``additionalItems``, ``uniqueItems: true``, ``type: null``, an array of
  ``items``, an unknown type, ``x-kubernetes-preserve-unknown-fields: false``, ``nullable`` at the root, a
  JSONSchemaProps key that does not exist;
- with the status subresource, only the keywords apiextensions lists may sit at the root;
- every ``default`` is valid against the schema it sits in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import jsonschema

__all__ = ["StructuralProblem", "lint_crd"]

_TYPES = {"string", "number", "integer", "boolean", "array", "object"}
_JUNCTORS = ("allOf", "anyOf", "oneOf")
#: The fields of apiextensions/v1 JSONSchemaProps.
_KEYWORDS = {
    "id", "$schema", "$ref", "description", "type", "format", "title", "default", "maximum", "exclusiveMaximum",
    "minimum", "exclusiveMinimum", "maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems",
    "multipleOf", "enum", "maxProperties", "minProperties", "required", "items", "allOf", "oneOf", "anyOf", "not",
    "properties", "additionalProperties", "patternProperties", "dependencies", "additionalItems", "definitions",
    "externalDocs", "example", "nullable", "x-kubernetes-preserve-unknown-fields", "x-kubernetes-embedded-resource",
    "x-kubernetes-int-or-string", "x-kubernetes-list-map-keys", "x-kubernetes-list-type", "x-kubernetes-map-type",
    "x-kubernetes-validations"}
_UNSUPPORTED = {"$ref": "$ref is not supported", "id": "id is not supported",
                "definitions": "definitions is not supported", "dependencies": "dependencies is not supported",
                "patternProperties": "patternProperties is not supported",
                "additionalItems": "additionalItems is not supported"}
#: What a value validation (a schema under allOf/anyOf/oneOf/not) must leave out to stay structural.
_NOT_IN_JUNCTORS = ("type", "default", "title", "description", "nullable", "additionalProperties",
                    "x-kubernetes-preserve-unknown-fields", "x-kubernetes-embedded-resource",
                    "x-kubernetes-int-or-string", "x-kubernetes-list-map-keys", "x-kubernetes-list-type",
                    "x-kubernetes-map-type", "x-kubernetes-validations")
#: Root keywords allowed when the status subresource is enabled (JSONSchemaProps field names, as keys).
_ROOT_WITH_STATUS = {"description", "type", "format", "title", "maximum", "exclusiveMaximum", "minimum",
                     "exclusiveMinimum", "maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems",
                     "multipleOf", "required", "items", "properties", "externalDocs", "example",
                     "x-kubernetes-preserve-unknown-fields", "x-kubernetes-validations"}
_INT_OR_STRING = [{"type": "integer"}, {"type": "string"}]


@dataclass(frozen=True)
class StructuralProblem:
    """One rule the API server would refuse the CRD for; ``path`` as apiextensions prints it."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


class _Linter:
    def __init__(self) -> None:
        self.out: list[StructuralProblem] = []

    def problem(self, path: str, message: str) -> None:
        self.out.append(StructuralProblem(path, message))

    def keywords(self, s: dict[str, Any], path: str) -> None:
        """Rules every schema node obeys, structural or not."""
        for key in sorted(set(s) - _KEYWORDS):
            self.problem(f"{path}.{key}", "unknown JSONSchemaProps field (the API server drops or refuses it)")
        for key, why in _UNSUPPORTED.items():
            if key in s:
                self.problem(f"{path}.{key}", why)
        if s.get("uniqueItems") is True:
            self.problem(f"{path}.uniqueItems", "uniqueItems cannot be set to true since the runtime complexity "
                                                "becomes quadratic")
        if s.get("type") == "null":
            self.problem(f"{path}.type", "type cannot be set to null, use nullable as an alternative")
        elif "type" in s and s["type"] not in _TYPES:
            self.problem(f"{path}.type", f"unsupported type {s['type']!r} (one of {', '.join(sorted(_TYPES))})")
        if isinstance(s.get("items"), list):
            self.problem(f"{path}.items", "items must be a schema object and not an array")
        if s.get("x-kubernetes-preserve-unknown-fields") is False:
            self.problem(f"{path}.x-kubernetes-preserve-unknown-fields", "must be true or undefined")
        if "pattern" in s:
            try:
                re.compile(s["pattern"])
            except re.error as e:
                self.problem(f"{path}.pattern", f"must be a valid regular expression: {e}")
        additional = s.get("additionalProperties")
        if s.get("properties") and additional is not None and additional is not True:
            self.problem(f"{path}.additionalProperties", "additionalProperties and properties are mutual exclusive")
        if "default" in s:
            self.default(s, path)

    def default(self, s: dict[str, Any], path: str) -> None:
        # OpenAPI v3.0 (boolean exclusiveMinimum): draft 4 semantics; the x-kubernetes keys are ignored.
        schema = {k: v for k, v in s.items() if k != "default"}
        if s.get("nullable") and s["default"] is None:
            return
        error = jsonschema.exceptions.best_match(jsonschema.Draft4Validator(schema).iter_errors(s["default"]))
        if error is not None:
            self.problem(f"{path}.default", f"default is not valid against its schema: {error.message}")

    def structural(self, s: dict[str, Any], path: str, level: str) -> None:
        """A node of the structural part: ``level`` is root, item or field."""
        self.keywords(s, path)
        extensions = s.get("x-kubernetes-int-or-string") or s.get("x-kubernetes-preserve-unknown-fields")
        if "type" not in s and not extensions:
            what = {"root": "at the root", "item": "for specified array items",
                    "field": "for specified object fields"}[level]
            self.problem(f"{path}.type", f"must not be empty {what}")
        if s.get("x-kubernetes-int-or-string") and s.get("x-kubernetes-preserve-unknown-fields"):
            self.problem(f"{path}.x-kubernetes-preserve-unknown-fields",
                         "must be false if x-kubernetes-int-or-string is true")
        if s.get("x-kubernetes-embedded-resource"):
            if s.get("type") != "object":
                self.problem(f"{path}.type", "must be object if x-kubernetes-embedded-resource is true")
            if "additionalProperties" in s:
                self.problem(f"{path}.additionalProperties",
                             "must not be used if x-kubernetes-embedded-resource is set")
        if s.get("type") == "array" and "items" not in s:
            self.problem(f"{path}.items", "must be specified")
        if level == "root":
            if "additionalProperties" in s:
                self.problem(f"{path}.additionalProperties", "must not be used at the root")
            if s.get("type", "object") != "object":
                self.problem(f"{path}.type", "must be object at the root")
            if s.get("nullable"):
                self.problem(f"{path}.nullable", "nullable cannot be true at the root")
        for name, prop in (s.get("properties") or {}).items():
            self.structural(prop, f"{path}.properties[{name}]", "field")
        if isinstance(s.get("items"), dict):
            self.structural(s["items"], f"{path}.items", "item")
        if isinstance(s.get("additionalProperties"), dict):
            self.structural(s["additionalProperties"], f"{path}.additionalProperties", "field")
        self.junctors(s, s, path, path, complete=level == "root")

    def junctors(self, v: dict[str, Any], s: dict[str, Any] | None, vpath: str, spath: str, *,
                 complete: bool) -> None:
        """The value validations of ``v``, against the structural node ``s`` they constrain (checked for
        completeness when ``complete``)."""
        nested: list[tuple[dict[str, Any], str]] = []
        for junctor in _JUNCTORS:
            items = v.get(junctor) or []
            if junctor == "anyOf" and items == _INT_OR_STRING:
                continue  # the x-kubernetes-int-or-string pattern
            if junctor == "allOf" and items and (items[0].get("anyOf") or []) == _INT_OR_STRING:
                items = [{k: x for k, x in items[0].items() if k != "anyOf"}, *items[1:]]
            nested += [(n, f"{vpath}.{junctor}[{i}]") for i, n in enumerate(items)]
        if isinstance(v.get("not"), dict):
            nested.append((v["not"], f"{vpath}.not"))
        for n, npath in nested:
            self.value_validation(n, s, npath, spath, complete=complete)

    def value_validation(self, v: dict[str, Any], s: dict[str, Any] | None, vpath: str, spath: str, *,
                         complete: bool) -> None:
        self.keywords(v, vpath)
        for key in _NOT_IN_JUNCTORS:
            if key in v:
                self.problem(f"{vpath}.{key}", "must be undefined to be structural")
        if "metadata" in (v.get("properties") or {}):
            self.problem(f"{vpath}.properties[metadata]", "must not be specified in a nested context")
        if s is None:
            if complete:
                self.problem(spath, f"is required because it is defined in {vpath}")
            s = {}
        for name, sub in (v.get("properties") or {}).items():
            target = (s.get("properties") or {}).get(name)
            if target is None and complete:
                self.problem(f"{spath}.properties[{name}]",
                             f"is required because it is defined in {vpath}.properties[{name}]")
            self.value_validation(sub, target, f"{vpath}.properties[{name}]", f"{spath}.properties[{name}]",
                                  complete=complete and target is not None)
        if isinstance(v.get("items"), dict):
            items = s.get("items") if isinstance(s.get("items"), dict) else None
            self.value_validation(v["items"], items, f"{vpath}.items", f"{spath}.items",
                                  complete=complete and items is not None)
        self.junctors(v, s, vpath, spath, complete=complete)


def lint_crd(crd: dict[str, Any]) -> list[StructuralProblem]:
    """Every rule of the module docstring that a CustomResourceDefinition breaks (empty when it is clean)."""
    out: list[StructuralProblem] = []
    for i, version in enumerate((crd.get("spec") or {}).get("versions") or []):
        path = f"spec.versions[{i}].schema.openAPIV3Schema"
        schema = (version.get("schema") or {}).get("openAPIV3Schema")
        if not isinstance(schema, dict):
            out.append(StructuralProblem(path, "a schema is required (apiextensions.k8s.io/v1)"))
            continue
        linter = _Linter()
        linter.structural(schema, path, "root")
        if "status" in (version.get("subresources") or {}):
            for key in sorted(set(schema) - _ROOT_WITH_STATUS):
                linter.problem(f"{path}.{key}", "only description, type, properties, required, ... are allowed at "
                                                "the root of the schema if the status subresource is enabled")
        out += linter.out
    return out
