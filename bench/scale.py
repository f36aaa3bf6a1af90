"""The driver at scale: a Pinned Workflow over every node of a big simulated cluster, beside the same at 1,000.

Run from the repo root: `.venv/bin/python bench/scale.py [--nodes 10000] [--compare 1000]`. For each size N it
starts a simulated aws-gb200 cluster of N nodes (tools.sim), creates the seed Workflow over every node (Pinned,
`--nodes-per-job` 4 => N/4 groups, 1 iteration, pods of `--pod-seconds`; the target is every GPU node, not a list of
names), and drives it with `run_workflow`'s WorkflowLoop in a child process of its own (so that its peak RSS is the
driver's alone): discovery, partition, the launch of every Job, the pods running and completing, the Workflow
Succeeded.

Once the launch is over (no group Pending, every TrainJob made, every runtime copy owned by its Job), the bench
freezes the cluster for `--quiet-seconds`: SIGSTOP to every process but the apiserver and etcd (controller-manager,
scheduler, kwok, Trainer, JobSet, the sim's agent), so nothing but the driver writes. The driver catches up with the
launch's writes, then meets passes where nothing changes, at both sizes; the cluster is thawed and the run goes on.
The window stays well below the node controller's grace period (40 s times the simulator's heartbeat factor, at
least 200 s).

Printed per size: the time to discovery (groups known), to every Job launched, to the end; the driver's passes
(by why it ran: start, acted — the pass before wrote —, changed, due — a requeue —, deadline; idle: nothing
changed and nothing was due, it looked and waited again) with the CPU, requests and bytes read per pass (from its
start to the next one's: its wait, and the watch threads' work in it, included); the driver's peak RSS; the
apiserver's CPU seconds during the run. Then the targets, one line each: peak RSS at the big size <= 300 MB, and an
idle pass inside the frozen window ("idle, frozen") at the big size costs at most twice one at the small size.
Every cluster started is torn down, also on Ctrl-C. Nothing asserts time: this prints.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / ".collections")]

from ansible_collections.cre.certification.plugins.module_utils.driver.options import RunOptions  # noqa: E402
from ansible_collections.cre.certification.plugins.module_utils.driver.preflight import preflight  # noqa: E402
from ansible_collections.cre.certification.plugins.module_utils.driver.workflow import WorkflowLoop, run_counts  # noqa: E402
from ansible_collections.cre.certification.plugins.module_utils.engine.api.actions import Ref  # noqa: E402
from ansible_collections.cre.certification.plugins.module_utils.engine.api.vocabulary import (  # noqa: E402
    API_VERSION,
    JOB,
    TRAINER_API_VERSION,
    TRAINING_RUNTIME,
    TRAINJOB,
)
from ansible_collections.cre.certification.plugins.module_utils.engine.api.vocabulary import WORKFLOW as WORKFLOW_KIND
from ansible_collections.cre.certification.plugins.module_utils.kube.rest import Kube  # noqa: E402
from tests.integration.conftest import install_crds  # noqa: E402
from tests.integration.seed import nodes, workflow  # noqa: E402
from tools.sim import cluster  # noqa: E402
from tools.sim.state import ClusterState, cluster_dir  # noqa: E402

WORKFLOW = "scale"
RSS_TARGET_MB = 300
IDLE_RATIO_TARGET = 2.0
QUIET_POLL = 2.0  # seconds between the bench's looks at the launch (three reads, each as big as the run)
STOP_GRACE = 120.0  # seconds a driver past the bench's deadline has to print its figures after SIGTERM


def child(kubeconfig: str, ns: str, timeout: float, poll: float) -> None:
    """Drive the Workflow; print one JSON line with what it cost. SIGTERM (the parent's own deadline) prints what
    was measured up to then, so a run that outlives the bench still gives its figures."""
    kube = Kube(cluster.api(kubeconfig))
    lines: list[tuple[float, str]] = []
    start = time.monotonic()
    preflight(kube, ns, f"Workflow {ns}/{WORKFLOW}")  # as run_workflow does; the WorkflowLoop is built here to read its stats
    run = WorkflowLoop(kube, ns, WORKFLOW, RunOptions(timeout, poll, heartbeat=3600,
                                                      progress=lambda line: lines.append((time.monotonic() - start, line))))

    def figures(result: dict[str, Any] | None) -> None:
        if result is None:  # stopped mid-run: the counts as the driver last saw them
            wf = run.observer.workflow() if run.observer.informers else None
            result = {**run_counts(wf or {}), "elapsed": time.monotonic() - start, "timed_out": True}
        hwm = next(int(line.split()[1]) for line in Path("/proc/self/status").read_text().splitlines()
                   if line.startswith("VmHWM:"))
        print(json.dumps({"started": start, "phase": result["phase"], "groups": result["groups"]["total"],
                          "elapsed": result["elapsed"], "timed_out": result["timed_out"],
                          "succeeded": result["groups"]["succeeded"],
                          "lines": list(lines),
                          "passes": [[p.why, p.jobs, p.cpu, p.requests, p.bytes_read, p.at]
                                     for p in list(run.stats.passes)],
                          "requests": sum(kube.requests.values()), "bytes": kube.bytes_read,
                          "cpu": time.process_time(), "rss_mb": hwm / 1024, "cached": {
                              kind: len(run.observer.items(version, kind)) if (version, kind) in run.observer.informers
                              else 0 for version, kind in (("v1", "Node"), ("v1", "Pod"))}}), flush=True)

    def stopped(signum: int, frame: object) -> None:
        figures(None)
        os._exit(0)  # the watch threads and the pass in flight go with the process

    signal.signal(signal.SIGTERM, stopped)
    figures(run.run())


def apiserver_cpu(name: str) -> float:
    """CPU seconds (user + system) the cluster's kube-apiserver has used."""
    pid = int((cluster_dir(name) / "pids" / "kube-apiserver.pid").read_text())
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def frozen(name: str) -> list[int]:
    """Every process of the cluster that writes: all but the apiserver and etcd."""
    kept = {"kube-apiserver", "etcd"}
    pids = [int(p.read_text()) for p in (cluster_dir(name) / "pids").glob("*.pid") if p.stem not in kept]
    return [*pids, *ClusterState.load(name).pids.values()]


def launched(kube: Kube, ns: str) -> bool:
    """No group pending, every group's TrainJob made, and every runtime copy owned by its Job: after that the
    driver has nothing left to write until a pod moves. (The owner-reference patch goes through Trainer's
    TrainingRuntime webhook: a window begun before it lets a pass wait on a frozen webhook, as in stop 17.)"""
    wf = kube.get(Ref(API_VERSION, WORKFLOW_KIND, ns, WORKFLOW)) or {}
    groups = ((wf.get("status") or {}).get("orchestration") or {}).get("groups") or []
    if not groups or any((g.get("phase") or "Pending") == "Pending" for g in groups):
        return False
    if len(kube.list(TRAINER_API_VERSION, TRAINJOB, ns)) < len(groups):
        return False
    return all(any(o.get("kind") == JOB for o in (r.get("metadata") or {}).get("ownerReferences") or [])
               for r in kube.list(TRAINER_API_VERSION, TRAINING_RUNTIME, ns))


def quiet_window(kube: Kube, ns: str, name: str, seconds: float, done: threading.Event
                 ) -> tuple[float, float] | None:
    """Once the launch is over (`launched`), stop every writer of the cluster for `seconds`; returns when the
    window began and ended (time.monotonic, which the driver's child shares), None if the run ended first."""
    while not done.wait(QUIET_POLL):
        if launched(kube, ns):
            break
    else:
        return None
    pids = frozen(name)
    window = []
    for sig in (signal.SIGSTOP, signal.SIGCONT):
        window.append(time.monotonic())
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        if sig == signal.SIGSTOP:
            time.sleep(seconds)
    return window[0], window[1]


def milestones(lines: list[tuple[float, str]]) -> dict[str, float | None]:
    """When the groups were known and when none was pending any more, from the driver's progress lines."""
    known = launched = None
    for at, line in lines:
        if " pending," not in line:
            continue
        pending = int(line.split("groups ", 1)[1].split(" pending", 1)[0])
        total = sum(int(part.strip().split()[0]) for part in line.split("groups ", 1)[1].split(" [")[0].split(" -> ")[0]
                    .split(","))
        if total and known is None:
            known = at
        if total and pending == 0 and launched is None:
            launched = at
    return {"groups known": known, "all launched": launched}


def measure(size: int, pod_seconds: float, poll: float, timeout: float, per_job: int, quiet: float
            ) -> dict[str, Any]:
    name = f"scale-{os.getpid()}-{size}"
    t0 = time.monotonic()
    kubeconfig = cluster.up("aws-gb200", size, name, int(pod_seconds * 1000))
    try:
        up = time.monotonic() - t0
        api = cluster.api(kubeconfig)
        install_crds(api)
        kube = Kube(api)
        ns = f"scale-{size}"
        kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        wf = workflow(nodes(*range(size)))
        wf["spec"]["jobTemplate"]["spec"]["workload"]["trainJob"]["trainer"]["numNodes"] = per_job  # nodes per group
        # Every GPU node by the target's (empty) selector. A Workflow keeps every group in its status: at 10,000
        # nodes, 2 nodes per Job (5,000 groups) is a 2.2 MB status, more than the apiserver sends etcd (2 MiB).
        wf["spec"]["orchestration"]["target"] = {}
        # At 10,000 nodes the simulator makes about 7 pods a second: groups wait longer than the seed's 10m per Job.
        wf["spec"]["orchestration"]["execution"] = {"timeoutPerJob": "3h"}
        kube.create({**wf, "metadata": {"name": WORKFLOW, "namespace": ns}})
        print(f"[{size} nodes] cluster up in {up:.0f}s; driving", flush=True)
        before = apiserver_cpu(name)
        with subprocess.Popen([sys.executable, __file__, "--child", str(kubeconfig), ns, str(timeout), str(poll)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
            done = threading.Event()
            window: list[tuple[float, float] | None] = []
            watcher = threading.Thread(target=lambda: window.append(quiet_window(kube, ns, name, quiet, done)))
            watcher.start()
            try:
                stdout, stderr = proc.communicate(timeout=timeout + max(120.0, size / 10))
            except subprocess.TimeoutExpired:  # the initial lists and the last pass outran the margin
                proc.terminate()
                try:
                    stdout, stderr = proc.communicate(timeout=STOP_GRACE)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    raise SystemExit(
                        f"the driver at {size} nodes printed nothing {STOP_GRACE:g}s after SIGTERM") from None
            except BaseException:  # Ctrl-C, SIGTERM: the driver goes too, then the cluster
                proc.kill()
                raise
            finally:
                done.set()
                watcher.join()
        if proc.returncode != 0:
            raise SystemExit(f"the driver at {size} nodes failed:\n{stderr[-3000:]}")
        out = json.loads(stdout.strip().splitlines()[-1])
        out.update(size=size, up=up, apiserver_cpu=apiserver_cpu(name) - before, window=window[0])
        if out["phase"] != "Succeeded" and not out["timed_out"]:
            raise SystemExit(f"the Workflow at {size} nodes ended {out['phase']}")
        return out
    finally:
        cluster.down(name, missing_ok=True)


def frozen_idle(r: dict[str, Any]) -> list[list[Any]]:
    """The idle passes that began and ended (the next one began) inside the frozen window."""
    if r["window"] is None:
        return []
    (begin, end), passes = r["window"], r["passes"]
    return [p for p, after in zip(passes, passes[1:]) if p[0] == "" and begin <= p[5] and after[5] <= end]


def summary(passes: list[list[Any]], why: str | None) -> dict[str, float]:
    """`why` None: every pass given."""
    chosen = [p for p in passes if why is None or p[0] == why]
    if not chosen:
        return {"count": 0, "cpu_ms": float("nan"), "requests": float("nan"), "kb": float("nan")}
    return {"count": len(chosen), "cpu_ms": statistics.mean(p[2] for p in chosen) * 1000,
            "requests": statistics.mean(p[3] for p in chosen), "kb": statistics.mean(p[4] for p in chosen) / 1024}


def report(r: dict[str, Any]) -> None:
    marks = milestones(r["lines"])
    known, launched = marks["groups known"], marks["all launched"]
    print(f"\n{r['size']} nodes, {r['groups']} groups: cluster up {r['up']:.0f}s; groups known at "
          f"{known if known is None else round(known, 1)}s, every Job launched at "
          f"{launched if launched is None else round(launched, 1)}s, " + (
              f"stopped at --timeout ({r['elapsed']:.0f}s) with {r['succeeded']} Succeeded" if r["timed_out"]
              else f"Succeeded at {r['elapsed']:.1f}s"))
    window = r["window"]
    print("  cluster frozen " + (f"{window[1] - window[0]:.0f}s from {window[0] - r['started']:.0f}s" if window
                                 else "never: the run ended before the launch was over"))
    print(f"  {'passes':13} {'count':>6} {'cpu ms/pass':>12} {'requests/pass':>14} {'KiB read/pass':>14}")
    rows = [(why or "idle", summary(r["passes"], why)) for why in ("start", "acted", "changed", "due", "deadline", "")]
    for label, s in [*rows, ("idle, frozen", summary(frozen_idle(r), None))]:
        print(f"  {label:13} {s['count']:6d} {s['cpu_ms']:12.3f} {s['requests']:14.2f} {s['kb']:14.1f}")
    print(f"  driver: {r['cpu']:.1f}s CPU, {r['requests']} requests, {r['bytes'] / 2**20:.1f} MiB read, peak RSS "
          f"{r['rss_mb']:.0f} MB ({r['cached']['Node']} Nodes and {r['cached']['Pod']} pods in its caches at the "
          f"end); apiserver CPU during the run {r['apiserver_cpu']:.1f}s")


def _interrupt(signum: int, frame: object) -> None:
    """SIGTERM tears down like Ctrl-C does."""
    raise KeyboardInterrupt


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5]))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=10000)
    parser.add_argument("--compare", type=int, default=1000)
    parser.add_argument("--pod-seconds", type=float, default=60.0, help="how long each pod runs")
    parser.add_argument("--poll", type=float, default=1.0, help="the driver's longest wait between passes")
    parser.add_argument("--timeout", type=float, default=3600.0,
                        help="seconds the driver may run; a run stopped there is reported with what it measured")
    parser.add_argument("--quiet-seconds", type=float, default=60.0,
                        help="how long the cluster is frozen once the launch is over (the driver first catches up "
                             "with the launch's writes: 5 s for 250 groups on this machine)")
    parser.add_argument("--nodes-per-job", type=int, default=4,
                        help="nodes per group (2 at 10,000 nodes makes a Workflow status etcd refuses)")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, _interrupt)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # also where a background shell started it ignored
    results = {}
    try:
        for size in (args.compare, args.nodes):
            results[size] = measure(size, args.pod_seconds, args.poll, args.timeout, args.nodes_per_job,
                                    args.quiet_seconds)
            report(results[size])
    except KeyboardInterrupt:
        print("stopped: every cluster the bench started is torn down", file=sys.stderr)
        return 130
    big, small = results[args.nodes], results[args.compare]
    idle_big, idle_small = summary(frozen_idle(big), None)["cpu_ms"], summary(frozen_idle(small), None)["cpu_ms"]
    ratio = idle_big / idle_small if idle_small else float("nan")
    print("\nTargets")
    until = f" (up to the stop at {big['elapsed']:.0f}s)" if big["timed_out"] else ""
    print(f"TARGET {args.nodes} nodes driver peak RSS <= {RSS_TARGET_MB} MB: {big['rss_mb']:.0f} MB{until} "
          f"{'PASS' if big['rss_mb'] <= RSS_TARGET_MB else 'FAIL'}")
    print(f"TARGET idle pass {args.nodes} vs {args.compare} nodes <= {IDLE_RATIO_TARGET:g}x: {ratio:.2f}x "
          f"({idle_big:.3f} vs {idle_small:.3f} ms) {'PASS' if ratio <= IDLE_RATIO_TARGET else 'FAIL'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
