#!/usr/bin/python
# Copyright: (c) 2026, cre.certification developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Documentation stub: workflow_run runs on the controller as an action plugin."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: workflow_run
short_description: Drive an NVCRE Workflow to its end, as NVCRE's Workflow and Job controllers would
version_added: 0.1.0
description:
  - Reconciles the C(nvcre.nvidia.com/v1alpha1) Workflow O(name) in O(namespace) until it is terminal, the
    O(timeout) passes, or iteration O(until_iteration) is complete. It covers discovery and partition, dependencies, the
    gang-scheduling contract before every launch, Jobs and their Kubeflow C(TrainJob) workloads, iterations,
    the node-health monitor, failed-node attribution and the C(succeeded-nodes-*)/C(failed-nodes-*) ConfigMaps.
  - Everything it needs is in the cluster, so a run that was stopped at any point continues where it stopped
    when run again, without duplicates.
  - Prints a progress line whenever the Workflow's state changes, and each API write with C(-v).
  - Adds no finalizers. Refuses to act when a resident NVCRE controller manages the Workflow.
  - Runs on the controller.
author:
  - cre.certification developers (@cre-certification)
extends_documentation_fragment:
  - cre.certification.attributes
  - cre.certification.run_options
  - kubernetes.core.k8s_auth_options
options:
  name:
    description: Name of the Workflow.
    type: str
    required: true
  namespace:
    description: Namespace of the Workflow.
    type: str
    default: default
  until_iteration:
    description: Return once this many iterations are complete (the Workflow keeps its state for a later run); at least 1.
    type: int
attributes:
  check_mode:
    support: full
    details: Plans the groups, Job names and nodes per Job from the live nodes and writes nothing.
  diff_mode:
    support: full
    details: With C(--diff), the Workflow before the run and after it; in check mode, as its first pass would write it (the
      resolved spec and detection annotations over the live status).
  idempotent:
    support: partial
    details: Over a terminal Workflow a second run changes nothing; a run that stopped at O(timeout) or
      O(until_iteration) goes on driving the Workflow when run again.
"""

EXAMPLES = r"""
- name: Certify with the Workflow already in the cluster
  cre.certification.workflow_run:
    name: nccl-all-reduce
    namespace: cre
    timeout: 7200
  register: run

- name: Only the first iteration now
  cre.certification.workflow_run:
    name: nccl-all-reduce
    until_iteration: 1
"""

RETURN = r"""
diff:
  description:
    - With C(--diff), the Workflow, when it changed (or, in check mode, would), as Ansible shows a diff
      (kubernetes.core.k8s's way) - C(before) and C(after) are the object without the server's
      bookkeeping (managedFields, resourceVersion, uid...), C({}) where it does not exist.
  returned: diff mode
  type: list
  elements: dict
  sample: [{before_header: "Workflow nvcre/gpu-cert-nccl-all-reduce", before: {kind: Workflow},
            after_header: "Workflow nvcre/gpu-cert-nccl-all-reduce", after: {kind: Workflow, status: {}}}]
phase:
  description: C(Succeeded), C(Failed) or C(InProgress) (timed out or stopped at O(until_iteration)).
  returned: outside check mode
  type: str
  sample: Succeeded
condition:
  description: The Workflow's True condition among InProgress, Succeeded and Failed.
  returned: outside check mode
  type: dict
  sample: {type: Succeeded, reason: JobCompleted, message: All 1 iterations completed successfully}
iterations:
  description: Current, completed and total iterations.
  returned: outside check mode
  type: dict
  sample: {current: 1, completed: 1, total: 1}
groups:
  description: Groups by phase (pending, running, succeeded, failed, total) in the current iteration.
  returned: outside check mode
  type: dict
  sample: {pending: 0, running: 0, succeeded: 2, failed: 0, total: 2}
succeeded_nodes:
  description: Nodes in the succeeded-nodes ConfigMap.
  returned: outside check mode
  type: list
  elements: str
  sample: [gpu-node-000, gpu-node-001]
failed_nodes:
  description: Nodes in the failed-nodes ConfigMap, each with its reason and message.
  returned: outside check mode
  type: list
  elements: dict
  sample: [{name: gpu-node-002, reason: HardwareFailureDetected, message: Hardware failure detected by node health check}]
configmaps:
  description: Names of the succeeded and failed node-result ConfigMaps (null when not written).
  returned: outside check mode
  type: dict
  sample: {succeeded: succeeded-nodes-11fa3bba, failed: failed-nodes-11fa3bba}
excluded_nodes:
  description: Nodes left out before the run (cordoned, other GPU architecture, too few GPUs).
  returned: outside check mode
  type: list
  elements: str
  sample: [gpu-node-003]
timed_out:
  description: Whether O(timeout) passed before the Workflow ended.
  returned: outside check mode
  type: bool
  sample: false
elapsed:
  description: Seconds spent.
  returned: outside check mode
  type: float
  sample: 312.5
diagnose:
  description:
    - In diagnose mode, the Workflow's C(status.orchestration.diagnose) as the run left it (stage, round,
      healthyNodes, suspectNodes, noNVLSuspectNodes, infrastructureFaults and the rest).
  returned: when the Workflow runs in diagnose mode
  type: dict
  sample: {stage: complete, round: 4, healthyNodes: [gpu-node-000], suspectNodes: [gpu-node-004, gpu-node-005]}
plan:
  description: In check mode, the plan as M(cre.certification.workflow_render) returns it, for the live nodes.
  returned: check mode
  type: dict
  sample: {detected_platform: aws, detected_gpu_architecture: h100, placement: Pinned, total_nodes: 4, nodes_per_job: 2}
reason:
  description: The condition reason when the Workflow cannot run (for example C(GangSchedulingConflict)).
  returned: failure
  type: str
  sample: GangSchedulingConflict
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.cre.certification.plugins.module_utils.driver.options import RUN_OPTIONS_SPEC
from ansible_collections.cre.certification.plugins.module_utils.kube.client import auth_argument_spec

SPEC = {
    "argument_spec": {
        **auth_argument_spec(),
        **RUN_OPTIONS_SPEC,
        "name": {"type": "str", "required": True},
        "namespace": {"type": "str", "default": "default"},
        "until_iteration": {"type": "int"},
    },
}


def main() -> None:
    module = AnsibleModule(supports_check_mode=True, **SPEC)
    module.fail_json(msg="cre.certification.workflow_run runs on the controller as an action plugin")


if __name__ == "__main__":
    main()
