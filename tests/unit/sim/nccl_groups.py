"""Simulated nccl-tests groups without a cluster, shared by the tests of the simulator's bandwidth figures and log
styles: a profile's nodes (with link-fault annotations), an MPI group's pods as the API serves them, and the peak
busbw its launcher prints."""
from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from tools.sim import faults, profiles
from tools.sim.logs import workload_logs

NOW = datetime(2026, 3, 2, 10, 0, 5, tzinfo=UTC)


def nodes(profile: str, count: int, links: list[list] | None = None,
          annotations: dict[str, dict[str, str]] | None = None) -> dict[str, dict]:
    """The profile's nodes by name, with the link-fault annotations `fault --kind link` would set."""
    built = profiles.build_nodes(profile, count)
    for node, value in faults.link_annotations(built, links or []).items():
        if value is not None:
            next(n for n in built if n["metadata"]["name"] == node)["metadata"]["annotations"][
                workload_logs.LINK_ANNOTATION] = value
    for node in built:
        node["metadata"]["annotations"].update((annotations or {}).get(node["metadata"]["name"], {}))
    return {n["metadata"]["name"]: n for n in built}


def group(workers: list[str], args: list[str] | None = None, env: list[dict] | None = None) -> list[dict]:
    """An MPI group: the launcher (runs all_reduce_perf_mpi with `args`) and a node pod per worker (`env`)."""
    def pod(name: str, node: str, container: dict[str, Any]) -> dict:
        return {"metadata": {"name": name, "namespace": "ns", "uid": name,
                             "labels": {workload_logs.JOBSET_NAME: "job-workload"}},
                "spec": {"nodeName": node, "containers": [{"name": "node", **container}]}}
    launcher = pod("launcher", workers[0], {"command": ["mpirun"], "args": [
        *(args or []), "/usr/local/bin/all_reduce_perf_mpi", "-b", "8", "-e", "16G"]})
    return [launcher, *(pod(f"node-{i}", n, {"command": ["sshd"], "env": env or []}) for i, n in enumerate(workers))]


def peak(pods: list[dict], cluster_nodes: dict[str, dict]) -> float:
    """The busbw of the largest size the launcher (or loopback pod) printed."""
    lines = workload_logs.table(pods[0], pods, cluster_nodes, NOW)
    assert lines is not None
    text = workload_logs.cri(lines, NOW, NOW)
    rows = [line.split(" stdout F ")[1].split() for line in text.splitlines()
            if re.match(r"\s*\d", line.split(" stdout F ")[1])]
    assert rows[-1][0] == str(16 * 1024**3)
    return float(rows[-1][7])
