"""The GEMM burn-in verdict on series we construct (issue 41's unit tables): each rule fires on its numbers and
names them, a healthy spread passes, a software power cap alone passes, a warm-up spike is ignored."""
from __future__ import annotations

import pytest

from ansible_collections.cre.certification.plugins.module_utils.engine.evidence.dcgm_results import UnreadableOutput
from ansible_collections.cre.certification.plugins.module_utils.engine.evidence.dcgm_verdict import Options
from ansible_collections.cre.certification.plugins.module_utils.engine.evidence.gemm_verdict import (
    GemmOptions,
    GemmParameters,
    GemmParametersError,
    is_harness,
    judge_text,
    parameters_of,
)
from tests.unit.engine.evidence.gemm_logs import HEALTHY, WINDOWS, log

PARAMS = GemmParameters(product="NVIDIA-H100-80GB-HBM3", floor_tflops=590.0, power_default_w=700.0)


def judge(text: str, params: GemmParameters = PARAMS, **options) -> dict:
    return judge_text(text, GemmOptions(node="gpu-node-1", parameters=params, **options))


def details(verdict: dict, gpu: int) -> list[str]:
    return [f["detail"] for f in verdict["gpus"][gpu]["failures"]]


def scaled(factor: float, start: int = 0, gpu: int = 5) -> dict[int, list[float]]:
    return {gpu: [HEALTHY[gpu] * (factor if w >= start else 1.0) for w in range(WINDOWS)]}


def test_a_healthy_spread_of_3_percent_passes_every_gpu() -> None:
    verdict = judge(log())
    assert verdict["outcome"] == "pass" and verdict["partial"] is None
    assert [g["outcome"] for g in verdict["gpus"]] == ["pass"] * 8
    assert verdict["gpus"][0]["median"] == 600.0 and verdict["gpus"][0]["series"][0] == [0, 600.0]
    assert not any(g["failures"] for g in verdict["gpus"])


def test_one_gpu_6_percent_below_the_node_for_3_windows_fails_naming_the_rule_and_numbers() -> None:
    series = {5: [562.6 if w in (4, 5, 6) else HEALTHY[5] for w in range(WINDOWS)]}   # the node's median: 598.5
    verdict = judge(log(series))
    assert verdict["outcome"] == "fail" and verdict["gpus"][5]["outcome"] == "fail"
    assert details(verdict, 5) == ["node-median: median 562.6 TFLOPS is 6.0% below the node median 598.5 in "
                                   "windows 4-6 (fail above 5%)"]
    assert [g["outcome"] for i, g in enumerate(verdict["gpus"]) if i != 5] == ["pass"] * 7


def test_6_percent_below_for_only_2_windows_passes() -> None:
    series = {0: [562.6 if w in (4, 5) else 600.0 for w in range(WINDOWS)]}
    assert judge(log(series))["gpus"][0]["outcome"] == "pass"


def test_4_percent_below_for_3_windows_warns() -> None:
    series = {0: [574.6 if w in (7, 8, 9) else 600.0 for w in range(WINDOWS)]}
    verdict = judge(log(series))
    assert verdict["outcome"] == "warn" and verdict["gpus"][0]["outcome"] == "warn"
    assert details(verdict, 0) == ["node-median: median 574.6 TFLOPS is 4.0% below the node median 598.5 in "
                                   "windows 7-9 (warn from 3%, fail above 5%)"]


def test_a_gpu_slow_the_whole_run_fails_the_node_median_and_the_floor() -> None:
    verdict = judge(log(scaled(0.9)))
    rules = [f["rule"] for f in verdict["gpus"][5]["findings"]]
    assert rules == ["floor", "node-median"]
    assert details(verdict, 5)[0] == ("floor: median 548.1 TFLOPS is 7.1% below the floor 590 for "
                                      "NVIDIA-H100-80GB-HBM3 bf16 (fail below)")


def test_degradation_from_window_5_fails_on_last_against_first_steady_window() -> None:
    falling = [600.0] * 5 + [600.0 * (1 - 0.015 * (w - 4)) for w in range(5, WINDOWS)]
    verdict = judge(log({0: falling}))
    found = {f["rule"]: f for f in verdict["gpus"][0]["findings"]}
    assert found["degradation"]["outcome"] == "fail"
    assert found["degradation"]["message"] == ("the last window (11) 537.0 TFLOPS is 10.5% below the first steady "
                                               "window (2) 600.0 (fail above 5%)")


def test_a_drift_of_4_percent_is_no_degradation() -> None:
    drift = [610.0 - 2.4 * w for w in range(WINDOWS)]   # 605.2 at window 2, 583.6 at 11: 3.6%
    assert judge(log({0: drift}))["gpus"][0]["outcome"] == "pass"


@pytest.mark.parametrize("reason", ["hw_slowdown", "hw_thermal", "hw_power_brake"])
def test_a_hardware_throttle_reason_fails_even_at_full_speed(reason: str) -> None:
    fields = {(w, 2): {"throttle": f"sw_power_cap,{reason}"} for w in range(8, WINDOWS)}
    verdict = judge(log(fields=fields))
    assert verdict["gpus"][2]["outcome"] == "fail"
    assert details(verdict, 2) == [f"throttle: {reason} in window(s) 8-11 (a hardware slowdown, power brake or "
                                   "thermal throttle fails; sw_power_cap alone does not)"]


def test_a_software_power_cap_alone_passes() -> None:
    fields = {(w, g): {"throttle": "sw_power_cap"} for w in range(WINDOWS) for g in range(8)}
    verdict = judge(log(fields=fields))
    assert verdict["outcome"] == "pass"


def test_a_throttle_during_warm_up_is_still_a_fault() -> None:
    verdict = judge(log(fields={(0, 3): {"throttle": "hw_thermal"}}))
    assert details(verdict, 3) == ["throttle: hw_thermal in window(s) 0 (a hardware slowdown, power brake or "
                                   "thermal throttle fails; sw_power_cap alone does not)"]


def test_a_lowered_power_limit_fails_with_1_w_of_tolerance() -> None:
    low = {(w, 4): {"power_limit_w": "560.0"} for w in range(WINDOWS)}
    rounding = {(w, 1): {"power_limit_w": "699.5"} for w in range(WINDOWS)}
    verdict = judge(log(fields={**low, **rounding}))
    assert verdict["gpus"][1]["outcome"] == "pass"
    assert details(verdict, 4) == ["power-limit: the enforced power limit 560 W is below the default 700 W of "
                                   "NVIDIA-H100-80GB-HBM3 in window(s) 0-11 (fail more than 1 W below)"]


def test_an_unknown_default_power_limit_is_not_judged() -> None:
    low = {(w, 4): {"power_limit_w": "560.0"} for w in range(WINDOWS)}
    params = GemmParameters(product="NVIDIA-H100-80GB-HBM3", floor_tflops=590.0)
    assert judge(log(fields=low), params)["gpus"][4]["outcome"] == "pass"


def test_a_wrong_result_fails_at_any_speed() -> None:
    verdict = judge(log(fields={(6, 7): {"check": "wrong"}}))
    assert details(verdict, 7) == ["wrong-result: the result differed from the reference in window(s) 6 (fail on any)"]


def test_an_xid_fails_naming_it() -> None:
    verdict = judge(log(fields={(3, 1): {"xid": "79"}, (4, 1): {"xid": "48,79"}}))
    assert details(verdict, 1) == ["xid: XID 48 in window(s) 4; XID 79 in window(s) 3-4 (fail on any)"]


def test_a_warm_up_spike_is_ignored() -> None:
    spike = {0: [300.0, 450.0] + [600.0] * (WINDOWS - 2), 1: [900.0, 800.0] + [606.0] * (WINDOWS - 2)}
    verdict = judge(log(spike))
    assert verdict["outcome"] == "pass" and verdict["gpus"][0]["median"] == 600.0
    assert verdict["gpus"][0]["series"][:2] == [[0, 300.0], [1, 450.0]]   # shown, not judged


def test_a_provisional_floor_warns_and_never_fails() -> None:
    params = GemmParameters(product="NVIDIA-H100-PCIe", floor_tflops=650.0, floor_provisional=True)
    verdict = judge(log(), params)
    assert verdict["outcome"] == "warn"
    assert details(verdict, 0) == ["floor: median 600.0 TFLOPS is 7.7% below the provisional floor 650 for "
                                   "NVIDIA-H100-PCIe bf16 (a provisional floor warns, never fails)"]


def test_no_floor_judges_no_floor() -> None:
    assert judge(log(scaled(0.5, gpu=0) | scaled(0.5, gpu=1) | {g: [300.0] * WINDOWS for g in range(2, 8)}),
                 GemmParameters())["outcome"] == "pass"


def test_a_partial_read_is_never_a_pass_of_the_missing_windows() -> None:
    verdict = judge(log(end=False))
    assert verdict["partial"] == "no end record: the log ends before the run did"
    assert verdict["outcome"] == "warn" and judge(log(end=False), skip_is_failure=True)["outcome"] == "fail"


def test_a_gpu_with_only_warm_up_windows_lacks_evidence() -> None:
    verdict = judge(log(windows=2))
    assert verdict["lacking_evidence"] == list(range(8)) and verdict["outcome"] == "warn"
    assert details(verdict, 0) == ["no steady window: every window read starts before the 60 s warm-up ends"]


def test_a_log_cut_before_any_window_lacks_evidence_everywhere_and_is_partial() -> None:
    verdict = judge(log(windows=0, end=False), expected_gpus=8)
    assert verdict["lacking_evidence"] == list(range(8)) and verdict["missing"] == []
    assert verdict["partial"] == "no end record: the log ends before the run did"


def test_a_gpu_absent_from_the_log_is_missing() -> None:
    verdict = judge(log(gpus=7), expected_gpus=8)
    assert verdict["missing"] == [7] and verdict["outcome"] == "fail"
    assert details(verdict, 7) == ["GPU 7 is missing from the gemm-burn-in/1 output: 8 GPUs expected"]


def test_the_rows_carry_each_finding_and_each_gpus_figure() -> None:
    rows = judge(log(fields={(6, 7): {"check": "wrong"}}))["rows"]
    gpu7 = [(r["metric"], r["outcome"]) for r in rows if r["index"] == 7 and r["metric"] != "tflops"]
    assert gpu7 == [("median", "pass"), ("wrong-result", "fail")]
    assert sum(r["metric"] == "tflops" for r in rows) == 8 * WINDOWS


def test_the_options_come_from_a_readers_options_and_the_jobs_parameters() -> None:
    assert GemmOptions.of(Options("n", 8, True), PARAMS) == GemmOptions("n", 8, True, PARAMS)


def test_a_log_without_a_harness_record_is_unreadable() -> None:
    with pytest.raises(UnreadableOutput, match="no gemm-burn-in/1 record in the log"):
        judge("CUDA Version 12.8\nTraceback (most recent call last):\n")


WORDS = ["python3", "/opt/cre/gemm_burn_in.py", "--duration-s", "600", "--warmup-s", "60", "--window-s", "30",
         "--dtype", "fp8", "--size", "8192", "--product", "NVIDIA-H100-80GB-HBM3", "--floor-tflops", "1040",
         "--power-default-w", "700"]


def test_the_parameters_are_read_from_the_trainer_words() -> None:
    assert is_harness(WORDS) and is_harness(["/bin/sh", "-c", "exec python3 /opt/cre/gemm_burn_in.py --size 8"])
    assert not is_harness(["python3", "train.py"])
    assert parameters_of(WORDS) == GemmParameters(600.0, 60.0, 30.0, "fp8", 8192, "NVIDIA-H100-80GB-HBM3", 1040.0,
                                                  False, 700.0)
    zero = parameters_of(["/bin/sh", "-c", "python3 gemm_burn_in.py --floor-tflops 0 --floor-provisional "
                                           "--power-default-w 0"])
    assert (zero.floor_tflops, zero.floor_provisional, zero.power_default_w) == (None, True, None)


@pytest.mark.parametrize("words", [["--floor-tflops"], ["--floor-tflops", "many"], ["--size", "-1"],
                                   ["--warmup-s", "--dtype"]])
def test_a_flag_without_a_readable_value_is_refused(words: list[str]) -> None:
    with pytest.raises(GemmParametersError, match=f"the harness flag {words[0]} needs"):
        parameters_of(["gemm_burn_in.py", *words])
