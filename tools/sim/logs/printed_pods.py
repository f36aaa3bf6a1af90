"""The agent pass of the tools whose whole output a simulated pod prints at once, then ends by its exit code (the
GEMM burn-in harness, the node-drift collector): each new running pod that runs the tool and is not marked yet is
served once (`serve`: its log written, then the pod marked with the tool's exit code), unless a node-level fault
that ends or hangs the node's GPU pods wins (nothing printed) or its node is gone.
"""
from __future__ import annotations

import json
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any

from kubernetes import client

from .. import stages
from ..cache import Cache

Obj = dict[str, Any]


class PrintedPods(ABC):
    """Called on every agent pass; a subclass says which pods run its tool (`runs`), the annotation that marks a
    served pod (`MARK`) and how a pod is served (`serve`)."""

    MARK = ""

    def __init__(self, logs_dir: Path, state: Path) -> None:
        self.logs_dir, self.state = logs_dir, state
        self.done: set[str] = set()

    @abstractmethod
    def runs(self, pod: Obj) -> bool:
        """Whether the pod runs this tool."""

    @abstractmethod
    def serve(self, core: client.CoreV1Api, custom: client.CustomObjectsApi, pod: Obj, node: Obj,
              saved: Obj) -> None:
        """Write the pod's log, then mark it with the tool's exit code."""

    def tick(self, core: client.CoreV1Api, custom: client.CustomObjectsApi, pods_cache: Cache,
             nodes_cache: Cache) -> list[str]:
        fresh = [p for p in pods_cache.items() if (p.get("status") or {}).get("phase") == "Running"
                 and p["metadata"]["uid"] not in self.done
                 and self.MARK not in ((p.get("metadata") or {}).get("annotations") or {}) and self.runs(p)]
        if not fresh:
            return []
        # Read now, not cached: a fault set just before the run must show in it.
        saved = json.loads(self.state.read_text()) if self.state.exists() else {}
        nodes = nodes_cache.by_name()
        served = []
        for pod in fresh:
            name = pod["spec"].get("nodeName") or ""
            node = nodes.get(name)
            if (saved.get("faults") or {}).get(name) in stages.FAULT_EXIT or node is None:
                self.done.add(pod["metadata"]["uid"])   # killed or hung by the node's fault, or gone with its node
                continue
            self.serve(core, custom, pod, node, saved)
            self.done.add(pod["metadata"]["uid"])
            served.append(pod["metadata"]["name"])
        return served
