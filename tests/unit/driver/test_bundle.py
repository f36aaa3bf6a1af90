"""The results bundle: written from the cluster's shards, manifest last; a crash leaves no manifest, a stale one is
taken away first, shards that do not add up to the seals leave none, and equal inputs give equal bytes. Then read
back, and refused when a byte, a count or the manifest itself is not what was written."""
from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from ansible_collections.cre.certification.plugins.module_utils.driver import bundle, evidence_store, results
from ansible_collections.cre.certification.plugins.module_utils.driver.bundle_read import read_bundle
from ansible_collections.cre.certification.plugins.module_utils.driver.errors import DriverError
from ansible_collections.cre.certification.plugins.module_utils.engine.api.actions import Ref
from ansible_collections.cre.certification.plugins.module_utils.engine.api.errors import InputError
from ansible_collections.cre.certification.plugins.module_utils.engine.evidence.rows import Row, row_schema
from tests.evidence_seed import MEMORY, dcgm_rows, job, seed
from tests.unit.driver.evidence_cluster import EvidenceKube

Obj = dict[str, Any]
WORKFLOW = {"metadata": {"name": "wf", "namespace": "default", "uid": "u-1"}}
REPORT = {"name": "cert", "result": "FAILED", "categories": [{"domain": "diagnostics", "variant": "dcgm-level2"}]}


def _cluster(final: bool = True, extra: list[Row] | None = None) -> tuple[EvidenceKube, evidence_store.WorkflowEvidence]:
    by_job = {f"wf-group-{i}": dcgm_rows(f"node-{i}", failing_gpu=3 if i == 1 else None) for i in range(3)}
    by_job["wf-group-0"] += extra or []
    seeded = seed(WORKFLOW, by_job, final=final)
    kube = EvidenceKube(seeded.configmaps)
    workflow = {**WORKFLOW, "status": {"evidence": seeded.status}}
    return kube, evidence_store.read(kube, workflow, {n: job(n, "wf", s) for n, s in seeded.seals.items()})


def _write(directory: Path, final: bool = True) -> Obj:
    kube, stored = _cluster(final)
    return bundle.from_cluster(kube, directory, REPORT, [stored])


def test_the_bundle_holds_the_report_every_row_by_component_and_a_manifest_of_them(tmp_path: Path) -> None:
    link = Row("node-0", "link", 0, None, "nvlink", "errors", 0, None, "pass", "")
    kube, stored = _cluster(extra=[link])
    manifest = bundle.from_cluster(kube, tmp_path, REPORT, [stored])
    names = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file())
    assert names == ["components/gpu.ndjson", "components/link.ndjson", "manifest.json", "results.json",
                     "schema/evidence-row.schema.json", "truncation.json"]
    assert (tmp_path / "results.json").read_text() == json.dumps(REPORT, indent=2, sort_keys=True) + "\n"
    assert json.loads((tmp_path / "schema/evidence-row.schema.json").read_text()) == row_schema()
    assert json.loads((tmp_path / "truncation.json").read_text()) == []
    assert manifest["fileCount"] == 5 and manifest["formatVersion"] == 1
    assert manifest["totals"] == {"rows": 73, "shards": 3, "jobs": 3, "truncated": 0,
                                  "components": {"gpu": 72, "link": 1}}
    for entry in manifest["files"]:
        data = (tmp_path / entry["path"]).read_bytes()
        assert (entry["size"], entry["sha256"]) == (len(data), hashlib.sha256(data).hexdigest()), entry["path"]
    gpu_rows = [json.loads(line) for line in (tmp_path / "components/gpu.ndjson").read_text().splitlines()]
    validator = jsonschema.Draft202012Validator(row_schema())
    assert all(not list(validator.iter_errors(r)) for r in gpu_rows)
    assert [r["job"] for r in gpu_rows[::24]] == ["wf-group-0", "wf-group-1", "wf-group-2"]
    assert not list(tmp_path.rglob("*.tmp"))


def test_the_same_cluster_gives_the_same_bytes(tmp_path: Path) -> None:
    first, second = _write(tmp_path / "a"), _write(tmp_path / "b")
    assert first == second
    for entry in first["files"] + [{"path": "manifest.json"}]:
        assert (tmp_path / "a" / entry["path"]).read_bytes() == (tmp_path / "b" / entry["path"]).read_bytes()


def test_a_crash_mid_write_leaves_no_manifest_and_no_stale_one_survives(tmp_path: Path) -> None:
    _write(tmp_path)
    kube, stored = _cluster()

    def dies() -> Iterator[bytes]:
        yield from list(evidence_store.shard_data(kube, stored))[:1]
        raise KeyboardInterrupt  # the controller stopped between two shards

    with pytest.raises(KeyboardInterrupt):
        bundle.write_bundle(tmp_path, REPORT, dies(), evidence_store.totals(stored.seals.items()), [])
    assert not (tmp_path / "manifest.json").exists()
    assert not list(tmp_path.rglob("*.tmp"))
    with pytest.raises(InputError, match="has no manifest.json"):
        read_bundle(tmp_path)


def test_files_a_killed_write_left_and_a_component_with_no_rows_now_are_taken_away(tmp_path: Path) -> None:
    (tmp_path / "components").mkdir(parents=True)
    (tmp_path / "components/step.ndjson").write_text("{}\n")  # an earlier bundle's, with no step rows now
    (tmp_path / "components/link.ndjson.tmp").write_text("{")  # SIGKILL mid-write: discard() never ran
    _write(tmp_path)
    assert sorted(p.name for p in (tmp_path / "components").iterdir()) == ["gpu.ndjson"]


def test_a_workflow_not_final_writes_no_manifest_and_says_what_to_do(tmp_path: Path) -> None:
    _write(tmp_path)
    with pytest.raises(DriverError) as err:
        _write(tmp_path, final=False)
    assert str(err.value) == (
        f"bundle_dir: no manifest written to {tmp_path}: Workflow default/wf has no final evidence yet "
        "(status.evidence.final is not true); run certification_results again once the run has ended (a Workflow "
        "still running is not final), or run the certification again if its evidence in the cluster is damaged")
    assert not (tmp_path / "manifest.json").exists()


def test_a_shard_gone_between_listing_and_reading_writes_no_manifest(tmp_path: Path) -> None:
    kube, stored = _cluster()
    kube.delete(Ref("v1", "ConfigMap", "default", stored.shards[1].name))
    with pytest.raises(DriverError) as err:
        bundle.from_cluster(kube, tmp_path, REPORT, [stored])
    assert str(err.value).startswith(f"bundle_dir: no manifest written to {tmp_path}: ConfigMap default/"
                                     f"{stored.shards[1].name} is missing or holds no rows.ndjson.gz; ")
    assert not (tmp_path / "manifest.json").exists()


def test_rows_that_do_not_add_up_to_the_seals_are_refused(tmp_path: Path) -> None:
    kube, stored = _cluster()
    totals = {**evidence_store.totals(stored.seals.items()), "rows": 99}
    with pytest.raises(bundle.BundleRefused, match="^rows: 72 read, the seals count 99$"):
        bundle.write_bundle(tmp_path, REPORT, evidence_store.shard_data(kube, stored), totals, [])
    assert not list(tmp_path.rglob("*.ndjson*"))


def test_truncated_rows_and_partial_reads_are_listed(tmp_path: Path) -> None:
    by_job = {"wf-group-0": dcgm_rows("node-0")}
    seeded = seed(WORKFLOW, by_job, partial={"wf-group-0": "2 log lines unreadable"})
    seeded.seals["wf-group-0"]["truncated"] = [{"node": "node-0", "reason": "row over 256 KiB compressed"}]
    seeded.status["truncated"] = 1
    kube = EvidenceKube(seeded.configmaps)
    stored = evidence_store.read(kube, {**WORKFLOW, "status": {"evidence": seeded.status}},
                                 {"wf-group-0": job("wf-group-0", "wf", seeded.seals["wf-group-0"])})
    bundle.from_cluster(kube, tmp_path, REPORT, [stored])
    assert json.loads((tmp_path / "truncation.json").read_text()) == [
        {"workflow": "wf", "job": "wf-group-0", "attempt": 1, "partial": "2 log lines unreadable",
         "truncated": [{"node": "node-0", "reason": "row over 256 KiB compressed"}]}]


def test_a_job_that_timed_out_unsealed_is_listed_as_partial(tmp_path: Path) -> None:
    """Its workload never ended, so nothing sealed it: the Workflow's final totals name it, and so does the bundle."""
    seeded = seed(WORKFLOW, {"wf-group-0": dcgm_rows("node-0")})
    unsealed = "wf-group-1: no evidence sealed: its workload did not end while the run watched it"
    status = {**seeded.status, "partial": [unsealed]}
    kube = EvidenceKube(seeded.configmaps)
    stored = evidence_store.read(kube, {**WORKFLOW, "status": {"evidence": status}},
                                 {"wf-group-0": job("wf-group-0", "wf", seeded.seals["wf-group-0"]),
                                  "wf-group-1": job("wf-group-1", "wf", None)})
    bundle.from_cluster(kube, tmp_path, REPORT, [stored])
    assert json.loads((tmp_path / "truncation.json").read_text()) == [
        {"workflow": "wf", "job": "wf-group-1", "attempt": None, "truncated": [],
         "partial": "no evidence sealed: its workload did not end while the run watched it"}]


# ---------------------------------------------------------------- read back


def test_read_returns_the_rows_asked_for(tmp_path: Path) -> None:
    _write(tmp_path)
    failing = read_bundle(tmp_path, component="gpu", outcome="fail")
    assert failing["matched"] == 1 and failing["rows"][0]["detail"] == MEMORY
    assert (failing["rows"][0]["node"], failing["rows"][0]["index"]) == ("node-1", 3)
    assert failing["totals"]["rows"] == 72 and failing["manifest"]["fileCount"] == 4
    node = read_bundle(tmp_path, node="node-2", limit=5)
    assert node["matched"] == 24 and len(node["rows"]) == 5
    assert read_bundle(tmp_path, component="link")["matched"] == 0


def test_one_byte_changed_in_a_component_file_is_refused_naming_it(tmp_path: Path) -> None:
    _write(tmp_path)
    path = tmp_path / "components/gpu.ndjson"
    data = bytearray(path.read_bytes())
    data[10] = ord("X") if data[10] != ord("X") else ord("Y")
    path.write_bytes(bytes(data))
    with pytest.raises(InputError, match=r"^path: .*: components/gpu.ndjson has sha256 [0-9a-f]{64}, manifest.json "
                                         r"says [0-9a-f]{64}: the file was changed after the bundle was written$"):
        read_bundle(tmp_path)


@pytest.mark.parametrize(("change", "message"), [
    (lambda m: {**m, "fileCount": 5}, "fileCount is 5 but it lists 4 files"),
    (lambda m: {**m, "formatVersion": 2}, "formatVersion 2 is unknown; this collection reads 1"),
    (lambda m: {**m, "files": [*m["files"], {"path": "components/step.ndjson", "sha256": "0", "size": 1}],
                "fileCount": 5}, "components/step.ndjson is listed in manifest.json but missing"),
    (lambda m: {**m, "files": [{**m["files"][0], "size": 1}, *m["files"][1:]]},
     r"components/gpu.ndjson is \d+ bytes, manifest.json says 1"),
    (lambda m: {**m, "files": [{"path": "../x", "sha256": "0", "size": 1}], "fileCount": 1}, "files is not a list"),
], ids=["count", "version", "file-missing", "size", "path-outside"])
def test_a_manifest_that_does_not_hold_is_refused(tmp_path: Path, change: Any, message: str) -> None:
    manifest = _write(tmp_path)
    (tmp_path / "manifest.json").write_text(json.dumps(change(manifest)))
    with pytest.raises(InputError, match=message):
        read_bundle(tmp_path)


def test_no_manifest_or_one_that_does_not_parse_is_refused_never_globbed(tmp_path: Path) -> None:
    _write(tmp_path)
    (tmp_path / "manifest.json").write_text("{not json")
    with pytest.raises(InputError, match=r"manifest.json does not parse as JSON \(Expecting property name"):
        read_bundle(tmp_path)
    (tmp_path / "manifest.json").unlink()
    with pytest.raises(InputError) as err:
        read_bundle(tmp_path)
    assert str(err.value) == (f"path: {tmp_path} has no manifest.json: it is no results bundle, or its writing did "
                              "not finish; write it again with certification_results bundle_dir")


def test_certification_results_refuses_a_bundle_of_a_snapshot_report_and_writes_none_in_check_mode(
        tmp_path: Path) -> None:
    kube, stored = _cluster()
    with pytest.raises(InputError, match="^bundle_dir: the report came from the Certification's snapshot"):
        results._bundle(kube, tmp_path, REPORT, None, False)  # noqa: SLF001 - the option's own rules
    assert results._bundle(kube, tmp_path, REPORT, [stored], True) == {}  # noqa: SLF001
    assert not tmp_path.joinpath("manifest.json").exists() and kube.gets == []
    written = results._bundle(kube, tmp_path, REPORT, [stored], False)  # noqa: SLF001
    assert written["changed"] is True and written["bundle"]["path"] == str(tmp_path)
    assert results._bundle(kube, tmp_path, REPORT, [stored], False)["changed"] is False  # noqa: SLF001
