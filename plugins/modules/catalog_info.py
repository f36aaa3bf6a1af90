#!/usr/bin/python
# Copyright: (c) 2026, cre.certification developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Documentation stub: catalog_info runs on the controller as an action plugin."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: catalog_info
short_description: List the certification categories, or build one category's Workflow spec
version_added: 0.1.0
description:
  - Without O(domain) and O(variant), lists the catalog's certification categories sorted by domain, then
    variant, like C(nvcrectl certification list-categories).
  - With O(domain) and O(variant), builds that category's WorkflowSpec for the given O(options) exactly as the
    catalog build does (defaults, GPU defaults per architecture and platform, minimum GPUs and TP×PP checks),
    with its platform and architecture overrides still in C(overrides).
  - With O(catalog_dirs), the user's own entries are listed (and built) beside the built-in ones, marked
    C(source=user) with their C(path); entries refused there are in RV(problems).
  - Runs on the controller and reads only catalog files (the collection's and O(catalog_dirs)); no cluster is
    contacted.
  - This is the catalog build only. The Certification build adds what it detects on the cluster, turns MNNVL
    on for gb200/gb300, resolves and prunes the overrides, and applies C(image), C(gangScheduler),
    C(priorityClassName) and C(workloadMetadata).
  - Accepts kubernetes.core's auth options (O(kubeconfig), O(context), O(host), O(api_key), ...) and ignores them,
    so that one C(module_defaults) block for the action group C(group/cre.certification.certification) serves
    every module of the collection.
author:
  - cre.certification developers (@cre-certification)
extends_documentation_fragment:
  - cre.certification.attributes
  - kubernetes.core.k8s_auth_options
options:
  domain:
    description:
      - Domain of the category to build, for example V(communication), V(diagnostics) or V(training).
    type: str
  variant:
    description:
      - Variant of the category to build, for example V(nccl-all-reduce) or V(nemotron5-8b).
    type: str
  catalog_dirs:
    description:
      - Directories of the user's own catalog entries (C(<domain>/<variant>.yaml), C(_lib/) fragments of their
        own), as O(cre.certification.certification_run#module:catalog_dirs) takes them. Every entry is validated
        when loaded; a broken one is refused with its file and field path, and never hides the others.
    type: list
    elements: path
    default: []
  options:
    description:
      - Build options, with the field names of a Certification's C(options) (C(nodesPerJob), C(gpusPerNode),
        C(mlnxPerNode), C(testScale), C(maxBytes), C(enableMNNVL), C(enableCheckpoint), C(thresholds),
        C(timeoutPerJob), C(rdmaDeviceAccess), ...), plus the inputs the Certification controller would detect.
      - C(gpuArchitecture) is required to build (V(h100), V(gb200), V(NVIDIA-GB300), ...).
      - C(platform) selects the platform GPU defaults (for example V(oci) with V(gb200) requests no NIC).
      - C(target), C(gkeTcpxoNetworks) and C(tcpxoPluginVersion) are accepted as well.
      - Without C(nodesPerJob), a multi-node category is built for the smallest valid node count.
    type: dict
    default: {}
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
  idempotent:
    support: full
notes:
  - >-
    An unknown category fails naming O(variant), the closest category and the valid ones
    (C(variant: unknown category 'communication/nccl-alltoal'; did you mean ...)).
"""

EXAMPLES = r"""
- name: List the categories
  cre.certification.catalog_info:
  register: catalog

- name: Build the all-reduce WorkflowSpec for GB200 nodes on AWS
  cre.certification.catalog_info:
    domain: communication
    variant: nccl-all-reduce
    options:
      gpuArchitecture: gb200
      platform: aws
      nodesPerJob: 4
      enableMNNVL: true
  register: allreduce
"""

RETURN = r"""
categories:
  description: Every category, sorted by domain, then variant (only without O(domain)/O(variant)).
  returned: when no category is given
  type: list
  elements: dict
  contains:
    domain:
      description: Category domain.
      type: str
    variant:
      description: Category variant.
      type: str
    description:
      description: What the category runs.
      type: str
    minGPUs:
      description: Fewest GPUs one Job needs (0 = no minimum).
      type: int
    perNode:
      description: Whether the category runs one single-node Job per node.
      type: bool
    timeoutPerJob:
      description: Default timeout of one Job.
      type: str
    iterations:
      description: Iterations the category runs by default.
      type: int
    source:
      description: Where the category comes from, V(builtin) (the collection's catalog) or V(user) (O(catalog_dirs)).
      type: str
    path:
      description: The user's entry file (only when C(source) is V(user)).
      type: str
  sample: [{domain: communication, variant: nccl-all-reduce, description: NCCL all-reduce bus bandwidth across nodes,
            minGPUs: 0, perNode: false, timeoutPerJob: 1h, iterations: 1, source: builtin},
           {domain: compute, variant: gemm-goodput, description: GEMM goodput run on every GPU, minGPUs: 0,
            perNode: true, timeoutPerJob: 30m, iterations: 1, source: user,
            path: /home/me/catalog/compute/gemm-goodput.yaml}]
problems:
  description:
    - The user entries refused (only without O(domain)/O(variant)), each with its C(file), its field C(path) (empty
      for the whole file), the C(message) and the one-line C(error) a run asking for it fails with.
  returned: when no category is given
  type: list
  elements: dict
  sample: [{file: /home/me/catalog/compute/broken.yaml, path: meta.minGPUs,
            message: must be an integer of 0 or more, got -1,
            error: "/home/me/catalog/compute/broken.yaml: meta.minGPUs: must be an integer of 0 or more, got -1"}]
spec:
  description: The built WorkflowSpec (camelCase, as the API server stores it), overrides included.
  returned: when O(domain) and O(variant) are given
  type: dict
  sample:
    jobTemplate:
      spec:
        workload:
          trainJob:
            runtimeRef: {name: nccl-all-reduce-runtime}
    orchestration: {iterations: 1}
    dependencies:
    - kind: TrainingRuntime
      metadata: {name: nccl-all-reduce-runtime}
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.cre.certification.plugins.module_utils.kube.client import auth_argument_spec

SPEC = {
    "argument_spec": {
        **auth_argument_spec(),  # accepted for the action group's module_defaults, ignored
        "domain": {"type": "str"},
        "variant": {"type": "str"},
        "options": {"type": "dict", "default": {}},
        "catalog_dirs": {"type": "list", "elements": "path", "default": []},
    },
    "required_together": [["domain", "variant"]],
}


def main() -> None:
    module = AnsibleModule(supports_check_mode=True, **SPEC)
    module.fail_json(msg="cre.certification.catalog_info runs on the controller as an action plugin")


if __name__ == "__main__":
    main()
