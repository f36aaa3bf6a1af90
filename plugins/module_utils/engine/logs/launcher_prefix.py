"""The prefixes launchers put before each line of their ranks, taken off before a line is read.

`srun -l` writes ` 0: ` (the task number, padded to the widest), OpenMPI's `--tag-output` writes
`[1,0]<stdout>:` (job and rank), torchrun's `--tee` and its kin write `[rank0]:` or `[default0]:`. The prefix
names the stream the line came from: lines of several ranks interleave, and each stream is read on its own.
"""
from __future__ import annotations

import re

_PREFIXES = (
    (re.compile(r"\[(\d+),(\d+)\]<(?:stdout|stderr|stddiag)>: ?", re.ASCII), "mpi"),
    (re.compile(r"\[(?:rank|default)?(\d+)\]: ?", re.ASCII), "rank"),
    (re.compile(r" *(\d+): ", re.ASCII), "task"),
)


def split_prefix(line: str) -> tuple[str, str]:
    """(the stream, e.g. `mpi:1,0`, `rank:0`, `task:0` or "" without a prefix; the line without its prefix)."""
    for pattern, kind in _PREFIXES:
        match = pattern.match(line)
        if match:
            return f"{kind}:{','.join(match.groups())}", line[match.end():]
    return "", line
