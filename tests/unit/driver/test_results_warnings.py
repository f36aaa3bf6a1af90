"""The GPUArchitectureDefaults warning in a run's report: recomputed from what the run left in the cluster (the
Workflow's detected architecture, the Certification's or WorkloadRun's counts), as the build emitted it."""
from __future__ import annotations

from typing import Any

from ansible_collections.cre.certification.plugins.module_utils.driver import results
from ansible_collections.cre.certification.plugins.module_utils.engine.report import certreport, markdown

MESSAGE = ('GPU architecture "h20" has no entry in the catalog\'s GPU defaults, which fall back to gpusPerNode=4 '
           "mlnxPerNode=0 for it; this run is sized at gpusPerNode={gpus} mlnxPerNode=0. If the nodes differ, set "
           "{hint}, and file an issue so the architecture can be added to the catalog.")


class FakeKube:
    """get by (kind, name); every list is empty (no Jobs, no measurements)."""

    def __init__(self, *objects: dict) -> None:
        self.objects = {(o["kind"], o["metadata"]["name"]): o for o in objects}

    def get(self, ref: Any) -> dict | None:
        return self.objects.get((ref.kind, ref.name))

    def list(self, *_args: Any, **_kwargs: Any) -> list[dict]:
        return []


def workflow(name: str, arch: str) -> dict:
    return {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Workflow", "metadata": {"name": name, "namespace": "ns"},
            "spec": {}, "status": {"orchestration": {"detectedPlatform": "aws", "detectedGPUArchitecture": arch}}}


def certification(options: dict) -> dict:
    return {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Certification",
            "metadata": {"name": "c", "namespace": "ns"},
            "spec": {**options, "categories": [{"domain": "communication", "variant": "nccl-all-reduce"}]}}


def test_a_certification_report_carries_the_warning_of_an_unlisted_architecture() -> None:
    cert = certification({"gpusPerNode": 8})
    data = results.certification_data(FakeKube(cert, workflow("c-communication-nccl-all-reduce", "h20")), cert)
    expected = MESSAGE.format(gpus=8, hint="spec.gpusPerNode and spec.mlnxPerNode (or spec.categories[].options)")
    assert data[0]["warnings"] == [expected]
    report = certreport.build_report("c", data)
    assert report["categories"][0]["warnings"] == [expected]
    assert f"Warning: {expected}\n" in markdown.markdown(report)


def test_a_listed_architecture_leaves_the_report_without_warnings() -> None:
    cert = certification({})
    data = results.certification_data(FakeKube(cert, workflow("c-communication-nccl-all-reduce", "h100")), cert)
    assert data[0]["warnings"] == []
    report = certreport.build_report("c", data)
    assert "warnings" not in report["categories"][0] and "Warning:" not in markdown.markdown(report)


def test_a_workload_run_report_names_the_workload_run_fields() -> None:
    run = {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "WorkloadRun", "metadata": {"name": "wr", "namespace": "ns"},
           "spec": {"numNodes": 2}, "status": {"workflowRef": {"name": "wr"}}}
    report, _data = results._single_report(FakeKube(run, workflow("wr", "h20")), "ns", {"workload_run": "wr"})
    assert report["categories"][0]["warnings"] == [MESSAGE.format(gpus=4, hint="spec.gpusPerNode and spec.mlnxPerNode")]
