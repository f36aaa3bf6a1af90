"""`dcgmi diag --json` in DCGM's 3.x and 4.x layouts, table by table: the rows and the verdicts."""
from __future__ import annotations

import json
from typing import Any

import pytest

from ansible_collections.cre.certification.plugins.module_utils.engine.evidence.dcgm_results import UnreadableOutput
from ansible_collections.cre.certification.plugins.module_utils.engine.evidence.dcgm_verdict import Options
from ansible_collections.cre.certification.plugins.module_utils.engine.evidence.evidence_check import check_evidence
from tests.unit.engine.evidence.dcgm_docs import MEMORY_MESSAGE, V3_TESTS, V4_TESTS, all_tests, v3, v4

EIGHT = range(8)


def _check(doc: Any, **options: Any) -> dict[str, Any]:
    return check_evidence(json.dumps(doc, indent=4), "dcgm-diag-json", Options(node="gpu-node-7", **options))


def _verdicts(out: dict[str, Any]) -> dict[int, str]:
    return {g["index"]: g["outcome"] for g in out["gpus"]}


LAYOUTS = {
    "4.x": lambda results: v4(results, list(EIGHT)),
    "3.3": lambda results: v3(results, "gpu_id", device_ids=8),
    "3.2": lambda results: v3(results, "gpu_ids"),
}
TESTS = {"4.x": V4_TESTS, "3.3": V3_TESTS, "3.2": V3_TESTS}
MEMORY = {"4.x": "memory", "3.3": "GPU Memory", "3.2": "GPU Memory"}


@pytest.mark.parametrize("layout", LAYOUTS)
def test_all_pass(layout: str) -> None:
    out = _check(LAYOUTS[layout](all_tests(TESTS[layout], "Pass", EIGHT)))
    assert out["outcome"] == "pass" and _verdicts(out) == dict.fromkeys(EIGHT, "pass")
    assert out["lacking_evidence"] == [] and out["missing"] == []
    assert len([r for r in out["rows"] if r["index"] is not None]) == 8 * len(TESTS[layout])
    assert out["format_version"] == ("DCGM 4.x JSON" if layout == "4.x" else "DCGM 3.x JSON")


@pytest.mark.parametrize("layout", LAYOUTS)
def test_one_gpu_failing_memory_names_gpu_test_message_and_code(layout: str) -> None:
    failing = {(MEMORY[layout], 3): ("Fail", [(MEMORY_MESSAGE, 12)])}
    out = _check(LAYOUTS[layout](all_tests(TESTS[layout], "Pass", EIGHT, failing)))
    assert out["outcome"] == "fail"
    assert _verdicts(out) == {**dict.fromkeys(EIGHT, "pass"), 3: "fail"}
    row = next(r for r in out["rows"] if r["outcome"] == "fail")
    assert (row["node"], row["component"], row["index"], row["test"], row["value"]) == (
        "gpu-node-7", "gpu", 3, MEMORY[layout], "Fail")
    # 3.2 printed the message alone; from 3.3 it carries DCGM's error code
    assert row["detail"] == (MEMORY_MESSAGE if layout == "3.2" else f"{MEMORY_MESSAGE} (DCGM error 12)")
    assert out["gpus"][3]["failures"] == [{"test": MEMORY[layout], "outcome": "fail", "detail": row["detail"]}]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_several_gpus_failing_several_tests(layout: str) -> None:
    stress = "targeted_stress" if layout == "4.x" else "Targeted Stress"
    failing = {(MEMORY[layout], 1): ("Fail", [("GPU 1 memory", 12)]), (stress, 1): ("Fail", [("GPU 1 stress", 30)]),
               (stress, 6): ("Warn", [("GPU 6 clocks throttled", 64)])}
    out = _check(LAYOUTS[layout](all_tests(TESTS[layout], "Pass", EIGHT, failing)))
    assert _verdicts(out) == {**dict.fromkeys(EIGHT, "pass"), 1: "fail", 6: "warn"}
    assert [f["test"] for f in out["gpus"][1]["failures"]] == sorted([MEMORY[layout], stress])
    assert out["outcome"] == "fail"


@pytest.mark.parametrize("layout", LAYOUTS)
def test_every_test_of_a_gpu_skipped_is_lacking_evidence(layout: str) -> None:
    skipped = {(t, 5): ("Skip", []) for t in TESTS[layout]}
    doc = LAYOUTS[layout](all_tests(TESTS[layout], "Pass", EIGHT, skipped))
    out = _check(doc)
    assert out["lacking_evidence"] == [5] and _verdicts(out)[5] == "warn" and out["outcome"] == "warn"
    assert [r["outcome"] for r in out["rows"] if r["index"] == 5 and r["test"] != "software"] == \
        ["skip"] * len([t for t in TESTS[layout] if t != "software"])
    strict = _check(doc, skip_is_failure=True)
    assert _verdicts(strict)[5] == "fail" and strict["outcome"] == "fail" and _verdicts(strict)[4] == "pass"


def test_one_skipped_test_beside_passes_is_a_pass() -> None:
    out = _check(v4(all_tests(V4_TESTS, "Pass", range(2), {("pcie", 0): ("Skip", [])}), [0, 1]))
    assert _verdicts(out) == {0: "pass", 1: "pass"} and out["lacking_evidence"] == []


@pytest.mark.parametrize("name", ["DCGM Diagnostic", "DCGM GPU Diagnostic"])
def test_a_runtime_error_is_no_evidence(name: str) -> None:
    message = "Error: Diagnostic could not be run while DCGM is paused."
    out = _check({name: {"version": "4.2.3", "runtime_error": message}}, expected_gpus=8)
    assert out["outcome"] == "fail" and out["runtime_error"] == message
    assert [(r["index"], r["test"], r["metric"], r["outcome"]) for r in out["rows"]] == [
        (None, None, "runtime_error", "fail")]
    assert out["rows"][0]["detail"] == f"dcgmi diag did not run: {message}"


def test_a_gpu_missing_from_4x_output_is_a_failing_row() -> None:
    out = _check(v4(all_tests(V4_TESTS, "Pass", [0, 1, 2, 4, 5, 6, 7]), [0, 1, 2, 4, 5, 6, 7]), expected_gpus=8)
    assert out["missing"] == [3] and _verdicts(out)[3] == "fail" and out["outcome"] == "fail"
    row = next(r for r in out["rows"] if r["index"] == 3)
    assert (row["test"], row["metric"], row["value"], row["outcome"]) == (None, "presence", None, "fail")
    assert row["detail"] == ("GPU 3 is missing from the dcgmi diag output: 8 GPUs expected, 7 reported "
                             "(0, 1, 2, 4, 5, 6, 7)")
    assert _check(v4(all_tests(V4_TESTS, "Pass", range(7)), list(range(7))))["missing"] == []  # count unknown


def test_a_gpu_listed_in_entity_groups_without_results_lacks_evidence() -> None:
    out = _check(v4(all_tests(V4_TESTS, "Pass", range(3)), [0, 1, 2, 3]), expected_gpus=4)
    assert out["missing"] == [] and out["lacking_evidence"] == [3] and _verdicts(out)[3] == "warn"


def test_4x_versions_and_a_test_level_error() -> None:
    doc = v4(all_tests(V4_TESTS, "Pass", range(2)), [0, 1])
    memory = doc["DCGM Diagnostic"]["test_categories"][1]["tests"][0]
    memory["test_summary"] = {"status": "Fail", "warnings": [
        {"error_category": 1, "error_id": 95, "error_severity": 3, "warning": "The plugin timed out"}]}
    out = _check(doc)
    assert (out["dcgm_version"], out["driver_version"]) == ("4.2.3", "570.124.06")
    node_row = next(r for r in out["rows"] if r["index"] is None)
    assert (node_row["test"], node_row["outcome"], node_row["detail"]) == (
        "memory", "fail", "The plugin timed out (DCGM error 95)")
    assert out["outcome"] == "fail" and _verdicts(out) == {0: "pass", 1: "pass"}


def test_3_3_deployment_check_with_its_gpu_and_warnings_key() -> None:
    doc = v3(all_tests(V3_TESTS, "Pass", range(2)), device_ids=2)
    doc["DCGM GPU Diagnostic"]["test_categories"][0]["tests"].append({"name": "Persistence Mode", "results": [
        {"gpu_id": 1, "status": "Fail", "warnings": [{"warnings": "Persistence mode for GPU 1 is disabled.",
                                                      "error_id": 40, "error_category": 6, "error_severity": 2}]}]})
    out = _check(doc)
    assert out["gpus"][1]["failures"] == [{"test": "Persistence Mode", "outcome": "fail",
                                           "detail": "Persistence mode for GPU 1 is disabled. (DCGM error 40)"}]
    assert out["dcgm_version"] == "3.3.9"


def test_iterations_are_samples() -> None:
    one = v4(all_tests(V4_TESTS, "Pass", range(1)), [0])
    two = v4(all_tests(V4_TESTS, "Pass", range(1), {("memory", 0): ("Fail", [("bad", 12)])}), [0])
    out = _check({"iterations": [one, two], "Overall Result": "Fail"})
    memory = [(r["sample"], r["outcome"]) for r in out["rows"] if r["test"] == "memory"]
    assert memory == [(0, "pass"), (1, "fail")] and out["outcome"] == "fail"


@pytest.mark.parametrize(("text", "message"), [
    ('{\n  "DCGM Diagnostic": {\n    "test_categories": [\n  oops\n', "line 4: cannot read 'oops' as JSON"),
    ('{"DCGM Diag": {}}', "the output: neither 'DCGM Diagnostic' (DCGM 4.x) nor 'DCGM GPU Diagnostic' (DCGM 3.x)"),
    ('{"DCGM Diagnostic": {"test_categories": [{"category": "Hardware", "tests": [{"name": "memory", "results": '
     '[{"entity_group": "GPU", "entity_group_id": 1, "entity_id": 0, "status": "Passed"}]}]}]}}',
     "DCGM Diagnostic.test_categories[0].tests[0].results[0].status: 'Passed' is not a DCGM result"),
    ('{"DCGM GPU Diagnostic": {"test_categories": [{"category": "Hardware", "tests": [{"name": "Diagnostic", '
     '"results": [{"gpu_ids": "zero", "status": "Pass"}]}]}]}}',
     "DCGM GPU Diagnostic.test_categories[0].tests[0].results[0].gpu_ids: 'zero' is not a GPU index"),
    ('{"DCGM Diagnostic": {"test_categories": [{"category": "Hardware", "tests": [{"results": []}]}]}}',
     "DCGM Diagnostic.test_categories[0].tests[0].name: missing"),
])
def test_what_dcgmi_does_not_write_is_refused_with_where(text: str, message: str) -> None:
    with pytest.raises(UnreadableOutput) as err:
        check_evidence(text, "dcgm-diag-json", Options())
    assert str(err.value).startswith(message), str(err.value)


def test_a_level_1_run_tests_no_gpu_and_its_gpus_pass_on_the_deployment_checks() -> None:
    """Level 1 runs DCGM's deployment checks only: nothing is missing from it, so its GPUs do not lack evidence,
    unless the caller knows the level tests GPUs."""
    deployment_only = v4(all_tests({"software": "Deployment"}, "Pass", EIGHT), list(EIGHT))
    out = _check(deployment_only)
    assert out["outcome"] == "pass" and _verdicts(out) == dict.fromkeys(EIGHT, "pass") and out["lacking_evidence"] == []
    told = _check(deployment_only, gpu_tests=True, skip_is_failure=True)
    assert told["lacking_evidence"] == list(EIGHT) and told["outcome"] == "fail"
