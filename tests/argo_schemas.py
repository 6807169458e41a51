"""Argo Workflows' own CRD schemas (reference data outside the repository) as JSON Schema validators.

The files live in ``../shared/schemas/argo`` next to the checkout (see its README); a user's clone does not
have them, so tests that use them skip. Found, in order: ``$ALAS_ARGO_SCHEMAS``; ``../shared/schemas/argo``
next to this checkout; the same next to the main checkout when this one is a git worktree.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

import jsonschema
import yaml

__all__ = ["SKIP_REASON", "argo_schema_dir", "argo_validator"]

ROOT = Path(__file__).resolve().parents[1]
SKIP_REASON = "reference CRD schemas (../shared/schemas/argo, or $ALAS_ARGO_SCHEMAS) not present"


def _main_checkout() -> Path | None:
    """The main working tree when ROOT is a git worktree (its ``.git`` is a file naming the gitdir)."""
    dot_git = ROOT / ".git"
    if not dot_git.is_file():
        return None
    gitdir = Path(dot_git.read_text().split("gitdir:", 1)[-1].strip())
    common = gitdir / "commondir"
    if not common.is_file():
        return None
    return (gitdir / common.read_text().strip()).resolve().parent


def argo_schema_dir() -> Path | None:
    """The directory holding ``argoproj.io_workflows.yaml`` and ``argoproj.io_workflowtemplates.yaml``."""
    candidates = [Path(os.environ["ALAS_ARGO_SCHEMAS"])] if os.environ.get("ALAS_ARGO_SCHEMAS") else []
    candidates.append(ROOT.parent / "shared" / "schemas" / "argo")
    if (main := _main_checkout()) is not None:
        candidates.append(main.parent / "shared" / "schemas" / "argo")
    return next((c for c in candidates if (c / "argoproj.io_workflowtemplates.yaml").is_file()), None)


def _int_or_string(schema: Any) -> Any:
    """The CRD's x-kubernetes-int-or-string as JSON Schema, and additionalProperties: false where typed."""
    if isinstance(schema, dict):
        out = {k: _int_or_string(v) for k, v in schema.items()}
        if out.pop("x-kubernetes-int-or-string", False):
            out.pop("type", None)
            out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
        if "properties" in out and "additionalProperties" not in out \
                and not out.get("x-kubernetes-preserve-unknown-fields"):
            out["additionalProperties"] = False
        return out
    if isinstance(schema, list):
        return [_int_or_string(v) for v in schema]
    return schema


@functools.cache
def argo_validator(kind: str) -> jsonschema.Draft7Validator:
    """A validator for ``Workflow`` or ``WorkflowTemplate`` objects (typos fail: unknown fields are refused).

    Raises:
        FileNotFoundError: The reference schemas are not present (check :func:`argo_schema_dir` first).
    """
    directory = argo_schema_dir()
    if directory is None:
        raise FileNotFoundError(SKIP_REASON)
    file = "argoproj.io_workflowtemplates.yaml" if kind == "WorkflowTemplate" else "argoproj.io_workflows.yaml"
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the CRDs are megabytes of YAML
    crd = yaml.load((directory / file).read_text(), Loader=loader)
    return jsonschema.Draft7Validator(_int_or_string(crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]))
