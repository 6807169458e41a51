"""`alas submit` through Hera's WorkflowsService, against a loopback HTTP server playing the Argo server."""

from __future__ import annotations

import datetime
import json
import ssl
from collections.abc import Iterator
from pathlib import Path

import pytest

from alas_argo.cli import main
from alas_argo.engines.rendering import repo_root
from alas_argo.engines.submitting import server_url
from alas_argo.errors import InputError
from tests.engines.fake_argo import FakeArgo, serving
from tests.s3server import free_port


@pytest.fixture
def argo_server() -> Iterator[str]:
    with serving(answer=json.dumps({"code": 7, "message": "workflows.argoproj.io is forbidden"}).encode()) as url:
        yield url


def test_submit_a_definition(argo_server: str, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["submit", "alas-plan", "-p", "instance=ft06", "--host", argo_server, "--token", "tok",
                 "--namespace", "alas"])
    assert code == 0
    assert capsys.readouterr().out.strip() == "submitted alas-plan-x7k2p in namespace alas"
    (req,) = FakeArgo.requests
    assert req["path"] == "/api/v1/workflows/alas" and req["auth"] == "Bearer tok"
    params = {p["name"]: p["value"] for p in req["body"]["workflow"]["spec"]["arguments"]["parameters"]}
    assert params["instance"] == "ft06" and params["run-id"].startswith("alas-plan-")
    assert req["body"]["workflow"]["spec"]["templates"]  # the whole compiled workflow


def test_submit_a_rendered_template_references_it(argo_server: str) -> None:
    golden = repo_root() / "workflows" / "argo" / "alas-bench.yaml"
    assert main(["submit", str(golden), "-p", "suite=smoke", "-p", "run-id=b1", "--host", argo_server]) == 0
    spec = FakeArgo.requests[0]["body"]["workflow"]["spec"]
    assert spec["workflowTemplateRef"] == {"name": "alas-bench"}
    assert {"name": "run-id", "value": "b1"} in spec["arguments"]["parameters"]


def test_a_parameter_with_an_enum_is_sent_with_it(argo_server: str) -> None:
    """Argo v3.6.5 checks an enum only on the submitted parameter itself, so the submission carries it."""
    golden = repo_root() / "workflows" / "argo" / "alas-plan.yaml"
    assert main(["submit", str(golden), "-p", "run-id=p1", "-p", "disruptions=2", "--host", argo_server]) == 0
    params = {p["name"]: p for p in FakeArgo.requests[0]["body"]["workflow"]["spec"]["arguments"]["parameters"]}
    assert params["disruptions"] == {"name": "disruptions", "value": "2", "enum": ["0", "1", "2", "3"]}
    assert "enum" not in params["instance"]


def _self_signed(tmp_path: Path) -> tuple[Path, Path]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "argo-server")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1)).sign(key, hashes.SHA256()))
    cert_path, key_path = tmp_path / "tls.crt", tmp_path / "tls.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


def test_a_self_signed_server_needs_insecure_skip_verify(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                                         ) -> None:
    """What `argo server` on a kind cluster answers with (its own self-signed certificate)."""
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(*_self_signed(tmp_path))
    with serving(tls=tls) as host:
        assert main(["submit", "alas-repair", "--host", host]) == 2  # not transient: no retry makes it trusted
        err = capsys.readouterr().err.strip()
        assert "TLS certificate is not trusted" in err and "-k" in err and host in err and "\n" not in err
        assert FakeArgo.requests == []
        assert main(["submit", "alas-repair", "--host", host, "-k", "--namespace", "alas"]) == 0
        captured = capsys.readouterr()
        assert captured.out.strip() == "submitted alas-repair-x7k2p in namespace alas"
        assert "InsecureRequestWarning" not in captured.err
        assert FakeArgo.requests[0]["path"] == "/api/v1/workflows/alas"


def test_refused_and_unreachable_and_unconfigured(argo_server: str, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    FakeArgo.status = 403
    assert main(["submit", "alas-repair", "--host", argo_server]) == 2
    assert "refused" in capsys.readouterr().err
    assert main(["submit", "alas-repair", "--host", f"http://127.0.0.1:{free_port()}"]) == 75
    err = capsys.readouterr().err.strip()
    assert err.startswith("alas: error:") and "not reachable" in err and "\n" not in err
    monkeypatch.delenv("ARGO_SERVER", raising=False)
    monkeypatch.delenv("ALAS_ARGO__HOST", raising=False)
    assert main(["submit", "alas-repair"]) == 2
    assert "no Argo server configured" in capsys.readouterr().err


def test_argo_server_as_the_argo_cli_takes_it(argo_server: str, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """ARGO_SERVER=host:port with ARGO_SECURE=false, as a user of `argo` has them set, submits over http."""
    monkeypatch.delenv("ALAS_ARGO__HOST", raising=False)
    monkeypatch.setenv("ARGO_SERVER", argo_server.removeprefix("http://"))
    monkeypatch.setenv("ARGO_SECURE", "false")
    assert main(["submit", "alas-repair", "--namespace", "alas"]) == 0
    assert capsys.readouterr().out.strip() == "submitted alas-repair-x7k2p in namespace alas"
    assert [r["path"] for r in FakeArgo.requests] == ["/api/v1/workflows/alas"]


@pytest.mark.parametrize(("host", "secure", "url"), [
    ("localhost:2746", True, "https://localhost:2746"),
    ("localhost:2746", False, "http://localhost:2746"),
    (" https://argo.example:443/ ", True, "https://argo.example:443"),
    ("http://10.0.0.7:2746", True, "http://10.0.0.7:2746"),  # a scheme given wins over ARGO_SECURE
    ("argo.example/argo", True, "https://argo.example/argo"),  # a server behind a base path
])
def test_server_url(host: str, secure: bool, url: str) -> None:
    assert server_url(host, secure=secure) == url


@pytest.mark.parametrize("host", ["ftp://argo:21", "https://", "localhost:port", "http://argo:2746?x=1", ":2746"])
def test_a_host_that_is_no_server_address_is_refused_before_any_request(
        host: str, argo_server: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(InputError, match="not an Argo server address"):
        server_url(host)
    assert main(["submit", "alas-repair", "--host", host]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"alas: error: {host}") and "host:port" in err and "\n" not in err
    assert FakeArgo.requests == []


def test_dry_run_and_bad_parameters(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["submit", "alas-plan", "--dry-run", "--json", "-p", "run-id=r9"]) == 0  # JSON on request
    doc = json.loads(capsys.readouterr().out)
    assert doc["kind"] == "Workflow" and doc["metadata"]["generateName"] == "alas-plan-"
    assert main(["submit", "alas-plan", "-p", "colour=red", "--dry-run"]) == 2
    assert "unknown parameter 'colour'" in capsys.readouterr().err
    assert main(["submit", "no-such-workflow", "--dry-run"]) == 2
    bad = tmp_path / "x.yaml"
    bad.write_text("kind: ConfigMap\n")
    assert main(["submit", str(bad), "--dry-run"]) == 2
    capsys.readouterr()
    bad.write_text("kind: Workflow\nspec:\n  arguments:\n    parameters: [{value: '1'}]\n")
    assert main(["submit", str(bad), "--dry-run"]) == 2  # an error naming the part, not a traceback
    assert capsys.readouterr().err.strip() == (f"alas: error: {bad}: spec.arguments.parameters[0].name must be a "
                                               "non-empty string")
    with pytest.raises(SystemExit) as usage:  # argparse's own refusal
        main(["submit", "alas-plan", "--timeout", "0", "--dry-run"])
    assert usage.value.code == 2 and "--timeout: must be above 0" in capsys.readouterr().err
    assert main(["submit", "alas-plan", "--timeout", "7200", "--dry-run"]) == 2  # past the setting's bound
    assert "invalid setting" in capsys.readouterr().err
