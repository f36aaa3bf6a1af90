"""A BandwidthMeasurement's world as the tier reads it, shared by the tier's tests and the driver's measurement
tests: the NVCRE Job, its launcher pod, the measurement, and the launcher's log (an nccl-tests table)."""
from __future__ import annotations

TABLE = """nccl-w-0:211:211 [0] NCCL INFO Using network IB
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
           8             2     float     sum      -1    31.42    0.00    0.00      0    30.98    0.00    0.00      0
     1048576        262144     float     sum      -1    72.17   14.53   27.24      0    71.90   14.58   27.34      0
   134217728      33554432     float     sum      -1   1402.6   95.69  179.42      0   1398.4   95.98  179.96      0
  8589934592    2147483648     float     sum      -1  19012.7  451.80  847.12      0  18990.1  452.34  848.14      0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 263.653
"""
LOG = "".join(f"2026-03-02T10:00:05.123456789Z {line}\n" for line in TABLE.splitlines())


def job(condition: str = "InProgress", uid: str = "job-uid") -> dict:
    return {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Job",
            "metadata": {"name": "j", "namespace": "ns", "uid": uid},
            "spec": {"measurementTimeout": "1m"},
            "status": {"workloadRef": {"name": "j-workload"},
                       "conditions": [{"type": condition, "status": "True",
                                       "lastTransitionTime": "2026-03-02T10:04:40Z"}]}}


def pod(phase: str = "Running") -> dict:
    return {"metadata": {"name": "j-workload-launcher-0-0", "creationTimestamp": "2026-03-02T10:00:00Z",
                         "labels": {"jobset.sigs.k8s.io/jobset-name": "j-workload",
                                    "jobset.sigs.k8s.io/replicatedjob-name": "launcher",
                                    "batch.kubernetes.io/job-completion-index": "0"}},
            "status": {"phase": phase, "startTime": "2026-03-02T10:00:00Z",
                       "containerStatuses": [{"name": "node", "restartCount": 0, "state": {"running": {}}}]}}


def measurement(status: dict | None = None) -> dict:
    return {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "BandwidthMeasurement",
            "metadata": {"name": "j-bandwidth", "namespace": "ns", "generation": 1,
                         "annotations": {"nvcre.nvidia.com/job-uid": "job-uid"}},
            "spec": {"jobRef": {"apiGroup": "nvcre.nvidia.com", "kind": "Job", "name": "j"},
                     "logProfileRef": "nccl-bandwidth", "sampleInterval": "30s"},
            "status": status or {}}
