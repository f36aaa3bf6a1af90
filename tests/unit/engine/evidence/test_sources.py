"""Which reader a Job's workload output gets (from its spec alone), and one pod's output read into labelled rows:
an empty or unreadable output is partial, never zero rows read as a pass."""
from __future__ import annotations

import json

import pytest

from ansible_collections.cre.certification.plugins.module_utils.engine.evidence.sources import (
    Labels,
    dcgm_tests_gpus,
    reader_of,
    rows_of,
)
from tests.unit.engine.evidence.dcgm_docs import V4_TESTS, all_tests, v4

LABELS = Labels("wf", 2, "wf-g-iter-2", 1)


def _job(command: list[str] | None, args: list[str] | None = None) -> dict:
    trainer = {k: v for k, v in (("command", command), ("args", args)) if v is not None}
    return {"spec": {"workload": {"trainJob": {"runtimeRef": {"name": "r"}, "trainer": trainer}}}}


@pytest.mark.parametrize(("command", "args", "expected"), [
    (["dcgmi"], ["diag", "--host", "h:5555", "--run", "2", "--json", "--verbose"], "dcgm-diag-json"),
    (["dcgmi"], ["diag", "-r", "3", "-j"], "dcgm-diag-json"),
    (["/usr/bin/dcgmi"], ["diag", "-r", "1"], "dcgm-diag-text"),
    (["/bin/sh", "-c"], ["dcgmi diag -r 2 -j > /dev/stdout"], "dcgm-diag-json"),
    (["dcgmi", "diag"], None, "dcgm-diag-text"),
    (["dcgmi"], ["discovery", "-l"], None),
    (["all_reduce_perf"], ["-b", "8", "-e", "16G"], None),
    (None, None, None),
], ids=["catalog", "short-flag", "text", "shell", "command-only", "not-diag", "nccl", "no-trainer"])
def test_reader_of_the_trainer_command(command, args, expected):
    assert reader_of(_job(command, args)) == expected


def test_a_job_without_a_trainjob_has_no_reader():
    assert reader_of({"spec": {}}) is None


def test_rows_are_labelled_with_workflow_iteration_job_and_attempt():
    log = json.dumps(v4(all_tests(V4_TESTS, "Pass", range(2)), [0, 1]))
    read = rows_of("dcgm-diag-json", log, "node-a", 2, False, LABELS, "pod-a")
    assert read.partial is None and read.verdict is not None and read.verdict["outcome"] == "pass"
    assert len(read.rows) == 8
    assert {(r.node, r.workflow, r.iteration, r.job, r.attempt) for r in read.rows} == {
        ("node-a", "wf", 2, "wf-g-iter-2", 1)}


def test_an_expected_gpu_missing_from_the_output_is_a_failing_row():
    log = json.dumps(v4(all_tests(V4_TESTS, "Pass", range(2)), [0, 1]))
    read = rows_of("dcgm-diag-json", log, "node-a", 4, False, LABELS)
    assert read.verdict is not None and read.verdict["missing"] == [2, 3] and read.verdict["outcome"] == "fail"


@pytest.mark.parametrize(("log", "partial"), [
    (None, "pod pod-a on node node-a: its log could not be read"),
    ("", "pod pod-a on node node-a: the log is empty, no dcgm-diag-json output to read"),
    ("  \n", "pod pod-a on node node-a: the log is empty, no dcgm-diag-json output to read"),
    ("Error: unable to connect\n", "pod pod-a on node node-a: not dcgm-diag-json output: line 1: cannot read "
                                   "'Error: unable to connect' as JSON (Expecting value)"),
], ids=["unread", "empty", "blank", "not-json"])
def test_an_output_that_cannot_be_read_is_partial_with_no_rows_and_no_verdict(log, partial):
    read = rows_of("dcgm-diag-json", log, "node-a", 8, False, LABELS, "pod-a")
    assert (read.rows, read.verdict, read.partial) == ([], None, partial)


@pytest.mark.parametrize(("args", "expected"), [
    (["diag", "--run", "1", "--json"], False), (["diag", "-r", "short"], False), (["diag", "-r", "software"], False),
    (["diag", "--run", "2"], True), (["diag", "-r", "long"], True), (["diag", "-r", "software,memory"], True),
    (["diag", "--run=3"], True), (["diag", "--json"], None),
], ids=["level-1", "short", "software", "level-2", "long", "named", "equals", "no-run"])
def test_whether_the_run_tests_gpus_comes_from_its_run_flag(args, expected):
    assert dcgm_tests_gpus(["dcgmi", *args]) is expected


def test_a_level_2_output_with_no_gpu_test_lacks_evidence_while_level_1_passes():
    """The level is known on the cluster path: a level-2 run whose output shows only the deployment checks tested no
    GPU it should have, which a level-1 run never does."""
    log = json.dumps(v4(all_tests({"software": "Deployment"}, "Pass", range(2)), [0, 1]))
    level_1 = rows_of("dcgm-diag-json", log, "node-a", 2, False, LABELS, "pod-a", gpu_tests=False)
    level_2 = rows_of("dcgm-diag-json", log, "node-a", 2, True, LABELS, "pod-a", gpu_tests=True)
    assert level_1.verdict is not None and level_1.verdict["outcome"] == "pass"
    assert level_2.verdict is not None and level_2.verdict["lacking_evidence"] == [0, 1]
    assert level_2.verdict["outcome"] == "fail"
