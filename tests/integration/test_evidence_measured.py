"""Measured evidence on the simulated cluster (issue 40): an nccl-tests category ends with a seal on its Job whose
shards hold one `group` row per message size and figure (busbw, algbw), the transport NCCL used in each row's
detail, the very figures the BandwidthMeasurement read; the results bundle has them in components/group.ndjson."""
from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from kubernetes import client

from ansible_collections.cre.certification.plugins.module_utils.engine.evidence import shards
from tests.ansible_run import ansible_module

from .conftest import Sim
from .one_category import certify
from .seed import NVCRE, items

pytestmark = pytest.mark.clusters(("aws-h100", 4))

NS = "evidence-nccl"
NODES = [f"gpu-node-{i:03d}" for i in range(4)]


@pytest.fixture(scope="module")
def h100(pooled: Callable[..., Sim]) -> Sim:
    """Four aws-h100 nodes; the pods of this module's namespace end after 300 ms."""
    sim = pooled("aws-h100", len(NODES), pod_ms={NS: 300})
    client.CoreV1Api(sim.api).create_namespace({"metadata": {"name": NS}})
    return sim


def test_an_nccl_run_seals_group_rows_per_message_size_and_bundles_them(h100: Sim, tmp_path: Path) -> None:
    category = certify(h100, NS, "nccl-all-reduce")
    assert category["status"] == "Succeeded" and category["succeeded_nodes"] == NODES, category
    (job,) = items(h100, NS, NVCRE, "jobs")
    seal, name = job["status"]["evidence"], job["metadata"]["name"]
    assert seal["attempt"] == 1 and seal["rows"] > 0 and "partial" not in seal, seal
    rows = []
    for k, sha in enumerate(seal["sha256"], start=1):
        cm = client.CoreV1Api(h100.api).read_namespaced_config_map(shards.shard_name(name, 1, k), NS)
        data = base64.b64decode(cm.binary_data[shards.DATA_KEY])
        assert hashlib.sha256(data).hexdigest() == sha
        rows += list(shards.decode(data))
    assert len(rows) == seal["rows"]
    group = job["metadata"]["labels"]["nvcre.nvidia.com/group"]
    assert {(r["node"], r["component"], r["test"], r["unit"], r["outcome"]) for r in rows} == {
        (group, "group", "all_reduce", "GB/s", "pass")}
    assert all(r["detail"].split("; ")[1].startswith("network ") for r in rows), rows[0]
    assert "network not in the log" not in {r["detail"].split("; ")[1] for r in rows}
    # one busbw and one algbw row per message size, the measurement's own figures
    (measurement,) = items(h100, NS, NVCRE, "bandwidthmeasurements")
    measured = {(r["sizeBytes"], metric.lower()): float(r[metric]) for r in measurement["status"]["results"]
                for metric in ("busBW", "algBW")}
    by_size = {(int(r["detail"].split(" B;")[0]), r["metric"]): r["value"] for r in rows}
    assert by_size == measured and len(rows) == len(measured) > 2

    rc, done = ansible_module("certification_results", {
        "kubeconfig": str(h100.kubeconfig), "certification": "fidelity", "namespace": NS, "history": False,
        "dest": str(tmp_path / "report"), "bundle_dir": str(tmp_path / "bundle")})
    assert rc == 0, done.get("msg")
    bundled = [json.loads(line) for line in (tmp_path / "bundle" / "components" / "group.ndjson").read_text()
               .splitlines()]
    assert bundled == rows
    manifest = json.loads((tmp_path / "bundle" / "manifest.json").read_text())
    assert manifest["totals"]["rows"] == len(rows)
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    (reported,) = report["categories"]
    assert reported["evidence"]["state"] == "final" and reported["evidence"]["rows"] == len(rows)
