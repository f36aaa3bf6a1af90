"""step_matches (profile_match.py): per LogProfile, how many lines of a log its trainingStep pattern matches."""
from __future__ import annotations

from pathlib import Path

import pytest

from ansible_collections.cre.certification.plugins.module_utils.engine.catalog.logprofiles import builtin_profiles
from ansible_collections.cre.certification.plugins.module_utils.engine.logs.log_lines import LogProfileError
from ansible_collections.cre.certification.plugins.module_utils.engine.logs.profile_match import step_matches
from tests.log_files import text

DATA = Path(__file__).parents[1] / "data"
NONE = {"megatron-bridge": 0, "megatron-training": 0, "nccl-bandwidth": 0, "nccl-loopback": 0,
        "nemo-1-training": 0, "nemo-4-training": 0}


def profile(name: str, regex: str | None) -> dict:
    patterns = {"trainingStep": {"regex": regex}} if regex is not None else {}
    return {"metadata": {"name": name}, "spec": {"timestamp": {"layout": "x"}, "patterns": patterns}}


@pytest.mark.parametrize(("log", "matched"), [
    ("real_logs/training/002-mlm-2025-rtx4090-2node-tflops.log", {"megatron-bridge": 10, "megatron-training": 10}),
    ("real_logs/training/006-mlm-2024-tiny-fp16-all-skipped.log", {"megatron-bridge": 5, "megatron-training": 5}),
    ("real_logs/training/008-nemo2-training-epoch-iteration.log", {"nemo-4-training": 6}),
    ("training_logs/mlm-2023-no-timestamp.log", {"megatron-bridge": 4, "megatron-training": 4}),
    # every draw that shows a step, redraws too: 1 at count 1, 2 at each count 2 to 12, 1 after the validation
    # + 2 at the end (epoch end, close)
    ("training_logs/nemo1-progress-bar.log.gz", {"nemo-1-training": 26}),
    ("training_logs/nemo2-printer-interval-no-loss.log", {"nemo-4-training": 3}),
    ("logs/nccl-all-reduce.log", {}),
])
def test_which_builtin_reads_a_log(log, matched):
    counts = step_matches(text(DATA / log), builtin_profiles())
    assert list(counts) == sorted(NONE)  # one per profile, in the order given
    assert counts == {**NONE, **matched}


def test_lines_are_read_as_the_goodput_parser_reads_them():
    text = "2025-01-01T00:00:00Z step 1\rstep 2\n2025-01-01T00:00:01Z step 3 (step 4)\nno step\n"
    assert step_matches(text, [profile("steps", r"step \d"), profile("anchored", r"^step"), profile("none", None)]) == {
        "steps": 3, "anchored": 3, "none": 0}


def test_names_in_the_order_given():
    assert list(step_matches("", [profile("b", "x"), profile("a", "x")])) == ["b", "a"]


def test_a_regex_that_does_not_compile():
    with pytest.raises(LogProfileError, match=r"^pattern trainingStep: invalid regex: "):
        step_matches("x", [profile("bad", "(")])
