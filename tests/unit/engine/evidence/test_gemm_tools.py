"""The readers of users' GEMM tools on the variants their sources print (gpu-burn, gpu-fryer, mamf-finder, the
CUTLASS profiler): strict about their own lines, partial when the log is cut, unreadable when none is theirs."""
from __future__ import annotations

import pytest

from ansible_collections.cre.certification.plugins.module_utils.engine.evidence.dcgm_results import UnreadableOutput
from ansible_collections.cre.certification.plugins.module_utils.engine.evidence.dcgm_verdict import Options
from ansible_collections.cre.certification.plugins.module_utils.engine.evidence.evidence_check import (
    check_gemm_evidence,
)

OPTIONS = Options(node="gpu-node-1")

# gpu-burn 3 GPUs with -tc and power, as gpu_burn-drv.cpp prints them; progress joined by \r as on a terminal.
GPU_BURN = (
    "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-00000000-1111-2222-3333-444444444444)\n"
    "GPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-10000000-1111-2222-3333-444444444444)\n"
    "GPU 2: NVIDIA H100 80GB HBM3 (UUID: GPU-20000000-1111-2222-3333-444444444444)\n"
    "Initialized device 0 with 81090 MB of memory (80500 MB available, using 72450 MB of it), "
    "using FLOATS, using Tensor Cores\n"
    "Results are 268435456 bytes each, thus performing 281 iterations\n"
    "\r10.0%  proc'd: 562 (48000 Gflop/s) - 562 (47900 Gflop/s) - 281 (47000 Gflop/s)   errors: 0 - 0 - 0   "
    "temps: 60 C - 61 C - --   power: 690 W - 695 W - 700 W "
    "\r20.0%  proc'd: 1124 (48100 Gflop/s) - 1124 (47950 Gflop/s) - -1 (47000 Gflop/s)   errors: 0 - 7  (WARNING!)- "
    "-1  (DIED!)  temps: 62 C - 63 C - 64 C   power: 691 W - 696 W - -- \n"
    "\tSummary at:   Mon Apr 14 04:37:04 PM CST 2025\n\n"
    "Killing processes with SIGTERM (soft kill)\ndone\n\nTested 3 GPUs:\n\tGPU 0: OK\n\tGPU 1: FAULTY\n"
    "\tGPU 2: FAULTY\n")


def test_gpu_burn_reads_several_gpus_warnings_a_dead_process_and_power() -> None:
    out = check_gemm_evidence(GPU_BURN, "gpu-burn", OPTIONS)
    assert out["partial"] is None and [g["outcome"] for g in out["gpus"]] == ["pass", "fail", "fail"]
    rows = {(r["index"], r["metric"], r["sample"]): r for r in out["rows"]}
    assert rows[(0, "tflops", 1)]["value"] == 48.1 and rows[(0, "tflops", 1)]["outcome"] == "pass"
    assert rows[(1, "tflops", 1)]["detail"] == ("processed 1124; errors 7 (WARNING!); temperature 63 C; power 696 W; "
                                                "20.0% of the run")
    assert (rows[(2, "tflops", 1)]["value"], rows[(2, "tflops", 1)]["outcome"]) == (None, "fail")   # DIED!
    assert "DIED!" in rows[(2, "tflops", 1)]["detail"]
    assert rows[(0, "result", 0)]["detail"] == "gpu-burn's verdict (FLOATS with Tensor Cores): OK"
    assert out["gpus"][2]["uuid"] == "GPU-20000000-1111-2222-3333-444444444444"


def test_gpu_burn_on_one_gpu_with_dash_i_names_that_device() -> None:
    text = ("Initialized device 5 with 81090 MB of memory (80500 MB available, using 72450 MB of it), using DOUBLES\n"
            "50.0%  proc'd: 10 (20000 Gflop/s)   errors: 0   temps: 55 C \nTested 1 GPUs:\n\tGPU 0: OK\n")
    out = check_gemm_evidence(text, "gpu-burn", OPTIONS)
    assert [(g["index"], g["outcome"]) for g in out["gpus"]] == [(5, "pass")]


def test_gpu_burn_without_progress_lines_still_gives_its_verdict() -> None:
    out = check_gemm_evidence("Burning for 10 seconds.\n\nTested 2 GPUs:\n\tGPU 0: OK\n\tGPU 1: OK\n", "gpu-burn",
                              Options(node="n", expected_gpus=2))
    assert out["outcome"] == "pass" and [r["metric"] for r in out["rows"]] == ["result", "result"]


def test_a_gpu_burn_log_cut_before_its_verdict_is_partial_and_lacks_evidence() -> None:
    cut = GPU_BURN.split("Killing", maxsplit=1)[0]
    out = check_gemm_evidence(cut, "gpu-burn", OPTIONS)
    assert out["partial"] == "no `Tested N GPUs:` verdict: the log ends before gpu-burn did"
    assert out["lacking_evidence"] == [0] and out["outcome"] == "fail"   # GPU 1 warned, GPU 2 died: already failing


def test_a_gpu_burn_progress_line_it_cannot_read_is_refused() -> None:
    text = GPU_BURN.replace("temps: 60 C - 61 C - --", "temps: 60 C - hot - --")
    out = check_gemm_evidence(text, "gpu-burn", OPTIONS)
    assert out["partial"].startswith("1 line(s) refused (first: line 7: its temps section is not a list of the "
                                     "GPUs' figures: ")
    assert out["outcome"] == "fail"


GPU_FRYER = """Detected GPU #0: "NVIDIA H100 80GB HBM3" (8f3c1a2b-5d6e-4f70-8a9b-0c1d2e3f4a5b)
Detected GPU #1: "NVIDIA H100 80GB HBM3" (9f3c1a2b-5d6e-4f70-8a9b-0c1d2e3f4a5b)
Using precision(s):  BF16 \nCreating random matrices
Matrices created
GPU #0: Using 24000 MB out of 80000 MB
GPU #1: Using 24000 MB out of 80000 MB
1000 (730000 Gflops/s) - 1000 (650000 Gflops/s) | Temperatures: 60°C - 80°C | Throttling: None - Thermal HW
GPU #0: 730123 Gflops/s (min: 720000.00, max: 735000.00, dev: 730123.00)
         Temperature: 60.00°C (min: 45.00, max: 61.00)
         Throttling HW: false, Thermal SW: false, Thermal HW: false
GPU #1: 650000 Gflops/s (min: 640000.00, max: 660000.00, dev: 650000.00)
         Temperature: 78.00°C (min: 46.00, max: 80.00)
         Throttling HW: false, Thermal SW: {sw}, Thermal HW: {hw}
{verdict}
Freeing GPUs...
"""
UNHEALTHY = ("Some GPUs are not healthy. Reasons:\n"
             "  - GPU 1 - GPU is not performing as expected. Check the flops values and temperatures")


def test_gpu_fryer_gives_each_gpus_mean_and_fails_a_hardware_throttle_and_its_own_reasons() -> None:
    out = check_gemm_evidence(GPU_FRYER.format(sw="false", hw="true", verdict=UNHEALTHY), "gpu-fryer", OPTIONS)
    assert out["partial"] is None and [(g["uuid"], g["outcome"]) for g in out["gpus"]] == [
        ("GPU-8f3c1a2b-5d6e-4f70-8a9b-0c1d2e3f4a5b", "pass"), ("GPU-9f3c1a2b-5d6e-4f70-8a9b-0c1d2e3f4a5b", "fail")]
    assert [f["detail"] for f in out["gpus"][1]["failures"]] == [
        "gpu-fryer: GPU is not performing as expected. Check the flops values and temperatures",
        "mean 650.000 TFLOPS (min 640.000, max 660.000); Temperature: 78.00°C (min: 46.00, max: 80.00); "
        "Throttling HW: false, Thermal SW: false, Thermal HW: true"]
    assert out["rows"][0]["value"] == 730.123


def test_gpu_fryer_software_thermal_throttle_warns() -> None:
    out = check_gemm_evidence(GPU_FRYER.format(sw="true", hw="false", verdict="All GPUs seem healthy"), "gpu-fryer",
                              OPTIONS)
    assert [g["outcome"] for g in out["gpus"]] == ["pass", "warn"]


def test_a_gpu_fryer_log_cut_before_its_summary_is_partial() -> None:
    cut = GPU_FRYER.split("GPU #0: 730123", maxsplit=1)[0]
    out = check_gemm_evidence(cut, "gpu-fryer", OPTIONS)
    assert out["partial"] == "no summary: the log ends before gpu-fryer did" and out["outcome"] == "warn"


def test_a_gpu_fryer_summary_line_it_cannot_read_is_refused() -> None:
    text = GPU_FRYER.format(sw="false", hw="false", verdict="All GPUs seem healthy").replace(
        "GPU #1: 650000 Gflops/s (min:", "GPU #1: fast (min:")
    out = check_gemm_evidence(text, "gpu-fryer", OPTIONS)
    # its Temperature and Throttling lines belong to no summary read: refused too
    assert out["partial"].startswith("3 line(s) refused (first: line 12: not a gpu-fryer GPU line")


@pytest.mark.parametrize(("text", "rows"), [
    ("\x1b[KThe best outcome was 271.2TFLOPS @ 1024x10240x5120 (MxNxK) (tried 40 shapes)\nElapsed time: 0:10:01\n",
     [("MAMF", 271.2)]),
    ("     3 |  700.1(mean)  701.0(median)  720.3(max) @ 4096x4096x4096      | best: ...\r\n"
     "Tried  3 shapes => the best outcomes were:\nmax:    794.5 TFLOPS @ 2048x2048x13312 (MxNxK)\n"
     "median: 780.0 TFLOPS @ 2048x2048x13312 (MxNxK)\nmean:   778.1 TFLOPS @ 2048x2048x13312 (MxNxK)\n\n"
     "Across 3 shapes in range: x in this run:\narithmetic mean: 600.0 TFLOPS\ngeometric mean:  590.0 TFLOPS\n",
     [("MAMF max", 794.5), ("MAMF mean", 778.1), ("MAMF median", 780.0)]),
])
def test_mamf_finders_earlier_summaries(text: str, rows: list[tuple[str, float]]) -> None:
    out = check_gemm_evidence(text, "mamf-finder", OPTIONS)
    assert out["partial"] is None and [(r["test"], r["value"]) for r in out["rows"]] == rows


def test_a_mamf_summary_line_it_cannot_read_is_refused() -> None:
    out = check_gemm_evidence("MAMF (max achievable,  boost burst): 842 TFLOPS @ 3072x2816x20480 (MxNxK)\n"
                              "MSMF (max sustainable, saturated):   lots\n", "mamf-finder", OPTIONS)
    assert out["partial"].startswith("1 line(s) refused (first: line 2: not `MAMF|MSMF (max ...)")
    assert [r["test"] for r in out["rows"]] == ["MAMF"] and out["outcome"] == "warn"


CSV3 = ("Problem,Provider,OperationKind,Operation,Disposition,Status,gemm_kind,m,n,k,A,B,C,D,alpha,beta,"
        "Bytes,Flops,Flops/Byte,Runtime,GB/s,GFLOPs\n"
        "1,CUTLASS,gemm,k_a,passed,success,universal,8192,8192,8192,bf16:row,bf16:column,bf16:column,bf16:column,"
        "1,0,402653184,1099511627776,2730,1.7,221.1,646780\n"
        "1,CUTLASS,gemm,k_b,not_verified,success,universal,8192,8192,8192,bf16:row,bf16:column,bf16:column,"
        "bf16:column,1,0,402653184,1099511627776,2730,1.7,221.1,640000\n"
        "1,CUTLASS,gemm,k_c,not_supported,error_not_supported,universal,8192,8192,8192,bf16:row,bf16:column,"
        "bf16:column,bf16:column,1,0,0,0,0,0,0,0\n"
        "1,CUTLASS,gemm,k_d,failed,error_internal,universal,8192\n")


def test_cutlass_csv_of_another_version_is_read_by_column_name() -> None:
    out = check_gemm_evidence(CSV3, "cutlass-profiler", OPTIONS)
    assert [(r["test"], r["value"], r["outcome"]) for r in out["rows"]] == [
        ("k_a", 646.78, "pass"), ("k_b", 640.0, "warn"), ("k_c", 0.0, "skip")]
    assert out["partial"] == ("1 line(s) refused (first: line 5: 8 columns where the header has 22: "
                              "'1,CUTLASS,gemm,k_d,failed,error_internal,universal,8192')")
    assert out["outcome"] == "warn"


def test_a_cutlass_kernel_that_did_not_succeed_fails_whatever_its_disposition() -> None:
    text = CSV3.splitlines()[0] + "\n" + CSV3.splitlines()[1].replace(",success,", ",error_internal,") + "\n"
    assert check_gemm_evidence(text, "cutlass-profiler", OPTIONS)["rows"][0]["outcome"] == "fail"


def test_a_cutlass_text_block_line_it_cannot_read_is_refused() -> None:
    text = "  Problem ID: 1\n        Operation: k\n      Disposition: Passed\n           Status: Success\n" \
           "             Math: 882103 GFLOP/s\n   garbage without a colon\n"
    out = check_gemm_evidence(text, "cutlass-profiler", OPTIONS)
    assert out["rows"][0]["value"] == 882.103
    assert out["partial"] == ("1 line(s) refused (first: line 6: not a `key: value` line of a Problem block: "
                              "'garbage without a colon')")


@pytest.mark.parametrize(("fmt", "error"), [
    ("gpu-burn", "no gpu-burn progress line (proc'd: ...) and no `Tested N GPUs:` verdict: not gpu-burn output"),
    ("gpu-fryer", "no gpu-fryer progress or summary line (GPU #i: <G> Gflops/s): not gpu-fryer output"),
    ("mamf-finder", "no mamf-finder summary (MAMF/MSMF, `Tried N shapes`, or `The best outcome was`): "
                    "not mamf-finder output"),
    ("cutlass-profiler", "no CSV header naming Operation, Disposition, Status and GFLOPs, and no `Problem ID:` "
                         "block: not cutlass_profiler output"),
    ("gemm-burn-in", "no gemm-burn-in/1 record in the log: the harness did not run, or printed nothing"),
])
def test_an_output_of_another_tool_is_unreadable(fmt: str, error: str) -> None:
    with pytest.raises(UnreadableOutput) as err:
        check_gemm_evidence("nvidia-smi: command not found\n", fmt, OPTIONS)
    assert str(err.value) == error
