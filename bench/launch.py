"""GB200/GB300 launch: how soon every group runs and the run ends, beside H100 (no ComputeDomains) and NVCRE's cadence.

Run from the repo root: `.venv/bin/python bench/launch.py [--sizes 18 72 144] [--profiles aws-gb200 oci-gb300]`.
For each profile and size N it starts a simulated cluster of N nodes (pods run `--pod-seconds`), and on it, one
after the other, two catalog categories as certification_run builds them: nccl-loopback (one group per node) and
nccl-all-reduce over 18 nodes per group (one NVL72 clique each on GB200/GB300). Each Workflow is created and then
driven by `run_workflow`'s WorkflowLoop in this process. The same two runs on an aws-h100 cluster of N nodes, whose
catalog entries create no ComputeDomain, are the reference.

Printed per run, from the Workflow's creation: when every group was running (its Job created), when a watch of
the namespace saw the last TrainJob Complete (the cluster's pace) and how long the Workflow took after that (ours),
when the Workflow ended, the driver's passes that did something, the requests per group, and the most passes any
group waited between its ComputeDomain's creation and its Job's (the pass that created the ComputeDomain not
counted). `--repeat N` measures every profile N times, round after round on fresh clusters, and reports each
run's median by its end (every run's end is printed beside it): the cluster's own pace on a 2-core machine
varies by 10-20% from run to run, more than the ratio's margin.
Beside it NVCRE's cadence, a model computed from the same run's figures and labelled so: NVCRE stops launching at
each new ComputeDomain and requeues 15 s (workflow spec §7.2, §8.2), so group k's Job comes (k + 1) x 15 s in and
its run ends that much later than ours would.

Targets, one line each: every group running within 2 passes of its ComputeDomain appearing; end to end at most
1.2x the same run on H100. Nothing asserts time: this prints. Every cluster started is torn down, also on Ctrl-C.
"""
from __future__ import annotations

import argparse
import copy
import os
import re
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / ".collections")]

from ansible_collections.cre.certification.plugins.module_utils.driver.options import RunOptions  # noqa: E402
from ansible_collections.cre.certification.plugins.module_utils.driver.preflight import preflight  # noqa: E402
from ansible_collections.cre.certification.plugins.module_utils.driver.workflow import WorkflowLoop  # noqa: E402
from ansible_collections.cre.certification.plugins.module_utils.engine.plan import category_build  # noqa: E402
from ansible_collections.cre.certification.plugins.module_utils.kube.rest import Kube  # noqa: E402
from bench import timeline  # noqa: E402
from tests.integration.conftest import install_crds  # noqa: E402
from tools.sim import cluster, profiles  # noqa: E402

NVCRE_REQUEUE = 15.0  # JobRequeueInterval: NVCRE's pass after a new ComputeDomain
PER_CLIQUE = 18       # nodes per all-reduce group: one NVL72 rack
CATEGORIES = {
    "nccl-loopback per node": {"domain": "communication", "variant": "nccl-loopback"},
    f"nccl-all-reduce per {PER_CLIQUE} nodes": {"domain": "communication", "variant": "nccl-all-reduce",
                                                "options": {"testScale": "full-scale", "nodesPerJob": PER_CLIQUE}},
}
TIMEOUT = 1800
PASS_TARGET = 2      # passes a group may wait after its ComputeDomain appeared
H100_TARGET = 1.2    # end to end against the same run on H100
_GROUP = re.compile(r"-(group-\d+)-iter-\d+$")
SINGLE = ""  # the key of a ComputeDomain copy named `-<h>-job`: a Workflow of one group (spec §7.2)


class Timed(Kube):
    """A Kube that notes when it created each ComputeDomain and Job, by group."""

    def __init__(self, api: Any) -> None:
        super().__init__(api)
        self.domains: dict[str, float] = {}
        self.jobs: dict[str, float] = {}

    def create(self, obj: dict[str, Any], dry_run: bool = False) -> dict[str, Any]:
        out = super().create(obj, dry_run)
        meta = obj.get("metadata") or {}
        if obj.get("kind") == "ComputeDomain":
            found = _GROUP.search(meta.get("name", ""))
            self.domains.setdefault(found.group(1) if found else SINGLE, time.monotonic())
        elif obj.get("kind") == "Job" and obj.get("apiVersion", "").startswith("nvcre."):
            self.jobs.setdefault((meta.get("labels") or {}).get("nvcre.nvidia.com/group", ""), time.monotonic())
        return out


@dataclass
class Run:
    profile: str
    size: int
    category: str
    groups: int = 0
    all_running: float = 0.0
    last_complete: float = 0.0   # the last TrainJob seen Complete
    end: float = 0.0
    passes: int = 0
    requests: int = 0
    phase: str = ""
    waits: list[int] = field(default_factory=list)   # per group with a ComputeDomain: passes it waited
    ends: list[float] = field(default_factory=list)  # with --repeat: every run's end, this one the median

    @property
    def nvcre_all_running(self) -> float:
        """The model: group k's Job (k + 1) requeues in, when every group has a ComputeDomain; else ours."""
        return self.groups * NVCRE_REQUEUE if self.waits else self.all_running

    @property
    def nvcre_end(self) -> float:
        """The model: our run's tail after the last launch, after NVCRE's last launch."""
        return self.nvcre_all_running + (self.end - self.all_running)


def workflow(profile: str, size: int, category: dict[str, Any], ns: str) -> dict[str, Any]:
    platform, arch = profiles.PROFILES[profile].kinds[0]
    wf = category_build.build_workflow({"metadata": {"name": "launch", "uid": "-"}, "spec": {}}, category,
                                       platform=platform, gpu_architecture=arch, available_nodes=size)
    wf = copy.deepcopy(wf)
    wf["metadata"] = {"name": wf["metadata"]["name"], "namespace": ns}  # no owner: no Certification here
    return wf


def drive(api: Any, profile: str, size: int, label: str, category: dict[str, Any], index: int) -> Run:
    kube = Timed(api)
    ns = f"launch-{index}"
    kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    wf = workflow(profile, size, category, ns)
    with timeline.Timeline(api, ns) as marks:
        start = time.monotonic()
        marks.restart_clock()
        kube.create(wf)
        kube.requests.clear()
        preflight(kube, ns, f"Workflow {ns}/{wf['metadata']['name']}")
        driver = WorkflowLoop(kube, ns, wf["metadata"]["name"], RunOptions(TIMEOUT, 0.5))
        result = driver.run()
        end = time.monotonic() - start
    run = Run(profile, size, label, groups=result["groups"]["total"], end=end,
              last_complete=marks.summary(end).get("last Complete", end), phase=result["phase"],
              requests=sum(kube.requests.values()), passes=sum(1 for p in driver.stats.passes if p.why))
    run.all_running = max(kube.jobs.values(), default=start) - start
    starts = [p.at for p in driver.stats.passes]
    for group, created in kube.domains.items():
        if group == SINGLE and len(kube.jobs) == 1:
            group = next(iter(kube.jobs))
        job = kube.jobs.get(group)
        if job is not None:
            run.waits.append(sum(1 for at in starts if created < at <= job))
    return run


def measure(profile: str, size: int, pod_seconds: float) -> list[Run]:
    name = f"launch-{os.getpid()}-{profile}-{size}"
    t0 = time.monotonic()
    kubeconfig = cluster.up(profile, size, name, int(pod_seconds * 1000))
    try:
        api = cluster.api(kubeconfig)
        install_crds(api)
        print(f"[{profile} {size}] cluster up in {time.monotonic() - t0:.0f}s", flush=True)
        runs = []
        for index, (label, category) in enumerate(CATEGORIES.items()):
            runs.append(drive(api, profile, size, label, category, index))
            print(f"[{profile} {size}] {label}: {runs[-1].phase} in {runs[-1].end:.1f}s", flush=True)
        return runs
    finally:
        cluster.down(name, missing_ok=True)


def medians(runs: list[Run]) -> list[Run]:
    """Per profile, size and category (in the order first measured), the run of the median end, with every end."""
    keyed: dict[tuple[str, int, str], list[Run]] = {}
    for r in runs:
        keyed.setdefault((r.profile, r.size, r.category), []).append(r)
    out = []
    for same in keyed.values():
        ordered = sorted(same, key=lambda r: r.end)
        median = ordered[(len(ordered) - 1) // 2]
        median.ends = [r.end for r in same]
        out.append(median)
    return out


def report(runs: list[Run], reference: dict[tuple[int, str], Run]) -> None:
    print(f"\n  {'profile':10} {'nodes':>5} {'category':32} {'groups':>6} {'all running':>11} {'last Complete':>13} "
          f"{'after':>6} {'end':>7} {'passes':>6} {'req/group':>9} {'max wait':>8} "
          f"{'NVCRE model: running, end':>26} {'H100 end':>8}  every run's end")
    for r in runs:
        h100 = reference.get((r.size, r.category))
        wait = f"{max(r.waits)}" if r.waits else "-"
        print(f"  {r.profile:10} {r.size:5d} {r.category:32} {r.groups:6d} {r.all_running:10.1f}s "
              f"{r.last_complete:12.1f}s {r.end - r.last_complete:5.1f}s {r.end:6.1f}s "
              f"{r.passes:6d} {r.requests / max(r.groups, 1):9.1f} {wait:>8} "
              f"{r.nvcre_all_running:16.1f}s {r.nvcre_end:7.1f}s {f'{h100.end:.1f}s' if h100 else '-':>8}  "
              f"{', '.join(f'{e:.1f}' for e in r.ends)}")


def targets(runs: list[Run], reference: dict[tuple[int, str], Run]) -> None:
    print("\nTargets")
    for r in runs:
        if r.profile == "aws-h100":
            continue
        what = f"{r.profile} {r.size:4d} nodes, {r.category}"
        wait = max(r.waits) if r.waits else 0
        print(f"  {what}: every group running within {PASS_TARGET} passes of its ComputeDomain ({wait}): "
              f"{'PASS' if r.waits and wait <= PASS_TARGET and r.phase == 'Succeeded' else 'FAIL'}")
        h100 = reference.get((r.size, r.category))
        if h100:
            ratio = r.end / h100.end
            print(f"  {what}: end to end <= {H100_TARGET}x H100 ({ratio:.2f}x): "
                  f"{'PASS' if ratio <= H100_TARGET else 'FAIL'}")


def _interrupt(signum: int, frame: object) -> None:
    """SIGTERM tears down like Ctrl-C does."""
    raise KeyboardInterrupt


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[18, 72, 144])
    parser.add_argument("--profiles", nargs="+", default=["aws-gb200", "oci-gb300"])
    parser.add_argument("--pod-seconds", type=float, default=10.0, help="how long each workload pod runs")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each profile and size; the median is reported")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, _interrupt)
    measured: list[Run] = []
    for size in args.sizes:
        for _round in range(args.repeat):
            for profile in [*args.profiles, "aws-h100"]:
                measured.extend(measure(profile, size, args.pod_seconds))
    runs = medians(measured)
    reference = {(r.size, r.category): r for r in runs if r.profile == "aws-h100"}
    report(runs, reference)
    targets(runs, reference)
    return 0


if __name__ == "__main__":
    sys.exit(main())
