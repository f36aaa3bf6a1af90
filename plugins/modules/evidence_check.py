#!/usr/bin/python
# Copyright: (c) 2026, cre.certification developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Documentation stub: evidence_check runs on the controller as an action plugin."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: evidence_check
short_description: Read a saved tool output or workload log, offline, into evidence rows as a certification would
version_added: 0.1.0
description:
  - Reads a saved C(dcgmi diag) output, its C(--json) or the table it prints without it (what users paste), in the
    layouts of DCGM 3.x and 4.x, and returns the evidence rows a certification draws from it, each GPU's verdict
    with DCGM's own message and error code, and the node's outcome (the worst).
  - A GPU whose every test was skipped (or that ran only DCGM's deployment checks) is lacking evidence, a warning
    by default (DCGM exits 0 there, yet nothing says the GPU works); a GPU expected but absent from the output is
    missing, a failure; a run that did not happen (C(runtime_error)) is a failure.
  - A file that the format named does not print is refused with the first line (or JSON field) it could not read.
  - Reads a saved nccl-tests log (C(nccl-tests)) into one row per message size (busbw and algbw, GB/s, with the
    transport the log shows), or a Megatron-LM / NeMo training log (C(training)) into one row per step (step time,
    TFLOP/s per GPU), with the reader of the certification's own measurements; lines it refused are C(warn) rows,
    and rows lost make the read partial (RV(partial)).
  - Reads a GEMM burn-in log into one row per GPU per window and judges each GPU by the burn-in's rules
    (C(gemm-burn-in), our harness; warm-up dropped, wrong result, XID, hardware throttle, power limit, floor,
    node median, degradation, as the collection's docs/gemm-burn-in-verdict.md says), and the outputs users already run into
    the same rows (metric C(tflops), in TFLOPS); C(gpu-burn) (its C(GPU i) C(OK) or C(FAULTY) verdict and Gflop/s
    progress), C(gpu-fryer) (its per-GPU summary and throttling), C(mamf-finder) (its MAMF/MSMF summary),
    C(cutlass-profiler) (its CSV by column name or its text report, C(Disposition) honoured).
  - Reads a saved node configuration (C(nvidia-smi-xml) for C(nvidia-smi -q -x), C(nvidia-smi-q) for its text,
    C(ibstat), C(ibv_devinfo), C(lspci) for C(lspci -vvv), C(node-drift) for the configuration/node-drift
    collector's output) and judges each field against the golden profile of the GPU product it finds (or
    O(product)), that is ECC, remapped rows, retired pages, uncorrectable errors, persistence, power limit, NVLinks, PCIe
    generation and width against the best both ends support, throttle reasons, driver and CUDA minimums, NIC port
    state and rate, GPU and NIC counts; each field as a finding with C(field), C(observed), C(expected), C(outcome)
    and C(remedy) (the collection's docs/golden-configuration.md).
  - Runs on the controller. Reads only local files; writes nothing.
  - Accepts kubernetes.core's auth options and ignores them, like the other offline modules.
author:
  - cre.certification developers (@cre-certification)
extends_documentation_fragment:
  - cre.certification.attributes
  - kubernetes.core.k8s_auth_options
options:
  path:
    description: Path to the saved tool output.
    type: path
    required: true
  format:
    description:
      - The tool output's format. C(dcgm-diag-json) is C(dcgmi diag --json) (DCGM 3.x and 4.x layouts),
        C(dcgm-diag-text) the table C(dcgmi diag) prints without it, C(nccl-tests) a log of the nccl-tests
        binaries (any table the certification reads), C(training) a Megatron-LM or NeMo training log.
      - C(gemm-burn-in) the log of the certification's GEMM burn-in harness (C(gemm-burn-in/1) lines),
        C(gpu-burn), C(gpu-fryer), C(mamf-finder) and C(cutlass-profiler) those tools' outputs.
      - C(nvidia-smi-xml) is C(nvidia-smi -q -x) (DTD v10 to v13), C(nvidia-smi-q) its text, C(ibstat) and
        C(ibv_devinfo) (plain or C(-v)) the RDMA ports, C(lspci) C(lspci -vvv) (or its C(LnkCap)/C(LnkSta) lines
        grepped out), C(node-drift) the configuration/node-drift collector's output (C(node-drift/1)).
    type: str
    required: true
    choices: [dcgm-diag-json, dcgm-diag-text, nccl-tests, training, gemm-burn-in, gpu-burn, gpu-fryer, mamf-finder,
              cutlass-profiler, nvidia-smi-xml, nvidia-smi-q, ibstat, ibv_devinfo, lspci, node-drift]
  node:
    description: The node name the rows carry (for a log, the group's name).
    type: str
    default: ''
  profile:
    description:
      - For C(nccl-tests) and C(training), the built-in LogProfile to read the log with (see
        M(cre.certification.log_check)).
      - By default C(nccl-bandwidth) for C(nccl-tests), and for C(training) the training profile whose step pattern
        reads the most lines of the log.
      - For a configuration format (C(nvidia-smi-xml), C(nvidia-smi-q), C(ibstat), C(ibv_devinfo), C(lspci),
        C(node-drift)), the path of a golden profile (YAML or JSON, kind C(GoldenProfile)) that overrides the
        shipped one field by field (M(cre.certification.golden_generate) writes one). By default the shipped one.
    type: str
  test_type:
    description:
      - For C(nccl-tests), the test to read (C(all_reduce), C(all_gather), ...), as a measurement's C(testType).
      - Empty reads every test the log names, each row under its own.
    type: str
    default: ''
  gpus:
    description:
      - How many GPUs the node has. GPUs 0 to O(gpus) - 1 absent from the output are reported missing.
      - Without it nothing can be missing.
    type: int
  skip_is_failure:
    description: A GPU lacking evidence (every test skipped) fails instead of warning.
    type: bool
    default: false
  product:
    description:
      - For C(gemm-burn-in), the GPU product (the node label C(nvidia.com/gpu.product), e.g.
        C(NVIDIA-H100-80GB-HBM3)) whose floor for the log's dtype and default power limit judge the log, from the
        catalog's GPU defaults. A provisional floor warns, never fails.
      - Empty judges no floor and no power limit (unless O(floor_tflops) or O(power_default_w) give them).
      - For a configuration format, the product whose golden profile judges the output; empty, the product the
        output's GPUs name (none for C(ibstat), C(ibv_devinfo), C(lspci), so only the rules of no product apply).
    type: str
    default: ''
  platform:
    description:
      - For a configuration format, the platform (C(azure), C(oci), ...) whose NIC ports the golden profile
        knows (their count and rate). Empty judges no NIC count, and each port's rate against its fastest peer.
    type: str
    default: ''
  floor_tflops:
    description: For C(gemm-burn-in), the floor (median TFLOPS of a GPU) to judge by, instead of the product's.
    type: float
  power_default_w:
    description: For C(gemm-burn-in), the default power limit (W) to judge by, instead of the product's.
    type: float
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
- name: Which GPU did last night's dcgmi diag fail, and why?
  cre.certification.evidence_check:
    path: saved/gpu-node-07-dcgm-r3.json
    format: dcgm-diag-json
    node: gpu-node-07
    gpus: 8
  register: evidence

- name: The rows of a saved all-reduce log, the transport each one ran over
  cre.certification.evidence_check:
    path: saved/all-reduce-group-3.log
    format: nccl-tests
    node: group-3
    test_type: all_reduce

- name: Which GPU of a burn-in is slow, throttling or degrading, against the H100 SXM floor
  cre.certification.evidence_check:
    path: saved/gpu-node-07-gemm-burn-in.log
    format: gemm-burn-in
    node: gpu-node-07
    gpus: 8
    product: NVIDIA-H100-80GB-HBM3

- name: The verdict of a saved gpu-burn run
  cre.certification.evidence_check:
    path: saved/gpu-burn-3600s.txt
    format: gpu-burn

- name: Is this node configured as an H100 SXM node should be?
  cre.certification.evidence_check:
    path: saved/gpu-node-07-nvidia-smi-q.xml   # nvidia-smi -q -x > ...
    format: nvidia-smi-xml
    node: gpu-node-07
    product: NVIDIA-H100-80GB-HBM3
    profile: golden/fleet-a.yaml               # cre.certification.golden_generate wrote it

- name: A pasted table, strict about GPUs that tested nothing
  cre.certification.evidence_check:
    path: saved/dcgmi-diag-r3.txt
    format: dcgm-diag-text
    skip_is_failure: true
"""

RETURN = r"""
format:
  description: The format read (O(format)).
  returned: always
  type: str
  sample: dcgm-diag-json
profile:
  description: The LogProfile a log was read with.
  returned: when O(format) is nccl-tests or training
  type: str
  sample: nccl-bandwidth
partial:
  description: Why the read lost rows (lines refused, a table or a log that ends early, a burn-in without its end
    record); null when it is whole. Rows lost are never reported as zero.
  returned: always
  type: str
  sample: "all_reduce: 1 result line(s) refused (first: the row is cut short)"
format_version:
  description: The layout the output was read in (C(DCGM 3.x JSON), C(DCGM 4.x JSON), C(DCGM 3.x table), C(DCGM 4.x
    table)); for a GEMM tool its format (C(gemm-burn-in/1), C(gpu-burn), ...).
  returned: when O(format) is neither nccl-tests nor training
  type: str
  sample: DCGM 4.x JSON
window_s:
  description: The burn-in's window length (s), from the log's begin record.
  returned: when O(format) is gemm-burn-in
  type: float
  sample: 30.0
warmup_s:
  description: The seconds of warm-up whose windows the figures leave out, from the log's begin record.
  returned: when O(format) is gemm-burn-in
  type: float
  sample: 60.0
dcgm_version:
  description: The DCGM version the output prints; null where it prints none.
  returned: when O(format) is dcgm-diag-json or dcgm-diag-text
  type: str
  sample: 4.2.3
driver_version:
  description: The driver version the output prints; null where it prints none.
  returned: when O(format) is dcgm-diag-json or dcgm-diag-text
  type: str
  sample: 570.124.06
rows:
  description:
    - The evidence rows in their fixed order (node, component, index, test, metric, sample). C(index) null is a
      result of the node as a whole (a DCGM 3.x deployment check) or of the run; C(value) is DCGM's result word;
      C(detail) DCGM's message with its error code, or its info; C(workflow), C(iteration), C(job), C(attempt)
      are null offline.
    - From C(nccl-tests), component C(group), C(test) the collective, metric C(busbw) and C(algbw) (GB/s) per
      result row (C(sample) its position, C(detail) the size in bytes and the transport seen), and C(refused) rows
      (C(warn), the reason and the line in C(detail)).
    - From C(training), component C(step), C(index) the step, metric C(step_time) (s) and C(tflops) (TFLOP/s per
      GPU, where the line prints it), C(sample) how often the step was printed before, C(time) the line's stamp.
    - From a GEMM tool, component C(gpu), metric C(tflops) (TFLOPS) per GPU per window or progress line (C(sample)),
      C(result) for a correctness-only verdict (gpu-burn's C(OK)/C(FAULTY), no figure); from C(gemm-burn-in) also
      one row per GPU for its judged C(median) and one per finding (metric the rule's name). The CUTLASS profiler
      prints no GPU index, so its rows have C(index) null.
  returned: always
  type: list
  elements: dict
  sample: [{node: gpu-node-07, component: gpu, index: 3, uuid: null, test: memory, metric: result, value: Fail,
            unit: null, outcome: fail, detail: "A memory mismatch was detected on GPU 3 (DCGM error 12)", sample: 0,
            time: null, workflow: null, iteration: null, job: null, attempt: null}]
gpus:
  description:
    - Per GPU in the output (or expected), its verdict (the worst outcome of its tests), whether it is lacking
      evidence or missing, and its failing or warning tests with DCGM's message.
    - For C(gemm-burn-in) also its C(median) (TFLOPS of the steady windows), C(series) (C([window, tflops]), warm-up
      included) and C(findings) (C(rule), C(outcome), C(message)); a failure's detail names the rule and its numbers.
  returned: when O(format) is neither nccl-tests nor training
  type: list
  elements: dict
  sample: [{index: 3, uuid: null, outcome: fail, lacking_evidence: false, missing: false,
            failures: [{test: memory, outcome: fail, detail: "A memory mismatch was detected on GPU 3 (DCGM error 12)"}]}]
outcome:
  description:
    - The node's outcome, the worst of its GPUs' verdicts and of the node's own results (pass, warn, fail).
    - For a log, the worst of its rows, a warning at least when the read is partial; null for a log without a row
      (no evidence is not a pass).
  returned: always
  type: str
  sample: fail
lacking_evidence:
  description: The GPUs on which no test but DCGM's deployment checks ran (every test skipped); for a GEMM tool, the
    GPUs it gave no verdict for (no steady window, no summary).
  returned: when O(format) is neither nccl-tests nor training
  type: list
  elements: int
  sample: [5]
missing:
  description: The GPUs expected (O(gpus)) but absent from the output.
  returned: when O(format) is neither nccl-tests nor training
  type: list
  elements: int
  sample: []
runtime_error:
  description: DCGM's message when the diagnostic did not run (its C(runtime_error)); null otherwise (always for a
    GEMM tool).
  returned: when O(format) is neither nccl-tests nor training
  type: str
  sample: null
findings:
  description:
    - For a configuration format, every field judged against the golden profile, one finding each, passes
      included, with C(node), C(component) (C(gpu), C(nic) or C(node)), C(index) (the GPU, or the NIC's port),
      C(uuid), C(name) (a NIC port as C(mlx5_0/1)), C(field), C(expected), C(observed), C(outcome) (pass, warn,
      fail), C(remedy) (what to do, empty on a pass) and C(drift) (null offline, as drift needs a fleet).
    - The same findings are the C(rows) (test C(configuration), metric the field, value the observed, detail the
      expected and the remedy).
  returned: when O(format) is a configuration format
  type: list
  elements: dict
  sample: [{node: gpu-node-07, component: gpu, index: 0, uuid: GPU-73d12ef7-f589-f867-4259-c7090ab44736,
            name: null, field: remap_pending, expected: "No", observed: "Yes", outcome: fail,
            remedy: "drain the node and reset the GPU (`nvidia-smi -i 0 -r`, or reboot) to apply the pending row remap",
            drift: null}]
product:
  description: The GPU product judged against (O(product), else the name the output's GPUs print); null when
    neither names one.
  returned: when O(format) is a configuration format
  type: str
  sample: NVIDIA A10
snapshot:
  description: The output read into the node's configuration snapshot (C(gpus), C(nics), C(driver), C(cuda),
    C(kernel), C(attached_gpus); a value the output does not hold is null, never 0 or false).
  returned: when O(format) is a configuration format
  type: dict
  sample: {node: gpu-node-07, gpus: [{index: 0, product: NVIDIA A10, ecc_current: true, remap_pending: true}],
           nics: [], driver: 535.129.03, cuda: "12.2", kernel: null, attached_gpus: 1}
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.cre.certification.plugins.module_utils.kube.client import auth_argument_spec

SPEC = {
    "argument_spec": {
        **auth_argument_spec(),  # accepted for the action group's module_defaults, ignored
        "path": {"type": "path", "required": True},
        "format": {"type": "str", "required": True,
                   "choices": ["dcgm-diag-json", "dcgm-diag-text", "nccl-tests", "training", "gemm-burn-in",
                               "gpu-burn", "gpu-fryer", "mamf-finder", "cutlass-profiler", "nvidia-smi-xml",
                               "nvidia-smi-q", "ibstat", "ibv_devinfo", "lspci", "node-drift"]},
        "node": {"type": "str", "default": ""},
        "profile": {"type": "str"},
        "test_type": {"type": "str", "default": ""},
        "gpus": {"type": "int"},
        "skip_is_failure": {"type": "bool", "default": False},
        "product": {"type": "str", "default": ""},
        "platform": {"type": "str", "default": ""},
        "floor_tflops": {"type": "float"},
        "power_default_w": {"type": "float"},
    },
}


def main() -> None:
    module = AnsibleModule(supports_check_mode=True, **SPEC)
    module.fail_json(msg="cre.certification.evidence_check runs on the controller as an action plugin")


if __name__ == "__main__":
    main()
