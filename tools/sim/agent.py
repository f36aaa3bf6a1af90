"""The cluster's node-health agent, as NVSentinel would be, the NVIDIA DRA driver's ComputeDomain controller
(`computedomain.reconcile`), the workloads' own output (`workload_logs.emit`, `training_logs`) and a storage
provisioner (`volumes.provision`).

The health agent quarantines (cordons) a node whose GPU is marked unhealthy (`sim fault --kind hardware`) as soon
as a workload runs on it. So a hardware fault injected before a run is found by the run itself: the node passes
discovery, its pods start, the agent cordons it, and a node-health monitor such as the catalog's
`node.spec.unschedulable == true` fires mid-run.

Run by `up` as `python -m tools.sim.agent KUBECONFIG`; loopback only; polls, so it needs no watch bookkeeping.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

from kubernetes import client, config

from . import computedomain, training_logs, volumes, workload_logs
from .faults import HARDWARE_LABEL, HARDWARE_VALUE

POLL_SECONDS = 0.2


def quarantine_loaded_faulty_nodes(core: client.CoreV1Api) -> list[str]:
    """Cordon every faulty, still schedulable node that has a running pod; returns the nodes cordoned."""
    cordoned = []
    for node in core.list_node(label_selector=f"{HARDWARE_LABEL}={HARDWARE_VALUE}").items:
        if node.spec.unschedulable:
            continue
        pods = core.list_pod_for_all_namespaces(
            field_selector=f"spec.nodeName={node.metadata.name},status.phase=Running").items
        if pods:
            core.patch_node(node.metadata.name, {"spec": {"unschedulable": True}})
            cordoned.append(node.metadata.name)
    return cordoned


def main(kubeconfig: str) -> None:
    apic = config.new_client_from_config(config_file=kubeconfig)
    core, custom = client.CoreV1Api(apic), client.CustomObjectsApi(apic)
    logs_dir, served = Path(kubeconfig).parent / "pod-logs", set()
    trainer = training_logs.Trainer(logs_dir)
    passes = (lambda: quarantine_loaded_faulty_nodes(core), lambda: computedomain.reconcile(custom),
              lambda: workload_logs.emit(core, custom, logs_dir, served), lambda: trainer.tick(core, custom),
              lambda: volumes.provision(core))
    while True:
        for one_pass in passes:
            try:
                one_pass()
            except Exception:  # noqa: BLE001 - the apiserver may be restarting (urllib3 errors included): try again
                pass
        time.sleep(POLL_SECONDS)


if __name__ == "__main__":
    main(sys.argv[1])
