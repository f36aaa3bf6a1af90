"""spec.priorityClassName: built offline as certification_run and workloadrun_run build their Workflows, every pod
template of the run carries it (the MPI launcher too), whatever the scheduler; one group launch's runtime copy keeps
it; a bad name is refused with its field path before anything is built."""
from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from ansible_collections.cre.certification.plugins.module_utils.engine.api.errors import InputError
from ansible_collections.cre.certification.plugins.module_utils.engine.plan import category_build, mocknodes, workloadrun_build
from ansible_collections.cre.certification.plugins.module_utils.engine.plan.dependencies import Renamer
from ansible_collections.cre.certification.plugins.module_utils.engine.reconcile import certification_tier, workloadrun_tier

CASES = yaml.safe_load((Path(__file__).parents[1] / "data" / "priority" / "cases.yaml").read_text())
FRAMEWORKS = {"mpi": {"binary": "/usr/local/bin/all_reduce_perf_mpi", "mpirunPath": "/usr/local/mpi/bin/mpirun"},
              "torch": {"script": "train.py"}, "exec": {"command": ["nvidia-smi"]}}
CLASS = "gpu-certify-high"


def pod_specs(workflow: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """replicatedJob name -> pod spec, over every TrainingRuntime dependency of the Workflow."""
    found = {}
    for dep in workflow["spec"].get("dependencies") or []:
        if dep["kind"] == "TrainingRuntime":
            for rj in dep["spec"]["template"]["spec"]["replicatedJobs"]:
                found[rj["name"]] = rj["template"]["spec"]["template"]["spec"]
    return found


def build(case: dict[str, Any], priority_class: str | None) -> dict[str, Any]:
    nodes = mocknodes.mock_nodes(case["platform"], case["arch"], 4)
    if case["run"] == "certification":
        cert = certification_tier.desired_certification({
            "name": "c", "namespace": "ns", "categories": [case["category"]], "target": {},
            "gang_scheduler": case.get("gang"), "priority_class_name": priority_class, "options": {}, "labels": {}})
        cert["metadata"]["uid"] = "uid-1"
        return category_build.build_workflow(cert, cert["spec"]["categories"][0], platform=case["platform"],
                                             gpu_architecture=case["arch"], available_nodes=4, nodes=nodes)
    spec = {"image": "img:1", "numNodes": 2, "framework": {case["framework"]: copy.deepcopy(FRAMEWORKS[case["framework"]])},
            **({"gangScheduler": case["gang"]} if case.get("gang") else {}),
            **({"priorityClassName": priority_class} if priority_class else {})}
    run = workloadrun_tier.desired_workload_run({"name": "wr", "namespace": "ns", "spec": spec, "labels": {}})
    run["metadata"]["uid"] = "uid-1"
    workflow, _resolved = workloadrun_build.build_workflow(run, platform=case["platform"], gpu_architecture=case["arch"],
                                                           nodes=nodes)
    return workflow


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["name"])
def test_every_pod_template_carries_the_priority_class(case):
    specs = pod_specs(build(case, CLASS))
    assert list(specs) == case["jobs"]
    assert {name: spec.get("priorityClassName") for name, spec in specs.items()} == {n: CLASS for n in case["jobs"]}
    if case.get("gang"):  # independent of the gang scheduler: both are there
        assert {spec.get("schedulerName") for spec in specs.values()} == {case["gang"]["schedulerName"]}


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["name"])
def test_it_changes_nothing_else(case):
    without = build(case, None)
    assert all("priorityClassName" not in spec for spec in pod_specs(without).values())
    with_class = build(case, CLASS)
    for spec in pod_specs(with_class).values():
        del spec["priorityClassName"]
    assert with_class == without


@pytest.mark.parametrize(("value", "error"), [
    ("High", "spec.priorityClassName: String should match pattern"),
    ("a" * 254, "spec.priorityClassName: String should have at most 253 characters"),
])
def test_a_name_no_priority_class_can_have_is_refused(value, error):
    with pytest.raises(InputError) as err:
        build({"run": "certification", "category": "communication/nccl-all-reduce", "platform": "aws",
               "arch": "h100"}, value)
    assert str(err.value).startswith(error)


def test_options_cannot_carry_it():
    with pytest.raises(InputError) as err:
        certification_tier.desired_certification({
            "name": "c", "namespace": "ns", "categories": ["communication/nccl-all-reduce"], "target": {},
            "gang_scheduler": None, "options": {"priorityClassName": CLASS}, "labels": {}})
    assert str(err.value) == "options.priorityClassName: is not a CategoryOptions field; use the module option instead"


def test_a_class_named_like_a_job_scoped_runtime_survives_its_renaming():
    runtime = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainingRuntime", "metadata": {"name": "rt"},
               "spec": {"template": {"spec": {"replicatedJobs": [
                   {"name": "launcher", "template": {"spec": {"template": {"spec": {"priorityClassName": "rt"}}}}}]}}}}
    job_spec = {"workload": {"trainJob": {"runtimeRef": {"kind": "TrainingRuntime", "name": "rt"}}}}
    spec, (copied,) = Renamer(job_spec, [runtime], None).rename("g0-i0")
    assert copied["metadata"]["name"] != "rt"
    assert spec["workload"]["trainJob"]["runtimeRef"]["name"] == copied["metadata"]["name"]
    pod = copied["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    assert pod["priorityClassName"] == "rt"
