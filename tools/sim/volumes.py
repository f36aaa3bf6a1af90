"""A storage provisioner for the simulated cluster: every pending PersistentVolumeClaim gets a PersistentVolume
of its size, class and access modes, bound to it by the real PV controller (kube-controller-manager), so
checkpointing workloads (their PVC dependency) schedule as on a cluster with a storage driver."""
from __future__ import annotations

from kubernetes import client

DEFAULT_SIZE = "1Gi"


def provision(core: client.CoreV1Api) -> list[str]:
    """Create a PV for every unbound claim that has none yet; returns the PVs created."""
    made = []
    existing = {pv.spec.claim_ref.uid for pv in core.list_persistent_volume().items if pv.spec.claim_ref}
    for pvc in core.list_persistent_volume_claim_for_all_namespaces().items:
        if pvc.spec.volume_name or pvc.metadata.uid in existing or pvc.metadata.deletion_timestamp:
            continue
        name = f"sim-{pvc.metadata.uid}"
        size = ((pvc.spec.resources.requests or {}) if pvc.spec.resources else {}).get("storage", DEFAULT_SIZE)
        core.create_persistent_volume({
            "apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": name, "labels": {"sim.cre.certification/provisioned": "true"}},
            "spec": {"capacity": {"storage": size}, "accessModes": pvc.spec.access_modes or ["ReadWriteOnce"],
                     "storageClassName": pvc.spec.storage_class_name or "",
                     "persistentVolumeReclaimPolicy": "Delete",
                     "hostPath": {"path": f"/tmp/cre-sim-volumes/{name}"},
                     "claimRef": {"namespace": pvc.metadata.namespace, "name": pvc.metadata.name,
                                  "uid": pvc.metadata.uid}}})
        made.append(name)
    return made
