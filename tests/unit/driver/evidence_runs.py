"""What the evidence crash tests (test_evidence_crash*.py) share: a run's evidence as it must end, and the check
that a run killed after any of its writes and resumed ends with it.

Imported as tests.unit.driver.evidence_runs."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ansible_collections.cre.certification.plugins.module_utils.engine.evidence import shards
from tests.unit.driver.memory_cluster import MemoryKube, outcome, resumed, strip, verdict

Obj = dict[str, Any]


def evidence(kube: MemoryKube) -> tuple[dict[str, Obj], dict[str, Obj]]:
    """(each Job's seal, each shard ConfigMap by name, without what differs between two runs: UIDs, versions)."""
    seals = {n: j["status"]["evidence"] for n, j in kube.of_kind("Job").items()}
    cms = {n: cm for n, cm in kube.of_kind("ConfigMap").items()
           if (cm["metadata"].get("labels") or {}).get(shards.LABEL_EVIDENCE) == shards.EVIDENCE_ROWS}
    return seals, strip(cms)


def same_after_any_kill(cluster: Callable[[], MemoryKube], run: Callable[[MemoryKube], Obj]) -> int:
    """Run on a fresh `cluster()` whole, then killed after each of its writes and run again on another: each ends
    with the whole run's verdict, seals, shard bytes and objects. How many writes the whole run made."""
    whole = cluster()
    expected = strip(verdict(run(whole)))
    end = outcome(whole)
    sealed = evidence(whole)
    for k in range(whole.writes):
        kube = cluster()
        assert strip(verdict(resumed(kube, k, run))) == expected, f"killed after write {k}"
        assert evidence(kube) == sealed, f"killed after write {k}"
        assert outcome(kube) == end, f"killed after write {k}"
    return whole.writes
