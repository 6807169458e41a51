"""`alas submit`: send a workflow to an Argo server through Hera's WorkflowsService (the only I/O of the
engines package; the compilers stay pure)."""

from __future__ import annotations

import warnings
from datetime import UTC, datetime
from typing import Any

from alas_argo.addresses import is_http_url
from alas_argo.errors import InputError, TransientError
from alas_argo.settings import ArgoSettings

__all__ = ["ArgoUnavailable", "as_submission", "server_url", "submit"]


class ArgoUnavailable(TransientError):
    """The Argo server could not be reached (exit 75: trying again later may work)."""


def as_submission(doc: dict[str, Any], parameters: dict[str, str], *, namespace: str) -> dict[str, Any]:
    """A Workflow to create from a rendered Workflow or WorkflowTemplate, with ``parameters`` applied.

    A WorkflowTemplate is referenced (``workflowTemplateRef``), so the server runs the installed one. An empty
    ``run-id`` gets a fresh, readable one. A parameter declared with an ``enum`` is sent with it, so the Argo
    server refuses a value outside it before the workflow is created.

    Raises:
        InputError: Not a Workflow / WorkflowTemplate, a part of it of the wrong shape (``where`` and the message
            name its path, e.g. ``spec.arguments.parameters[1].name``), or a parameter it does not declare.
    """
    kind = doc.get("kind")
    if kind not in ("Workflow", "WorkflowTemplate"):
        raise InputError(f"cannot submit a {kind!r} document (need Workflow or WorkflowTemplate)", where="kind")
    metadata = _mapping(doc, "metadata")
    spec = _mapping(doc, "spec")
    params = _parameters(spec)
    declared = {p["name"]: p.get("value", "") for p in params}
    unknown = sorted(set(parameters) - set(declared))
    if unknown:
        raise InputError(f"unknown parameter {unknown[0]!r} (declared: {', '.join(declared) or 'none'})",
                         where="-p")
    values = {**declared, **parameters}
    base = str(metadata.get("name") or metadata.get("generateName") or "alas-")
    base = base.rstrip("-")
    if "run-id" in values and not values["run-id"]:
        values["run-id"] = f"{base}-{datetime.now(UTC).strftime('%Y%m%d-%H%M%S')}"
    # Each value carries the template's enum along: Argo v3.6.5 checks an enum only on the submitted parameter
    # itself (validate.go, ValidateWorkflow merges a workflowTemplateRef's parameters submitted-first and
    # validateArgumentsValues checks that one), so a bare value outside the set would reach the pods.
    enums = {p["name"]: p["enum"] for p in params if "enum" in p}
    args = {"parameters": [{"name": k, "value": str(v), **({"enum": list(enums[k])} if k in enums else {})}
                           for k, v in values.items()]}
    meta = {"generateName": f"{base}-", "namespace": namespace, "labels": _mapping(metadata, "labels", "metadata.")}
    if kind == "WorkflowTemplate":
        body = {"workflowTemplateRef": {"name": base}, "arguments": args}
    else:
        body = {**spec, "arguments": args}
    return {"apiVersion": "argoproj.io/v1alpha1", "kind": "Workflow", "metadata": meta, "spec": body}


def _mapping(doc: dict[str, Any], key: str, prefix: str = "") -> dict[str, Any]:
    """``doc[key]``, a mapping (absent or null: empty)."""
    value = doc.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InputError(f"{prefix}{key} must be a mapping, not {type(value).__name__}", where=f"{prefix}{key}")
    return value


def _parameters(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """The declared ``spec.arguments.parameters``, each a mapping with a string name (and an enum a list)."""
    where = "spec.arguments.parameters"
    params = _mapping(spec, "arguments", "spec.").get("parameters")
    if params is None:
        return []
    if not isinstance(params, list):
        raise InputError(f"{where} must be a list, not {type(params).__name__}", where=where)
    for i, p in enumerate(params):
        at = f"{where}[{i}]"
        if not isinstance(p, dict):
            raise InputError(f"{at} must be a mapping, not {type(p).__name__}", where=at)
        if not isinstance(p.get("name"), str) or not p["name"]:
            raise InputError(f"{at}.name must be a non-empty string", where=f"{at}.name")
        if "enum" in p and not isinstance(p["enum"], list):
            raise InputError(f"{at}.enum must be a list, not {type(p['enum']).__name__}", where=f"{at}.enum")
    return params


def server_url(host: str, *, secure: bool = True) -> str:
    """The Argo server's URL from ``host``: a URL as it is, or ``host:port`` the way the `argo` CLI reads
    ARGO_SERVER (https unless ``secure`` is false, as with ARGO_SECURE=false).

    Raises:
        InputError: ``host`` is neither (another scheme, no host name, a port that is not a number).
    """
    text = host.strip()
    url = text if "://" in text else f"{'https' if secure else 'http'}://{text}"
    if not is_http_url(url):
        raise InputError("not an Argo server address: expected https://host:port, http://host:port or host:port "
                         "(the `argo` CLI's ARGO_SERVER form; ARGO_SECURE=false for http)", where=host)
    return url.rstrip("/")


def _timed_session(timeout: float) -> Any:
    """A requests session whose every request has ``timeout`` unless given one: Hera 7.1 passes none, and a
    server that accepts the connection and never answers would hold `alas submit` for ever."""
    import requests

    class TimedSession(requests.Session):
        def request(self, method: Any, url: Any, *args: Any, **kwargs: Any) -> Any:
            kwargs.setdefault("timeout", timeout)
            return super().request(method, url, *args, **kwargs)

    return TimedSession()


def submit(workflow: dict[str, Any], settings: ArgoSettings) -> str:
    """Create ``workflow`` on the Argo server; return the created workflow's name.

    Raises:
        InputError: No server configured.
        ArgoUnavailable: The server did not answer (connection refused, timeout, 5xx).
        TransientError / InputError: The server refused it (the message carries its answer).
    """
    if not settings.host:
        raise InputError("no Argo server configured (set ARGO_SERVER or --host)", where="settings.argo.host")
    host = server_url(settings.host, secure=settings.secure)  # a bad address costs no import and no request
    import hera.workflows.models as m
    import requests
    from hera.workflows.service import WorkflowsService

    token = settings.token.get_secret_value() if settings.token else None
    # The status of the server's answer, as it came: Hera's exception for it can lose it (a JSON body without
    # "message" becomes a bare KeyError('message'), as from a gateway's 503).
    statuses: list[int] = []
    session = _timed_session(settings.timeout)
    session.hooks["response"].append(lambda response, *args, **kwargs: statuses.append(response.status_code))
    service = WorkflowsService(host=host, token=token, namespace=settings.namespace,
                               verify_ssl=settings.verify_ssl, session=session)
    request = m.WorkflowCreateRequest(workflow=m.Workflow.model_validate(workflow), namespace=settings.namespace)
    try:
        with warnings.catch_warnings():
            # Hera 7 serializes with pydantic's deprecated .json(); not ours to fix, and not an error.
            warnings.simplefilter("ignore", DeprecationWarning)
            if not settings.verify_ssl:  # asked for (-k): one warning per request would bury the answer
                import urllib3

                warnings.simplefilter("ignore", urllib3.exceptions.InsecureRequestWarning)
            created = service.create_workflow(request, namespace=settings.namespace)
    except requests.exceptions.SSLError as e:
        # Not transient: retrying cannot make the certificate trusted (a kind cluster's server is self-signed).
        raise InputError("Argo server's TLS certificate is not trusted; for a self-signed server pass -k "
                         "(--insecure-skip-verify) or set ALAS_ARGO__VERIFY_SSL=false", where=host) from e
    except requests.exceptions.Timeout as e:  # before ConnectionError: a connect timeout is both
        raise ArgoUnavailable(f"Argo server did not answer within {settings.timeout:g} s "
                              "(ALAS_ARGO__TIMEOUT, --timeout)", where=host) from e
    except requests.exceptions.ConnectionError as e:
        raise ArgoUnavailable(f"Argo server not reachable: {type(e).__name__}", where=host) from e
    except Exception as e:
        # Hera raises plain exceptions carrying the server's status and body; keep one line of it. The status is
        # the answer's own (above), not a "500" found in the text: a refusal's text may hold one (a value, a time).
        text = str(e).splitlines()[0] if str(e) else type(e).__name__
        if statuses and not text.startswith("Server returned status code"):
            text = f"status code {statuses[-1]} ({text})"
        if statuses and statuses[-1] in (500, 502, 503, 504):
            raise ArgoUnavailable(f"Argo server error: {text[:200]}", where=host) from e
        raise InputError(f"Argo server refused the workflow: {text[:200]}", where=host) from e
    return str(created.metadata.name)
