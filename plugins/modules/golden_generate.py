#!/usr/bin/python
# Copyright: (c) 2026, cre.certification developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Documentation stub: golden_generate runs on the controller as an action plugin."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: golden_generate
short_description: A golden configuration profile from the node snapshots of a run you trust
version_added: 0.3.0
description:
  - Reads the node configuration snapshots of a certification run (the configuration/node-drift category) and
    writes a golden profile (YAML, C(apiVersion) C(cre.certification/v1), C(kind) C(GoldenProfile)) that pins the
    fleet's configuration for later runs, and that M(cre.certification.evidence_check) takes as its C(profile).
  - Per GPU product, the majority of its nodes - GPUs per node, active NVLinks, power limit - and pinned values for
    what has no fixed right value (VBIOS, driver, kernel, NIC firmware per firmware line), each with how many of the
    run's nodes held it. A value without a majority is not pinned, and is listed in RV(unpinned).
  - Sources are snapshot JSON files (an object with C(node) and C(gpus), or a list of them, as a results bundle
    keeps them), saved node-drift collector outputs (C(kubectl logs) of a node-drift pod, C(node-drift/1) records),
    or folders searched for either; a node found twice keeps its latest snapshot. docs/golden-configuration.md
    describes the profile.
  - Runs on the controller and reads only local files; no cluster is contacted. Accepts kubernetes.core's auth
    options and ignores them.
author:
  - cre.certification developers (@cre-certification)
extends_documentation_fragment:
  - cre.certification.attributes
  - kubernetes.core.k8s_auth_options
options:
  src:
    description:
      - Snapshot JSON files, node-drift collector outputs, or folders searched (recursively) for them (a results
        bundle's folder). Other files in a folder are left alone; a file named here must be one of the two.
    type: list
    elements: path
    required: true
  dest:
    description: The profile file to write (its folder is created if missing).
    type: path
    required: true
  platform:
    description:
      - The platform the run was on (C(azure), C(oci), ...); the profile then records its NIC ports (the majority
        link layer, ports per node and rate) under C(nics.<platform>).
      - Empty records no NIC ports.
    type: str
    default: ''
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
- name: Pin the fleet's configuration from last week's healthy run
  cre.certification.golden_generate:
    src: [cre-bundles/gpu-cert-2026-12-01]
    dest: golden/fleet-a.yaml
    platform: azure

- name: Check a node's saved nvidia-smi against it
  cre.certification.evidence_check:
    path: saved/gpu-node-07-nvidia-smi-q.xml
    format: nvidia-smi-xml
    node: gpu-node-07
    profile: golden/fleet-a.yaml
"""

RETURN = r"""
profile:
  description: The profile written (the file's content, without its comment header).
  returned: success
  type: dict
  sample: {apiVersion: cre.certification/v1, kind: GoldenProfile,
           products: {NVIDIA-H100-80GB-HBM3: {gpus: 8, powerLimitW: 700.0, pinned: {
             vbios: {value: 96.00.74.00.0D, nodes: 8, of: 8}, driver: {value: 570.124.06, nodes: 8, of: 8},
             kernel: {value: 6.8.0-1021-aws, nodes: 7, of: 8}, nic.fw: [{value: 28.39.1002, nodes: 8, of: 8}]}}}}
unpinned:
  description: Per product, the fields whose values had no majority (not pinned), with the values seen.
  returned: success
  type: list
  elements: dict
  sample: [{product: NVIDIA-H100-80GB-HBM3, field: kernel, values: [6.8.0-1021-aws, 6.8.0-1024-aws]}]
nodes:
  description: The nodes whose snapshots were read.
  returned: success
  type: list
  elements: str
  sample: [gpu-node-000, gpu-node-001]
files:
  description: The files the snapshots came from.
  returned: success
  type: list
  elements: str
  sample: [cre-bundles/gpu-cert/configuration/gpu-node-000.json]
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.cre.certification.plugins.module_utils.kube.client import auth_argument_spec

SPEC = {
    "argument_spec": {
        **auth_argument_spec(),  # accepted for the action group's module_defaults, ignored
        "src": {"type": "list", "elements": "path", "required": True},
        "dest": {"type": "path", "required": True},
        "platform": {"type": "str", "default": ""},
    },
}


def main() -> None:
    module = AnsibleModule(supports_check_mode=True, **SPEC)
    module.fail_json(msg="cre.certification.golden_generate runs on the controller as an action plugin")


if __name__ == "__main__":
    main()
