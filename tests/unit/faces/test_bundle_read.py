"""bundle_read through its action plugin in-process, as Ansible runs it on the controller: the documented arguments
and return values, the rows asked for, and one clear line for a bundle it will not vouch for."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from ansible_collections.cre.certification.plugins.module_utils.driver import bundle, evidence_store
from ansible_collections.cre.certification.plugins.modules import bundle_read as stub
from tests.evidence_seed import MEMORY, dcgm_rows, job, seed
from tests.unit.driver.evidence_cluster import EvidenceKube
from tests.unit.faces.module_stub import documented_spec

WORKFLOW = {"metadata": {"name": "wf", "namespace": "default", "uid": "u-1"}}


def _bundle(directory: Path) -> Path:
    seeded = seed(WORKFLOW, {"wf-group-0": dcgm_rows("node-0"), "wf-group-1": dcgm_rows("node-1", failing_gpu=3)})
    kube = EvidenceKube(seeded.configmaps)
    stored = evidence_store.read(kube, {**WORKFLOW, "status": {"evidence": seeded.status}},
                                 {n: job(n, "wf", s) for n, s in seeded.seals.items()})
    bundle.from_cluster(kube, directory, {"name": "cert"}, [stored])
    return directory


def test_documentation_matches_argument_spec() -> None:
    documented_spec(stub, ("type", "default", "required", "choices"))


def test_the_failing_gpu_is_returned_and_every_return_is_documented(tmp_path: Path, run_action: Any) -> None:
    path = _bundle(tmp_path / "bundle")
    result = run_action("bundle_read", {"path": str(path), "outcome": "fail"}, check_mode=True)
    assert result.get("failed") is not True, result
    assert result["changed"] is False and result["matched"] == 1
    assert [(r["node"], r["index"], r["test"], r["detail"]) for r in result["rows"]] == [("node-1", 3, "memory", MEMORY)]
    assert result["totals"]["rows"] == 48 and result["manifest"]["fileCount"] == 4
    documented = yaml.safe_load(re.search(r'RETURN = r"""(.*?)"""', Path(stub.__file__).read_text(), re.S).group(1))
    assert set(result) - {"changed", "invocation"} == set(documented)


def test_a_tampered_byte_is_refused_in_one_line_naming_the_file(tmp_path: Path, run_action: Any) -> None:
    path = _bundle(tmp_path / "bundle")
    rows = path / "components" / "gpu.ndjson"
    rows.write_bytes(rows.read_bytes().replace(b"Pass", b"Fail", 1))
    result = run_action("bundle_read", {"path": str(path)})
    assert result["failed"] is True and "\n" not in result["msg"]
    assert result["msg"].startswith(f"path: {path}: components/gpu.ndjson has sha256 ")
