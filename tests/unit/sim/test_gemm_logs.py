"""The simulated GEMM goodput run (tools/sim/logs/gemm_logs.py) against the worked example it serves: the example entry's
pod runs it, the example LogProfile reads what it prints, and a slow node's figure falls below the threshold."""
from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from statistics import mean

import yaml

from ansible_collections.cre.certification.plugins.module_utils.engine.catalog import entries, user
from ansible_collections.cre.certification.plugins.module_utils.engine.logs.goodput_log import GoodputParser
from ansible_collections.cre.certification.plugins.module_utils.engine.spec import thresholds
from tools.sim.logs import gemm_logs, workload_logs
from tools.sim.logs.training_logs import FAULT_ANNOTATION

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "docs" / "examples"
PROFILE = yaml.safe_load((EXAMPLE / "logprofiles" / "gemm-goodput.yaml").read_text())
START = datetime(2026, 12, 5, 10, 0, tzinfo=UTC)
THRESHOLD = "value >= 600"


def example_pod() -> dict:
    """The pod the example entry's TrainJob runs on an H100 node (its trainer's command and arguments)."""
    catalog = user.load(user.check_dirs([str(EXAMPLE / "catalog")]))
    spec = entries.build_spec("compute", "gemm-goodput", {"gpuArchitecture": "h100"}, catalog)
    trainer = spec["jobTemplate"]["spec"]["workload"]["trainJob"]["trainer"]
    return {"spec": {"containers": [{"name": "node", "command": trainer["command"], "args": trainer["args"]}]}}


def node(factor: float | None = None, fault: str = "") -> dict:
    annotations = {**({workload_logs.FACTOR_ANNOTATION: str(factor)} if factor else {}),
                   **({FAULT_ANNOTATION: fault} if fault else {})}
    return {"metadata": {"name": "gpu-node-000", "labels": {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"},
                         "annotations": annotations}}


def log(args: gemm_logs.Args, tflops: float, seconds: float, stalled: bool = False) -> str:
    lines = gemm_logs.due_lines(args, tflops, START, START + timedelta(seconds=seconds), 0, stalled)
    return "".join(workload_logs.cri_line(text, when).split(" stdout F ")[0] + " " + text + "\n"
                   for text, when in lines)


def measured(text: str) -> float:
    steps = GoodputParser.from_profile(PROFILE).parse(text).steps
    return mean(s.tflops for s in steps if s.tflops > 0)


def test_the_example_entry_s_pod_runs_the_gemm_run_with_its_arguments() -> None:
    assert gemm_logs.gemm_run(example_pod()) == gemm_logs.Args(gpus=8, iterations=600, size=8192, dtype="bf16")
    assert gemm_logs.gemm_run({"spec": {"containers": [{"command": ["dcgmi"], "args": ["diag"]}]}}) is None


def test_a_line_per_iteration_at_the_simulator_s_pace_after_the_header() -> None:
    args = gemm_logs.Args(gpus=8, iterations=5)
    lines = gemm_logs.due_lines(args, 740.0, START, START + timedelta(seconds=1.2), 0)
    assert [text.split(" |")[0] for text, _when in lines] == [
        gemm_logs.header(args), "iteration    1/5", "iteration    2/5"]
    assert [when - START for _text, when in lines] == [timedelta(0), timedelta(seconds=0.5), timedelta(seconds=1)]
    later = gemm_logs.due_lines(args, 740.0, START, START + timedelta(minutes=5), len(lines))
    assert [text.split(" |")[0] for text, _when in later] == [
        "iteration    3/5", "iteration    4/5", "iteration    5/5"]


def test_the_example_profile_reads_the_figure_and_a_slow_node_violates_the_threshold() -> None:
    args = gemm_logs.gemm_run(example_pod())
    assert args is not None
    good = measured(log(args, gemm_logs.node_tflops(node()), 30))
    slow = measured(log(args, gemm_logs.node_tflops(node(factor=0.5)), 30))
    assert abs(good - 740.0) < 740.0 * gemm_logs.WOBBLE and abs(slow - 370.0) < 370.0 * gemm_logs.WOBBLE
    assert thresholds.evaluate_all({"avgTFLOPsPerGPU": THRESHOLD}, {"avgTFLOPsPerGPU": good}) is None
    violated = thresholds.evaluate_all({"avgTFLOPsPerGPU": THRESHOLD}, {"avgTFLOPsPerGPU": slow})
    assert violated is not None and violated[0] == "ThresholdViolated"


def test_the_profile_s_examples_match_what_the_gemm_run_prints() -> None:
    args = gemm_logs.Args()
    assert PROFILE["spec"]["patterns"]["applicationStart"]["example"] == gemm_logs.header(
        gemm_logs.Args(iterations=600))
    window = GoodputParser.from_profile(PROFILE).parse(log(args, 740.0, 2))
    assert window.application_start_time == START and [s.global_step for s in window.steps] == [1, 2, 3, 4]


def test_a_stalled_node_stops_printing_after_a_few_lines() -> None:
    args = gemm_logs.Args(iterations=100)
    stalled = gemm_logs.due_lines(args, 740.0, START, START + timedelta(seconds=30), 0, stalled=True)
    assert len(stalled) == 1 + gemm_logs.STALL_AFTER_LINES
    assert gemm_logs.node_tflops(node(fault="stall")) == 740.0
