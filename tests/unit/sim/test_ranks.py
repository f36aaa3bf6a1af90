"""How a rank's failure spreads through its run (tools/sim/ranks.py), on pods as the apiserver returns them."""
from __future__ import annotations

from typing import Any

from tools.sim import containers, ranks, stages

Obj = dict[str, Any]
SSHD = ["sh", "-c", "exec /usr/sbin/sshd -De"]


def pod(name: str, role: str = "node", *, command: list[str] | None = None, ready: bool = True,
        restarts: int = 0, started: str = "2026-12-03T10:00:00Z", exited: str = "", index: int = 0) -> Obj:
    state: Obj = {"running": {"startedAt": started}} if ready else {"waiting": {"reason": stages.CRASH_LOOP}}
    status: Obj = {"restartCount": restarts, "state": state}
    if exited:
        status["lastState"] = {"terminated": {"exitCode": 1, "finishedAt": exited}}
    return {"metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}",
                         "labels": {ranks.REPLICATED_JOB: role, "batch.kubernetes.io/job-completion-index": str(index)}},
            "spec": {"containers": [{"name": "node", "command": command or ["torchrun", "train.py"]}]},
            "status": {"phase": "Running", "containerStatuses": [status],
                       "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}


def test_a_launcher_beside_a_crash_looping_worker_cannot_start_its_daemons() -> None:
    group = [pod("w-0", command=SSHD), pod("w-1", command=SSHD, ready=False, restarts=2),
             pod("launcher", "launcher", command=["mpirun", "all_reduce_perf_mpi"])]
    assert ranks.verdicts(group, set()) == {"launcher": ranks.MPIRUN_NO_DAEMON.format(worker="w-1")}


def test_a_launcher_that_lost_a_worker_it_ran_with_loses_its_daemon() -> None:
    seen: set[str] = set()
    healthy = [pod("w-0", command=SSHD), pod("w-1", command=SSHD),
               pod("launcher", "launcher", command=["mpirun", "all_reduce_perf_mpi"])]
    assert ranks.verdicts(healthy, seen) == {}
    healthy[1] = pod("w-1", command=SSHD, ready=False, restarts=1)
    assert ranks.verdicts(healthy, seen) == {"launcher": ranks.MPIRUN_LOST_DAEMON.format(worker="w-1")}


def test_mpi_workers_never_end_each_other() -> None:
    group = [pod("w-0", command=SSHD), pod("w-1", command=SSHD, ready=False, exited="2026-12-03T10:00:05Z")]
    assert ranks.verdicts(group, set()) == {}


def test_a_torch_rank_that_exits_ends_the_peers_started_before_it() -> None:
    group = [pod("r-0", index=0), pod("r-1", ready=False, restarts=1, exited="2026-12-03T10:00:05Z", index=1),
             pod("r-2", started="2026-12-03T10:00:09Z", index=2)]
    assert ranks.verdicts(group, set()) == {"r-0": ranks.TORCH_PEER_FAILED.format(rank="1", pod="r-1")}


def test_a_container_set_to_end_is_judged_once_per_restart() -> None:
    peer = pod("r-0", restarts=2)
    peer["metadata"]["annotations"] = stages.exit_annotations(2, 1, "x")
    failed = pod("r-1", ready=False, restarts=1, exited="2026-12-03T10:00:05Z", index=1)
    assert containers.judged(peer) and ranks.verdicts([peer, failed], set()) == {}
    peer["status"]["containerStatuses"][0]["restartCount"] = 3
    assert not containers.judged(peer)
