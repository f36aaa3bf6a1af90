"""A smoke run of the simulated cluster: pinned TrainJobs over node pairs, a verdict per node.

It stands in for the certification run in `make demo` until the collection's run exists, and gives
the tests their TrainJob helpers.
"""
from __future__ import annotations

import copy
import time
from collections.abc import Callable
from pathlib import Path

import yaml
from kubernetes import client

RUNTIME = yaml.safe_load((Path(__file__).parent / "data" / "mpi-runtime.yaml").read_text())
TRAINER = ("trainer.kubeflow.org", "v1alpha1")
RUNTIME_UNSEEN = "must be created before the TrainJob"  # Trainer's webhook, while its cache lacks the runtime


def trainjob(name: str, nodes: list[str]) -> dict:
    """A TrainJob on the MPI runtime whose node pods are pinned to `nodes` through a runtime patch."""
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": nodes}]}]}}}
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": name},
        "spec": {
            "runtimeRef": {"apiGroup": "trainer.kubeflow.org", "kind": "TrainingRuntime", "name": "nccl-runtime"},
            "trainer": {"numNodes": len(nodes)},
            "runtimePatches": [{"manager": "sim.cre.io/smoke", "trainingRuntimeSpec": {"template": {"spec": {
                "replicatedJobs": [{"name": "node", "template": {"spec": {"template": {"spec": {
                    "affinity": affinity}}}}}]}}}}],
        },
    }


def runtime(claim_template: str = "") -> dict:
    """The MPI runtime; with `claim_template`, its node pods claim a device from that ResourceClaimTemplate, as
    the catalog's GB200 entries patch their runtime with the ComputeDomain channel (TrainJob runtimePatches
    cannot carry resourceClaims)."""
    body = copy.deepcopy(RUNTIME)
    if claim_template:
        node = next(j for j in body["spec"]["template"]["spec"]["replicatedJobs"] if j["name"] == "node")
        pod = node["template"]["spec"]["template"]["spec"]
        pod["resourceClaims"] = [{"name": "compute-domain-channel", "resourceClaimTemplateName": claim_template}]
        pod["containers"][0]["resources"]["claims"] = [{"name": "compute-domain-channel"}]
    return body


def ensure_runtime(api: client.ApiClient, namespace: str, claim_template: str = "") -> None:
    try:
        client.CustomObjectsApi(api).create_namespaced_custom_object(*TRAINER, namespace, "trainingruntimes",
                                                                     runtime(claim_template))
    except client.ApiException as exc:
        if exc.status != 409:
            raise


def create_trainjob(api: client.ApiClient, namespace: str, name: str, nodes: list[str], timeout: float = 120,
                    trainer: dict | None = None) -> None:
    """Create a pinned TrainJob (its `trainer` fields, e.g. the command, args and env, updated by `trainer`)."""
    custom = client.CustomObjectsApi(api)
    body = trainjob(name, nodes)
    body["spec"]["trainer"].update(trainer or {})
    while_runtime_unseen(lambda: custom.create_namespaced_custom_object(*TRAINER, namespace, "trainjobs", body),
                         timeout)


def while_runtime_unseen(create: Callable[[], object], timeout: float = 120, pause: float = 0.5) -> None:
    """Call `create` (of a TrainJob) again while Trainer's webhook refuses it for a runtime it has not seen yet.
    The webhook checks the runtime against its informer cache, which lags a just-created runtime; after an apiserver
    restart that informer re-lists with client-go's backoff (to 30 s, jittered), so the lag can reach a minute, and
    a test that restarts the apiserver leaves it to the next test that creates one."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            create()
            return
        except client.ApiException as exc:
            if RUNTIME_UNSEEN not in str(exc.body) or time.monotonic() > deadline:
                raise
            time.sleep(pause)


def wait_finished(api: client.ApiClient, namespace: str, names: list[str], timeout: float = 180) -> dict[str, str]:
    """Wait until every TrainJob has a true Complete or Failed condition; returns name -> condition type."""
    custom = client.CustomObjectsApi(api)
    done: dict[str, str] = {}
    deadline = time.monotonic() + timeout
    while len(done) < len(names):
        if time.monotonic() > deadline:
            raise TimeoutError(f"TrainJobs not finished within {timeout:.0f}s: {sorted(set(names) - set(done))}")
        for obj in custom.list_namespaced_custom_object(*TRAINER, namespace, "trainjobs")["items"]:
            final = [c["type"] for c in obj.get("status", {}).get("conditions", [])
                     if c["type"] in ("Complete", "Failed") and c["status"] == "True"]
            if obj["metadata"]["name"] in names and final:
                done[obj["metadata"]["name"]] = final[0]
        time.sleep(0.5)
    return done


def node_pods(api: client.ApiClient, namespace: str, name: str) -> list[client.V1Pod]:
    """The pods of a TrainJob's `node` replicatedJob."""
    return client.CoreV1Api(api).list_namespaced_pod(
        namespace, label_selector=f"jobset.sigs.k8s.io/jobset-name={name},jobset.sigs.k8s.io/replicatedjob-name=node"
    ).items


def run(api: client.ApiClient, namespace: str = "default") -> dict[str, str]:
    """Pair the Ready, schedulable nodes; one TrainJob per pair; node -> PASSED/FAILED (with the reason)."""
    nodes = sorted(n.metadata.name for n in client.CoreV1Api(api).list_node().items if not n.spec.unschedulable)
    pairs = [nodes[i:i + 2] for i in range(0, len(nodes) - 1, 2)]
    ensure_runtime(api, namespace)
    names = [f"smoke-{i}" for i in range(len(pairs))]
    for name, pair in zip(names, pairs):
        create_trainjob(api, namespace, name, pair)
    wait_finished(api, namespace, names)
    verdict: dict[str, str] = {}
    for name in names:
        for pod in node_pods(api, namespace, name):
            term = (pod.status.container_statuses or [None])[0]
            failed = pod.status.phase == "Failed"
            reason = term.state.terminated.message if failed and term and term.state.terminated else ""
            verdict[pod.spec.node_name] = f"FAILED ({reason})" if failed else "PASSED"
    return verdict
