#!/usr/bin/python
# Copyright: (c) 2026, cre.certification developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Documentation stub: baseline_generate runs on the controller as an action plugin."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: baseline_generate
short_description: A baseline of reference figures from certification reports (fleet or history)
version_added: 0.2.0
description:
  - Reads certification reports (C(report.json) files, or folders searched for them, such as the C(cre-reports/)
    of C(playbooks/certify.yml) over a fleet) and writes a baseline file (YAML, C(apiVersion) C(cre.certification/v1),
    C(kind) C(Baseline)) that M(cre.certification.certification_results) compares later runs with (its C(baseline)
    option). docs/history.md describes the format.
  - Figures are kept per key - GPU product, platform, category, nodes per job and workload image - so unlike runs
    never share a reference. Per figure (C(groupBusBW), C(busBW@<size>), C(goodput), C(tflops), C(stepTime)) the
    samples are every group's value in every report; outliers are trimmed iteratively (the mean is computed, every
    sample whose C(variance = (value - mean) / mean) breaks O(trim_rule) is dropped, and again until none is), and
    the file records the mean of the rest, how many were kept and dropped, their spread (min, max, standard
    deviation) and the reports they came from.
  - C(created) is the newest report's creation time, so the same reports always give the same file.
  - Runs on the controller and reads only local files; no cluster is contacted. Accepts kubernetes.core's auth
    options and ignores them (one C(module_defaults) block serves every module of the collection).
author:
  - cre.certification developers (@cre-certification)
extends_documentation_fragment:
  - cre.certification.attributes
  - kubernetes.core.k8s_auth_options
options:
  reports:
    description:
      - C(report.json) files, or folders searched (recursively) for them.
    type: list
    elements: path
    required: true
  dest:
    description:
      - The baseline file to write (its folder is created if missing).
    type: path
    required: true
  name:
    description:
      - The baseline's C(metadata.name).
    type: str
    default: baseline
  trim_rule:
    description:
      - CEL over C(variance) (a sample against the mean of the samples still kept) that a sample must meet to stay.
    type: str
    default: variance >= -0.1 && variance <= 0.1
attributes:
  check_mode:
    support: full
    details: Reports whether the file would change and writes nothing.
  diff_mode:
    support: none
  idempotent:
    support: full
"""

EXAMPLES = r"""
- name: A baseline from the fleet's last reports
  cre.certification.baseline_generate:
    reports: [cre-reports]
    dest: baselines/h100-fleet.yaml
    name: h100-fleet-2026-12

- name: Compare a certification with it
  cre.certification.certification_results:
    certification: gpu-cert-2026-12-05
    namespace: nvcre
    baseline: baselines/h100-fleet.yaml
    dest: cre-reports/gpu-a
"""

RETURN = r"""
baseline:
  description: The baseline written (the file's content).
  returned: success
  type: dict
  sample: {apiVersion: cre.certification/v1, kind: Baseline, metadata: {name: h100-fleet, created: "2026-12-05T09:00:00Z"},
           entries: []}
reports:
  description: The report files read.
  returned: success
  type: list
  elements: str
  sample: [cre-reports/gpu-a/report.json, cre-reports/gpu-b/report.json]
trimmed:
  description: Per figure that lost samples to the trim, C(<category> <figure>) and how many were dropped.
  returned: success
  type: dict
  sample: {"communication/nccl-loopback groupBusBW": 8}
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.cre.certification.plugins.module_utils.kube.client import auth_argument_spec

SPEC = {
    "argument_spec": {
        **auth_argument_spec(),
        "reports": {"type": "list", "elements": "path", "required": True},
        "dest": {"type": "path", "required": True},
        "name": {"type": "str", "default": "baseline"},
        "trim_rule": {"type": "str", "default": "variance >= -0.1 && variance <= 0.1"},
    },
}


def main() -> None:
    module = AnsibleModule(supports_check_mode=True, **SPEC)
    module.fail_json(msg="cre.certification.baseline_generate runs on the controller as an action plugin")


if __name__ == "__main__":
    main()
