"""Every real GEMM tool output in data/gemm_tools/ read as its `.expect.json` says a careful reader reads it: per
GPU (or kernel) the figure in TFLOPS, the tool's own verdict, and the outcome."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ansible_collections.cre.certification.plugins.module_utils.engine.evidence.dcgm_verdict import Options
from ansible_collections.cre.certification.plugins.module_utils.engine.evidence.evidence_check import (
    check_gemm_evidence,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "gemm_tools"
SAMPLES = sorted(p for p in DATA.glob("*/*") if p.suffix in (".txt", ".csv"))


def _read(sample: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    expect = json.loads(Path(f"{sample}.expect.json").read_text())
    return expect, check_gemm_evidence(sample.read_text(), expect["format"], Options(node="node-1"))


def test_every_sample_has_its_expectation() -> None:
    assert len(SAMPLES) == 4 and all(Path(f"{s}.expect.json").is_file() for s in SAMPLES)


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.name)
def test_the_outcome_and_a_whole_read(sample: Path) -> None:
    expect, out = _read(sample)
    assert out["outcome"] in (expect["outcome"], *expect.get("outcome_also_acceptable", []))
    assert out["partial"] is None and out["missing"] == [] and out["lacking_evidence"] == []
    assert all(r["node"] == "node-1" and r["unit"] in ("TFLOPS", None) for r in out["rows"])


def test_gpu_burn_gives_its_verdict_without_a_figure_and_its_progress_in_tflops() -> None:
    sample = DATA / "gpu-burn" / "tesla-t4-500s-faulty-warning-errors.txt"
    expect, out = _read(sample)
    (gpu,) = expect["gpus"]
    assert [(g["index"], g["uuid"], g["outcome"]) for g in out["gpus"]] == [(0, gpu["uuid"], "fail")]
    verdict = [r for r in out["rows"] if r["metric"] == "result"]
    assert [(r["value"], r["unit"], r["outcome"]) for r in verdict] == [(gpu["result"], None, "fail")]
    progress = [r for r in out["rows"] if r["metric"] == "tflops"]
    assert [round(r["value"] * 1000) for r in progress] == gpu["progress_gflops"]
    assert [f"errors {e} (WARNING!)" in r["detail"] for r, e in zip(progress, gpu["progress_errors"])] == [True] * 10
    assert [f"temperature {t} C" in r["detail"] for r, t in zip(progress, gpu["progress_temps_c"])] == [True] * 10


def test_mamf_finder_gives_mamf_and_msmf_of_gpu_0() -> None:
    expect, out = _read(DATA / "mamf-finder" / "h200-bf16-grid-v2-mamf-msmf-format.txt")
    results = expect["gpus"][0]["results"]
    assert [(r["index"], r["test"], r["value"]) for r in out["rows"]] == [(0, x["test"], x["tflops"]) for x in results]
    for row, result in zip(out["rows"], results):
        assert f"@ {result['shape']} (MxNxK); {result['watts']} W, {result['mhz']} MHz" in row["detail"]
    assert "MSMF reads high" in out["rows"][1]["detail"]


@pytest.mark.parametrize("name", ["a100-h16816-fp16-16384-disposition-incorrect-csv-superbench.csv",
                                  "h100-azure-sm90-cutlass3x-f16-4096-text.txt"])
def test_cutlass_profiler_kernels_with_their_disposition(name: str) -> None:
    expect, out = _read(DATA / "cutlass-profiler" / name)
    got = [(r["test"], r["value"], r["outcome"], r["index"]) for r in out["rows"]]
    assert got == [(k["operation"], k["tflops"], k["outcome"], None) for k in expect["kernels"]]
    for row, kernel in zip(out["rows"], expect["kernels"]):
        assert f"m={kernel['m']} n={kernel['n']} k={kernel['k']} A={kernel['A']}" in row["detail"]
        assert f"Disposition {kernel['disposition']}" in row["detail"]
