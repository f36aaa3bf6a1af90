"""`make demo`: the main job on the local simulated cluster.

A 16-node aws-gb200 cluster with one hardware fault and one slow node, `playbooks/certify.yml` run against it
for communication/nccl-all-reduce (one Job per node, so a fault fails only its own node) with a bus-bandwidth
threshold, and the report: the slow node fails ThresholdViolation with its measured figure, the GPU-faulty
one HardwareFailureDetected, every other node passes with its bandwidth.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

from . import cluster, faults

NAME = "demo"
FAULTY = "gpu-node-005"
SLOW = "gpu-node-011"
THRESHOLD = "value >= 600.0"  # GB200's nominal 840 GB/s passes; the slow node's 420 does not
ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "out" / NAME  # certify.yml writes the reports into <cre_report_dir>/<inventory host>


def inventory(kubeconfig: Path) -> dict:
    return {"clusters": {"hosts": {NAME: {
        "ansible_connection": "local",
        "ansible_python_interpreter": str(ROOT / ".venv" / "bin" / "python"),
        "k8s_kubeconfig": str(kubeconfig),
        "certify_certification_name": "gb200-acceptance",
        "certify_namespace": "nvcre",
        "certify_categories": [{"domain": "communication", "variant": "nccl-all-reduce",
                                "options": {"testScale": "intra-node"}}],
        "certify_options": {"thresholds": {"busBandwidthGBps": THRESHOLD}},
        "certify_poll_interval": 1.0,
        "certify_timeout": 900,
        "cre_report_dir": str(OUT.parent),
        "results_fail_on_failure": False,  # the demo's point is the report of a failed node
    }}}}


def main() -> int:
    cluster.down(NAME, missing_ok=True)
    kubeconfig = cluster.up("aws-gb200", 16, NAME, pod_milliseconds=2000)
    faults.fault(NAME, FAULTY, "hardware")
    faults.fault(NAME, SLOW, "slow")
    print(f"cluster {NAME!r}: 16 aws-gb200 nodes, GPU fault on {FAULTY}, {SLOW} at half bandwidth; "
          f"threshold busBandwidthGBps {THRESHOLD}; kubeconfig {kubeconfig}", flush=True)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT.parent / f"{NAME}-inventory.yml").write_text(yaml.safe_dump(inventory(kubeconfig)))
    play = subprocess.run([str(ROOT / ".venv" / "bin" / "ansible-playbook"), "-i", str(OUT.parent / f"{NAME}-inventory.yml"),
                           "playbooks/certify.yml"], cwd=ROOT, check=False)
    report = OUT / "report.md"
    if report.is_file():
        print(report.read_text())
    print(f"report files: {OUT}\nstop the cluster: .venv/bin/python -m tools.sim down --name {NAME}")
    return play.returncode


if __name__ == "__main__":
    sys.exit(main())
