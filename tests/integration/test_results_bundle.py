"""The results bundle against a real kube-apiserver (issue 40): shard ConfigMaps in the product's own format, found
by their labels through a metadata-only list and read one at a time, written into a bundle that bundle_read checks
and reads as a user would (`ansible localhost -m cre.certification.bundle_read`), refusing one tampered byte.

The certification's own shards are tested end to end in test_evidence.py; here the ConfigMaps are created from
tests/evidence_seed.py to hold what a small DCGM run never does: a Job of several shards, a losing attempt's shard
left behind, another Workflow's shard under the same labels. The seals are handed in as the Jobs would hold them;
the ConfigMaps have no owner (a Workflow that does not exist would have the garbage collector take them)."""
from __future__ import annotations

import copy
import hashlib
from pathlib import Path
from typing import Any

import pytest

from ansible_collections.cre.certification.plugins.module_utils.driver import bundle, evidence_store
from ansible_collections.cre.certification.plugins.module_utils.engine.evidence import shards
from ansible_collections.cre.certification.plugins.module_utils.engine.evidence.rows import Row
from ansible_collections.cre.certification.plugins.module_utils.kube.rest import Kube
from tests.ansible_run import ansible_module
from tests.evidence_seed import MEMORY, dcgm_rows, job, seed

from .conftest import SIM

pytestmark = pytest.mark.clusters(SIM)
Obj = dict[str, Any]
REPORT = {"name": "dcgm", "result": "FAILED"}


def _create(kube: Kube, cm: Obj) -> None:
    cm = copy.deepcopy(cm)
    cm["metadata"].pop("ownerReferences")
    kube.create(cm)


def test_shards_in_the_cluster_make_a_bundle_that_bundle_read_checks(sim, namespace: str, tmp_path: Path) -> None:
    kube = Kube(sim.api)
    workflow = {"metadata": {"name": "dcgm-l2", "namespace": namespace, "uid": "0"}}
    # Enough rows for several shards in one Job: the order across shards and Jobs is what the bundle keeps. Each
    # detail differs (a digest), as a tool's messages do: repeated text would compress into one shard.
    many = [Row(f"node-{n:02d}", "gpu", g, None, "memory", "result", "Pass", None, "pass",
                hashlib.sha256(f"{n}/{g}/{s}".encode()).hexdigest(), sample=s)
            for n in range(2) for g in range(8) for s in range(2500)]
    seeded = seed(workflow, {"dcgm-l2-group-1": dcgm_rows("node-07", failing_gpu=3),
                             "dcgm-l2-group-0": many, "dcgm-l2-group-10": dcgm_rows("node-10")})
    for cm in seeded.configmaps:
        _create(kube, cm)
    stale = copy.deepcopy(seeded.configmaps[-1])  # a losing attempt's shard left behind
    stale["metadata"]["name"] = shards.shard_name("dcgm-l2-group-10", 0, 1)
    stale["metadata"]["labels"][shards.LABEL_ATTEMPT] = "0"
    _create(kube, stale)
    other = copy.deepcopy(seeded.configmaps[0])  # another Workflow's: the selector leaves it out
    other["metadata"]["name"] = "elsewhere-evidence-1-1"
    other["metadata"]["labels"][shards.LABEL_WORKFLOW] = "elsewhere"
    _create(kube, other)

    jobs = {name: job(name, "dcgm-l2", seal) for name, seal in seeded.seals.items()}
    stored = evidence_store.read(kube, {**workflow, "status": {"evidence": seeded.status}}, jobs)
    assert seeded.seals["dcgm-l2-group-0"]["shards"] >= 2, "the rows fit one shard: nothing shows the order"
    assert stored.problems == [] and len(stored.ignored) == 1 and "attempt 0" in stored.ignored[0]
    assert [(r.job, r.k) for r in stored.shards][:2] == [("dcgm-l2-group-0", 1), ("dcgm-l2-group-0", 2)]
    assert stored.shards[-1].job == "dcgm-l2-group-10"

    manifest = bundle.from_cluster(kube, tmp_path / "a", REPORT, [stored])
    assert manifest["totals"]["rows"] == seeded.status["rows"] == 40_000 + 48
    again = bundle.from_cluster(kube, tmp_path / "b", REPORT, [evidence_store.read(
        kube, {**workflow, "status": {"evidence": seeded.status}}, jobs)])
    assert again == manifest
    assert (tmp_path / "a/manifest.json").read_bytes() == (tmp_path / "b/manifest.json").read_bytes()

    code, found = ansible_module("bundle_read", {"path": str(tmp_path / "a"), "outcome": "fail"})
    assert code == 0, found.get("msg")
    assert [(r["node"], r["index"], r["test"], r["detail"], r["job"]) for r in found["rows"]] == [
        ("node-07", 3, "memory", MEMORY, "dcgm-l2-group-1")]

    rows = tmp_path / "a/components/gpu.ndjson"
    data = bytearray(rows.read_bytes())
    data[len(data) // 2] ^= 0x01
    rows.write_bytes(bytes(data))
    code, refused = ansible_module("bundle_read", {"path": str(tmp_path / "a")})
    assert code != 0 and refused["msg"].startswith(f"path: {tmp_path / 'a'}: components/gpu.ndjson has sha256 ")
