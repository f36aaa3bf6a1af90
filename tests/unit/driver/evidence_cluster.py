"""ConfigMaps behind the two Kube calls the evidence store makes: the metadata-only list of a label selector
(`target` + `request`) and `get`. Objects are copied out, as an API server's answers are.

Imported as tests.unit.driver.evidence_cluster (the store's and the bundle's tests)."""
from __future__ import annotations

import copy
from typing import Any

from ansible_collections.cre.certification.plugins.module_utils.driver.evidence_store import METADATA_LIST
from ansible_collections.cre.certification.plugins.module_utils.engine.api.actions import Ref

Obj = dict[str, Any]


class EvidenceKube:
    """ConfigMaps by name; `lists` counts the list calls, `gets` the names read, in order."""

    def __init__(self, configmaps: list[Obj]) -> None:
        self.configmaps = {cm["metadata"]["name"]: copy.deepcopy(cm) for cm in configmaps}
        self.lists = 0
        self.gets: list[str] = []

    def target(self, verb: str, api_version: str, kind: str, namespace: str = "") -> tuple[None, str]:
        return None, f"/api/{api_version}/namespaces/{namespace}/{kind.lower()}s"

    def request(self, method: str, path: str, query: Obj, target: Any, accept: str) -> Obj:
        if (method, accept) != ("GET", METADATA_LIST):
            raise AssertionError(f"unexpected call {method} {path} {accept}")
        self.lists += 1
        wanted = dict(term.split("=") for term in query["labelSelector"].split(","))
        items = [{"metadata": copy.deepcopy(cm["metadata"])} for cm in self.configmaps.values()
                 if wanted.items() <= (cm["metadata"].get("labels") or {}).items()]
        return {"kind": "PartialObjectMetadataList", "items": items, "metadata": {}}

    def get(self, ref: Ref) -> Obj | None:
        self.gets.append(ref.name)
        found = self.configmaps.get(ref.name)
        return copy.deepcopy(found) if found is not None else None
