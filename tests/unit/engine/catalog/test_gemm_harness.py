"""The burn-in harness's pure parts (catalog/_lib/harness/gemm_burn_in.py), without a GPU or torch: its arguments
are the contract's, its lines read back through the strict reader with nothing refused, its throttle names are
the format's, its windows and tallies add up, and without torch it says so in one line and exits 2."""
from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path

import pytest

from ansible_collections.cre.certification.plugins.module_utils.engine.evidence import gemm_burn_in as reader

HARNESS = Path(__file__).resolve().parents[4] / "catalog" / "_lib" / "harness" / "gemm_burn_in.py"
_SPEC = importlib.util.spec_from_file_location("gemm_burn_in_harness", HARNESS)
harness = importlib.util.module_from_spec(_SPEC)  # type: ignore[arg-type]
sys.modules["gemm_burn_in_harness"] = harness
_SPEC.loader.exec_module(harness)  # type: ignore[union-attr]

CONTRACT = ["--duration-s", "600", "--warmup-s", "60", "--window-s", "30", "--dtype", "fp8", "--size", "8192",
            "--product", "NVIDIA-H100-80GB-HBM3", "--floor-tflops", "1040", "--floor-provisional",
            "--power-default-w", "700"]


def test_the_contract_s_invocation_parses() -> None:
    args = harness.parse_args(CONTRACT)
    assert (args.duration_s, args.warmup_s, args.window_s, args.dtype, args.size) == (600, 60, 30, "fp8", 8192)
    assert (args.product, args.floor_tflops, args.floor_provisional, args.power_default_w) == (
        "NVIDIA-H100-80GB-HBM3", 1040, True, 700)
    assert harness.parse_args([]).floor_provisional is False and harness.parse_args([]).dtype == "bf16"


@pytest.mark.parametrize("argv", [["--dtype", "fp16"], ["--window-s", "0"], ["--duration-s", "-5"],
                                  ["--floor-tflops", "nan"], ["--size", "8"], ["--power-default-w", "-1"]])
def test_bad_arguments_exit_2_in_one_line(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        harness.parse_args(argv)
    assert exc.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].startswith("gemm_burn_in.py: error: argument")


def test_every_nvml_bit_has_the_format_s_name() -> None:
    assert {name for _bit, name in harness.THROTTLE_BITS} == set(reader.THROTTLE)
    assert harness.throttle_names(0) == "none"
    assert harness.throttle_names(0x4) == "sw_power_cap"
    assert harness.throttle_names(0x8 | 0x40 | 0x80) == "hw_slowdown,hw_thermal,hw_power_brake"
    assert harness.throttle_names(0x1000) == "none"   # a bit the format has no name for is not printed


def test_its_lines_read_back_strictly_one_row_per_gpu_per_window() -> None:
    args = harness.parse_args(["--duration-s", "60", "--warmup-s", "30", "--window-s", "30", "--size", "8192"])
    schedule = harness.Schedule.of(1_772_445_900.0, args)
    lines = [harness.parameters_line(args), harness.begin_line(2, args)]
    for window in range(schedule.windows):
        for gpu in range(2):
            reading = harness.Reading(gpu, f"GPU-8f3c1a2b-5d6e-4f70-8a9b-0c1d2e3f4a5{gpu}", 612.4 - gpu, 1980,
                                      698.25, 700.0, 67, 0x4 if gpu else 0, [79, 48, 79] if window == 2 else [],
                                      window != 1)
            lines.append(harness.window_line(window, schedule.begins(window), reading))
    lines.append(harness.end_line(schedule.windows))
    rows, partial = reader.read_lines(lines, "node-1")
    assert partial is None and len(rows) == 2 * 3
    first = next(r for r in rows if r.index == 1 and r.sample == 0)
    assert (first.value, first.time, first.outcome) == (611.4, "2026-03-02T10:05:00Z", "pass")
    assert first.detail == "sm_mhz=1980 power_w=698.2 power_limit_w=700.0 temp_c=67 throttle=sw_power_cap " \
                           "xid=none check=ok"
    assert [r.outcome for r in rows if r.index == 0] == ["pass", "fail", "fail"]   # wrong, then XIDs
    assert "xid=48,79" in next(r for r in rows if r.sample == 2).detail
    assert lines[1] == "gemm-burn-in/1 begin gpus=2 dtype=bf16 m=8192 n=8192 k=8192 window_s=30 warmup_s=30"


def test_the_first_line_names_the_verdict_s_parameters() -> None:
    assert harness.parameters_line(harness.parse_args(CONTRACT)) == (
        "gemm-burn-in: NVIDIA-H100-80GB-HBM3, fp8 8192^3, floor 1040 TFLOPS (provisional), default power limit 700 W")
    assert harness.parameters_line(harness.parse_args([])) == (
        "gemm-burn-in: unknown, bf16 8192^3, no floor, no default power")


@pytest.mark.parametrize(("value", "text"), [(30.0, "30"), (0.5, "0.5"), (12.25, "12.25"), (1e6, "1000000")])
def test_numbers_are_printed_as_the_format_reads_them(value: float, text: str) -> None:
    assert harness.number(value) == text


def test_the_windows_cover_warm_up_and_duration() -> None:
    schedule = harness.Schedule.of(100.0, harness.parse_args([]))
    assert schedule.windows == 22 and schedule.ends == 100.0 + 660
    assert [schedule.window_at(t) for t in (50.0, 100.0, 129.99, 130.0, 759.9, 900.0)] == [0, 0, 0, 1, 21, 21]
    assert harness.Schedule.of(0.0, harness.parse_args(["--duration-s", "50", "--warmup-s", "0"])).windows == 2


def test_a_batch_counts_in_the_window_it_completed_in() -> None:
    tally = harness.Tally(harness.Schedule(0.0, 30.0, 3))
    for when in (1.0, 29.0, 31.0):
        tally.add(when, 9e15)
    assert tally.tflops(0) == pytest.approx(600.0) and tally.tflops(1) == pytest.approx(300.0)
    assert tally.tflops(2) == 0.0   # missing and zero are told apart by the reader, not here: a window with no work


def test_a_window_s_nvml_samples_or_the_reasons_and_average_the_power() -> None:
    sampler = harness.Sampler()
    sampler.sample(0x4, 690.0, 1980, 66)
    sampler.sample(0x40, 700.0, 1755, 71)
    assert (harness.throttle_names(sampler.throttle), sampler.power_w, sampler.sm_mhz, sampler.temp_c) == (
        "sw_power_cap,hw_thermal", 695.0, 1755, 71)
    assert harness.Sampler().power_w == 0.0


def test_without_torch_it_says_so_in_one_line_and_exits_2(capsys: pytest.CaptureFixture[str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)   # an image without PyTorch
    assert harness.main(["--duration-s", "60"]) == 2
    out = capsys.readouterr()
    assert out.out == "" and out.err.count("\n") == 1
    assert out.err.startswith("gemm-burn-in: cannot run: PyTorch is not in this image")


def test_without_pynvml_it_says_so_and_installs_nothing(capsys: pytest.CaptureFixture[str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch", types.ModuleType("torch"))
    monkeypatch.setitem(sys.modules, "pynvml", None)
    assert harness.main([]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gemm-burn-in: cannot read NVML: the Python module pynvml (nvidia-ml-py) is not in this "
                          "image") and err.count("\n") == 1
