"""The burn-in floors per GPU product and dtype in catalog/gpu-defaults.yaml: the issue-41 figures exactly, the
provisional ones marked, looked up by label, alias, power limit and the run's overrides; a malformed table is one
clear error."""
from __future__ import annotations

import pytest

from ansible_collections.cre.certification.plugins.module_utils.engine.api.errors import InputError
from ansible_collections.cre.certification.plugins.module_utils.engine.catalog import gpu_floors
from ansible_collections.cre.certification.plugins.module_utils.engine.catalog.gpu_floors import (
    default_power_w,
    floor_for,
)
from tools.sim.profiles import GPUS

# (product label, dtype, floor, provisional): issue 41's starting floors, and those it names provisional.
FLOORS = [
    ("NVIDIA-H100-80GB-HBM3", "bf16", 590, False), ("NVIDIA-H100-80GB-HBM3", "fp8", 1040, False),
    ("NVIDIA-H100-80GB-HBM3", "tf32", 300, False),
    ("NVIDIA-H100-PCIe", "bf16", 400, True), ("NVIDIA-H100-PCIe", "fp8", 700, True),
    ("NVIDIA-H100-PCIe", "tf32", 200, True),
    ("NVIDIA-H100-NVL", "bf16", 490, True),
    ("NVIDIA-H200", "bf16", 600, False), ("NVIDIA-H200", "fp8", 1060, False), ("NVIDIA-H200", "tf32", 300, True),
    ("NVIDIA-A100-SXM4-80GB", "bf16", 210, False), ("NVIDIA-A100-SXM4-80GB", "tf32", 100, False),
    ("NVIDIA-A100-SXM4-80GB", "fp8", None, False),          # Ampere has no FP8
    ("NVIDIA-B200", "bf16", 1150, False), ("NVIDIA-B200", "fp8", 2230, False), ("NVIDIA-B200", "tf32", None, True),
    ("NVIDIA-GB200", "bf16", 1240, False), ("NVIDIA-GB200", "fp8", 2320, False), ("NVIDIA-GB200", "tf32", 620, True),
    ("NVIDIA-B300-SXM6-AC", "bf16", 1210, False), ("NVIDIA-B300-SXM6-AC", "fp8", 2370, False),
    ("NVIDIA-B300-SXM6-AC", "tf32", None, True),
    ("NVIDIA-GB300-NVL72", "fp8", 2630, False), ("NVIDIA-GB300-NVL72", "bf16", 1240, True),
    ("NVIDIA-L40S", "bf16", None, False),                   # no floors for the product: nothing judged
]


@pytest.mark.parametrize(("product", "dtype", "tflops", "provisional"), FLOORS)
def test_the_starting_floors_are_the_issues(product: str, dtype: str, tflops: float | None,
                                            provisional: bool) -> None:
    assert floor_for(product, dtype) == (tflops, provisional)


def test_every_simulated_product_has_floors_and_a_default_power_limit() -> None:
    for gpu in GPUS.values():
        assert floor_for(gpu.product, "bf16")[0] is not None, gpu.product
        assert default_power_w(gpu.product) is not None, gpu.product


@pytest.mark.parametrize(("name", "label"), [("NVIDIA H100 80GB HBM3", "NVIDIA-H100-80GB-HBM3"),
                                             ("nvidia-gb300", "NVIDIA-GB300-NVL72"),
                                             ("NVIDIA-A100-SXM4-40GB", "NVIDIA-A100-SXM4-80GB"),
                                             ("NVIDIA-B300", "NVIDIA-B300-SXM6-AC")])
def test_aliases_and_nvidia_smi_names_are_the_same_product(name: str, label: str) -> None:
    assert floor_for(name, "bf16") == floor_for(label, "bf16")


def test_default_power_limits() -> None:
    assert [default_power_w(p) for p in ("NVIDIA-H100-80GB-HBM3", "NVIDIA-B200", "NVIDIA-GB200", "NVIDIA-H100-PCIe",
                                         "NVIDIA-L40S")] == [700.0, 1000.0, 1200.0, None, None]


TABLE = {"products": {"X": {"defaultPowerW": 700, "floors": [
    {"powerW": 500, "bf16": {"tflops": 400}}, {"powerW": 700, "bf16": {"tflops": 590}}]}}}


def test_floors_are_keyed_on_the_power_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gpu_floors, "products", lambda: gpu_floors.load(TABLE))
    assert [floor_for("X", "bf16", limit)[0] for limit in (None, 700, 699.2, 650, 500, 300)] == [
        590.0, 590.0, 590.0, 400.0, 400.0, 400.0]


def test_the_runs_overrides_win_and_are_never_provisional() -> None:
    assert floor_for("NVIDIA-B200", "tf32", overrides={"tf32": 900}) == (900.0, False)
    assert floor_for("NVIDIA-H100-80GB-HBM3", "bf16", overrides={"bf16": 500,
                                                                 "NVIDIA H100 80GB HBM3": {"bf16": 610}}) == (610.0, False)
    assert floor_for("NVIDIA-H200", "bf16", overrides={"NVIDIA-B200": {"bf16": 1}}) == (600.0, False)


@pytest.mark.parametrize(("table", "error"), [
    ({"products": []}, "catalog/gpu-defaults.yaml products: give a map of GPU product to its floors"),
    ({"products": {"X": {"floors": []}}}, "catalog/gpu-defaults.yaml products.X.floors: give at least one row"),
    ({"products": {"X": {"floors": [{"powerW": 0, "bf16": {"tflops": 1}}]}}},
     "catalog/gpu-defaults.yaml products.X.floors[0].powerW: 0 is not a positive number"),
    ({"products": {"X": {"floors": [{"powerW": 700, "bf16": 590}]}}},
     "catalog/gpu-defaults.yaml products.X.floors[0].bf16: give {tflops: <number or null>, provisional: <bool>}"),
    ({"products": {"X": {"floors": [{"powerW": 700, "int4": {"tflops": 1}}]}}},
     "catalog/gpu-defaults.yaml products.X.floors[0]: give powerW and floors by dtype (bf16, fp8, tf32, fp16)"),
    ({"products": {"X": {"floors": [{"powerW": 700, "bf16": {"tflops": 1, "provisional": "yes"}}]}}},
     "catalog/gpu-defaults.yaml products.X.floors[0].bf16.provisional: 'yes' is not true or false"),
    ({"products": {"X": {"defaultPowerW": "700W", "floors": [{"powerW": 700}]}}},
     "catalog/gpu-defaults.yaml products.X.defaultPowerW: '700W' is not a positive number or null"),
    ({"products": {"X": {"floors": [{"powerW": 7}]}, "Y": {"aliases": ["x"], "floors": [{"powerW": 7}]}}},
     "catalog/gpu-defaults.yaml products.Y: 'x' is already X's name"),
])
def test_a_malformed_table_is_one_clear_error(table: dict, error: str) -> None:
    with pytest.raises(InputError) as err:
        gpu_floors.load(table)
    assert str(err.value) == error


@pytest.mark.parametrize(("value", "error"), [
    ([560], "gemm_floors: give {dtype: TFLOPS} or {product: {dtype: TFLOPS}}"),
    ({"bf17": 560}, "gemm_floors.bf17: 'bf17' is not a dtype (bf16, fp8, tf32, fp16); a product maps to {dtype: TFLOPS}"),
    ({"bf16": 0}, "gemm_floors.bf16: 0 is not a positive number of TFLOPS"),
    ({"NVIDIA-H100-80GB-HBM3": {"fp8": "fast"}},
     "gemm_floors.NVIDIA-H100-80GB-HBM3.fp8: 'fast' is not a positive number of TFLOPS"),
], ids=["not-a-dict", "not-a-dtype", "zero", "not-a-number"])
def test_a_run_s_floors_are_refused_with_their_path(value, error) -> None:
    with pytest.raises(InputError) as err:
        gpu_floors.overrides_text(value, "gemm_floors")
    assert str(err.value) == error


def test_a_run_s_floors_are_carried_as_sorted_json_and_read_back() -> None:
    text = gpu_floors.overrides_text({"fp8": 1000, "NVIDIA-H200": {"bf16": 610}}, "gemm_floors")
    assert text == '{"NVIDIA-H200":{"bf16":610},"fp8":1000}'
    assert gpu_floors.overrides_of(text) == {"NVIDIA-H200": {"bf16": 610}, "fp8": 1000}
    assert gpu_floors.overrides_of("{not json") == {} and gpu_floors.overrides_of(None) == {}
