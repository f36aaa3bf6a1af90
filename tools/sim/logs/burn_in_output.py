"""What the GEMM burn-in harness (catalog/_lib/harness/gemm_burn_in.py) prints on a simulated node: the whole run's
`gemm-burn-in/1` lines (docs/gemm-burn-in-output.md) at once, each window stamped with its simulated start, so a
10-minute run ends in a second.

Each GPU's figure is its product's typical sustained all-GPU TFLOPS for the dtype (`TYPICAL`: the issue-41 floors
are 80% of these), times a fixed offset of the GPU (up to +-1.2%, from a hash of node and index) and a wobble per
window (+-0.5%): a healthy node spreads 2-3% between its GPUs. The warm-up shows a cold GPU's boost (window 0 +4%,
window 1 +1.5%). NVML's figures follow: SM clock, power near the product's default limit, 60-70 C.

GPU faults (`Fault`, from `sim fault NODE --kind gpu-...`) change one GPU's lines:
- `gpu-slow` F: TFLOPS and SM clock times F;
- `gpu-throttle` R after M minutes: from the first window starting at or after minute M the reason shows and the
  figure drops (a hardware reason 15%, with its clock; `sw_power_cap` 3%; `hw_thermal` at 92 C);
- `gpu-degrade` F: from the first steady window to the last the figure falls steadily to F times its own;
- `gpu-wrong`: every window's check is `wrong` (the harness then exits 1);
- `power-limit` F: the enforced limit is F times the default, the draw capped by it, the figure times sqrt(F),
  and `sw_power_cap` shows (NVML's reason for a power-capped clock).
A node's `slow` factor (`fault --kind slow`) lowers all its GPUs alike.
"""
from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from datetime import datetime, timedelta

from . import dcgm_output

MARKER = "gemm-burn-in/1"
# Typical sustained all-GPU dense GEMM TFLOPS per GPU by `nvidia.com/gpu.product` and dtype: the issue-41 floors
# divided by 0.8 (H100 SXM 590/1040/300, GB200 1240/2320, B300 1210/2370, GB300 FP8 2630); a dtype without a
# floor takes half the BF16 figure for TF32 (its dense peak is half of BF16's) and the B300 figure for GB300 BF16.
TYPICAL = {
    "NVIDIA-H100-80GB-HBM3": {"bf16": 737.5, "fp8": 1300.0, "tf32": 375.0},
    "NVIDIA-GB200": {"bf16": 1550.0, "fp8": 2900.0, "tf32": 775.0},
    "NVIDIA-GB300-NVL72": {"bf16": 1512.5, "fp8": 3287.5, "tf32": 756.0},
    "NVIDIA-B300-SXM6-AC": {"bf16": 1512.5, "fp8": 2962.5, "tf32": 756.0},
}
DEFAULT_TYPICAL = {"bf16": 500.0, "fp8": 900.0, "tf32": 250.0}
# (default power limit W, SM clock MHz under a GEMM) by product.
NVML = {"NVIDIA-H100-80GB-HBM3": (700.0, 1980), "NVIDIA-GB200": (1200.0, 1965),
        "NVIDIA-GB300-NVL72": (1400.0, 2032), "NVIDIA-B300-SXM6-AC": (1100.0, 2032)}
DEFAULT_NVML = (700.0, 1800)
WARM_UP_BOOST = (1.04, 1.015)
THROTTLE_DROP = {"hw_slowdown": 0.85, "hw_thermal": 0.85, "hw_power_brake": 0.85, "sw_power_cap": 0.97}
THROTTLE_REASONS = tuple(THROTTLE_DROP)
THROTTLE_ORDER = ("sw_power_cap", "hw_slowdown", "hw_thermal", "hw_power_brake")   # NVML's bit order, as printed
DTYPES = ("bf16", "fp8", "tf32")
KINDS = ("gpu-slow", "gpu-throttle", "gpu-degrade", "gpu-wrong", "power-limit")
WRONG_EXIT = 1


@dataclass(frozen=True)
class Run:
    """The harness's arguments that shape its output."""

    dtype: str = "bf16"
    size: int = 8192
    duration_s: float = 600.0
    warmup_s: float = 60.0
    window_s: float = 30.0

    @property
    def windows(self) -> int:
        return max(1, math.ceil((self.warmup_s + self.duration_s) / self.window_s - 1e-9))

    @property
    def first_steady(self) -> int:
        return min(self.windows - 1, math.ceil(self.warmup_s / self.window_s - 1e-9))


@dataclass(frozen=True)
class Fault:
    """One fault on one GPU, as `sim fault` stored it."""

    kind: str
    factor: float = 1.0
    reason: str = ""
    after_minutes: float = 0.0


Faults = dict[int, list[Fault]]


def _unit(*parts: object) -> float:
    """A stable number in [0, 1) from the parts."""
    return int(hashlib.sha256("/".join(map(str, parts)).encode()).hexdigest()[:8], 16) / 16 ** 8


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.3f}".rstrip("0")


@dataclass
class Figures:
    """One GPU's window before it is printed."""

    tflops: float
    sm_mhz: float
    power_w: float
    power_limit_w: float
    temp_c: int
    throttle: list[str]
    right: bool = True


def _apply(fault: Fault, fig: Figures, run: Run, window: int) -> None:
    if fault.kind == "gpu-slow":
        fig.tflops, fig.sm_mhz = fig.tflops * fault.factor, fig.sm_mhz * fault.factor
    elif fault.kind == "gpu-throttle" and window * run.window_s >= fault.after_minutes * 60:
        drop = THROTTLE_DROP[fault.reason]
        fig.tflops, fig.sm_mhz = fig.tflops * drop, fig.sm_mhz * drop
        fig.throttle.append(fault.reason)
        fig.temp_c = 92 if fault.reason == "hw_thermal" else fig.temp_c
    elif fault.kind == "gpu-degrade" and window > run.first_steady:
        span = max(1, run.windows - 1 - run.first_steady)
        fig.tflops *= 1 - (1 - fault.factor) * min(1.0, (window - run.first_steady) / span)
    elif fault.kind == "gpu-wrong":
        fig.right = False
    elif fault.kind == "power-limit":
        fig.power_limit_w *= fault.factor
        fig.power_w = min(fig.power_w, fig.power_limit_w * 0.995)
        fig.tflops, fig.sm_mhz = fig.tflops * math.sqrt(fault.factor), fig.sm_mhz * math.sqrt(fault.factor)
        fig.throttle.append("sw_power_cap")


def figures(node: str, product: str, gpu: int, window: int, run: Run, faults: list[Fault],
            node_factor: float = 1.0) -> Figures:
    typical = TYPICAL.get(product, DEFAULT_TYPICAL).get(run.dtype, DEFAULT_TYPICAL["bf16"])
    power, clock = NVML.get(product, DEFAULT_NVML)
    offset = 1 + 0.024 * (_unit(node, gpu) - 0.5)
    wobble = 1 + 0.01 * (_unit(node, gpu, window) - 0.5)
    boost = WARM_UP_BOOST[window] if window < len(WARM_UP_BOOST) else 1.0
    fig = Figures(typical * offset * wobble * boost * node_factor, clock * min(1.0, offset * boost) * node_factor,
                  power * (0.97 + 0.02 * _unit(node, gpu, window, "power")), power,
                  60 + int(10 * _unit(node, gpu, "temp")), [])
    for fault in faults:
        _apply(fault, fig, run, window)
    return fig


def render(node: str, product: str, gpus: int, run: Run, faults: Faults, start: datetime,
           node_factor: float = 1.0) -> tuple[list[str], int]:
    """The harness's lines for the whole run, and its exit code (1 when a result was wrong)."""
    lines = [f"gemm-burn-in: {product or 'unknown'}, {run.dtype} {run.size}^3 (simulated)",
             f"{MARKER} begin gpus={gpus} dtype={run.dtype} m={run.size} n={run.size} k={run.size} "
             f"window_s={_number(run.window_s)} warmup_s={_number(run.warmup_s)}"]
    wrong = False
    for window in range(run.windows):
        when = (start + timedelta(seconds=window * run.window_s)).strftime("%Y-%m-%dT%H:%M:%SZ")
        for gpu in range(gpus):
            fig = figures(node, product, gpu, window, run, faults.get(gpu, []), node_factor)
            wrong = wrong or not fig.right
            reasons = ",".join(r for r in THROTTLE_ORDER if r in fig.throttle) or "none"
            lines.append(f"{MARKER} window w={window} time={when} gpu={gpu} uuid={dcgm_output.gpu_uuid(node, gpu)} "
                         f"tflops={fig.tflops:.1f} sm_mhz={round(fig.sm_mhz)} power_w={fig.power_w:.1f} "
                         f"power_limit_w={fig.power_limit_w:.1f} temp_c={fig.temp_c} throttle={reasons} xid=none "
                         f"check={'ok' if fig.right else 'wrong'}")
    lines.append(f"{MARKER} end windows={run.windows}")
    return lines, WRONG_EXIT if wrong else 0
