"""`alas submit`'s edges, calling the module directly: the Workflow built from a rendered document (its name,
namespace, labels, parameters and the fresh run id), what the Argo server is sent (the namespace's path, the
token or none), and how each answer is classified: a 5xx is transient (exit 75, retry later), any other refusal
is permanent and says why in one line, a dead server is transient, and every error names the server."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import SecretStr

from alas_argo.engines.submitting import ArgoUnavailable, as_submission, submit
from alas_argo.errors import InputError
from alas_argo.settings import ArgoSettings
from tests.engines.fake_argo import FakeArgo, serving
from tests.s3server import free_port


@pytest.fixture
def argo() -> Iterator[str]:
    with serving(name="made-by-argo") as url:
        yield url


def _workflow(kind: str = "Workflow", **metadata: Any) -> dict[str, Any]:
    return {"kind": kind, "metadata": metadata,
            "spec": {"entrypoint": "main", "templates": [{"name": "main", "container": {"image": "x"}}],
                     "arguments": {"parameters": [{"name": "run-id", "value": ""},
                                                  {"name": "level", "value": "1", "enum": ["1", "2"]},
                                                  {"name": "bare"}]}}}


# --- as_submission ----------------------------------------------------------------------------------------------

def test_a_workflow_is_sent_whole_with_its_parameters_and_a_fresh_run_id() -> None:
    doc = _workflow(name="alas-plan", labels={"app": "alas"})
    sent = as_submission(doc, {"level": 2}, namespace="ns1")  # type: ignore[dict-item]  # a value becomes text
    assert sent["apiVersion"] == "argoproj.io/v1alpha1" and sent["kind"] == "Workflow"
    assert sent["metadata"] == {"generateName": "alas-plan-", "namespace": "ns1", "labels": {"app": "alas"}}
    assert sent["spec"]["entrypoint"] == "main" and sent["spec"]["templates"] == doc["spec"]["templates"]
    run_id, level, bare = sent["spec"]["arguments"]["parameters"]
    assert run_id["name"] == "run-id" and re.fullmatch(r"alas-plan-\d{8}-\d{6}", run_id["value"])
    assert level == {"name": "level", "value": "2", "enum": ["1", "2"]}
    assert bare == {"name": "bare", "value": ""}  # declared without a value: empty, and no enum


def test_a_given_run_id_is_kept_and_a_workflow_without_one_gets_none() -> None:
    sent = as_submission(_workflow(name="w"), {"run-id": "r7"}, namespace="n")
    assert sent["spec"]["arguments"]["parameters"][0] == {"name": "run-id", "value": "r7"}
    doc = _workflow(name="w")
    doc["spec"]["arguments"]["parameters"] = [{"name": "other", "value": ""}]
    assert as_submission(doc, {}, namespace="n")["spec"]["arguments"]["parameters"] == [
        {"name": "other", "value": ""}]


def test_the_name_falls_back_to_generate_name_then_alas() -> None:
    by_generate = as_submission(_workflow(generateName="gen-"), {}, namespace="n")
    assert by_generate["metadata"]["generateName"] == "gen-"
    assert by_generate["spec"]["arguments"]["parameters"][0]["value"].startswith("gen-2")
    bare = _workflow()
    del bare["metadata"]
    sent = as_submission(bare, {}, namespace="n")
    assert sent["metadata"] == {"generateName": "alas-", "namespace": "n", "labels": {}}


def test_a_template_is_referenced_by_its_name_not_copied() -> None:
    sent = as_submission(_workflow("WorkflowTemplate", name="alas-bench"), {"run-id": "b"}, namespace="n")
    assert set(sent["spec"]) == {"workflowTemplateRef", "arguments"}
    assert sent["spec"]["workflowTemplateRef"] == {"name": "alas-bench"}
    assert sent["kind"] == "Workflow" and sent["metadata"]["generateName"] == "alas-bench-"


def test_what_cannot_be_submitted_is_refused_naming_the_place() -> None:
    with pytest.raises(InputError) as kind:
        as_submission({"kind": "ConfigMap"}, {}, namespace="n")
    assert kind.value.message == "cannot submit a 'ConfigMap' document (need Workflow or WorkflowTemplate)"
    assert kind.value.where == "kind"
    with pytest.raises(InputError) as unknown:
        as_submission(_workflow(name="w"), {"zeta": "1", "alpha": "2"}, namespace="n")
    assert unknown.value.message == "unknown parameter 'alpha' (declared: run-id, level, bare)"
    assert unknown.value.where == "-p"
    with pytest.raises(InputError, match=r"unknown parameter 'x' \(declared: none\)"):
        as_submission({"kind": "Workflow", "spec": {}}, {"x": "1"}, namespace="n")


@pytest.mark.parametrize(("doc", "where", "message"), [
    ({"kind": "Workflow", "metadata": "w"}, "metadata", "metadata must be a mapping, not str"),
    ({"kind": "Workflow", "spec": ["a"]}, "spec", "spec must be a mapping, not list"),
    ({"kind": "Workflow", "spec": {"arguments": 3}}, "spec.arguments", "spec.arguments must be a mapping, not int"),
    ({"kind": "Workflow", "spec": {"arguments": {"parameters": {"a": 1}}}}, "spec.arguments.parameters",
     "spec.arguments.parameters must be a list, not dict"),
    ({"kind": "Workflow", "spec": {"arguments": {"parameters": ["run-id"]}}}, "spec.arguments.parameters[0]",
     "spec.arguments.parameters[0] must be a mapping, not str"),
    ({"kind": "Workflow", "spec": {"arguments": {"parameters": [{"name": "a"}, {"value": "1"}]}}},
     "spec.arguments.parameters[1].name", "spec.arguments.parameters[1].name must be a non-empty string"),
    ({"kind": "Workflow", "spec": {"arguments": {"parameters": [{"name": 7}]}}},
     "spec.arguments.parameters[0].name", "spec.arguments.parameters[0].name must be a non-empty string"),
    ({"kind": "Workflow", "spec": {"arguments": {"parameters": [{"name": "n", "enum": "1,2"}]}}},
     "spec.arguments.parameters[0].enum", "spec.arguments.parameters[0].enum must be a list, not str"),
    ({"kind": "Workflow", "metadata": {"name": "w", "labels": ["a"]}}, "metadata.labels",
     "metadata.labels must be a mapping, not list"),
])
def test_a_document_of_the_wrong_shape_is_refused_naming_the_part(doc: dict[str, Any], where: str,
                                                                  message: str) -> None:
    with pytest.raises(InputError) as e:
        as_submission(doc, {}, namespace="n")
    assert (e.value.where, e.value.message) == (where, message)


def test_null_parts_are_as_absent() -> None:
    sent = as_submission({"kind": "Workflow", "metadata": None, "spec": {"arguments": {"parameters": None}}}, {},
                         namespace="n")
    assert sent["metadata"] == {"generateName": "alas-", "namespace": "n", "labels": {}}
    assert sent["spec"]["arguments"] == {"parameters": []}


# --- submit -----------------------------------------------------------------------------------------------------

def _settings(host: str, **kwargs: Any) -> ArgoSettings:
    return ArgoSettings(host=host, **kwargs)


def test_the_workflow_goes_to_its_namespace_with_the_token_and_argos_name_comes_back(argo: str) -> None:
    sent = as_submission(_workflow(name="w"), {"run-id": "r"}, namespace="team-a")
    assert submit(sent, _settings(argo, token=SecretStr("tok"), namespace="team-a")) == "made-by-argo"
    (request,) = FakeArgo.requests
    assert request["path"] == "/api/v1/workflows/team-a" and request["auth"] == "Bearer tok"
    assert request["body"]["namespace"] == "team-a"
    assert request["body"]["workflow"]["metadata"]["generateName"] == "w-"


def test_without_a_token_no_authorization_is_sent(argo: str) -> None:
    submit(as_submission(_workflow(name="w"), {}, namespace="argo"), _settings(argo))
    assert [(r["path"], r["auth"]) for r in FakeArgo.requests] == [("/api/v1/workflows/argo", None)]


def test_no_server_configured_is_refused_before_anything() -> None:
    with pytest.raises(InputError) as e:
        submit(_workflow(name="w"), ArgoSettings())
    assert e.value.message == "no Argo server configured (set ARGO_SERVER or --host)"
    assert e.value.where == "settings.argo.host"


@pytest.mark.parametrize("status", [500, 502, 503, 504])
def test_a_server_error_is_transient_and_names_the_server(status: int, argo: str) -> None:
    FakeArgo.status, FakeArgo.answer = status, json.dumps({"code": 14, "message": "etcd unavailable"}).encode()
    with pytest.raises(ArgoUnavailable) as e:
        submit(as_submission(_workflow(name="w"), {}, namespace="n"), _settings(argo))
    assert e.value.message == (f"Argo server error: Server returned status code {status} with message: "
                               "`etcd unavailable`")
    assert e.value.where == argo and e.value.exit_code == 75


@pytest.mark.parametrize(("status", "message"), [
    (403, "workflows.argoproj.io is forbidden"),
    (400, 'spec.arguments.disruptions.value: Invalid value: "500": not in enum'),  # "500" in the text: no status
    (409, "a workflow with that name exists; retry after 503 s"),
])
def test_a_refusal_is_permanent_says_why_in_one_line_and_names_the_server(status: int, message: str,
                                                                         argo: str) -> None:
    FakeArgo.status, FakeArgo.answer = status, json.dumps({"code": 7, "message": message}).encode()
    with pytest.raises(InputError) as e:
        submit(as_submission(_workflow(name="w"), {}, namespace="n"), _settings(argo))
    assert e.value.message == (f"Argo server refused the workflow: Server returned status code {status} with "
                               f"message: `{message}`")
    assert e.value.where == argo and e.value.exit_code == 2


def test_a_long_or_many_line_refusal_is_cut_to_one_line_of_200_characters(argo: str) -> None:
    FakeArgo.status, FakeArgo.answer = 422, ("x" * 300 + "\nsecond line").encode()  # not JSON: the text as it came
    with pytest.raises(InputError) as e:
        submit(as_submission(_workflow(name="w"), {}, namespace="n"), _settings(argo))
    said = e.value.message.removeprefix("Argo server refused the workflow: ")
    assert said == ("Server returned status code 422 with message: `" + "x" * 300)[:200]


def test_a_dead_server_is_transient_and_named() -> None:
    host = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(ArgoUnavailable) as e:
        submit(as_submission(_workflow(name="w"), {}, namespace="n"), _settings(host))
    assert e.value.message == "Argo server not reachable: ConnectionError" and e.value.where == host


def test_a_server_that_never_answers_times_out_transient_and_named() -> None:
    """It accepts the connection and says nothing: `alas submit` gives up after the settings' timeout."""
    import socket

    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        host = f"http://127.0.0.1:{listener.getsockname()[1]}"
        with pytest.raises(ArgoUnavailable) as e:
            submit(as_submission(_workflow(name="w"), {}, namespace="n"), _settings(host, timeout=0.2))
    assert e.value.message == "Argo server did not answer within 0.2 s (ALAS_ARGO__TIMEOUT, --timeout)"
    assert e.value.where == host


def test_a_host_port_is_read_the_way_argo_reads_it(argo: str) -> None:
    """`secure=False` makes host:port http (ARGO_SECURE=false); the error names the URL, not the bare form."""
    bare = argo.removeprefix("http://")
    assert submit(as_submission(_workflow(name="w"), {}, namespace="n"), _settings(bare, secure=False)) == \
        "made-by-argo"
    with pytest.raises(InputError) as e:  # https to an http server: not a trusted TLS answer, and not transient
        submit(as_submission(_workflow(name="w"), {}, namespace="n"), _settings(bare))
    assert e.value.where == f"https://{bare}"
    assert e.value.message == ("Argo server's TLS certificate is not trusted; for a self-signed server pass -k "
                               "(--insecure-skip-verify) or set ALAS_ARGO__VERIFY_SSL=false")


@pytest.mark.parametrize(("status", "error"), [(503, ArgoUnavailable), (400, InputError)])
def test_an_answer_without_argos_message_is_still_classified_by_its_status(status: int, error: type[Exception],
                                                                           argo: str) -> None:
    """A gateway in front of Argo answers JSON without "message"; Hera then raises a bare KeyError('message').
    The status of the answer still decides: a 503 is transient, a 400 is not, and both say the status."""
    FakeArgo.status, FakeArgo.answer = status, json.dumps({"error": "upstream connect error"}).encode()
    with pytest.raises(error) as e:
        submit(as_submission(_workflow(name="w"), {}, namespace="n"), _settings(argo))
    assert f"status code {status} ('message')" in str(e.value) and e.value.where == argo  # type: ignore[attr-defined]
