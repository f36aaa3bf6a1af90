"""The NCCL_DEBUG=INFO lines of an nccl-tests run (NCCL 2.21.5), of every process and rank: what each process
prints when it finds its network, what each rank prints when its communicator is made and destroyed.

Each line is `host:pid:tid [cudaDev] NCCL INFO ...` (debug.cc). A process prints `Bootstrap : Using` and its
network's lines once (an MPI rank per GPU, or one process driving all a node's GPUs, nccl-tests `-g`); each rank
prints `Using network <name>` (init.cc). The networks: the internal IB transport (`NET/IB : Using [0]mlx5_0:1/IB
... [RO]; OOB eth0:<ip><0>`, net_ib.cc, after net.cc finds no plugin); AWS's aws-ofi-nccl plugin (1.7.4, which
names itself `AWS Libfabric`: its `NET/OFI` lines); GCP's FasTrak plugin (its abseil-stamped `NET/FasTrak` line);
and `Socket`: no plugin, `NET/IB : No device found.`, then `NET/Socket : Using [0]eth0:<ip><0>`, as a run whose
RDMA devices are missing falls back to TCP without a warning.

On GPUs with a fabric (GB200/GB300) each rank prints its NVML fabric state (`MNNVL busId ... state 3`); every
communicator prints `comm ... nNodes N localRanks L localRank l MNNVL 0|1`, and an enabled one its clique first.
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass
from datetime import datetime

PID = 211                 # a process's pid; an MPI rank's is this plus its GPU
VERSION = "NCCL version 2.21.5+cuda12.4"
# The PCI bus of each GPU of an HGX board (busId as NCCL prints it: %lx).
BUS_IDS = ("18000", "2a000", "3a000", "5d000", "9a000", "ab000", "ba000", "db000")
FABRIC_UUID = "a3b1c2d4e5f60718.293a4b5c6d7e8f90"   # the NVLink domain's cluster UUID (one for every clique)
FABRIC_COMPLETED = 3
NO_PLUGIN = ("NET/Plugin: No plugin found (libnccl-net.so)",
             "NET/Plugin: Plugin load returned 2 : libnccl-net.so: cannot open shared object file: No such file or "
             "directory : when loading libnccl-net.so",
             "NET/Plugin: Using internal network plugin.")


@dataclass(frozen=True)
class Process:
    """One process of the run: its pod's hostname and IP, its first rank, the first of its node's GPUs it drives
    and how many it drives."""

    host: str
    ip: str
    rank: int
    device: int
    gpus: int
    fabric: tuple[int, int] | None = None   # (cliqueId, NVML fabric state) of a GPU with a fabric, else None

    def prefix(self, gpu: int) -> str:
        """What NCCL prints before a line about the process's `gpu`-th GPU."""
        return f"{self.host}:{PID + self.device}:{PID + self.device} [{self.device + gpu}] NCCL INFO "


def network_lines(network: str, process: Process, nics: int, when: datetime) -> list[str]:
    """What one process prints while it finds `network` (`Socket`, `IB`, `AWS Libfabric` or `FasTrak`)."""
    if network == "AWS Libfabric":
        return ["NET/OFI Initializing aws-ofi-nccl 1.7.4-aws", "NET/OFI Using CUDA runtime version 12040",
                "NET/OFI Configuring AWS-specific options", f"NET/OFI Selected Provider is efa (found {nics} nics)",
                "NET/OFI Using transport protocol RDMA"]
    if network == "FasTrak":  # abseil's FormatTime: RFC 3339, the seconds' fraction only as long as it needs
        fraction = f".{when.microsecond:06d}".rstrip("0").rstrip(".")
        stamp = f"{when:%Y-%m-%dT%H:%M:%S}{fraction}{when:%z}"
        return [f"NET/FasTrak {stamp[:-2]}:{stamp[-2:]}: Initializing network FasTrak, version: 1.0.17"]
    if network == "Socket":
        return [*NO_PLUGIN, "NET/IB : No device found.", f"NET/Socket : Using [0]eth0:{process.ip}<0>"]
    hcas = " ".join(f"[{i}]mlx5_{i}:1/IB" for i in range(nics))
    return [*NO_PLUGIN, f"NET/IB : Using {hcas} [RO]; OOB eth0:{process.ip}<0>"]


def init_lines(processes: list[Process], network: str, nics: int, when: datetime,
               mnnvl: bool = False) -> list[tuple[Process, str]]:
    """Every process's init lines, interleaved line by line as processes starting together print them, then
    each rank's MNNVL clique (when on) and communicator lines and `Init COMPLETE`; the first rank's process
    also prints the NCCL version."""
    each = []
    for process in processes:
        own = [process.prefix(0) + f"Bootstrap : Using eth0:{process.ip}<0>",
               *(process.prefix(0) + line for line in network_lines(network, process, nics, when)),
               *(process.prefix(gpu) + f"Using network {network}" for gpu in range(process.gpus)),
               *(process.prefix(gpu) + fabric_line(process, gpu) for gpu in range(process.gpus) if process.fabric)]
        each.append([(process, line) for line in (own[:1] + [VERSION] + own[1:] if process.rank == 0 else own)])
    interleaved = [each[i][n] for n in range(max(map(len, each))) for i in range(len(each)) if n < len(each[i])]
    clique = _comm_lines(processes, "MNNVL 1 cliqueId {clique:x} cliqueSize {ranks} cliqueRank {rank}") if mnnvl else []
    return [*interleaved, *clique, *comm_lines(processes, mnnvl),
            *_comm_lines(processes, "ncclCommInitRank comm {comm} rank {rank} nranks {ranks} cudaDev {dev} nvmlDev "
                                    "{dev} busId {bus} commId {comm_id} - Init COMPLETE")]


def fabric_line(process: Process, gpu: int) -> str:
    """What a rank prints of its GPU's fabric (NVML): a fabric not completed has no cluster UUID nor clique."""
    clique, state = process.fabric or (0, 0)
    uuid, clique = (FABRIC_UUID, clique) if state == FABRIC_COMPLETED else ("0.0", 0)
    return (f"MNNVL busId 0x{BUS_IDS[(process.device + gpu) % len(BUS_IDS)]} fabric UUID {uuid} cliqueId 0x{clique:x} "
            f"state {state} healthMask 0x0")


def brief_mnnvl_lines(processes: list[Process], mnnvl: bool) -> list[tuple[Process, str]]:
    """The brief style's share of them, for a run across nodes with a fabric: the fabric line of each node whose
    fabric is not completed (the first rank of the node prints it), and rank 0's communicator line."""
    if len({p.host for p in processes}) < 2 or not any(p.fabric for p in processes):
        return []
    firsts = {p.host: p for p in reversed(processes)}.values()
    unready = [(p, p.prefix(0) + fabric_line(p, 0)) for p in firsts if (p.fabric or (0, 0))[1] != FABRIC_COMPLETED]
    return [*sorted(unready, key=lambda pair: pair[0].rank), comm_lines(processes, mnnvl)[0]]


def comm_lines(processes: list[Process], mnnvl: bool) -> list[tuple[Process, str]]:
    """Each rank's communicator line: its node count, its node's ranks and whether MNNVL is on."""
    return _comm_lines(processes, "comm {comm} rank {rank} nRanks {ranks} nNodes {nodes} localRanks {local} "
                                  "localRank {dev} MNNVL {mnnvl}", mnnvl=int(mnnvl))


def destroy_lines(processes: list[Process]) -> list[tuple[Process, str]]:
    return _comm_lines(processes, "comm {comm} rank {rank} nranks {ranks} cudaDev {dev} busId {bus} - Destroy COMPLETE")


def _comm_lines(processes: list[Process], text: str, **fields: object) -> list[tuple[Process, str]]:
    """`text` per rank, formatted with the rank's figures (and `fields`): its node's ranks are `local`."""
    ranks = sum(p.gpus for p in processes)
    local = dict.fromkeys((p.host for p in processes), 0)
    for p in processes:
        local[p.host] += p.gpus
    comm_id = f"0x{zlib.crc32(processes[0].host.encode()):08x}{ranks:08x}"
    out = []
    for process in processes:
        for gpu in range(process.gpus):
            dev, rank = process.device + gpu, process.rank + gpu
            out.append((process, process.prefix(gpu) + text.format(
                comm=f"0x{0x55d0c3a00000 + 0x10000 * rank:x}", rank=rank, ranks=ranks, dev=dev,
                bus=BUS_IDS[dev % len(BUS_IDS)], comm_id=comm_id, clique=(process.fabric or (0, 0))[0],
                local=local[process.host], nodes=len(local), **fields)))
    return out
