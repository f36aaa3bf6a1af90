"""Performance verdicts on the local cluster: bandwidth measured from the simulated nccl-tests tables the pods
print through the pod log API, judged against the user's thresholds (spec/measurements.md §2, §4)."""
from __future__ import annotations

import os
import re
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from kubernetes import client

from tests.ansible_run import ROOT, ansible_module, run_until
from tools.sim import faults

from .conftest import Sim

pytestmark = pytest.mark.clusters(("aws-h100", 12))

NVCRE = ("nvcre.nvidia.com", "v1alpha1")
NODES = 12
HEALTHY_BUS = 360.0  # aws-h100's nominal figure (tools/sim/profiles.py), the largest size's busbw
ROW = re.compile(r"^\s*(\d+)\s+\d+\s+\w+\s+\w+\s+-?\d+\s+[\d.]+\s+([\d.]+)\s+([\d.]+)\s")


@pytest.fixture(scope="module")
def h100(pooled: Callable[..., Sim]) -> Sim:
    """12 aws-h100 nodes whose Job pods run 4 s, long enough to be sampled while they run."""
    return pooled("aws-h100", NODES, pod_ms={"default": 4000})


def category(**options) -> dict:
    return {"domain": "communication", "variant": "nccl-all-reduce", "options": {"nodesPerJob": 2, **options}}


def certify(sim: Sim, name: str, options: dict, timeout: float = 400) -> tuple[int, dict, float]:
    start = time.monotonic()
    rc, result = ansible_module("certification_run", {
        "kubeconfig": str(sim.kubeconfig), "name": name, "namespace": "default", "categories": [category()],
        "options": options, "poll_interval": 0.5, "timeout": timeout}, timeout=timeout + 60)
    return rc, result, time.monotonic() - start


def objects(sim: Sim, plural: str, workflow: str) -> list[dict]:
    return client.CustomObjectsApi(sim.api).list_namespaced_custom_object(
        *NVCRE, "default", plural, label_selector=f"nvcre.nvidia.com/workflow={workflow}")["items"]


def condition(obj: dict, kind: str) -> dict:
    return next(c for c in obj["status"]["conditions"] if c["type"] == kind)


def printed(sim: Sim, job: dict) -> list[dict]:
    """The rows the Job's launcher printed, read back through the pod log API, aggregated once each."""
    core = client.CoreV1Api(sim.api)
    workload = job["status"]["workloadRef"]["name"]
    (pod,) = core.list_namespaced_pod("default", label_selector=f"jobset.sigs.k8s.io/jobset-name={workload},"
                                                                "jobset.sigs.k8s.io/replicatedjob-name=launcher").items
    text = core.read_namespaced_pod_log(pod.metadata.name, "default")
    return [{"sizeBytes": int(m[1]), "algBW": f"{float(m[2]):.2f}", "busBW": f"{float(m[3]):.2f}", "samples": 1}
            for m in map(ROW.match, text.splitlines()) if m]


def test_healthy_groups_meet_a_threshold_below_their_figure(h100: Sim) -> None:
    rc, result, _took = certify(h100, "healthy", {"thresholds": {"busBandwidthGBps": "value >= 300.0"}})
    assert rc == 0, result
    (cat,) = result["categories"]
    assert cat["status"] == "Succeeded" and len(cat["succeeded_nodes"]) == NODES and cat["failed_nodes"] == []
    jobs = {j["metadata"]["name"]: j for j in objects(h100, "jobs", cat["workflow"])}
    measurements = objects(h100, "bandwidthmeasurements", cat["workflow"])
    assert len(jobs) == NODES // 2 and sorted(m["spec"]["jobRef"]["name"] for m in measurements) == sorted(jobs)
    for m in measurements:
        done = condition(m, "Complete")
        assert (done["status"], done["reason"], done["message"]) == ("True", "JobSucceeded", "Job succeeded")
        assert m["status"]["results"] == printed(h100, jobs[m["spec"]["jobRef"]["name"]])
        assert max(float(r["busBW"]) for r in m["status"]["results"]) == HEALTHY_BUS
        assert m["status"]["transport"] == ["AWS Libfabric"]
    for job in jobs.values():
        verdict = condition(job, "ValidationFailed")
        assert (verdict["status"], verdict["reason"], verdict["message"]) == (
            "False", "ThresholdsMet", "All performance thresholds satisfied")


def test_a_slow_node_fails_its_group_with_the_measured_figure(h100: Sim) -> None:
    faults.fault(h100.name, "gpu-node-004", "slow")
    try:
        rc, result, _took = certify(h100, "slow", {"thresholds": {"busBandwidthGBps": "value >= 300.0"}})
    finally:
        faults.fault(h100.name, "gpu-node-004", "none")
    assert rc == 0, result  # a certification that ran to its verdict is not a task failure
    (cat,) = result["categories"]
    message = 'Threshold "busBandwidthGBps" violated: measured 180.0000, expression: value >= 300.0'
    assert cat["failed_nodes"] == [{"name": n, "reason": "ThresholdViolation", "message": message}
                                   for n in ("gpu-node-004", "gpu-node-005")]
    assert sorted(cat["succeeded_nodes"]) == [f"gpu-node-{i:03d}" for i in range(NODES) if i not in (4, 5)]
    workflow = client.CustomObjectsApi(h100.api).get_namespaced_custom_object(
        *NVCRE, "default", "workflows", cat["workflow"])
    failed = condition(workflow, "Failed")
    assert (failed["status"], failed["reason"]) == ("True", "JobValidationFailed")
    validation = condition(workflow, "ValidationFailed")
    assert (validation["reason"], validation["message"]) == (
        "JobValidationFailed", "One or more Jobs failed performance threshold validation")


def test_a_value_never_measured_times_out(h100: Sim) -> None:
    rc, result, took = certify(h100, "unmeasured", {"thresholds": {"goodputRatio": "value > 0.5"},
                                                    "measurementTimeout": "20s"}, timeout=300)
    assert rc == 0, result
    (cat,) = result["categories"]
    assert took < 20 + 60, took  # the verdict comes within a minute of the timeout
    for job in objects(h100, "jobs", cat["workflow"]):
        verdict = condition(job, "ValidationFailed")
        assert (verdict["status"], verdict["reason"], verdict["message"]) == (
            "True", "MeasurementTimeout", "Measurement data not available within 20s for keys: [goodputRatio]")
    assert {f["reason"] for f in cat["failed_nodes"]} == {"ThresholdViolation"}


@pytest.mark.parametrize(("thresholds", "message"), [
    ({"busBandwidthGBps": "value >= 1", "bogus": "value > 1"}, 'options.thresholds["bogus"]: unknown threshold key'),
    ({"busBandwidthGBps": "value + 1"}, 'options.thresholds["busBandwidthGBps"]: compile threshold expression '
                                        '"value + 1": expression must return bool, got double'),
])
def test_bad_thresholds_through_the_role_write_nothing(h100: Sim, tmp_path: Path, thresholds: dict,
                                                       message: str) -> None:
    inventory = {"clusters": {"hosts": {"sim": {
        "ansible_connection": "local", "ansible_python_interpreter": str(ROOT / ".venv/bin/python"),
        "k8s_kubeconfig": str(h100.kubeconfig), "certify_certification_name": "refused", "certify_namespace": "default",
        "certify_categories": [category()], "certify_options": {"thresholds": thresholds},
        "cre_report_dir": str(tmp_path / "reports")}}}}
    (tmp_path / "inventory.yml").write_text(yaml.safe_dump(inventory))
    proc = subprocess.run([str(ROOT / ".venv/bin/ansible-playbook"), "-i", str(tmp_path / "inventory.yml"),
                           "playbooks/certify.yml"], cwd=ROOT, env={**os.environ, "ANSIBLE_NOCOLOR": "1"},
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode != 0
    assert message in proc.stdout, proc.stdout[-3000:]
    assert "Traceback" not in proc.stdout + proc.stderr
    certs = client.CustomObjectsApi(h100.api).list_namespaced_custom_object(*NVCRE, "default", "certifications")
    assert "refused" not in [c["metadata"]["name"] for c in certs["items"]]


def measured(sim: Sim, name: str) -> dict:
    """Every group's final bandwidth figures and its Job's verdict (names and times left out)."""
    (wf,) = client.CustomObjectsApi(sim.api).list_namespaced_custom_object(
        *NVCRE, "default", "workflows", label_selector=f"nvcre.nvidia.com/certification={name}")["items"]
    jobs = {j["metadata"]["name"]: j for j in objects(sim, "jobs", wf["metadata"]["name"])}
    out = {}
    for m in objects(sim, "bandwidthmeasurements", wf["metadata"]["name"]):
        job = jobs[m["spec"]["jobRef"]["name"]]
        done, verdict = condition(m, "Complete"), condition(job, "ValidationFailed")
        out[job["metadata"]["labels"]["nvcre.nvidia.com/group"]] = {
            "results": m["status"]["results"], "transport": m["status"]["transport"],
            "complete": (done["status"], done["reason"], done["message"]),
            "verdict": (verdict["status"], verdict["reason"], verdict["message"])}
    return out


class KillAfter:
    """Says to kill once `nth` lines matching `pattern` have been seen."""

    def __init__(self, pattern: re.Pattern[str], nth: int) -> None:
        self.pattern, self.nth, self.seen = pattern, nth, 0

    def __call__(self, line: str) -> bool:
        self.seen += bool(self.pattern.match(line))
        return self.seen >= self.nth


def test_killed_while_measuring_then_the_same_values(h100: Sim) -> None:
    """SIGKILL at two points of the measurement's life (its creation, and a later status write), a rerun after
    each: the same results and verdicts as an uninterrupted run (every other point: the unit tests)."""
    options = {"thresholds": {"busBandwidthGBps": "value >= 300.0"}}

    def args(name: str) -> dict:
        return {"kubeconfig": str(h100.kubeconfig), "name": name, "namespace": "default", "categories": [category()],
                "options": options, "poll_interval": 0.5, "timeout": 400}

    run_until("certification_run", args("whole"), None, timeout=460)
    expected = measured(h100, "whole")
    assert len(expected) == NODES // 2 and all(v["verdict"][1] == "ThresholdsMet" for v in expected.values())

    measurement_writes = re.compile(r"^\s*(create|status) BandwidthMeasurement ")
    for nth in (1, 3):
        after = KillAfter(measurement_writes, nth)

        lines = run_until("certification_run", args("killed"), after, timeout=460)
        assert after.seen >= nth, "".join(lines[-20:])  # it was killed while measuring
    run_until("certification_run", args("killed"), None, timeout=460)
    assert measured(h100, "killed") == expected
