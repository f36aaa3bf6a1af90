"""kwok Stages: kwok's own node and pod lifecycles, plus the fault stages that fail pods on chosen nodes."""
from __future__ import annotations

import json
from pathlib import Path

import yaml

# Pods finish after this long unless a test asks otherwise, so a Running phase is observable.
DEFAULT_POD_MILLISECONDS = 1000
POD_COMPLETE = "pod-complete"

FAULT_EXIT = {
    # kind: (exit code, reason, message) of the failed container
    "hardware": (137, "Error", "simulated hardware fault: GPU has fallen off the bus (Xid 79)"),
    "workload": (1, "Error", "simulated workload fault: process exited with status 1"),
    # A stalled run prints nothing more but keeps running; a day later it is killed, as a stuck job would be.
    "stall": (1, "Error", "simulated stall: no progress"),
}
CRASH = (1, "Error", "simulated training crash after a checkpoint")
CRASH_POD_ANNOTATION = "sim.cre.certification/crash"
# A broken GPU takes a moment to kill the process (less than a pod's run, so the fault always wins): long
# enough for the health agent's quarantine to be seen by a node-health monitor while the Job still runs.
FAULT_DELAY_MS = {"hardware": 800, "workload": 0, "stall": 24 * 3600 * 1000}

_FAILED_STATUS = """\
{{ $now := Now }}
conditions:
- lastTransitionTime: {{ $now | Quote }}
  status: "False"
  type: Ready
- lastTransitionTime: {{ $now | Quote }}
  status: "False"
  type: ContainersReady
containerStatuses:
{{ range $index, $item := .spec.containers }}
- image: {{ $item.image | Quote }}
  name: {{ $item.name | Quote }}
  ready: false
  restartCount: 0
  started: false
  state:
    terminated:
      exitCode: %(exit)d
      finishedAt: {{ $now | Quote }}
      reason: %(reason)s
      message: %(message)s
      startedAt: {{ $now | Quote }}
{{ end }}
phase: Failed
"""


def base_stages(assets: Path, pod_milliseconds: int = DEFAULT_POD_MILLISECONDS) -> list[dict]:
    """kwok's default node and pod stages (loaded from the kwok module), pod-complete delayed, and the stage
    that fails a training pod the simulated workload marks as crashed (`training_logs`)."""
    stages = [yaml.safe_load(p.read_text()) for p in sorted((assets / "stages").glob("*.yaml"))]
    for stage in stages:
        if stage["metadata"]["name"] == POD_COMPLETE:
            stage["spec"]["delay"] = pod_complete_delay(pod_milliseconds, {})
    crash = _failing("cre-fault-crash", [{"key": f'.metadata.annotations["{CRASH_POD_ANNOTATION}"]',
                                          "operator": "In", "values": ["true"]}], CRASH, 0)
    return [*stages, crash]


def pod_complete_delay(default_ms: int, by_namespace: dict[str, int]) -> dict:
    """pod-complete's delay: `default_ms`, or a namespace's own duration (so tests that share a cluster each run
    their pods as long as they need). kwok evaluates the CEL map on each pod it completes."""
    if not by_namespace:
        return {"durationMilliseconds": default_ms}
    table = "{" + ", ".join(f"{json.dumps(ns)}: {json.dumps(f'{ms}ms')}" for ns, ms in sorted(by_namespace.items())) + "}"
    ns = "self.metadata.namespace"
    return {"durationMilliseconds": default_ms,
            "durationFrom": {"cel": {"expression": f'{ns} in {table} ? {table}[{ns}] : "{default_ms}ms"'}}}


def fault_stage(kind: str, nodes: list[str]) -> dict:
    """A Stage that fails the Job-owned Running pods on `nodes`; its weight beats pod-complete."""
    return _failing(f"cre-fault-{kind}", [{"cel": {"expression": f"self.spec.nodeName in {json.dumps(sorted(nodes))}"}}],
                    FAULT_EXIT[kind], FAULT_DELAY_MS[kind])


def _failing(name: str, match: list[dict], exit_: tuple[int, str, str], delay_ms: int) -> dict:
    exit_code, reason, message = exit_
    return {
        "apiVersion": "kwok.x-k8s.io/v1alpha1",
        "kind": "Stage",
        "metadata": {"name": name},
        "spec": {
            "resourceRef": {"apiGroup": "v1", "kind": "Pod"},
            "selector": {
                "matchExpressions": [
                    {"key": ".metadata.deletionTimestamp", "operator": "DoesNotExist"},
                    {"key": ".status.phase", "operator": "In", "values": ["Running"]},
                    {"key": ".metadata.ownerReferences.[].kind", "operator": "In", "values": ["Job"]},
                    *match,
                ]
            },
            "weight": 10000,
            "delay": {"durationMilliseconds": delay_ms},
            "next": {
                "statusTemplate": _FAILED_STATUS
                % {"exit": exit_code, "reason": reason, "message": json.dumps(message)},
            },
        },
    }
