"""A MemoryKube holding shard ConfigMaps, that counts the two calls the evidence store makes: the metadata-only
list of a label selector and `get` (the bytes, one shard at a time).

Imported as tests.unit.driver.evidence_cluster (the store's and the bundle's tests)."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ansible_collections.cre.certification.plugins.module_utils.engine.api.actions import Ref
from tests.unit.driver.memory_cluster import MemoryKube

Obj = dict[str, Any]


class EvidenceKube(MemoryKube):
    """`lists` counts the metadata lists, `gets` the names read, in order."""

    def __init__(self, configmaps: list[Obj]) -> None:
        super().__init__()
        for cm in configmaps:
            self.put({"apiVersion": "v1", "kind": "ConfigMap", **cm})
        self.lists = 0
        self.gets: list[str] = []

    def list_metadata(self, api_version: str, kind: str, namespace: str = "", labels: str = "") -> Iterator[Obj]:
        self.lists += 1
        return super().list_metadata(api_version, kind, namespace, labels)

    def get(self, ref: Ref) -> Obj | None:
        self.gets.append(ref.name)
        return super().get(ref)
