#!/usr/bin/python
# Copyright: (c) 2026, cre.certification developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Documentation stub: bundle_read runs on the controller as an action plugin."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: bundle_read
short_description: Check a results bundle against its manifest, offline, and read the evidence rows asked for
version_added: 0.1.0
description:
  - Reads a results bundle that M(cre.certification.certification_results) wrote with
    O(cre.certification.certification_results#module:bundle_dir) (docs/results-bundle.md). First its
    C(manifest.json) - a folder without one is refused, never searched for files instead (a bundle whose writing
    did not finish has none) - then every file the manifest lists, against the size and sha256 it gives.
  - Refuses, with one line naming the file, a manifest that does not parse, whose C(fileCount) is not the number of
    files it lists, that lists a file that is missing or of another size or sha256, or whose C(formatVersion) is
    unknown.
  - Otherwise returns the bundle's totals, its manifest in short and the rows matching every filter given, filtered
    while they are read (a bundle of millions of rows is never held in memory).
  - Runs on the controller. Reads only local files; writes nothing.
  - Accepts kubernetes.core's auth options and ignores them, like the other offline modules.
author:
  - cre.certification developers (@cre-certification)
extends_documentation_fragment:
  - cre.certification.attributes
  - kubernetes.core.k8s_auth_options
options:
  path:
    description:
      - The bundle's folder (the O(cre.certification.certification_results#module:bundle_dir) it was written to).
    type: path
    required: true
  node:
    description: Only the rows of this node.
    type: str
  component:
    description: Only the rows of this component (only its file is read).
    type: str
    choices: [gpu, link, group, step]
  outcome:
    description: Only the rows of this outcome.
    type: str
    choices: [pass, warn, skip, fail]
  limit:
    description: At most this many rows are returned (C(matched) still counts them all); C(0) returns every one.
    type: int
    default: 1000
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
- name: Which GPUs failed, by the bundle kept from last night's certification?
  cre.certification.bundle_read:
    path: cre-bundles/gpu-a
    component: gpu
    outcome: fail
  register: failing

- name: Every row of one node
  cre.certification.bundle_read:
    path: cre-bundles/gpu-a
    node: gpu-node-07
    limit: 0
"""

RETURN = r"""
totals:
  description: The bundle's row totals from its manifest - rows, shards, Jobs, truncated rows, rows per component.
  returned: always
  type: dict
  sample: {rows: 512, shards: 8, jobs: 8, truncated: 0, components: {gpu: 512}}
matched:
  description: How many rows match the filters (C(rows) holds the first O(limit) of them).
  returned: always
  type: int
  sample: 1
rows:
  description:
    - The evidence rows matching the filters, in the bundle's order (the fields of
      C(schema/evidence-row.schema.json)).
  returned: always
  type: list
  elements: dict
  sample: [{node: gpu-node-07, component: gpu, index: 3, uuid: null, test: memory, metric: result, value: Fail,
            unit: null, outcome: fail, detail: "A memory mismatch was detected on GPU 3 (DCGM error 12)", sample: 0,
            time: null, workflow: gpu-cert-diagnostics-dcgm-level2-8f3a1, iteration: 1,
            job: gpu-cert-diagnostics-dcgm-level2-8f3a1-group-0, attempt: 1}]
manifest:
  description:
    - The manifest in short - C(formatVersion), C(fileCount) and each file's C(path) and C(size), all checked.
  returned: always
  type: dict
  sample: {formatVersion: 1, fileCount: 4, files: [{path: components/gpu.ndjson, size: 48213}]}
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.cre.certification.plugins.module_utils.kube.client import auth_argument_spec

SPEC = {
    "argument_spec": {
        **auth_argument_spec(),  # accepted for the action group's module_defaults, ignored
        "path": {"type": "path", "required": True},
        "node": {"type": "str"},
        "component": {"type": "str", "choices": ["gpu", "link", "group", "step"]},
        "outcome": {"type": "str", "choices": ["pass", "warn", "skip", "fail"]},
        "limit": {"type": "int", "default": 1000},
    },
}


def main() -> None:
    module = AnsibleModule(supports_check_mode=True, **SPEC)
    module.fail_json(msg="cre.certification.bundle_read runs on the controller as an action plugin")


if __name__ == "__main__":
    main()
