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

from . import cache

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


def provision(core: client.CoreV1Api, volumes: cache.Cache, claims: cache.Cache) -> list[str]:
    """Create a PV for every unbound claim (`claims`, watched) of a simulator class that has none among the
    watched PVs (`volumes`) yet; returns the PVs created."""
    made = []
    existing = {(pv["spec"].get("claimRef") or {}).get("uid") for pv in volumes.items()}
    for pvc in claims.items():
        meta, spec = pvc["metadata"], pvc.get("spec") or {}
        policy = CLASSES.get(spec.get("storageClassName") or "")
        if policy is None or spec.get("volumeName") or meta["uid"] in existing or meta.get("deletionTimestamp"):
            continue
        name = f"sim-{meta['uid']}"
        size = ((spec.get("resources") or {}).get("requests") or {}).get("storage", DEFAULT_SIZE)
        try:
            core.create_persistent_volume({
                "apiVersion": "v1", "kind": "PersistentVolume",
                "metadata": {"name": name, "labels": {"sim.cre.certification/provisioned": "true"}},
                "spec": {"capacity": {"storage": size}, "accessModes": spec.get("accessModes") or ["ReadWriteOnce"],
                         "storageClassName": spec.get("storageClassName"),
                         "persistentVolumeReclaimPolicy": policy,
                         "hostPath": {"path": f"{VOLUME_ROOT}/{name}"},
                         "claimRef": {"namespace": meta["namespace"], "name": meta["name"], "uid": meta["uid"]}}})
        except client.ApiException as exc:
            if exc.status != 409:  # made by an earlier pass that the watch has not shown yet
                raise
            continue
        made.append(name)
    return made
