"""The sustained per-GPU GEMM burn-in of `compute/gemm-burn-in` (issue 41), run in the catalog's PyTorch image.

One process drives every GPU it sees at once for the whole run (one thread and one CUDA stream per GPU: the node's
power and thermal limits are the point), each multiplying a fixed square GEMM of random data in `--dtype` (bf16,
fp8 through `torch._scaled_mm` on GPUs of compute capability 8.9 and later, tf32). Every `--window-s` seconds it
prints one `gemm-burn-in/1` window record per GPU (docs/gemm-burn-in-output.md): the window's TFLOPS, and from
NVML the GPU's UUID, SM clock at the window's end, mean power draw, enforced power limit, temperature, the clock
event (throttle) reasons seen in the window, the XIDs NVML reported, and whether the window's result matched a
CPU reference on a slice of rows (a different slice each window). Warm-up windows are printed too (`--warmup-s`:
the verdict drops them).

`--product`, `--floor-tflops`, `--floor-provisional` and `--power-default-w` are the verdict's parameters: the
certification reads them from the Job's command line; the harness only names them in its first, unmarked line.

Exit codes: 0 the run ended and every check was right; 1 a result was wrong or a GPU stopped; 2 it could not run
(bad arguments, no GPU, no torch or pynvml in the image, fp8 on a GPU without it): one line on stderr says why.
The pure parts (arguments, lines, throttle names, windows) import without torch, so they are tested anywhere.
"""
from __future__ import annotations

import argparse
import functools
import math
import queue
import sys
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime

MARKER = "gemm-burn-in/1"
DTYPES = ("bf16", "fp8", "tf32")
# NVML's clock event (throttle) reason bits (nvml.h nvmlClocksEventReason*) and the names the format gives them.
THROTTLE_BITS = ((0x1, "gpu_idle"), (0x2, "applications_clocks"), (0x4, "sw_power_cap"), (0x8, "hw_slowdown"),
                 (0x10, "sync_boost"), (0x20, "sw_thermal"), (0x40, "hw_thermal"), (0x80, "hw_power_brake"),
                 (0x100, "display_clocks"))
# Largest relative (Frobenius) error of a right result against the float32 CPU reference: the output is rounded to
# bf16 (2^-8) in bf16 and fp8, tf32 rounds the inputs to 10 mantissa bits; a wrong result is off by far more.
TOLERANCE = {"bf16": 0.02, "fp8": 0.02, "tf32": 0.01}
CHECK_ROWS = 16
FP8_CAPABILITY = (8, 9)
NVML_SAMPLE_S = 1.0


class UsageError(Exception):
    """The harness cannot run here: one line saying why (exit 2)."""


def positive(text: str) -> float:
    value = float(text)
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a number above 0, got {text!r}")
    return value


def not_negative(text: str) -> float:
    value = float(text)
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"must be a number of 0 or more, got {text!r}")
    return value


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="gemm_burn_in.py", description="Sustained GEMM burn-in on every GPU at once, "
                                "printing the gemm-burn-in/1 format every window.")
    p.add_argument("--duration-s", type=positive, default=600.0, help="seconds measured after the warm-up")
    p.add_argument("--warmup-s", type=not_negative, default=60.0, help="seconds of warm-up (printed, not judged)")
    p.add_argument("--window-s", type=positive, default=30.0, help="seconds per window")
    p.add_argument("--dtype", choices=DTYPES, default="bf16")
    p.add_argument("--size", type=int, default=8192, help="M = N = K of the GEMM")
    p.add_argument("--product", default="unknown", help="the node's nvidia.com/gpu.product (for the verdict)")
    p.add_argument("--floor-tflops", type=not_negative, default=0.0, help="the product's floor, 0 for none")
    p.add_argument("--floor-provisional", action="store_true", help="the floor warns, never fails")
    p.add_argument("--power-default-w", type=not_negative, default=0.0, help="the SKU's default power limit, 0 unknown")
    return p


def parse_args(argv: list[str]) -> argparse.Namespace:
    args = parser().parse_args(argv)
    if args.size < CHECK_ROWS:
        parser().error(f"argument --size: must be {CHECK_ROWS} or more, got {args.size}")
    return args


def number(value: float) -> str:
    """A figure as the format reads it (digits, an optional fraction; never an exponent)."""
    return str(int(value)) if float(value).is_integer() else f"{value:.3f}".rstrip("0")


def stamp(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def throttle_names(mask: int) -> str:
    """The reasons of an NVML clock event mask, joined by `,` in bit order; `none` for none (unknown bits dropped)."""
    names = [name for bit, name in THROTTLE_BITS if mask & bit]
    return ",".join(names) or "none"


def xid_text(xids: list[int]) -> str:
    return ",".join(str(x) for x in sorted(set(xids))) or "none"


def begin_line(gpus: int, args: argparse.Namespace) -> str:
    return (f"{MARKER} begin gpus={gpus} dtype={args.dtype} m={args.size} n={args.size} k={args.size} "
            f"window_s={number(args.window_s)} warmup_s={number(args.warmup_s)}")


@dataclass
class Reading:
    """What one GPU showed in one window."""

    gpu: int
    uuid: str
    tflops: float
    sm_mhz: int
    power_w: float
    power_limit_w: float
    temp_c: int
    throttle: int = 0
    xids: list[int] = field(default_factory=list)
    right: bool = True


def window_line(window: int, start: float, r: Reading) -> str:
    return (f"{MARKER} window w={window} time={stamp(start)} gpu={r.gpu} uuid={r.uuid} tflops={r.tflops:.1f} "
            f"sm_mhz={r.sm_mhz} power_w={r.power_w:.1f} power_limit_w={r.power_limit_w:.1f} temp_c={r.temp_c} "
            f"throttle={throttle_names(r.throttle)} xid={xid_text(r.xids)} check={'ok' if r.right else 'wrong'}")


def end_line(windows: int) -> str:
    return f"{MARKER} end windows={windows}"


def parameters_line(args: argparse.Namespace) -> str:
    """The first, unmarked line: what the verdict will judge against (the Job's command line holds the same)."""
    floor = (f"floor {number(args.floor_tflops)} TFLOPS{' (provisional)' if args.floor_provisional else ''}"
             if args.floor_tflops else "no floor")
    power = f"default power limit {number(args.power_default_w)} W" if args.power_default_w else "no default power"
    return f"gemm-burn-in: {args.product}, {args.dtype} {args.size}^3, {floor}, {power}"


@dataclass(frozen=True)
class Schedule:
    """The run's windows: window w covers [start + w * window_s, start + (w + 1) * window_s)."""

    start: float
    window_s: float
    windows: int

    @classmethod
    def of(cls, start: float, args: argparse.Namespace) -> Schedule:
        return cls(start, args.window_s, max(1, math.ceil((args.warmup_s + args.duration_s) / args.window_s - 1e-9)))

    def begins(self, window: int) -> float:
        return self.start + window * self.window_s

    def window_at(self, when: float) -> int:
        """The window `when` falls in (the last one past the run's end, 0 before its start)."""
        return min(self.windows - 1, max(0, int((when - self.start) // self.window_s)))

    @property
    def ends(self) -> float:
        return self.begins(self.windows)


@dataclass
class Tally:
    """One GPU's floating-point operations by window: a batch counts in the window where it completed."""

    schedule: Schedule
    flops: dict[int, float] = field(default_factory=dict)

    def add(self, when: float, flops: float) -> None:
        window = self.schedule.window_at(when)
        self.flops[window] = self.flops.get(window, 0.0) + flops

    def tflops(self, window: int) -> float:
        return self.flops.get(window, 0.0) / self.schedule.window_s / 1e12


@dataclass
class Sampler:
    """NVML over one window for one GPU: throttle reasons ORed, power averaged, clock and temperature at the end."""

    throttle: int = 0
    power_sum: float = 0.0
    power_n: int = 0
    sm_mhz: int = 0
    temp_c: int = 0
    xids: list[int] = field(default_factory=list)

    def sample(self, throttle: int, power_w: float, sm_mhz: int, temp_c: int) -> None:
        self.throttle |= throttle
        self.power_sum += power_w
        self.power_n += 1
        self.sm_mhz, self.temp_c = sm_mhz, temp_c

    @property
    def power_w(self) -> float:
        return self.power_sum / self.power_n if self.power_n else 0.0


# ---- what needs the GPUs (torch, pynvml): imported only when the harness runs ----

def _modules() -> tuple:
    try:
        import torch
    except ImportError as exc:
        raise UsageError(f"cannot run: PyTorch is not in this image ({exc}); run the catalog's "
                         "nvcr.io/nvidia/pytorch image") from None
    try:
        import pynvml
    except ImportError as exc:
        raise UsageError(f"cannot read NVML: the Python module pynvml (nvidia-ml-py) is not in this image ({exc}); "
                         "run the catalog's nvcr.io/nvidia/pytorch image, which has it") from None
    return torch, pynvml


class Gpu(threading.Thread):
    """One GPU's worker: GEMMs on its own stream until the run ends, a checked slice when a window closes."""

    def __init__(self, torch, index: int, args: argparse.Namespace, schedule: Schedule) -> None:
        super().__init__(name=f"gpu{index}", daemon=True)
        self.torch, self.index, self.args, self.schedule = torch, index, args, schedule
        self.tally = Tally(schedule)
        self.checks: queue.Queue = queue.Queue()
        self.error = ""

    def _operands(self):
        torch, n = self.torch, self.args.size
        gen = torch.Generator(device="cpu").manual_seed(1000 + self.index)
        a_cpu = torch.randn(n, n, generator=gen, dtype=torch.float32)
        b_cpu = torch.randn(n, n, generator=gen, dtype=torch.float32)
        device = torch.device("cuda", self.index)
        if self.args.dtype == "fp8":
            a = a_cpu.to(device).to(torch.float8_e4m3fn)
            b = b_cpu.to(device).to(torch.float8_e4m3fn).t().contiguous().t()   # column-major, as _scaled_mm wants
            one = torch.ones((), device=device, dtype=torch.float32)
            run = functools.partial(torch._scaled_mm, a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
        else:
            dtype = torch.bfloat16 if self.args.dtype == "bf16" else torch.float32
            a, b = a_cpu.to(device, dtype), b_cpu.to(device, dtype)
            run = functools.partial(torch.matmul, a, b)
        # The reference sees the inputs the GPU multiplies (rounded to its dtype), in float32 on the CPU.
        return run, a.float().cpu(), b.float().cpu()

    def run(self) -> None:
        torch = self.torch
        try:
            torch.cuda.set_device(self.index)
            run, a_ref, b_ref = self._operands()
            flops = 2.0 * self.args.size ** 3
            batch, checked = 8, -1
            with torch.cuda.stream(torch.cuda.Stream(self.index)):
                while time.time() < self.schedule.ends:
                    for _i in range(batch):
                        out = run()
                    torch.cuda.current_stream().synchronize()
                    now = time.time()
                    if now < self.schedule.ends:   # a batch that ends after the run counts nowhere
                        self.tally.add(now, batch * flops)
                    closed = self.schedule.window_at(now) - (0 if now >= self.schedule.ends else 1)
                    if closed > checked:
                        self.checks.put((closed, self._right(out, a_ref, b_ref, closed)))
                        checked = closed
        except Exception as exc:  # noqa: BLE001 - a GPU that fails is reported and the others go on
            self.error = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"

    def _right(self, out, a_ref, b_ref, window: int) -> bool:
        rows = (window * CHECK_ROWS) % (self.args.size - CHECK_ROWS + 1)
        got = out[rows:rows + CHECK_ROWS].float().cpu()
        want = a_ref[rows:rows + CHECK_ROWS] @ b_ref
        error = float((got - want).norm() / want.norm())
        return math.isfinite(error) and error <= TOLERANCE[self.args.dtype]


class Nvml:
    """The GPUs' NVML handles (matched to CUDA's order by UUID) and their XID events, when NVML gives them."""

    def __init__(self, pynvml, torch, gpus: int) -> None:
        self.nvml = pynvml
        # nvidia-ml-py's names, then the older pynvml's (NGC images have carried either).
        self.reasons = (getattr(pynvml, "nvmlDeviceGetCurrentClocksEventReasons", None)
                        or pynvml.nvmlDeviceGetCurrentClocksThrottleReasons)
        self.wait = getattr(pynvml, "nvmlEventSetWait_v2", None) or pynvml.nvmlEventSetWait
        pynvml.nvmlInit()
        by_uuid = {}
        for i in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(i)
            by_uuid[_text(pynvml.nvmlDeviceGetUUID(handle))] = handle
        self.handles, self.uuids = [], []
        for index in range(gpus):
            uuid = f"GPU-{torch.cuda.get_device_properties(index).uuid}"
            if uuid not in by_uuid:
                raise UsageError(f"cannot match CUDA device {index} ({uuid}) to an NVML device")
            self.handles.append(by_uuid[uuid])
            self.uuids.append(uuid)
        self.xids: dict[int, list[int]] = {}
        self.lock = threading.Lock()
        self.events = self._events()

    def _events(self):
        nvml = self.nvml
        try:
            events = nvml.nvmlEventSetCreate()
            for handle in self.handles:
                nvml.nvmlDeviceRegisterEvents(handle, nvml.nvmlEventTypeXidCriticalError, events)
        except nvml.NVMLError as exc:
            print(f"gemm-burn-in: NVML gives no XID events here ({exc}): xid=none means none seen", flush=True)
            return None
        threading.Thread(target=self._watch, args=(events,), name="xids", daemon=True).start()
        return events

    def _watch(self, events) -> None:
        nvml = self.nvml
        while True:
            try:
                data = self.wait(events, 1000)
            except nvml.NVMLError as exc:
                if not isinstance(exc, nvml.NVMLError_Timeout):
                    time.sleep(1.0)   # NVML is failing (the GPU may be gone): the windows say so, not a busy loop
                continue
            uuid = _text(nvml.nvmlDeviceGetUUID(data.device))
            if uuid in self.uuids:
                with self.lock:
                    self.xids.setdefault(self.uuids.index(uuid), []).append(int(data.eventData))

    def take_xids(self, gpu: int) -> list[int]:
        with self.lock:
            return self.xids.pop(gpu, [])

    def sample(self, gpu: int, into: Sampler) -> None:
        nvml, handle = self.nvml, self.handles[gpu]
        into.sample(int(self.reasons(handle)),
                    nvml.nvmlDeviceGetPowerUsage(handle) / 1000.0,
                    int(nvml.nvmlDeviceGetClockInfo(handle, nvml.NVML_CLOCK_SM)),
                    int(nvml.nvmlDeviceGetTemperature(handle, nvml.NVML_TEMPERATURE_GPU)))

    def power_limit_w(self, gpu: int) -> float:
        return self.nvml.nvmlDeviceGetEnforcedPowerLimit(self.handles[gpu]) / 1000.0


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def burn(args: argparse.Namespace) -> int:
    torch, pynvml = _modules()
    gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if not gpus:
        raise UsageError("cannot run: CUDA sees no GPU in this container (is nvidia.com/gpu requested?)")
    for index in range(gpus):
        if args.dtype == "fp8" and torch.cuda.get_device_capability(index) < FP8_CAPABILITY:
            major, minor = torch.cuda.get_device_capability(index)
            raise UsageError(f"--dtype fp8 needs FP8 tensor cores (compute capability 8.9 or later); GPU {index} "
                             f"({torch.cuda.get_device_name(index)}) is {major}.{minor}: run --dtype bf16 or tf32")
    nvml = Nvml(pynvml, torch, gpus)
    torch.backends.cuda.matmul.allow_tf32 = args.dtype == "tf32"
    print(parameters_line(args), flush=True)
    schedule = Schedule.of(time.time() + 1.0, args)
    workers = [Gpu(torch, index, args, schedule) for index in range(gpus)]
    for worker in workers:
        worker.start()
    print(begin_line(gpus, args), flush=True)
    wrong, stopped = False, set()
    for window in range(schedule.windows):
        samplers = [Sampler() for _g in range(gpus)]
        while time.time() < schedule.begins(window + 1):
            for gpu in range(gpus):
                nvml.sample(gpu, samplers[gpu])
            time.sleep(min(NVML_SAMPLE_S, max(0.0, schedule.begins(window + 1) - time.time())))
        for gpu, worker in enumerate(workers):
            right = _check_of(worker, window)
            if right is None:
                if gpu not in stopped:
                    print(f"gemm-burn-in: GPU {gpu} stopped in window {window}: {worker.error or 'no result'}",
                          flush=True)
                stopped.add(gpu)
                continue
            nvml.sample(gpu, samplers[gpu])
            s = samplers[gpu]
            reading = Reading(gpu, nvml.uuids[gpu], worker.tally.tflops(window), s.sm_mhz, s.power_w,
                              nvml.power_limit_w(gpu), s.temp_c, s.throttle, nvml.take_xids(gpu), right)
            wrong = wrong or not right
            print(window_line(window, schedule.begins(window), reading), flush=True)
    print(end_line(schedule.windows), flush=True)
    return 1 if wrong or stopped else 0


def _check_of(worker: Gpu, window: int) -> bool | None:
    """The worker's check of `window` (None: the worker stopped, or has not closed it within a window's time)."""
    deadline = time.time() + worker.schedule.window_s
    while time.time() < deadline:
        try:
            closed, right = worker.checks.get(timeout=0.1)
        except queue.Empty:
            if not worker.is_alive() and worker.checks.empty():
                return None
            continue
        if closed >= window:
            return right
    return None


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        return burn(args)
    except UsageError as exc:
        print(f"gemm-burn-in: {exc}", file=sys.stderr, flush=True)
        return 2


if __name__ == "__main__":
    sys.exit(main())
