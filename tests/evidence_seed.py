"""Stored evidence made with the product's own shard format (engine/evidence/shards.py), for the tests of what
reads it back: a Workflow's Jobs' rows encoded into shard ConfigMaps, each Job's seal and the Workflow's totals.
Shared by the unit tests (tests/unit/driver) and the live one (tests/integration/test_results_bundle.py)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ansible_collections.cre.certification.plugins.module_utils.driver import evidence_store
from ansible_collections.cre.certification.plugins.module_utils.engine.api.naming import natural
from ansible_collections.cre.certification.plugins.module_utils.engine.evidence import shards
from ansible_collections.cre.certification.plugins.module_utils.engine.evidence.rows import Row, sorted_rows

Obj = dict[str, Any]
MEMORY = "A memory mismatch was detected on GPU 3, but no error was reported by CUDA or NVML. (DCGM error 12)"


@dataclass
class Seeded:
    """What a run would have left: shard ConfigMaps in order, each Job's seal, the Workflow's `status.evidence`."""

    configmaps: list[Obj] = field(default_factory=list)
    seals: dict[str, Obj] = field(default_factory=dict)
    status: Obj = field(default_factory=dict)


def dcgm_rows(node: str, failing_gpu: int | None = None, gpus: int = 8) -> list[Row]:
    """A level-2 DCGM run of one node: software, pcie and memory on each GPU, `failing_gpu` failing memory."""
    out = []
    for gpu in range(gpus):
        for test in ("memory", "pcie", "software"):
            failed = gpu == failing_gpu and test == "memory"
            out.append(Row(node, "gpu", gpu, None, test, "result", "Fail" if failed else "Pass", None,
                           "fail" if failed else "pass", MEMORY if failed else ""))
    return out


def seed(workflow: Obj, by_job: dict[str, list[Row]], attempt: int = 1, final: bool = True,
         partial: dict[str, str] | None = None) -> Seeded:
    """The shards and seals of `by_job` (Job name -> its rows) for `workflow`, every row stamped with where it came
    from, as the certification writes them."""
    out, name = Seeded(), workflow["metadata"]["name"]
    for job in sorted(by_job, key=natural):
        rows = sorted_rows([r._replace(workflow=name, iteration=0, job=job, attempt=attempt) for r in by_job[job]])
        encoded = shards.encode(rows)
        out.seals[job] = shards.seal(attempt, encoded, (partial or {}).get(job))
        for k, shard in enumerate(encoded.shards, 1):
            out.configmaps.append(shards.configmap(workflow, job, attempt, k, len(encoded.shards), shard))
    out.status = {**evidence_store.totals(out.seals.items()), **({"final": True} if final else {})}
    return out


def job(name: str, workflow: str, seal: Obj | None) -> Obj:
    """An NVCRE Job of `workflow` as the results read it, sealed with `seal`."""
    return {"metadata": {"name": name, "namespace": "default", "labels": {"nvcre.nvidia.com/workflow": workflow}},
            "status": {"evidence": seal} if seal is not None else {}}
