"""`dcgmi diag --json` documents in the exact shapes DCGM writes them (dcgmi/Diag.cpp HelperJsonBuildOutput and
HelperJsonAddResult at v3.1.8, v3.3.9 and v4.6.0), built from a table of per-GPU results for the unit tables."""
from __future__ import annotations

from typing import Any

# test name -> category, as DCGM 4.x files its plugins; 3.x names them for display (GPU Memory, Targeted Stress).
V4_TESTS = {"software": "Deployment", "memory": "Hardware", "pcie": "Integration", "targeted_stress": "Stress"}
V3_TESTS = {"GPU Memory": "Hardware", "PCIe": "Integration", "Targeted Stress": "Stress"}
MEMORY_MESSAGE = ("A memory mismatch was detected on GPU 3, but no error was reported by CUDA or NVML.")


def v4(results: dict[str, dict[int, tuple[str, list[tuple[str, int]]]]], gpus: list[int]) -> dict[str, Any]:
    """A 4.x document: `results` test -> GPU -> (status, [(message, error_id)]); `gpus` the entity_groups."""
    categories: dict[str, list[dict[str, Any]]] = {}
    for test, per_gpu in results.items():
        entries = [_v4_result(gpu, status, errors) for gpu, (status, errors) in sorted(per_gpu.items())]
        worst = next((s for s in ("Fail", "Warn", "Pass", "Skip") if any(e["status"] == s for e in entries)), "Skip")
        summary: dict[str, Any] = {"status": worst}
        warnings = [w for e in entries for w in e.get("warnings", [])]
        if warnings:
            summary["warnings"] = warnings
        categories.setdefault(V4_TESTS[test], []).append({"name": test, "results": entries, "test_summary": summary})
    return {
        "DCGM Diagnostic": {"test_categories": [{"category": c, "tests": t} for c, t in categories.items()]},
        "entity_groups": [{"entities": [{"device_id": "2330", "entity_id": g, "serial_num": f"165322000{g}"}
                                        for g in gpus], "entity_group": "GPU", "entity_group_id": 1}],
        "metadata": {"Driver Version Detected": "570.124.06", "version": "4.2.3"},
    }


def _v4_result(gpu: int, status: str, errors: list[tuple[str, int]]) -> dict[str, Any]:
    entry: dict[str, Any] = {"entity_group": "GPU", "entity_group_id": 1, "entity_id": gpu, "status": status}
    if errors:
        entry["warnings"] = [{"error_category": 6, "error_id": code, "error_severity": 2, "warning": message}
                             for message, code in errors]
    return entry


def v3(results: dict[str, dict[int, tuple[str, list[tuple[str, int]]]]], gpu_key: str = "gpu_id",
       device_ids: int = 0) -> dict[str, Any]:
    """A 3.x document: `gpu_key` `gpu_ids` (a string, with `warnings` one string: up to 3.2) or `gpu_id` (3.3: a
    list of coded warnings), `device_ids` GPUs named at the root."""
    categories: dict[str, list[dict[str, Any]]] = {}
    for test, per_gpu in results.items():
        entries = []
        for gpu, (status, errors) in sorted(per_gpu.items()):
            entry: dict[str, Any] = {gpu_key: str(gpu), "status": status}
            if errors and gpu_key == "gpu_ids":
                entry["warnings"] = ", ".join(message for message, _code in errors)
            elif errors:
                entry["warnings"] = [{"error_category": 6, "error_id": c, "error_severity": 2, "warning": m}
                                     for m, c in errors]
            entries.append(entry)
        categories.setdefault(V3_TESTS[test], []).append({"name": test, "results": entries})
    doc: dict[str, Any] = {"DCGM GPU Diagnostic": {"test_categories": [
        {"category": "Deployment", "tests": [{"name": "Denylist", "results": [{"status": "Pass"}]}]},
        *({"category": c, "tests": t} for c, t in categories.items())]}}
    if device_ids:
        doc.update({"version": "3.3.9", "Driver Version Detected": "550.90.07", "GPU Device IDs": ["2330"] * device_ids})
    return doc


def all_tests(tests: dict[str, str], status: str, gpus: range,
              override: dict[tuple[str, int], tuple[str, list[tuple[str, int]]]] | None = None
              ) -> dict[str, dict[int, tuple[str, list[tuple[str, int]]]]]:
    """Every test of `tests` with `status` on every GPU, but for `override` (test, GPU) -> (status, errors)."""
    override = override or {}
    return {t: {g: override.get((t, g), (status, [])) for g in gpus} for t in tests}
