"""The simulator of test_workflow_tier plus a provisioner and PV controller, for Workflows with a checkpoint PVC
dependency (workflow spec §7.2, §7.3): each claim gets a Retain PV; a deleted claim terminates for one tick
(pvc-protection) before it goes and its PV is Released; a released Delete PV is removed."""
from __future__ import annotations

import copy

from ansible_collections.cre.certification.plugins.module_utils.engine.api.actions import Delete, Patch, Ref
from tests.unit.engine.reconcile.workflow_sim import Sim

KEY = "nvcre.nvidia.com/workflow-uid"
PVC = "PersistentVolumeClaim"
SCENARIO = {
    "id": "checkpoint-claim",
    "nodes": {"platform": "aws", "gpu_architecture": "h100", "count": 4},
    "patch": [
        {"op": "add", "path": "/spec/dependencies/-",
         "value": {"apiVersion": "v1", "kind": PVC, "metadata": {"name": "ckpt"},
                   "spec": {"accessModes": ["ReadWriteMany"], "resources": {"requests": {"storage": "1Gi"}}}}},
        {"op": "add", "path": "/spec/jobTemplate/spec/checkpoint", "value": {"pvcName": "ckpt", "maxRestarts": 1}},
    ],
}
CLAIMS = ["ckpt-f8135-group-0-iter-1", "ckpt-f8135-group-1-iter-1"]


class VolumeSim(Sim):
    def __init__(self, scenario: dict, foreign: bool = False) -> None:
        super().__init__(scenario)
        self.log: list[tuple[str, str, object]] = []  # (what, PV or claim, detail) in the order they happened
        if foreign:  # a Released PV that once claimed the same name, for another Workflow: never ours to touch
            self.add_pv("pv-foreign", CLAIMS[0], "old-claim", "Released", {KEY: "another-workflow"})

    def add_pv(self, name: str, claim: str, claim_uid: str, phase: str, annotations: dict) -> None:
        self.store[Ref("v1", "PersistentVolume", "", name)] = {
            "apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": name, "uid": f"uid-{name}", "resourceVersion": str(next(self.rv)),
                         "annotations": annotations},
            "spec": {"persistentVolumeReclaimPolicy": "Retain",
                     "claimRef": {"namespace": "certify", "name": claim, "uid": claim_uid}},
            "status": {"phase": phase}}

    def world(self):
        world = super().world()
        world.volumes = copy.deepcopy(self.of_kind("PersistentVolume"))
        return world

    def apply(self, action) -> None:
        if isinstance(action, Patch) and action.ref.kind == "PersistentVolume":
            live = self.store[action.ref]
            expected = (action.patch.get("metadata") or {}).get("resourceVersion")
            assert expected in (None, live["metadata"]["resourceVersion"]), "409"
            live["metadata"].setdefault("annotations", {}).update(action.patch["metadata"].get("annotations") or {})
            live["spec"].update(action.patch.get("spec") or {})
            live["metadata"]["resourceVersion"] = str(next(self.rv))
            self.log.append(("patch", action.ref.name, action.patch))
            return
        if isinstance(action, Delete) and action.ref.kind == PVC:
            live = self.store.get(action.ref)
            if live is not None:
                assert live["metadata"]["uid"] == action.uid, "UID precondition"
                live["metadata"]["deletionTimestamp"] = "2025-01-01T00:00:00Z"
                self.log.append(("delete", action.ref.name, self.workflow_status_refs()))
            return
        super().apply(action)

    def workflow_status_refs(self) -> list[str]:
        return [r["name"] for r in (self.workflow.get("status") or {}).get("dependencyRefs") or []]

    def job_tier(self) -> None:
        self.storage()
        super().job_tier()

    def storage(self) -> None:
        """The provisioner and PV controller, one tick."""
        for ref, obj in list(self.store.items()):
            if ref.kind == PVC and obj["metadata"].get("deletionTimestamp"):
                del self.store[ref]
                for pv in self.of_kind("PersistentVolume").values():
                    if pv["spec"]["claimRef"]["uid"] == obj["metadata"]["uid"]:
                        pv["status"]["phase"] = "Released"
            elif ref.kind == PVC and not (obj.get("spec") or {}).get("volumeName"):
                self.add_pv(f"pv-{ref.name}", ref.name, obj["metadata"]["uid"], "Bound", {})
                obj["spec"]["volumeName"] = f"pv-{ref.name}"
                obj["metadata"]["resourceVersion"] = str(next(self.rv))
        for ref, pv in list(self.store.items()):
            if (ref.kind == "PersistentVolume" and pv["status"]["phase"] == "Released"
                    and pv["spec"]["persistentVolumeReclaimPolicy"] == "Delete"):
                del self.store[ref]
                self.log.append(("gone", ref.name, None))
