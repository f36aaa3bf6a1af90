#!/usr/bin/python
# Copyright: (c) 2026, cre.certification developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Documentation stub: workloadrun_run runs on the controller as an action plugin."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: workloadrun_run
short_description: Run a WorkloadRun (a workload of your own, as one Workflow) to the end, as NVCRE's controller does
version_added: 0.2.0
description:
  - Validates the C(WorkloadRun), creates it (or continues the one this collection created under that name), detects
    the platform and GPU architecture of the target nodes, builds its C(Workflow) (same name, label
    C(nvcre.nvidia.com/workload-run), owned by the run) with the platform overrides of the catalog, creates it and
    drives it to the end.
  - The run's C(status) mirrors its Workflow as NVCRE's does (conditions, C(workflowRef), detected platform and GPU,
    C(resolvedGpusPerNode), the node-result refs).
  - Resumable. Run it again after an interruption and it continues; over a finished run it changes nothing.
  - Check mode writes nothing and returns the Workflow it would create with its plan for the live nodes.
  - Bad input (a field of O(spec), Unpinned with testScale intra-node or intra-rack) is refused with its field path
    before anything is written.
author:
  - cre.certification developers (@cre-certification)
extends_documentation_fragment:
  - cre.certification.attributes
  - cre.certification.run_options
  - kubernetes.core.k8s_auth_options
options:
  name:
    description:
      - Name of the C(WorkloadRun) and of its Workflow.
    type: str
    required: true
  namespace:
    description:
      - Namespace of the run and its Workflow.
    type: str
    default: default
  spec:
    description:
      - The C(WorkloadRunSpec), camelCase as in the CRD. C(image), C(framework) (exactly one of C(torch), C(mpi),
        C(exec)) and C(numNodes) are required; docs/workloadrun.md describes every field.
    type: dict
    required: true
  labels:
    description:
      - Extra labels of the WorkloadRun.
    type: dict
    default: {}
  skip_is_failure:
    description:
      - For a workload that runs C(dcgmi diag) (its evidence is read per GPU, docs/evidence.md), fail a node whose
        GPU lacks evidence (every test C(Skip), or output that cannot be read) with reason C(EvidenceLacking),
        although C(dcgmi) exited 0. Off, such a node passes and a Warning event names the GPU.
    type: bool
    default: false
  create_namespace:
    description:
      - Create O(namespace) when it does not exist.
    type: bool
    default: false
  input_names:
    description:
      - How error messages name the options, for a role that fills them from its variables (C(roles/workloadrun)
        passes its own); an option or option path to the name to show instead.
    type: dict
    default: {}
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
    details: With C(--diff), the WorkloadRun and its Workflow before the run and after it; in check mode, the
      WorkloadRun and the Workflow the run would create.
  idempotent:
    support: partial
    details: Over a finished WorkloadRun a second run changes nothing; a run that stopped at O(timeout) goes on
      with it when run again.
"""

EXAMPLES = r"""
- name: NCCL all-reduce on four nodes as one job
  cre.certification.workloadrun_run:
    name: nccl-all-reduce
    namespace: nvcre
    spec:
      image: nvcr.io/nvidia/pytorch:26.01-py3
      framework:
        mpi:
          binary: /usr/local/bin/all_reduce_perf_mpi
          args: [-b, "8", -e, 32G, -f, "2"]
          mpirunPath: /usr/local/mpi/bin/mpirun
      numNodes: 4
      orchestration: {placement: Unpinned}
      bandwidthMeasurement: {logProfileRef: nccl-bandwidth, testType: all_reduce}
"""

RETURN = r"""
diff:
  description:
    - With C(--diff), the WorkloadRun and its Workflow where they changed (or, in check mode, would be created), as
      Ansible shows a diff (kubernetes.core.k8s's way) - C(before) and C(after) are the object without the server's
      bookkeeping (managedFields, resourceVersion, uid...), C({}) where it does not exist.
  returned: diff mode
  type: list
  elements: dict
  sample: [{before_header: "WorkloadRun nvcre/burn (absent)", before: {},
            after_header: "WorkloadRun nvcre/burn", after: {kind: WorkloadRun}}]
phase:
  description: C(Succeeded), C(Failed) or C(InProgress) (timed out).
  returned: success
  type: str
  sample: Succeeded
condition:
  description: The run's True condition, C({type, reason, message}).
  returned: success
  type: dict
  sample: {type: Succeeded, reason: WorkflowSucceeded, message: Workflow completed successfully}
conditions:
  description: The run's conditions as written in its status.
  returned: success
  type: list
  elements: dict
  sample:
    - {type: Succeeded, status: "True", reason: WorkflowSucceeded, message: Workflow completed successfully}
workflow:
  description: Name of the run's Workflow (empty before it exists).
  returned: success
  type: str
  sample: nccl-all-reduce
detected_platform:
  description: Platform detected on the target nodes.
  returned: success
  type: str
  sample: aws
detected_gpu_architecture:
  description: GPU architecture detected on the target nodes.
  returned: success
  type: str
  sample: h100
resolved_gpus_per_node:
  description: GPUs each workload pod requests.
  returned: success
  type: int
  sample: 8
succeeded_nodes:
  description: Nodes that passed.
  returned: success
  type: list
  elements: str
  sample: [gpu-node-000, gpu-node-001]
failed_nodes:
  description: Nodes that failed, C({name, reason, message}).
  returned: success
  type: list
  elements: dict
  sample:
    - {name: gpu-node-002, reason: ThresholdViolation, message: busBandwidthGBps 12.5 violates value >= 400}
timed_out:
  description: Whether O(timeout) passed before the run finished.
  returned: success
  type: bool
  sample: false
plan:
  description: In check mode, the Workflow the run would create (C(workflow)) and its C(plan), or C(failure).
  returned: check mode
  type: dict
  sample:
    workflow: {kind: Workflow, metadata: {name: nccl-all-reduce}}
    plan: {placement: Unpinned, total_nodes: 16, nodes_per_job: 4}
reason:
  description: Why the run could not go on (C(BuildFailed), C(WorkflowNameCollision), C(WorkflowDeleted), ...).
  returned: failure
  type: str
  sample: BuildFailed
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
        "spec": {"type": "dict", "required": True},
        "labels": {"type": "dict", "default": {}},
        "create_namespace": {"type": "bool", "default": False},
        "skip_is_failure": {"type": "bool", "default": False},
        "input_names": {"type": "dict", "default": {}},
    },
}


def main() -> None:
    module = AnsibleModule(supports_check_mode=True, **SPEC)
    module.fail_json(msg="cre.certification.workloadrun_run runs on the controller as an action plugin")


if __name__ == "__main__":
    main()
