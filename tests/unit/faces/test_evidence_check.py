"""evidence_check through its action plugin in-process, as Ansible runs it on the controller: the real samples,
the documented arguments and return values, and one clear line for what it cannot read."""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

from ansible_collections.cre.certification.plugins.modules import evidence_check as stub
from tests.unit.engine.evidence.dcgm_docs import MEMORY_MESSAGE, V4_TESTS, all_tests, v4
from tests.unit.engine.evidence.gemm_logs import HEALTHY, WINDOWS, log
from tests.unit.faces.module_stub import documented_spec

DATA = Path(__file__).resolve().parents[1] / "engine" / "data" / "dcgm_diag"
ALL_SKIP = str(DATA / "gb10-dcgm4.4.2-r3-all-skip.txt")
H200 = str(DATA / "h200x8-azure-dcgm3.1.8-r1-persistence-mode-fail.txt")


def test_documentation_matches_argument_spec() -> None:
    documented_spec(stub, ("type", "default", "required", "choices"))


def test_a_failing_gpu_is_named_with_dcgms_message_and_every_return_is_documented(
        tmp_path: Path, run_action: Any) -> None:
    saved = tmp_path / "diag.json"
    failing = {("memory", 3): ("Fail", [(MEMORY_MESSAGE, 12)])}
    saved.write_text(json.dumps(v4(all_tests(V4_TESTS, "Pass", range(8), failing), list(range(8))), indent=4))
    result = run_action("evidence_check", {"path": str(saved), "format": "dcgm-diag-json", "node": "gpu-node-07",
                                           "gpus": 8}, check_mode=True)
    assert result.get("failed") is not True, result
    assert result["changed"] is False and result["outcome"] == "fail" and result["format_version"] == "DCGM 4.x JSON"
    assert result["gpus"][3]["failures"] == [{"test": "memory", "outcome": "fail",
                                              "detail": f"{MEMORY_MESSAGE} (DCGM error 12)"}]
    assert {r["node"] for r in result["rows"]} == {"gpu-node-07"}
    documented = yaml.safe_load(re.search(r'RETURN = r"""(.*?)"""', Path(stub.__file__).read_text(), re.S).group(1))
    # profile: a log's; window_s, warmup_s: a burn-in's; findings, product, snapshot: a configuration's
    assert set(result) - {"changed", "invocation"} == set(documented) - {"profile", "window_s", "warmup_s", "findings",
                                                                         "product", "snapshot"}


def test_a_pasted_table_with_every_test_skipped_warns_or_fails_with_the_option(run_action: Any) -> None:
    result = run_action("evidence_check", {"path": ALL_SKIP, "format": "dcgm-diag-text"})
    assert (result["outcome"], result["lacking_evidence"], result["dcgm_version"]) == ("warn", [0], "4.4.2")
    strict = run_action("evidence_check", {"path": ALL_SKIP, "format": "dcgm-diag-text", "skip_is_failure": True})
    assert strict.get("failed") is not True and strict["outcome"] == "fail"  # a verdict, not a failed task


def test_missing_gpus_from_the_expected_count(run_action: Any) -> None:
    result = run_action("evidence_check", {"path": ALL_SKIP, "format": "dcgm-diag-text", "gpus": 2})
    assert result["missing"] == [1] and result["outcome"] == "fail"


def test_bad_inputs_end_in_one_line_naming_the_option(tmp_path: Path, run_action: Any) -> None:
    result = run_action("evidence_check", {"path": H200, "format": "dcgm-diag-json"})
    assert result["failed"] is True and result["msg"] == (
        f"path: {H200} is not dcgm-diag-json output: line 1: cannot read 'Successfully ran diagnostic for group.' "
        "as JSON (Expecting value)")
    result = run_action("evidence_check", {"path": str(DATA / "dcgm3x-r3-json-1gpu-t4-virtualclient.json"),
                                           "format": "dcgm-diag-text"})
    assert result["failed"] is True and result["msg"].endswith("line 1: cannot read '{' as a row of the dcgmi diag table")
    result = run_action("evidence_check", {"path": str(tmp_path / "gone.txt"), "format": "dcgm-diag-text"})
    assert result["failed"] is True and result["msg"] == f"path: cannot read {tmp_path / 'gone.txt'}: No such file or directory"


LOGS = Path(__file__).resolve().parents[1] / "engine" / "data"


def test_a_saved_nccl_tests_log_gives_a_row_per_size_and_every_documented_return(run_action: Any) -> None:
    path = LOGS / "nccl_logs" / "t23-v2.18.5-allreduce-impossible-busbw-ratio.log"
    result = run_action("evidence_check", {"path": str(path), "format": "nccl-tests", "node": "group-3",
                                           "test_type": "all_reduce"}, check_mode=True)
    assert result.get("failed") is not True, result
    assert (result["profile"], result["outcome"]) == ("nccl-bandwidth", "warn")   # a refused line: warn, partial
    assert result["partial"].startswith("all_reduce: 1 result line(s) refused")
    assert {(r["node"], r["component"], r["test"]) for r in result["rows"]} == {("group-3", "group", "all_reduce")}
    returns = yaml.safe_load(re.search(r'RETURN = r"""(.*?)"""', Path(stub.__file__).read_text(), re.S).group(1))
    logs = ("always", "when O(format) is nccl-tests or training")
    always = {key for key, doc in returns.items() if doc["returned"] in logs}
    assert set(result) - {"changed", "invocation"} == always


def test_a_training_log_is_read_with_the_profile_that_reads_it(run_action: Any) -> None:
    path = LOGS / "real_logs" / "training" / "008-nemo2-training-epoch-iteration.log"
    result = run_action("evidence_check", {"path": str(path), "format": "training"})
    assert (result["profile"], result["outcome"], result["partial"]) == ("nemo-4-training", "pass", None)
    assert [r["index"] for r in result["rows"]] == [120, 121, 122, 123, 124, 125]
    named = run_action("evidence_check", {"path": str(path), "format": "training", "profile": "megatron-training"})
    assert (named["rows"], named["outcome"]) == ([], None)   # no step read: no evidence, not a pass


def test_a_profile_that_cannot_read_the_format_is_refused_in_one_line(run_action: Any) -> None:
    path = LOGS / "real_logs" / "training" / "008-nemo2-training-epoch-iteration.log"
    result = run_action("evidence_check", {"path": str(path), "format": "nccl-tests", "profile": "nemo-4-training"})
    assert result["failed"] is True and result["msg"] == (
        "profile: no built-in LogProfile named 'nemo-4-training' reads nccl-tests logs (those that do: "
        "nccl-bandwidth, nccl-loopback)")


def test_a_saved_burn_in_is_judged_by_the_products_floor_and_default_power(tmp_path: Path, run_action: Any) -> None:
    saved = tmp_path / "burn-in.log"
    saved.write_text(log({5: [HEALTHY[5] * 0.9] * WINDOWS}, {(w, 2): {"power_limit_w": "560.0"} for w in range(WINDOWS)}))
    args = {"path": str(saved), "format": "gemm-burn-in", "node": "gpu-node-07", "gpus": 8,
            "product": "NVIDIA H100 80GB HBM3"}
    result = run_action("evidence_check", args, check_mode=True)
    assert result.get("failed") is not True, result
    assert (result["outcome"], result["format_version"], result["window_s"]) == ("fail", "gemm-burn-in/1", 30.0)
    assert [g["index"] for g in result["gpus"] if g["outcome"] == "fail"] == [2, 5]
    floor, power = result["gpus"][5]["failures"][0]["detail"], result["gpus"][2]["failures"][0]["detail"]
    assert floor.startswith("floor: median 548.1 TFLOPS is 7.1% below the floor 590 for NVIDIA H100 80GB HBM3 bf16")
    assert power.startswith("power-limit: the enforced power limit 560 W is below the default 700 W")
    lower = run_action("evidence_check", {**args, "floor_tflops": 500.0, "power_default_w": 550.0})
    assert [g["index"] for g in lower["gpus"] if g["outcome"] == "fail"] == [5]   # node median only
    assert [f["rule"] for f in lower["gpus"][5]["findings"]] == ["node-median"]


def test_a_saved_gpu_burn_run_names_the_faulty_gpu(run_action: Any) -> None:
    path = LOGS / "gemm_tools" / "gpu-burn" / "tesla-t4-500s-faulty-warning-errors.txt"
    result = run_action("evidence_check", {"path": str(path), "format": "gpu-burn", "node": "t4-box"})
    assert result.get("failed") is not True, result
    assert (result["outcome"], result["format_version"], result["partial"]) == ("fail", "gpu-burn", None)
    assert result["gpus"][0]["uuid"] == "GPU-899fdfea-f386-7371-8495-9a98620768fb"
