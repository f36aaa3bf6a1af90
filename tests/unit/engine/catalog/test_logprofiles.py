"""The built-in LogProfiles (logprofiles/, measurements.md §1.6): valid objects whose patterns read §7's example logs."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from ansible_collections.cre.certification.plugins.module_utils.engine import models
from ansible_collections.cre.certification.plugins.module_utils.engine.catalog import logprofiles
from ansible_collections.cre.certification.plugins.module_utils.engine.logs.goodput_log import GoodputParser
from ansible_collections.cre.certification.plugins.module_utils.engine.logs.nccl_log import NcclParser, aggregate, peak

LOGS = Path(__file__).parents[1] / "data" / "logs"
NAMES = ["megatron-bridge", "megatron-training", "nccl-bandwidth", "nccl-loopback", "nemo-1-training", "nemo-4-training"]
NCCL = ["nccl-bandwidth", "nccl-loopback"]
MEGATRON = ["megatron-bridge", "megatron-training"]
EXAMPLES = [(p["metadata"]["name"], name, pattern) for p in logprofiles.builtin_profiles()
            for name, pattern in p["spec"]["patterns"].items()]


def test_the_builtins_by_name():
    profiles = logprofiles.builtin_profiles()
    assert [p["metadata"]["name"] for p in profiles] == NAMES
    assert all((p["apiVersion"], p["kind"]) == ("nvcre.nvidia.com/v1alpha1", "LogProfile") for p in profiles)
    assert logprofiles.builtin_profile("nemo-2-training") is None


@pytest.mark.parametrize("name", NAMES)
def test_builtin_is_a_valid_log_profile(name):
    profile = logprofiles.builtin_profile(name)
    assert models.dump(models.parse(models.LogProfile, profile))["spec"]["patterns"] == profile["spec"]["patterns"]


def test_callers_get_copies():
    logprofiles.builtin_profile("nccl-bandwidth")["spec"]["patterns"].clear()
    logprofiles.builtin_profiles()[0]["spec"].clear()
    assert logprofiles.builtin_profile("nccl-bandwidth")["spec"]["patterns"]
    assert logprofiles.builtin_profiles()[0]["spec"]


@pytest.mark.parametrize(("profile", "name", "pattern"), EXAMPLES, ids=[f"{e[0]}-{e[1]}" for e in EXAMPLES])
def test_every_example_matches_its_regex(profile, name, pattern):
    assert pattern["example"], "every built-in pattern carries an example"
    assert re.compile(pattern["regex"], re.ASCII).search(pattern["example"])


@pytest.mark.parametrize(("name", "replicated_job"), [("nccl-bandwidth", "launcher"), ("nccl-loopback", "node")])
def test_nccl_profile_reads_the_all_reduce_table(name, replicated_job):
    profile = logprofiles.builtin_profile(name)
    assert profile["spec"]["workerStrategy"] == {"type": "Single", "replicatedJobName": replicated_job}
    assert profile["spec"]["timestamp"]["layout"] == "2006-01-02T15:04:05.999999999Z"
    parsed = NcclParser.from_profile(profile).parse((LOGS / "nccl-all-reduce.log").read_text())
    assert [row.size for row in parsed.rows] == [8, 1048576, 134217728, 8589934592]
    assert peak(aggregate([], parsed.rows)) == (847.12, 451.8)
    assert parsed.transports == ["IB"]


@pytest.mark.parametrize("name", MEGATRON)
def test_megatron_profiles_compile_for_goodput(name):
    profile = logprofiles.builtin_profile(name)
    assert profile["spec"]["workerStrategy"]["type"] == "Multi"
    assert set(GoodputParser.from_profile(profile).patterns) == {
        "trainingStep", "checkpointSave", "checkpointDone", "checkpointRestore", "applicationStart"}


def test_megatron_training_reads_the_example_log():
    window = GoodputParser.from_profile(logprofiles.builtin_profile("megatron-training")).parse(
        (LOGS / "megatron-training.log").read_text())
    # iteration 1 is dropped by logInterval 10; step 10 is warmup (warmupSteps 10)
    assert [(s.global_step, s.warmup) for s in window.steps] == [(10, True), (20, False)]
    assert window.steps[1].step_timing == pytest.approx(4.2112)
    assert window.steps[1].tflops == 612.4
    assert [(c.step, round(c.save_duration, 6)) for c in window.checkpoints] == [(100, 3.626535)]
    assert window.restore is not None and window.restore.path == "/mnt/workspace/checkpoints"
    assert window.application_start_time is not None


def test_megatron_bridge_reads_every_step_with_or_without_tflops():
    profile = logprofiles.builtin_profile("megatron-bridge")
    assert (profile["spec"]["warmupSteps"], profile["spec"]["logInterval"]) == (5, 1)
    text = (LOGS / "megatron-training.log").read_text().replace(" | throughput per GPU (TFLOP/s/GPU): 581.7", "")
    window = GoodputParser.from_profile(profile).parse(text)
    assert [(s.global_step, s.warmup, s.tflops) for s in window.steps] == [(1, True, 88.1), (10, False, 0.0),
                                                                           (20, False, 612.4)]
    assert [(c.step, round(c.save_duration, 6)) for c in window.checkpoints] == [(100, 3.626535)]
