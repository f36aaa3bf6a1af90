"""Diagnose's stage machine, one round end at a time (data/diagnose/transitions.yaml: every transition of
workflow spec §9), plus the MNNVL switch and which groups run without NVL."""
from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from ansible_collections.cre.certification.plugins.module_utils.engine.plan import mnnvl
from ansible_collections.cre.certification.plugins.module_utils.engine.reconcile import diagnose_tier
from ansible_collections.cre.certification.plugins.module_utils.engine.reconcile.diagnose_gate import (
    PASSED,
    PENDING,
    Verdict,
)

CASES = yaml.safe_load((Path(__file__).parents[1] / "data" / "diagnose" / "transitions.yaml").read_text())
MISSING = object()


def decide(case: dict) -> diagnose_tier.Round:
    groups = [{**g, "phase": "Failed" if g["name"] in case.get("failed", []) else "Succeeded"} for g in case["groups"]]
    verdicts = {g["name"]: PENDING if g["name"] in case.get("pending", []) else
                Verdict(False) if g["name"] in case.get("failed", []) else PASSED for g in groups}
    before = copy.deepcopy(case["diagnose"])
    decided = diagnose_tier.complete_round(case["diagnose"], groups, verdicts, case.get("min", 2),
                                           case.get("mnnvl", False), case.get("topology", True),
                                           case.get("failures", {}))
    assert case["diagnose"] == before, "the status read is not modified in place"
    return decided


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_round_end(case):
    decided = decide(case)
    expect = case["expect"]
    assert decided.pending == expect.get("pending", False)
    if decided.pending:
        return
    if "phase" in expect:
        assert (decided.phase, decided.message) == (expect["phase"], expect["message"])
        assert decided.reason == expect.get("reason", "IterationsFailed" if expect["phase"] == "Failed" else "JobCompleted")
        assert decided.diagnose["stage"] == "complete"
        assert decided.groups == []
    else:
        assert decided.phase == ""
        assert decided.reason == "IterationCompleted"
        assert decided.diagnose["stage"] == expect["stage"]
        assert [(g["name"], g["nodes"]) for g in decided.groups] == list(expect["groups"].items())
        assert all(g["phase"] == "Pending" for g in decided.groups)
        if "message" in expect:
            assert decided.message == expect["message"]
        groups = {g["name"]: g for g in decided.groups}
        for name, domains in (expect.get("domains") or {}).items():
            assert groups[name].get("domains") == domains, name
    assert decided.diagnose["round"] == case["diagnose"]["round"] + 1
    for key, value in (expect.get("fields") or {}).items():
        found = decided.diagnose.get(key, MISSING)
        assert (None if found is MISSING else found) == value, key
    assert decided.failed_nodes == expect.get("failed_nodes", [])


def test_a_pending_round_decides_nothing():
    case = next(c for c in CASES if c["expect"].get("pending"))
    decided = decide(case)
    assert (decided.diagnose, decided.groups, decided.phase) == ({}, [], "")


@pytest.mark.parametrize("name, nodes, diagnose, expect", [
    ("screen-no-nvl-d-a", ["n0"], {}, True),
    ("screen-0", ["n0"], {"noNVLSuspectNodes": ["n0"]}, False),
    ("inter-domain", ["n0"], {"noNVLSuspectNodes": ["n0"]}, False),
    ("bisect-2-0a", ["n0", "n1"], {"noNVLSuspectNodes": ["n1"]}, True),
    ("bisect-2-0a", ["n0", "n1"], {"noNVLSuspectNodes": ["n5"]}, False),
    ("confirm-0", ["n1", "n7"], {"noNVLSuspectNodes": ["n1"]}, True),
    ("confirm-0", ["n1", "n7"], {}, False),
    ("cross-0-mix0", ["n0", "n1"], {"crossBoundaryState": {"originStage": "intra-screening"}}, False),
    ("cross-0-mix0", ["n0", "n1"], {"crossBoundaryState": {"originStage": "inter-screening"}}, True),
    ("cross-0-mix0", ["n0", "n1"], {"crossBoundaryState": {"originStage": "intra-screening-no-nvl"}}, True),
])
def test_which_groups_run_without_nvl(name, nodes, diagnose, expect):
    assert diagnose_tier.no_mnnvl(name, nodes, diagnose) is expect


DEBUG = {"name": "NCCL_DEBUG", "value": "INFO"}


def trainer(args=None, env=None) -> dict:
    spec: dict = {}
    if args is not None:
        spec["args"] = args
    if env is not None:
        spec["env"] = env
    return {"workload": {"trainJob": {"trainer": spec}}}


@pytest.mark.parametrize("spec, enabled, forced", [
    # args first: every assignment is set to 0, the env is left alone
    (trainer(["-x", "NCCL_MNNVL_ENABLE=1", "all_reduce_perf"], [{"name": "NCCL_MNNVL_ENABLE", "value": "1"}]), True,
     trainer(["-x", "NCCL_MNNVL_ENABLE=0", "all_reduce_perf"], [{"name": "NCCL_MNNVL_ENABLE", "value": "1"}])),
    (trainer(["NCCL_MNNVL_ENABLE=1 torchrun train.py"]), True, trainer(["NCCL_MNNVL_ENABLE=0 torchrun train.py"])),
    (trainer(["-x", "NCCL_MNNVL_ENABLE=0"], [{"name": "NCCL_MNNVL_ENABLE", "value": "1"}]), False,
     trainer(["-x", "NCCL_MNNVL_ENABLE=0"], [{"name": "NCCL_MNNVL_ENABLE", "value": "1"}])),
    # then the env entry
    (trainer(["all_reduce_perf"], [DEBUG, {"name": "NCCL_MNNVL_ENABLE", "value": "1"}]), True,
     trainer(["all_reduce_perf"], [DEBUG, {"name": "NCCL_MNNVL_ENABLE", "value": "0"}])),
    # else a new env entry
    (trainer(["all_reduce_perf"]), False, trainer(["all_reduce_perf"], [{"name": "NCCL_MNNVL_ENABLE", "value": "0"}])),
])
def test_mnnvl_switch(spec, enabled, forced):
    assert mnnvl.enabled(spec) is enabled
    mnnvl.force_off(spec)
    assert spec == forced
    assert mnnvl.enabled(spec) is False
