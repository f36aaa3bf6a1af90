"""golden_generate and evidence_check's configuration formats through their action plugins in-process: the
documented arguments and return values, a profile written from a folder of snapshots and collector outputs, check
mode, and a saved nvidia-smi judged against that profile."""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

from ansible_collections.cre.certification.plugins.module_utils.engine.evidence import node_snapshot
from ansible_collections.cre.certification.plugins.modules import evidence_check, golden_generate
from tests.unit.engine.evidence.config_docs import collector, h100s, nics, node_files, xml
from tests.unit.faces.module_stub import documented_spec

SAMPLES = Path(__file__).resolve().parents[1] / "engine" / "data" / "config"


def _returns(stub: Any) -> dict[str, Any]:
    return yaml.safe_load(re.search(r'RETURN = r"""(.*?)"""', Path(stub.__file__).read_text(), re.S).group(1))


def test_documentation_matches_argument_spec() -> None:
    documented_spec(golden_generate, ("type", "default", "required", "choices", "elements"))


def _run_folder(tmp_path: Path) -> Path:
    """A folder like a results bundle: two collector outputs, one snapshot JSON, and files that are neither."""
    folder = tmp_path / "bundle"
    (folder / "configuration").mkdir(parents=True)
    for i in range(2):
        log = collector(f"gpu-node-{i}", node_files(h100s(), nics()))
        (folder / "configuration" / f"gpu-node-{i}.log").write_text(log)
    odd = collector("gpu-node-2", node_files(h100s(), nics(p0={"fw_ver": "28.36.1010"})))
    (folder / "gpu-node-2.json").write_text(json.dumps(node_snapshot.read(odd)))   # as a bundle keeps a snapshot
    (folder / "manifest.json").write_text(json.dumps({"formatVersion": 1}))
    (folder / "components").mkdir()
    (folder / "components" / "gpu.ndjson").write_text("{}\n")
    return folder


def test_a_profile_is_written_from_a_folder_and_every_return_is_documented(tmp_path: Path, run_action: Any) -> None:
    dest = tmp_path / "golden" / "fleet.yaml"
    args = {"src": [str(_run_folder(tmp_path))], "dest": str(dest), "platform": "azure"}
    checked = run_action("golden_generate", args, check_mode=True)
    assert checked.get("failed") is not True, checked
    assert checked["changed"] is True and not dest.exists()
    result = run_action("golden_generate", args)
    assert result["changed"] is True and result["nodes"] == ["gpu-node-0", "gpu-node-1", "gpu-node-2"]
    written = yaml.safe_load(dest.read_text())
    assert written == result["profile"]
    assert written["products"]["NVIDIA-H100-80GB-HBM3"]["pinned"]["nic.fw"] == [
        {"value": "28.39.1002", "nodes": 2, "of": 3}]
    assert set(result) - {"changed", "invocation"} == set(_returns(golden_generate))
    assert run_action("golden_generate", args)["changed"] is False   # the same snapshots write the same bytes


def test_a_saved_nvidia_smi_is_judged_against_a_generated_profile(tmp_path: Path, run_action: Any) -> None:
    dest = tmp_path / "fleet.yaml"
    run_action("golden_generate", {"src": [str(_run_folder(tmp_path))], "dest": str(dest)})
    saved = tmp_path / "gpu-node-9.xml"
    saved.write_text(xml(h100s(g4={"vbios": "96.00.61.00.01", "ecc": False})))
    result = run_action("evidence_check", {"path": str(saved), "format": "nvidia-smi-xml", "node": "gpu-node-9",
                                           "profile": str(dest)})
    assert result.get("failed") is not True, result
    failing = [(f["index"], f["field"], f["expected"], f["observed"], f["outcome"]) for f in result["findings"]
               if f["outcome"] != "pass"]
    assert failing == [(4, "ecc_current", "Enabled", "Disabled", "fail"),
                       (4, "vbios", "96.00.74.00.0D (pinned: 3 of 3 nodes)", "96.00.61.00.01", "warn")]
    assert result["outcome"] == "fail" and result["product"] == "NVIDIA H100 80GB HBM3"
    documented = set(_returns(evidence_check))
    dcgm_and_logs = {"profile", "window_s", "warmup_s", "dcgm_version", "driver_version", "format_version"}
    assert set(result) - {"changed", "invocation"} == documented - dcgm_and_logs


def test_every_configuration_format_reads_its_real_sample(run_action: Any) -> None:
    for fmt, folder in (("nvidia-smi-xml", "nvidia-smi-xml"), ("nvidia-smi-q", "nvidia-smi-q"), ("ibstat", "ibstat"),
                        ("ibv_devinfo", "ibv_devinfo"), ("lspci", "lspci")):
        for path in sorted((SAMPLES / folder).iterdir()):
            if path.suffix in (".md", ".json"):
                continue
            result = run_action("evidence_check", {"path": str(path), "format": fmt, "node": "n"})
            assert result.get("failed") is not True and result["findings"], (fmt, path.name, result)
