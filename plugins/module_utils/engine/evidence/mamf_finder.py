"""mamf-finder's summary (stas00/ml-engineering, compute/accelerator/benchmarks/mamf-finder.py) read into rows.

mamf-finder measures one GPU (its `--device`, which it does not print: GPU 0 here) over a search of GEMM shapes
and ends with one of the summaries its versions printed:
- `The best outcome was 271.2TFLOPS @ 1024x10240x5120 (MxNxK) (tried 40 shapes)` (the first versions);
- `Tried N shapes => the best outcomes were:` then `mean:`, `median:`, `max:` lines `<x> TFLOPS @ <MxNxK> (MxNxK)`
  (later ones; `arithmetic mean:` and `geometric mean:` over every shape tried follow, which are not a best);
- `MAMF (max achievable, boost burst): 842 TFLOPS @ <MxNxK> (MxNxK)  172W 1980MHz` and `MSMF (max sustainable,
  saturated): ...` (the newest), with its `note:` when the GPU's siblings sat idle (MSMF then reads high).
A row per figure: test `MAMF` (the first two formats' best, `MAMF mean`/`median`/`max` for the second), `MSMF`;
metric `tflops`; the shape, watts and MHz in the detail. mamf-finder judges nothing: the rows pass (a floor, where
the caller has one, judges them).

Strict: a line that starts like a summary line (`The best outcome was`, `Tried `, `MAMF (max`, `MSMF (max`, and the
`mean:`/`median:`/`max:` lines after `Tried`) but does not read as one is refused; its search tables and progress
lines are left alone. No summary at all is UnreadableOutput.
"""
from __future__ import annotations

import re

from .dcgm_results import UnreadableOutput
from .dcgm_verdict import Options
from .rows import Row
from .tool_rows import Refused, judged

TOOL = "mamf-finder"
_ESCAPE = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_SHAPE = r"(\d+x\d+x\d+) \(MxNxK\)"
_BEST = re.compile(rf"The best outcome was (\d+(?:\.\d+)?) ?TFLOPS @ {_SHAPE} \(tried (\d+) shapes\)")
_TRIED = re.compile(r"Tried\s+(\d+) shapes => the best outcomes were:")
_STAT = re.compile(rf"(mean|median|max):\s+(\d+(?:\.\d+)?) TFLOPS @ {_SHAPE}")
_HEADLINE = re.compile(rf"(MAMF|MSMF) \(max (?:achievable|sustainable),\s+[a-z ]+\):\s+(\d+(?:\.\d+)?) TFLOPS @ "
                       rf"{_SHAPE}(?:\s+(\d+)W (\d+)MHz)?")


def read(text: str, options: Options) -> dict:
    refused = Refused()
    figures: list[tuple[str, float, str]] = []   # (test, TFLOPS, detail)
    note: list[str] = []
    tried = False
    for number, line in enumerate((p for raw in text.split("\n") for p in raw.split("\r")), 1):
        line = _ESCAPE.sub("", line)   # mamf-finder clears its progress line with ESC[K before the summary
        stripped = line.strip()
        if stripped.startswith("The best outcome was"):
            best = _BEST.fullmatch(stripped)
            if best is None:
                refused.add(number, "not `The best outcome was <x>TFLOPS @ <MxNxK> (MxNxK) (tried N shapes)`", line)
            else:
                figures.append(("MAMF", float(best[1]), f"@ {best[2]} (MxNxK); best mean of {best[3]} shapes"))
        elif stripped.startswith("Tried "):
            tried = bool(_TRIED.fullmatch(stripped))
            if not tried:
                refused.add(number, "not `Tried N shapes => the best outcomes were:`", line)
        elif tried and stripped.startswith(("mean:", "median:", "max:")):
            stat = _STAT.fullmatch(stripped)
            if stat is None:
                refused.add(number, "not `<mean|median|max>: <x> TFLOPS @ <MxNxK> (MxNxK)`", line)
            else:
                figures.append((f"MAMF {stat[1]}", float(stat[2]), f"@ {stat[3]} (MxNxK)"))
        elif stripped.startswith(("MAMF (max", "MSMF (max")):
            head = _HEADLINE.fullmatch(stripped)
            if head is None:
                refused.add(number, "not `MAMF|MSMF (max ...): <x> TFLOPS @ <MxNxK> (MxNxK)  <W>W <MHz>MHz`", line)
            else:
                power = f"; {head[4]} W, {head[5]} MHz" if head[4] else ""
                figures.append((head[1], float(head[2]), f"@ {head[3]} (MxNxK){power}"))
        elif stripped.startswith("note:") or (note and line.startswith(" ") and stripped):
            note.append(stripped)
    if not figures:
        raise UnreadableOutput(refused.first or "no mamf-finder summary (MAMF/MSMF, `Tried N shapes`, or `The best "
                                                "outcome was`): not mamf-finder output")
    said = f"; {' '.join(note)}" if note else ""
    rows = [Row(options.node, "gpu", 0, None, test, "tflops", value, "TFLOPS", "pass",
                f"{detail}{said if test == 'MSMF' else ''}; mamf-finder does not print its device: GPU 0 assumed")
            for test, value, detail in figures]
    return {"format_version": TOOL, **judged(rows, refused.reason(), options, TOOL, "tflops")}
