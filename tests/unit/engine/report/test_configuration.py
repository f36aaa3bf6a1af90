"""A node-drift category (issue 42's `configuration`) in report.md, junit.xml and report.html: every finding with
node, component, field, expected, observed, severity and remedy; the drift table with the majority marked and the
outlier named; one testcase per node; no finding told twice by the per-GPU evidence."""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from ansible_collections.cre.certification.plugins.module_utils.engine.report import configuration as cfg
from ansible_collections.cre.certification.plugins.module_utils.engine.report import (
    configuration_view,
    html,
    junit,
    markdown,
)
from tests.unit.engine.report.burn_in_reports import burn_in_report
from tests.unit.engine.report.config_reports import (
    ECC_LINE,
    FW,
    FW_LINE,
    NIC_LINE,
    OTHER_FW,
    config_report,
    large_report,
)
from tests.unit.engine.report.gpu_reports import gpu_report

COUNTS = "8 nodes: 4 with a failing finding, 2 with warnings only, 2 without findings; 7 findings (5 fail, 2 warn)"
MAJORITY_NODES = "gpu-node-001, gpu-node-002, gpu-node-003, gpu-node-004, gpu-node-005, gpu-node-007, gpu-node-008"


def category() -> dict:
    return config_report()["categories"][0]


def test_component_and_finding_text_name_gpu_nic_or_node_and_the_drift() -> None:
    found = cfg.configuration(category())
    assert found is not None
    told = {n["node"]: n["findings"] for n in cfg.nodes(found)}
    assert [cfg.component_text(f) for f in told["gpu-node-002"]] == ["GPU 5", "GPU 5"]
    assert cfg.component_text(told["gpu-node-003"][0]) == "NIC mlx5_3/1"
    assert cfg.component_text(told["gpu-node-005"][0]) == "node"
    assert cfg.finding_text(told["gpu-node-001"][0]) == ECC_LINE.removeprefix("configuration: ")
    assert cfg.drift_text(told["gpu-node-006"][0]) == f"majority {FW} on 7/8 nodes"
    assert cfg.drift_text(told["gpu-node-001"][0]) == ""  # a fixed value, no drift


def test_nodes_keep_natural_order_fails_first_and_never_list_a_passed_check() -> None:
    cat = category()
    cat["configuration"]["nodes"].reverse()
    first = cat["configuration"]["nodes"][-1]  # gpu-node-001: a warning given before its failing finding
    first["findings"].insert(0, {**first["findings"][0], "outcome": "warn", "field": "kernel"})
    every = cfg.nodes(cat["configuration"])
    assert [n["node"] for n in every] == [f"gpu-node-{i:03d}" for i in range(1, 9)]
    assert [(f["field"], f["outcome"]) for f in every[0]["findings"]] == [("ecc_current", "fail"), ("kernel", "warn")]
    assert [(n["node"], n["outcome"]) for n in every if n["outcome"] != "pass"] == [
        ("gpu-node-001", "fail"), ("gpu-node-002", "fail"), ("gpu-node-003", "fail"), ("gpu-node-004", "warn"),
        ("gpu-node-005", "fail"), ("gpu-node-006", "warn")]
    assert every[-1]["findings"] == [] and every[-1]["checked"] == 1  # its driver check passed: counted, not listed
    assert cfg.counts_line(category()["configuration"]) == COUNTS


def test_drift_puts_the_majority_first_marked_with_its_count_and_the_outlier_named() -> None:
    table = cfg.drift(category()["configuration"])
    fw, driver = table
    assert (fw["field"], fw["component"], fw["majority"], fw["of"], fw["differs"]) == ("nic.fw", "nic", FW, 8, True)
    assert [(v["value"], v["count"], v["majority"]) for v in fw["values"]] == [(FW, 7, True), (OTHER_FW, 1, False)]
    assert fw["values"][1]["nodes"] == ["gpu-node-006"] and cfg.holders_text(fw["values"][0], 8) == "7/8 nodes"
    assert driver["differs"] is False and driver["values"][0]["count"] == 8


def test_markdown_has_a_row_per_finding_and_the_drift_table() -> None:
    lines = markdown.markdown(config_report()).splitlines()
    assert f"Configuration: {COUNTS}" in lines
    assert "| Node | Component | Field | Expected | Observed | Severity | Remedy |" in lines
    assert ("| gpu-node-001 | GPU 2 | ecc_current | enabled | disabled | fail | enable ECC: `nvidia-smi -i 2 -e 1` and "
            "reboot |") in lines
    assert any(line.startswith("| gpu-node-002 | GPU 5 | pcie_width | 16 | 8 | fail | ") for line in lines)
    assert any(line.startswith("| gpu-node-003 | NIC mlx5_3/1 | nic.state | ACTIVE/LinkUp | DOWN/Polling | fail |")
               for line in lines)
    assert any(line.startswith("| gpu-node-004 | GPU 0 | power_limit_w | 700 W | 600 W | warn |") for line in lines)
    assert any(line.startswith("| gpu-node-005 | node | gpus | 8 | 7 | fail | find the missing GPU: `nvidia-smi -L`, "
                               "`dmesg \\| grep -i nvrm`") for line in lines)  # the pipe escaped in its cell
    assert (f"| gpu-node-006 | NIC mlx5_0/1 | nic.fw | {FW} | {OTHER_FW} (majority {FW} on 7/8 nodes) | warn | flash "
            f"the fleet's firmware {FW} (mlxfwmanager) |") in lines
    assert not any(line.startswith(("| gpu-node-007 | ", "| gpu-node-008 | ")) and "| fail |" in line for line in lines)
    assert f"| nic.fw | nic | {FW} (majority) | 7/8 nodes | {MAJORITY_NODES} |" in lines
    assert f"| nic.fw | nic | {OTHER_FW} | 1/8 nodes | gpu-node-006 |" in lines
    assert any(line.startswith("| driver | node | 570.124.06 | 8/8 nodes | ") for line in lines)  # no majority mark
    # The per-GPU evidence keeps its counts but leaves the configuration findings to the section above.
    assert "| configuration |" not in "\n".join(lines)
    assert ("GPU evidence: final: 1260 rows in 1 shard, 0 truncated; 63 GPUs on 8 nodes: 60 pass, 1 warn, 2 fail, "
            "0 skip; 0 lacking evidence, 0 missing") in lines


def test_markdown_of_a_large_fleet_counts_the_majority_and_names_the_outliers() -> None:
    lines = markdown.markdown(large_report()).splitlines()
    assert f"| nic.fw | nic | {FW} (majority) | 997/1000 nodes | 997 nodes |" in lines
    assert f"| nic.fw | nic | {OTHER_FW} | 3/1000 nodes | node-998, node-999, node-1000 |" in lines


def test_junit_keeps_one_testcase_per_node_fails_in_the_failure_warnings_in_system_out() -> None:
    root = ET.fromstring(junit.junit_xml(config_report()))
    cases = {c.get("name"): c for c in root.iter("testcase")}
    assert len(cases) == 8 and root.get("tests") == "8" and root.get("failures") == "4"
    assert ECC_LINE in (cases["gpu-node-001"].findtext("failure") or "").splitlines()
    assert NIC_LINE in (cases["gpu-node-003"].findtext("failure") or "").splitlines()
    pcie = (cases["gpu-node-002"].findtext("failure") or "").splitlines()
    assert sum(line.startswith("configuration: GPU 5 (GPU-gpu-node-002-5): pcie_") for line in pcie) == 2
    assert cases["gpu-node-006"].find("failure") is None and cases["gpu-node-006"].findtext("system-out") == FW_LINE
    assert (cases["gpu-node-004"].findtext("system-out") or "").startswith(
        "warning: configuration: GPU 0 (GPU-gpu-node-004-0): power_limit_w: expected 700 W, observed 600 W; ")
    assert all(cases[n].find("failure") is None and cases[n].find("system-out") is None
               for n in ("gpu-node-007", "gpu-node-008"))
    # The evidence row of the same finding is not told a second time.
    assert "configuration failed" not in junit.junit_xml(config_report())


def test_evidence_left_drops_only_what_a_section_of_its_own_says() -> None:
    cat = category()
    left = cfg.evidence_left(cat)
    assert not any(g["failures"] for g in left["evidence"]["gpus"])
    assert sum(len(g["failures"]) for g in cat["evidence"]["gpus"]) == 3  # the report itself is untouched
    plain = gpu_report()["categories"][0]
    assert cfg.evidence_left(plain) is plain and cfg.without_configuration(plain) is plain
    burn = burn_in_report()["categories"][0]  # the burn-in's GEMM rows still go to its own section
    assert not any(f["test"] == "gemm" for g in cfg.evidence_left(burn)["evidence"]["gpus"] for f in g["failures"])


def test_a_category_without_configuration_has_no_section() -> None:
    report = gpu_report()
    assert cfg.markdown_lines(report["categories"][0]) == [] and cfg.node_lines(report["categories"][0]) == {}
    assert configuration_view.view(report["categories"][0]) is None
    assert 'class="configuration"' not in html.report_html(report)


def test_view_opens_failing_nodes_folds_clean_ones_and_splits_drifting_from_agreeing_fields() -> None:
    found = configuration_view.view(category())
    assert found is not None
    assert [n["node"] for n in found["failing"]] == ["gpu-node-001", "gpu-node-002", "gpu-node-003", "gpu-node-005"]
    assert [n["node"] for n in found["warned"]] == ["gpu-node-004", "gpu-node-006"] and found["warnedOpen"]
    assert found["clean"] == ["gpu-node-007", "gpu-node-008"]
    assert found["failing"][0]["rows"] == [{
        "component": "GPU 2", "uuid": "GPU-gpu-node-001-2", "field": "ecc_current", "expected": "enabled",
        "observed": "disabled", "drift": "", "outcome": "fail", "remedy": "enable ECC: `nvidia-smi -i 2 -e 1` and reboot"}]
    assert [e["field"] for e in found["drift"]] == ["nic.fw"] and [e["field"] for e in found["agreeing"]] == ["driver"]
    assert [(v["held"], v["folded"]) for v in found["drift"][0]["values"]] == [("7/8 nodes", False), ("1/8 nodes", False)]


def test_page_shows_the_drift_table_with_the_majority_marked_and_each_finding() -> None:
    page = html.report_html(config_report())
    assert page.count('<section class="configuration">') == 1
    assert re.search(r'<tr class="drift-majority" data-value="28\.39\.1002" data-count="7">.*?<span class="majority">'
                     r'majority</span>', page)
    assert re.search(r'<tr class="drift-outlier" data-value="28\.40\.1000" data-count="1">.*?gpu-node-006</td></tr>',
                     page)
    assert ('<td class="component" title="GPU-gpu-node-001-2">GPU 2</td><td class="field">ecc_current</td><td>enabled'
            '</td><td class="observed">disabled</td><td class="cfg-fail">fail</td>') in page
    assert f'<span class="drift-note">(majority {FW} on 7/8 nodes)</span>' in page
    assert "find the missing GPU: `nvidia-smi -L`, `dmesg | grep -i nvrm`" in page
    # The agreeing field is folded, unmarked; the per-GPU findings table leaves the configuration rows out.
    assert re.search(r'<details class="drift-agreeing">.*?data-field="driver"', page, re.S)
    assert '<table class="gpu-findings">' not in page


def test_a_thousand_nodes_fold_to_the_outliers() -> None:
    report = large_report()
    found = configuration_view.view(report["categories"][0])
    assert found is not None and len(found["clean"]) == 997 and [n["node"] for n in found["warned"]] == [
        "node-998", "node-999", "node-1000"]
    assert [(v["count"], v["folded"]) for v in found["drift"][0]["values"]] == [(997, True), (3, False)]
    page = html.report_html(report)
    assert '<details class="drift-nodes"><summary>997 nodes</summary>node-1, node-2, ' in page
    assert '<details class="cfg-clean"><summary>997 nodes without findings</summary>' in page
    many = large_report(1000, 30)  # more nodes with warnings only than are read at a glance: folded too
    view = configuration_view.view(many["categories"][0])
    assert view is not None and not view["warnedOpen"]
    assert '<details class="cfg-warned"><summary>30 nodes with warnings only</summary>' in html.report_html(many)


def test_every_text_is_escaped() -> None:
    report = config_report()
    report["categories"][0]["configuration"]["nodes"][0]["findings"][0]["observed"] = "<script>x</script>"
    report["categories"][0]["configuration"]["drift"][0]["values"][0]["value"] = "<b>fw</b>"
    page = html.report_html(report)
    assert "<script>x" not in page and "&lt;script&gt;x&lt;/script&gt;" in page and "&lt;b&gt;fw&lt;/b&gt;" in page
