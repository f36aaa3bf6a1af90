"""The table `dcgmi diag` prints without --json, read into a DiagReading, as DCGM 3.x and 4.x print it.

Followed from NVIDIA/DCGM's dcgmi/Diag.cpp (docs/evidence-check.md names the tags and commits). Every row is
`| <name, 25 wide> | <text, 46 wide> |` (the DIAG_DATA stencil); sections open with `|-----  Metadata  ---`,
`|-----  Deployment  ---` and `+-----  Hardware  ---` style borders. A message (`Error`, `Warning`, `Info`; 4.x
`Warning: GPU0`) is cut into 45-character pieces, one per row, the name only on the first (DisplayVerboseInfo):
pieces are joined exactly, so a space at a cut is kept. A test's verdict is on its own row:

- DCGM 3.x: `Pass`/`Fail` for a deployment check (of the node), else `Pass - All`, `Fail - GPUs: 0, 3`, one row
  per result word (HelperDisplayGpuResults), the GPUs named by index.
- DCGM 4.x: the test's word (`Pass`), then one `GPU0: Pass` row per entity (HelperDisplayEntityResults).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from .dcgm_results import STATUSES, DiagReading, DiagResult, UnreadableOutput, outcome_of
from .rows import RANK

NAME = slice(2, 27)  # the name cell of DIAG_DATA
TEXT = slice(30, 76)  # the text cell: 46 wide, a message piece is at most 45 (DATA_INFO_TAG_LEN)
PIECE = 45
SECTION = re.compile(r"^[|+]-----  (\w+)  -+\+-+[|+]\s*$")
BORDER = re.compile(r"^\+[-=]+\+[-=]+\+\s*$")
ROW = re.compile(r"^\| .{25} \| .{46} \|\s*$")
ENTITY = re.compile(r"^([A-Za-z]+)(\d+): (Pass|Fail|Warn|Skip|Not Run)$")
GPU_LIST = re.compile(r"^(Pass|Fail|Warn|Skip) - (?:All|GPUs?: ([\d, ]+))$")
MESSAGE = re.compile(r"^(Error|Warning|Info)(?:: ([A-Za-z]+)(\d+))?$")
# Lines dcgmi prints outside the table (Diag.cpp RunStartDiag, HelperDisplayAsCli), and a pasted command line.
ITERATION = re.compile(r"^Running iteration (\d+) of \d+\.\.\.$")
AROUND = re.compile(r"^(Successfully ran diagnostic for group\.|Passed all \d+ runs of the diagnostic|.*dcgmi diag.*)$")


@dataclass
class _Test:
    """A test's rows while they are read."""

    category: str
    name: str
    status: str
    per_gpu: dict[int, str] = field(default_factory=dict)
    node_messages: list[str] = field(default_factory=list)
    gpu_messages: dict[int, list[str]] = field(default_factory=dict)


@dataclass
class _Message:
    """A message being read: where it goes (a GPU, or the test when None) and its pieces (raw text cells)."""

    kind: str
    gpu: int | None
    pieces: list[str]

    def text(self) -> str:
        # Every piece but the last is exactly 45 characters (trailing spaces included); the last was trimmed.
        return "".join(p[:PIECE] for p in self.pieces[:-1]) + self.pieces[-1].rstrip()


class _Table:
    """The reading of one output, row by row."""

    def __init__(self) -> None:
        self.reading = DiagReading("")
        self.section = ""
        self.sample = 0
        self.test: _Test | None = None
        self.message: _Message | None = None
        self.started = False
        self.v3 = False

    def line(self, number: int, line: str) -> None:
        if not line.strip():
            return
        if BORDER.match(line) or SECTION.match(line):
            self._border(line)
            return
        if ROW.match(line):
            self.started = True
            self._row(number, line)
            return
        self._outside(number, line)

    def _border(self, line: str) -> None:
        self.started = True
        if found := SECTION.match(line):
            self._close()
            self.section = found.group(1)

    def _outside(self, number: int, line: str) -> None:
        text = line.strip()
        if found := ITERATION.match(text):
            self._close()
            self.sample = int(found.group(1)) - 1
        elif text.startswith(("Error:", "Aborting the iterative runs")):
            self.reading.runtime_error = text  # HelperDisplayFailureMessage: the run did not happen (or stopped)
        elif not AROUND.match(text):
            raise _unreadable(number, line)

    def _row(self, number: int, line: str) -> None:
        name, cell = line[NAME].rstrip(), line[TEXT]
        text = cell.strip()
        if self.section in ("", "Metadata"):
            self._metadata(name, text)
        elif name:
            self._named(number, line, name, cell)
        elif self.message is not None and not (ENTITY.match(text) or GPU_LIST.match(text)):
            self.message.pieces.append(cell)
        else:
            self._verdict_row(number, line, text)

    def _metadata(self, name: str, text: str) -> None:
        if name == "DCGM Version":
            self.reading.dcgm_version = text
            self.v3 = text.startswith(("2.", "3."))
        elif name == "Driver Version Detected":
            self.reading.driver_version = text
        elif name == "GPU Device IDs Detected":
            self.reading.gpus = list(range(len([i for i in text.split(",") if i.strip()])))

    def _named(self, number: int, line: str, name: str, cell: str) -> None:
        self._end_message()
        if found := MESSAGE.match(name):
            if self.test is None:
                raise _unreadable(number, line)
            gpu = int(found.group(3)) if found.group(2) == "GPU" else None
            self.message = _Message(found.group(1), gpu, [cell])
            return
        self._close()
        text = cell.strip()
        found = GPU_LIST.match(text)
        status = found.group(1) if found else text
        outcome_of(status, f"line {number}: {line.strip()!r}")
        self.test = _Test(self.section, name, status)
        if found:
            self._gpu_list(self.test, found)

    def _verdict_row(self, number: int, line: str, text: str) -> None:
        """A row without a name: a 4.x `GPU0: Pass`, or a 3.x `Fail - GPU: 3` after the test's first verdict."""
        if self.test is None:
            raise _unreadable(number, line)
        if (found := ENTITY.match(text)) and found.group(1) == "GPU":
            self.test.per_gpu[int(found.group(2))] = found.group(3)
        elif found:  # a CPU or other entity: the node's, named
            self.test.node_messages.append(f"{found.group(1)} {found.group(2)}: {found.group(3)}")
        elif found := GPU_LIST.match(text):
            self._gpu_list(self.test, found)
        else:
            raise _unreadable(number, line)

    def _gpu_list(self, test: _Test, found: re.Match[str]) -> None:
        self.v3 = True
        gpus = [int(g) for g in found.group(2).replace(" ", "").split(",") if g] if found.group(2) else self.reading.gpus
        for gpu in gpus:
            test.per_gpu[gpu] = found.group(1)
        # The test's word is the worst of its lists: a `Warning` under it belongs to the failing GPUs' results.
        if RANK[STATUSES[found.group(1)]] > RANK[STATUSES[test.status]]:
            test.status = found.group(1)

    def _end_message(self) -> None:
        if self.message is None or self.test is None:
            self.message = None
            return
        # An Info line is kept marked as such: it is context, not a reason the test failed.
        text = f"Info: {self.message.text()}" if self.message.kind == "Info" else self.message.text()
        if self.message.gpu is None:
            self.test.node_messages.append(text)
        else:
            self.test.gpu_messages.setdefault(self.message.gpu, []).append(text)
        self.message = None

    def _close(self) -> None:
        """The test read so far, as results: one per GPU row, and one of the node for a deployment check of 3.x
        (no GPU rows) or for messages that name no GPU row."""
        self._end_message()
        test, self.test = self.test, None
        if test is None:
            return
        out = self.reading.results
        for gpu, status in sorted(test.per_gpu.items()):
            out.append(DiagResult(test.category, test.name, gpu, status, tuple(test.gpu_messages.get(gpu, ())),
                                  (), self.sample))
        for gpu in sorted(set(test.gpu_messages) - set(test.per_gpu)):
            out.append(DiagResult(test.category, test.name, gpu, test.status, tuple(test.gpu_messages[gpu]), (),
                                  self.sample))
        if not test.per_gpu or test.node_messages:
            out.append(DiagResult(test.category, test.name, None, test.status, tuple(test.node_messages), (),
                                  self.sample))

    def finish(self) -> DiagReading:
        self._close()
        if not self.started and self.reading.runtime_error is None:
            raise UnreadableOutput("no dcgmi diag table in the output (its `| Diagnostic | Result |` rows)")
        self.reading.layout = "DCGM 3.x table" if self.v3 else "DCGM 4.x table"
        return self.reading


def _unreadable(number: int, line: str) -> UnreadableOutput:
    return UnreadableOutput(f"line {number}: cannot read {line.strip()[:120]!r} as a row of the dcgmi diag table")


def read_text(text: str) -> DiagReading:
    """The reading of a `dcgmi diag` table; UnreadableOutput with the first line it could not read."""
    table = _Table()
    for number, line in enumerate(text.splitlines(), 1):
        table.line(number, line.rstrip("\r"))
    return table.finish()
