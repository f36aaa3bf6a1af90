"""How the simulated training prints (`log_style` field `training`): its start, a step line per log interval,
a checkpoint save (its start and end lines) and a resume, in the shapes real trainers print them.

- `megatron`: what the simulator has always printed, the lines the catalog's log profile reads.
- `megatron-no-timestamp`: Megatron-LM of late 2023 (training.py before f427c6f0a1, which added the timestamp;
  `--log-throughput` already there): ` iteration ...` with a leading space, learning rate `%.3E`, no timestamp on
  the checkpoint lines either, `in torch format` and `  successfully saved checkpoint`.
- `megatron-skipped` and `megatron-no-tflops`: Megatron-LM of 2026 (training_log, checkpointing.py), the first
  with fp16 loss-scaler skips, the second without `--log-throughput`. A step whose gradients overflowed is
  skipped (no optimizer step); the scaler starts at 2^32 and halves on each overflow after the first (hysteresis
  2) down to 1. `lm loss` averages the interval's advanced steps and is left out while no step ever advanced:
  the first two intervals overflow throughout (`number of skipped iterations:  10`, no `lm loss`, no `grad
  norm`); later one step in a hundred overflows (`number of skipped iterations:   1`, with `lm loss`).
- `nemo2`: NeMo 2's progress printer (nemo/lightning/pytorch/callbacks/progress_printer.py): `Training epoch E,
  iteration I/N | metric: value ...`, 0-based, printed by global rank 0, each metric averaged over the log
  interval but `global_step`, integral values as integers, others with 4 significant digits; Lightning's start
  and restore lines; for an async save, NeMo's `Global Checkpoint Save` line (its blocking part) and
  ModelCheckpoint's lines.

Every style prints the pace the trainer keeps: `Step.ms` is the time per iteration.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

TFLOPS = 600.0
CHECKPOINTS = "/mnt/workspace/checkpoints"
GLOBAL_BATCH = 512
LEARNING_RATE = 3e-4
WARMUP_SKIPS = 20          # megatron-skipped: the scaler's first overflows, from the first step on
SKIP_EVERY = 100           # then one step in this many overflows
SKIP_AT = 55               # ... this many steps into each such stretch
NEMO_BLOCKING_SAVE = 0.309  # s: the part of an async save the step loop waits for (NeMo logs it as Save duration)


@dataclass(frozen=True)
class Step:
    """A step line: the steps done, of how many, when, the steps per line, and the time per iteration."""

    step: int
    total: int
    when: datetime
    interval: int
    ms: float


@dataclass(frozen=True)
class Format:
    steps_on_first: bool                                                   # who prints steps: rank 0 or the last
    start: Callable[[int], list[str]]                                      # world size -> lines
    step: Callable[[Step], str]
    save: Callable[[int, datetime, datetime], list[tuple[str, datetime]]]  # step, start, end -> timed lines
    resume: Callable[[int], list[str]]                                     # the step resumed at -> lines


def loss(step: int) -> float:
    return 9.8 - step / 10000


def _stamp(when: datetime) -> str:
    return when.strftime("%Y-%m-%d %H:%M:%S.%f")


def _skipped_before(step: int) -> int:
    """megatron-skipped: the steps skipped among the first `step`."""
    return min(step, WARMUP_SKIPS) + (max(0, (step - SKIP_AT) // SKIP_EVERY + 1) if step >= SKIP_AT else 0)


def _megatron_line(s: Step, stamp: str, lr: str, throughput: bool, scaler: bool) -> str:
    """A Megatron-LM training_log line; `scaler`: fp16 with dynamic loss scaling (skipped steps), else bf16."""
    skipped = _skipped_before(s.step) - _skipped_before(s.step - s.interval) if scaler else 0
    scale = max(1.0, 2.0 ** (32 - max(0, _skipped_before(s.step) - 1))) if scaler else 1.0
    advanced = s.step > WARMUP_SKIPS or not scaler   # an interval of overflows only: no loss, no grad norm
    return (f"{stamp} iteration {s.step:8d}/{s.total:8d} | consumed samples: {s.step * GLOBAL_BATCH:12d} | "
            f"elapsed time per iteration (ms): {s.ms:.1f} |"
            + (f" throughput per GPU (TFLOP/s/GPU): {TFLOPS:.1f} |" if throughput else "")
            + f" learning rate: {lr.format(LEARNING_RATE)} | global batch size: {GLOBAL_BATCH:5d} |"
            + (f" lm loss: {loss(s.step):.6E} |" if advanced else "")
            + f" loss scale: {scale:.1f} |"
            + (f" grad norm: {2.5 / (1 + s.step / 1000):.3f} |" if advanced else "")
            + f" number of skipped iterations: {skipped:3d} | number of nan iterations: {0:3d} |")


def _megatron_2026(throughput: bool, scaler: bool) -> Format:
    def save(step: int, when: datetime, done: datetime) -> list[tuple[str, datetime]]:
        return [(f"[{_stamp(when)}] saving checkpoint at iteration {step:7d} to {CHECKPOINTS} in torch_dist format",
                 when), (f"  [{_stamp(done)}] scheduled an async checkpoint save at iteration {step:7d} to "
                         f"{CHECKPOINTS}", done)]
    return Format(
        steps_on_first=False,
        start=lambda world: [f"using world size: {world}, data-parallel size: {world}, context-parallel size: 1, "
                             "hierarchical context-parallel sizes: None, tensor-model-parallel size: 1, "
                             "pipeline-model-parallel size: 1"],
        step=lambda s: _megatron_line(s, f" [{_stamp(s.when)}]", "{:.6E}", throughput, scaler),
        save=save,
        resume=lambda step: [f" loading distributed checkpoint from {CHECKPOINTS} at iteration {step}",
                             f"  successfully loaded checkpoint from {CHECKPOINTS} [ t 1/1, gtp_remat 1/1, p 1/1 ] "
                             f"at iteration {step}"])


def _today_step(s: Step) -> str:
    return (f"[{_stamp(s.when)}] iteration {s.step:>8}/{s.total:>8} | consumed samples: "
            f"{s.step * GLOBAL_BATCH:>12} | elapsed time per iteration (ms): {s.ms:.1f} | "
            f"throughput per GPU (TFLOP/s/GPU): {TFLOPS:.1f} | lm loss: {loss(s.step):.6E} |")


MEGATRON = Format(
    steps_on_first=False,
    start=lambda world: [f"using world size: {world}, data-parallel size: {world}, context-parallel size: 1, "
                         "tensor-model-parallel size: 1, pipeline-model-parallel size: 1"],
    step=_today_step,
    save=lambda step, when, done: [
        (f"[{_stamp(when)}] saving checkpoint at iteration {step:>7} to {CHECKPOINTS} in torch_dist format", when),
        (f"[{_stamp(done)}] scheduled an async checkpoint save at iteration {step:>7} to {CHECKPOINTS}", done)],
    resume=lambda step: [f"Loading checkpoint from {CHECKPOINTS}"])

MEGATRON_2023 = Format(
    steps_on_first=False,
    start=lambda world: [f"using world size: {world}, data-parallel size: {world}, context-parallel size: 1 "
                         "tensor-model-parallel size: 1, pipeline-model-parallel size: 1 "],
    step=lambda s: _megatron_line(s, "", "{:.3E}", throughput=True, scaler=False),
    save=lambda step, when, done: [
        (f"saving checkpoint at iteration {step:7d} to {CHECKPOINTS} in torch format", when),
        (f"  successfully saved checkpoint at iteration {step:7d} to {CHECKPOINTS}", done)],
    resume=lambda step: [f" loading checkpoint from {CHECKPOINTS} at iteration {step}",
                         f"  successfully loaded checkpoint from {CHECKPOINTS} at iteration {step}"])


def _nemo_value(value: float) -> str:
    """As the progress printer formats a metric: integral values as integers, others to 4 significant digits."""
    return str(int(value)) if float(value).is_integer() else f"{value:.4}"


def _nemo_step(s: Step) -> str:
    steps = range(s.step - s.interval + 1, s.step + 1)
    metrics = {"lr": LEARNING_RATE, "consumed_samples": sum(k * GLOBAL_BATCH for k in steps) / s.interval,
               "global_batch_size": GLOBAL_BATCH, "global_step": s.step - 1,
               "reduced_train_loss": sum(map(loss, steps)) / s.interval, "train_step_timing in s": s.ms / 1000}
    return f"Training epoch 0, iteration {s.step - 1}/{s.total - 1}" + "".join(
        f" | {name}: {_nemo_value(value)}" for name, value in metrics.items())


def _nemo_checkpoint(step: int) -> str:
    return (f"{CHECKPOINTS}/nemotron--reduced_train_loss={loss(step):.2f}-epoch=0-"
            f"consumed_samples={step * GLOBAL_BATCH:.1f}")


def _nemo_log(when: datetime, line: int, message: str) -> str:
    """A NeMo logging line (BaseNeMoFormatter; no colours when not on a terminal)."""
    return f"[NeMo I {when:%Y-%m-%d %H:%M:%S} model_checkpoint:{line}] {message}"


NEMO2 = Format(
    steps_on_first=True,
    # Lightning: each of worker-0's ranks (8 GPUs a node, as the trainer's world size counts them), then rank 0.
    start=lambda world: [*(f"Initializing distributed: GLOBAL_RANK: {r}, MEMBER: {r + 1}/{world}" for r in range(8)),
                         "-" * 100, "distributed_backend=nccl",
                         f"All distributed processes registered. Starting with {world} processes", "-" * 100, ""],
    step=_nemo_step,
    save=lambda step, when, done: [
        (f"[NeMo I {when:%Y-%m-%d %H:%M:%S} nemo_logging:393] Global Checkpoint Save : Rank: 0 : Iteration: {step} : "
         f"Start time: {when.timestamp() - NEMO_BLOCKING_SAVE:.3f}s : Save duration: {NEMO_BLOCKING_SAVE:.3f}s", when),
        (_nemo_log(when, 632, f"Scheduled async checkpoint save for {_nemo_checkpoint(step)}"), when),
        (_nemo_log(done, 657, f"Async checkpoint save for step {step} ({_nemo_checkpoint(step)}) finalized "
                              "successfully."), done)],
    resume=lambda step: [f"Restoring states from the checkpoint path at {_nemo_checkpoint(step)}",
                         f"Restored all states from the checkpoint at {_nemo_checkpoint(step)}"])

FORMATS = {"megatron": MEGATRON, "megatron-no-timestamp": MEGATRON_2023,
           "megatron-skipped": _megatron_2026(throughput=True, scaler=True),
           "megatron-no-tflops": _megatron_2026(throughput=False, scaler=False), "nemo2": NEMO2}
