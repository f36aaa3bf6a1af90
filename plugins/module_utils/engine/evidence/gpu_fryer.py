"""gpu-fryer's output (huggingface/gpu-fryer, src/main.rs) read into rows: per GPU its mean figure and throttling.

gpu-fryer drives every GPU at once with 8192^3 GEMMs and prints, once a second, `<n> (<G> Gflops/s) - ... |
Temperatures: <t>°C - ... | Throttling: <reason> - ...`; at the end, per GPU:

    GPU #7:  51494 Gflops/s (min: 50577.53, max: 51677.05, dev: 51493.79)
             Temperature: 48.83°C (min: 47.00, max: 50.00)
             Throttling HW: false, Thermal SW: false, Thermal HW: false

then `All GPUs seem healthy`, or `Some GPUs are not healthy. Reasons:` and `  - GPU <i> - <reason>` lines (a GPU
more than its tolerance, 10% by default, below the best one, or throttled). A row per GPU from the summary
(`tflops`, its mean in TFLOPS, the first 5 s left out as gpu-fryer does): a hardware slowdown or hardware thermal
throttle fails, a software thermal one warns; a reason line is a `result` row that fails. UUIDs come from its
`Detected GPU #i: "<name>" (<uuid>)` lines.

Strict: a line starting `GPU #`, a progress line (`Gflops/s) ... | Temperatures:`), a summary's Temperature or
Throttling line, or a reason line that does not read is refused. No summary (the log ends before gpu-fryer did)
is a partial read, and every GPU lacks evidence.
"""
from __future__ import annotations

import re
from typing import Optional

from .dcgm_results import UnreadableOutput
from .dcgm_verdict import Options
from .rows import Row
from .tool_rows import Refused, joined, judged

TOOL = "gpu-fryer"
_DETECTED = re.compile(r'Detected GPU #(\d+): "(.*)" \(([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\)')
_USING = re.compile(r"GPU #(\d+): Using \d+ MB out of \d+ MB")
_SUMMARY = re.compile(r"GPU #(\d+):\s+(\d+) Gflops/s \(min: ([\d.]+), max: ([\d.]+), dev: ([\d.]+)\)")
_TEMPERATURE = re.compile(r"Temperature: ([\d.]+)°C \(min: ([\d.]+), max: ([\d.]+)\)")
_THROTTLING = re.compile(r"Throttling HW: (true|false), Thermal SW: (true|false), Thermal HW: (true|false)")
_GPU_PROGRESS = r"\d+ \(\d+ Gflops/s\)"
_PROGRESS = re.compile(rf"{_GPU_PROGRESS}(?: - {_GPU_PROGRESS})* \| Temperatures: \d+°C(?: - \d+°C)* \| "
                       r"Throttling: (?:None|Thermal SW|Thermal HW|HW slowdown)(?: - (?:None|Thermal SW|Thermal HW|"
                       r"HW slowdown))*")
_REASON = re.compile(r"\s+- GPU (\d+) - (.+)")


def read(text: str, options: Options) -> dict:
    refused = Refused()
    uuids: dict[int, str] = {}
    summaries: dict[int, list[str]] = {}   # GPU -> its summary line's figures, then its two detail lines
    reasons: list[tuple[int, str]] = []
    progress = 0
    healthy: Optional[bool] = None  # noqa: UP045 - module_utils typing
    last: Optional[int] = None  # noqa: UP045 - as above; the GPU whose summary is being read
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        detected, using, summary = (_DETECTED.fullmatch(stripped), _USING.fullmatch(stripped),
                                    _SUMMARY.fullmatch(stripped))
        if detected:
            uuids[int(detected[1])] = f"GPU-{detected[3]}"
        elif using:
            continue
        elif summary:
            last = int(summary[1])
            summaries[last] = [summary[2], summary[3], summary[4]]
        elif stripped.startswith(("GPU #", "Detected GPU")):
            refused.add(number, "not a gpu-fryer GPU line (Detected, Using, or the summary)", line)
        elif stripped.startswith(("Temperature:", "Throttling HW:")):
            pattern = _TEMPERATURE if stripped.startswith("Temperature:") else _THROTTLING
            match = pattern.fullmatch(stripped)
            if match is None or last is None or len(summaries[last]) != (3 if pattern is _TEMPERATURE else 4):
                refused.add(number, "not the summary's next Temperature or Throttling line", line)
            else:
                summaries[last].append(stripped)
        elif "Gflops/s)" in line:
            if _PROGRESS.fullmatch(stripped):
                progress += 1
            else:
                refused.add(number, "not a progress line (<n> (<G> Gflops/s) - ... | Temperatures: ... | "
                                    "Throttling: ...)", line)
        elif stripped in ("All GPUs seem healthy", "Some GPUs are not healthy. Reasons:"):
            healthy = stripped.startswith("All")
        elif healthy is False and stripped.startswith("- GPU"):
            reason = _REASON.fullmatch(line)
            if reason is None:
                refused.add(number, "not a reason line (  - GPU <i> - <reason>)", line)
            else:
                reasons.append((int(reason[1]), reason[2]))
    if not summaries and not progress:
        raise UnreadableOutput(refused.first or "no gpu-fryer progress or summary line (GPU #i: <G> Gflops/s): "
                                                "not gpu-fryer output")
    rows = [_summary_row(options.node, gpu, uuids.get(gpu), figures) for gpu, figures in sorted(summaries.items())]
    rows += [Row(options.node, "gpu", gpu, uuids.get(gpu), TOOL, "result", "not healthy", None, "fail",
                 f"gpu-fryer: {why}", i) for i, (gpu, why) in enumerate(reasons)]
    short = [gpu for gpu, figures in summaries.items() if len(figures) < 5]
    partial = joined(refused.reason(),
                     "no summary: the log ends before gpu-fryer did" if not summaries else None,
                     f"the summary of GPU(s) {', '.join(map(str, sorted(short)))} is cut short" if short else None,
                     "no healthy/not healthy verdict after the summary" if summaries and healthy is None else None)
    return {"format_version": TOOL, **judged(rows, partial, options, TOOL, "tflops")}


def _summary_row(node: str, gpu: int, uuid: Optional[str], figures: list[str]) -> Row:  # noqa: UP045
    mean, low, high = figures[:3]
    detail = f"mean {int(mean) / 1000:.3f} TFLOPS (min {float(low) / 1000:.3f}, max {float(high) / 1000:.3f})"
    outcome = "pass"
    if len(figures) == 5:
        throttle = _THROTTLING.fullmatch(figures[4])
        hw, thermal_sw, thermal_hw = (throttle[1], throttle[2], throttle[3]) if throttle else ("false",) * 3
        outcome = "fail" if "true" in (hw, thermal_hw) else "warn" if thermal_sw == "true" else "pass"
        detail += f"; {figures[3]}; {figures[4]}"
    return Row(node, "gpu", gpu, uuid, TOOL, "tflops", int(mean) / 1000, "TFLOPS", outcome, detail)
