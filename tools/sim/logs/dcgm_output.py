"""The document a simulated `dcgmi diag --run LEVEL --json` prints, in DCGM 3.x's or 4.x's layout, and its exit.

The shapes are dcgmi's own (dcgmi/Diag.cpp `HelperJsonBuildOutput`, `HelperJsonAddResult`,
`HelperJsonAddBasicTests` at v3.3.9; `HelperJsonAddEntities`, `HelperJsonAddMetadata`, `HelperJsonAddTestSummary`
at v4.5.2), printed as jsoncpp's `toStyledString` prints them: keys sorted (a std::map), tab indents, `" : "`,
a nested value on a line of its own, every array one item per line.

- DCGM 3.x (`DCGM GPU Diagnostic`): at the root `version`, `Driver Version Detected`, `GPU Device IDs` and
  `GPU Device Serials`; the deployment checks as node results (`{status}`, a failing one with the integer
  `gpu_id` of its last error and `warnings[].warnings`), then the Integration, Hardware and Stress tests that
  ran, one result per GPU keyed `gpu_id` (a string) with `warnings[]` of `warning`, `error_id`,
  `error_category`, `error_severity`.
- DCGM 4.x (`DCGM Diagnostic`): per test one result per GPU entity and a `test_summary` (the test's result and
  every error), `entity_groups` (each GPU's `entity_id`, `serial_num`, `device_id`) and `metadata` at the root.

Neither layout names a GPU's UUID: dcgmi prints indices and serials only. `gpu_uuid` is the simulator's stable
UUID of a GPU for whoever needs one beside the output.
"""
from __future__ import annotations

import hashlib
import json
from typing import Any

from .dcgm_tests import (
    ALL_SKIP,
    DCGM_VERSION,
    DEPLOYMENT_V3,
    DRIVER_VERSION,
    EXIT_ERROR,
    EXIT_ISOLATE,
    ISOLATE,
    SKIPPED_BY_DEFAULT,
    V3_CATEGORIES,
    V3_ORDER,
    Test,
    tests_at,
)

GPU_GROUP, GPU_GROUP_ID = "GPU", 1   # DCGM_FE_GPU
Faults = dict[int, list[str]]        # GPU index -> the tests failing on it (or `all-skip`)


def _digest(node: str, index: int) -> str:
    return hashlib.sha256(f"{node}/gpu/{index}".encode()).hexdigest()


def gpu_uuid(node: str, index: int) -> str:
    """GPU `index` of `node`'s UUID as NVML prints it (`GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`), stable."""
    h = _digest(node, index)
    return f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def serial(node: str, index: int) -> str:
    """Its board serial, 13 digits as NVML prints it, stable."""
    return f"165{int(_digest(node, index)[32:], 16) % 10**10:010d}"


def status(test: Test, gpu: int, faults: Faults) -> str:
    """DCGM's word for `test` on `gpu`: an all-skip GPU skips every test but the deployment checks (as DCGM does
    on a GPU it cannot stress: `software` still passes), a faulted test fails, nccl_tests skips without its binary."""
    own = faults.get(gpu, [])
    if ALL_SKIP in own and test.name != "software":
        return "Skip"
    if test.name in own:
        return "Fail"
    return "Skip" if test.name in SKIPPED_BY_DEFAULT else "Pass"


def failures(level: int, layout: int, gpus: int, faults: Faults) -> list[tuple[int, Test]]:
    """(GPU, test) of every result that fails in the run: faulted tests the level runs, on GPUs the node has."""
    return [(g, t) for g in range(gpus) for t in tests_at(level, layout) if status(t, g, faults) == "Fail"]


def exit_code(level: int, layout: int, gpus: int, faults: Faults) -> int:
    """dcgmi's exit: 0 unless a test failed; then 205 when one failure's priority is ISOLATE, else 226."""
    failed = [t for _gpu, t in failures(level, layout, gpus, faults)]
    if not failed:
        return 0
    return EXIT_ISOLATE if any(t.severity == ISOLATE for t in failed) else EXIT_ERROR


def _error(test: Test, gpu: int, text_key: str = "warning") -> dict[str, Any]:
    return {text_key: test.failure(gpu), "error_id": test.error_id, "error_category": test.error_category,
            "error_severity": test.severity}


def document(layout: int, level: int, node: str, gpus: int, device_id: str, faults: Faults) -> dict[str, Any]:
    """The JSON document (as a dict) that dcgmi prints for a run of `level` on `gpus` GPUs of `node`."""
    if layout == 3:
        return _v3(level, node, gpus, device_id, faults)
    return _v4(level, node, gpus, device_id, faults)


def _v4(level: int, node: str, gpus: int, device_id: str, faults: Faults) -> dict[str, Any]:
    categories: dict[str, list[dict[str, Any]]] = {}
    for test in tests_at(level, 4):
        results, errors = [], []
        for gpu in range(gpus):
            word = status(test, gpu, faults)
            entry: dict[str, Any] = {"entity_group": GPU_GROUP, "entity_group_id": GPU_GROUP_ID, "entity_id": gpu,
                                     "status": word}
            if word == "Fail":
                entry["warnings"] = [_error(test, gpu)]
                errors += entry["warnings"]
            results.append(entry)
        words = {r["status"] for r in results}
        summary: dict[str, Any] = {"status": "Fail" if "Fail" in words else "Pass" if "Pass" in words else "Skip"}
        if errors:
            summary["warnings"] = errors
        categories.setdefault(test.category_v4, []).append(
            {"name": test.name, "results": results, "test_summary": summary})
    return {
        "DCGM Diagnostic": {"test_categories": [{"category": c, "tests": t} for c, t in categories.items()]},
        "entity_groups": [{"entities": [{"device_id": device_id, "entity_id": g, "serial_num": serial(node, g)}
                                        for g in range(gpus)],
                           "entity_group": GPU_GROUP, "entity_group_id": GPU_GROUP_ID}],
        "metadata": {"Driver Version Detected": DRIVER_VERSION[4], "version": DCGM_VERSION[4]},
    }


def _v3(level: int, node: str, gpus: int, device_id: str, faults: Faults) -> dict[str, Any]:
    ran = {t.name: t for t in tests_at(level, 3)}
    software = ran["software"]
    failing = [g for g in range(gpus) if status(software, g, faults) == "Fail"]
    deployment = []
    for check in DEPLOYMENT_V3:
        result: dict[str, Any] = {"status": "Pass"}
        if check == software.display and failing:
            result = {"gpu_id": failing[-1], "status": "Fail",
                      "warnings": [_error(software, g, "warnings") for g in failing]}
        deployment.append({"name": check, "results": [result]})
    categories: dict[str, list[dict[str, Any]]] = {"Deployment": deployment}
    for name in (n for n in V3_ORDER if n in ran):
        test = ran[name]
        results = []
        for gpu in range(gpus):
            entry: dict[str, Any] = {"gpu_id": str(gpu), "status": status(test, gpu, faults)}
            if entry["status"] == "Fail":
                entry["warnings"] = [_error(test, gpu)]
            results.append(entry)
        categories.setdefault(test.category_v3, []).append({"name": test.display, "results": results})
    return {
        "DCGM GPU Diagnostic": {"test_categories": [{"category": c, "tests": categories[c]}
                                                    for c in V3_CATEGORIES if c in categories]},
        "Driver Version Detected": DRIVER_VERSION[3],
        "GPU Device IDs": [device_id] * gpus,
        "GPU Device Serials": {str(g): serial(node, g) for g in range(gpus)},
        "version": DCGM_VERSION[3],
    }


def styled(value: Any) -> str:
    """`value` as jsoncpp's Value::toStyledString writes it (its StreamWriterBuilder defaults)."""
    writer = _Styled()
    writer.value(value)
    return "".join(writer.out) + "\n"


class _Styled:
    """jsoncpp's BuiltStyledStreamWriter with a tab indent and `commentStyle: All` (so every array is multi-line)."""

    def __init__(self) -> None:
        self.out: list[str] = []
        self.depth = 0
        self.indented = True

    def _indent(self) -> None:
        self.out.append("\n" + "\t" * self.depth)

    def _with_indent(self, text: str) -> None:
        if not self.indented:
            self._indent()
        self.out.append(text)
        self.indented = False

    def value(self, value: Any) -> None:
        if isinstance(value, dict) and value:
            self._with_indent("{")
            self.depth += 1
            for i, key in enumerate(sorted(value)):
                self._with_indent(json.dumps(key))
                self.out.append(" : ")
                self.value(value[key])
                self.out.append("," if i < len(value) - 1 else "")
            self.depth -= 1
            self._with_indent("}")
        elif isinstance(value, list) and value:
            self._with_indent("[")
            self.depth += 1
            for i, child in enumerate(value):
                if not self.indented:
                    self._indent()
                self.indented = True
                self.value(child)
                self.indented = False
                self.out.append("," if i < len(value) - 1 else "")
            self.depth -= 1
            self._with_indent("]")
        else:
            self.out.append("{}" if isinstance(value, dict) else "[]" if isinstance(value, list) else json.dumps(value))


def render(layout: int, level: int, node: str, gpus: int, device_id: str, faults: Faults) -> tuple[str, int]:
    """(what dcgmi prints, its exit code) for one run."""
    return (styled(document(layout, level, node, gpus, device_id, faults)),
            exit_code(level, layout, gpus, faults))
