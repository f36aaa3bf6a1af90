"""Node-result ConfigMaps (workflow spec §10): encodings, unions, writes; table in data/node_results/cases.yaml."""
import base64
import gzip
from pathlib import Path

import pytest
import yaml

from ansible_collections.cre.certification.plugins.module_utils.engine.api.actions import Create, Replace
from ansible_collections.cre.certification.plugins.module_utils.engine.reconcile import node_results, ownership

CASES = yaml.safe_load((Path(__file__).parents[1] / "data" / "node_results" / "cases.yaml").read_text())
WORKFLOW = {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Workflow",
            "metadata": {"name": "nccl-test", "namespace": "certify", "uid": "0f1e2d3c-4b5a-6978"}}
KINDS = {
    "succeeded": (node_results.merge_succeeded, node_results.encode_succeeded, node_results.read_succeeded,
                  node_results.SUCCEEDED_KEY, "succeeded-nodes-0f1e2d3c"),
    "failed": (node_results.merge_failed, node_results.encode_failed, node_results.read_failed,
               node_results.FAILED_KEY, "failed-nodes-0f1e2d3c"),
}


def live(kind, content):
    _merge, encode, _read, key, name = KINDS[kind]
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "certify",
                                                                  "resourceVersion": "7"},
            "binaryData": {key: encode(content)}}


@pytest.mark.parametrize("kind,case", [(k, c) for k in KINDS for c in CASES[k]],
                         ids=[f"{k}-{c['id']}" for k in KINDS for c in CASES[k]])
def test_merge(kind, case):
    merge, _encode, read, _key, name = KINDS[kind]
    configmaps = {} if case["existing"] is None else {name: live(kind, case["existing"])}
    got_name, write = merge(WORKFLOW, configmaps, case["add"])
    assert got_name == name
    assert (type(write).__name__ if write else None) == case["write"]
    result = write.obj if write else configmaps[name]
    assert read(result) == case["expect"]
    if isinstance(write, Replace):
        assert write.obj["metadata"]["resourceVersion"] == "7"
    if isinstance(write, Create):
        assert write.obj["metadata"]["ownerReferences"] == [
            {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Workflow", "name": "nccl-test",
             "uid": "0f1e2d3c-4b5a-6978", "controller": True, "blockOwnerDeletion": True}]
        assert write.owner_uid == "0f1e2d3c-4b5a-6978"
        assert ownership.on_exists(write, write.obj, "nccl-test") == ownership.Adopt()


def test_exact_bytes_are_deterministic():
    first = node_results.encode_succeeded(["b", "a", "b"])
    assert first == node_results.encode_succeeded(["a", "b"])
    raw = base64.b64decode(first)
    assert raw[4:8] == b"\0\0\0\0"  # gzip MTIME field is zero
    assert gzip.decompress(raw) == b"a,b"
    failed = node_results.encode_failed([{"name": "n<1>", "reason": "WorkloadFailed", "message": "a & b"}])
    assert gzip.decompress(base64.b64decode(failed)) == (
        b'[{"name":"n\\u003c1\\u003e","reason":"WorkloadFailed","message":"a \\u0026 b"}]')


def test_absent_or_empty_reads_empty():
    assert node_results.read_succeeded(None) == [] and node_results.read_failed(None) == []
    assert node_results.read_succeeded(live("succeeded", [])) == []


def test_regressed_nodes_move_from_succeeded_to_failed_once() -> None:
    """Enforced regressions: out of the succeeded list, into the failed list with RegressionDetected; applying the
    writes and asking again gives none (a rerun changes nothing)."""
    configmaps = {"succeeded-nodes-0f1e2d3c": live("succeeded", ["n1", "n2", "n3"]),
                  "failed-nodes-0f1e2d3c": live("failed", [{"name": "n9", "reason": "WorkloadFailed", "message": "x"}])}
    entries = [{"name": "n2", "reason": "RegressionDetected", "message": "groupBusBW 360.00 is 10.0% below"}]
    writes = node_results.regressed(WORKFLOW, configmaps, entries)
    assert [name for name, _write in writes] == ["failed-nodes-0f1e2d3c", "succeeded-nodes-0f1e2d3c"]
    assert all(isinstance(write, Replace) for _name, write in writes)
    after = {name: write.obj for name, write in writes}
    assert node_results.read_succeeded(after["succeeded-nodes-0f1e2d3c"]) == ["n1", "n3"]
    assert [(e["name"], e["reason"]) for e in node_results.read_failed(after["failed-nodes-0f1e2d3c"])] == \
        [("n2", "RegressionDetected"), ("n9", "WorkloadFailed")]
    assert node_results.regressed(WORKFLOW, after, entries) == []


def test_regressed_nodes_of_a_workflow_without_failures_create_its_failed_nodes() -> None:
    configmaps = {"succeeded-nodes-0f1e2d3c": live("succeeded", ["n1"])}
    writes = dict(node_results.regressed(WORKFLOW, configmaps, [{"name": "n1", "reason": "RegressionDetected",
                                                                 "message": "m"}]))
    assert isinstance(writes["failed-nodes-0f1e2d3c"], Create)
    assert node_results.read_succeeded(writes["succeeded-nodes-0f1e2d3c"].obj) == []
