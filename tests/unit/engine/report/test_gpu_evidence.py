"""Per-GPU evidence in every report: the HTML grid, the Markdown findings, the JUnit failure text, the fleet's and the
summary box's failing GPUs; missing, partial and zero evidence told apart, every value escaped."""
from __future__ import annotations

import copy
import re
import xml.etree.ElementTree as ET

from ansible_collections.cre.certification.plugins.module_utils.engine.report import (
    fleet,
    fleet_html,
    fleet_md,
    gpu_grid,
    html,
    junit,
    markdown,
    textbox,
)
from ansible_collections.cre.certification.plugins.module_utils.engine.report import gpu_evidence as ge
from tests.unit.engine.report.gpu_reports import (
    MEMORY_MESSAGE,
    MISSING_MESSAGE,
    PARTIAL,
    PCIE_MESSAGE,
    UUID_3,
    gpu,
    gpu_report,
)

GPU_3_LINE = f"GPU 3 ({UUID_3}): memory failed: {MEMORY_MESSAGE}"
GPU_6_LINE = f"warning: GPU 6 (GPU-gpu-node-1-6): pcie warned: {PCIE_MESSAGE}"
LACKING_LINE = f"warning: GPU 5 (GPU-gpu-node-2-5): {ge.LACKING_TEXT}"


def level2() -> dict:
    return gpu_report()["categories"][0]


def test_kinds_findings_and_lines_of_each_gpu() -> None:
    category = level2()
    kinds = {(g["node"], g["index"]): ge.kind(g) for g in ge.gpus(category) if ge.kind(g) != ge.PASS}
    assert kinds == {("gpu-node-1", 3): ge.FAIL, ("gpu-node-1", 6): ge.WARN, ("gpu-node-2", 5): ge.LACKING,
                     ("gpu-node-3", 7): ge.MISSING}
    # A lacking GPU whose rows say nothing (every test skipped) still names why it is not a pass.
    assert ge.findings(gpu("n", 0, "warn", lacking=True)) == [{"test": None, "outcome": "warn",
                                                               "detail": ge.LACKING_TEXT}]
    # With skip_is_failure, lacking evidence is a failure: the line says so without the warning prefix.
    assert ge.gpu_lines({"evidence": {"gpus": [gpu("n", 0, "fail", lacking=True)]}}) == {
        "n": [f"GPU 0 (GPU-n-0): {ge.LACKING_TEXT}"]}
    assert ge.gpu_lines(category) == {"gpu-node-1": [GPU_3_LINE, GPU_6_LINE], "gpu-node-2": [LACKING_LINE],
                                      "gpu-node-3": [MISSING_MESSAGE]}  # a missing GPU's message names it
    assert ge.gpu_lines(gpu_report()["categories"][2]) == {}  # no evidence reader: nothing to say


def test_problems_counts_and_state_lines() -> None:
    category = level2()
    assert [(p["node"], p["index"], p["uuid"], p["outcome"], p["test"], p["message"]) for p in ge.problems(category)] == [
        ("gpu-node-1", 3, UUID_3, "fail", "memory", MEMORY_MESSAGE),
        ("gpu-node-1", 6, "GPU-gpu-node-1-6", "warn", "pcie", PCIE_MESSAGE),
        ("gpu-node-2", 5, "GPU-gpu-node-2-5", "warn (lacking evidence)", "", ge.LACKING_TEXT),
        ("gpu-node-3", 7, "", "fail (missing)", "", MISSING_MESSAGE)]
    assert ge.counts_line(category) == "32 GPUs on 4 nodes: 28 pass, 2 warn, 2 fail, 0 skip; 1 lacking evidence, 1 missing"
    assert ge.state_line(category["evidence"]) == "final: 288 rows in 1 shard, 0 truncated"
    # Missing, partial and zero: three different lines.
    assert ge.state_line({"state": "missing"}) == "missing: no evidence was sealed"
    assert ge.state_line(gpu_report()["categories"][1]["evidence"]) == "partial: 96 rows in 2 shards, 1 truncated"
    assert ge.state_line({"state": "final", "rows": 0, "shards": 0, "truncated": 0}) == \
        "final: 0 rows in 0 shards, 0 truncated"


def test_failing_gpus_of_a_report_and_its_worst_state() -> None:
    report = gpu_report()
    assert ge.failing(report) == [("gpu-node-1", 3), ("gpu-node-3", 7)]
    assert ge.report_state(report) == "partial"
    # The same GPU failing in two categories counts once; a failing GPU of another node counts apart.
    report["categories"][1]["evidence"]["gpus"] += [gpu("gpu-node-1", 3, "fail"), gpu("gpu-node-10", 0, "fail")]
    assert ge.failing(report) == [("gpu-node-1", 3), ("gpu-node-3", 7), ("gpu-node-10", 0)]
    report["categories"][0]["evidence"] = {"state": "missing", "rows": 0, "shards": 0, "truncated": 0, "partial": [],
                                           "gpus": []}
    assert ge.report_state(report) == "missing"
    assert ge.report_state({"categories": [gpu_report()["categories"][2]]}) is None  # no reader: unknown, not zero


def test_grid_puts_nodes_with_a_gpu_that_did_not_pass_first_and_folds_the_rest() -> None:
    view = gpu_grid.grid(level2())
    assert view is not None and view["headers"] == ["Node", *(f"GPU {i}" for i in range(8))]
    assert [r["node"] for r in view["attention"]] == ["gpu-node-1", "gpu-node-2", "gpu-node-3"]
    assert [r["node"] for r in view["passing"]] == ["gpu-node-0"]
    cells = {(r["node"], c["index"]): c for r in view["attention"] for c in r["cells"]}
    assert cells["gpu-node-1", 3]["css"] == "gpu gpu-fail" and cells["gpu-node-1", 3]["text"] == "3 memory"
    assert cells["gpu-node-1", 3]["title"] == f"gpu-node-1 GPU 3 ({UUID_3}): fail\nmemory failed: {MEMORY_MESSAGE}"
    assert cells["gpu-node-2", 5]["css"] == "gpu gpu-warn gpu-lacking" and cells["gpu-node-2", 5]["text"] == "5 lacking"
    assert cells["gpu-node-3", 7]["css"] == "gpu gpu-fail gpu-missing" and cells["gpu-node-3", 7]["text"] == "7 missing"
    assert cells["gpu-node-1", 0] == {"css": "gpu gpu-pass", "text": "0", "kind": "pass", "index": 0,
                                      "title": "gpu-node-1 GPU 0 (GPU-gpu-node-1-0): pass"}
    assert gpu_grid.grid(gpu_report()["categories"][2]) is None  # no evidence reader: no grid at all


def test_a_thousand_nodes_open_on_the_few_that_did_not_pass() -> None:
    view = gpu_grid.grid(gpu_report(1000)["categories"][0])
    assert view is not None and [r["node"] for r in view["attention"]] == ["gpu-node-1", "gpu-node-2", "gpu-node-3"]
    assert len(view["passing"]) == 997 and view["passing"][-1]["node"] == "gpu-node-999"
    page = html.report_html(gpu_report(1000))
    folded = page.index("997 nodes whose every GPU passed")
    # Every cell is there: level 2's 8,000 GPUs less its 4 that did not pass, level 3's 8, and the 2 legends' keys.
    assert page.count('class="gpu gpu-pass"') == 7996 + 8 + 2
    assert page.index('title="gpu-node-1 GPU 3') < folded < page.index('<tr data-node="gpu-node-0">')


def test_a_node_without_a_row_for_an_index_shows_a_grey_cell() -> None:
    category = {"evidence": {"state": "final", "rows": 9, "shards": 1, "truncated": 0, "partial": [],
                             "gpus": [gpu("a", 0), gpu("a", 1), gpu("b", 0)]}}
    view = gpu_grid.grid(category)
    assert view is not None and [c["kind"] for c in view["passing"][1]["cells"]] == ["pass", "none"]
    assert view["attention"] == []


def test_html_shows_the_grid_state_partial_reasons_and_legend() -> None:
    page = html.report_html(gpu_report())
    assert "<script" not in page and not re.search(r"(src|href)=\"(https?:)?//", page)
    assert page.count('<section class="gpu-evidence"') == 2  # level 2 and level 3; NCCL has no reader
    assert '<section class="gpu-evidence" data-state="final">' in page and 'data-state="partial"' in page
    assert (f'<td class="gpu gpu-fail" data-index="3" data-kind="fail" title="gpu-node-1 GPU 3 ({UUID_3}): fail\n'
            f'memory failed: {MEMORY_MESSAGE}">3 memory</td>') in page
    assert "<li>partial: " + html.esc(PARTIAL) + "</li>" in page
    assert "partial: 96 rows in 2 shards, 1 truncated" in page
    assert page.count('<details class="gpu-passing"><summary>1 node whose every GPU passed</summary>') == 2
    assert page.count('<p class="gpu-legend">') == 2 and "missing from the tool&#39;s output" in page


def test_html_missing_and_zero_evidence_are_told_apart() -> None:
    report = gpu_report()
    report["categories"][0]["evidence"] = {"state": "missing", "rows": 0, "shards": 0, "truncated": 0, "partial": [],
                                           "gpus": []}
    report["categories"][1]["evidence"] = {"state": "final", "rows": 0, "shards": 1, "truncated": 0, "partial": [],
                                           "gpus": []}
    page = html.report_html(report)
    assert "missing: no evidence was sealed" in page and "final: 0 rows in 1 shard, 0 truncated" in page
    assert page.count("No GPU row in the evidence.") == 1 and 'class="gpu-grid"' not in page


def test_html_escapes_the_grid() -> None:
    evil = '<script>alert("x")</script>&'
    report = gpu_report()
    failing = report["categories"][0]["evidence"]["gpus"][11]
    failing["node"], failing["failures"][0]["detail"] = evil, evil
    page = html.report_html(report)
    assert "<script>" not in page
    assert f'<tr data-node="{html.esc(evil)}"><td class="node">{html.esc(evil)}</td>' in page
    assert f"memory failed: {html.esc(evil)}" in page


def test_markdown_lists_failing_and_warning_gpus_per_category() -> None:
    text = markdown.markdown(gpu_report())
    assert ("GPU evidence: final: 288 rows in 1 shard, 0 truncated; 32 GPUs on 4 nodes: 28 pass, 2 warn, 2 fail, "
            "0 skip; 1 lacking evidence, 1 missing") in text
    assert "| Node | GPU | UUID | Outcome | Test | Message |" in text
    assert f"| gpu-node-1 | 3 | {UUID_3} | fail | memory | {MEMORY_MESSAGE} |" in text
    assert f"| gpu-node-2 | 5 | GPU-gpu-node-2-5 | warn (lacking evidence) | - | {ge.LACKING_TEXT} |" in text
    assert f"| gpu-node-3 | 7 | - | fail (missing) | - | {MISSING_MESSAGE} |" in text
    assert f"Partial: {PARTIAL}" in text
    assert "- Failing GPUs: 2 (gpu-node-1 GPU 3, gpu-node-3 GPU 7), evidence partial" in text
    nccl = text[text.index("## communication/nccl-all-reduce"):text.index("## Summary")]
    assert "GPU evidence" not in nccl  # no reader: no evidence line, not "0 GPUs"


def test_junit_names_the_gpus_in_the_failure_and_warnings_apart() -> None:
    root = ET.fromstring(junit.junit_xml(gpu_report()))
    suite = root.find("testsuite[@name='diagnostics/dcgm-level2']")
    assert suite is not None
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert list(cases) == ["gpu-node-0", "gpu-node-1", "gpu-node-2", "gpu-node-3"]  # one testcase per node
    assert suite.get("failures") == "2"
    failure = cases["gpu-node-1"].find("failure")
    assert failure is not None and failure.get("message") == GPU_3_LINE
    # The message names GPU 3 already; the warning of GPU 6 follows it, once each.
    assert failure.text == f"HardwareFailureDetected: {GPU_3_LINE}\n{GPU_6_LINE}"
    # Lacking evidence is a warning: the node passes, its testcase says why in its output.
    assert cases["gpu-node-2"].find("failure") is None
    out = cases["gpu-node-2"].find("system-out")
    assert out is not None and out.text == LACKING_LINE
    assert cases["gpu-node-0"].find("system-out") is None


def test_fleet_counts_failing_gpus_per_host_and_in_total() -> None:
    reports = {"east": gpu_report(), "west": gpu_report()}
    final = reports["west"]
    final["categories"] = final["categories"][:1]
    final["categories"][0]["evidence"]["gpus"][3]["outcome"] = "fail"  # gpu-node-0 GPU 3 fails too
    rows = [fleet.host_row(h, f"/r/{h}", r, None) for h, r in reports.items()]
    rows.append(fleet.host_row("plain", "/r/plain", {**gpu_report(), "categories": gpu_report()["categories"][2:]}, None))
    assert [(r["failingGpus"], r["gpuEvidence"]) for r in rows] == [(2, "partial"), (3, "final"), (None, None)]
    built = fleet.build_fleet(rows)
    assert built["failingGpus"] == 5
    # east's count rests on partial evidence: the fleet's total says so.
    assert fleet.summary(built)[-1] == "Fleet: FAILED (3 clusters, 5 failing GPUs (evidence partial))"
    assert "failed nodes: gpu-node-1 (HardwareFailureDetected), gpu-node-3 (HardwareFailureDetected), failing GPUs: " \
           "2 (evidence partial), 9m0s)" in fleet.summary_line(rows[0])
    text = fleet_md.fleet_markdown(built, reports)
    assert "Result: FAILED (3 clusters, 5 failing GPUs (evidence partial))" in text
    assert "| 2 (evidence partial) |" in text and "| 3 |" in text
    page = fleet_html.fleet_html(built, reports)
    assert '<span class="failing-gpus">5 failing GPUs</span>' in page
    assert '<td class="failing-gpus">2 (evidence partial)</td>' in page and '<td class="failing-gpus">-</td>' in page
    assert fleet.build_fleet(rows[2:])["failingGpus"] is None  # nothing counted: unknown, never 0


def test_summary_box_counts_the_failing_gpus() -> None:
    assert "Failing GPUs: 2 (evidence partial)" in textbox.summary_lines(gpu_report())
    final = gpu_report()
    final["categories"] = final["categories"][:1]
    assert "Failing GPUs: 2" in textbox.summary_lines(final)
    none = copy.deepcopy(final)
    del none["categories"][0]["evidence"]
    assert not any(line.startswith("Failing GPUs") for line in textbox.summary_lines(none))
