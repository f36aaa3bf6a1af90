"""The golden rules: each fault found with its field, expected and observed values, severity and remedy; the Job
tier's judge_text shape; the profile loader's field-path errors and a user's file over the shipped one."""
from __future__ import annotations

from typing import Any

import pytest

from ansible_collections.cre.certification.plugins.module_utils.engine.api.errors import InputError
from ansible_collections.cre.certification.plugins.module_utils.engine.catalog.golden_defaults import (
    defaults,
    load_file,
    load_text,
)
from ansible_collections.cre.certification.plugins.module_utils.engine.evidence import golden, node_snapshot
from ansible_collections.cre.certification.plugins.module_utils.engine.evidence.dcgm_results import UnreadableOutput
from tests.unit.engine.evidence.config_docs import collector, h100s, nics, node_files

LABEL = "NVIDIA-H100-80GB-HBM3"
HEADER = "apiVersion: cre.certification/v1\nkind: GoldenProfile\n"


def _snapshot(gpus: Any = None, ports: Any = None, **files: Any) -> dict[str, Any]:
    files = node_files(h100s() if gpus is None else gpus, nics() if ports is None else ports, **files)
    return node_snapshot.read(collector("gpu-node-1", files))


def _found(snapshot: dict[str, Any], platform: str = "", profile: Any = None) -> list[tuple[Any, ...]]:
    return [(f["component"], f["index"], f["name"], f["field"], f["expected"], f["observed"], f["outcome"])
            for f in golden.findings(snapshot, profile or defaults(), LABEL, platform)]


def test_a_healthy_node_has_no_finding_and_every_field_judged_passes() -> None:
    snapshot = _snapshot()
    assert _found(snapshot, "azure") == []
    judged = golden.findings(snapshot, defaults(), LABEL, "azure", passes=True)
    fields = {f["field"] for f in judged}
    assert fields >= {"gpu_count", "ecc_current", "ecc_pending", "remap_pending", "remap_failure",
                      "volatile_uncorrectable", "persistence", "power_limit_w", "pcie_gen", "pcie_width", "throttle",
                      "driver", "cuda", "nic.count", "nic.state", "nic.rate", "nic.pcie_gen", "nic.pcie_width"}
    assert {f["outcome"] for f in judged} == {"pass"} and {f["remedy"] for f in judged} == {""}


GPU_FAULTS = [
    ("ecc off", {"ecc": False}, [("ecc_current", "Enabled", "Disabled", "fail")]),
    ("ecc pending off", {"ecc_pending": False}, [("ecc_pending", "Enabled", "Disabled", "fail")]),
    ("remap pending", {"remap_pending": True}, [("remap_pending", "No", "Yes", "fail")]),
    ("remap failure", {"remap_failure": True}, [("remap_failure", "No", "Yes", "fail")]),
    ("uncorrectable", {"volatile": 2}, [("volatile_uncorrectable", "0", "2", "fail")]),
    ("retired pending", {"retired_pending": True}, [("retired_pending", "No", "Yes", "fail")]),
    ("persistence off", {"persistence": False}, [("persistence", "Enabled", "Disabled", "warn")]),
    ("power capped", {"power": 560.0}, [("power_limit_w", "700 W", "560 W", "fail")]),
    ("power raised", {"power": 750.0, "default_power": 750.0}, []),   # the board's own default is its SKU
    ("pcie downgraded", {"gen": 4, "width": 8}, [("pcie_gen", "Gen5", "Gen4", "fail"),
                                                 ("pcie_width", "x16", "x8", "fail")]),
    ("host limits the link", {"gen": 4, "host_gen": 4}, []),
    ("host limit, link below it", {"gen": 3, "host_gen": 4}, [("pcie_gen", "Gen4 (host limit)", "Gen3", "fail")]),
    ("idle link slow", {"gen": 1, "pstate": "P8"}, []),
    ("power brake", {"throttle": ("hw_slowdown", "hw_power_brake_slowdown")},
     [("throttle", "none but gpu_idle", "hw_slowdown, hw_power_brake_slowdown", "fail")]),
    ("software cap", {"throttle": ("sw_power_cap",)}, [("throttle", "none but gpu_idle", "sw_power_cap", "warn")]),
    ("idle", {"throttle": ("gpu_idle",)}, []),
]


@pytest.mark.parametrize(("case", "change", "want"), GPU_FAULTS, ids=[c[0] for c in GPU_FAULTS])
def test_each_gpu_fault_is_one_finding_with_field_expected_and_observed(
        case: str, change: dict[str, Any], want: list[tuple[str, ...]]) -> None:
    found = _found(_snapshot(h100s(g3=change)))
    assert found == [("gpu", 3, None, *w) for w in want], case


def test_every_finding_has_a_remedy_line_naming_the_gpu() -> None:
    found = golden.findings(_snapshot(h100s(g2={"ecc": False})), defaults(), LABEL)
    assert found == [{"node": "gpu-node-1", "component": "gpu", "index": 2, "uuid": "GPU-2", "name": None,
                      "field": "ecc_current", "expected": "Enabled", "observed": "Disabled", "outcome": "fail",
                      "remedy": "enable ECC: `nvidia-smi -i 2 -e 1` and reboot", "drift": None}]


def test_node_faults_gpu_missing_and_old_driver() -> None:
    found = _found(_snapshot(h100s(7), driver="515.65.01"))
    assert found == [("node", None, None, "gpu_count", "8", "7", "fail"),
                     ("node", None, None, "driver", ">= 520.61.05", "515.65.01", "fail")]


def test_nvlinks_below_the_products_count_fail() -> None:
    links = "".join(f"GPU {g}: NVIDIA H100 80GB HBM3 (UUID: GPU-{g})\n"
                    + "".join(f"\t Link {i}: 26.562 GB/s\n" for i in range(17 if g == 5 else 18))
                    + ("\t Link 17: <inactive>\n" if g == 5 else "") for g in range(8))
    files = {**node_files(h100s(), nics()), "nvidia-smi-nvlink.txt": links}
    assert _found(node_snapshot.read(collector("gpu-node-1", files))) == [
        ("gpu", 5, None, "nvlinks_active", "18", "17 of 18", "fail")]


NIC_FAULTS = [
    ("port down", {"p2": {"state": "1: DOWN", "phys_state": "3: Disabled"}},
     [("nic", 1, "mlx5_2/1", "nic.state", "ACTIVE/LinkUp", "DOWN/Disabled", "fail")]),
    ("port slow", {"p4": {"rate": "200 Gb/sec (4X HDR)"}},
     [("nic", 1, "mlx5_4/1", "nic.rate", "400 Gb/s", "200 Gb/s", "fail")]),
    ("nic link x8", {"p1": {"pci": {"address": "0000:1b:00.0", "current_link_speed": "32.0 GT/s PCIe",
                                    "current_link_width": "8", "max_link_speed": "32.0 GT/s PCIe",
                                    "max_link_width": "16"}}},
     [("nic", 1, "mlx5_1/1", "nic.pcie_width", "x16", "x8", "fail")]),
]


@pytest.mark.parametrize(("case", "change", "want"), NIC_FAULTS, ids=[c[0] for c in NIC_FAULTS])
def test_each_nic_fault_names_the_port(case: str, change: dict[str, Any], want: list[tuple[Any, ...]]) -> None:
    assert _found(_snapshot(ports=nics(**change)), "azure") == want, case


def test_nic_count_is_judged_only_where_the_platform_fixes_it() -> None:
    assert _found(_snapshot(ports=nics(7)), "azure") == [("node", None, None, "nic.count", "8 InfiniBand ports", "7",
                                                          "fail")]
    assert _found(_snapshot(ports=nics(7)), "gcp") == []


def test_without_a_platform_a_slow_port_is_judged_against_its_fastest_peer() -> None:
    assert _found(_snapshot(ports=nics(p0={"rate": "100 Gb/sec (4X EDR)"}))) == [
        ("nic", 1, "mlx5_0/1", "nic.rate", "400 Gb/s", "100 Gb/s", "fail")]


def test_a_users_profile_overrides_field_by_field(tmp_path: Any) -> None:
    path = tmp_path / "golden.yaml"
    path.write_text(HEADER + f"products:\n  {LABEL}:\n    minDriver: '580.65.06'\n    pinned:\n      vbios: "
                    "{value: 96.00.99.00.01, nodes: 7, of: 8}\nseverity:\n  persistence: fail\n")
    profile = load_file(str(path))
    rule = profile.product("NVIDIA H100 80GB HBM3")   # nvidia-smi's spelling of the label
    assert (rule.nvlinks, rule.min_driver, rule.min_cuda) == (18, "580.65.06", "11.8")   # the rest stays shipped
    found = _found(_snapshot(h100s(1, g0={"persistence": False})), profile=profile)
    assert found == [("node", None, None, "gpu_count", "8", "1", "fail"),
                     ("node", None, None, "driver", ">= 580.65.06", "570.124.06", "fail"),
                     ("gpu", 0, None, "persistence", "Enabled", "Disabled", "fail"),
                     ("gpu", 0, None, "vbios", "96.00.99.00.01 (pinned: 7 of 8 nodes)", "96.00.74.00.0D", "warn")]


PROFILE_ERRORS = [
    ("kind: Baseline\n", "u.yaml apiVersion: None is not 'cre.certification/v1'"),
    (HEADER + "products:\n  NVIDIA-B200: {nvlinks: -2}\n",
     "u.yaml products.NVIDIA-B200.nvlinks: -2 is not a count (a whole number, 0 or more, or null)"),
    (HEADER + "products:\n  NVIDIA-B200: {minDriver: 570.1}\n",
     "u.yaml products.NVIDIA-B200.minDriver: 570.1 is not a version (dotted numbers, quoted: \"570.124.06\")"),
    (HEADER + "products:\n  NVIDIA-B200: {nvlink: 18}\n",
     "u.yaml products.NVIDIA-B200.nvlink: is not a product field (gpus, nvlinks, minDriver, minCuda, powerLimitW, "
     "pinned)"),
    (HEADER + "nics:\n  azure: {linkLayer: RoCE}\n", "u.yaml nics.azure.linkLayer: 'RoCE' is not InfiniBand or Ethernet"),
    (HEADER + "severity:\n  ecc_current: error\n", "u.yaml severity.ecc_current: 'error' is not fail or warn"),
    (HEADER + "severity:\n  ecc: fail\n", "u.yaml severity.ecc: is not a rule (gpu_count, "),
    (HEADER + "pinned:\n  serial: '123'\n", "u.yaml pinned.serial: is not a pinnable field (vbios, driver, kernel, nic.fw)"),
    (HEADER + "products: [\n", "u.yaml line 4: cannot read it as YAML or JSON"),
]


@pytest.mark.parametrize(("text", "message"), PROFILE_ERRORS)
def test_a_bad_profile_is_refused_with_its_field_path(text: str, message: str) -> None:
    with pytest.raises(InputError) as refused:
        load_text(text, "u.yaml")
    assert str(refused.value).startswith(message)


def test_judge_text_gives_the_job_tiers_shape_with_the_snapshot() -> None:
    log = collector("gpu-node-1", node_files(h100s(7, g2={"ecc": False}), nics()))
    options = golden.GoldenOptions("gpu-node-1", 8, parameters=golden.GoldenParameters(LABEL, "azure", defaults()))
    judged = golden.judge_text(log, options)
    assert (judged["outcome"], judged["missing"], judged["lacking_evidence"], judged["runtime_error"]) == (
        "fail", [7], [], None)
    gpu2 = judged["gpus"][2]
    assert (gpu2["outcome"], gpu2["failures"]) == ("fail", [{
        "test": "configuration", "outcome": "fail",
        "detail": "ecc_current Disabled: expected Enabled; enable ECC: `nvidia-smi -i 2 -e 1` and reboot"}])
    assert [g["outcome"] for g in judged["gpus"]] == ["pass", "pass", "fail", "pass", "pass", "pass", "pass", "fail"]
    failing = [(r["component"], r["index"], r["metric"], r["value"], r["outcome"], r["detail"]) for r in judged["rows"]
               if r["outcome"] != "pass"]
    assert failing == [("gpu", None, "gpu_count", "7", "fail", "expected 8; find the missing GPU: `nvidia-smi -L`, "
                        "`lspci | grep -i nvidia`, Xid 79 in the kernel log; reseat or replace it"),
                       ("gpu", 2, "ecc_current", "Disabled", "fail",
                        "expected Enabled; enable ECC: `nvidia-smi -i 2 -e 1` and reboot")]
    assert {r["test"] for r in judged["rows"]} == {"configuration"} and judged["snapshot"]["node"] == "gpu-node-1"
    links = [r for r in judged["rows"] if r["component"] == "link"]
    assert links and all(r["detail"].startswith("mlx5_") for r in links)


def test_judge_text_refuses_what_is_not_collector_output() -> None:
    with pytest.raises(UnreadableOutput, match="no node-drift/1 begin record"):
        golden.judge_text("pod evicted\n", golden.GoldenOptions("n"))
