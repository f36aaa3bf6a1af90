"""A status write the installed CRD pruned: the written object against the server's answer, one line naming what was
written, why it is gone and what to do; nothing said when the field was kept, never written, or is not ours."""
from __future__ import annotations

import copy
from typing import Any

import pytest

from ansible_collections.cre.certification.plugins.module_utils.driver import execute
from ansible_collections.cre.certification.plugins.module_utils.driver.errors import DriverError
from ansible_collections.cre.certification.plugins.module_utils.driver.pruned_status import pruned, refuse_pruned
from ansible_collections.cre.certification.plugins.module_utils.engine.api.actions import Create, Ref, Step, UpdateStatus
from tests.unit.driver.memory_cluster import MemoryKube

SEAL = {"attempt": 1, "rows": 32, "shards": 1, "sha256": ["2a78e605"]}
TOTALS = {"rows": 32, "shards": 1, "jobs": 1, "truncated": 0}
REMEDY = ("install this collection's CRDs (the cre.certification.crds role, with crds_install: true, and "
          "crds_take_over: true if another installer owns them) or upgrade them, then run again")


def obj(kind: str, status: dict[str, Any], api_version: str = "nvcre.nvidia.com/v1alpha1") -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": "cert-dcgm-0", "namespace": "nvcre"},
            "status": status}


def without_evidence(written: dict[str, Any]) -> dict[str, Any]:
    """The answer of a server whose CRD does not declare status.evidence: the object as written, that field pruned."""
    answer = copy.deepcopy(written)
    answer["status"].pop("evidence", None)
    return answer


def test_a_pruned_seal_says_what_was_written_why_it_is_gone_and_what_to_do() -> None:
    written = obj("Job", {"workloadRef": {"name": "cert-dcgm-0-workload"}, "evidence": SEAL})
    assert pruned(written, without_evidence(written)) == (
        "writing the evidence seal of Job nvcre/cert-dcgm-0: the installed Job CRD (jobs.nvcre.nvidia.com) prunes "
        "status.evidence, so it is not this collection's schema (NVCRE's own or an older version); " + REMEDY)


def test_pruned_workflow_totals_name_the_workflow_crd() -> None:
    written = obj("Workflow", {"orchestration": {"groups": []}, "evidence": TOTALS})
    assert pruned(written, without_evidence(written)) == (
        "writing the evidence totals of Workflow nvcre/cert-dcgm-0: the installed Workflow CRD "
        "(workflows.nvcre.nvidia.com) prunes status.evidence, so it is not this collection's schema (NVCRE's own or "
        "an older version); " + REMEDY)


@pytest.mark.parametrize(("written", "answer"), [
    pytest.param(obj("Job", {"evidence": SEAL}), obj("Job", {"evidence": SEAL}), id="kept"),
    pytest.param(obj("Workflow", {"evidence": TOTALS}), obj("Workflow", {"evidence": TOTALS}), id="totals-kept"),
    pytest.param(obj("Job", {"workloadRef": {"name": "w"}}), obj("Job", {"workloadRef": {"name": "w"}}),
                 id="no-seal-written"),
    pytest.param(obj("Job", {"evidence": None}), obj("Job", {}), id="null-written"),
    pytest.param(obj("Job", {}), {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Job", "metadata": {}},
                 id="no-status-answered"),
    pytest.param(obj("Certification", {"evidence": TOTALS}), obj("Certification", {}), id="not-a-kind-of-ours"),
    pytest.param(obj("Job", {"evidence": SEAL}, "batch/v1"), obj("Job", {}, "batch/v1"), id="another-group's-job"),
])
def test_nothing_is_said_when_no_field_of_ours_was_pruned(written: dict[str, Any], answer: dict[str, Any]) -> None:
    assert pruned(written, answer) is None
    refuse_pruned(written, answer)


def test_refuse_pruned_stops_the_run_with_the_line() -> None:
    written = obj("Job", {"evidence": SEAL})
    with pytest.raises(DriverError) as err:
        refuse_pruned(written, without_evidence(written))
    assert str(err.value) == pruned(written, without_evidence(written))


def test_an_answer_that_is_no_object_is_not_judged() -> None:
    refuse_pruned(obj("Job", {"evidence": SEAL}), None)


def test_a_seal_the_server_keeps_lets_the_shards_after_it_go_out() -> None:
    """With this collection's CRDs (the in-memory store keeps every field) the seal's write and the shard after it
    both run: the check stops nothing that is not pruned."""
    kube = MemoryKube()
    job = kube.create(obj("Job", {}) | {"spec": {}})
    seal = UpdateStatus({**job, "status": {"evidence": SEAL}})
    shard = Create({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": "cert-dcgm-0-evidence-1-1", "namespace": "nvcre"}})
    assert execute.run(kube, Step([seal, shard]), "cert-dcgm").done == 2
    assert kube.get(Ref.of(job))["status"]["evidence"] == SEAL
