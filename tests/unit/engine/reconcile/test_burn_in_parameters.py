"""The burn-in's parameters for one node: the Job's harness flags, the product, floor and default power limit
filled from the node where the flags leave them unset; a floor the flags set wins."""
from __future__ import annotations

from ansible_collections.cre.certification.plugins.module_utils.engine.reconcile.burn_in_parameters import of_job, resolved

WORDS = ["python3", "/opt/cre/gemm_burn_in.py", "--duration-s", "600", "--warmup-s", "60", "--window-s", "30",
         "--dtype", "bf16", "--size", "8192", "--product", "unknown", "--floor-tflops", "0", "--power-default-w", "0"]


def _node(product: str | None) -> dict:
    return {"metadata": {"name": "n", "labels": {"nvidia.com/gpu.product": product} if product else {}}}


def test_the_node_s_product_gives_the_floor_and_the_default_power_limit() -> None:
    params = resolved(WORDS, _node("NVIDIA-H100-80GB-HBM3"))
    assert (params.product, params.floor_tflops, params.floor_provisional, params.power_default_w) == (
        "NVIDIA-H100-80GB-HBM3", 590.0, False, 700.0)
    fp8 = resolved([*WORDS[:9], "fp8", *WORDS[10:]], _node("NVIDIA-H100-80GB-HBM3"))
    assert fp8.floor_tflops == 1040.0


def test_a_provisional_floor_stays_provisional_and_an_unknown_product_has_none() -> None:
    pcie = resolved(WORDS, _node("NVIDIA-H100-PCIe"))
    assert (pcie.floor_tflops, pcie.floor_provisional, pcie.power_default_w) == (400.0, True, None)
    unknown = resolved(WORDS, _node(None))
    assert (unknown.product, unknown.floor_tflops, unknown.power_default_w) == ("", None, None)


def test_a_floor_the_job_sets_wins_over_the_catalog_s() -> None:
    own = [*WORDS[:15], "560", *WORDS[16:]]
    params = resolved(own, _node("NVIDIA-H100-80GB-HBM3"))
    assert (params.floor_tflops, params.floor_provisional) == (560.0, False)


def test_the_run_s_floors_win_over_the_job_s_and_the_catalog_s_per_product_or_for_all() -> None:
    own = [*WORDS[:15], "560", *WORDS[16:]]
    node = _node("NVIDIA-H100-80GB-HBM3")
    assert resolved(own, node, {"bf16": 500}).floor_tflops == 500.0
    assert resolved(WORDS, node, {"NVIDIA-H100-80GB-HBM3": {"bf16": 610}}).floor_tflops == 610.0
    pcie = resolved(WORDS, _node("NVIDIA-H100-PCIe"), {"bf16": 420})
    assert (pcie.floor_tflops, pcie.floor_provisional) == (420.0, False)
    assert resolved(WORDS, node, {"fp8": 1000}).floor_tflops == 590.0   # another dtype's floor changes nothing


def test_a_burn_in_job_carries_the_run_s_floors_from_its_annotation() -> None:
    job = {"metadata": {"name": "j", "annotations": {"cre.certification/gemm-floors": '{"bf16":555}'}},
           "spec": {"workload": {"trainJob": {"trainer": {"command": WORDS[:2], "args": WORDS[2:]}}}}}
    assert of_job(job, _node("NVIDIA-H100-80GB-HBM3")).floor_tflops == 555.0
