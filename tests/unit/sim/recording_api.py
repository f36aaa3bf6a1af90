"""The few apiserver calls the simulator's log printers make (DCGM, burn-in, training), recorded, and the caches
they read: one fake for their tests."""
from __future__ import annotations

import json
from typing import Any

Obj = dict[str, Any]


class RecordingApi:
    """Core and custom-objects API in one: pod and node patches and Logs objects kept, a node served as read."""

    def __init__(self, node: Obj | None = None) -> None:
        self.node = node
        self.patched: list[tuple[Any, ...]] = []      # every patch's arguments, pods' and nodes'
        self.annotations: list[dict[str, Any]] = []   # each pod patch's annotations, in order
        self.logs: list[tuple[Any, ...]] = []         # each Logs object's create arguments

    def read_node(self, name: str, _preload_content: bool = True) -> Any:
        return type("Response", (), {"data": json.dumps(self.node)})()

    def patch_namespaced_pod(self, name: str, namespace: str, body: Obj) -> None:
        self.patched.append((name, namespace, body))
        self.annotations.append(body["metadata"]["annotations"])

    def patch_node(self, name: str, body: Obj) -> None:
        self.patched.append((name, body))

    def create_namespaced_custom_object(self, *args: Any) -> None:
        self.logs.append(args)


class Listed:
    """A cache as the printers read it: its objects, and by name."""

    def __init__(self, objects: list[Obj]) -> None:
        self.objects = objects

    def items(self) -> list[Obj]:
        return self.objects

    def by_name(self) -> dict[str, Obj]:
        return {o["metadata"]["name"]: o for o in self.objects}
