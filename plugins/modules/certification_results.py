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
  - C(changed) is true only when a file's content or the snapshot changed.
  - Runs on the controller. Writes only the snapshot to the cluster.
author:
  - cre.certification developers (@cre-certification)
extends_documentation_fragment:
  - cre.certification.attributes
  - kubernetes.core.k8s_auth_options
options:
  certification:
    description:
      - Name of the C(Certification). Mutually exclusive with O(workflow).
    type: str
  workflow:
    description:
      - Name of one C(Workflow). Mutually exclusive with O(certification).
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
  from_snapshot:
    description:
      - Build nothing; write the report the Certification's snapshot holds (fails when it has none). Only with
        O(certification).
    type: bool
    default: false
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
        "namespace": {"type": "str", "default": "default"},
        "dest": {"type": "path"},
        "from_snapshot": {"type": "bool", "default": False},
        "input_names": {"type": "dict", "default": {}},
    },
    "mutually_exclusive": [["certification", "workflow"]],
    "required_one_of": [["certification", "workflow"]],
}


def main() -> None:
    module = AnsibleModule(supports_check_mode=True, **SPEC)
    module.fail_json(msg="cre.certification.certification_results runs on the controller as an action plugin")


if __name__ == "__main__":
    main()
