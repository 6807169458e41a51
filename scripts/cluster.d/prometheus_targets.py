"""Prometheus file_sd targets from `kubectl get services -o json` on stdin: the Services the chart labels
alas.dev/metrics=true, on their "http" (controller) and "metrics" (operator) ports."""

import json
import sys

targets = []
for svc in json.load(sys.stdin)["items"]:
    for port in svc["spec"]["ports"]:
        if port.get("name") in ("http", "metrics"):
            targets.append({"targets": [f"{svc['spec']['clusterIP']}:{port['port']}"],
                            "labels": {"namespace": svc["metadata"]["namespace"], "service": svc["metadata"]["name"]}})
json.dump(targets, sys.stdout, indent=1)
