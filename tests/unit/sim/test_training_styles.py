"""The simulated training's lines in each log style, and the pace and faults kept in every style (no cluster: the
trainer's passes on pods and nodes as its caches hold them, at fixed times)."""
from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from ansible_collections.cre.certification.plugins.module_utils.engine.catalog.logprofiles import builtin_profile
from tests.unit.sim.recording_api import Listed, RecordingApi
from tools.sim.logs import training_logs
from tools.sim.logs.log_style import CHOICES, Source
from tools.sim.logs.training_styles import FORMATS, Step
from tools.sim.state import ClusterState

Obj = dict[str, Any]
START = datetime(2026, 3, 2, 10, 0, 0, tzinfo=UTC)
WHEN = datetime(2026, 3, 2, 10, 0, 5, 500000, tzinfo=UTC)
LR_2026, LR_2023 = "learning rate: 3.000000E-04", "learning rate: 3.000E-04"


def step(style: str, at: int) -> str:
    return FORMATS[style].step(Step(at, 5000, WHEN, training_logs.LOG_INTERVAL, training_logs.STEP_MS))


def test_megatron_is_today_s_line() -> None:
    assert step("megatron", 10) == (
        "[2026-03-02 10:00:05.500000] iteration       10/    5000 | consumed samples:         5120 | elapsed time per "
        "iteration (ms): 50.0 | throughput per GPU (TFLOP/s/GPU): 600.0 | lm loss: 9.799000E+00 |")


def test_megatron_no_timestamp_is_late_2023_megatron() -> None:
    assert step("megatron-no-timestamp", 10) == (
        " iteration       10/    5000 | consumed samples:         5120 | elapsed time per iteration (ms): 50.0 | "
        f"throughput per GPU (TFLOP/s/GPU): 600.0 | {LR_2023} | global batch size:   512 | lm loss: 9.799000E+00 | "
        "loss scale: 1.0 | grad norm: 2.475 | number of skipped iterations:   0 | number of nan iterations:   0 |")
    saved = FORMATS["megatron-no-timestamp"].save(250, WHEN, WHEN + timedelta(seconds=0.2))
    assert saved == [("saving checkpoint at iteration     250 to /mnt/workspace/checkpoints in torch format", WHEN),
                     ("  successfully saved checkpoint at iteration     250 to /mnt/workspace/checkpoints",
                      WHEN + timedelta(seconds=0.2))]


def test_megatron_skipped_leaves_lm_loss_out_while_no_step_advanced() -> None:
    head = " [2026-03-02 10:00:05.500000] iteration {:8d}/    5000 | consumed samples: {:12d} | elapsed time per " \
           f"iteration (ms): 50.0 | throughput per GPU (TFLOP/s/GPU): 600.0 | {LR_2026} | global batch size:   512 |"
    assert step("megatron-skipped", 10) == head.format(10, 5120) + (
        " loss scale: 8388608.0 | number of skipped iterations:  10 | number of nan iterations:   0 |")
    assert step("megatron-skipped", 20) == head.format(20, 10240) + (
        " loss scale: 8192.0 | number of skipped iterations:  10 | number of nan iterations:   0 |")
    assert step("megatron-skipped", 30) == head.format(30, 15360) + (
        " lm loss: 9.797000E+00 | loss scale: 8192.0 | grad norm: 2.427 | number of skipped iterations:   0 |"
        " number of nan iterations:   0 |")
    assert step("megatron-skipped", 60) == head.format(60, 30720) + (
        " lm loss: 9.794000E+00 | loss scale: 4096.0 | grad norm: 2.358 | number of skipped iterations:   1 |"
        " number of nan iterations:   0 |")


def test_the_loss_scale_halves_on_each_overflow_down_to_one() -> None:
    assert " loss scale: 1.0 |" in step("megatron-skipped", 2000)
    assert " number of skipped iterations:   1 |" in step("megatron-skipped", 2060)


def test_megatron_no_tflops_has_no_throughput() -> None:
    assert step("megatron-no-tflops", 10) == (
        " [2026-03-02 10:00:05.500000] iteration       10/    5000 | consumed samples:         5120 | elapsed time per "
        f"iteration (ms): 50.0 | {LR_2026} | global batch size:   512 | lm loss: 9.799000E+00 | loss scale: 1.0 | "
        "grad norm: 2.475 | number of skipped iterations:   0 | number of nan iterations:   0 |")


def test_nemo2_prints_0_based_iterations_and_interval_averages() -> None:
    assert step("nemo2", 10) == (
        "Training epoch 0, iteration 9/4999 | lr: 0.0003 | consumed_samples: 2816 | global_batch_size: 512 | "
        "global_step: 9 | reduced_train_loss: 9.799 | train_step_timing in s: 0.05")
    path = "/mnt/workspace/checkpoints/nemotron--reduced_train_loss=9.78-epoch=0-consumed_samples=128000.0"
    saved = [line for line, _at in FORMATS["nemo2"].save(250, WHEN, WHEN + timedelta(seconds=0.2))]
    assert saved == [
        "[NeMo I 2026-03-02 10:00:05 nemo_logging:393] Global Checkpoint Save : Rank: 0 : Iteration: 250 : Start "
        f"time: {WHEN.timestamp() - 0.309:.3f}s : Save duration: 0.309s",
        f"[NeMo I 2026-03-02 10:00:05 model_checkpoint:632] Scheduled async checkpoint save for {path}",
        f"[NeMo I 2026-03-02 10:00:05 model_checkpoint:657] Async checkpoint save for step 250 ({path}) finalized "
        "successfully."]
    # The built-in profile reads the save's step and its duration from it.
    found = re.search(builtin_profile("nemo-4-training")["spec"]["patterns"]["checkpointSave"]["regex"], saved[0])
    assert found and (found["step"], found["saveDuration"]) == ("250", "0.309")
    assert FORMATS["nemo2"].resume(250) == [f"Restoring states from the checkpoint path at {path}",
                                            f"Restored all states from the checkpoint at {path}"]


def workload(jobset: str) -> list[Obj]:
    """A two-node training workload of Job `job-a` (a checkpoint every 20 steps), running."""
    return [{"metadata": {"name": f"{jobset}-node-0-{i}", "namespace": "team-a", "uid": f"{jobset}-{i}",
                          "labels": {training_logs.INDEX: str(i), training_logs.JOB_LABEL: "job-a",
                                     training_logs.JOBSET_UID: jobset}},
             "spec": {"nodeName": f"n{i}", "containers": [{"name": "node", "command": ["bash", "train.sh"],
                                                           "env": [{"name": "SAVE_INTERVAL", "value": "20"}]}]},
             "status": {"phase": "Running"}} for i in range(2)]


def node(name: str, **annotations: str) -> Obj:
    return {"metadata": {"name": name, "annotations": annotations}}


def train(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, style: str, pods: list[Obj], nodes: list[Obj],
          seconds: float) -> tuple[dict[str, list[str]], RecordingApi]:
    """The trainer's passes every 0.7 s for `seconds`, `style` set for the pods' namespace; each pod's lines."""
    monkeypatch.setenv("CRE_SIM_HOME", str(tmp_path))
    state = ClusterState(name="c", profile="aws-h100", nodes=2, kubeconfig="",
                         namespace_log_style={"team-a": {"training": style}})
    state.path("c").parent.mkdir(parents=True, exist_ok=True)
    state.save()
    trainer = training_logs.Trainer(tmp_path / "logs", Source(state.path("c")))
    clock = START

    class Clock(datetime):
        @classmethod
        def now(cls, tz: Any = None) -> Any:
            return clock

    monkeypatch.setattr(training_logs, "datetime", Clock)
    api = RecordingApi()
    for tick in range(int(seconds / 0.7) + 1):
        clock = START + timedelta(seconds=tick * 0.7)
        trainer.tick(api, api, Listed(pods), Listed(nodes))  # type: ignore[arg-type]
    logs = {p["metadata"]["name"]: (tmp_path / "logs" / f"team-a_{p['metadata']['name']}.log").read_text()
            for p in pods}
    return {name: [line.split(" stdout F ", 1)[1] for line in text.splitlines()] for name, text in logs.items()}, api


STEP_TIME = {"megatron": "elapsed time per iteration (ms): 50.0 |", "megatron-no-timestamp": "(ms): 50.0 |",
             "megatron-skipped": "(ms): 50.0 |", "megatron-no-tflops": "(ms): 50.0 |",
             "nemo2": "train_step_timing in s: 0.05"}
STEP_LINE = re.compile(r"iteration +\d+/ *\d+ \|")   # Megatron's and NeMo's, not a checkpoint's


def test_every_style_is_covered() -> None:
    assert set(FORMATS) == set(CHOICES["training"]) == set(STEP_TIME)


@pytest.mark.parametrize("style", CHOICES["training"])
def test_every_style_prints_the_pace_it_keeps_from_the_worker_its_trainer_prints_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, style: str) -> None:
    logs, _api = train(tmp_path, monkeypatch, style, workload("js1"), [node("n0"), node("n1")], 7.0)
    printer, other = ("js1-node-0-0", "js1-node-0-1") if style == "nemo2" else ("js1-node-0-1", "js1-node-0-0")
    steps = [line for line in logs[printer] if STEP_LINE.search(line)]
    assert len(steps) == int(7.0 / training_logs.LINE_SECONDS)   # a line every LINE_SECONDS: 10 steps of 50 ms
    assert all(STEP_TIME[style] in line for line in steps)
    assert not any(STEP_LINE.search(line) for line in logs[other])
    assert FORMATS[style].start(16)[0] in logs["js1-node-0-0"]


@pytest.mark.parametrize("style", CHOICES["training"])
def test_every_style_stops_printing_steps_on_a_stalled_node(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, style: str) -> None:
    stalled = node("n0", **{training_logs.FAULT_ANNOTATION: "stall"})
    logs, _api = train(tmp_path, monkeypatch, style, workload("js1"), [stalled, node("n1")], 7.0)
    printed = [line for lines in logs.values() for line in lines if STEP_LINE.search(line)]
    assert len(printed) == training_logs.STALL_AFTER_LINES


@pytest.mark.parametrize("style", CHOICES["training"])
def test_every_style_crashes_after_a_checkpoint_and_the_next_workload_resumes_from_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, style: str) -> None:
    crash = {training_logs.FAULT_ANNOTATION: "crash"}
    logs, api = train(tmp_path, monkeypatch, style, workload("js1"), [node("n0", **crash), node("n1")], 16.0)
    assert ("n0", {"metadata": {"annotations": {training_logs.CRASHED_ANNOTATION: "job-a"}}}) in api.patched
    first_save = START + timedelta(seconds=2 * training_logs.LINE_SECONDS)   # step 20, its second line
    saved = FORMATS[style].save(20, first_save, first_save + timedelta(seconds=training_logs.SAVE_SECONDS))
    assert all(line in logs["js1-node-0-0"] for line, _at in saved)
    crashed = node("n0", **crash, **{training_logs.CRASHED_ANNOTATION: "job-a"})
    logs, _api = train(tmp_path / "next", monkeypatch, style, workload("js2"), [crashed, node("n1")], 1.0)
    first = logs["js2-node-0-0"]
    assert first[len(FORMATS[style].start(16)):][:len(FORMATS[style].resume(20))] == FORMATS[style].resume(20)
    resumed = [line for lines in logs.values() for line in lines if STEP_LINE.search(line)]
    assert resumed and ("iteration 29/" in resumed[0] if style == "nemo2" else "iteration       30/" in resumed[0])
