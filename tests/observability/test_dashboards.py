"""The generated dashboards are up to date, well formed, and query only metrics that exist."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest
import yaml

from alas_argo import metrics

ROOT = Path(__file__).resolve().parents[2]


def load_generator() -> ModuleType:
    pytest.importorskip("grafana_foundation_sdk")
    spec = importlib.util.spec_from_file_location("alas_dashboards", ROOT / "observability" / "dashboards.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def golden() -> dict[str, dict]:
    return {p.name: json.loads(p.read_text()) for p in sorted((ROOT / "observability" / "dashboards").glob("*.json"))}


def test_golden_files_match_the_generator() -> None:
    gen = load_generator()
    built = gen.build_all()
    assert sorted(built) == ["alas-overview.json", "alas-repair.json"]
    for directory in gen.DASHBOARD_DIRS:
        for name, model in built.items():
            assert (directory / name).read_text() == gen.render(model), f"{directory / name} is stale"
    assert gen.main(["--check"]) == 0


def test_check_mode_detects_a_hand_edit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gen = load_generator()
    monkeypatch.setattr(gen, "DASHBOARD_DIRS", (tmp_path,))
    monkeypatch.setattr(gen, "ROOT", tmp_path)
    assert gen.main([]) == 0
    (tmp_path / "alas-repair.json").write_text("{}\n")
    assert gen.main(["--check"]) == 1


def known_series() -> set[str]:
    names = set()
    for line in metrics.exposition().decode().splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split()
            names.add(name)
            if kind == "histogram":
                names |= {f"{name}_bucket", f"{name}_sum", f"{name}_count"}
    rules = yaml.safe_load((ROOT / "observability" / "rules" / "alas.rules.yaml").read_text())
    names |= {r["record"] for g in rules["groups"] for r in g["rules"] if "record" in r}
    return names


@pytest.mark.parametrize("name", ["alas-overview.json", "alas-repair.json"])
def test_dashboard_structure_and_queries(name: str) -> None:
    model = golden()[name]
    assert model["uid"] == name.removesuffix(".json")
    assert [v["name"] for v in model["templating"]["list"]] == ["datasource"]
    panels = [p for p in model["panels"] if p["type"] != "row"]
    assert len(panels) >= 5
    ids = [p["id"] for p in model["panels"]]
    assert len(ids) == len(set(ids))
    known = known_series()
    for panel in panels:
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
        refs = [t["refId"] for t in panel["targets"]]
        assert refs and len(refs) == len(set(refs)) and all(refs)
        for target in panel["targets"]:
            used = set(re.findall(r"\b(alas[:_][a-z0-9_:]+)", target["expr"]))
            assert used, target["expr"]
            assert used <= known, f"{panel['title']}: unknown series {used - known}"
