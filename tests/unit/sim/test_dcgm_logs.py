"""The simulated `dcgmi diag --json`, read back by the product's own reader and judge, level by level and layout by
layout, with GPU faults; and how a DCGM pod prints and ends (no cluster: pods and nodes as the API serves them)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ansible_collections.cre.certification.plugins.module_utils.engine.evidence.dcgm_json import read_json
from ansible_collections.cre.certification.plugins.module_utils.engine.evidence.dcgm_verdict import Options, judge
from tests.unit.sim.recording_api import Listed, RecordingApi
from tools.sim import commands, profiles, stages
from tools.sim.logs import dcgm_logs, dcgm_output, dcgm_tests

NODE = "gpu-node-007"
REAL_V3 = Path(__file__).parents[1] / "engine" / "data" / "dcgm_diag" / "dcgm3x-r3-json-1gpu-t4-virtualclient.json"
# The tests each level runs, as the reader names them (4.x JSON names; 3.x display names, deployment checks apart).
LEVEL_TESTS = {
    4: {1: ["software"], 2: ["software", "memory", "pcie"],
        3: ["software", "memory", "diagnostic", "nvbandwidth", "nccl_tests", "pcie", "memory_bandwidth",
            "targeted_stress", "targeted_power"]},
    3: {1: [], 2: ["PCIe", "GPU Memory"],
        3: ["PCIe", "GPU Memory", "Diagnostic", "Targeted Stress", "Targeted Power", "Memory Bandwidth"]},
}
LEVEL_TESTS[4][4] = [*LEVEL_TESTS[4][3][:5], "memtest", "pulse_test", *LEVEL_TESTS[4][3][5:]]
LEVEL_TESTS[3][4] = [*LEVEL_TESTS[3][3][:3], "Pulse Test", *LEVEL_TESTS[3][3][3:], "Memtest"]


def _judged(layout: int, level: int, faults: dcgm_output.Faults, gpus: int = 8) -> tuple[dict[str, Any], int]:
    text, code = dcgm_output.render(layout, level, NODE, gpus, "2330", faults)
    return judge(read_json(text), Options(node=NODE, expected_gpus=gpus)), code


def _gpu(out: dict[str, Any], index: int) -> dict[str, Any]:
    return next(g for g in out["gpus"] if g["index"] == index)


@pytest.mark.parametrize("layout", dcgm_tests.LAYOUTS)
@pytest.mark.parametrize("level", dcgm_tests.LEVELS)
def test_a_healthy_node_passes_every_level_with_the_level_s_own_tests(layout: int, level: int) -> None:
    out, code = _judged(layout, level, {})
    assert code == 0 and out["missing"] == [] and out["runtime_error"] is None
    per_gpu = {r["test"] for r in out["rows"] if r["index"] == 0}
    assert sorted(per_gpu) == sorted(LEVEL_TESTS[layout][level])
    assert out["format_version"] == f"DCGM {layout}.x JSON"
    assert out["dcgm_version"] == dcgm_tests.DCGM_VERSION[layout]
    # Level 1 runs the deployment checks alone: it tests no GPU, so its GPUs pass on those checks.
    assert out["outcome"] == "pass" and out["lacking_evidence"] == []


@pytest.mark.parametrize("layout", dcgm_tests.LAYOUTS)
def test_gpu_3_failing_memory_at_level_2_fails_gpu_3_with_dcgm_s_message(layout: int) -> None:
    out, code = _judged(layout, 2, {3: ["memory"]})
    assert code == dcgm_tests.EXIT_ISOLATE == 205
    assert out["outcome"] == "fail" and [g["index"] for g in out["gpus"] if g["outcome"] == "fail"] == [3]
    (failure,) = _gpu(out, 3)["failures"]
    assert failure["test"] == ("memory" if layout == 4 else "GPU Memory")
    assert failure["detail"] == ("A memory mismatch was detected on GPU 3, but no error was reported by CUDA or "
                                 "NVML. Run a field diagnostic on the GPU. (DCGM error 58)")


@pytest.mark.parametrize("layout", dcgm_tests.LAYOUTS)
def test_a_fault_on_a_test_the_level_does_not_run_leaves_the_node_passing(layout: int) -> None:
    out, code = _judged(layout, 2, {3: ["targeted_stress"]})
    assert (out["outcome"], code) == ("pass", 0)
    assert not any("stress" in (r["test"] or "").lower() for r in out["rows"])
    out, code = _judged(layout, 3, {3: ["targeted_stress"]})
    assert (out["outcome"], code) == ("fail", dcgm_tests.EXIT_ERROR)   # TRIAGE, not ISOLATE: 226
    assert "did not reach desired stress level of 15000.0 for GPU 3" in _gpu(out, 3)["failures"][0]["detail"]


@pytest.mark.parametrize("layout", dcgm_tests.LAYOUTS)
def test_an_all_skip_gpu_exits_0_and_lacks_evidence(layout: int) -> None:
    out, code = _judged(layout, 3, {5: [dcgm_tests.ALL_SKIP]})
    assert code == 0 and out["lacking_evidence"] == [5] and out["outcome"] == "warn"
    assert _gpu(out, 5)["outcome"] == "warn" and _gpu(out, 4)["outcome"] == "pass"


@pytest.mark.parametrize("layout", dcgm_tests.LAYOUTS)
def test_several_gpus_and_tests_fail_together(layout: int) -> None:
    out, code = _judged(layout, 3, {1: ["pcie", "targeted_power"], 6: ["diagnostic"]}, gpus=8)
    assert code == 205
    failing = {g["index"]: sorted(f["test"] for f in g["failures"]) for g in out["gpus"] if g["failures"]}
    assert failing == ({1: ["pcie", "targeted_power"], 6: ["diagnostic"]} if layout == 4 else
                       {1: ["PCIe", "Targeted Power"], 6: ["Diagnostic"]})
    assert "GPU 1 host-side PCIe replay violation" in out["gpus"][1]["failures"][0]["detail"]


@pytest.mark.parametrize("layout", dcgm_tests.LAYOUTS)
def test_a_failing_software_check_names_its_gpu(layout: int) -> None:
    out, code = _judged(layout, 2, {2: ["software"]}, gpus=4)
    assert code == 205 and [g["index"] for g in out["gpus"] if g["outcome"] == "fail"] == [2]
    assert "GPU 2 had uncorrectable memory errors" in _gpu(out, 2)["failures"][0]["detail"]


def test_the_4x_document_is_dcgm_s_shape_with_serials_and_device_ids() -> None:
    doc = dcgm_output.document(4, 2, NODE, 2, "2941", {1: ["pcie"]})
    assert set(doc) == {"DCGM Diagnostic", "entity_groups", "metadata"}
    assert doc["metadata"] == {"Driver Version Detected": "580.95.05", "version": "4.5.2"}
    assert doc["entity_groups"] == [{"entities": [
        {"device_id": "2941", "entity_id": g, "serial_num": dcgm_output.serial(NODE, g)} for g in (0, 1)],
        "entity_group": "GPU", "entity_group_id": 1}]
    categories = doc["DCGM Diagnostic"]["test_categories"]
    assert [(c["category"], [t["name"] for t in c["tests"]]) for c in categories] == [
        ("Deployment", ["software"]), ("Hardware", ["memory"]), ("Integration", ["pcie"])]
    pcie = categories[2]["tests"][0]
    error = {"error_category": 13, "error_id": 98, "error_severity": 2,
             "warning": "GPU 1 host-side PCIe replay violation, see dmesg for more information"}
    assert pcie["results"][1] == {"entity_group": "GPU", "entity_group_id": 1, "entity_id": 1, "status": "Fail",
                                  "warnings": [error]}
    assert pcie["test_summary"] == {"status": "Fail", "warnings": [error]}


def test_the_3x_document_is_dcgm_s_shape() -> None:
    doc = dcgm_output.document(3, 1, NODE, 2, "2330", {})
    assert doc["version"] == "3.3.9" and doc["GPU Device IDs"] == ["2330", "2330"]
    assert doc["GPU Device Serials"] == {"0": dcgm_output.serial(NODE, 0), "1": dcgm_output.serial(NODE, 1)}
    (deployment,) = doc["DCGM GPU Diagnostic"]["test_categories"]
    assert [t["name"] for t in deployment["tests"]] == list(dcgm_tests.DEPLOYMENT_V3)


def test_the_output_is_printed_as_jsoncpp_prints_it() -> None:
    """The real 3.x sample, re-printed, is itself (but for the one line its source edited by hand)."""
    real = REAL_V3.read_text()
    assert dcgm_output.styled(json.loads(real)) == real.replace('"status": "Pass"', '"status" : "Pass"')


def test_gpu_uuids_and_serials_are_real_shaped_and_stable_per_node_and_index() -> None:
    uuid = dcgm_output.gpu_uuid(NODE, 3)
    assert uuid == dcgm_output.gpu_uuid(NODE, 3) and uuid.startswith("GPU-")
    assert [len(p) for p in uuid[4:].split("-")] == [8, 4, 4, 4, 12]
    assert len({dcgm_output.gpu_uuid(n, i) for n in ("a", "b") for i in range(8)}) == 16
    assert len(dcgm_output.serial(NODE, 3)) == 13 and dcgm_output.serial(NODE, 3) != dcgm_output.serial(NODE, 4)


def _pod(args: list[str], node: str = NODE, command: list[str] | None = None) -> dict[str, Any]:
    return {"metadata": {"name": "dcgm-0", "namespace": "ns", "uid": "u1", "annotations": {}},
            "spec": {"nodeName": node, "containers": [{"name": "node", "command": command or ["dcgmi"],
                                                       "args": args}]},
            "status": {"phase": "Running", "containerStatuses": [{"restartCount": 0}]}}


CATALOG_ARGS = ["diag", "--host", "nvidia-dcgm.gpu-operator.svc:5555", "--run", "2", "--json", "--verbose"]


@pytest.mark.parametrize(("command", "args", "run"), [
    (["dcgmi"], CATALOG_ARGS, (2, True)),
    (["/usr/bin/dcgmi"], ["diag", "-r", "long", "-j"], (3, True)),
    (["sh", "-c"], ["nvidia-smi; dcgmi diag --run=xlong --json"], (4, True)),
    (["dcgmi"], ["diag", "-r", "4"], (4, False)),
    (["dcgmi"], ["discovery", "-l"], None),
    (["dcgmi"], ["diag", "-r", "9", "--json"], None),
])
def test_the_run_is_read_from_the_command_line(command: list[str], args: list[str],
                                               run: tuple[int, bool] | None) -> None:
    assert dcgm_logs.diag_run(_pod(args, command=command)) == run


def test_a_node_s_gpus_are_its_allocatable_then_its_capacity_then_its_label() -> None:
    node = profiles.build_nodes("aws-gb200", 1)[0]
    assert dcgm_logs.node_gpus(node) == 4
    node["status"]["allocatable"]["nvidia.com/gpu"] = "3"
    assert dcgm_logs.node_gpus(node) == 3
    del node["status"]
    assert dcgm_logs.node_gpus(node) == 4 and dcgm_logs.device_id(node) == "2941"


def _state(tmp_path: Path, **saved: Any) -> Path:
    path = tmp_path / "cre-sim.json"
    path.write_text(json.dumps(saved))
    return path


@pytest.mark.parametrize("layout", dcgm_tests.LAYOUTS)
def test_a_failing_pod_prints_its_json_then_ends_with_dcgmi_s_exit_code(tmp_path: Path, layout: int) -> None:
    api = RecordingApi(profiles.build_nodes("aws-h100", 8)[7])
    state = _state(tmp_path, dcgm_layout=layout, dcgm_faults={NODE: {"3": ["memory"], "5": ["targeted_stress"]}})
    diagnostics = dcgm_logs.Diagnostics(tmp_path / "logs", state)
    assert diagnostics.tick(api, api, Listed([_pod(CATALOG_ARGS)])) == ["dcgm-0"]  # type: ignore[arg-type]
    lines = (tmp_path / "logs" / "ns_dcgm-0.log").read_text().splitlines()
    assert all(" stdout F " in line for line in lines)
    out = judge(read_json("\n".join(line.split(" stdout F ", 1)[1] for line in lines)), Options(expected_gpus=8))
    assert [g["index"] for g in out["gpus"] if g["outcome"] == "fail"] == [3]   # targeted_stress: not at level 2
    assert api.annotations == [{stages.DCGM_PRINTED: "205", **stages.exit_annotations(
        0, 205, "dcgmi diag exited 205: GPU 3 failed memory")}]
    assert diagnostics.tick(api, api, Listed([_pod(CATALOG_ARGS)])) == []  # type: ignore[arg-type]


def test_a_passing_pod_is_marked_to_complete_and_a_node_fault_pod_prints_nothing(tmp_path: Path) -> None:
    api = RecordingApi(profiles.build_nodes("aws-h100", 8)[7])
    diagnostics = dcgm_logs.Diagnostics(tmp_path / "logs", _state(tmp_path, faults={"gpu-node-001": "workload"}))
    pods = [_pod(CATALOG_ARGS), {**_pod(CATALOG_ARGS, node="gpu-node-001"), "metadata": {
        "name": "dcgm-1", "namespace": "ns", "uid": "u2"}}]
    assert diagnostics.tick(api, api, Listed(pods)) == ["dcgm-0"]  # type: ignore[arg-type]
    assert api.annotations == [{stages.DCGM_PRINTED: "0"}]
    assert not (tmp_path / "logs" / "ns_dcgm-1.log").exists()


def test_a_run_at_no_level_dcgmi_knows_ends_at_once(tmp_path: Path) -> None:
    """It must not wait forever for a print that never comes (pod-complete waits for it)."""
    api = RecordingApi(profiles.build_nodes("aws-h100", 8)[7])
    diagnostics = dcgm_logs.Diagnostics(tmp_path / "logs", _state(tmp_path))
    assert diagnostics.tick(api, api, Listed([_pod(["diag", "-r", "9", "--json"])])) == ["dcgm-0"]  # type: ignore[arg-type]
    assert api.annotations == [{stages.DCGM_PRINTED: "1", **stages.exit_annotations(0, 1, dcgm_logs.BAD_RUN)}]


def test_a_dcgm_pod_completes_only_once_printed_and_passing(tmp_path: Path) -> None:
    (tmp_path / "stages").mkdir()
    (tmp_path / "stages" / "pod-complete.yaml").write_text(json.dumps({
        "apiVersion": "kwok.x-k8s.io/v1alpha1", "kind": "Stage", "metadata": {"name": stages.POD_COMPLETE},
        "spec": {"resourceRef": {"apiGroup": "v1", "kind": "Pod"}, "selector": {"matchExpressions": []}}}))
    (complete,) = [s for s in stages.base_stages(tmp_path) if s["metadata"]["name"] == stages.POD_COMPLETE]
    assert {"key": '.metadata.labels["jobset.sigs.k8s.io/jobset-name"] == null or '
                   f'({commands.jq_any_container(commands.DCGMI_DIAG)} | not) or '
                   '.metadata.annotations["sim.cre.certification/dcgm-printed"] == "0"',
            "operator": "In", "values": ["true"]} in complete["spec"]["selector"]["matchExpressions"]
