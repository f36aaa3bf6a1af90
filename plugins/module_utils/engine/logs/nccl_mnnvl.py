"""What NCCL's INFO lines say of multi-node NVLink (MNNVL) on GB200/GB300 (ours, beyond NVCRE).

NCCL turns MNNVL off without a warning when one rank's GPU fabric is not fully initialised, or the ranks sit in
different cliques (mnnvl.cc, ncclMnnvlCheck): the group then runs over the network, and its `Using network IB`
line reads as it always does. What tells is each communicator's `comm %p rank %d nRanks %d nNodes %d localRanks
%d localRank %d MNNVL %d` (NCCL 2.20+), an enabled one's `MNNVL 1 cliqueId %x cliqueSize %d cliqueRank %d`, the
channels `via P2P/MNNVL`, and each rank's `MNNVL busId 0x%lx fabric UUID %lx.%lx cliqueId 0x%x state %d
healthMask 0x%x` (its NVML fabric state; 3 is completed).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

_COMM = re.compile(r"\bnNodes (\d+) localRanks \d+ localRank \d+ MNNVL (\d+)\b")
_ON = re.compile(r"\bMNNVL 1 cliqueId \S+ cliqueSize\b|\bvia P2P/MNNVL\b")
_FABRIC = re.compile(r"(?:^|\s)(?P<host>[^\s:\[\]]+):\d+:\d+ \[\d+\] NCCL INFO MNNVL busId \S+ fabric UUID \S+ "
                     r"cliqueId \S+ state (?P<state>\d+)\b")
COMPLETED = 3
STATES = {0: "not supported", 1: "not started", 2: "in progress", 3: "completed"}


@dataclass
class Mnnvl:
    """What a log said of MNNVL so far."""

    multi_node: set[int] = field(default_factory=set)
    """The MNNVL values of the multi-node communicators (`nNodes` above 1)."""
    seen_on: bool = False
    not_ready: dict[str, int] = field(default_factory=dict)
    """Host -> a fabric state other than completed, as its ranks printed it."""

    def read(self, line: str) -> None:
        if "MNNVL" not in line:
            return
        if (comm := _COMM.search(line)) and int(comm.group(1)) > 1:
            self.multi_node.add(int(comm.group(2)))
        if _ON.search(line):
            self.seen_on = True
        if (fabric := _FABRIC.search(line)) and int(fabric["state"]) != COMPLETED:
            self.not_ready[fabric["host"]] = int(fabric["state"])

    @property
    def enabled(self) -> bool | None:
        """False when a multi-node communicator ran without MNNVL, True when the log shows it on, None when the
        log does not say (no NCCL_DEBUG=INFO, or no communicator across nodes)."""
        if 0 in self.multi_node:
            return False
        return True if self.multi_node or self.seen_on else None

    def not_ready_hosts(self) -> list[str]:
        """`host (fabric state N: not started)` for each host whose GPU fabric was not ready, sorted."""
        return [f"{host} (fabric state {state}: {STATES.get(state, 'unknown')})"
                for host, state in sorted(self.not_ready.items())]
