"""A Job CRD that prunes `status.evidence` (NVCRE's own, or an older one of this collection's, left in place by
`crds_install: false`): the run stops at the first seal it writes, with one line that says what, why and what to do,
before any shard and long before its timeout, instead of writing the seal again pass after pass. Nothing it wrote is
lost: with this collection's CRDs installed again, the same run continues and ends as any run does.

The module replaces a CRD, which no reset repairs, so it has a cluster of its own (docs/dev/testing.md: breakers)."""
from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from kubernetes import client

from ansible_collections.cre.certification.plugins.module_utils.engine.api.objects import terminal
from ansible_collections.cre.certification.plugins.module_utils.engine.evidence import shards
from tests.ansible_run import ansible_module

from .conftest import Sim, install_crds, own_sim
from .seed import NVCRE, items

ROOT = Path(__file__).resolve().parents[2]
JOB_CRD = ROOT / "crds" / "nvcre.nvidia.com_jobs.yaml"
NS, PROBE_NS = "prune", "prune-probe"
TIMEOUT = 240  # the run's own: a run that spins on its seal ends only here
SEAL = {"attempt": 1, "rows": 0, "shards": 0, "sha256": []}
RUN = {"name": "pr", "namespace": NS, "categories": [{"domain": "diagnostics", "variant": "dcgm-level2"}],
       "poll_interval": 0.5, "timeout": TIMEOUT}


def expected_line(job: str) -> str:
    return (f"writing the evidence seal of Job {NS}/{job}: the installed Job CRD (jobs.nvcre.nvidia.com) prunes "
            "status.evidence, so it is not this collection's schema (NVCRE's own or an older version); install this "
            "collection's CRDs (the cre.certification.crds role, with crds_install: true, and crds_take_over: true if "
            "another installer owns them) or upgrade them, then run again")


def foreign_job_crd() -> dict:
    """crds/nvcre.nvidia.com_jobs.yaml without `status.evidence`: the status schema NVCRE's own Job CRD has."""
    crd = yaml.safe_load(JOB_CRD.read_text())
    for version in crd["spec"]["versions"]:
        del version["schema"]["openAPIV3Schema"]["properties"]["status"]["properties"]["evidence"]
    return crd


def apply_crd(sim: Sim, crd: dict) -> None:
    """Server-side apply under the manager install_crds uses, so a property left out is removed."""
    client.CustomObjectsApi(sim.api).patch_cluster_custom_object(
        "apiextensions.k8s.io", "v1", "customresourcedefinitions", crd["metadata"]["name"], crd,
        field_manager="cre-certification-tests", force=True, _content_type="application/apply-patch+yaml")


def wait_evidence_kept(sim: Sim, kept: bool) -> None:
    """Until a probe Job's status write keeps `status.evidence` (`kept`) or loses it: the API server serves a
    changed CRD's schema a moment after the change. The probe lives in a namespace no run reads."""
    api = client.CustomObjectsApi(sim.api)
    deadline = time.monotonic() + 60
    while True:
        probe = api.get_namespaced_custom_object(*NVCRE, PROBE_NS, "jobs", "probe")
        answer = api.replace_namespaced_custom_object_status(*NVCRE, PROBE_NS, "jobs", "probe",
                                                             {**probe, "status": {"evidence": SEAL}})
        if ("evidence" in (answer.get("status") or {})) == kept:
            return
        assert time.monotonic() < deadline, f"status.evidence still {'pruned' if kept else 'kept'} after 60 s"
        time.sleep(0.2)


@pytest.fixture(scope="module")
def foreign() -> Iterator[Sim]:
    """Two aws-h100 nodes whose pods end after 300 ms, the Job CRD replaced by one whose status lacks `evidence`."""
    with own_sim("crd-prune", "aws-h100", 2, 300) as sim:
        core = client.CoreV1Api(sim.api)
        for ns in (NS, PROBE_NS):
            core.create_namespace({"metadata": {"name": ns}})
        client.CustomObjectsApi(sim.api).create_namespaced_custom_object(*NVCRE, PROBE_NS, "jobs", {
            "apiVersion": "/".join(NVCRE), "kind": "Job", "metadata": {"name": "probe"},
            "spec": {"workload": {"trainJob": {"runtimeRef": {"name": "probe"},
                                               "trainer": {"image": "probe:1", "numNodes": 1}}}}})
        apply_crd(sim, foreign_job_crd())
        wait_evidence_kept(sim, kept=False)
        yield sim


def evidence_configmaps(sim: Sim) -> list[str]:
    return sorted(cm.metadata.name for cm in client.CoreV1Api(sim.api).list_namespaced_config_map(
        NS, label_selector=shards.SELECTOR).items)


def test_a_job_crd_that_prunes_the_seal_stops_the_run_with_one_line_and_a_rerun_continues(foreign: Sim) -> None:
    args = {"kubeconfig": str(foreign.kubeconfig), **RUN}
    start = time.monotonic()
    rc, result = ansible_module("certification_run", args, "-v", timeout=TIMEOUT + 60)
    elapsed = time.monotonic() - start

    assert rc != 0 and result.get("failed"), result
    jobs = {job["metadata"]["name"]: job for job in items(foreign, NS, NVCRE, "jobs")}
    assert len(jobs) == 2
    named = next((name for name in jobs if result["msg"] == expected_line(name)), None)
    assert named is not None, result["msg"]
    assert "Traceback" not in result.get("exception", ""), result  # ansible 2.19: "(traceback unavailable)"
    assert elapsed < TIMEOUT / 2, f"the run took {elapsed:.0f} s of its {TIMEOUT} s timeout"
    # It did not loop: each Job's status was written at most three times (its workload, its start, its seal), and
    # no shard followed a seal. A run that meets the pruning unwarned writes the seal again on every pass.
    trace = [line.strip() for line in result["_progress"]]
    assert all(trace.count(f"status Job {name}") <= 3 for name in jobs), [line for line in trace if "Job" in line]
    assert [line for line in trace if named in line][-1] == f"status Job {named}"  # the seal, and nothing after it
    assert not [line for line in trace if line.startswith("create ConfigMap") and "-evidence-" in line], trace
    assert evidence_configmaps(foreign) == []
    # What was written stands: the Job still runs its workload, unsealed and not ended.
    job = jobs[named]
    assert job["status"].get("workloadRef") and "evidence" not in job["status"]
    assert not terminal(job)

    # The remedy the line names: this collection's CRDs. The same run then continues where it stopped.
    install_crds(foreign.api)
    wait_evidence_kept(foreign, kept=True)
    rc, result = ansible_module("certification_run", args, timeout=TIMEOUT + 60)
    assert rc == 0, result
    (category,) = result["categories"]
    assert category["status"] == "Succeeded", category
    sealed = {job["metadata"]["name"]: job["status"]["evidence"] for job in items(foreign, NS, NVCRE, "jobs")}
    assert sorted(sealed) == sorted(jobs) and all(seal["attempt"] == 1 for seal in sealed.values())
    assert evidence_configmaps(foreign) == sorted(shards.shard_name(name, 1, k) for name, seal in sealed.items()
                                                  for k in range(1, seal["shards"] + 1))
    workflow = client.CustomObjectsApi(foreign.api).get_namespaced_custom_object(
        *NVCRE, NS, "workflows", category["workflow"])
    assert workflow["status"]["evidence"]["final"] is True and workflow["status"]["evidence"]["jobs"] == 2
