"""Harness logs (`gemm-burn-in/1`) built from the series a test gives, for the verdict's and the report's tables."""
from __future__ import annotations

HEALTHY = [600.0, 606.0, 594.0, 603.0, 597.0, 609.0, 591.0, 600.0]   # a 3% spread across the node
WINDOWS = 12            # 0-1 warm-up (60 s of 30 s windows), 2-11 steady


def log(per_gpu: dict[int, list[float]] | None = None, fields: dict[tuple[int, int], dict[str, str]] | None = None,
        windows: int = WINDOWS, gpus: int = 8, end: bool = True) -> str:
    """A harness log: GPU g prints HEALTHY[g] in every window unless `per_gpu` gives its series; `fields` sets NVML
    fields of (window, gpu)."""
    per_gpu, fields = per_gpu or {}, fields or {}
    lines = [f"gemm-burn-in/1 begin gpus={gpus} dtype=bf16 m=8192 n=8192 k=8192 window_s=30 warmup_s=60"]
    for w in range(windows):
        for g in range(gpus):
            tflops = per_gpu[g][w] if g in per_gpu else HEALTHY[g]
            f = {"power_limit_w": "700.0", "throttle": "none", "xid": "none", "check": "ok", **fields.get((w, g), {})}
            lines.append(f"gemm-burn-in/1 window w={w} time=2026-03-02T10:{w:02d}:00Z gpu={g} uuid=GPU-{g}abc "
                         f"tflops={tflops} sm_mhz=1980 power_w=690.0 power_limit_w={f['power_limit_w']} temp_c=67 "
                         f"throttle={f['throttle']} xid={f['xid']} check={f['check']}")
    if end:
        lines.append(f"gemm-burn-in/1 end windows={windows}")
    return "\n".join(lines) + "\n"
