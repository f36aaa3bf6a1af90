"""Job construction and dependency scoping/renaming (workflow spec §7, §8.3), table-driven from data/jobs/."""
from pathlib import Path

import jsonpointer
import pytest
import yaml

from ansible_collections.cre.certification.plugins.module_utils.engine.plan import jobs
from ansible_collections.cre.certification.plugins.module_utils.engine.plan.dependencies import (
    DependencyPlan,
    name_of,
)

DATA = Path(__file__).parents[1] / "data" / "jobs"
DEPENDENCIES = yaml.safe_load((DATA / "dependencies.yaml").read_text())
JOBS = yaml.safe_load((DATA / "jobs.yaml").read_text())
ABSENT = object()


def assert_pointers(doc, expected):
    for pointer, value in expected.items():
        found = jsonpointer.resolve_pointer(doc, pointer, ABSENT)
        assert (None if found is ABSENT else found) == value, pointer


@pytest.mark.parametrize("case", DEPENDENCIES, ids=[c["id"] for c in DEPENDENCIES])
def test_dependency_plan(case):
    plan = DependencyPlan(case["dependencies"], case["jobSpec"], {"schedulerName": "kai-scheduler"})
    assert [name_of(d) for d in plan.workflow_scoped] == case["expect"]["workflow_scoped"]
    assert [name_of(d) for d in plan.job_scoped] == case["expect"]["job_scoped"]
    spec, copies, effective = plan.for_launch(case["suffix"])
    assert_pointers(spec, case["expect"]["spec"])
    assert_pointers(copies, case["expect"]["copies"])
    assert effective == plan.workflow_scoped + copies
    again = plan.for_launch(case["suffix"])[0]
    assert again == spec and again is not spec  # deterministic, and fresh per launch


@pytest.mark.parametrize("case", JOBS, ids=[c["id"] for c in JOBS])
def test_job_manifest(case):
    job = jobs.job_manifest(case["workflow"], case["jobSpec"], case["group"], "wf-job", case["gpuProducts"])
    assert job["apiVersion"] == "nvcre.nvidia.com/v1alpha1" and job["kind"] == "Job"
    assert job["metadata"]["labels"] == {"app.kubernetes.io/managed-by": "nvcre", "nvcre.nvidia.com/workflow": "wf",
                                         "nvcre.nvidia.com/group": case["group"]["name"]}
    assert_pointers(job, case["expect"])
