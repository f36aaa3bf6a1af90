"""The burn-in's report data from stored rows: nodes in natural order with each GPU's median, series and findings,
and the fleet rule across the nodes of one product (slow GPU below 0.92x, slow node below 0.95x)."""
from __future__ import annotations

from ansible_collections.cre.certification.plugins.module_utils.engine.evidence.gemm_report import (
    burn_in_report,
    fleet_outcome,
)
from ansible_collections.cre.certification.plugins.module_utils.engine.evidence.gemm_verdict import (
    GemmOptions,
    GemmParameters,
    judge_text,
)
from tests.unit.engine.evidence.gemm_logs import HEALTHY, WINDOWS, log

H100 = GemmParameters(product="NVIDIA-H100-80GB-HBM3", floor_tflops=590.0, power_default_w=700.0)


def stored(node: str, text: str) -> list[dict]:
    """The rows the Job tier stores for one node's log (judged rows, findings and medians included)."""
    return judge_text(text, GemmOptions(node=node, parameters=H100))["rows"]


def fleet_rows(slow_node: str = "gpu-node-10", factor: float = 1.0, gpu_factor: float = 1.0) -> list[dict]:
    out = []
    for node in ("gpu-node-2", "gpu-node-10", "gpu-node-1"):
        node_factor = factor if node == slow_node else 1.0
        per_gpu = {g: [HEALTHY[g] * node_factor * (gpu_factor if (node, g) == ("gpu-node-1", 3) else 1)] * WINDOWS
                   for g in range(8)}
        out += stored(node, log(per_gpu))
    return out


def test_the_report_holds_every_node_in_natural_order_with_each_gpus_series_and_median() -> None:
    report = burn_in_report(fleet_rows(), H100)
    assert [n["node"] for n in report["nodes"]] == ["gpu-node-1", "gpu-node-2", "gpu-node-10"]
    assert (report["dtype"], report["windowSeconds"], report["warmupSeconds"]) == ("bf16", 30.0, 60.0)
    assert report["floor"] == {"tflops": 590.0, "provisional": False}
    gpu = report["nodes"][0]["gpus"][1]
    assert gpu == {"index": 1, "uuid": "GPU-1abc", "median": 606.0, "outcome": "pass",
                   "series": [[w, 606.0] for w in range(WINDOWS)], "findings": []}
    assert report["nodes"][0]["median"] == 600.0
    assert report["fleet"] == {"median": 600.0, "slow": []} and fleet_outcome(report) is None


def test_a_gpu_below_092x_the_fleet_is_named_slow_a_warning_by_default() -> None:
    report = burn_in_report(fleet_rows(gpu_factor=0.9), H100)
    assert report["fleet"]["slow"] == [{
        "node": "gpu-node-1", "index": 3, "ratio": 0.905,
        "message": "GPU 3 of gpu-node-1: median 542.7 TFLOPS is 0.905x the fleet median 600.0 of "
                   "NVIDIA-H100-80GB-HBM3 (slow below 0.92x)"}]
    gpu = report["nodes"][0]["gpus"][3]
    assert [(f["rule"], f["outcome"]) for f in gpu["findings"]] == [("floor", "fail"), ("node-median", "fail"),
                                                                    ("fleet", "warn")]
    assert fleet_outcome(report) == "warn"


def test_a_node_below_095x_the_fleet_is_named_slow_and_fails_with_the_option() -> None:
    report = burn_in_report(fleet_rows(factor=0.94), H100, slow_fails=True)
    slow = report["fleet"]["slow"]
    assert [(s["node"], s["index"]) for s in slow] == [("gpu-node-10", None)]
    assert slow[0]["message"] == ("gpu-node-10: node median 564.0 TFLOPS is 0.947x the fleet median 595.5 of "
                                  "NVIDIA-H100-80GB-HBM3 (slow below 0.95x)")
    assert fleet_outcome(report, slow_fails=True) == "fail"


def test_nodes_of_two_products_are_compared_within_their_own_product() -> None:
    rows = stored("gpu-node-1", log()) + stored("gpu-node-2", log({g: [1200.0] * WINDOWS for g in range(8)}))
    gb = GemmParameters(product="NVIDIA-GB200", floor_tflops=1240.0)
    report = burn_in_report(rows, H100, node_parameters={"gpu-node-2": gb})
    assert report["fleet"] == {"median": None, "slow": []}
    assert report["nodes"][1]["gpus"][0]["findings"][0]["rule"] == "floor"   # each node judged by its own floor


def test_a_node_run_again_is_judged_by_its_last_attempt() -> None:
    first = [{**r, "attempt": 1} for r in stored("gpu-node-1", log({5: [300.0] * WINDOWS}))]
    again = [{**r, "attempt": 2} for r in stored("gpu-node-1", log())]
    report = burn_in_report(first + again, H100)
    assert report["nodes"][0]["gpus"][5]["median"] == HEALTHY[5] and report["nodes"][0]["gpus"][5]["outcome"] == "pass"
