"""The simulated GEMM burn-in (tools/sim/logs/burn_in_output.py, burn_in_logs.py) read back by the product's strict
reader (engine/evidence/gemm_burn_in.py): every GPU every window, nothing refused; each GPU fault shows on its GPU
only, as the issue names it; and how a burn-in pod prints and ends (no cluster: pods and nodes as the API serves
them)."""
from __future__ import annotations

import json
import statistics
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from ansible_collections.cre.certification.plugins.module_utils.engine.evidence import gemm_burn_in
from ansible_collections.cre.certification.plugins.module_utils.engine.evidence.rows import Row
from tests.unit.sim.recording_api import Listed, RecordingApi
from tools.sim import commands, profiles, stages
from tools.sim.logs import burn_in_logs, burn_in_output
from tools.sim.logs.burn_in_output import Fault, Run

NODE = "gpu-node-007"
H100 = "NVIDIA-H100-80GB-HBM3"
START = datetime(2026, 3, 2, 10, 5, tzinfo=UTC)
DEFAULT_RUN = Run()
ARGS = ["--duration-s", "600", "--warmup-s", "60", "--window-s", "30", "--dtype", "bf16", "--size", "8192",
        "--product", H100, "--floor-tflops", "0", "--power-default-w", "0"]


def _rows(faults: burn_in_output.Faults | None = None, run: Run = DEFAULT_RUN, product: str = H100,
          gpus: int = 8) -> tuple[dict[int, list[Row]], int]:
    lines, code = burn_in_output.render(NODE, product, gpus, run, faults or {}, START)
    rows, partial = gemm_burn_in.read_lines(lines, NODE)
    assert partial is None and len(rows) == gpus * run.windows   # strict: nothing refused, every GPU every window
    by_gpu: dict[int, list[Row]] = {}
    for row in rows:
        by_gpu.setdefault(row.index or 0, []).append(row)
    return by_gpu, code


def _steady(rows: list[Row]) -> list[float]:
    return [r.value for r in rows if (r.sample or 0) >= 2]


def _field(row: Row, name: str) -> str:
    return dict(part.split("=") for part in row.detail.split(" "))[name]


def test_a_healthy_h100_node_runs_22_windows_near_its_typical_figure_with_a_2_to_3_percent_spread() -> None:
    by_gpu, code = _rows()
    assert code == 0
    medians = [statistics.median(_steady(rows)) for rows in by_gpu.values()]
    assert 0.98 * 737.5 < statistics.median(medians) < 1.02 * 737.5
    assert 0.01 < (max(medians) - min(medians)) / statistics.median(medians) < 0.03
    assert all(r.outcome == "pass" and _field(r, "throttle") == "none" for rows in by_gpu.values() for r in rows)
    first = by_gpu[0][0]
    assert (first.time, by_gpu[0][21].time) == ("2026-03-02T10:05:00Z", "2026-03-02T10:15:30Z")
    assert first.value > 1.02 * statistics.median(_steady(by_gpu[0]))   # the cold GPU's warm-up boost
    assert _field(first, "power_limit_w") == "700.0" and 60 <= int(_field(first, "temp_c")) < 70


@pytest.mark.parametrize(("product", "dtype", "typical"), [
    (H100, "fp8", 1300.0), (H100, "tf32", 375.0), ("NVIDIA-GB200", "bf16", 1550.0),
    ("NVIDIA-GB300-NVL72", "fp8", 3287.5), ("NVIDIA-B300-SXM6-AC", "bf16", 1512.5), ("NVIDIA-L40S", "bf16", 500.0)])
def test_each_product_and_dtype_runs_at_its_typical_figure(product: str, dtype: str, typical: float) -> None:
    by_gpu, _code = _rows(run=Run(dtype=dtype), product=product, gpus=4)
    assert 0.97 * typical < statistics.median(_steady(by_gpu[1])) < 1.03 * typical


def test_gpu_slow_lowers_that_gpu_alone() -> None:
    by_gpu, code = _rows({5: [Fault("gpu-slow", 0.9)]})
    others = statistics.median(statistics.median(_steady(by_gpu[g])) for g in range(8) if g != 5)
    assert 0.87 < statistics.median(_steady(by_gpu[5])) / others < 0.93 and code == 0
    assert all(r.outcome == "pass" for r in by_gpu[5])


@pytest.mark.parametrize(("reason", "drop", "outcome"), [("hw_thermal", 0.85, "fail"), ("hw_slowdown", 0.85, "fail"),
                                                         ("hw_power_brake", 0.85, "fail"),
                                                         ("sw_power_cap", 0.97, "pass")])
def test_gpu_throttle_shows_its_reason_and_drops_from_minute_m(reason: str, drop: float, outcome: str) -> None:
    by_gpu, _code = _rows({2: [Fault("gpu-throttle", reason=reason, after_minutes=4)]})
    rows = by_gpu[2]
    assert [_field(r, "throttle") for r in rows] == ["none"] * 8 + [reason] * 14   # window 8 starts at minute 4
    assert [r.outcome for r in rows] == ["pass"] * 8 + [outcome] * 14
    before, after = statistics.median(r.value for r in rows[2:8]), statistics.median(r.value for r in rows[8:])
    assert drop - 0.015 < after / before < drop + 0.015
    assert (_field(rows[-1], "temp_c") == "92") == (reason == "hw_thermal")


def test_gpu_degrade_falls_steadily_to_its_factor_by_the_end() -> None:
    by_gpu, _code = _rows({3: [Fault("gpu-degrade", 0.8)]})
    steady = _steady(by_gpu[3])
    assert 0.78 < steady[-1] / steady[0] < 0.82
    assert all(later < earlier for earlier, later in zip(steady[1:], steady[2:]))


def test_gpu_wrong_fails_every_window_of_that_gpu_and_the_harness_exits_1() -> None:
    by_gpu, code = _rows({1: [Fault("gpu-wrong")]})
    assert code == burn_in_output.WRONG_EXIT == 1
    assert {_field(r, "check") for r in by_gpu[1]} == {"wrong"} and {r.outcome for r in by_gpu[1]} == {"fail"}
    assert {_field(r, "check") for r in by_gpu[0]} == {"ok"}


def test_power_limit_lowers_the_enforced_limit_and_the_figure() -> None:
    by_gpu, _code = _rows({6: [Fault("power-limit", 0.8)]})
    rows = by_gpu[6]
    assert {_field(r, "power_limit_w") for r in rows} == {"560.0"}
    assert all(float(_field(r, "power_w")) <= 560.0 and _field(r, "throttle") == "sw_power_cap" for r in rows)
    others = statistics.median(_steady(by_gpu[0]))
    assert statistics.median(_steady(rows)) < 0.93 * others


def _pod(args: list[str], node: str = NODE, name: str = "burn-0") -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "ns", "uid": name},
            "spec": {"nodeName": node, "containers": [
                {"name": "node", "command": ["python3", "/opt/cre/gemm_burn_in.py"], "args": args}]},
            "status": {"phase": "Running"}}


def _tick(tmp_path: Path, pods: list[dict[str, Any]], **saved: Any) -> tuple[RecordingApi, list[str]]:
    state = tmp_path / "cre-sim.json"
    state.write_text(json.dumps(saved))
    api = RecordingApi()
    nodes = Listed([profiles.build_nodes("aws-h100", 8)[7]])
    served = burn_in_logs.BurnIns(tmp_path / "logs", state).tick(api, api, Listed(pods), nodes)  # type: ignore[arg-type]
    return api, served


def _log(tmp_path: Path, name: str = "burn-0") -> list[str]:
    return [line.split(" F ", 1)[1] for line in (tmp_path / "logs" / f"ns_{name}.log").read_text().splitlines()]


def test_a_pod_prints_its_whole_run_at_once_and_is_marked_to_complete(tmp_path: Path) -> None:
    api, served = _tick(tmp_path, [_pod(ARGS)], gpu_faults={NODE: {"5": {"gpu-slow": {"factor": 0.9}}}})
    assert served == ["burn-0"] and api.annotations == [{stages.BURN_IN_PRINTED: "0"}]
    rows, partial = gemm_burn_in.read_lines(_log(tmp_path), NODE)
    assert partial is None and len(rows) == 8 * 22
    slow = statistics.median(r.value for r in rows if r.index == 5 and (r.sample or 0) >= 2)
    assert slow < 0.93 * statistics.median(r.value for r in rows if r.index == 0 and (r.sample or 0) >= 2)


def test_a_wrong_result_ends_the_pod_with_exit_1_and_bad_arguments_with_exit_2(tmp_path: Path) -> None:
    api, _served = _tick(tmp_path, [_pod(ARGS)], gpu_faults={NODE: {"1": {"gpu-wrong": {}}}})
    assert api.annotations == [{stages.BURN_IN_PRINTED: "1", **stages.exit_annotations(
        0, 1, "gemm-burn-in: a result was wrong (check=wrong)")}]
    bad = [*ARGS[:7], "fp16", *ARGS[8:]]
    api, _served = _tick(tmp_path, [_pod(bad, name="burn-1")])
    message = "gemm_burn_in.py: error: argument --dtype: invalid choice: 'fp16'"
    assert api.annotations == [{stages.BURN_IN_PRINTED: "2", **stages.exit_annotations(0, 2, message)}]
    assert _log(tmp_path, "burn-1") == [message]


def test_a_pod_on_a_node_whose_fault_kills_its_pods_prints_nothing(tmp_path: Path) -> None:
    api, served = _tick(tmp_path, [_pod(ARGS)], faults={NODE: "workload"})
    assert (served, api.annotations) == ([], [])
    assert burn_in_logs.words_of({"spec": {"containers": [{"command": ["dcgmi"], "args": ["diag"]}]}}) is None


def test_a_burn_in_pod_completes_only_once_printed_and_right(tmp_path: Path) -> None:
    (tmp_path / "stages").mkdir()
    (tmp_path / "stages" / "pod-complete.yaml").write_text(json.dumps({
        "apiVersion": "kwok.x-k8s.io/v1alpha1", "kind": "Stage", "metadata": {"name": stages.POD_COMPLETE},
        "spec": {"resourceRef": {"apiGroup": "v1", "kind": "Pod"}, "selector": {"matchExpressions": []}}}))
    (complete,) = [s for s in stages.base_stages(tmp_path) if s["metadata"]["name"] == stages.POD_COMPLETE]
    assert {"key": '.metadata.labels["jobset.sigs.k8s.io/jobset-name"] == null or '
                   f'({commands.jq_any_container(commands.GEMM_BURN_IN)} | not) or '
                   '.metadata.annotations["sim.cre.certification/burn-in-printed"] == "0"',
            "operator": "In", "values": ["true"]} in complete["spec"]["selector"]["matchExpressions"]
