"""The built-in training LogProfiles reading Megatron-LM and NeMo logs: hand-written ones of every version
(data/training_logs/cases.yaml), the real ones (data/real_logs/training/*.expect.json), and every line NVCRE's
own patterns read, read the same."""
from __future__ import annotations

import copy
import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from ansible_collections.cre.certification.plugins.module_utils.engine.catalog.logprofiles import builtin_profile
from ansible_collections.cre.certification.plugins.module_utils.engine.logs.goodput_log import (
    GoodputParser,
    GoodputWindow,
    Step,
)
from tests.log_files import text

DATA = Path(__file__).parents[1] / "data"
HAND = DATA / "training_logs"
REAL = DATA / "real_logs" / "training"
CASES = yaml.safe_load((HAND / "cases.yaml").read_text(encoding="utf-8"))["cases"]
NVCRE = yaml.safe_load((HAND / "nvcre_patterns.yaml").read_text(encoding="utf-8"))
REAL_LOGS = {path: json.loads(path.read_text(encoding="utf-8")) for path in sorted(REAL.glob("*.expect.json"))}
# The built-ins that read each real log's format (the first word of expect.json's "format").
FORMAT_PROFILES = {"megatron-lm": ["megatron-bridge", "megatron-training"], "nemo1": ["nemo-1-training"],
                   "nemo2": ["nemo-4-training"]}


def log_format(expect: dict[str, Any]) -> str:
    return str(expect["format"]).split()[0]


def profile(name: str) -> dict[str, Any]:
    found = builtin_profile(name)
    assert found is not None, name
    return found


def parse(log_profile: dict[str, Any], log: str) -> GoodputWindow:
    return GoodputParser.from_profile(log_profile).parse(log)


def iso(when: datetime | None) -> str | None:
    return when.strftime("%Y-%m-%dT%H:%M:%S.%fZ") if when else None


def row(step: Step) -> list[Any]:
    """A step as cases.yaml writes it: an absent TFLOP/s or loss is null."""
    return [step.global_step, round(step.step_timing, 6), step.tflops or None, step.loss or None, iso(step.ts)]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["id"])
def test_hand_written_log(case):
    window = parse(profile(case["profile"]), text(HAND / case["log"]))
    assert [row(step) for step in window.steps] == case["steps"]
    assert [step.global_step for step in window.steps if step.warmup] == case["warmup"]
    if "checkpoints" in case:
        read = [[c.step, c.path, round(c.save_duration, 6), iso(c.ts)] for c in window.checkpoints]
        assert read == case["checkpoints"]
        assert window.pending_save is None
    if "restore" in case:
        assert window.restore is not None
        assert [window.restore.path, window.restore.step, iso(window.restore.ts)] == case["restore"]
    if "application_start" in case:
        assert iso(window.application_start_time) == case["application_start"]


@pytest.mark.parametrize("case", [c for c in CASES if "nvcre_steps" in c], ids=lambda c: c["id"])
def test_lines_nvcre_reads_are_read_the_same(case):
    """NVCRE's trainingStep pattern in place of ours (the profile's settings kept): each step it reads, ours
    reads with the same figures."""
    ours = profile(case["profile"])
    theirs = copy.deepcopy(ours)
    theirs["spec"]["patterns"] = {"trainingStep": {"regex": NVCRE[case["profile"]],
                                                   "units": ours["spec"]["patterns"]["trainingStep"]["units"]}}
    log = text(HAND / case["log"])
    read = [row(step) for step in parse(ours, log).steps]
    nvcre = [row(step) for step in parse(theirs, log).steps]
    assert len(nvcre) == case["nvcre_steps"]
    assert [step for step in nvcre if step not in read] == []


def test_the_real_logs_are_there_in_formats_a_builtin_reads():
    assert {path.name.split("-")[0] for path in REAL_LOGS} >= {"002", "006", "008"}
    assert {log_format(expect) for expect in REAL_LOGS.values()} <= set(FORMAT_PROFILES)


@pytest.mark.parametrize(("expect_path", "name"), [
    (path, name) for path, expect in REAL_LOGS.items() for name in FORMAT_PROFILES.get(log_format(expect), [])
], ids=lambda value: value.name.split("-")[0] if isinstance(value, Path) else value)
def test_real_log(expect_path, name):
    """Each step line as expect.json reads it: step, elapsed ms, TFLOP/s, lm loss or none, its own time. A
    profile with logInterval N keeps only every Nth iteration (megatron-training none of 006's five)."""
    expect = REAL_LOGS[expect_path]
    log_profile = profile(name)
    interval = log_profile["spec"].get("logInterval") or 1
    window = parse(log_profile, text(expect_path.with_name(expect_path.name.replace(".expect.json", ".log"))))
    megatron = log_format(expect) == "megatron-lm"  # whether the reading of "lm loss" applies
    expected = [[s.get("global_step", s["iteration"]), s["elapsed_ms"], s["tflops_per_gpu"],
                 s["lm_loss_present"] if megatron else None, s["timestamp"]]
                for s in expect["steps"] if s["iteration"] % interval == 0]
    read = [[step.global_step, round(step.step_timing * 1000, 6), step.tflops or None,
             step.loss > 0 if megatron else None, step.ts.strftime("%Y-%m-%d %H:%M:%S") if step.ts else None]
            for step in window.steps]
    assert read == expected


# Single lines of each Megatron-LM / Megatron-Bridge version: the captures both megatron profiles take, or None
# for a line that is not that event.
MEGATRON_LINES = [
    ("applicationStart", "using world size: 16, data-parallel-size: 8, tensor-model-parallel size: 2, "
                         "pipeline-model-parallel size: 1 ", {}),  # 2020 to 2023
    ("applicationStart", "using world size: 16, data-parallel size: 8, context-parallel size: 1 tensor-model-parallel "
                         "size: 2, pipeline-model-parallel size: 1 ", {}),  # 2023-11 to 2024-03, no comma
    ("applicationStart", "using world size: 16, data-parallel size: 8, context-parallel size: 1, hierarchical "
                         "context-parallel sizes: Nonetensor-model-parallel size: 2, encoder-tensor-model-parallel "
                         "size: 0, pipeline-model-parallel size: 1, encoder-pipeline-model-parallel size: 0",
     {}),  # 2025
    ("checkpointRestore", "Loading checkpoint from /mnt/ck", {"path": "/mnt/ck", "step": None}),
    ("checkpointRestore", " loading checkpoint from /ck at iteration 500", {"path": "/ck", "step": "500"}),
    ("checkpointRestore", " loading distributed checkpoint from /ck at iteration 500", {"path": "/ck", "step": "500"}),
    ("checkpointRestore", " loading release checkpoint from /ck", {"path": "/ck", "step": None}),
    ("checkpointRestore", "Loading checkpoint from iteration 40 (specified via ckpt_step)", None),  # Bridge
    ("checkpointRestore", "  successfully loaded checkpoint from /ck [ t 1/1, p 1/1 ] at iteration 500", None),
    ("checkpointSave", "saving checkpoint at iteration     100 to /ck", {"step": "100", "path": "/ck"}),  # 2020
    ("checkpointSave", "saving dataloader checkpoint at iteration 100 to /ck/dl", None),
    ("checkpointDone", "  successfully saved checkpoint at iteration     100 to /ck", {"step": "100", "path": "/ck"}),
    ("checkpointDone", "  successfully saved local checkpoint from iteration     100", {"step": "100", "path": None}),
    ("checkpointDone", "  [2026-03-02 10:04:12.935000] successfully saved checkpoint from iteration     100 to /ck "
                       "[ t 1/4, gtp_remat 1/1, p 1/2 ]",
     {"timestamp": "2026-03-02 10:04:12.935000", "step": "100", "path": "/ck"}),
    ("trainingStep", " epoch  0 | iteration      100/  500000 | elapsed time per iteration (ms): 812.3 | learning "
                     "rate 1.000E-04 | lm loss 7.123E+00 | nsp loss 6.917E-01 |",  # the first Megatron-LM (2019)
     {"iteration": "100", "elapsedTime": "812.3", "loss": "7.123E+00"}),
    ("trainingStep", " [2026-03-02 10:00:00.000001] iteration      100/    5000 | consumed samples:        51200 | "
                     "elapsed time per iteration (ms): 4211.2 | learning rate: 3.000000E-04 | global batch size:   512 "
                     "| lm loss: NAN | loss scale: 1.0 | number of skipped iterations:   0 | number of nan "
                     "iterations:   1 |", {"iteration": "100", "elapsedTime": "4211.2", "tflops": None, "loss": None}),
]


@pytest.mark.parametrize("name", ["megatron-bridge", "megatron-training"])
@pytest.mark.parametrize(("pattern", "line", "captures"), MEGATRON_LINES,
                         ids=[f"{i}-{case[0]}" for i, case in enumerate(MEGATRON_LINES)])
def test_megatron_line(name, pattern, line, captures):
    match = GoodputParser.from_profile(profile(name)).patterns[pattern].regex.search(line)
    assert (None if match is None else {key: match.group(key) for key in captures or {}}) == captures


# NeMo lines (both NeMo profiles read the same lifecycle lines): captures, or None for a line that is not the event.
NEMO_LINES = [
    ("applicationStart", "[NeMo I 2024-06-17 08:36:41 nlp_overrides:480] Removing checkpoint: /x.ckpt", {}),
    ("applicationStart", "[NeMo W 2025-01-02 10:00:00 nemo_logging:349 rank:0] debug format", {}),
    ("checkpointRestore", "[NeMo I 2025-01-02 10:00:00 nemo_logging:393] Restoring model weights from RestoreConfig("
                          "path='/models/base', load_model_state=True, load_optim_state=False, load_artifacts=True)",
     {"path": "/models/base"}),
    ("checkpointRestore", "Restoring model weights from /models/base/weights", {"path": "/models/base/weights"}),
    ("checkpointRestore", "Restored all states from the checkpoint at /ck/last", None),
    ("checkpointSave", "[NeMo I 2025-03-04 10:12:40 dist_ckpt_io:308] Global Checkpoint Save : Rank: 0 : Start time: "
                       "1741083160.210s : Save duration: 2.914s", {"step": None, "saveDuration": "2.914"}),
    ("checkpointDone", "[NeMo I 2024-07-02 21:15:47 nemo_model_checkpoint:606] Async checkpoint save for step 1003 "
                       "(/r/ck-step=1003.ckpt) finalized successfully at 1719955047.826.",
     {"step": "1003", "path": "/r/ck-step=1003.ckpt"}),
    ("checkpointDone", "[NeMo I 2024-07-02 21:15:37 nemo_model_checkpoint:576] Scheduled async checkpoint save for "
                       "/r/ck-step=1003.ckpt", None),  # no step: the finalize line is the one that counts
]


@pytest.mark.parametrize("name", ["nemo-1-training", "nemo-4-training"])
@pytest.mark.parametrize(("pattern", "line", "captures"), NEMO_LINES,
                         ids=[f"{i}-{case[0]}" for i, case in enumerate(NEMO_LINES)])
def test_nemo_line(name, pattern, line, captures):
    match = GoodputParser.from_profile(profile(name)).patterns[pattern].regex.search(line)
    assert (None if match is None else {key: match.group(key) for key in captures or {}}) == captures


@pytest.mark.parametrize(("line", "step"), [
    # ProgressPrinter's 4 significant digits: E-notation from 1000 up and below 0.0001
    ("Training epoch 0, iteration 9/99 | global_step: 9 | reduced_train_loss: 1.2e-05 | train_step_timing in s: "
     "1.234e+03 | TFLOPS_per_GPU: 1.051e+03", (9, 1234.0, 1051.0, 1.2e-05)),
    ("Training epoch 1, iteration 0/99 | global_step: 100 | reduced_train_loss: nan | train_step_timing in s: 2.5",
     (100, 2.5, 0.0, 0.0)),
])
def test_nemo2_values_in_e_notation_and_a_nan_loss(line, step):
    window = parse(profile("nemo-4-training"), line + "\n")
    assert [(s.global_step, s.step_timing, s.tflops, s.loss) for s in window.steps] == [step]


@pytest.mark.parametrize(("line", "step"), [
    # NVIDIA/NeMo-Framework-Launcher issue 55: Lightning's own bar, tqdm's rate and no train_step_timing
    ("Epoch 0:   1%|          | 795/77225 [9:07:58<878:01:48, 41.36s/it, loss=3.1, v_num=, reduced_train_loss=3.090, "
     "global_step=794.0, consumed_samples=1.63e+6]", (794, 41.36, 3.09)),
    # faster than a step a second: tqdm prints the rate the other way round
    ("Epoch 2:  12%|█▏        | 120/1000 [00:58<07:08,  2.50it/s, loss=4.31, v_num=0, reduced_train_loss=4.290, "
     "global_step=2.12e+3, consumed_samples=5.43e+5]", (2120, 0.4, 4.29)),
    # NeMo's own bar: train_step_timing, no rate
    ("Epoch 0: :  10%|█         | 10/100 [00:20<03:00, reduced_train_loss=2.600, global_step=9.000, "
     "consumed_samples=2560.0, train_step_timing in s=1.950]", (9, 1.95, 2.6)),
    # both: train_step_timing is the step's own time, the rate a moving average
    ("Epoch 1:  40%|████      | 4/10 [00:07<00:10,  1.73s/it, loss=2.1, v_num=1, reduced_train_loss=2.100, "
     "global_step=13.00, consumed_samples=3584.0, train_step_timing in s=1.700]", (13, 1.7, 2.1)),
])
def test_nemo1_bar_step_time_from_tqdms_rate(line, step):
    window = parse(profile("nemo-1-training"), "2023-05-25T10:00:05.000000000-07:00 " + line + "\n")
    assert [(s.global_step, round(s.step_timing, 6), s.loss) for s in window.steps] == [step]


@pytest.mark.parametrize("line", [
    "Epoch 0:   0%|          | 0/77225 [00:00<?, ?it/s]",               # the bar's first draw: no step yet
    "Epoch 0:   0%|          | 1/77225 [00:45<978:10:15, 45.61s/it]",    # moved on before its postfix: no step
])
def test_nemo1_bar_draws_without_a_global_step_are_no_step(line):
    assert parse(profile("nemo-1-training"), line + "\n").steps == []
