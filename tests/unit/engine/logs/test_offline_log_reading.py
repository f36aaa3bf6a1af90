"""A saved log read offline with a LogProfile (logs/log_check.py, the log_check module's engine)."""
from __future__ import annotations

from pathlib import Path

import pytest

from ansible_collections.cre.certification.plugins.module_utils.engine.api.errors import InputError
from ansible_collections.cre.certification.plugins.module_utils.engine.catalog.logprofiles import (
    builtin_profile,
    builtin_profiles,
)
from ansible_collections.cre.certification.plugins.module_utils.engine.logs.log_check import check_log
from ansible_collections.cre.certification.plugins.module_utils.engine.logs.log_lines import LogProfileError

REAL = Path(__file__).parents[1] / "data" / "real_logs"
TRAINING = [p for p in builtin_profiles() if "trainingStep" in p["spec"]["patterns"]]


def test_an_older_table_read_with_its_peak_and_verdict():
    text = (REAL / "nccl" / "003-dgx2-old-allreduce-noroot.log").read_text()
    out = check_log(text, builtin_profile("nccl-bandwidth"), "all_reduce", {"busBandwidthGBps": "value >= 120.0"})
    assert (out["kind"], len(out["rows"]), out["peak"], out["measured_test"]) == (
        "bandwidth", 31, {"busBW": 123.56, "algBW": 67.4}, "all_reduce")
    assert out["tables"] == [{"test": "all_reduce", "ranks": 12, "rows": 31, "refused": 0,
                              "avg_bus_bandwidth": 42.5578}]
    assert out["verdict"] == {"passed": True, "reason": "ThresholdsMet", "message": "All performance thresholds satisfied"}


def test_nvcres_regex_on_it_refuses_the_rows_and_fails_the_threshold():
    profile = builtin_profile("nccl-bandwidth")
    profile["spec"]["patterns"]["bandwidthResult"]["regex"] = (
        r"^\s*(?P<size>\d+)\s+\d+\s+\w+\s+\w+\s+-?\d+\s+[\d.]+\s+(?P<algBW>[\d.]+)\s+(?P<busBW>[\d.]+)")
    out = check_log((REAL / "nccl" / "003-dgx2-old-allreduce-noroot.log").read_text(), profile, "all_reduce",
                    {"busBandwidthGBps": "value >= 120.0"})
    assert out["rows"] == [] and out["peak"] is None and len(out["refused"]) == 4
    assert out["refused"][0]["why"] == "busBW '2' is not a whole column"
    assert out["verdict"] == {"passed": False, "reason": "MeasurementUnavailable",
                              "message": "busBandwidthGBps have no figure in this log"}


def test_a_nemo_2_log_read_with_steps_and_which_profile_matched():
    text = (REAL / "training" / "008-nemo2-training-epoch-iteration.log").read_text()
    out = check_log(text, builtin_profile("nemo-4-training"), thresholds={"avgStepTimeSec": "value < 100.0",
                                                                          "goodputRatio": "value > 0.9"},
                    training_profiles=TRAINING)
    assert out["kind"] == "goodput" and out["steps"] and out["avg_step_time_sec"] > 0
    assert out["profiles_matched"]["nemo-4-training"] == len(out["steps"])
    assert out["profiles_matched"]["megatron-training"] == 0
    assert out["verdict"] == {"passed": False, "reason": "MeasurementUnavailable",
                              "message": "goodputRatio need a whole run"}


def test_a_violated_threshold_is_named_as_the_job_names_it():
    text = (REAL / "nccl" / "015-k8s-pods-roce-nccl-debug-info.log").read_text()
    out = check_log(text, builtin_profile("nccl-bandwidth"), "all_reduce", {"busBandwidthGBps": "value >= 100.0"})
    assert out["transports"] == ["IBext_v8"]
    assert out["verdict"] == {"passed": False, "reason": "ThresholdViolated", "message":
                              'Threshold "busBandwidthGBps" violated: measured 2.8400, expression: value >= 100.0'}


def test_bad_inputs_are_refused():
    with pytest.raises(InputError, match=r'thresholds\["speed"\]'):
        check_log("", builtin_profile("nccl-bandwidth"), thresholds={"speed": "value > 1"})
    with pytest.raises(LogProfileError, match="neither a bandwidthResult nor a trainingStep"):
        check_log("", {"metadata": {"name": "x"}, "spec": {"patterns": {}}})


def test_a_gb200_log_says_mnnvl_was_off_and_whose_fabric_was_not_ready():
    logs = Path(__file__).parents[1] / "data" / "nccl_logs"
    off = check_log((logs / "t28-v2.19.1-gb200-fabric-not-ready-mnnvl-off.log").read_text(),
                    builtin_profile("nccl-bandwidth"), "all_reduce")
    assert (off["transports"], off["mnnvl"], off["fabric_not_ready"]) == (
        ["IB"], False, ["gb200-r03-t02 (fabric state 1: not started)"])
    on = check_log((logs / "t21-v2.19.1-gb200-mnnvl-nvls.log").read_text(), builtin_profile("nccl-bandwidth"),
                   "all_reduce")
    assert (on["mnnvl"], on["fabric_not_ready"]) == (True, [])


def test_an_old_all_gather_table_is_read_with_the_factor_its_build_used():
    """c. 2019 all_gather_perf printed busbw = algbw: checked against today's 11/12 alone, every row from 8160 B
    up was refused and the peak read 0.06 GB/s."""
    text = (REAL / "nccl" / "016-dgx2-old-allgather-busbw-equals-algbw.log").read_text()
    out = check_log(text, builtin_profile("nccl-bandwidth"), "all_gather", {"busBandwidthGBps": "value >= 70.0"})
    assert (len(out["rows"]), out["peak"], out["refused"], out["withheld"]) == (
        31, {"busBW": 73.75, "algBW": 73.75}, [], "")
    assert out["tables"] == [{"test": "all_gather", "ranks": 12, "rows": 31, "refused": 0,
                              "avg_bus_bandwidth": 30.2993}]
    assert out["verdict"]["passed"] is True


def test_rows_refused_above_the_rows_kept_leave_no_figure_and_are_listed():
    """The same table with its three largest rows edited to today's factor (11/12): most rows still agree on 1,
    the edited ones are refused, and as they are the largest the rows kept give no figure."""
    lines = (REAL / "nccl" / "016-dgx2-old-allgather-busbw-equals-algbw.log").read_text().splitlines()
    edited = {"72.41": "66.38", "73.04": "66.95", "73.75": "67.60"}
    for index, line in enumerate(lines):
        words = line.split()
        if len(words) == 11 and words[4] in edited:
            lines[index] = line.replace(f"{words[4]}   {words[5]}", f"{words[4]}   {edited[words[4]]}", 1)
    out = check_log("\n".join(lines) + "\n", builtin_profile("nccl-bandwidth"), "all_gather",
                    {"busBandwidthGBps": "value >= 70.0"})
    assert (out["rows"], out["peak"], out["results"]) == ([], None, [])
    assert [r["line"].split()[0] for r in out["refused"]] == ["2147483616", "4294967280", "8589934560"]
    assert out["refused"][0]["why"] == ("busbw 66.38 is not algbw 72.41 x 1 (all_gather on 12 ranks, as nccl-tests "
                                        "before mid-2020 printed it)")
    assert out["withheld"] == ("a table refused rows of sizes above the largest it kept (1073741808 B), so its peak "
                               "is not known")
    assert out["tables"][0]["rows"] == 28 and out["tables"][0]["refused"] == 3
    assert out["verdict"] == {"passed": False, "reason": "MeasurementUnavailable",
                              "message": "busBandwidthGBps have no figure in this log"}
