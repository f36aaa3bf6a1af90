"""What one nccl-tests run prints in a log style (`log_style`): the NCCL INFO lines of its ranks (`nccl_info`),
its table (`nccl_tables`), perhaps a second test after it, each line behind its rank's launcher prefix.

nccl-tests prints its table from rank 0 only, after every rank's communicator is made, and its summary after
they are destroyed (common.cu, run()). A log of two tests is a script that runs one after the other under
`set -x`: the shell traces each command (with no prefix: no rank printed it) and each test starts NCCL again.
"""
from __future__ import annotations

import shlex
from dataclasses import dataclass
from datetime import datetime

from . import launcher_prefix, nccl_info, nccl_tables
from .log_style import Style
from .nccl_info import Process


@dataclass(frozen=True)
class Run:
    collective: str
    smallest: int
    largest: int
    peak_bus: float          # the busbw at the largest size
    network: str             # the network NCCL uses (`nccl_info.network_lines`)
    nics: int                # the RDMA devices of a node
    processes: list[Process]
    command: list[str]       # the container's command and args
    mnnvl: bool = False      # the communicator runs over multi-node NVLink


def lines(run: Run, style: Style, when: datetime) -> list[str]:
    tests = (run.collective,) if style.nccl_extra_test == "none" else (run.collective, style.nccl_extra_test)
    printed: list[tuple[Process | None, str]] = []
    for collective in tests:
        if len(tests) > 1:
            words = [word.replace(f"{run.collective}_perf", f"{collective}_perf") for word in run.command]
            printed.append((None, f"+ {shlex.join(words)}"))
        printed += _test(run, collective, style, tests, when)
    return [launcher_prefix.prefix(style.nccl_prefix, process.rank if process else None, len(run.processes)) + text
            for process, text in printed]


def _test(run: Run, collective: str, style: Style, tests: tuple[str, ...],
          when: datetime) -> list[tuple[Process | None, str]]:
    ranks = sum(p.gpus for p in run.processes)
    table = nccl_tables.table(style.nccl_table, collective, run.smallest, run.largest, run.peak_bus, ranks, tests)
    first = run.processes[0]
    body = [(first, line) for line in table.body]
    summary = [(first, line) for line in table.summary]
    if style.transport == "brief":
        return [(first, f"nccl-w-0:211:211 [0] NCCL INFO Using network {run.network}"),
                *nccl_info.brief_mnnvl_lines(run.processes, run.mnnvl), *body, *summary]
    return [*nccl_info.init_lines(run.processes, run.network, run.nics, when, run.mnnvl), *body,
            *nccl_info.destroy_lines(run.processes), *summary]
