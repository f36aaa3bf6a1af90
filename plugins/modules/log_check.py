#!/usr/bin/python
# Copyright: (c) 2026, cre.certification developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Documentation stub: log_check runs on the controller as an action plugin."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: log_check
short_description: Read a saved workload log with a LogProfile, offline, as a measurement would
version_added: 0.1.0
description:
  - Reads a saved pod log (C(kubectl logs --timestamps) or a plain copy) with a LogProfile, a built-in one by name
    or one of your own from a file, the way a BandwidthMeasurement or GoodputMeasurement reads it, and returns what
    it read, what it refused and why, and the verdict of the thresholds. This is how a LogProfile is written and
    checked before a run.
  - 'A bandwidth profile (one with C(bandwidthResult)): the nccl-tests rows of the test O(test_type) names (size,
    algBW, busBW), the results per size as C(status.results) holds them, the peak, the other tests of the log, the
    transports NCCL named, each table with its C(# Avg bus bandwidth), the rows refused and why.'
  - 'A training profile (one with C(trainingStep)): the steps read (step, step time, TFLOP/s, loss, warmup), the
    averages over the steps after warmup, the checkpoints and the restore, and how many lines each built-in
    training profile matches (which one fits the log).'
  - Runs on the controller. Reads only local files; writes nothing.
  - Accepts kubernetes.core's auth options and ignores them, like the other offline modules.
author:
  - cre.certification developers (@cre-certification)
extends_documentation_fragment:
  - cre.certification.attributes
  - kubernetes.core.k8s_auth_options
options:
  src:
    description: Path to the saved log.
    type: path
    required: true
  profile:
    description:
      - Name of a built-in LogProfile (nccl-bandwidth, nccl-loopback, megatron-training, megatron-bridge,
        nemo-4-training, nemo-1-training).
      - Exactly one of O(profile) and O(profile_file) is required.
    type: str
  profile_file:
    description:
      - Path to a YAML or JSON file holding a LogProfile object of your own.
      - Exactly one of O(profile) and O(profile_file) is required.
    type: path
  test_type:
    description:
      - The collective measured when the log holds several nccl-tests tests (a BandwidthMeasurement's
        C(spec.testType), e.g. C(all_reduce)).
    type: str
    default: ''
  thresholds:
    description:
      - Thresholds as a Job has them (busBandwidthGBps, algBandwidthGBps, avgTFLOPsPerGPU, avgStepTimeSec,
        goodputRatio) to a CEL expression over its C(value).
      - goodputRatio needs a whole run's accounting and is never met offline.
    type: dict
    default: {}
attributes:
  check_mode:
    support: full
    details: Reads only; the same result either way.
  diff_mode:
    support: none
  idempotent:
    support: full
"""

EXAMPLES = r"""
- name: Does the built-in profile read the launcher log of last night's run?
  cre.certification.log_check:
    src: logs/nccl-launcher.log
    profile: nccl-bandwidth
    test_type: all_reduce
    thresholds:
      busBandwidthGBps: value >= 400.0
  register: reading

- name: Try my own profile on a NeMo log
  cre.certification.log_check:
    src: logs/nemo-worker-3.log
    profile_file: profiles/my-nemo.yaml
"""

RETURN = r"""
kind:
  description: C(bandwidth) or C(goodput), by the profile's patterns.
  returned: always
  type: str
  sample: bandwidth
rows:
  description: The nccl-tests rows counted, in log order (GB/s).
  returned: kind is bandwidth
  type: list
  elements: dict
  sample: [{sizeBytes: 8589934592, algBW: 67.4, busBW: 123.56}]
results:
  description: The rows per message size as a BandwidthMeasurement's C(status.results) holds them.
  returned: kind is bandwidth
  type: list
  elements: dict
  sample: [{sizeBytes: 8589934592, algBW: '67.40', busBW: '123.56', samples: 1}]
peak:
  description: The largest busBW and algBW (what the thresholds judge); null without a row.
  returned: kind is bandwidth
  type: dict
  sample: {busBW: 123.56, algBW: 67.4}
measured_test:
  description: The collective of the rows, as the log names it (empty when it does not).
  returned: kind is bandwidth
  type: str
  sample: all_reduce
other_tests:
  description: The other tests the log holds (never averaged in).
  returned: kind is bandwidth
  type: list
  elements: str
  sample: [sendrecv]
transports:
  description: The networks NCCL named (C(NCCL INFO Using network)).
  returned: kind is bandwidth
  type: list
  elements: str
  sample: [AWS Libfabric]
mnnvl:
  description:
    - Whether NCCL's communicators across nodes ran over multi-node NVLink (their C(MNNVL 0|1) lines); null when
      the log does not say (no C(NCCL_DEBUG=INFO), or one node).
  returned: kind is bandwidth
  type: bool
  sample: true
fabric_not_ready:
  description: The hosts whose GPU fabric NCCL found not ready (which turns MNNVL off), with the state.
  returned: kind is bandwidth
  type: list
  elements: str
  sample: ["gb200-r03-t02 (fabric state 1: not started)"]
tables:
  description: Every nccl-tests table of the log with its test, ranks, rows counted and refused, and its
    C(# Avg bus bandwidth).
  returned: kind is bandwidth
  type: list
  elements: dict
  sample: [{test: all_reduce, ranks: 12, rows: 31, refused: 0, avg_bus_bandwidth: 42.5578}]
refused:
  description: The rows of the measured test that were not counted, and why.
  returned: kind is bandwidth
  type: list
  elements: dict
  sample: [{line: 8589934592  2147483648  float  sum  127453  67.40  123.56  2e-07, why: busBW '2' is not a whole column}]
withheld:
  description:
    - Why no figure is taken although rows were kept (a table refused rows of larger sizes than those it kept, so
      its peak is not known; RV(rows) is then empty and the measurement ends C(RowsRefused)), else empty.
  returned: kind is bandwidth
  type: str
  sample: ''
warnings:
  description: What the measured test's tables say against their rows.
  returned: kind is bandwidth
  type: list
  elements: str
  sample: []
steps:
  description: The training steps read (the last 100), step time in seconds.
  returned: kind is goodput
  type: list
  elements: dict
  sample: [{step: 20, step_time_sec: 4.2112, tflops: 612.4, loss: 6.48, warmup: false}]
avg_step_time_sec:
  description: Mean step time of the steps after warmup; null without one.
  returned: kind is goodput
  type: float
  sample: 4.2112
avg_tflops_per_gpu:
  description: Mean TFLOP/s per GPU of the steps after warmup that print it; null without one.
  returned: kind is goodput
  type: float
  sample: 612.4
checkpoints:
  description: The checkpoints saved, with the time each held training up.
  returned: kind is goodput
  type: list
  elements: dict
  sample: [{step: 100, path: /mnt/workspace/checkpoints, save_duration_sec: 3.63}]
restore:
  description: The checkpoint the run resumed from; null when it started fresh.
  returned: kind is goodput
  type: dict
  sample: {step: 100, path: /mnt/workspace/checkpoints}
profiles_matched:
  description: Per built-in training profile (and O(profile_file)'s), how many lines its trainingStep matches.
  returned: kind is goodput
  type: dict
  sample: {megatron-training: 0, nemo-4-training: 49}
verdict:
  description: The thresholds' verdict on the figures read (C(reason) as a Job names it, or
    C(MeasurementUnavailable) for a threshold without a figure); null without thresholds.
  returned: always
  type: dict
  sample: {passed: true, reason: ThresholdsMet, message: All performance thresholds satisfied}
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.cre.certification.plugins.module_utils.kube.client import auth_argument_spec

SPEC = {
    "argument_spec": {
        **auth_argument_spec(),  # accepted for the action group's module_defaults, ignored
        "src": {"type": "path", "required": True},
        "profile": {"type": "str"},
        "profile_file": {"type": "path"},
        "test_type": {"type": "str", "default": ""},
        "thresholds": {"type": "dict", "default": {}},
    },
    "required_one_of": [["profile", "profile_file"]],
    "mutually_exclusive": [["profile", "profile_file"]],
}


def main() -> None:
    module = AnsibleModule(supports_check_mode=True, **SPEC)
    module.fail_json(msg="cre.certification.log_check runs on the controller as an action plugin")


if __name__ == "__main__":
    main()
