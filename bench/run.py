"""End-to-end run time against the floor and against a looped `kubernetes.core.k8s` playbook, side by side.

Run from the repo root: `.venv/bin/python bench/run.py [--sizes 64 256 1024]`. For each size N it starts a
simulated aws-gb200 cluster of N nodes (tools.sim, pods run ~1 s), and on it, one after the other:

  ours   the seed Workflow (Pinned, `--nodes-per-job` 2 => N/2 groups, 1 iteration) driven to Succeeded by
         the driver (preflight, then `run_workflow`'s WorkflowLoop, whose per-pass costs it reads) in a child process;
         API requests from `Kube.requests`.
  floor  the exact objects ours created (job-scoped TrainingRuntime copies, NVCRE Jobs, TrainJobs; read back,
         server fields and owner references stripped, in a fresh namespace) created by a thread pool of plain
         `Kube.create` calls, then a list poll until every TrainJob is Complete: same pods, same scheduler.
  loop   what a user would write instead: `.venv/bin/ansible-playbook` running `kubernetes.core.k8s` (state
         present) with `loop:` over the groups, then `kubernetes.core.k8s_info` with `until`/`retries`.
         It creates per group what actually runs the pods (the TrainingRuntime copy and the TrainJob); the NVCRE
         Jobs are left out because nothing would act on them without a controller, which only makes the loop
         faster, i.e. the comparison is conservative for us.

Ours runs in a child process of its own, so that its peak RSS is the driver's. Prints a table per size (seconds,
requests, requests per group, bytes read, the apiserver's CPU seconds during the run, and for ours the driver's
CPU per pass and peak RSS; ours/floor, loop/ours, the pod-log bytes ours read against the logs' size: the run
measures every launcher's bandwidth; for ours and the floor, when a TrainJob watch of their namespace saw
the first and last TrainJob and the last one Complete: the time a run adds before and after the cluster's
own pace) and the targets: ours within 2x of the floor, at least 10x faster than the
loop at 1,024 nodes, ours/floor at most 1.0 at 256 nodes and 1.2 at 1,024 and 4,096. `--repeat N` measures each
size N times, on a fresh cluster each time, and reports the run of the median ratio: the cluster's own pace (kwok,
Trainer, JobSet and the Job controller sharing a 2-core machine) varies by about 0.1 from run to run.
`--split-cpus` runs the cluster on the first CPU and the clients on the others: on a shared 2-core machine the
driver's own CPU (5-7 s in a 256-node run) slows the cluster it waits for, which no real run's controller does,
and the ratio then measures that share as well as the run. Nothing is
written to disk beyond a temporary directory; every cluster started is torn down, also on Ctrl-C.
"""
from __future__ import annotations

import argparse
import copy
import multiprocessing
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / ".collections")]

import yaml  # noqa: E402
from kubernetes import client  # noqa: E402

from ansible_collections.cre.certification.plugins.module_utils.driver.options import RunOptions  # noqa: E402
from ansible_collections.cre.certification.plugins.module_utils.driver.preflight import preflight  # noqa: E402
from ansible_collections.cre.certification.plugins.module_utils.driver.workflow import WorkflowLoop  # noqa: E402
from ansible_collections.cre.certification.plugins.module_utils.kube.rest import Kube  # noqa: E402
from bench import timeline  # noqa: E402
from tests.integration.conftest import install_crds  # noqa: E402
from tests.integration.seed import nodes, workflow  # noqa: E402
from tools.sim import cluster, smoke  # noqa: E402

NVCRE = "nvcre.nvidia.com/v1alpha1"
TRAINER = "trainer.kubeflow.org/v1alpha1"
WORKFLOW = "nccl-test"
TIMEOUT = 900  # seconds any one measurement may take before the bench gives up
POOL = 16      # the floor's concurrent creates
TARGETS = {256: 1.0, 1024: 1.2, 4096: 1.2}  # size: the ours/floor ratio it must stay within (every size: 2)
SERVER_FIELDS = ("uid", "resourceVersion", "creationTimestamp", "generation", "managedFields", "ownerReferences",
                 "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds")


def fresh(kube: Kube, ns: str) -> str:
    kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    return ns


class Recording(Kube):
    """A Kube that keeps a copy of every object it creates: the exact manifests of our run, including the
    runtime copies the run deletes again at its end."""

    def __init__(self, api: client.ApiClient) -> None:
        super().__init__(api)
        self.created: list[dict[str, Any]] = []
        self.http_seconds = 0.0

    def request(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        start = time.monotonic()
        try:
            return super().request(*args, **kwargs)
        finally:
            self.http_seconds += time.monotonic() - start

    def create(self, obj: dict[str, Any], dry_run: bool = False) -> dict[str, Any]:
        out = super().create(obj, dry_run)
        self.created.append(copy.deepcopy(obj))
        return out


def measured_workflow(size: int, per_job: int) -> dict[str, Any]:
    """The seed Workflow (`per_job` nodes per group) with the catalog's bandwidth measurement: every launcher's
    nccl-tests table is read."""
    wf = workflow(nodes(*range(size)))
    wf["spec"]["jobTemplate"]["spec"]["workload"]["trainJob"]["trainer"]["numNodes"] = per_job
    wf["spec"]["jobTemplate"]["spec"]["bandwidthMeasurement"] = {"logProfileRef": "nccl-bandwidth", "sampleInterval": "30s"}
    return wf


def log_sizes(kube: Kube, ns: str) -> int:
    """Bytes of the launchers' logs as the log endpoint serves them (kubelet timestamps on), read once each."""
    return sum(len(kube.pod_log(ns, pod["metadata"]["name"], timestamps=True).encode())
               for pod in kube.list("v1", "Pod", ns, "jobset.sigs.k8s.io/replicatedjob-name=launcher"))


def ours(kubeconfig: Path, size: int, per_job: int, poll: float, timeout: float) -> dict[str, Any]:
    """The run in a child process of its own (spawned: no memory of ours inherited), so its peak RSS is the
    driver's alone."""
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        try:
            return pool.apply(ours_in_child, (str(kubeconfig), size, per_job, poll, timeout))
        except RuntimeError as exc:  # a SystemExit in the child would only end the pool's worker, not the bench
            raise SystemExit(str(exc)) from None


def ours_in_child(kubeconfig: str, size: int, per_job: int, poll: float, timeout: float) -> dict[str, Any]:
    api = cluster.api(kubeconfig)
    kube = Recording(api)
    ns = fresh(kube, f"ours-{size}")
    kube.create({**measured_workflow(size, per_job), "metadata": {"name": WORKFLOW, "namespace": ns}})
    kube.requests.clear()
    kube.created.clear()
    kube.http_seconds = 0.0
    kube.log_bytes = kube.bytes_read = 0
    with timeline.Timeline(api, ns) as marks:
        start, cpu = time.monotonic(), time.process_time()
        marks.restart_clock()
        preflight(kube, ns, f"Workflow {ns}/{WORKFLOW}")  # as run_workflow does; the WorkflowLoop is built here for its stats
        driver = WorkflowLoop(kube, ns, WORKFLOW, RunOptions(timeout, poll))
        result = driver.run()
        seconds, cpu = time.monotonic() - start, time.process_time() - cpu
    busy = [p.cpu for p in driver.stats.passes if p.why]  # a pass that looked at something (not an idle wake-up)
    if result["phase"] != "Succeeded" and not result.get("timed_out"):
        raise RuntimeError(f"ours at {size} nodes ended {result['phase']}: {result['condition']}")
    # Where the time went: HTTP calls (summed over the driver's threads), CPU of the driver's process (engine,
    # observe, JSON of the lists, the driver's threads; overlaps the HTTP time).
    split = {"http, summed over threads": kube.http_seconds, "driver cpu": cpu}
    read, finished = kube.log_bytes, not result.get("timed_out")
    return {"seconds": seconds, "requests": Counter(kube.requests), "groups": result["groups"]["total"], "split": split,
            # An unfinished run has launchers that have printed nothing yet (their log endpoint answers 400).
            "objects": manifests(kube.created), "log_read": read,
            "log_size": log_sizes(Kube(api), ns) if finished else 0,
            "bytes": kube.bytes_read, "passes": len(busy), "pass_cpu": sum(busy) / max(len(busy), 1),
            "cpu": cpu, "peak_rss": peak_rss(), "timeline": marks.summary(seconds),
            "finished": finished, "running": result["groups"].get("running", 0)}


def peak_rss() -> int:
    """This process's peak resident set size in bytes (VmHWM)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


def apiserver_cpu(name: str) -> float:
    """CPU seconds (user + system) the cluster's kube-apiserver has used so far, from its kwokctl pid file."""
    pid = (cluster.cluster_dir(name) / "pids" / "kube-apiserver.pid").read_text().strip()
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def manifests(created: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The runtime copies, Jobs and TrainJobs ours created, without owner references (their owners do not
    exist in the floor's namespace, and the garbage collector would delete them)."""
    def strip(obj: dict[str, Any]) -> dict[str, Any]:
        meta = {k: v for k, v in obj["metadata"].items() if k not in SERVER_FIELDS and k != "namespace"}
        return {**obj, "metadata": meta}

    def of(api_version: str, kind: str) -> list[dict[str, Any]]:
        return [strip(o) for o in created if o.get("apiVersion") == api_version and o.get("kind") == kind]

    return {"runtimes": of(TRAINER, "TrainingRuntime"), "jobs": of(NVCRE, "Job"), "trainjobs": of(TRAINER, "TrainJob")}


def into(objs: list[dict[str, Any]], ns: str) -> list[dict[str, Any]]:
    return [{**o, "metadata": {**o["metadata"], "namespace": ns}} for o in objs]


def complete(kube: Kube, ns: str, count: int, poll: float, timeout: float) -> None:
    """Wait until `count` TrainJobs in `ns` carry Complete=True (one list per poll)."""
    deadline = time.monotonic() + timeout
    while True:
        done = sum(1 for t in kube.list(TRAINER, "TrainJob", ns)
                   if any(c["type"] == "Complete" and c["status"] == "True"
                          for c in (t.get("status") or {}).get("conditions") or []))
        if done >= count:
            return
        if time.monotonic() > deadline:
            raise SystemExit(f"floor in {ns}: {done}/{count} TrainJobs Complete after {timeout:.0f}s")
        time.sleep(poll)


def floor(api: client.ApiClient, size: int, objs: dict[str, list[dict[str, Any]]], poll: float,
          timeout: float) -> dict[str, Any]:
    """The same objects created by a bare client, then one TrainJob list per poll until all are Complete; it may
    take as long as ours was allowed (--timeout)."""
    kube = Kube(api)
    ns = fresh(kube, f"floor-{size}")
    kube.resource(TRAINER, "TrainJob")  # discovery outside the clock, as ours had it warm too
    kube.resource(NVCRE, "Job")
    kube.requests.clear()
    with timeline.Timeline(api, ns) as marks:
        start = time.monotonic()
        marks.restart_clock()
        with ThreadPoolExecutor(POOL) as pool:
            # A TrainJob's runtime must exist first (the Trainer webhook resolves runtimeRef from its cache).
            list(pool.map(kube.create, into(objs["runtimes"] + objs["jobs"], ns)))
            list(pool.map(lambda t: smoke.while_runtime_unseen(lambda: kube.create(t), timeout=60, pause=0.2),
                          into(objs["trainjobs"], ns)))
        complete(kube, ns, len(objs["trainjobs"]), poll, timeout)
        seconds = time.monotonic() - start
    return {"seconds": seconds, "requests": Counter(kube.requests), "bytes": kube.bytes_read,
            "timeline": marks.summary(seconds)}


def playbook(kubeconfig: Path, ns: str, objs: dict[str, list[dict[str, Any]]], poll: float) -> list[dict[str, Any]]:
    runtime = {r["metadata"]["name"]: r for r in objs["runtimes"]}
    groups = [{"runtime": runtime[t["spec"]["runtimeRef"]["name"]], "trainjob": t} for t in objs["trainjobs"]]
    count = len(groups)
    return [{
        "name": "What a user would write: create each group's objects, then wait",
        "hosts": "localhost", "connection": "local", "gather_facts": False,
        "vars": {"groups_to_run": into_groups(groups, ns)},
        "tasks": [
            {"name": "Create the runtime copy and the TrainJob of each group",
             "kubernetes.core.k8s": {"kubeconfig": str(kubeconfig), "state": "present",
                                     "definition": "{{ [item.runtime, item.trainjob] }}"},
             "loop": "{{ groups_to_run }}", "loop_control": {"label": "{{ item.trainjob.metadata.name }}"},
             # As a user learns to: under load the Trainer webhook may not yet see the runtime just created.
             "register": "created", "until": "created is succeeded", "retries": 5, "delay": 1},
            {"name": "Wait until every TrainJob is Complete",
             "kubernetes.core.k8s_info": {"kubeconfig": str(kubeconfig), "api_version": TRAINER,
                                          "kind": "TrainJob", "namespace": ns},
             "register": "trainjobs",
             "until": ("trainjobs.resources | map(attribute='status', default={}) "
                       "| map(attribute='conditions', default=[]) | flatten "
                       "| selectattr('type', 'equalto', 'Complete') | selectattr('status', 'equalto', 'True') "
                       f"| list | length >= {count}"),
             "retries": int(TIMEOUT / max(poll, 1)), "delay": max(1, round(poll))},
        ],
    }]


def into_groups(groups: list[dict[str, Any]], ns: str) -> list[dict[str, Any]]:
    return [{k: into([v], ns)[0] for k, v in g.items()} for g in groups]


def loop(kubeconfig: Path, kube: Kube, size: int, objs: dict[str, list[dict[str, Any]]], poll: float,
         tmp: Path) -> dict[str, Any]:
    ns = fresh(kube, f"loop-{size}")
    book = tmp / f"loop-{size}.yml"
    book.write_text(yaml.safe_dump(playbook(kubeconfig, ns, objs, poll), sort_keys=False))
    env = {**os.environ, "ANSIBLE_LOCALHOST_WARNING": "0", "ANSIBLE_INVENTORY_UNPARSED_WARNING": "0",
           "ANSIBLE_PYTHON_INTERPRETER": str(ROOT / ".venv/bin/python"), "ANSIBLE_NOCOLOR": "1"}
    log = tmp / f"loop-{size}.log"
    start = time.monotonic()
    with log.open("w") as out:
        proc = subprocess.run([str(ROOT / ".venv/bin/ansible-playbook"), "-i", "localhost,", str(book)],
                              cwd=tmp, env=env, stdout=out, stderr=subprocess.STDOUT, timeout=TIMEOUT * 2, check=False)
    seconds = time.monotonic() - start
    if proc.returncode != 0:
        lines = log.read_text().splitlines()
        tail = "\n".join([line for line in lines if line.startswith(("failed:", "fatal:"))][:5] + lines[-5:])
        raise SystemExit(f"the loop playbook failed at {size} nodes (rc {proc.returncode}):\n{tail}")
    # kubernetes.core's k8s does a GET then a create per object (plus discovery per module run); not counted here.
    return {"seconds": seconds}


def ansible_overhead(kubeconfig: Path, ns: str) -> float:
    """Wall time of the module in check mode (process start, module transfer, one render): the fixed cost
    a user pays on top of `run_workflow` by going through ansible."""
    env = {**os.environ, "ANSIBLE_LOCALHOST_WARNING": "0", "ANSIBLE_INVENTORY_UNPARSED_WARNING": "0"}
    args = f'{{"name": "{WORKFLOW}", "namespace": "{ns}", "kubeconfig": "{kubeconfig}"}}'
    start = time.monotonic()
    subprocess.run([str(ROOT / ".venv/bin/ansible"), "localhost", "--check", "-m", "cre.certification.workflow_run",
                    "-a", args], cwd=ROOT, env=env, capture_output=True, check=True, timeout=300)
    return time.monotonic() - start


def measure(size: int, per_job: int, poll: float, tmp: Path, with_loop: bool, timeout: float,
            repeat: int, split: bool) -> dict[str, Any]:
    """`repeat` runs, each on a fresh cluster (what a run leaves behind slows the next one on the same cluster):
    the run of the median ratio, with every run's ratio."""
    runs = []
    for run in range(repeat):
        runs.append(measure_once(size, per_job, poll, tmp, with_loop, timeout, run, split))
        if not runs[-1]["floor"]:
            break
    done = sorted((r for r in runs if r["floor"]), key=ratio)
    median = done[(len(done) - 1) // 2] if done else runs[-1]
    return {**median, "ratios": [ratio(r) for r in done]}


def measure_once(size: int, per_job: int, poll: float, tmp: Path, with_loop: bool, timeout: float,
                 run: int, split: bool) -> dict[str, Any]:
    name = f"bench-{os.getpid()}-{size}-{run}"
    t0 = time.monotonic()
    everyone = os.sched_getaffinity(0)
    if split:  # what `up` starts (the cluster's processes) inherits this thread's CPUs: the first one
        os.sched_setaffinity(0, {min(everyone)})
    try:
        kubeconfig = cluster.up("aws-gb200", size, name)
    finally:
        # The clients (ours' child process, the floor's and the timeline's threads) start from here: the others.
        os.sched_setaffinity(0, everyone - {min(everyone)} if split else everyone)
    try:
        api = cluster.api(kubeconfig)
        install_crds(api)
        print(f"[{size} nodes] cluster up in {time.monotonic() - t0:.0f}s", flush=True)
        kube = Kube(api)
        cpu = apiserver_cpu(name)
        a = ours(kubeconfig, size, per_job, poll, timeout)
        a["apiserver_cpu"], cpu = apiserver_cpu(name) - cpu, apiserver_cpu(name)
        state = "" if a["finished"] else f" (did not finish: {a['running']} groups still running)"
        print(f"[{size} nodes] ours {a['seconds']:.1f}s{state}", flush=True)
        objs = a["objects"]
        # A floor beside ours' unfinished groups would wait for their nodes: it is measured only after a finish.
        b = floor(api, size, objs, poll, timeout) if a["finished"] else None
        if b:
            b["apiserver_cpu"] = apiserver_cpu(name) - cpu
            print(f"[{size} nodes] floor {b['seconds']:.1f}s (ours/floor {a['seconds'] / b['seconds']:.2f})", flush=True)
        c = loop(kubeconfig, kube, size, objs, poll, tmp) if with_loop and b else None
        if c:
            print(f"[{size} nodes] loop {c['seconds']:.1f}s", flush=True)
        overhead = ansible_overhead(kubeconfig, f"ours-{size}")
        return {"size": size, "timeout": timeout, "ours": a, "floor": b, "loop": c,
                "objects": {k: len(v) for k, v in objs.items()}, "overhead": overhead}
    finally:
        cluster.down(name, missing_ok=True)
        os.sched_setaffinity(0, everyone)


def report(r: dict[str, Any]) -> None:
    a, b, c, groups = r["ours"], r["floor"], r["loop"], r["ours"]["groups"]
    print(f"\n{r['size']} nodes, {groups} groups ({r['objects']['runtimes']} runtime copies, {r['objects']['jobs']} "
          f"Jobs, {r['objects']['trainjobs']} TrainJobs)")
    print(f"  {'':6} {'seconds':>8} {'requests':>9} {'req/group':>10} {'MB read':>8} {'apiserver cpu':>13} "
          f"{'ms cpu/pass':>11} {'peak MB':>8}  by verb")
    for label, m in (("ours", a), ("floor", b)) if b else (("ours", a),):
        total = sum(m["requests"].values())
        verbs = " ".join(f"{v}={n}" for v, n in sorted(m["requests"].items()))
        per_pass = f"{m['pass_cpu'] * 1000:11.1f}" if "pass_cpu" in m else f"{'-':>11}"
        peak = f"{m['peak_rss'] / 1e6:8.0f}" if "peak_rss" in m else f"{'-':>8}"
        print(f"  {label:6} {m['seconds']:8.1f} {total:9d} {total / groups:10.1f} {m['bytes'] / 1e6:8.1f} "
              f"{m['apiserver_cpu']:12.1f}s {per_pass} {peak}  {verbs}")
    if c:
        print(f"  {'loop':6} {c['seconds']:8.1f} {'-':>9} {'-':>10}  (ansible-playbook, kubernetes.core.k8s loop)")
    split = " ".join(f"{k} {v:.1f}s" for k, v in a["split"].items())
    print(f"  ours' time: {split}, {a['passes']} passes")
    print("  from the start, as a TrainJob watch saw it:")
    for label, m in (("ours", a), ("floor", b)) if b else (("ours", a),):
        print(timeline.line(label, m["timeline"]))
    if not b:
        print(f"  ours did not finish within {r['timeout']:.0f}s: {a['running']} of {groups} groups still running; "
              "the floor was not measured")
        return
    runs = f" (the median of {', '.join(f'{x:.2f}' for x in r['ratios'])})" if len(r["ratios"]) > 1 else ""
    ratios = f"  ours/floor {a['seconds'] / b['seconds']:.2f}{runs}"
    if c:
        ratios += f"   loop/ours {c['seconds'] / a['seconds']:.1f}"
    print(ratios + f"   (+ ansible process overhead for ours: {r['overhead']:.1f}s, check mode)")
    print(f"  pod logs: ours read {a['log_read'] / groups:,.0f} B/group of {a['log_size'] / groups:,.0f} B/group "
          f"({a['log_read'] / max(a['log_size'], 1):.2f}x)")


def ratio(r: dict[str, Any]) -> float:
    """ours/floor of a measurement whose floor was measured."""
    return float(r["ours"]["seconds"] / r["floor"]["seconds"])


def ratio_text(r: dict[str, Any]) -> str:
    """ours/floor, or why there is none."""
    if not r["floor"]:
        return f"not measured (ours did not finish within {r['timeout']:.0f}s)"
    return f"{ratio(r):.2f}"


def within(r: dict[str, Any], bound: float) -> bool:
    return bool(r["floor"]) and ratio(r) <= bound


def _interrupt(signum: int, frame: object) -> None:
    """SIGTERM tears down like Ctrl-C does."""
    raise KeyboardInterrupt


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[64, 256, 1024])
    parser.add_argument("--poll", type=float, default=1.0,
                        help="poll interval of ours and of the floor's wait, in seconds (the loop's delay is "
                             "rounded to whole seconds, its minimum 1)")
    parser.add_argument("--no-loop", action="store_true", help="skip the ansible-playbook loop")
    parser.add_argument("--nodes-per-job", type=int, default=2,
                        help="nodes per group (at 4,096 nodes 2 per Job makes 2,048 TrainJobs, and the cluster's "
                             "controllers, not the run, set the pace for an hour: use 8)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="runs per size, each on a fresh cluster; the table and the targets take the run of the "
                             "median ours/floor (run-to-run noise at 256 nodes is about 0.1)")
    parser.add_argument("--split-cpus", action="store_true",
                        help="the cluster on the first CPU, ours, the floor and the loop on the others, as a real "
                             "run's controller never shares the control plane's cores (on 2 CPUs the client's own "
                             "CPU otherwise slows the cluster it measures)")
    parser.add_argument("--timeout", type=float, default=TIMEOUT,
                        help="seconds ours (and then the floor) may run before it is reported as not finished "
                             f"(default {TIMEOUT})")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, _interrupt)
    results = []
    if args.split_cpus:
        cpus = sorted(os.sched_getaffinity(0))
        if len(cpus) < 2:
            raise SystemExit("--split-cpus needs 2 CPUs or more; this process may use 1")
        print(f"cluster on CPU {cpus[0]}, ours, the floor and the loop on CPUs {', '.join(map(str, cpus[1:]))}")
    with tempfile.TemporaryDirectory(prefix="cre-bench-") as tmp:
        for size in args.sizes:
            results.append(measure(size, args.nodes_per_job, args.poll, Path(tmp), not args.no_loop,
                                   args.timeout, args.repeat, args.split_cpus))
            report(results[-1])
    print("\nTargets")
    for r in results:
        figure = f"{ratio_text(r)}x" if r["floor"] else ratio_text(r)
        print(f"  {r['size']:5d} nodes: ours within 2x of the floor ({figure}): {'PASS' if within(r, 2) else 'MISS'}")
    for r in results:
        ratio = r["ours"]["log_read"] / max(r["ours"]["log_size"], 1)
        figure = f"{ratio:.2f}x" if r["ours"]["finished"] else "not measured: ours did not finish"
        print(f"  {r['size']:5d} nodes: pod-log bytes read within 1.5x of the logs ({figure}): "
              f"{'PASS' if ratio <= 1.5 and r['ours']['finished'] else 'MISS'}")
    big = next((r for r in results if r["size"] == 1024 and r["loop"]), None)
    if big:
        ratio = big["loop"]["seconds"] / big["ours"]["seconds"]
        print(f"   1024 nodes: ours >= 10x faster than the loop ({ratio:.1f}x): {'PASS' if ratio >= 10 else 'MISS'}")
    else:
        print("   1024 nodes: loop not measured (needs --sizes with 1024 and no --no-loop)")
    for r in results:
        if r["size"] in TARGETS:
            print(f"TARGET {r['size']} ours/floor <= {TARGETS[r['size']]}: {ratio_text(r)} "
                  f"{'PASS' if within(r, TARGETS[r['size']]) else 'FAIL'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
