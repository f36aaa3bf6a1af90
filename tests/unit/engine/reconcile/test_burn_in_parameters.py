"""The burn-in's parameters for one node: the Job's harness flags, the product, floor and default power limit
filled from the node where the flags leave them unset; a floor the flags set wins."""
from __future__ import annotations

from ansible_collections.cre.certification.plugins.module_utils.engine.reconcile.burn_in_parameters import resolved

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
