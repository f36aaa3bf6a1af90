"""A burn-in category in report.md and junit.xml: every finding (fail and warn) with its GPU, rule and numbers, the
fleet rule's slow GPUs and node as warnings, one testcase per node, and no GEMM finding told twice."""
from __future__ import annotations

import copy
import xml.etree.ElementTree as ET

from ansible_collections.cre.certification.plugins.module_utils.engine.report import burn_in as bi
from ansible_collections.cre.certification.plugins.module_utils.engine.report import junit, markdown
from tests.unit.engine.report.burn_in_reports import burn_in, burn_in_report
from tests.unit.engine.report.gpu_reports import gpu_report

NODE_MEDIAN = ("gpu-node-002 GPU 5: node-median: median 542.7 TFLOPS is 9.2% below the node median 598.0 in "
               "windows 2-21 (fail above 5%)")
THROTTLE = "gpu-node-003 GPU 2: throttle: hw_thermal active in windows 8-21 (a hardware throttle reason fails)"
FLOOR_WARN = ("warning: gpu-node-003 GPU 2: floor: median 418.5 TFLOPS is below the floor 490.0 of NVIDIA-H100-NVL "
              "BF16 (provisional: warns, never fails)")
POWER = "gpu-node-004 GPU 3: power-limit: power limit 340.0 W is below the SKU's default 400.0 W in every window"
SLOW_NODE = ("warning: gpu-node-004: slow: node median 510.0 TFLOPS is 0.86x the fleet median 596.0 of "
             "NVIDIA-H100-NVL (slow below 0.95x)")
SLOW_GPU = ("warning: gpu-node-002 GPU 5: slow: median 542.7 TFLOPS is 0.91x the fleet median 596.0 of "
            "NVIDIA-H100-NVL (slow below 0.92x)")


def test_facts_line_names_dtype_windows_warm_up_the_provisional_floor_and_the_fleet_median() -> None:
    found = burn_in()
    assert bi.facts_line(found) == ("BF16 GEMM, 30 s windows, the first 60 s dropped as warm-up; floor 490.0 TFLOPS "
                                    "per GPU (provisional: it warns, never fails); fleet median 596.0 TFLOPS")
    found["floor"] = {"tflops": 590.0, "provisional": False}
    assert "; floor 590.0 TFLOPS per GPU; " in bi.facts_line(found)
    found["floor"], found["fleet"]["median"] = {"tflops": None, "provisional": False}, None
    assert bi.facts_line(found).endswith("; no floor for this product and dtype (none judged); fleet median - TFLOPS")


def test_a_rule_is_said_once_whether_or_not_the_message_starts_with_it() -> None:
    assert bi.ruled("xid", "xid: 79 in window 4") == bi.ruled("xid", "79 in window 4") == "xid: 79 in window 4"
    assert bi.gpu_name("gpu-node-004", None) == "gpu-node-004" and bi.gpu_name("n", 0) == "n GPU 0"


def test_node_lines_split_fails_from_warnings_and_add_the_slow_entries() -> None:
    lines = bi.node_lines(burn_in_report()["categories"][0])
    assert "gpu-node-001" not in lines  # healthy: nothing to say
    assert lines["gpu-node-002"] == ([NODE_MEDIAN], [SLOW_GPU])
    fails, warns = lines["gpu-node-003"]
    assert fails[0] == THROTTLE and fails[1].startswith("gpu-node-003 GPU 2: node-median: median 418.5 TFLOPS is ")
    assert warns[0] == FLOOR_WARN and warns[1].startswith("warning: gpu-node-003 GPU 2: slow: ")
    fails, warns = lines["gpu-node-004"]
    assert len(fails) == 8 and POWER in fails and warns[0] == SLOW_NODE and len(warns) == 9
    assert bi.node_lines(gpu_report()["categories"][0]) == {}  # no burn-in, no lines


def test_without_gemm_leaves_the_other_findings_and_touches_only_burn_in_categories() -> None:
    report = burn_in_report()
    cat = report["categories"][0]
    cat["evidence"]["gpus"][0]["failures"].append({"test": "memory", "outcome": "fail", "detail": "bad row"})
    left = bi.without_gemm(cat)
    assert [f["test"] for g in left["evidence"]["gpus"] for f in g["failures"]] == ["memory"]
    assert sum(len(g["failures"]) for g in cat["evidence"]["gpus"]) == 13  # the report itself is untouched
    level2 = gpu_report()["categories"][0]
    assert bi.without_gemm(level2) is level2


def test_markdown_names_every_finding_and_slow_entry_with_gpu_rule_and_numbers() -> None:
    text = markdown.markdown(burn_in_report())
    lines = text.splitlines()
    assert ("Burn-in: BF16 GEMM, 30 s windows, the first 60 s dropped as warm-up; floor 490.0 TFLOPS per GPU "
            "(provisional: it warns, never fails); fleet median 596.0 TFLOPS") in lines
    assert "| gpu-node-002 | 598.0 | GPU 5 542.7 | GPU 5 fail |" in lines
    assert "| gpu-node-001 | 600.0 | GPU 0 593.0 | - |" in lines
    for line in (NODE_MEDIAN, THROTTLE, FLOOR_WARN, POWER, SLOW_NODE, SLOW_GPU):
        assert f"- {line}" in lines
    assert sum(line.startswith("- warning: ") and ": slow: " in line for line in lines) == 11
    # The evidence table does not tell the GEMM findings a second time; its counts still count those GPUs.
    assert "| gemm |" not in text and "32 GPUs on 4 nodes: 22 pass, 0 warn, 10 fail, 0 skip" in text


def test_markdown_of_a_missing_median_says_so_and_a_report_without_burn_in_has_no_section() -> None:
    report = burn_in_report()
    node = report["categories"][0]["burnIn"]["nodes"][0]
    node["median"] = None
    for gpu in node["gpus"]:
        gpu["median"] = None
    assert "| gpu-node-001 | - | - | - |" in markdown.markdown(report).splitlines()
    assert "Burn-in:" not in markdown.markdown(gpu_report())


def _cases(report: dict) -> dict[str, ET.Element]:
    root = ET.fromstring(junit.junit_xml(report))
    return {c.get("name", ""): c for c in root.iter("testcase")}


def test_junit_keeps_one_testcase_per_node_with_findings_in_the_failure_and_warnings_in_system_out() -> None:
    cases = _cases(burn_in_report())
    assert list(cases) == ["gpu-node-001", "gpu-node-002", "gpu-node-003", "gpu-node-004"]
    assert cases["gpu-node-001"].find("failure") is None and cases["gpu-node-001"].find("system-out") is None
    failure = (cases["gpu-node-002"].findtext("failure") or "").splitlines()
    assert NODE_MEDIAN in failure and not any("gemm failed" in line for line in failure)  # told once, by the rule
    assert (cases["gpu-node-002"].findtext("system-out") or "").splitlines() == [SLOW_GPU]
    failure = (cases["gpu-node-003"].findtext("failure") or "").splitlines()
    assert THROTTLE in failure and FLOOR_WARN not in failure
    assert FLOOR_WARN in (cases["gpu-node-003"].findtext("system-out") or "").splitlines()
    assert POWER in (cases["gpu-node-004"].findtext("failure") or "")
    assert (cases["gpu-node-004"].findtext("system-out") or "").splitlines()[0] == SLOW_NODE


def test_junit_warnings_of_a_passing_node_are_its_system_out() -> None:
    report = burn_in_report()
    cat = report["categories"][0]
    found = cat["burnIn"]["nodes"][0]["gpus"][4]
    found.update(outcome="warn", findings=[{"rule": "node-median", "outcome": "warn",
                                            "message": "median 578.0 TFLOPS is 3.7% below the node median 600.0 in "
                                                       "windows 9-11 (warn from 3%)"}])
    before = copy.deepcopy(report)
    case = _cases(report)["gpu-node-001"]
    assert case.find("failure") is None
    assert case.findtext("system-out") == ("warning: gpu-node-001 GPU 4: node-median: median 578.0 TFLOPS is 3.7% "
                                           "below the node median 600.0 in windows 9-11 (warn from 3%)")
    assert report == before  # rendering changes nothing
