"""The built-in `compute/gemm-burn-in` entry: one Job per node on all its GPUs, the harness shipped in a ConfigMap
mounted where the command runs it, and the invocation exactly as the issue-41 contract says, with the verdict's
parameters from the build's variables when it has them and `unknown`/0 when it has not."""
from __future__ import annotations

from pathlib import Path

from ansible_collections.cre.certification.plugins.module_utils.engine.catalog import entries, registry
from ansible_collections.cre.certification.plugins.module_utils.engine.catalog.template import Renderer

ROOT = Path(__file__).resolve().parents[4]
TRAINER = ("jobTemplate", "spec", "workload", "trainJob", "trainer")


def _trainer(spec: dict) -> dict:
    for key in TRAINER:
        spec = spec[key]
    return spec


def test_it_runs_the_harness_on_every_gpu_of_one_node_with_the_contract_s_words() -> None:
    entry = registry.lookup("compute", "gemm-burn-in")
    assert entry.per_node and entry.effective_timeout("", "full-scale") == "30m"
    spec = entries.build_spec("compute", "gemm-burn-in", {"gpuArchitecture": "gb200"})
    trainer = _trainer(spec)
    assert trainer["command"] + trainer["args"] == [
        "python3", "/opt/cre/gemm_burn_in.py", "--duration-s", "600", "--warmup-s", "60", "--window-s", "30",
        "--dtype", "bf16", "--size", "8192", "--product", "unknown", "--floor-tflops", "0", "--power-default-w", "0"]
    assert trainer["image"] == (ROOT / "catalog/_lib/images/gemm-burn-in.yaml").read_text().strip()
    config_map, runtime = spec["dependencies"]
    assert config_map["data"]["gemm_burn_in.py"] == (ROOT / "catalog/_lib/harness/gemm_burn_in.py").read_text()
    pod = runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["resources"]["limits"] == {"nvidia.com/gpu": "4"}   # all of a GB200 node's GPUs
    assert container["volumeMounts"] == [{"name": "harness", "mountPath": "/opt/cre", "readOnly": True}]
    assert pod["volumes"] == [{"name": "harness", "configMap": {"name": config_map["metadata"]["name"]}}]


def test_the_verdict_s_parameters_come_from_the_build_s_variables_when_it_has_them() -> None:
    entry = registry.lookup("compute", "gemm-burn-in")
    data = entries.template_vars(entry, {"gpuArchitecture": "h100"}, "h100")
    data.update(gpuProduct="NVIDIA-H100-80GB-HBM3", floorTflops=1040, floorProvisional=True, powerDefaultW=700,
                dtype="fp8")
    args = _trainer(Renderer(data, entry.read_lib).render(entry.template))["args"]
    assert args[args.index("--product"):] == ["--product", "NVIDIA-H100-80GB-HBM3", "--floor-tflops", "1040",
                                              "--floor-provisional", "--power-default-w", "700"]
    assert args[args.index("--dtype") + 1] == "fp8"
