"""gpu-burn's output (wilicc/gpu-burn, gpu_burn-drv.cpp) read into rows: its verdict per GPU, and its progress.

gpu-burn judges correctness only: after `Tested N GPUs:` it prints `GPU i: OK|FAULTY` per GPU (FAULTY: its
compare kernel found a wrong element at some point, or the GPU's process died), the verdict row (`result`, no
figure). Its progress lines, overwritten with `\\r` on a terminal (split here), print per GPU the products done, the
Gflop/s of the last interval (a row: `tflops`, in TFLOPS), errors since the last summary (`(WARNING!)`, or
`(DIED!)` for a process that failed), temperatures and, in newer versions, power. GPU i is the i-th process: the
GPU of that index, or with `-i N` (one process) the device `Initialized device N` names. UUIDs come from the
`nvidia-smi -L` lines gpu-burn prints first.

Strict: a line with `proc'd:` that is not a progress line, a `Tested` header or a verdict line that does not
read, is refused. No verdict (the log ends before gpu-burn did) or fewer verdict lines than GPUs tested is a
partial read, and the GPUs without a verdict lack evidence.
"""
from __future__ import annotations

import re
from typing import Optional

from .dcgm_results import UnreadableOutput
from .dcgm_verdict import Options
from .rows import Row
from .tool_rows import Refused, joined, judged

TOOL = "gpu-burn"
_LIST = re.compile(r"GPU (\d+): (.+) \(UUID: (GPU-[0-9a-fA-F-]+)\)")
_INIT = re.compile(r"Initialized device (\d+) with .*using (FLOATS|DOUBLES)(, using Tensor Cores)?")
_PROGRESS = re.compile(r"(\d+(?:\.\d+)?)%\s+proc'd: (.*?)\s+errors: (.*?)\s+temps: (.*?)(?:\s+power: (.*?))?\s*")
_PROC = r"(-?\d+) \((-?nan|-?inf|\d+(?:\.\d+)?) Gflop/s\)"
_ERRORS = r"(-?\d+)\s*(?:\((WARNING!|DIED!)\))?"
_TEMP = r"(\d+) C|--"
_POWER = r"(\d+) W|--"
_TESTED = re.compile(r"Tested (\d+) GPUs:")
_VERDICT = re.compile(r"\s*GPU (\d+): (OK|FAULTY)")


def _items(pattern: str, text: str) -> Optional[list[re.Match[str]]]:  # noqa: UP045 - module_utils typing
    """The items of one section (`item - item ...`), None when the section is not exactly such a list."""
    if not re.fullmatch(rf"(?:{pattern})(?:\s*- (?:{pattern}))*", text.strip()):
        return None
    return list(re.finditer(pattern, text))


def read(text: str, options: Options) -> dict:
    lines = [piece for line in text.split("\n") for piece in line.split("\r")]
    refused = Refused()
    uuids: dict[int, str] = {}
    devices: list[int] = []
    precision = ""
    progress: list[list[tuple[Optional[float], bool, str]]] = []  # noqa: UP045 - as above
    tested: Optional[int] = None  # noqa: UP045 - as above
    verdicts: dict[int, str] = {}
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        listed, init = _LIST.fullmatch(stripped), _INIT.match(stripped)
        if tested is None and listed:
            uuids[int(listed[1])] = listed[3]
        elif init:
            devices.append(int(init[1]))
            precision = init[2] + (" with Tensor Cores" if init[3] else "")
        elif "proc'd:" in line:
            parsed = _progress(stripped)
            if isinstance(parsed, str):
                refused.add(number, parsed, line)
            else:
                progress.append(parsed)
        elif stripped.startswith("Tested "):
            header = _TESTED.fullmatch(stripped)
            if header is None or tested is not None:
                refused.add(number, "not one `Tested N GPUs:` header", line)
            else:
                tested = int(header[1])
        elif tested is not None and stripped.startswith("GPU "):
            verdict = _VERDICT.fullmatch(line)
            if verdict is None or int(verdict[1]) >= tested or int(verdict[1]) in verdicts:
                refused.add(number, f"not a verdict `GPU i: OK|FAULTY` of GPU 0-{tested - 1} once", line)
            else:
                verdicts[int(verdict[1])] = verdict[2]
    if not progress and tested is None:
        raise UnreadableOutput(refused.first or "no gpu-burn progress line (proc'd: ...) and no `Tested N GPUs:` "
                                                "verdict: not gpu-burn output")
    # One process with `-i N`: GPU 0 of the output is device N.
    shift = devices[0] if len(devices) == 1 and _clients(progress, tested) == 1 else 0
    rows = _progress_rows(progress, options.node, shift, uuids)
    for gpu, word in sorted(verdicts.items()):
        rows.append(Row(options.node, "gpu", gpu + shift, uuids.get(gpu + shift), TOOL, "result", word, None,
                        "pass" if word == "OK" else "fail",
                        f"gpu-burn's verdict{f' ({precision})' if precision else ''}: {word}"
                        + (" (its compare kernel found wrong results, or its process died)" if word == "FAULTY"
                           else "")))
    partial = joined(refused.reason(), _no_verdict(tested, verdicts))
    return {"format_version": TOOL, **judged(rows, partial, options, TOOL, "result")}


def _clients(progress: list[list[tuple[Optional[float], bool, str]]],  # noqa: UP045 - as above
             tested: Optional[int]) -> int:  # noqa: UP045 - as above
    return tested if tested is not None else len(progress[-1]) if progress else 0


def _no_verdict(tested: Optional[int], verdicts: dict[int, str]) -> Optional[str]:  # noqa: UP045 - as above
    if tested is None:
        return "no `Tested N GPUs:` verdict: the log ends before gpu-burn did"
    if len(verdicts) < tested:
        return f"{len(verdicts)} of the {tested} GPUs tested have a verdict line"
    return None


def _progress(line: str) -> list[tuple[Optional[float], bool, str]] | str:  # noqa: UP045 - as above
    """Per GPU (TFLOPS or None, whether the interval failed, the detail), or why the line is not a progress
    line."""
    match = _PROGRESS.fullmatch(line)
    if match is None:
        return "not a progress line (<n>%  proc'd: ... errors: ... temps: ...)"
    sections = {"proc'd": (_PROC, match[2]), "errors": (_ERRORS, match[3]), "temps": (_TEMP, match[4])}
    if match[5] is not None:
        sections["power"] = (_POWER, match[5])
    items = {name: _items(pattern, text) for name, (pattern, text) in sections.items()}
    for name, found in items.items():
        if found is None:
            return f"its {name} section is not a list of the GPUs' figures"
    counts = {len(found or []) for found in items.values()}
    if len(counts) != 1:
        return "its sections name different numbers of GPUs"
    out = []
    for i, proc in enumerate(items["proc'd"] or []):
        error = (items["errors"] or [])[i]
        died = proc[1] == "-1" or error[2] == "DIED!"
        value = None if died or not proc[2][-1].isdigit() else float(proc[2]) / 1000
        temp = (items["temps"] or [])[i][0]
        power = f"; power {(items['power'] or [])[i][0]}" if "power" in items else ""
        note = "DIED!" if died else f"errors {error[1]}" + (" (WARNING!)" if error[2] else "")
        out.append((value, died or int(error[1]) != 0,
                    f"processed {proc[1]}; {note}; temperature {temp}{power}; {match[1]}% of the run"))
    return out


def _progress_rows(progress: list[list[tuple[Optional[float], bool, str]]], node: str,  # noqa: UP045
                   shift: int, uuids: dict[int, str]) -> list[Row]:
    return [Row(node, "gpu", i + shift, uuids.get(i + shift), TOOL, "tflops", value, "TFLOPS",
                "fail" if bad else "pass", detail, sample)
            for sample, line in enumerate(progress) for i, (value, bad, detail) in enumerate(line)]
