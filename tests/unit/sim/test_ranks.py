"""How a rank's failure spreads through its run (tools/sim/ranks.py), on pods as the apiserver returns them."""
from __future__ import annotations

from typing import Any

from tools.sim import containers, ranks, stages
from tools.sim.logs import mpirun_output, workload_logs

Obj = dict[str, Any]
SSHD = ["sh", "-c", "exec /usr/sbin/sshd -De"]


def pod(name: str, role: str = "node", *, command: list[str] | None = None, ready: bool = True,
        restarts: int = 0, started: str = "2026-12-03T10:00:00Z", exited: str = "", index: int = 0) -> Obj:
    state: Obj = {"running": {"startedAt": started}} if ready else {"waiting": {"reason": stages.CRASH_LOOP}}
    status: Obj = {"restartCount": restarts, "state": state}
    if exited:
        status["lastState"] = {"terminated": {"exitCode": 1, "finishedAt": exited}}
    return {"metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}",
                         "labels": {stages.REPLICATED_JOB: role, "batch.kubernetes.io/job-completion-index": str(index)}},
            "spec": {"containers": [{"name": "node", "command": command or ["torchrun", "train.py"]}]},
            "status": {"phase": "Running", "containerStatuses": [status],
                       "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}


def ended(restarts: int, message: str) -> dict[str, str]:
    return stages.exit_annotations(restarts, 1, message)


def test_a_launcher_beside_a_crash_looping_worker_cannot_start_its_daemons() -> None:
    group = [pod("w-0", command=SSHD), pod("w-1", command=SSHD, ready=False, restarts=2),
             pod("launcher", "launcher", command=["mpirun", "all_reduce_perf_mpi"])]
    assert ranks.verdicts(group) == {"launcher": ended(0, ranks.MPIRUN_NO_DAEMON.format(worker="w-1"))}


def test_a_launcher_that_reached_its_workers_is_marked_and_loses_a_daemon_it_had() -> None:
    launcher = pod("launcher", "launcher", command=["mpirun", "all_reduce_perf_mpi"], restarts=1)
    healthy = [pod("w-0", command=SSHD), pod("w-1", command=SSHD), launcher]
    assert ranks.verdicts(healthy) == {"launcher": {stages.MPIRUN_REACHED: "1"}}
    launcher["metadata"]["annotations"] = {stages.MPIRUN_REACHED: "1"}
    assert containers.reached_workers(launcher) and ranks.verdicts(healthy) == {}
    healthy[1] = pod("w-1", command=SSHD, ready=False, restarts=1)
    assert ranks.verdicts(healthy) == {"launcher": ended(1, ranks.MPIRUN_LOST_DAEMON.format(worker="w-1"))}


def test_a_launcher_beside_a_stalled_worker_hangs_unmarked() -> None:
    """The stalled node's sshd answers, so mpirun starts; its ranks never finish the first collective."""
    workers = [pod("w-0", command=SSHD), pod("w-1", command=SSHD)]
    workers[1]["spec"]["nodeName"] = "gpu-node-003"
    group = [*workers, pod("launcher", "launcher", command=["mpirun", "all_reduce_perf_mpi"])]
    assert ranks.verdicts(group, stalled=frozenset({"gpu-node-003"})) == {}
    assert ranks.verdicts(group, stalled=frozenset({"gpu-node-004"})) == {"launcher": {stages.MPIRUN_REACHED: "0"}}


def test_mpi_workers_never_end_each_other() -> None:
    group = [pod("w-0", command=SSHD), pod("w-1", command=SSHD, ready=False, exited="2026-12-03T10:00:05Z")]
    assert ranks.verdicts(group) == {}


def test_a_torch_rank_that_exits_ends_the_peers_started_before_it() -> None:
    group = [pod("r-0", index=0), pod("r-1", ready=False, restarts=1, exited="2026-12-03T10:00:05Z", index=1),
             pod("r-2", started="2026-12-03T10:00:09Z", index=2)]
    assert ranks.verdicts(group) == {"r-0": ended(0, ranks.TORCH_PEER_FAILED.format(rank="1", pod="r-1"))}


def test_a_container_set_to_end_is_judged_once_per_restart() -> None:
    peer = pod("r-0", restarts=2)
    peer["metadata"]["annotations"] = stages.exit_annotations(2, 1, "x")
    failed = pod("r-1", ready=False, restarts=1, exited="2026-12-03T10:00:05Z", index=1)
    assert containers.judged(peer) and ranks.verdicts([peer, failed]) == {}
    peer["status"]["containerStatuses"][0]["restartCount"] = 3
    assert not containers.judged(peer)


def test_runs_in_two_namespaces_with_one_jobset_name_are_two_runs() -> None:
    mine, theirs = pod("w-0", command=SSHD), pod("w-0", command=SSHD, ready=False)
    for p, ns in ((mine, "team-a"), (theirs, "team-b")):
        p["metadata"]["namespace"] = ns
        p["metadata"]["labels"][workload_logs.JOBSET_NAME] = "cert-workload"
    assert sorted(workload_logs.by_jobset([mine, theirs])) == ["team-a/cert-workload", "team-b/cert-workload"]


MPIRUN = ["timeout", "3600", "/usr/local/mpi/bin/mpirun", "-N", "4", "all_reduce_perf_mpi"]


def test_a_launcher_beside_exec_form_sshd_workers_reaches_them() -> None:
    """Kubeflow Trainer's own MPI runtimes start sshd with no shell: `command: [/usr/sbin/sshd, -De]`."""
    group = [pod("w-0", command=["/usr/sbin/sshd", "-De"]), pod("w-1", command=["/usr/sbin/sshd", "-De"]),
             pod("launcher", "launcher", command=MPIRUN)]
    assert ranks.verdicts(group) == {"launcher": {stages.MPIRUN_REACHED: "0"}}


def test_a_launcher_beside_workers_that_run_no_sshd_fails_with_orte_s_message_and_prints_it() -> None:
    workers = [pod("w-0", command=["sleep", "infinity"]), pod("w-1", command=["sleep", "infinity"])]
    workers[0]["spec"].update(hostname="run-node-0-0", subdomain="run")
    launcher = pod("launcher", "launcher", command=MPIRUN, restarts=2)
    assert ranks.judge([*workers, launcher]) == {"launcher": (
        ended(2, ranks.MPIRUN_NO_DAEMON.format(worker="w-0")),
        ["ssh: connect to host run-node-0-0.run port 22: Connection refused", "-" * 74,
         *mpirun_output.FAILED_DAEMON_LAUNCH.splitlines(), "-" * 74])}
    assert mpirun_output.FAILED_DAEMON_LAUNCH.startswith("ORTE was unable to reliably start one or more daemons.\n")
    # Not up (crash-looping until its restart) or already set to end: judged again only at its next restart.
    assert ranks.verdicts([*workers, pod("launcher", "launcher", command=MPIRUN, ready=False)]) == {}


def test_a_launcher_that_lost_a_worker_prints_nothing_of_a_failed_start() -> None:
    launcher = pod("launcher", "launcher", command=MPIRUN)
    launcher["metadata"]["annotations"] = {stages.MPIRUN_REACHED: "0"}
    group = [pod("w-0", command=SSHD), pod("w-1", command=SSHD, ready=False, restarts=1), launcher]
    assert ranks.judge(group) == {"launcher": (ended(0, ranks.MPIRUN_LOST_DAEMON.format(worker="w-1")), [])}


def test_a_launcher_that_runs_no_mpirun_is_an_ordinary_container() -> None:
    """Nothing judges it: it completes at its pod time (`stages._REACHED` lets it), whatever its workers run."""
    launcher = pod("launcher", "launcher", command=["python", "launch.py"])
    assert not containers.mpi_launcher(launcher)
    assert ranks.verdicts([pod("w-0", command=["sleep", "infinity"]), launcher]) == {}
    assert ranks.verdicts([pod("w-0", command=SSHD), pod("w-1", command=SSHD), launcher]) == {}


def test_an_mpirun_launcher_alone_runs_on_its_own_node() -> None:
    assert ranks.verdicts([pod("launcher", "launcher", command=MPIRUN)]) == {"launcher": {stages.MPIRUN_REACHED: "0"}}


def test_an_mpirun_launcher_never_ends_the_workers_beside_it() -> None:
    """A launcher that failed is no torch rank: workers that run no sshd go on to their own end."""
    launcher = pod("launcher", "launcher", command=MPIRUN, ready=False, restarts=1, exited="2026-12-03T10:00:05Z")
    assert ranks.verdicts([pod("w-0", command=["sleep", "infinity"]), launcher]) == {}
