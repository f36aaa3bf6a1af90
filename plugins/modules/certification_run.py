#!/usr/bin/python
# Copyright: (c) 2026, cre.certification developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Documentation stub: certification_run runs on the controller as an action plugin."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: certification_run
short_description: Run a Certification to the end, one Workflow per category, as NVCRE's controller does
version_added: 0.1.0
description:
  - Validates the Certification, creates it (or continues the one this collection created under that name), then
    for each category in order detects the platform and GPU architecture of the target nodes, builds the
    category's C(Workflow) (owned by the Certification, named C(<certification>-<domain>-<variant>[-tokens])),
    creates it and drives it to the end. A failed category does not stop the next one.
  - The Certification's C(status) (C(categoryStatuses), conditions with NVCRE's reasons and messages) is written
    through the status subresource after every step, so C(kubectl get certification) shows where the run stands.
  - Resumable. Run it again after an interruption and it continues; finished categories are kept, the running
    Workflow is driven on. Over a finished Certification it changes nothing.
  - Check mode writes nothing and returns the Workflows it would create with their plans for the live nodes.
  - Refuses to touch a Certification it did not create (a resident NVCRE controller or another tool owns it).
author:
  - cre.certification developers (@cre-certification)
extends_documentation_fragment:
  - cre.certification.inputs.target
  - cre.certification.inputs.gang_scheduler
  - cre.certification.inputs.options
  - cre.certification.inputs.categories
  - cre.certification.attributes
  - cre.certification.run_options
  - kubernetes.core.k8s_auth_options
options:
  name:
    description:
      - Name of the C(Certification).
    type: str
    required: true
  namespace:
    description:
      - Namespace of the Certification and its Workflows.
    type: str
    default: default
  categories:
    description:
      - The categories to certify, in order (1 to 64), each C({domain, variant, options}); C(options) are
        C(CategoryOptions) (camelCase, as in the CRD) that replace the global O(options) for this category.
      - A string C(domain/variant) stands for C({domain, variant}) (what a survey multiselect gives).
      - A category may come from the user's own O(catalog_dirs).
    type: list
    elements: raw
    required: true
  catalog_dirs:
    description:
      - Directories of the user's own catalog entries, in the catalog's format (C(<domain>/<variant>.yaml), and
        C(_lib/) fragments of their own, which an entry's C($lib) finds before the collection's). Their categories
        sit beside the built-in ones; see the C(docs/catalog-entries.md) guide.
      - Every entry is validated before anything is written. A category whose entry is broken, or clashes with a
        built-in one (without C(overrides) set to C(builtin) in the entry) or with another directory's, is refused
        with the entry's file and field path when asked for; the broken entries not asked for are warnings.
      - A relative path is taken from the playbook's directory. A rerun of the same Certification needs the same
        directories.
    type: list
    elements: path
    default: []
  target:
    description:
      - The nodes to certify (C(nodeSelector), C(matchExpressions), C(nodeNames), C(taintSelectors)). Empty means
        every GPU node (C(nvidia.com/gpu.present=true)); cordoned nodes are left out and reported as excluded.
    type: dict
    default: {}
  gang_scheduler:
    description:
      - C(gangScheduler) (C(schedulerName), C(queue), C(queueLabelKey)) for every category.
    type: dict
  priority_class_name:
    description:
      - C(priorityClassName) of the Certification - the PriorityClass of every pod of every category (the MPI
        launcher, the workers, the single pods of diagnostics and training), with or without O(gang_scheduler).
      - The PriorityClass must exist (C(kubectl get priorityclasses)); a name none has is refused before anything is
        written, since the API server would refuse each pod.
    type: str
  options:
    description:
      - Global C(CategoryOptions) (camelCase, e.g. C(nodesPerJob), C(testScale), C(image), C(timeoutPerJob)).
    type: dict
    default: {}
  labels:
    description:
      - Extra labels for the Certification object.
    type: dict
    default: {}
  skip_is_failure:
    description:
      - A node where C(dcgmi diag) exits 0 but a GPU lacks evidence (every test C(Skip), or an output that cannot
        be read) fails with reason C(EvidenceLacking). By default it passes with a Warning event, and the lacking
        evidence is kept in its evidence rows and seal (docs/evidence.md).
      - A GPU the output names as failing fails its node whatever C(dcgmi) exited with.
    type: bool
    default: false
  gemm_floors:
    description:
      - "The run's own GEMM burn-in floors (C(compute/gemm-burn-in)), replacing the catalog's per GPU product -
        C({bf16: 560}) for every product, C({NVIDIA-H100-80GB-HBM3: {fp8: 1000}}) for one (the node label
        C(nvidia.com/gpu.product)); TFLOPS, per GPU. A floor of the run is never provisional, so a GPU below it
        fails (docs/gemm-burn-in-verdict.md)."
      - Carried as the annotation C(cre.certification/gemm-floors) on the Certification, its Workflows and the
        burn-in's Jobs, so the verdict in the cluster, a resumed run and the report judge alike.
    type: dict
    default: {}
  golden_profile:
    description:
      - A golden profile file (YAML or JSON, C(kind) C(GoldenProfile); M(cre.certification.golden_generate) writes
        one from a trusted run) that C(configuration/node-drift) judges every node against, over the shipped
        profile (docs/golden-configuration.md). Checked, with the field at fault named, before anything is written.
      - Carried as the annotation C(cre.certification/golden-profile) on the Certification, its Workflows and the
        node-drift Jobs, so the verdict in the cluster, a resumed run and the report judge alike.
    type: path
  create_namespace:
    description:
      - Create O(namespace) when it does not exist, once the inputs are checked (bad input creates nothing).
    type: bool
    default: false
  input_names:
    description:
      - How error messages name the options, for a role that fills them from its variables (C(roles/certify)
        passes its own); an option or option path (C(target.nodeSelector)) to the name to show instead.
    type: dict
    default: {}
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
    details: With C(--diff), the Certification and its Workflows before the run and after it; in check mode, the
      Certification and the Workflows the run would create.
  idempotent:
    support: partial
    details: Over a finished Certification a second run changes nothing; a run that stopped at O(timeout)
      goes on with the Certification when run again.
"""

EXAMPLES = r"""
- name: Certify the H100 pool for NCCL all-reduce
  cre.certification.certification_run:
    name: gpu-cert
    namespace: nvcre
    target:
      nodeSelector:
        pool: h100
    categories:
      - domain: communication
        variant: nccl-all-reduce
        options:
          nodesPerJob: 2
  register: cert
"""

RETURN = r"""
diff:
  description:
    - With C(--diff), the Certification and each Workflow that changed (or, in check mode, would be created), as
      Ansible shows a diff (kubernetes.core.k8s's way) - C(before) and C(after) are the object without the server's
      bookkeeping (managedFields, resourceVersion, uid...), C({}) where it does not exist.
  returned: diff mode
  type: list
  elements: dict
  sample: [{before_header: "Certification nvcre/gpu-cert (absent)", before: {},
            after_header: "Certification nvcre/gpu-cert", after: {kind: Certification}}]
name:
  description: The Certification's name.
  returned: success
  type: str
  sample: gpu-cert
namespace:
  description: The Certification's namespace.
  returned: success
  type: str
  sample: nvcre
phase:
  description: C(Succeeded), C(Failed) or C(InProgress) (timed out; run again to continue).
  returned: success
  type: str
  sample: Succeeded
condition:
  description: The Certification's True condition C({type, reason, message}).
  returned: success
  type: dict
  sample:
    {type: Succeeded, reason: AllWorkflowsSucceeded, message: All certification categories completed successfully}
categories:
  description: Per category C(domain), C(variant), C(workflow), C(status), C(condition), C(succeeded_nodes),
    C(failed_nodes) (C({name, reason, message})), C(excluded_nodes).
  returned: success
  type: list
  elements: dict
  sample:
    - domain: communication
      variant: nccl-all-reduce
      workflow: gpu-cert-communication-nccl-a-4061a
      status: Succeeded
      condition: {type: Succeeded, reason: JobCompleted, message: All 1 iterations completed successfully}
      succeeded_nodes: [gpu-node-000, gpu-node-001]
      failed_nodes: []
      excluded_nodes: []
summary:
  description: The short form for AWX stats, C({name, namespace, phase, condition, timed_out, categories}) with
    per category C(category), C(workflow), C(status) and the number of C(failed_nodes).
  returned: success
  type: dict
  sample:
    name: gpu-cert
    namespace: nvcre
    phase: Succeeded
    timed_out: false
    condition: {type: Succeeded, reason: AllWorkflowsSucceeded, message: All certification categories completed
        successfully}
    categories:
    - {category: communication/nccl-all-reduce, workflow: gpu-cert-communication-nccl-a-4061a, status: Succeeded,
      failed_nodes: 0}
timed_out:
  description: Whether O(timeout) passed before the Certification finished.
  returned: success
  type: bool
  sample: false
plan:
  description: In check mode, per category the Workflow it would create and its plan for the live nodes.
  returned: check mode
  type: list
  elements: dict
  sample:
    - category: communication/nccl-all-reduce
      workflow:
        kind: Workflow
        metadata: {name: gpu-cert-communication-nccl-a-4061a}
      plan: {placement: Pinned, total_nodes: 4, nodes_per_job: 2}
reason:
  description: Why the Certification could not run (C(CategoryNotFound), C(WorkflowNameCollision), ...).
  returned: failure
  type: str
  sample: CategoryNotFound
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
        "categories": {"type": "list", "elements": "raw", "required": True},
        "catalog_dirs": {"type": "list", "elements": "path", "default": []},
        "target": {"type": "dict", "default": {}},
        "gang_scheduler": {"type": "dict"},
        "priority_class_name": {"type": "str"},
        "options": {"type": "dict", "default": {}},
        "labels": {"type": "dict", "default": {}},
        "create_namespace": {"type": "bool", "default": False},
        "skip_is_failure": {"type": "bool", "default": False},
        "gemm_floors": {"type": "dict", "default": {}},
        "golden_profile": {"type": "path"},
        "input_names": {"type": "dict", "default": {}},
    },
}


def main() -> None:
    module = AnsibleModule(supports_check_mode=True, **SPEC)
    module.fail_json(msg="cre.certification.certification_run runs on the controller as an action plugin")


if __name__ == "__main__":
    main()
