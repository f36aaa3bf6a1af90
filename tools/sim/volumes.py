"""Storage for the simulated cluster, as a CSI driver would give it: two StorageClasses and a provisioner.

- `sim-standard` (the default class, reclaim policy Delete) and `sim-retain` (Retain) name this provisioner.
  Every pending claim of one of them gets a PersistentVolume of its size and access modes with the class's
  reclaim policy, pre-bound to the claim; the real PV controller (kube-controller-manager) completes the
  binding. Checkpointing workloads (their PVC dependency) thus schedule as on a cluster with a storage driver.
- A claim of class "" is left to the PV controller, which binds it to a matching pre-created PV (static
  provisioning), as on a real cluster.
- Released volumes follow their reclaim policy through the PV controller: a `Retain` PV stays `Released`, a
  `Delete` PV is deleted. These PVs are hostPath volumes under /tmp, for which kube-controller-manager has an
  in-tree deleter (they carry no `pv.kubernetes.io/provisioned-by`, so it does not wait for an external
  provisioner), so the simulator needs no deleter of its own.
"""
from __future__ import annotations

from kubernetes import client

DEFAULT_SIZE = "1Gi"
PROVISIONER = "sim.cre.certification/hostpath"
DEFAULT_CLASS = "sim-standard"
RETAIN_CLASS = "sim-retain"
CLASSES = {DEFAULT_CLASS: "Delete", RETAIN_CLASS: "Retain"}
VOLUME_ROOT = "/tmp/cre-sim-volumes"  # the in-tree hostPath deleter removes only paths under /tmp/


def install(apic: client.ApiClient) -> None:
    """Create the StorageClasses (`up` does it before the cluster is handed out)."""
    storage = client.StorageV1Api(apic)
    for name, policy in CLASSES.items():
        default = {"storageclass.kubernetes.io/is-default-class": "true"} if name == DEFAULT_CLASS else {}
        storage.create_storage_class({
            "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
            "metadata": {"name": name, "annotations": default},
            "provisioner": PROVISIONER, "reclaimPolicy": policy, "volumeBindingMode": "Immediate"})


def provision(core: client.CoreV1Api) -> list[str]:
    """Create a PV for every unbound claim of a simulator class that has none yet; returns the PVs created."""
    made = []
    existing = {pv.spec.claim_ref.uid for pv in core.list_persistent_volume().items if pv.spec.claim_ref}
    for pvc in core.list_persistent_volume_claim_for_all_namespaces().items:
        policy = CLASSES.get(pvc.spec.storage_class_name or "")
        if (policy is None or pvc.spec.volume_name or pvc.metadata.uid in existing
                or pvc.metadata.deletion_timestamp):
            continue
        name = f"sim-{pvc.metadata.uid}"
        size = ((pvc.spec.resources.requests or {}) if pvc.spec.resources else {}).get("storage", DEFAULT_SIZE)
        core.create_persistent_volume({
            "apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": name, "labels": {"sim.cre.certification/provisioned": "true"}},
            "spec": {"capacity": {"storage": size}, "accessModes": pvc.spec.access_modes or ["ReadWriteOnce"],
                     "storageClassName": pvc.spec.storage_class_name,
                     "persistentVolumeReclaimPolicy": policy,
                     "hostPath": {"path": f"{VOLUME_ROOT}/{name}"},
                     "claimRef": {"namespace": pvc.metadata.namespace, "name": pvc.metadata.name,
                                  "uid": pvc.metadata.uid}}})
        made.append(name)
    return made
