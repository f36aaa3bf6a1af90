"""The Job tier's threshold verdict (spec/measurements.md §4.2–§4.3), from the measurements it can see."""
from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from ansible_collections.cre.certification.plugins.module_utils.engine.api.actions import Create, Event, UpdateStatus
from ansible_collections.cre.certification.plugins.module_utils.engine.reconcile import job_tier
from ansible_collections.cre.certification.plugins.module_utils.engine.reconcile.world import JobWorld

SUCCEEDED_AT = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)


def job(thresholds: dict, timeout: str = "") -> dict:
    spec = {"thresholds": thresholds, **({"measurementTimeout": timeout} if timeout else {})}
    return {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Job",
            "metadata": {"name": "j", "namespace": "ns", "uid": "job-uid", "generation": 1,
                         "annotations": {"nvcre.nvidia.com/group-nodes": "gpu-node-001,gpu-node-000"}},
            "spec": spec,
            "status": {"conditions": [{"type": "Succeeded", "status": "True", "reason": "WorkloadCompleted",
                                       "message": "m", "lastTransitionTime": "2026-03-02T10:00:00Z"}]}}


def bandwidth(bus: str, reason: str = "JobSucceeded", uid: str = "job-uid") -> dict:
    return {"kind": "BandwidthMeasurement", "metadata": {"name": "j-bandwidth", "annotations": {"nvcre.nvidia.com/job-uid": uid}},
            "spec": {"jobRef": {"name": "j"}},
            "status": {"results": [{"sizeBytes": 8, "algBW": "1.00", "busBW": "2.00", "samples": 1},
                                   {"sizeBytes": 9, "algBW": "40.50", "busBW": bus, "samples": 1}],
                       "conditions": [{"type": "Complete", "status": "True", "reason": reason}]}}


def goodput(result: str) -> dict:
    return {"kind": "GoodputMeasurement", "metadata": {"name": "j-goodput"}, "spec": {"jobRef": {"name": "j"}},
            "status": {"result": result, "avgTFLOPSPerGPU": "0.000000", "avgStepTimeSec": "4.211200",
                       "conditions": [{"type": "Complete", "status": "True", "reason": "JobSucceeded"}]}}


def verdict(thresholds: dict, measurements: list, after: timedelta = timedelta(seconds=5), timeout: str = ""):
    step = job_tier.reconcile(JobWorld(job(thresholds, timeout), measurements=measurements,
                                       now=SUCCEEDED_AT + after))
    writes = [a.obj["status"] for a in step.actions if isinstance(a, UpdateStatus)]
    found = next((c for c in writes[0]["conditions"] if c["type"] == "ValidationFailed"), None) if writes else None
    return step, found, writes[0] if writes else None


def test_thresholds_met():
    step, cond, status = verdict({"busBandwidthGBps": "value >= 300.0", "algBandwidthGBps": "value > 40"},
                                 [bandwidth("847.12")])
    assert (cond["status"], cond["reason"], cond["message"]) == (
        "False", "ThresholdsMet", "All performance thresholds satisfied")
    assert "failedNodes" not in status and step.terminal
    assert [(a.type, a.reason) for a in step.actions if isinstance(a, Event)] == [("Normal", "ThresholdsMet")]


def test_a_violation_blames_every_node_of_the_group():
    step, cond, status = verdict({"busBandwidthGBps": "value >= 900.0"}, [bandwidth("423.56")])
    message = 'Threshold "busBandwidthGBps" violated: measured 423.5600, expression: value >= 900.0'
    assert (cond["status"], cond["reason"], cond["message"]) == ("True", "ThresholdViolated", message)
    assert status["failedNodes"] == [{"name": n, "reason": "ThresholdViolation", "message": message}
                                     for n in ("gpu-node-000", "gpu-node-001")]
    assert [(a.type, a.reason) for a in step.actions if isinstance(a, Event)] == [("Warning", "ThresholdViolated")]


def test_the_first_violation_in_key_order_wins():
    _step, cond, _status = verdict({"busBandwidthGBps": "value > 1000.0", "algBandwidthGBps": "value > 1000.0"},
                                   [bandwidth("500.00")])
    assert cond["message"].startswith('Threshold "algBandwidthGBps" violated: measured 40.5000')


def test_unknown_keys_fail_at_once():
    _step, cond, _status = verdict({"zeta": "value > 1", "alpha": "value > 1"}, [])
    assert (cond["reason"], cond["message"]) == (
        "UnknownThresholdKey", "unknown threshold key(s) [alpha, zeta]; valid keys: [busBandwidthGBps, "
                               "algBandwidthGBps, goodputRatio, avgTFLOPsPerGPU, avgStepTimeSec]")


@pytest.mark.parametrize("measurement", [bandwidth("847.12", reason="LogsUnavailable"),
                                         bandwidth("847.12", uid="an-earlier-job")])
def test_only_a_final_measurement_of_this_job_counts(measurement):
    step, cond, _status = verdict({"busBandwidthGBps": "value > 1"}, [measurement])
    assert cond is None and step.requeue_after == 15.0 and not step.terminal


def test_a_missing_value_times_out():
    step, cond, _status = verdict({"goodputRatio": "value > 0.5", "busBandwidthGBps": "value > 1"},
                                  [bandwidth("847.12"), goodput("0.000000")], after=timedelta(seconds=21),
                                  timeout="20s")
    assert (cond["status"], cond["reason"], cond["message"]) == (
        "True", "MeasurementTimeout", "Measurement data not available within 20s for keys: [goodputRatio]")
    assert step.terminal


def test_the_default_timeout_is_five_minutes():
    _step, cond, _status = verdict({"goodputRatio": "value > 0.5"}, [], after=timedelta(minutes=4))
    assert cond is None
    _step, cond, _status = verdict({"goodputRatio": "value > 0.5"}, [], after=timedelta(minutes=5, seconds=1))
    assert cond["message"] == "Measurement data not available within 5m0s for keys: [goodputRatio]"


def test_goodput_figures_feed_their_keys():
    _step, cond, _status = verdict({"goodputRatio": "value >= 0.9", "avgStepTimeSec": "value < 5"},
                                   [goodput("0.950000")])
    assert cond["reason"] == "ThresholdsMet"


def test_a_verdict_is_never_revisited():
    judged = job({"busBandwidthGBps": "value > 1"})
    judged["status"]["conditions"].append({"type": "ValidationFailed", "status": "False", "reason": "ThresholdsMet"})
    step = job_tier.reconcile(JobWorld(judged, measurements=[bandwidth("0.10")], now=SUCCEEDED_AT))
    assert step.terminal and step.actions == []


def test_the_job_tier_creates_the_measurements_the_job_asks_for():
    running = {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Job",
               "metadata": {"name": "j", "namespace": "ns", "uid": "job-uid",
                            "labels": {"nvcre.nvidia.com/workflow": "wf"},
                            "ownerReferences": [{"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Workflow",
                                                 "name": "wf", "uid": "wf-uid", "controller": True}]},
               "spec": {"bandwidthMeasurement": {"logProfileRef": "nccl-bandwidth", "sampleInterval": "30s",
                                                 "testType": "all_reduce_perf"}},
               "status": {"workloadRef": {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
                                          "name": "j-workload", "uid": "w-uid"}}}
    workload = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
                "metadata": {"name": "j-workload", "uid": "w-uid",
                             "ownerReferences": [{"uid": "job-uid", "controller": True}]}, "status": {}}
    step = job_tier.reconcile(JobWorld(running, workload, now=SUCCEEDED_AT))
    (create,) = [a for a in step.actions if isinstance(a, Create)]
    assert create.obj["metadata"]["name"] == "j-bandwidth"
    assert create.obj["metadata"]["labels"] == {"app.kubernetes.io/managed-by": "nvcre", "nvcre.nvidia.com/job": "j",
                                                "nvcre.nvidia.com/workflow": "wf"}
    assert create.obj["metadata"]["annotations"] == {"nvcre.nvidia.com/job-uid": "job-uid"}
    assert create.obj["metadata"]["ownerReferences"][0]["uid"] == "wf-uid"
    assert create.obj["spec"] == {"logProfileRef": "nccl-bandwidth", "sampleInterval": "30s",
                                  "testType": "all_reduce_perf",
                                  "jobRef": {"apiGroup": "nvcre.nvidia.com", "kind": "Job", "name": "j"}}
    existing = {**create.obj}
    again = job_tier.reconcile(JobWorld(running, workload, now=SUCCEEDED_AT, measurements=[existing]))
    assert not any(isinstance(a, Create) for a in again.actions)


def test_a_bandwidth_measurement_that_refused_its_rows_fails_the_thresholds_at_once():
    refused = bandwidth("0.00", reason="RowsRefused")
    refused["status"]["results"] = []
    refused["status"]["conditions"][0]["message"] = "Job succeeded but none of the 4 result rows ... (why)"
    step, cond, status = verdict({"busBandwidthGBps": "value >= 300.0"}, [refused])
    message = "BandwidthMeasurement j-bandwidth: Job succeeded but none of the 4 result rows ... (why)"
    assert (cond["status"], cond["reason"], cond["message"]) == ("True", "MeasurementUnreadable", message)
    assert status["failedNodes"] == [{"name": n, "reason": "ThresholdViolation", "message": message}
                                     for n in ("gpu-node-000", "gpu-node-001")]
    # A goodput threshold is not the bandwidth measurement's business: it waits for its own data.
    _step, cond, _status = verdict({"goodputRatio": "value >= 0.9"}, [refused])
    assert cond is None


def on_network(transports: list, family: str = "efa", bus: str = "847.12", **seen):
    measurement = bandwidth(bus)
    measurement["status"]["transport"] = transports
    measurement["status"].update(seen)
    j = job({"busBandwidthGBps": "value >= 100.0"})
    j["metadata"]["annotations"]["cre.certification/expected-network"] = family
    step = job_tier.reconcile(JobWorld(j, measurements=[measurement], now=SUCCEEDED_AT + timedelta(seconds=5)))
    status = next(a.obj["status"] for a in step.actions if isinstance(a, UpdateStatus))
    return next(c for c in status["conditions"] if c["type"] == "ValidationFailed"), status


def test_a_group_that_ran_over_another_network_fails_whatever_its_figures():
    cond, status = on_network(["Socket"])
    message = ("NCCL ran over Socket where EFA (AWS Libfabric) was expected; check that the pods get the network "
               "devices and NCCL's net plugin, or set the category option checkTransport: false")
    assert (cond["status"], cond["reason"], cond["message"]) == ("True", "TransportMismatch", message)
    assert status["failedNodes"] == [{"name": n, "reason": "TransportMismatch", "message": message}
                                     for n in ("gpu-node-000", "gpu-node-001")]


@pytest.mark.parametrize("transports", [["AWS Libfabric"], []])
def test_the_expected_network_or_none_named_leaves_the_thresholds_to_judge(transports):
    cond, _status = on_network(transports)
    assert (cond["status"], cond["reason"]) == ("False", "ThresholdsMet")


def test_a_gb200_group_inside_a_clique_without_mnnvl_fails_naming_the_host_whose_fabric_was_not_ready():
    cond, status = on_network(["IB"], "ib,mnnvl", mnnvl=False, fabricNotReady=["w-1 (fabric state 1: not started)"])
    assert (cond["status"], cond["reason"]) == ("True", "TransportMismatch")
    assert "with MNNVL 0 where NVLink across the clique (MNNVL) was expected; GPU fabric not ready on w-1" in (
        cond["message"])
    assert {n["reason"] for n in status["failedNodes"]} == {"TransportMismatch"}


@pytest.mark.parametrize("seen", [{"mnnvl": True}, {}])
def test_mnnvl_on_or_not_told_leaves_the_thresholds_to_judge(seen):
    cond, _status = on_network(["IB"], "ib,mnnvl", **seen)
    assert (cond["status"], cond["reason"]) == ("False", "ThresholdsMet")
