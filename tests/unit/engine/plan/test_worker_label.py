"""The Job's pod label reaches the workers only (NVCRE pkg/workload/trainjob.go InjectPodLabel/workerTargetJob)."""
from __future__ import annotations

from typing import Any

import pytest

from ansible_collections.cre.certification.plugins.module_utils.engine.catalog import entries
from ansible_collections.cre.certification.plugins.module_utils.engine.plan import workload

LABEL = "nvcre.nvidia.com/job"


def patch(*names: str, manager: str = "example.com/x") -> dict[str, Any]:
    return {"manager": manager, "trainingRuntimeSpec": {"template": {"spec": {
        "replicatedJobs": [{"name": name} for name in names]}}}}


def labelled(train_job: dict[str, Any]) -> dict[str, dict[str, str]]:
    """replicatedJob -> the pod labels our patch sets."""
    job = {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Job", "metadata": {"name": "j", "uid": "u"},
           "spec": {"workload": {"trainJob": train_job}}}
    (ours,) = [p for p in workload.build(job)["spec"]["runtimePatches"] if p["manager"] == workload.POD_LABEL_PATCH_MANAGER]
    return {rj["name"]: rj["template"]["spec"]["template"]["metadata"]["labels"]
            for rj in ours["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]}


@pytest.mark.parametrize(("patches", "expected"), [
    ([], "node"),                                                # no patch: Trainer's worker name
    ([patch("node", "launcher")], "node"),                       # the catalog's MPI entries
    ([patch("launcher", "node")], "node"),                       # the launcher is never the target
    ([patch("launcher"), patch("worker", "node")], "worker"),    # the first non-launcher name, in patch order
    ([patch("launcher")], "node"),                               # a launcher-only patch: `node`
    ([patch("trainer", manager=workload.POD_LABEL_PATCH_MANAGER), patch("node")], "node"),  # our stale patch dropped
])
def test_the_job_label_goes_to_the_worker_replicated_job_only(patches, expected):
    assert labelled({"runtimeRef": {"name": "rt"}, "runtimePatches": patches}) == {expected: {LABEL: "j"}}


@pytest.mark.parametrize("variant", ["nccl-all-reduce", "nccl-all-gather", "nccl-alltoall"])
def test_a_catalog_mpi_launcher_gets_no_job_label(variant):
    spec = entries.build_spec("communication", variant, {"gpuArchitecture": "h100", "nodesPerJob": 2})
    assert labelled(spec["jobTemplate"]["spec"]["workload"]["trainJob"]) == {"node": {LABEL: "j"}}
