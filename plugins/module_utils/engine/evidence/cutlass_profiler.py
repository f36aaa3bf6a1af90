"""The CUTLASS profiler's output (`cutlass_profiler`, NVIDIA/cutlass tools/profiler) read into rows: per kernel
its figure and its `Disposition`, CUTLASS's correctness verdict (independent of `Status`).

Two layouts: the CSV (`--output=`), read by column name (the columns differ between CUTLASS versions: the header
line is the one naming `Operation`, `Disposition`, `Status` and `GFLOPs`), every later non-empty line a row with
the header's column count; and the text report, blocks `Problem ID: N` of `key: value` lines (`Arguments`
continued over lines ending in `\\`), `Math: <G> GFLOP/s` the figure. A row per kernel: test the operation's name,
metric `tflops` (GFLOP/s / 1000), sample its position; `Disposition` passed passes, incorrect or failed fails (a
wrong result, whatever the speed), not_verified warns (nothing checked the result), not_run / not_supported /
invalid_problem skip; a `Status` other than success fails. The profiler does not print its `--device`: the rows
have no GPU index and judge the node.

Strict: a CSV line with another column count, a block line that is not `key: value`, a Disposition or figure that
does not read, is refused. Neither a CSV header nor a `Problem ID` block is UnreadableOutput.
"""
from __future__ import annotations

import csv
import re
from typing import Optional

from .dcgm_results import UnreadableOutput
from .dcgm_verdict import Options
from .rows import Row
from .tool_rows import Refused, judged

TOOL = "cutlass-profiler"
REQUIRED = ("Operation", "Disposition", "Status", "GFLOPs")
DISPOSITIONS = {"passed": "pass", "incorrect": "fail", "failed": "fail", "not_verified": "warn", "not_run": "skip",
                "not_supported": "skip", "invalid_problem": "skip"}
_NUMBER = re.compile(r"\d+(?:\.\d+)?(?:[eE][+-]?\d+)?")
_KEY = re.compile(r"\s*([A-Za-z][A-Za-z0-9_/ ]*?):\s*(.*)")
_MATH = re.compile(r"(\d+(?:\.\d+)?) GFLOP/s")


def read(text: str, options: Options) -> dict:
    lines = text.splitlines()
    header = next((i for i, line in enumerate(lines) if all(c in _cells(line) for c in REQUIRED)), None)
    if header is not None:
        kernels, refused = _csv(lines, header)
    elif any(line.strip().startswith("Problem ID:") for line in lines):
        kernels, refused = _text(lines)
    else:
        raise UnreadableOutput("no CSV header naming Operation, Disposition, Status and GFLOPs, and no `Problem ID:` "
                               "block: not cutlass_profiler output")
    rows = []
    for sample, (fields, number) in enumerate(kernels):
        row = _row(options.node, sample, fields)
        if isinstance(row, str):
            refused.add(number, row, lines[number - 1])
        else:
            rows.append(row)
    return {"format_version": TOOL, **judged(rows, refused.reason(), options, TOOL, "tflops")}


def _cells(line: str) -> list[str]:
    return next(csv.reader([line]), []) if "," in line else []


def _csv(lines: list[str], header: int) -> tuple[list[tuple[dict[str, str], int]], Refused]:
    columns = _cells(lines[header])
    refused = Refused()
    kernels = []
    for number, line in enumerate(lines[header + 1:], header + 2):
        if not line.strip():
            continue
        cells = _cells(line)
        if len(cells) != len(columns):
            refused.add(number, f"{len(cells)} columns where the header has {len(columns)}", line)
        else:
            kernels.append((dict(zip(columns, cells)), number))
    return kernels, refused


def _text(lines: list[str]) -> tuple[list[tuple[dict[str, str], int]], Refused]:
    refused = Refused()
    kernels: list[tuple[dict[str, str], int]] = []
    block: Optional[dict[str, str]] = None  # noqa: UP045 - ansible-test's pylint reads module_utils as older Python
    continued = False
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if not stripped or set(stripped) == {"="}:
            continue
        if stripped.startswith("Problem ID:"):
            block = {"Problem": stripped.partition(":")[2].strip()}
            kernels.append((block, number))
            continued = False
            continue
        if block is None:
            continue   # the profiler's banner before the first problem
        if continued:
            block["Arguments"] += " " + stripped.rstrip("\\").strip()
            continued = stripped.endswith("\\")
            continue
        pair = _KEY.fullmatch(line)
        if pair is None:
            refused.add(number, "not a `key: value` line of a Problem block", line)
            continue
        key, value = pair[1].strip(), pair[2].strip()
        block[key] = value.rstrip("\\").strip() if key == "Arguments" else value
        continued = key == "Arguments" and value.endswith("\\")
    for block, _number in kernels:
        math = _MATH.fullmatch(block.get("Math", ""))
        block["GFLOPs"] = math[1] if math else block.get("Math", "")
    return kernels, refused


def _row(node: str, sample: int, fields: dict[str, str]) -> Row | str:
    """The kernel's row, or why its fields do not read."""
    disposition = fields.get("Disposition", "").strip().lower().replace(" ", "_")
    if disposition not in DISPOSITIONS:
        return f"Disposition {fields.get('Disposition')!r} is not one of {', '.join(DISPOSITIONS)}"
    figure = fields.get("GFLOPs", "").strip()
    if not _NUMBER.fullmatch(figure):
        return f"the figure {figure!r} is not GFLOP/s"
    status = fields.get("Status", "").strip()
    outcome = DISPOSITIONS[disposition]
    if status.lower() != "success" and outcome != "skip":
        outcome = "fail"
    shape = " ".join(f"{k}={fields[k]}" for k in ("m", "n", "k", "A", "B", "C") if fields.get(k))
    if not shape:
        shape = " ".join(w[2:] for w in fields.get("Arguments", "").split()
                         if w.startswith(("--m=", "--n=", "--k=", "--A=", "--B=", "--C=")))
    runtime = fields.get("Runtime", "").replace(" ms", "")
    detail = "; ".join(part for part in (
        f"problem {fields.get('Problem', '?')}", shape, f"Disposition {fields['Disposition'].strip()}",
        f"Status {status}", f"runtime {runtime} ms" if runtime else "",
        "the GPU index is not printed (cutlass_profiler --device, 0 by default)") if part)
    return Row(node, "gpu", None, None, fields.get("Operation", "").strip() or TOOL, "tflops",
               round(float(figure) / 1000, 6), "TFLOPS", outcome, detail, sample)
