"""What every module returns on a live cluster is what its RETURN documentation says: no undocumented key, each of
the documented type, and every key documented as always returned present."""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.ansible_run import ansible_module

from .conftest import SIM

pytestmark = pytest.mark.clusters(SIM)

ROOT = Path(__file__).resolve().parents[2]
# Keys Ansible itself adds to every task result.
STANDARD = {"action", "changed", "failed", "msg", "invocation", "_progress", "_ansible_no_log", "skipped"}
TYPES = {"str": str, "dict": dict, "list": list, "bool": bool, "int": int, "float": (int, float)}
ALWAYS = {"always", "success"}


def documented(module: str) -> dict[str, Any]:
    text = (ROOT / "plugins" / "modules" / f"{module}.py").read_text(encoding="utf-8")
    return yaml.safe_load(re.search(r'RETURN = r"""(.*?)"""', text, re.S).group(1))


def check(module: str, result: dict[str, Any], check_mode: bool = False) -> list[str]:
    """Every way `result` departs from the documentation of `module`."""
    docs, problems = documented(module), []
    for key, value in result.items():
        if key in STANDARD:
            continue
        if key not in docs:
            problems.append(f"{module}: {key} is returned but not documented")
        elif value is not None and not isinstance(value, TYPES[docs[key]["type"]]):
            problems.append(f"{module}: {key} is {type(value).__name__}, documented {docs[key]['type']}")
    for key, doc in docs.items():
        expected = doc["returned"] in ALWAYS or (doc["returned"] == "outside check mode" and not check_mode) \
            or (doc["returned"] == "check mode" and check_mode)
        if expected and key not in result:
            problems.append(f"{module}: {key} is documented as returned ({doc['returned']}) but missing")
    return problems


def run(module: str, args: dict[str, Any], *flags: str) -> dict[str, Any]:
    code, result = ansible_module(module, args, *flags, timeout=300)
    assert code == 0, result.get("msg")
    return result


def test_every_module_returns_what_it_documents(sim, crds, namespace: str, tmp_path: Path) -> None:
    auth = {"kubeconfig": str(sim.kubeconfig)}
    cert = {**auth, "name": "returns", "namespace": namespace, "categories": ["communication/nccl-all-reduce"],
            "options": {"nodesPerJob": 4}}
    planned = run("certification_run", cert, "--check")
    done = run("certification_run", cert)
    workflow = done["categories"][0]["workflow"]
    results = {
        ("catalog_info", False): run("catalog_info", {}),
        ("cluster_info", False): run("cluster_info", auth),
        ("certification_run", True): planned,
        ("certification_run", False): done,
        ("workflow_run", True): run("workflow_run", {**auth, "name": workflow, "namespace": namespace}, "--check"),
        ("workflow_run", False): run("workflow_run", {**auth, "name": workflow, "namespace": namespace}),
        ("certification_results", False): run("certification_results", {
            **auth, "certification": "returns", "namespace": namespace, "dest": str(tmp_path / "east"),
            "bundle_dir": str(tmp_path / "bundle")}),
        ("workflow_render", False): run("workflow_render", {
            "definition": planned["plan"][0]["workflow"], "platform": "aws", "gpu_architecture": "gb200",
            "node_count": 4}),
    }
    results[("fleet_report", False)] = run("fleet_report", {"report_dir": [str(tmp_path)]})  # the folder above
    logs = ROOT / "tests" / "unit" / "engine" / "data" / "real_logs"
    results[("log_check", False)] = run("log_check", {
        "src": str(logs / "nccl" / "015-k8s-pods-roce-nccl-debug-info.log"), "profile": "nccl-bandwidth",
        "thresholds": {"busBandwidthGBps": "value >= 2.0"}})
    goodput = run("log_check", {"src": str(logs / "training" / "002-mlm-2025-rtx4090-2node-tflops.log"),
                                "profile": "megatron-training"})
    dcgm = ROOT / "tests" / "unit" / "engine" / "data" / "dcgm_diag"
    results[("evidence_check", False)] = run("evidence_check", {
        "path": str(dcgm / "h200x8-azure-dcgm3.1.8-r1-persistence-mode-fail.txt"), "format": "dcgm-diag-text",
        "node": "gpu-node-000", "gpus": 8})
    dcgm_json = run("evidence_check", {"path": str(dcgm / "dcgm3x-r3-json-1gpu-t4-virtualclient.json"),
                                       "format": "dcgm-diag-json"})
    nccl_rows = run("evidence_check", {"path": str(logs / "nccl" / "015-k8s-pods-roce-nccl-debug-info.log"),
                                       "format": "nccl-tests", "node": "group-1"})
    training_rows = run("evidence_check", {"path": str(logs / "training" / "002-mlm-2025-rtx4090-2node-tflops.log"),
                                           "format": "training"})
    gemm_tools = ROOT / "tests" / "unit" / "engine" / "data" / "gemm_tools"
    gpu_burn = run("evidence_check", {"path": str(gemm_tools / "gpu-burn" / "tesla-t4-500s-faulty-warning-errors.txt"),
                                      "format": "gpu-burn", "node": "gpu-node-000", "gpus": 1})
    results[("bundle_read", False)] = run("bundle_read", {"path": str(tmp_path / "bundle")})
    config = ROOT / "tests" / "unit" / "engine" / "data" / "config"
    nvsmi = run("evidence_check", {"path": str(config / "nvidia-smi-q" / "a10-535.129.03-row-remap-pending.txt"),
                                   "format": "nvidia-smi-q", "node": "gpu-node-000"})
    snapshot = tmp_path / "snapshots" / "gpu-node-000.json"
    snapshot.parent.mkdir()
    snapshot.write_text(json.dumps(nvsmi["snapshot"]))
    results[("golden_generate", False)] = run("golden_generate", {"src": [str(snapshot.parent)],
                                                                  "dest": str(tmp_path / "golden.yaml")})
    spec = run("catalog_info", {"domain": "communication", "variant": "nccl-all-reduce",
                                "options": {"gpuArchitecture": "gb200"}})
    assert spec["spec"]["jobTemplate"], "catalog_info built no WorkflowSpec"
    problems = [p for (module, check_mode), result in results.items() for p in check(module, result, check_mode)]
    problems += check("catalog_info", spec) + check("log_check", goodput) + check("evidence_check", dcgm_json)
    problems += check("evidence_check", nccl_rows) + check("evidence_check", training_rows)
    problems += check("evidence_check", gpu_burn) + check("evidence_check", nvsmi)
    assert len(nccl_rows["rows"]) == 22 and training_rows["rows"], "evidence_check read no log rows"
    assert problems == [], "\n".join(problems)
    assert done["phase"] == "Succeeded" and results[("workflow_run", False)]["phase"] == "Succeeded"
