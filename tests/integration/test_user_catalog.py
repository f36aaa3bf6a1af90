"""A user catalog directory, live (issue 24, must-show 4): the worked example's `compute/gemm-goodput` (a user
entry with its own `_lib` fragment and its own LogProfile) runs in one Certification beside a built-in category,
its TFLOP/s per GPU measured from what the simulated GEMM goodput run prints (tools/sim/logs/gemm_logs.py) and judged against
the run's threshold; a broken entry in the same directory is refused with its file and field path before
anything is written; catalog_info lists the good one as the user's."""
from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from kubernetes import client

from tests.ansible_run import ansible_module
from tools.sim import faults

from .conftest import Sim

pytestmark = pytest.mark.clusters(("aws-h100", 4))

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "docs" / "examples"
NAMESPACE = "own-catalog"
NVCRE = ("nvcre.nvidia.com", "v1alpha1")
NODES = [f"gpu-node-{i:03d}" for i in range(4)]
SLOW = "gpu-node-002"
POD_MS = 20000   # a GEMM run lasts 20 s: a line every 0.5 s, several goodput samples (every 5 s) while it runs
THRESHOLD = "value >= 600"   # H100 prints about 740 TFLOP/s per GPU; a node slowed to half, about 370
SOURCE = "cre.certification/catalog-source"


@pytest.fixture(scope="module")
def h100(pooled: Callable[..., Sim]) -> Sim:
    sim = pooled("aws-h100", len(NODES), pod_ms={NAMESPACE: POD_MS})
    client.CoreV1Api(sim.api).create_namespace({"metadata": {"name": NAMESPACE}})
    profile = yaml.safe_load((EXAMPLE / "logprofiles" / "gemm-goodput.yaml").read_text())
    client.CustomObjectsApi(sim.api).patch_cluster_custom_object(
        *NVCRE, "logprofiles", profile["metadata"]["name"], profile, field_manager="user",
        force=True, _content_type="application/apply-patch+yaml")
    return sim


@pytest.fixture(scope="module")
def own(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example catalog, copied as a user keeps it, plus a broken entry: a goodput sampleInterval of no unit."""
    folder = tmp_path_factory.mktemp("user") / "catalog"
    shutil.copytree(EXAMPLE / "catalog", folder)
    good = (folder / "compute" / "gemm-goodput.yaml").read_text()
    (folder / "compute" / "broken-goodput.yaml").write_text(good.replace("sampleInterval: 5s", "sampleInterval: 5"))
    return folder


def test_catalog_info_lists_the_good_entry_as_the_user_s(own: Path) -> None:
    rc, result = ansible_module("catalog_info", {"catalog_dirs": [str(own)]})
    assert rc == 0, result
    mine = [c for c in result["categories"] if c["source"] == "user"]
    assert [(c["domain"], c["variant"], c["path"]) for c in mine] == [
        ("compute", "gemm-goodput", str(own / "compute" / "gemm-goodput.yaml"))]
    assert [(p["file"], p["path"]) for p in result["problems"]] == [
        (str(own / "compute" / "broken-goodput.yaml"), "spec.jobTemplate.spec.goodputMeasurement.sampleInterval")]


def test_the_broken_entry_is_refused_with_its_file_and_field_path_and_nothing_is_written(h100: Sim, own: Path) -> None:
    custom = client.CustomObjectsApi(h100.api)
    rc, result = ansible_module("certification_run", {
        "kubeconfig": str(h100.kubeconfig), "name": "broken", "namespace": NAMESPACE, "catalog_dirs": [str(own)],
        "categories": ["communication/nccl-all-reduce", "compute/broken-goodput"], "timeout": 60})
    assert rc != 0 and result["changed"] is False, result
    assert result["msg"].startswith(
        "categories[1]: category 'compute/broken-goodput' of the user catalog is refused: "
        f"{own / 'compute' / 'broken-goodput.yaml'}: spec.jobTemplate.spec.goodputMeasurement.sampleInterval: "), result
    for plural in ("certifications", "workflows", "jobs"):
        assert custom.list_namespaced_custom_object(*NVCRE, NAMESPACE, plural)["items"] == [], plural


def test_the_good_entry_runs_beside_a_builtin_and_a_slow_node_violates_its_threshold(h100: Sim, own: Path) -> None:
    faults.fault(h100.name, SLOW, "slow")
    try:
        rc, result = ansible_module("certification_run", {
            "kubeconfig": str(h100.kubeconfig), "name": "burn", "namespace": NAMESPACE, "catalog_dirs": [str(own)],
            "categories": [
                {"domain": "compute", "variant": "gemm-goodput",
                 "options": {"thresholds": {"avgTFLOPsPerGPU": THRESHOLD}}},
                {"domain": "communication", "variant": "nccl-all-reduce", "options": {"testScale": "intra-node"}}],
            "poll_interval": 0.5, "timeout": 600}, timeout=700)
    finally:
        faults.fault(h100.name, SLOW, "none")
    assert rc == 0, result
    burn, nccl = result["categories"]
    assert nccl["status"] == "Succeeded" and nccl["succeeded_nodes"] == NODES, nccl
    assert burn["status"] == "Failed", burn
    assert [(f["name"], f["reason"]) for f in burn["failed_nodes"]] == [(SLOW, "ThresholdViolation")], burn
    assert burn["succeeded_nodes"] == [n for n in NODES if n != SLOW], burn

    custom = client.CustomObjectsApi(h100.api)
    workflow = custom.get_namespaced_custom_object(*NVCRE, NAMESPACE, "workflows", burn["workflow"])
    assert workflow["metadata"]["annotations"][SOURCE] == str(own / "compute" / "gemm-goodput.yaml")
    figures = {}
    for measurement in custom.list_namespaced_custom_object(
            *NVCRE, NAMESPACE, "goodputmeasurements", label_selector=f"nvcre.nvidia.com/workflow={burn['workflow']}"
    )["items"]:
        job = custom.get_namespaced_custom_object(*NVCRE, NAMESPACE, "jobs", measurement["spec"]["jobRef"]["name"])
        node = job["metadata"]["annotations"]["nvcre.nvidia.com/group-nodes"]
        figures[node] = float(measurement["status"]["avgTFLOPSPerGPU"])
    assert sorted(figures) == NODES, figures
    assert figures[SLOW] == pytest.approx(370, rel=0.01), figures
    assert all(value == pytest.approx(740, rel=0.01) for node, value in figures.items() if node != SLOW), figures
    violated = next(c for c in job_conditions(custom, burn["workflow"], SLOW) if c["type"] == "ValidationFailed")
    assert (violated["status"], violated["reason"]) == ("True", "ThresholdViolated"), violated
    assert f"expression: {THRESHOLD}" in violated["message"]

    rc, out = ansible_module("certification_results", {
        "kubeconfig": str(h100.kubeconfig), "certification": "burn", "namespace": NAMESPACE, "history": False})
    assert rc == 0, out
    sources = {f"{c['domain']}/{c['variant']}": (c["source"], c.get("sourcePath")) for c in out["report"]["categories"]}
    assert sources == {"compute/gemm-goodput": ("user", str(own / "compute" / "gemm-goodput.yaml")),
                       "communication/nccl-all-reduce": ("builtin", None)}


def job_conditions(custom: client.CustomObjectsApi, workflow: str, node: str) -> list[dict]:
    """The conditions of the workflow's Job that ran on `node`."""
    jobs = custom.list_namespaced_custom_object(*NVCRE, NAMESPACE, "jobs",
                                                label_selector=f"nvcre.nvidia.com/workflow={workflow}")["items"]
    (job,) = [j for j in jobs if j["metadata"]["annotations"].get("nvcre.nvidia.com/group-nodes") == node]
    return job["status"]["conditions"]
