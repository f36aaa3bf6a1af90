"""One category certified on a pooled simulated cluster through certification_run, and the nodes' verdicts it
returns: shared by the tests of the simulator's fidelity (test_sim_fidelity), of real tools' logs
(test_real_logs) and of measured evidence (test_evidence_measured)."""
from __future__ import annotations

from tests.ansible_run import ansible_module

from .conftest import Sim

NODES = [f"gpu-node-{i:03d}" for i in range(16)]   # a 16-node pooled cluster's, in name order


def certify(sim: Sim, ns: str, variant: str, domain: str = "communication", **options: object) -> dict:
    """The result of certifying `domain/variant` with `options` in `ns`: the run must end, whatever its verdict."""
    rc, result = ansible_module("certification_run", {
        "kubeconfig": str(sim.kubeconfig), "name": "fidelity", "namespace": ns,
        "categories": [{"domain": domain, "variant": variant, "options": options}],
        "poll_interval": 0.5, "timeout": 240}, timeout=300)
    assert rc == 0, result
    (category,) = result["categories"]
    return category


def failed(category: dict) -> dict[str, str]:
    """Each failed node's reason."""
    return {f["name"]: f["reason"] for f in category["failed_nodes"]}
