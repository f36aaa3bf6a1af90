"""A user's own MPI runtime on the simulator (issue 43): workers that start sshd with no shell, as Kubeflow
Trainer's own MPI runtimes do, serve their launcher until the run ends; workers that run no sshd fail the
launcher within seconds with Open MPI's own message, as a real mpirun does, and the Workflow fails (never hangs).

Each test runs its own Workflow (the seed's runtime, its worker command changed) in its own namespace on two
nodes of the shared 16-node cluster, its pods compressed to a second.
"""
from __future__ import annotations

from typing import Any

import pytest

from ansible_collections.cre.certification.plugins.module_utils.engine.reconcile.attribution import (
    NO_TERMINATED_CONTAINER_TAIL,
)
from tests.ansible_run import ansible_module
from tools.sim import cluster, ranks
from tools.sim.logs import mpirun_output

from .conftest import SIM, Sim
from .pods_seen import Seen, watching
from .seed import NVCRE, items, nodes, start, workflow

pytestmark = pytest.mark.clusters(SIM)
POD_MS = 1000

ORTE = [mpirun_output.DASH_LINE, *mpirun_output.FAILED_DAEMON_LAUNCH.splitlines(), mpirun_output.DASH_LINE]


def replicated_job(wf: dict[str, Any], name: str) -> dict[str, Any]:
    """The Job spec of the replicatedJob `name` of the Workflow's runtime."""
    jobs = wf["spec"]["dependencies"][0]["spec"]["template"]["spec"]["replicatedJobs"]
    spec: dict[str, Any] = next(r for r in jobs if r["name"] == name)["template"]["spec"]
    return spec


def with_workers(target: list[str], command: list[str], args: list[str]) -> dict[str, Any]:
    """The seed Workflow on `target` (one group), its runtime's workers running `command` + `args`."""
    wf = workflow(target)
    (worker,) = replicated_job(wf, "node")["template"]["spec"]["containers"]
    worker.update(command=command, args=args)
    return wf


def run(sim: Sim, wf: dict[str, Any], read_logs: bool = False) -> tuple[str, int, dict[str, Any], Seen]:
    """Run the Workflow in a namespace of its own, its pods compressed; (namespace, rc, result, pods seen)."""
    ns = start(sim, wf)
    cluster.pod_duration(sim.name, ns, POD_MS)
    with watching(sim.api, ns, read_logs) as seen:
        rc, result = ansible_module("workflow_run", {"name": "nccl-test", "namespace": ns,
                                                     "kubeconfig": str(sim.kubeconfig), "timeout": 120,
                                                     "poll_interval": 0.5}, timeout=180)
    return ns, rc, result, seen


def test_exec_form_sshd_workers_serve_their_launcher_until_it_succeeds(e2e: Sim) -> None:
    """`command: [/usr/sbin/sshd]`, `args: [-De, ...]`: the workers outlive their pod time (JobSet deletes them
    when the launcher succeeds), the launcher completes, the Workflow succeeds."""
    target = nodes(0, 1)
    _ns, rc, result, seen = run(e2e, with_workers(target, ["/usr/sbin/sshd"], ["-De", "-f", "/etc/ssh/sshd_config"]))
    assert rc == 0, result
    assert result["condition"] == {"type": "Succeeded", "reason": "JobCompleted",
                                   "message": "All 1 iterations completed successfully"}
    assert result["succeeded_nodes"] == target and result["failed_nodes"] == []
    phases = {name: seen.phases[name] for name in seen.last}
    workers = [name for name in phases if "-node-" in name]
    (launcher,) = [name for name in phases if "-launcher-" in name]
    assert len(workers) == 2 and all("Succeeded" not in phases[w] for w in workers), phases
    assert "Succeeded" in phases[launcher] and not seen.exits, (phases, seen.exits)


def test_workers_that_run_no_sshd_fail_the_launcher_with_orte_s_message(e2e: Sim) -> None:
    """A misconfigured runtime: the workers run but no sshd listens. mpirun's ssh is refused; it prints ssh's
    error and ORTE's `failed-daemon-launch` text and exits 1 within seconds. Its Job retries it as the runtime
    as shipped says (`OnFailure`, the Job's default backoffLimit of 6: the kubelet restarts it in place, each
    restart failing the same way), then the group fails with NVCRE's failure-log record; the launcher's log holds
    the text."""
    target = nodes(2, 3)
    wf = with_workers(target, ["sh", "-c"], ["echo no sshd here; sleep 3600"])
    ns, rc, result, seen = run(e2e, wf, read_logs=True)
    assert rc == 0, result
    assert result["condition"]["type"] == "Failed", result["condition"]
    assert {(f["name"], f["reason"]) for f in result["failed_nodes"]} == {(n, "WorkloadFailed") for n in target}
    launchers = sorted(name for name in seen.last if "-launcher-" in name)
    workers = [name for name in seen.last if "-node-" in name]
    assert launchers and all("Succeeded" not in seen.phases[p] for p in launchers), seen.phases
    assert sum(seen.restarts.get(p, 0) for p in launchers) >= 1, seen.restarts  # restarted in place, not rescheduled
    refused = {ranks.MPIRUN_NO_DAEMON.format(worker=w) for w in workers}
    assert all(len(seen.exits[p]) == 1 and seen.exits[p] <= refused for p in launchers), seen.exits
    # NVCRE's failure log reads the Job's labelled pods, the workers: none of them exited, so it says so. The
    # launcher's own log (kubectl logs, read as each launcher exited: NVCRE deletes the failed TrainJob) holds
    # ssh's and ORTE's lines.
    (job,) = items(e2e, ns, NVCRE, "jobs")
    assert job["status"]["failureLog"] == {"reason": "NoTerminatedContainer", "tail": NO_TERMINATED_CONTAINER_TAIL}
    assert seen.logs and set(seen.logs) <= set(launchers), seen.logs
    for text in seen.logs.values():
        tail = text.splitlines()[-len(ORTE) - 1:]
        assert tail[0].startswith("ssh: connect to host ") and tail[0].endswith(" port 22: Connection refused"), tail
        assert tail[1:] == ORTE, tail
