"""The cluster's node-health agent, as NVSentinel would be, the NVIDIA DRA driver's ComputeDomain controller
(`computedomain.reconcile`), the workloads' own output (`logs/`: `workload_logs.emit`, `training_logs`, `dcgm_logs`:
the DCGM diagnostics, `burn_in_logs`: the GEMM burn-in harness, `node_drift_logs`: the node-drift collector,
`gemm_logs`: the worked example's GEMM goodput run) and a storage provisioner (`volumes.provision`).

The health agent quarantines (cordons) a node whose GPU is marked unhealthy (`sim fault --kind hardware`) as soon
as a workload runs on it. So a hardware fault injected before a run is found by the run itself: the node passes
discovery, its pods start, the agent cordons it, and a node-health monitor such as the catalog's
`node.spec.unschedulable == true` fires mid-run.

Run by `up` as `python -m tools.sim.agent KUBECONFIG`; loopback only. The passes poll, but they read nodes and
workload pods from list+watch caches (`cache.Cache`): a pass costs what it does, not the size of the cluster.
"""
from __future__ import annotations

import functools
import logging
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import urllib3
from kubernetes import client, config

from . import cache, computedomain, ranks, volumes
from .faults import HARDWARE_LABEL, HARDWARE_VALUE
from .logs import burn_in_logs, dcgm_logs, gemm_logs, log_style, node_drift_logs, training_logs, workload_logs
from .state import STATE_FILE

POLL_SECONDS = 0.1          # the quarantine: it must see a faulty node's pod run before the fault fails it
SLOW_POLL_SECONDS = 0.5     # logs are stamped from the pod's start, so a later look prints the same lines
GONE_POLL_SECONDS = 1.0


def quarantine_loaded_faulty_nodes(core: client.CoreV1Api, faulty: cache.Cache) -> list[str]:
    """Cordon every faulty (`faulty`: the nodes labelled so), still schedulable node that has a running pod;
    returns the nodes cordoned."""
    cordoned = []
    for node in faulty.items():
        name = node["metadata"]["name"]
        if node["spec"].get("unschedulable"):
            continue
        # Only a faulty node's pods are listed: any running pod counts, not only the workloads the caches hold.
        pods = core.list_pod_for_all_namespaces(field_selector=f"spec.nodeName={name},status.phase=Running").items
        if pods:
            core.patch_node(name, {"spec": {"unschedulable": True}})
            cordoned.append(name)
    return cordoned


LOG = logging.getLogger("cre-sim-agent")


def repeat(one_pass: Callable[[], object], seconds: float) -> None:
    """Run one pass forever, `seconds` apart; each agent runs in a thread of its own, so a slow one never delays
    the health agent's quarantine (it must act within the fault's 800 ms). A failing pass is logged (agent.log)
    when its error changes, so a broken simulator is seen there and a restarting apiserver does not flood it."""
    last = ""
    while True:
        try:
            one_pass()
            last = ""
        except Exception as exc:  # noqa: BLE001 - the apiserver may be restarting (urllib3 errors included): try again
            error = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            if error != last:
                LOG.warning("%s failed, retrying every %gs: %s", getattr(one_pass, "func", one_pass).__name__,
                            seconds, error)
            last = error
        time.sleep(seconds)


def has_compute_domains(custom: client.CustomObjectsApi) -> bool:
    """Asked until the apiserver answers: an agent that starts while it restarts must not die of it."""
    while True:
        try:
            custom.list_cluster_custom_object(*computedomain.CD, "computedomains", limit=1)
            return True
        except client.ApiException as exc:
            if exc.status == 404:
                return False
            LOG.warning("listing ComputeDomains failed, retrying: %s %s", exc.status, exc.reason)
        except urllib3.exceptions.HTTPError as exc:
            LOG.warning("listing ComputeDomains failed, retrying: %s", type(exc).__name__)
        time.sleep(GONE_POLL_SECONDS)


def main(kubeconfig: str) -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s", stream=sys.stderr)
    logs_dir, served = Path(kubeconfig).parent / "pod-logs", set[str]()
    # The log styles `cluster.log_style` saves, beside the kubeconfig (a Source per thread: no shared cache).
    state = Path(kubeconfig).parent / STATE_FILE
    trainer = training_logs.Trainer(logs_dir, log_style.Source(state))
    gemm_run = gemm_logs.GemmRun(logs_dir)
    diagnostics = dcgm_logs.Diagnostics(logs_dir, state)
    burn_ins = burn_in_logs.BurnIns(logs_dir, state)
    snapshots = node_drift_logs.Snapshots(logs_dir, state)

    def clients() -> tuple[client.CoreV1Api, client.CustomObjectsApi]:
        """An API client of its own for each thread (the kubernetes client's pool is not shared across them)."""
        apic = config.new_client_from_config(config_file=kubeconfig)
        return client.CoreV1Api(apic), client.CustomObjectsApi(apic)

    (health, domains, nccl, training, storage, launchers, burning, diagnosing, burn_in,
     snapshot) = (clients() for _n in range(10))
    nodes = cache.Cache(clients()[0].list_node, keep=cache.node_view)
    pods = cache.Cache(clients()[0].list_pod_for_all_namespaces, label_selector=workload_logs.JOBSET_NAME)
    # The quarantine looks ten times a second: at the faulty nodes only, selected by the apiserver.
    faulty = cache.Cache(clients()[0].list_node, label_selector=f"{HARDWARE_LABEL}={HARDWARE_VALUE}",
                         keep=cache.node_view)
    # The storage and ComputeDomain passes read watches too: an idle cluster then costs its apiserver no lists.
    volumes_kept = cache.Cache(clients()[0].list_persistent_volume)
    claims = cache.Cache(clients()[0].list_persistent_volume_claim_for_all_namespaces)
    # Only a cluster of a ComputeDomain profile has the ComputeDomain CRD (`up` installs it before the agent).
    domain_kinds = ((*computedomain.CD, "computedomains"), (*computedomain.DRA, "resourceclaimtemplates"))
    domain_caches = tuple(cache.Cache(functools.partial(clients()[1].list_cluster_custom_object, *kind))
                          for kind in domain_kinds) if has_compute_domains(domains[1]) else ()
    kept_all = (nodes, pods, faulty, volumes_kept, claims, *domain_caches)
    for kept in kept_all:
        threading.Thread(target=kept.run, daemon=True).start()
    for kept in kept_all:
        kept.synced.wait()
    # (pass, seconds between runs): only the quarantine races a fault; the others can look less often, which
    # keeps a test session's many small clusters from loading the machine.
    passes = [(functools.partial(quarantine_loaded_faulty_nodes, health[0], faulty), POLL_SECONDS),
              # mpirun and torchrun react to a lost rank within the run: before a short pod completes.
              (functools.partial(ranks.spread, *launchers, logs_dir, pods, nodes), POLL_SECONDS),
              (functools.partial(workload_logs.emit, nccl[0], nccl[1], logs_dir, served, pods,
                                 log_style.Source(state)), SLOW_POLL_SECONDS),
              (functools.partial(trainer.tick, training[0], training[1], pods, nodes), SLOW_POLL_SECONDS),
              (functools.partial(gemm_run.tick, burning[1], pods, nodes), SLOW_POLL_SECONDS),
              (functools.partial(diagnostics.tick, *diagnosing, pods), SLOW_POLL_SECONDS),
              (functools.partial(burn_ins.tick, *burn_in, pods, nodes), SLOW_POLL_SECONDS),
              (functools.partial(snapshots.tick, *snapshot, pods, nodes), SLOW_POLL_SECONDS),
              (functools.partial(volumes.provision, storage[0], volumes_kept, claims), SLOW_POLL_SECONDS)]
    if domain_caches:
        passes.append((functools.partial(computedomain.reconcile, domains[1], *domain_caches), SLOW_POLL_SECONDS))
    threads = [threading.Thread(target=repeat, args=pair, daemon=True) for pair in passes]
    for thread in threads:
        thread.start()
    # An agent whose cluster is gone must not live on: kwokctl reuses the CA and a later cluster may get the same
    # port, and the agent would serve that cluster's pods logs from a directory that no longer exists.
    while Path(kubeconfig).exists():
        time.sleep(GONE_POLL_SECONDS)


if __name__ == "__main__":
    main(sys.argv[1])
