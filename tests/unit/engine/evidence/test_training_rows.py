"""Training logs as evidence rows, one per step: every hand-written Megatron-LM and NeMo log of
data/training_logs/cases.yaml and the real ones, read as the goodput reader reads them."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from ansible_collections.cre.certification.plugins.module_utils.engine.catalog.logprofiles import builtin_profile
from ansible_collections.cre.certification.plugins.module_utils.engine.evidence.rows import row_schema, sorted_rows
from ansible_collections.cre.certification.plugins.module_utils.engine.evidence.training_rows import rows
from tests.log_files import text

DATA = Path(__file__).resolve().parents[1] / "data"
HAND = DATA / "training_logs"
REAL = DATA / "real_logs" / "training"
CASES = yaml.safe_load((HAND / "cases.yaml").read_text(encoding="utf-8"))["cases"]


def read(log: str, profile: str) -> tuple[list[Any], str | None]:
    return rows(log, job={}, node="node-0", group="group-1", profile=builtin_profile(profile))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["id"])
def test_every_step_of_every_hand_written_log_is_a_row(case: dict[str, Any]) -> None:
    out, partial = read(text(HAND / case["log"]), case["profile"])
    assert partial is None and out == sorted_rows(out)
    times = [(r.index, r.value, r.time) for r in out if r.metric == "step_time" and r.sample == 0]
    assert times == [(step, pytest.approx(seconds), when) for step, seconds, _tflops, _loss, when in case["steps"]]
    tflops = [(r.index, r.value) for r in out if r.metric == "tflops" and r.sample == 0]
    assert tflops == [(step, value) for step, _seconds, value, _loss, _when in case["steps"] if value is not None]
    warm = sorted({r.index for r in out if r.detail.startswith("warmup step")})
    assert warm == sorted(set(case.get("warmup") or []))
    for row in out:
        jsonschema.validate(row.to_dict(), row_schema())


@pytest.mark.parametrize(("name", "profile"), [("002-mlm-2025-rtx4090-2node-tflops", "megatron-bridge"),
                                               ("006-mlm-2024-tiny-fp16-all-skipped", "megatron-bridge"),
                                               ("008-nemo2-training-epoch-iteration", "nemo-4-training")])
def test_the_real_megatron_and_nemo_logs(name: str, profile: str) -> None:
    expect = json.loads((REAL / f"{name}.expect.json").read_text(encoding="utf-8"))["steps"]
    out, partial = read((REAL / f"{name}.log").read_text(encoding="utf-8"), profile)
    assert partial is None
    steps = [(r.index, r.value) for r in out if r.metric == "step_time"]
    assert steps == [(s.get("global_step", s["iteration"]), pytest.approx(s["elapsed_ms"] / 1000)) for s in expect]
    assert [r.value for r in out if r.metric == "tflops"] == [s["tflops_per_gpu"] for s in expect
                                                              if s["tflops_per_gpu"]]
    assert {(r.node, r.component, r.test, r.outcome) for r in out} == {("group-1", "step", "training", "pass")}


def test_a_step_printed_again_by_a_restarted_run_is_its_next_sample() -> None:
    line = ("[2026-03-02 10:0{m}:00] iteration       {step}/    5000 | consumed samples: 10240 | elapsed time per "
            "iteration (ms): 4211.2 | throughput per GPU (TFLOP/s/GPU): 612.4 | lm loss: 6.482913E+00 |\n")
    log = line.format(m=1, step=20) + line.format(m=2, step=21) + line.format(m=3, step=20)
    out, _partial = read(log, "megatron-bridge")
    assert [(r.index, r.metric, r.sample, r.time) for r in out] == [
        (20, "step_time", 0, "2026-03-02T10:01:00.000000Z"), (20, "step_time", 1, "2026-03-02T10:03:00.000000Z"),
        (20, "tflops", 0, "2026-03-02T10:01:00.000000Z"), (20, "tflops", 1, "2026-03-02T10:03:00.000000Z"),
        (21, "step_time", 0, "2026-03-02T10:02:00.000000Z"), (21, "tflops", 0, "2026-03-02T10:02:00.000000Z")]


def test_a_log_cut_mid_line_is_partial_and_no_steps_is_zero() -> None:
    log = (REAL / "008-nemo2-training-epoch-iteration.log").read_text(encoding="utf-8")
    out, partial = read(log + "Training epoch 0, iteration 126/149 | lr: 3e", "nemo-4-training")
    assert len([r for r in out if r.metric == "step_time"]) == 6
    assert partial == ("the log ends mid-line ('Training epoch 0, iteration 126/149 | lr: 3e'): the stream stopped "
                       "while the workload wrote")
    assert read("loading data\n", "nemo-4-training") == ([], None)


def test_a_step_line_without_a_time_has_no_value_not_zero() -> None:
    out, _partial = read("Epoch 0: :  10%|#         | 10/100 [00:20, reduced_train_loss=2.600, global_step=9.000]\n",
                         "nemo-1-training")
    assert [(r.metric, r.value, r.detail) for r in out] == [("step_time", None,
                                                            "warmup step; the step line prints no step time")]
