"""The real Helm CLI for the chart tests: ``helm template`` renders the chart exactly as an install would.

Found, in order: ``$ALAS_HELM``; the build cache of ``scripts/cluster``
(``${ALAS_CLUSTER_CACHE:-~/.cache/alas-cluster}/bin/helm-<HELM_VERSION>/helm``, ``HELM_VERSION`` read from
``scripts/cluster.d/versions.env``); ``helm`` on ``PATH``. Tests skip, saying so, when none is there.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import yaml

__all__ = ["KUBE_VERSION", "SKIP_REASON", "find_helm", "helm_template"]

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "charts" / "alas"
VERSIONS = ROOT / "scripts" / "cluster.d" / "versions.env"
#: The Kubernetes version the chart is rendered for (a Helm built from its module without the release
#: ldflags would otherwise assume v1.20, which the chart's kubeVersion refuses).
KUBE_VERSION = "v1.31.0"
SKIP_REASON = ("no Helm CLI: set ALAS_HELM, build it into the cluster cache (scripts/cluster), or put helm on "
               "PATH")


def _pinned_version() -> str | None:
    if not VERSIONS.is_file():
        return None
    for line in VERSIONS.read_text().splitlines():
        key, sep, value = line.split("#", 1)[0].strip().partition("=")
        if sep and key.strip() == "HELM_VERSION":
            return value.strip().strip("'\"")
    return None


def find_helm() -> str | None:
    """The Helm binary to use, or None."""
    if os.environ.get("ALAS_HELM"):
        return os.environ["ALAS_HELM"]
    version = _pinned_version()
    if version is not None:
        cache = Path(os.environ.get("ALAS_CLUSTER_CACHE") or Path.home() / ".cache" / "alas-cluster")
        cached = cache / "bin" / f"helm-{version}" / "helm"
        if cached.is_file() and os.access(cached, os.X_OK):
            return str(cached)
    return shutil.which("helm")


class HelmFailed(AssertionError):
    """``helm template`` exited non-zero; ``stderr`` says why."""

    def __init__(self, stderr: str) -> None:
        super().__init__(stderr.strip())
        self.stderr = stderr


def helm_template(helm: str, values: dict[str, Any] | None = None, *, release: str = "alas",
                  namespace: str = "alas", values_files: list[Path] | None = None, args: list[str] | None = None,
                  tmp: Path) -> list[dict[str, Any]]:
    """Every object ``helm template`` renders for ``charts/alas`` (documents in output order).

    Raises:
        HelmFailed: Helm refused (a schema violation, a ``fail``, a template error).
    """
    command = [helm, "template", release, str(CHART), "--namespace", namespace, "--kube-version", KUBE_VERSION]
    for path in values_files or []:
        command += ["--values", str(path)]
    if values:
        file = tmp / f"values-{len(list(tmp.glob('values-*.yaml')))}.yaml"
        file.write_text(yaml.safe_dump(values))
        command += ["--values", str(file)]
    done = subprocess.run([*command, *(args or [])], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "HELM_CACHE_HOME": str(tmp / "helm-cache"),
                               "HELM_CONFIG_HOME": str(tmp / "helm-config"),
                               "HELM_DATA_HOME": str(tmp / "helm-data")})
    if done.returncode != 0:
        raise HelmFailed(done.stderr)
    # libyaml's parser where PyYAML has it: the pure-Python one spent most of tests/charts' time reading these
    # renders (tens of thousands of lines each). Same SafeConstructor, so the same objects: the 8 variants of
    # test_rendered.py load equal either way (compared while making this change).
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return [d for d in yaml.load_all(done.stdout, Loader=loader) if d]
