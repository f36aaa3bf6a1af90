#!/usr/bin/python
# Copyright: (c) 2026, cre.certification developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Documentation stub: workflow_render runs on the controller as an action plugin."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: workflow_render
short_description: Render a Workflow offline and plan its groups and Jobs, like C(nvcrectl workflow render)
version_added: 0.1.0
description:
  - Resolves a C(nvcre.nvidia.com/v1alpha1) Workflow against a node list without a cluster, the way NVCRE's
    controller would on its first reconcile, and returns the resolved Workflow and the plan.
  - Validates the Workflow, applies its overrides (early pass, then the authoritative pass with the detected
    platform and GPU architecture), checks placement, GPU capacity and the gang-scheduling contract, sizes and
    partitions the jobs, and builds the first iteration's Jobs and dependency objects.
  - The returned Workflow has its overrides applied and then cleared, and carries the annotations
    C(nvcrectl.nvidia.com/detected-platform), C(nvcrectl.nvidia.com/detected-gpu-architecture) and, when an
    override applied, C(nvcrectl.nvidia.com/applied-overrides).
  - The returned Workflow is the document C(nvcrectl workflow render) prints for the same file, so the two can be
    diffed; CRD defaults the file left out (C(orchestration.iterations), C(execution.maxConcurrent), ...) stay
    out, and C(orchestration.execution) is printed even when empty. The plan is computed with the defaults.
  - A C(trainJob) without C(runtimeRef) is rendered, as C(nvcrectl) does (an override may supply it); if the
    rendered Workflow still has none, RV(warnings) says that NVCRE's API server would refuse it.
  - Where NVCRE would mark the Workflow C(Failed), the task fails with RV(reason) set to the condition reason
    and C(msg) to the exact condition message, and returns no jobs. Bad input fails with a message that names
    the field path or the option.
  - Runs on the controller. Reads only local files; writes nothing.
  - Accepts kubernetes.core's auth options (O(kubeconfig), O(context), O(host), O(api_key), ...) and ignores them,
    so that one C(module_defaults) block for the action group C(group/cre.certification.certification) serves
    every module of the collection.
author:
  - cre.certification developers (@cre-certification)
extends_documentation_fragment:
  - cre.certification.attributes
  - kubernetes.core.k8s_auth_options
options:
  src:
    description:
      - Path to a YAML or JSON file holding the Workflow (one document).
      - Mutually exclusive with O(definition); one of the two is required.
    type: path
  definition:
    description:
      - The Workflow as a dictionary.
      - Mutually exclusive with O(src); one of the two is required.
    type: dict
  nodes:
    description:
      - The Node objects to render against, as C(kubectl get nodes -o json) lists them in C(items).
      - Exactly one of O(nodes), O(nodes_file) and O(platform) gives the node context.
    type: list
    elements: raw
  nodes_file:
    description:
      - Path to a YAML or JSON file with the Nodes, as a list, a C(v1 List)/C(NodeList) with C(items),
        or one Node per YAML document.
      - Exactly one of O(nodes), O(nodes_file) and O(platform) gives the node context.
    type: path
  platform:
    description:
      - Render against a built-in mock node set of this platform (needs O(gpu_architecture)).
      - The mock nodes have the shapes of the local simulated cluster's node profiles.
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
    details: The module never changes anything; check mode returns the same plan.
  diff_mode:
    support: none
  idempotent:
    support: full
notes:
  - The plan's C(jobs) are the first iteration's Jobs, one per group, whatever
    C(spec.orchestration.execution.maxConcurrent) says about how many run at once.
  - Without C(metadata.uid) (a Workflow not read from a cluster) owner references and the
    C(nvcre.nvidia.com/workflow-uid) annotation are left out of the manifests.
"""

EXAMPLES = r"""
- name: Render a Workflow against 12 mock AWS H100 nodes
  cre.certification.workflow_render:
    src: workflows/nccl-all-reduce.yaml
    platform: aws
    gpu_architecture: h100
    node_count: 12
  register: rendered

- name: Show the Jobs NVCRE would create first
  ansible.builtin.debug:
    msg: "{{ rendered.plan.jobs | map(attribute='name') | list }}"

- name: Render against the nodes of a real cluster, saved with kubectl get nodes -o yaml
  cre.certification.workflow_render:
    definition: "{{ lookup('ansible.builtin.file', 'workflow.yaml') | from_yaml }}"
    nodes_file: nodes.yaml

- name: Expect a gang-scheduling conflict
  cre.certification.workflow_render:
    src: workflow.yaml
    platform: gcp
    gpu_architecture: gb200
    node_count: 18
  register: conflict
  failed_when: conflict.reason | default('') != 'GangSchedulingConflict'
"""

RETURN = r"""
workflow:
  description:
    - The resolved Workflow, overrides applied then cleared, with the detection annotations. Without status.
    - When the Workflow fails before its overrides are resolved, the Workflow as given.
  returned: always, unless the arguments or the Workflow are invalid
  type: dict
  sample:
    apiVersion: nvcre.nvidia.com/v1alpha1
    kind: Workflow
    metadata: {name: nccl, annotations: {nvcrectl.nvidia.com/detected-platform: aws}}
    spec: {orchestration: {placement: Pinned}}
plan:
  description: What NVCRE would record and create.
  returned: always, unless the arguments or the Workflow are invalid
  type: dict
  sample: {detected_platform: aws, detected_gpu_architecture: h100, placement: Pinned, total_nodes: 4, nodes_per_job: 2,
           groups: [{name: group-0, nodes: [gpu-node-000, gpu-node-001], overflow: false, domains: []}]}
  contains:
    detected_platform:
      description: Platform detected from the nodes' providerIDs.
      type: str
      sample: aws
    detected_gpu_architecture:
      description: Majority GPU architecture, or C(unknown).
      type: str
      sample: h100
    gpu_products:
      description: Sorted distinct C(nvidia.com/gpu.product) values of the certified nodes.
      type: list
      elements: str
    placement:
      description: C(Pinned) or C(Unpinned).
      type: str
    total_nodes:
      description: Number of nodes certified.
      type: int
    nodes_per_job:
      description: Nodes per Job.
      type: int
    excluded_nodes:
      description: Cordoned, other-architecture and under-capacity nodes left out.
      type: list
      elements: str
    exclusion_reason:
      description: Why they were left out, as in C(status.orchestration.exclusionReason).
      type: str
    applied_overrides:
      description: The overrides that matched, as in C(status.orchestration.appliedOverrides).
      type: list
      elements: dict
      sample: [{index: 0, when: "platform=aws", patches: "jobTemplatePatch"}]
    events:
      description: The events NVCRE would emit on the way (C(type), C(reason), C(message)).
      type: list
      elements: dict
    groups:
      description: Node groups (C(name), C(nodes), C(overflow), C(domains), and C(domainNodeCounts) for groups spanning domains).
      type: list
      elements: dict
      sample: [{name: group-0, nodes: [gpu-node-000, gpu-node-001], overflow: false, domains: []}]
    jobs:
      description: First-iteration Jobs (C(name), C(group), C(iteration), C(manifest)); empty on failure.
      type: list
      elements: dict
    dependencies:
      description: Dependency objects to create, workflow-scoped first, then each group's job-scoped copies; empty on failure.
      type: list
      elements: dict
warnings:
  description:
    - "What C(nvcrectl) renders but NVCRE's admission would refuse, one line each, for example
      C(spec.jobTemplate.spec.workload.trainJob.runtimeRef: Required value)."
  returned: always, unless the arguments or the Workflow are invalid
  type: list
  elements: str
  sample: []
reason:
  description: The Workflow C(Failed) condition reason (C(OverrideError), C(GangSchedulingConflict), C(PartitionError), ...).
  returned: when NVCRE would mark the Workflow Failed
  type: str
  sample: GangSchedulingConflict
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.cre.certification.plugins.module_utils.kube.client import auth_argument_spec

# One definition of the options, validated by the action plugin (ArgumentSpecValidator) and by this stub.
SPEC = {
    "argument_spec": {
        **auth_argument_spec(),  # accepted for the action group's module_defaults, ignored
        "src": {"type": "path"},
        "definition": {"type": "dict"},
        "nodes": {"type": "list", "elements": "raw"},
        "nodes_file": {"type": "path"},
        "platform": {"type": "str", "choices": ["aws", "gcp", "azure", "oci", "onprem", "mistral"]},
        "gpu_architecture": {"type": "str", "choices": ["h100", "gb200", "gb300", "b300"]},
        "node_count": {"type": "int", "default": 1},
    },
    "mutually_exclusive": [["src", "definition"], ["nodes", "nodes_file", "platform"],
                           ["nodes", "nodes_file", "gpu_architecture"]],
    "required_one_of": [["src", "definition"], ["nodes", "nodes_file", "platform", "gpu_architecture"]],
    "required_together": [["platform", "gpu_architecture"]],
}


def main() -> None:
    module = AnsibleModule(supports_check_mode=True, **SPEC)
    module.fail_json(msg="cre.certification.workflow_render runs on the controller as an action plugin")


if __name__ == "__main__":
    main()
