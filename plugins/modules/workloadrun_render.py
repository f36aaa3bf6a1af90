#!/usr/bin/python
# Copyright: (c) 2026, cre.certification developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Documentation stub: workloadrun_render runs on the controller as an action plugin."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: workloadrun_render
short_description: Show the Workflow a WorkloadRun would create, offline
version_added: 0.2.0
description:
  - Builds the C(Workflow) of a C(WorkloadRun) against built-in mock nodes of a platform and GPU architecture (as
    C(nvcrectl workloadrun render --platform --gpu-arch)) or against Node objects you give, with the platform
    overrides applied, then renders it as M(cre.certification.workflow_render) does. No cluster is contacted.
  - A run the cluster would refuse fails the same way, with its field path; a gang-scheduling conflict is reported
    (C(reason) C(GangSchedulingConflict)) instead of a Workflow.
author:
  - cre.certification developers (@cre-certification)
extends_documentation_fragment:
  - cre.certification.attributes
  - kubernetes.core.k8s_auth_options
options:
  name:
    description:
      - Name of the WorkloadRun (and of its Workflow).
    type: str
    default: workloadrun
  namespace:
    description:
      - Namespace of the WorkloadRun.
    type: str
    default: default
  spec:
    description:
      - The C(WorkloadRunSpec), camelCase as in the CRD (see M(cre.certification.workloadrun_run)).
    type: dict
    required: true
  nodes:
    description:
      - The Node objects to build and render against. Exactly one of O(nodes) and O(platform) gives them.
    type: list
    elements: raw
  platform:
    description:
      - Build against a built-in mock node set of this platform (needs O(gpu_architecture)).
    type: str
    choices: [aws, gcp, azure, oci, onprem, mistral]
  gpu_architecture:
    description:
      - GPU architecture of the built-in mock node set (needs O(platform)).
    type: str
    choices: [h100, gb200, gb300, b300]
  node_count:
    description:
      - Number of mock nodes (with O(platform) and O(gpu_architecture)).
    type: int
    default: 1
attributes:
  check_mode:
    support: full
    details: The module never changes anything; check mode returns the same result.
  diff_mode:
    support: none
  idempotent:
    support: full
"""

EXAMPLES = r"""
- name: The Workflow of an MPI run on sixteen AWS H100 nodes
  cre.certification.workloadrun_render:
    name: nccl-all-reduce
    platform: aws
    gpu_architecture: h100
    node_count: 16
    spec:
      image: nvcr.io/nvidia/pytorch:26.01-py3
      framework:
        mpi: {binary: /usr/local/bin/all_reduce_perf_mpi, mpirunPath: /usr/local/mpi/bin/mpirun}
      numNodes: 4
"""

RETURN = r"""
workflow:
  description: The Workflow the run would create (absent when it is refused).
  returned: success
  type: dict
  sample: {apiVersion: nvcre.nvidia.com/v1alpha1, kind: Workflow, metadata: {name: nccl-all-reduce}}
plan:
  description: What the Workflow would do on these nodes, as M(cre.certification.workflow_render) returns it.
  returned: always
  type: dict
  sample: {placement: Pinned, detected_platform: aws, total_nodes: 16, nodes_per_job: 4}
warnings:
  description:
    - The GPUArchitectureDefaults message, as C(nvcrectl) prints it, when the catalog has no GPU defaults for the
      detected architecture and sizes the run on its 4 GPU / 0 NIC fallback; the run would emit it as a Warning
      event on the WorkloadRun.
  returned: always
  type: list
  elements: str
  sample: []
reason:
  description: Why the Workflow would fail at once (C(GangSchedulingConflict), C(PartitionError), ...).
  returned: failure
  type: str
  sample: GangSchedulingConflict
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.cre.certification.plugins.module_utils.kube.client import auth_argument_spec

SPEC = {
    "argument_spec": {
        **auth_argument_spec(),  # accepted for the action group's module_defaults, ignored
        "name": {"type": "str", "default": "workloadrun"},
        "namespace": {"type": "str", "default": "default"},
        "spec": {"type": "dict", "required": True},
        "nodes": {"type": "list", "elements": "raw"},
        "platform": {"type": "str", "choices": ["aws", "gcp", "azure", "oci", "onprem", "mistral"]},
        "gpu_architecture": {"type": "str", "choices": ["h100", "gb200", "gb300", "b300"]},
        "node_count": {"type": "int", "default": 1},
    },
    "mutually_exclusive": [["nodes", "platform"], ["nodes", "gpu_architecture"]],
    "required_one_of": [["nodes", "platform"]],
    "required_together": [["platform", "gpu_architecture"]],
}


def main() -> None:
    module = AnsibleModule(supports_check_mode=True, **SPEC)
    module.fail_json(msg="cre.certification.workloadrun_render runs on the controller as an action plugin")


if __name__ == "__main__":
    main()
