"""Every real `dcgmi diag` output in data/dcgm_diag/ read as its `.expect.json` says a careful reader reads it:
format, DCGM and driver versions, the GPUs, each test's outcome (per GPU where DCGM reports per GPU), each
failure's GPU, test and message, and the node's outcome."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ansible_collections.cre.certification.plugins.module_utils.engine.evidence.dcgm_verdict import Options
from ansible_collections.cre.certification.plugins.module_utils.engine.evidence.evidence_check import check_evidence
from ansible_collections.cre.certification.plugins.module_utils.engine.evidence.rows import worst

DATA = Path(__file__).resolve().parents[1] / "data" / "dcgm_diag"
SAMPLES = sorted(p for p in DATA.iterdir() if p.suffix in (".txt", ".json") and not p.name.endswith(".expect.json"))
CUT = " (cut off here by dcgmi)"


def _read(sample: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    expect = json.loads(Path(f"{sample}.expect.json").read_text())
    return expect, check_evidence(sample.read_text(), expect["format"], Options(node="node-1"))


def test_every_sample_has_its_expectation() -> None:
    assert len(SAMPLES) == 4
    assert all(Path(f"{s}.expect.json").is_file() for s in SAMPLES)


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.name)
def test_versions_gpus_and_outcome(sample: Path) -> None:
    expect, out = _read(sample)
    assert out["dcgm_version"] == expect["dcgm_version"]
    assert out["driver_version"] == expect.get("driver_version")
    assert [g["index"] for g in out["gpus"]] == expect["gpus"]
    assert out["outcome"] == expect["outcome"]
    assert all(row["node"] == "node-1" for row in out["rows"])


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.name)
def test_each_test_read_with_its_outcome(sample: Path) -> None:
    expect, out = _read(sample)
    assert sorted({r["test"] for r in out["rows"]}) == sorted(t["test"] for t in expect["tests"])
    for test in expect["tests"]:
        rows = [r for r in out["rows"] if r["test"] == test["test"]]
        if test["per_gpu"]:
            assert {str(r["index"]): r["outcome"] for r in rows} == test["gpus"], test["test"]
        outcomes = [r["outcome"] for r in rows]
        if "outcome" in test:  # the test's own verdict: the worst of its rows, a skip only when all skipped
            assert worst([o for o in outcomes if o != "skip"] or outcomes) == test["outcome"], test["test"]
        if "info" in test:  # the expectation paraphrases DCGM's info; its figures must be in the row's detail
            figures = [w for w in test["info"].replace("/", " ").replace(";", " ").split() if w[0].isdigit()]
            assert all(f.rstrip(",") in rows[0]["detail"] for f in figures), (test["test"], rows[0]["detail"])


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.name)
def test_each_failure_names_its_gpu_test_and_message(sample: Path) -> None:
    expect, out = _read(sample)
    failed = [(g["index"], f["test"], f["detail"]) for g in out["gpus"] for f in g["failures"] if f["outcome"] == "fail"]
    assert [(gpu, test) for gpu, test, _detail in failed] == [(f["gpu"], f["test"]) for f in expect["failures"]]
    for (_gpu, _test, detail), want in zip(failed, expect["failures"]):
        message = want["message"].removesuffix(CUT)
        # DCGM's whole message, or (where dcgmi cut it) all it printed
        assert detail.startswith(message) or (want["message"].endswith(CUT) and message.startswith(detail)), detail


def test_a_cut_message_is_kept_as_printed_and_unnamed_gpus_are_not_passed() -> None:
    out = _read(DATA / "h200x8-azure-dcgm3.1.8-r1-persistence-mode-fail.txt")[1]
    by_index = {g["index"]: g for g in out["gpus"]}
    assert by_index[5]["failures"][0]["detail"].endswith("requires peristence mod")
    # the wrapped cell is joined exactly: the space dcgmi printed at a cut (`-pm 1 " as root`) survives
    assert '"nvidia-smi -i <gpuId> -pm 1 " as root.' in by_index[1]["failures"][0]["detail"]
    assert by_index[6]["outcome"] == by_index[7]["outcome"] == "warn" and out["lacking_evidence"] == [6, 7]


def test_all_skip_is_lacking_evidence_and_a_failure_with_the_option() -> None:
    sample = DATA / "gb10-dcgm4.4.2-r3-all-skip.txt"
    out = check_evidence(sample.read_text(), "dcgm-diag-text", Options())
    assert out["lacking_evidence"] == [0] and out["outcome"] == "warn" and out["format_version"] == "DCGM 4.x table"
    strict = check_evidence(sample.read_text(), "dcgm-diag-text", Options(skip_is_failure=True))
    assert strict["lacking_evidence"] == [0] and strict["outcome"] == "fail" and strict["gpus"][0]["outcome"] == "fail"
