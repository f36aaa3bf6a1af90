"""Load a running simulated cluster with groups of pods and report how its control plane copes.

`python -m tools.sim.load --name N --groups 5000 --size 2` creates, in a fresh namespace, one batch Job per group
with `--size` pods that each take every GPU of a node (so 5,000 groups of 2 fill 10,000 nodes), waits until every
Job has succeeded (kwok completes the pods after the cluster's `--pod-ms`), prints the wall time, and the RSS
(now and peak) and CPU seconds of each control-plane component, then deletes the namespace. The figures of the
README's sim section were taken with it.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from kubernetes import client

from . import cluster
from .processes import alive
from .state import ClusterState, cluster_dir

THREADS = 16


def job(name: str, size: int, gpus: str) -> dict:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
            "spec": {"parallelism": size, "completions": size, "backoffLimit": 0, "template": {"spec": {
                "restartPolicy": "Never",
                "containers": [{"name": "node", "image": "sim", "resources": {
                    "requests": {"nvidia.com/gpu": gpus}, "limits": {"nvidia.com/gpu": gpus}}}]}}}}


def usage(name: str) -> list[str]:
    """One line per component: RSS now and peak (MiB), CPU seconds so far."""
    pids = {p.stem: int(p.read_text()) for p in sorted((cluster_dir(name) / "pids").glob("*.pid"))}
    pids.update(ClusterState.load(name).pids)
    lines = []
    for component, pid in pids.items():
        if not alive(pid):
            lines.append(f"  {component:24} not running")
            continue
        status = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines())
        stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        cpu = (int(stat[11]) + int(stat[12])) / 100
        lines.append(f"  {component:24} rss {int(status['VmRSS'].split()[0]) // 1024:6d} MiB   "
                     f"peak {int(status['VmHWM'].split()[0]) // 1024:6d} MiB   cpu {cpu:8.1f} s")
    return lines


def succeeded(batch: client.BatchV1Api, namespace: str) -> int:
    jobs = json.loads(batch.list_namespaced_job(namespace, _preload_content=False).data)["items"]
    return sum(1 for j in jobs if (j.get("status") or {}).get("succeeded", 0) >= j["spec"]["completions"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.sim.load", description=__doc__.splitlines()[0])
    parser.add_argument("--name", default="cre")
    parser.add_argument("--groups", type=int, required=True)
    parser.add_argument("--size", type=int, default=2, help="pods (nodes) per group")
    parser.add_argument("--timeout", type=float, default=1800)
    args = parser.parse_args(argv)
    try:
        st = ClusterState.load(args.name)
    except OSError:
        print(f"error: no cluster named {args.name!r}", file=sys.stderr)
        return 1
    apic = cluster.api(st.kubeconfig)
    core, batch = client.CoreV1Api(apic), client.BatchV1Api(apic)
    node = json.loads(core.list_node(limit=1, _preload_content=False).data)["items"][0]
    gpus = node["status"]["allocatable"]["nvidia.com/gpu"]
    namespace = f"load-{int(time.time())}"
    core.create_namespace({"metadata": {"name": namespace}})
    print("at rest:", *usage(args.name), sep="\n", flush=True)
    start = time.monotonic()
    try:
        with ThreadPoolExecutor(THREADS) as pool:
            list(pool.map(lambda i: batch.create_namespaced_job(namespace, job(f"g{i:05d}", args.size, gpus),
                                                                _preload_content=False), range(args.groups)))
        print(f"{args.groups} Jobs created in {time.monotonic() - start:.0f}s", flush=True)
        done = 0
        while (done := succeeded(batch, namespace)) < args.groups:
            if time.monotonic() - start > args.timeout:
                print(f"error: {done} of {args.groups} groups succeeded within {args.timeout:.0f}s", file=sys.stderr)
                return 1
            print(f"  {time.monotonic() - start:5.0f}s  {done} of {args.groups} groups succeeded", flush=True)
            print(*usage(args.name), sep="\n", flush=True)
            time.sleep(15)
        print(f"{args.groups} groups of {args.size} succeeded in {time.monotonic() - start:.0f}s", flush=True)
        print("after the run:", *usage(args.name), sep="\n", flush=True)
    finally:
        core.delete_namespace(namespace)
    return 0


if __name__ == "__main__":
    sys.exit(main())
