#!/usr/bin/python
# Copyright: (c) 2026, cre.certification developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Documentation stub: evidence_check runs on the controller as an action plugin."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: evidence_check
short_description: Read a saved GPU tool output, offline, into per-GPU evidence rows as a certification would
version_added: 0.1.0
description:
  - Reads a saved C(dcgmi diag) output, its C(--json) or the table it prints without it (what users paste), in the
    layouts of DCGM 3.x and 4.x, and returns the evidence rows a certification draws from it, each GPU's verdict
    with DCGM's own message and error code, and the node's outcome (the worst).
  - A GPU whose every test was skipped (or that ran only DCGM's deployment checks) is lacking evidence, a warning
    by default (DCGM exits 0 there, yet nothing says the GPU works); a GPU expected but absent from the output is
    missing, a failure; a run that did not happen (C(runtime_error)) is a failure.
  - A file that the format named does not print is refused with the first line (or JSON field) it could not read.
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
        C(dcgm-diag-text) the table C(dcgmi diag) prints without it.
    type: str
    required: true
    choices: [dcgm-diag-json, dcgm-diag-text]
  node:
    description: The node name the rows carry.
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
format_version:
  description: The layout the output was read in (C(DCGM 3.x JSON), C(DCGM 4.x JSON), C(DCGM 3.x table), C(DCGM 4.x
    table)).
  returned: always
  type: str
  sample: DCGM 4.x JSON
dcgm_version:
  description: The DCGM version the output prints; null where it prints none.
  returned: always
  type: str
  sample: 4.2.3
driver_version:
  description: The driver version the output prints; null where it prints none.
  returned: always
  type: str
  sample: 570.124.06
rows:
  description:
    - The evidence rows in their fixed order (node, component, index, test, metric, sample). C(index) null is a
      result of the node as a whole (a DCGM 3.x deployment check) or of the run; C(value) is DCGM's result word;
      C(detail) DCGM's message with its error code, or its info; C(workflow), C(iteration), C(job), C(attempt)
      are null offline.
  returned: always
  type: list
  elements: dict
  sample: [{node: gpu-node-07, component: gpu, index: 3, uuid: null, test: memory, metric: result, value: Fail,
            unit: null, outcome: fail, detail: "A memory mismatch was detected on GPU 3 (DCGM error 12)", sample: 0,
            time: null, workflow: null, iteration: null, job: null, attempt: null}]
gpus:
  description: Per GPU in the output (or expected), its verdict (the worst outcome of its tests), whether it is
    lacking evidence or missing, and its failing or warning tests with DCGM's message.
  returned: always
  type: list
  elements: dict
  sample: [{index: 3, uuid: null, outcome: fail, lacking_evidence: false, missing: false,
            failures: [{test: memory, outcome: fail, detail: "A memory mismatch was detected on GPU 3 (DCGM error 12)"}]}]
outcome:
  description: The node's outcome, the worst of its GPUs' verdicts and of the node's own results (pass, warn, fail).
  returned: always
  type: str
  sample: fail
lacking_evidence:
  description: The GPUs on which no test but DCGM's deployment checks ran (every test skipped).
  returned: always
  type: list
  elements: int
  sample: [5]
missing:
  description: The GPUs expected (O(gpus)) but absent from the output.
  returned: always
  type: list
  elements: int
  sample: []
runtime_error:
  description: DCGM's message when the diagnostic did not run (its C(runtime_error)); null otherwise.
  returned: always
  type: str
  sample: null
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.cre.certification.plugins.module_utils.kube.client import auth_argument_spec

SPEC = {
    "argument_spec": {
        **auth_argument_spec(),  # accepted for the action group's module_defaults, ignored
        "path": {"type": "path", "required": True},
        "format": {"type": "str", "required": True, "choices": ["dcgm-diag-json", "dcgm-diag-text"]},
        "node": {"type": "str", "default": ""},
        "gpus": {"type": "int"},
        "skip_is_failure": {"type": "bool", "default": False},
    },
}


def main() -> None:
    module = AnsibleModule(supports_check_mode=True, **SPEC)
    module.fail_json(msg="cre.certification.evidence_check runs on the controller as an action plugin")


if __name__ == "__main__":
    main()
