#!/usr/bin/python
# Copyright: (c) 2026, cre.certification developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Documentation stub: certification_results runs on the controller as an action plugin."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: certification_results
short_description: The certification report of a Certification or a Workflow (JSON, JUnit XML, Markdown, HTML)
version_added: 0.1.0
description:
  - Reads a C(Certification) (its categories' Workflows) or a single C(Workflow), their node-result ConfigMaps
    (C(succeeded-nodes-<uid8>), C(failed-nodes-<uid8>)), NVCRE Jobs and measurements (C(BandwidthMeasurement),
    C(GoodputMeasurement)), and builds the report C(nvcrectl) prints (C(CertReport)), with C(result) C(PASSED),
    C(FAILED), C(RUNNING) or C(INCOMPLETE) (passed, but nodes were excluded).
  - Bandwidth and goodput figures come only from final measurements (C(Complete) with reason C(JobSucceeded)).
  - With O(dest), writes C(report.json), C(junit.xml) (one test case per node per category), C(report.md) and
    C(report.html) (self-contained - verdict, categories, node x category matrix, failed nodes with reasons,
    figures and the group bandwidth heat map) into that directory on the controller.
  - Keeps a Certification's report in the cluster, as NVCRE's report snapshot - a ConfigMap
    C(<certification>-report) owned by the Certification (it goes with it), labelled
    C(nvcre.nvidia.com/certification=<certification>), holding C(report.json.gz) (binaryData, gzip of
    C(report.json)) with its sha256 in the annotation C(nvcre.nvidia.com/report-sha256). A report over NVCRE's
    limits (8 MiB, 512 KiB gzipped) is not kept (warning C(PayloadTooLarge)); a ConfigMap of that name the
    Certification does not own is left alone (warning).
  - With O(from_snapshot), or when every Workflow of the Certification is gone, the report comes from that
    snapshot, so the files can be written again when the controller that ran was a throwaway container.
  - Compares a Certification's report with history (docs/history.md). Against the baseline file O(baseline) when
    one is given, else against the previous certification in the namespace (the newest report snapshot of another
    Certification created before this one) or in O(history_reports); per category and group, each figure
    (C(groupBusBW), C(busBW@<size>), C(goodput), C(tflops), C(stepTime)) with the baseline, the variance
    C((value - baseline) / baseline) and the verdict of its CEL rule (O(rules)). A figure the baseline has and the run
    lacks is a miss. Figures whose keys differ (GPU product, platform, category, nodes per job, image) are never
    compared; the report says which key differs. The result is the report's C(comparison), with the repeat
    offenders (O(repeat_offenders)) and each category's trend over the certifications found.
  - Regressions are reported, not enforced, unless O(enforce) - then each regressed node moves from the category's
    succeeded-nodes ConfigMap to its failed-nodes ConfigMap with reason C(RegressionDetected) and a message naming
    the figures. NVCRE's own conditions and the report's C(result) are unchanged either way.
  - With O(annotate_nodes), each node with a verdict gets the annotations C(cre.certification/certification),
    C(cre.certification/certified-at), C(cre.certification/verdict) and, when it passed,
    C(cre.certification/certified-until) (O(certified_for_days) later). Needs C(patch) on nodes
    (C(rbac/optional/)).
  - C(changed) is true only when a file's content, the snapshot, a node-result ConfigMap or a node's annotations
    changed.
  - Runs on the controller. Writes only the snapshot to the cluster, and with O(enforce) or O(annotate_nodes) what
    those options say.
author:
  - cre.certification developers (@cre-certification)
extends_documentation_fragment:
  - cre.certification.attributes
  - kubernetes.core.k8s_auth_options
options:
  certification:
    description:
      - Name of the C(Certification). Mutually exclusive with O(workflow) and O(workload_run).
    type: str
  workflow:
    description:
      - Name of one C(Workflow). Mutually exclusive with O(certification) and O(workload_run).
    type: str
  workload_run:
    description:
      - Name of one C(WorkloadRun) (M(cre.certification.workloadrun_run)); its report has one category,
        C(workloadrun/<name>). Mutually exclusive with O(certification) and O(workflow).
    type: str
  namespace:
    description:
      - Namespace of the object.
    type: str
    default: default
  dest:
    description:
      - Directory on the controller for C(report.json), C(junit.xml), C(report.md) and C(report.html); created if
        missing.
    type: path
  bundle_dir:
    description:
      - Directory on the controller for the results bundle (docs/results-bundle.md), created if missing -
        C(results.json) (the report, as C(report.json)), C(components/<component>.ndjson) (every evidence row of that
        component, read from the Workflows' evidence shards), C(truncation.json) (rows dropped as too large, reads
        that lost rows), C(schema/evidence-row.schema.json) and, last, C(manifest.json) (each file's path, sha256
        and size, the file count, the row totals). M(cre.certification.bundle_read) checks and reads it.
      - Each file is written to C(<path>.tmp), fsynced and renamed; an earlier C(manifest.json) is removed first.
        When a Workflow's evidence is not final yet, or its shards do not match their Jobs' seals, no manifest is
        written and the task fails naming what does not match.
      - Not written in check mode; refused for a report from the snapshot (the shards went with the Workflows).
    type: path
  from_snapshot:
    description:
      - Build nothing; write the report the Certification's snapshot holds (fails when it has none). Only with
        O(certification).
    type: bool
    default: false
  history:
    description:
      - Read the earlier certifications' report snapshots in O(namespace) (ConfigMaps labelled
        C(nvcre.nvidia.com/certification)). Off, only O(history_reports) and O(baseline) count.
    type: bool
    default: true
  history_reports:
    description:
      - Earlier reports of this cluster, as files (C(report.json)) or folders searched for them; they count beside
        the snapshots (the same certification found twice counts once).
    type: list
    elements: path
    default: []
  baseline:
    description:
      - A baseline file (M(cre.certification.baseline_generate) writes one; YAML or JSON, C(apiVersion)
        C(cre.certification/v1), C(kind) C(Baseline)) to compare with instead of the previous certification.
    type: path
  rules:
    description:
      - CEL rules over C(value), C(baseline) and C(variance) by figure name, replacing the defaults
        (C(variance >= -0.05) where higher is better, C(variance <= 0.05) for C(stepTime)). C(busBW) stands for
        every C(busBW@<size>).
    type: dict
    default: {}
  enforce:
    description:
      - Move regressed nodes to the failed-nodes ConfigMap with reason C(RegressionDetected) (see above).
    type: bool
    default: false
  burn_in_slow_is_failure:
    description:
      - The GEMM burn-in's fleet rule (a GPU below 0.92x the fleet median of its product, a node below 0.95x) fails
        instead of warning - each slow GPU's finding is C(fail), and its node moves to the failed-nodes ConfigMap
        with reason C(BelowFleetMedian) and the figures in its message (docs/gemm-burn-in-verdict.md).
    type: bool
    default: false
  repeat_offenders:
    description:
      - A node failed in at least O(repeat_offenders.failed) of the last O(repeat_offenders.of) certifications
        (this one included) is named a repeat offender, even when it passed this time.
    type: dict
    default: {}
    suboptions:
      failed:
        description: Failures that make a repeat offender.
        type: int
        default: 2
      of:
        description: How many certifications, newest first, are counted.
        type: int
        default: 3
  annotate_nodes:
    description:
      - Annotate each node with a verdict with this certification, its time, its verdict and how long a pass
        stands (see above).
    type: bool
    default: false
  certified_for_days:
    description:
      - Days a passed node stays certified (C(cre.certification/certified-until)).
    type: int
    default: 28
  input_names:
    description:
      - How error messages name the options, for a role that fills them from its variables (C(roles/results)
        passes its own); an option to the name to show instead.
    type: dict
    default: {}
attributes:
  check_mode:
    support: full
    details: Reports whether the files or the snapshot would change and writes nothing.
  diff_mode:
    support: none
  idempotent:
    support: full
"""

EXAMPLES = r"""
- name: Report a Certification into cre-reports/<host>/
  cre.certification.certification_results:
    certification: gpu-cert
    namespace: nvcre
    dest: "cre-reports/{{ inventory_hostname }}"
  register: results

- name: Keep the report with every evidence row, verifiable later with bundle_read
  cre.certification.certification_results:
    certification: gpu-cert
    namespace: nvcre
    bundle_dir: "cre-bundles/{{ inventory_hostname }}"

- name: Fail the play unless it passed
  ansible.builtin.assert:
    that: results.result in ['PASSED', 'INCOMPLETE']
"""

RETURN = r"""
result:
  description: C(PASSED), C(FAILED), C(RUNNING) or C(INCOMPLETE).
  returned: success
  type: str
  sample: PASSED
report:
  description: The C(CertReport) (camelCase), as written to C(report.json).
  returned: success
  type: dict
  sample: {title: Certification Report, name: gpu-cert, result: PASSED, platform: aws, gpu: h100, totalNodes: 2,
           failedNodes: [], excludedNodes: [], exclusionReason: "",
           nodeResults: [{name: gpu-node-000, group: group-0, rack: "", status: Passed}],
           categories: [{domain: communication, variant: nccl-all-reduce, status: Succeeded, testScale: full-scale,
                         nodesPerJob: 2, jobs: 1, bandwidth: [{size: 17179869184, algBW: 192.0, busBW: 360.0, samples: 1}]}]}
summary:
  description: Name, result, categories passed and total, failed node names, and each category's status.
  returned: success
  type: dict
  sample: {name: gpu-cert, result: PASSED, categories_passed: 1, categories_total: 1, failed_nodes: [], categories: []}
comparison:
  description:
    - What the report was compared with and how each figure fared (also in C(report.comparison)); C(against) is
      null when there was nothing to compare with.
  returned: with O(certification)
  type: dict
  sample: {against: {kind: certification, name: gpu-cert-1, created: "2026-11-05T09:00:00Z",
                     source: ConfigMap nvcre/gpu-cert-1-report}, enforced: false,
           summary: {compared: 4, regressed: 1, missing: 0, refused: 0}, regressedNodes: [], repeatOffenders: []}
source:
  description: Where the report came from - C(cluster) (built from the Workflows) or C(snapshot).
  returned: success
  type: str
  sample: cluster
snapshot:
  description: Name of the Certification's report snapshot ConfigMap.
  returned: with O(certification)
  type: str
  sample: gpu-cert-report
bundle:
  description:
    - The results bundle's manifest (C(formatVersion), C(fileCount), C(files) with each C(path), C(sha256) and
      C(size), C(totals) of rows, shards, Jobs, truncated rows and rows per component) and its C(path).
  returned: when O(bundle_dir) is set, outside check mode
  type: dict
  sample: {path: cre-bundle/gpu-a, formatVersion: 1, fileCount: 4,
           files: [{path: components/gpu.ndjson, sha256: 9f2c..., size: 48213}],
           totals: {rows: 512, shards: 8, jobs: 8, truncated: 0, components: {gpu: 512}}}
files:
  description: The report files under O(dest) (written, or already up to date).
  returned: when O(dest) is set
  type: list
  elements: str
  sample: [cre-reports/gpu-a/report.json, cre-reports/gpu-a/junit.xml, cre-reports/gpu-a/report.md,
           cre-reports/gpu-a/report.html]
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.cre.certification.plugins.module_utils.kube.client import auth_argument_spec

SPEC = {
    "argument_spec": {
        **auth_argument_spec(),
        "certification": {"type": "str"},
        "workflow": {"type": "str"},
        "workload_run": {"type": "str"},
        "namespace": {"type": "str", "default": "default"},
        "dest": {"type": "path"},
        "bundle_dir": {"type": "path"},
        "from_snapshot": {"type": "bool", "default": False},
        "history": {"type": "bool", "default": True},
        "history_reports": {"type": "list", "elements": "path", "default": []},
        "baseline": {"type": "path"},
        "rules": {"type": "dict", "default": {}},
        "enforce": {"type": "bool", "default": False},
        "burn_in_slow_is_failure": {"type": "bool", "default": False},
        "repeat_offenders": {"type": "dict", "default": {}, "options": {
            "failed": {"type": "int", "default": 2}, "of": {"type": "int", "default": 3}}},
        "annotate_nodes": {"type": "bool", "default": False},
        "certified_for_days": {"type": "int", "default": 28},
        "input_names": {"type": "dict", "default": {}},
    },
    "mutually_exclusive": [["certification", "workflow", "workload_run"]],
    "required_one_of": [["certification", "workflow", "workload_run"]],
}


def main() -> None:
    module = AnsibleModule(supports_check_mode=True, **SPEC)
    module.fail_json(msg="cre.certification.certification_results runs on the controller as an action plugin")


if __name__ == "__main__":
    main()
