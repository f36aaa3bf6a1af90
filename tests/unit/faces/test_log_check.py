"""log_check through real `ansible localhost -m cre.certification.log_check` runs from the repo root."""
from __future__ import annotations

from pathlib import Path

import yaml

from ansible_collections.cre.certification.plugins.modules import log_check as stub
from tests.ansible_run import ansible_module
from tests.unit.faces.module_stub import documented_spec

REAL = Path(__file__).resolve().parents[1] / "engine" / "data" / "real_logs"
OLD_TABLE = str(REAL / "nccl" / "003-dgx2-old-allreduce-noroot.log")


def test_documentation_matches_argument_spec():
    documented_spec(stub, ("type", "default", "required"))


def test_a_builtin_profile_reads_a_saved_log_and_judges_it():
    rc, result = ansible_module("log_check", {"src": OLD_TABLE, "profile": "nccl-bandwidth", "test_type": "all_reduce",
                                              "thresholds": {"busBandwidthGBps": "value >= 200.0"}}, "--check")
    assert rc == 0, result  # a failed verdict is reported, not a failed task
    assert result["changed"] is False and result["kind"] == "bandwidth" and len(result["rows"]) == 31
    assert result["peak"] == {"busBW": 123.56, "algBW": 67.4}
    assert result["verdict"]["reason"] == "ThresholdViolated"


def test_a_profile_of_ones_own_from_a_file(tmp_path: Path):
    profile = yaml.safe_load((Path(__file__).resolve().parents[3] / "logprofiles" / "nccl-bandwidth.yaml").read_text())
    profile["spec"]["patterns"]["bandwidthResult"]["regex"] = (
        r"^\s*(?P<size>\d+)\s+\d+\s+\w+\s+\w+\s+-?\d+\s+[\d.]+\s+(?P<algBW>[\d.]+)\s+(?P<busBW>[\d.]+)")
    (tmp_path / "mine.yaml").write_text(yaml.safe_dump(profile))
    rc, result = ansible_module("log_check", {"src": OLD_TABLE, "profile_file": str(tmp_path / "mine.yaml")})
    assert rc == 0, result
    assert result["rows"] == [] and result["refused"][0]["why"] == "busBW '2' is not a whole column"


def test_bad_inputs_end_in_one_line_naming_the_option(tmp_path: Path):
    rc, result = ansible_module("log_check", {"src": OLD_TABLE, "profile": "nccl-bandwith"})
    assert rc != 0 and result["msg"] == (
        "profile: no built-in LogProfile is named 'nccl-bandwith' (built-in: megatron-bridge, megatron-training, "
        "nccl-bandwidth, nccl-loopback, nemo-1-training, nemo-4-training); give profile_file for a profile of your own")
    rc, result = ansible_module("log_check", {"src": str(tmp_path / "gone.log"), "profile": "nccl-bandwidth"})
    assert rc != 0 and result["msg"] == f"src: cannot read {tmp_path / 'gone.log'}: No such file or directory"
    (tmp_path / "empty.yaml").write_text("kind: LogProfile\nmetadata: {name: empty}\nspec: {patterns: {}}\n")
    rc, result = ansible_module("log_check", {"src": OLD_TABLE, "profile_file": str(tmp_path / "empty.yaml")})
    assert rc != 0 and result["msg"] == ("profile_file: LogProfile empty cannot read logs: it has neither a "
                                         "bandwidthResult nor a trainingStep pattern; fix its patterns")
