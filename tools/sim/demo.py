"""`make demo`: a 16-node aws-gb200 cluster with one hardware fault, a run over every node, a verdict each."""
from __future__ import annotations

from . import cluster, smoke

NAME = "demo"
FAULTY = "gpu-node-005"


def main() -> int:
    cluster.down(NAME, missing_ok=True)
    kubeconfig = cluster.up("aws-gb200", 16, NAME)
    cluster.fault(NAME, FAULTY, "hardware")
    verdict = smoke.run(cluster.api(kubeconfig))
    print(f"\ncluster {NAME!r} (aws-gb200, 16 nodes), hardware fault on {FAULTY}:")
    for node in sorted(verdict):
        print(f"  {node}  {verdict[node]}")
    print(f"\nkubeconfig: {kubeconfig}\nstop it with: .venv/bin/python -m tools.sim down --name {NAME}")
    return 0 if verdict.get(FAULTY, "").startswith("FAILED") else 1
