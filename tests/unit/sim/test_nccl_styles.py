"""The nccl-tests logs of each log style, line for line (no cluster: tables, NCCL INFO lines and prefixes as the
agent writes them, and pods and nodes as the API serves them for the socket figures)."""
from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tests.unit.sim.nccl_groups import NOW, group, nodes, peak
from tools.sim.logs import launcher_prefix, nccl_info, nccl_output, nccl_tables, workload_logs
from tools.sim.logs.log_style import Style
from tools.sim.logs.nccl_info import Process

MIB = 1024 * 1024
TWO_WORKERS = [Process("w-0", "10.0.0.1", rank=0, device=0, gpus=1),
               Process("w-1", "10.0.0.2", rank=1, device=0, gpus=1)]
COMM_ID = "0xa80ccd8400000002"   # one communicator's id on every rank
COMMAND = ["mpirun", "-x", "NCCL_DEBUG=INFO", "/usr/local/bin/all_reduce_perf_mpi", "-b", "8", "-e", "16"]
CURRENT_HEADER = ["#       size         count      type   redop    root     time   algbw   busbw #wrong     time   "
                  "algbw   busbw #wrong",
                  "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  "
                  "(GB/s)  (GB/s)"]


def small_run(network: str = "IB", processes: tuple[Process, ...] = tuple(TWO_WORKERS)) -> nccl_output.Run:
    """An all_reduce of 8 and 16 bytes over `processes` whose busbw reaches 50 GB/s."""
    return nccl_output.Run("all_reduce", 8, 16, 50.0, network, 2, list(processes), COMMAND)


def test_no_root_prints_the_2019_all_reduce_table() -> None:
    table = nccl_tables.table("no-root", "all_reduce", 8 * MIB, 32 * MIB, 100.0, 16, ("all_reduce",))
    assert table.body + table.summary == [
        "#",
        "#                                                     out-of-place                       in-place          ",
        "#       size         count    type   redop     time   algbw   busbw  error     time   algbw   busbw  error",
        "#        (B)    (elements)                     (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       ",
        "     8388608       2097152   float     sum    393.2   21.33   40.00  2e-07    392.4   21.38   40.08  2e-07",
        "    16777216       4194304   float     sum    471.9   35.56   66.67  2e-07    470.9   35.63   66.80  2e-07",
        "    33554432       8388608   float     sum    629.1   53.33  100.00  2e-07    627.9   53.44  100.20  2e-07",
        "# Out of bounds values : 0 OK",
        "# Avg bus bandwidth    : 68.9579 ",
        "#"]


def test_no_root_all_gather_has_neither_redop_nor_root_and_counts_per_rank() -> None:
    """3 ranks: each sends size/4/3 floats, so the bytes moved (the size column, and algbw's) are a little less."""
    table = nccl_tables.table("no-root", "all_gather", 8 * MIB, 32 * MIB, 100.0, 3, ("all_gather",))
    assert table.body[1:] == [
        "#                                             out-of-place                       in-place          ",
        "#       size         count    type     time   algbw   busbw  error     time   algbw   busbw  error",
        "#        (B)    (elements)             (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       ",
        "     8388600        699050   float    139.8   60.00   40.00  0e+00    139.5   60.12   40.08  0e+00",
        "    16777212       1398101   float    167.8  100.00   66.67  0e+00    167.4  100.20   66.80  0e+00",
        "    33554424       2796202   float    223.7  150.00  100.00  0e+00    223.2  150.30  100.20  0e+00"]


def test_a_no_root_log_with_sendrecv_is_2_10_s_with_its_wider_type_and_integer_times_over_10_ms() -> None:
    largest = 16 * 1024**3
    table = nccl_tables.table("no-root", "all_reduce", largest, largest, 100.0, 16, ("all_reduce", "sendrecv"))
    assert table.body[2:] == [
        "#       size         count      type   redop     time   algbw   busbw  error     time   algbw   busbw  error",
        "#        (B)    (elements)                       (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       ",
        " 17179869184    4294967296     float     sum   322123   53.33  100.00  2e-07   321478   53.44  100.20  2e-07"]


def test_no_root_alltoall_leaves_its_redop_column_blank() -> None:
    row = nccl_tables.table("no-root", "alltoall", 32 * MIB, 32 * MIB, 100.0, 2, ("alltoall",)).body[-1]
    assert row == ("    33554432       4194304   float            167.8  200.00  100.00  0e+00    167.4  200.40  100.20"
                   "  0e+00")


@pytest.mark.parametrize("generation", ["current", "no-root"])
def test_every_generation_averages_every_busbw_it_printed(generation: str) -> None:
    table = nccl_tables.table(generation, "all_reduce", 8, 16 * 1024**3, 360.0, 16, ("all_reduce",))
    header = next(line.lstrip("#").split() for line in table.body if " busbw " in line)
    buses = [float(row.split()[i]) for row in table.body if not row.startswith("#")
             for i, column in enumerate(header) if column == "busbw"]
    assert float(table.summary[1].split(":")[1]) == pytest.approx(sum(buses) / len(buses), abs=0.005)
    assert buses[-2] == 360.0


def test_current_sendrecv_prints_its_busbw_as_its_algbw() -> None:
    assert nccl_tables.table("current", "sendrecv", 32 * MIB, 32 * MIB, 100.0, 16, ("sendrecv",)).body[-1] == (
        "    33554432       8388608     float    none      -1   365.54  100.00  100.00      0   364.81  100.20  100.20"
        "      0")


@pytest.mark.parametrize(("style", "rank", "tasks", "prefix"), [
    ("srun", 0, 16, " 0: "), ("srun", 15, 16, "15: "), ("srun", 3, 8, "3: "), ("srun", 0, 1, "0: "),
    ("tag-output", 12, 16, "[1,12]<stdout>:"), ("rank", 7, 16, "[rank7]:"), ("none", 7, 16, ""), ("srun", None, 16, ""),
])
def test_launcher_prefixes(style: str, rank: int | None, tasks: int, prefix: str) -> None:
    assert launcher_prefix.prefix(style, rank, tasks) == prefix


def test_two_tests_each_traced_by_the_shell_behind_srun_labels() -> None:
    reduced = ["           8             2     float     sum      -1    30.00   25.00   25.00      0    29.94   "
               "25.05   25.05      0",
               "          16             4     float     sum      -1    30.00   50.00   50.00      0    29.94   "
               "50.10   50.10      0"]
    gathered = ["           8             2     float    none      -1    30.00   50.00   25.00      0    29.94   "
                "50.10   25.05      0",
                "          16             4     float    none      -1    30.00  100.00   50.00      0    29.94  "
                "100.20   50.10      0"]
    summary = ["# Out of bounds values : 0 OK", "# Avg bus bandwidth    : 37.5375 "]
    assert nccl_output.lines(small_run(), Style(nccl_prefix="srun", nccl_extra_test="all_gather"), NOW) == [
        "+ mpirun -x NCCL_DEBUG=INFO /usr/local/bin/all_reduce_perf_mpi -b 8 -e 16",
        *(f"0: {line}" for line in ["nccl-w-0:211:211 [0] NCCL INFO Using network IB", *CURRENT_HEADER, *reduced,
                                    *summary]),
        "+ mpirun -x NCCL_DEBUG=INFO /usr/local/bin/all_gather_perf_mpi -b 8 -e 16",
        *(f"0: {line}" for line in ["nccl-w-0:211:211 [0] NCCL INFO Using network IB", *CURRENT_HEADER, *gathered,
                                    *summary])]


def test_platform_prints_every_rank_s_init_lines_interleaved_and_rank_0_s_table_between_them() -> None:
    no_plugin = ["NET/Plugin: No plugin found (libnccl-net.so)",
                 "NET/Plugin: Plugin load returned 2 : libnccl-net.so: cannot open shared object file: No such file "
                 "or directory : when loading libnccl-net.so", "NET/Plugin: Using internal network plugin."]
    w0, w1 = "[1,0]<stdout>:w-0:211:211 [0] NCCL INFO ", "[1,1]<stdout>:w-1:211:211 [0] NCCL INFO "
    comm = "0x55d0c3a{}0000 rank {} nranks 2 cudaDev 0"
    assert nccl_output.lines(small_run(), Style(nccl_prefix="tag-output", transport="platform"), NOW) == [
        w0 + "Bootstrap : Using eth0:10.0.0.1<0>",
        w1 + "Bootstrap : Using eth0:10.0.0.2<0>",
        "[1,0]<stdout>:NCCL version 2.21.5+cuda12.4",
        *(worker + line for line in no_plugin for worker in (w1, w0)),
        w1 + "NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [RO]; OOB eth0:10.0.0.2<0>",
        w0 + "NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [RO]; OOB eth0:10.0.0.1<0>",
        w1 + "Using network IB",
        w0 + "Using network IB",
        w0 + "comm 0x55d0c3a00000 rank 0 nRanks 2 nNodes 2 localRanks 1 localRank 0 MNNVL 0",
        w1 + "comm 0x55d0c3a10000 rank 1 nRanks 2 nNodes 2 localRanks 1 localRank 0 MNNVL 0",
        w0 + f"ncclCommInitRank comm {comm.format(0, 0)} nvmlDev 0 busId 18000 commId {COMM_ID} - Init COMPLETE",
        w1 + f"ncclCommInitRank comm {comm.format(1, 1)} nvmlDev 0 busId 18000 commId {COMM_ID} - Init COMPLETE",
        *(f"[1,0]<stdout>:{line}" for line in CURRENT_HEADER),
        "[1,0]<stdout>:           8             2     float     sum      -1    30.00   25.00   25.00      0    29.94   "
        "25.05   25.05      0",
        "[1,0]<stdout>:          16             4     float     sum      -1    30.00   50.00   50.00      0    29.94   "
        "50.10   50.10      0",
        w0 + f"comm {comm.format(0, 0)} busId 18000 - Destroy COMPLETE",
        w1 + f"comm {comm.format(1, 1)} busId 18000 - Destroy COMPLETE",
        "[1,0]<stdout>:# Out of bounds values : 0 OK",
        "[1,0]<stdout>:# Avg bus bandwidth    : 37.5375 "]


def test_one_process_driving_two_gpus_prints_its_network_once_and_a_line_per_gpu() -> None:
    loopback = Process("lb", "10.0.0.9", rank=0, device=0, gpus=2)
    lines = nccl_output.lines(small_run("Socket", [loopback]), Style(nccl_prefix="rank", transport="socket"), NOW)
    assert lines[:9] == [
        "[rank0]:lb:211:211 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.9<0>",
        "[rank0]:NCCL version 2.21.5+cuda12.4",
        "[rank0]:lb:211:211 [0] NCCL INFO NET/Plugin: No plugin found (libnccl-net.so)",
        "[rank0]:lb:211:211 [0] NCCL INFO NET/Plugin: Plugin load returned 2 : libnccl-net.so: cannot open shared "
        "object file: No such file or directory : when loading libnccl-net.so",
        "[rank0]:lb:211:211 [0] NCCL INFO NET/Plugin: Using internal network plugin.",
        "[rank0]:lb:211:211 [0] NCCL INFO NET/IB : No device found.",
        "[rank0]:lb:211:211 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.9<0>",
        "[rank0]:lb:211:211 [0] NCCL INFO Using network Socket",
        "[rank0]:lb:211:211 [1] NCCL INFO Using network Socket"]
    assert lines[10] == "[rank0]:lb:211:211 [1] NCCL INFO comm 0x55d0c3a10000 rank 1 nRanks 2 nNodes 1 localRanks 2 " \
                        "localRank 1 MNNVL 0"
    assert lines[12] == ("[rank0]:lb:211:211 [1] NCCL INFO ncclCommInitRank comm 0x55d0c3a10000 rank 1 nranks 2 "
                         "cudaDev 1 nvmlDev 1 busId 2a000 commId 0x2b2d362000000002 - Init COMPLETE")


def test_the_cloud_plugins_print_their_own_lines() -> None:
    process, when = TWO_WORKERS[0], datetime(2026, 3, 2, 10, 0, 5, 250000, tzinfo=UTC)
    assert nccl_info.network_lines("AWS Libfabric", process, 32, when) == [
        "NET/OFI Initializing aws-ofi-nccl 1.7.4-aws", "NET/OFI Using CUDA runtime version 12040",
        "NET/OFI Configuring AWS-specific options", "NET/OFI Selected Provider is efa (found 32 nics)",
        "NET/OFI Using transport protocol RDMA"]
    assert nccl_info.network_lines("FasTrak", process, 8, when) == [
        "NET/FasTrak 2026-03-02T10:00:05.25+00:00: Initializing network FasTrak, version: 1.0.17"]


@pytest.mark.parametrize(("profile", "transport", "network"), [
    ("aws-h100", "platform", "AWS Libfabric"), ("gcp-h100", "platform", "FasTrak"),
    ("azure-h100", "platform", "IB"), ("aws-h100", "socket", "Socket")])
def test_a_pod_prints_its_platform_s_network_or_sockets(profile: str, transport: str, network: str) -> None:
    pods = group(["gpu-node-000", "gpu-node-001"])
    text = workload_logs.cri(workload_logs.table(pods[0], pods, nodes(profile, 2), NOW, Style(transport=transport))
                             or [], NOW, NOW)
    using = " NCCL INFO Using network "
    used = {line.split(using)[1] for line in text.splitlines() if using in line}
    assert used == {network}
    assert text.count(" NCCL INFO Bootstrap : Using eth0:") == 16     # an MPI rank per GPU of the two workers


def largest_busbw(text: str) -> float:
    """The out-of-place busbw of the last result row of a log of the current table (any transport, no prefix)."""
    rows = [line.split(" stdout F ")[1].split() for line in text.splitlines()
            if line.split(" stdout F ")[1][:12].strip().isdigit()]
    return float(rows[-1][7])


@pytest.mark.parametrize(("profile", "args", "expected"), [
    ("aws-h100", [], workload_logs.SOCKET_BUS_GBPS),                                  # across nodes: TCP
    ("aws-gb200", [], 840.0),                                                         # over MNNVL: no network
    ("aws-gb200", ["-x", "NCCL_MNNVL_ENABLE=0"], workload_logs.SOCKET_BUS_GBPS),
])
def test_socket_gives_a_group_across_nodes_a_socket_s_bandwidth(profile: str, args: list[str],
                                                                expected: float) -> None:
    pods = group(["gpu-node-000", "gpu-node-001"], args)
    lines = workload_logs.table(pods[0], pods, nodes(profile, 4), NOW, Style(transport="socket"))
    assert largest_busbw(workload_logs.cri(lines or [], NOW, NOW)) == expected


def test_socket_leaves_a_loopback_run_and_the_default_alone() -> None:
    pod = group(["gpu-node-000"])[0]
    pod["spec"]["containers"][0] = {"name": "node", "command": ["/usr/local/bin/all_reduce_perf"], "args": ["-g", "8"]}
    lines = workload_logs.table(pod, [pod], nodes("aws-h100", 2), NOW, Style(transport="socket"))
    assert largest_busbw(workload_logs.cri(lines or [], NOW, NOW)) == 480.0
    pods = group(["gpu-node-000", "gpu-node-001"])
    assert peak(pods, nodes("aws-h100", 2)) == 360.0


@pytest.mark.parametrize("generation", ["current", "no-root"])
@pytest.mark.parametrize("ranks", [1, 2, 8])
@pytest.mark.parametrize("collective", ["all_reduce", "all_gather", "alltoall", "reduce_scatter", "gather", "scatter",
                                        "broadcast", "reduce", "sendrecv", "hypercube"])
def test_every_row_s_busbw_is_its_algbw_times_the_factor_nccl_tests_prints(collective: str, ranks: int,
                                                                           generation: str) -> None:
    # The tests' GetBw: 2(n-1)/n for all_reduce, 1 for broadcast, reduce, sendrecv and hypercube, (n-1)/n for the
    # rest; on one rank the (n-1) factors are 0 and nccl-tests prints a busbw of 0.00, never the algbw.
    expected = {"all_reduce": 2 * (ranks - 1) / ranks, "broadcast": 1.0, "reduce": 1.0, "sendrecv": 1.0,
                "hypercube": 1.0}.get(collective, (ranks - 1) / ranks)
    table = nccl_tables.table(generation, collective, MIB, 64 * MIB, 80.0, ranks, (collective,))
    # Each row ends with its halves, out-of-place then in-place: time, algbw, busbw, #wrong or error (a blank redop
    # column of an older table leaves no token to count from the front).
    rows = [[float(row.split()[i]) for i in (-7, -6, -3, -2)] for row in table.body if not row.startswith("#")]
    assert len(rows) == 7 and all(alg > 1 for alg, *_rest in rows)
    for alg, bus, in_alg, in_bus in rows:
        assert bus == pytest.approx(alg * expected, abs=0.006 + 0.005 * expected), (alg, bus)
        assert in_bus == pytest.approx(in_alg * expected, abs=0.006 + 0.005 * expected), (in_alg, in_bus)
    if expected == 0:
        assert float(table.summary[1].split(":")[1]) == 0.0
