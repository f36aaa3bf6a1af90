"""The table `dcgmi diag` prints without --json, in DCGM 3.x and 4.x, built with dcgmi's own stencil (DIAG_DATA
and the section borders of dcgmi/Diag.cpp) and its 45-character message pieces."""
from __future__ import annotations

from typing import Any

import pytest

from ansible_collections.cre.certification.plugins.module_utils.engine.evidence.dcgm_results import UnreadableOutput
from ansible_collections.cre.certification.plugins.module_utils.engine.evidence.dcgm_verdict import Options
from ansible_collections.cre.certification.plugins.module_utils.engine.evidence.evidence_check import check_evidence

HEADER = ["Successfully ran diagnostic for group.",
          "+---------------------------+------------------------------------------------+",
          "| Diagnostic                | Result                                         |",
          "+===========================+================================================+",
          "|-----  Metadata  ----------+------------------------------------------------|"]
SECTIONS = {"Deployment": "|-----  Deployment  --------+------------------------------------------------|",
            "Hardware": "+-----  Hardware  ----------+------------------------------------------------+",
            "Integration": "+-----  Integration  -------+------------------------------------------------+",
            "Stress": "+-----  Stress  ------------+------------------------------------------------+"}
FOOTER = "+---------------------------+------------------------------------------------+"
MESSAGE = ("Failed to allocate memory on GPU 2: a pending page retirement needs a reset; "
           "run nvidia-smi -r ")  # the trailing space falls on a 45-character cut: it must survive


def row(name: str, text: str) -> str:
    return f"| {name:<25} | {text:<46} |"


def message(name: str, text: str) -> list[str]:
    """DisplayVerboseInfo: 45-character pieces, the name on the first only."""
    return [row(name if i == 0 else "", text[i:i + 45]) for i in range(0, len(text), 45)]


def table(version: str, gpus: int, body: list[str]) -> str:
    meta = [row("DCGM Version", version), row("Driver Version Detected", "550.90.07"),
            row("GPU Device IDs Detected", ",".join(["2330"] * gpus))]
    return "\n".join([*HEADER, *meta, *body, FOOTER]) + "\n"


def _check(text: str, **options: Any) -> dict[str, Any]:
    return check_evidence(text, "dcgm-diag-text", Options(node="n", **options))


def _verdicts(out: dict[str, Any]) -> dict[int, str]:
    return {g["index"]: g["outcome"] for g in out["gpus"]}


def v4_test(name: str, verdict: str, per_gpu: dict[int, str], extra: dict[int, list[str]] | None = None) -> list[str]:
    lines = [row(name, verdict)]
    for gpu, status in per_gpu.items():
        lines += [row("", f"GPU{gpu}: {status}"), *(extra or {}).get(gpu, [])]
    return lines


def test_4x_one_gpu_failing_memory_with_its_warning() -> None:
    body = [SECTIONS["Deployment"], *v4_test("software", "Pass", {0: "Pass", 1: "Pass", 2: "Pass"}),
            SECTIONS["Hardware"],
            *v4_test("memory", "Fail", {0: "Pass", 1: "Pass", 2: "Fail"}, {2: message("Warning: GPU2", MESSAGE)})]
    out = _check(table("4.2.3", 3, body))
    assert out["format_version"] == "DCGM 4.x table" and out["dcgm_version"] == "4.2.3"
    assert _verdicts(out) == {0: "pass", 1: "pass", 2: "fail"} and out["outcome"] == "fail"
    assert out["gpus"][2]["failures"] == [{"test": "memory", "outcome": "fail", "detail": MESSAGE.rstrip()}]


def test_4x_all_skip_and_not_run_lack_evidence() -> None:
    body = [SECTIONS["Deployment"], *v4_test("software", "Pass", {0: "Pass", 1: "Pass"}), SECTIONS["Hardware"],
            *v4_test("memory", "Skip", {0: "Pass", 1: "Skip"}), *v4_test("diagnostic", "Skip", {0: "Pass", 1: "Not Run"})]
    out = _check(table("4.4.2", 2, body))
    assert out["lacking_evidence"] == [1] and _verdicts(out) == {0: "pass", 1: "warn"} and out["outcome"] == "warn"
    assert _verdicts(_check(table("4.4.2", 2, body), skip_is_failure=True))[1] == "fail"


def test_3x_gpu_lists_and_a_warning_naming_its_gpu() -> None:
    body = [SECTIONS["Deployment"], row("Denylist", "Pass"), SECTIONS["Hardware"],
            row("GPU Memory", "Pass - GPUs: 0, 1, 3   "), row("", "Fail - GPU: 2   "), *message("Warning", MESSAGE),
            SECTIONS["Stress"], row("Targeted Stress", "Pass - All"), row("Targeted Power", "Skip - All")]
    out = _check(table("3.3.9", 4, body))
    assert out["format_version"] == "DCGM 3.x table"
    assert _verdicts(out) == {0: "pass", 1: "pass", 2: "fail", 3: "pass"}
    assert out["gpus"][2]["failures"] == [{"test": "GPU Memory", "outcome": "fail", "detail": MESSAGE.rstrip()}]
    assert [(r["index"], r["outcome"]) for r in out["rows"] if r["test"] == "Targeted Power"] == [
        (g, "skip") for g in range(4)]
    assert not [r for r in out["rows"] if r["index"] is None and r["test"] == "GPU Memory"]  # given to GPU 2


def test_3x_deployment_error_naming_no_gpu_stays_the_nodes() -> None:
    body = [SECTIONS["Deployment"], row("Denylist", "Pass"), row("Environment Variables", "Fail"),
            *message("Error", "Found CUDA performance-limiting environment variable 'CUDA_VISIBLE_DEVICES'."),
            SECTIONS["Hardware"], row("GPU Memory", "Pass - All")]
    out = _check(table("3.1.8", 2, body), expected_gpus=2)
    node = [r for r in out["rows"] if r["index"] is None and r["outcome"] == "fail"]
    assert [(r["test"], r["detail"]) for r in node] == [
        ("Environment Variables", "Found CUDA performance-limiting environment variable 'CUDA_VISIBLE_DEVICES'.")]
    assert _verdicts(out) == {0: "pass", 1: "pass"} and out["outcome"] == "fail"


def test_a_gpu_missing_from_the_table() -> None:
    body = [SECTIONS["Hardware"], *v4_test("memory", "Pass", {0: "Pass", 1: "Pass"})]
    out = _check(table("4.4.2", 2, body), expected_gpus=4)
    assert out["missing"] == [2, 3] and _verdicts(out) == {0: "pass", 1: "pass", 2: "fail", 3: "fail"}


def test_a_run_that_did_not_happen() -> None:
    out = _check("Error: Diagnostic could not be run while DCGM is paused.\n")
    assert out["outcome"] == "fail" and out["rows"][0]["metric"] == "runtime_error"


@pytest.mark.parametrize(("text", "message"), [
    (table("4.4.2", 1, [SECTIONS["Hardware"], row("memory", "Passed")]), "line 10: '| memory"),
    (table("4.4.2", 1, [SECTIONS["Hardware"], row("memory", "Pass"), "| GPU0: Pass |"]),
     "line 11: cannot read '| GPU0: Pass |' as a row of the dcgmi diag table"),
    (table("4.4.2", 1, [SECTIONS["Hardware"], row("", "GPU0: Pass")]),
     "line 10: cannot read '|                           | GPU0: Pass"),
    ("nvidia-smi says hello\n" + table("4.4.2", 1, []), "line 1: cannot read 'nvidia-smi says hello'"),
    ('{"DCGM Diagnostic": {}}\n', "line 1: cannot read '{\"DCGM Diagnostic\": {}}'"),
    ("\n\n", "no dcgmi diag table in the output"),
])
def test_a_line_it_cannot_read_is_refused(text: str, message: str) -> None:
    with pytest.raises(UnreadableOutput) as err:
        _check(text)
    assert str(err.value).startswith(message), str(err.value)
