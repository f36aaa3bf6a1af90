#!/usr/bin/python
# Copyright: (c) 2026, cre.certification developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Documentation stub: cluster_info runs on the controller as an action plugin."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: cluster_info
short_description: Platform, GPU and topology of a cluster, like C(nvcrectl cluster info)
version_added: 0.1.0
description:
  - Lists the cluster's GPU nodes (C(nvidia.com/gpu.present=true), or the O(target)) and reports the platform
    detected from their providerIDs, the GPU architecture and product, GPUs per node, every node with its
    readiness and rack, and the racks of the topology label, as C(nvcrectl cluster info) does.
  - Mixed GPU counts, a catalog GPU count that differs, nodes with 0 GPUs and a missing topology label show as
    Ansible warnings; so does NVCRE's GPUArchitectureDefaults message when the catalog has no GPU defaults for the
    architecture (a certification would be sized on its 4 GPU / 0 NIC fallback).
  - Runs on the controller. Reads only.
  - Fails when the GPU nodes do not share one C(nvidia.com/gpu.product) (C(heterogeneous GPUs) message) or one
    platform, or when no GPU node matches.
author:
  - cre.certification developers (@cre-certification)
extends_documentation_fragment:
  - cre.certification.inputs.target
  - cre.certification.attributes
  - kubernetes.core.k8s_auth_options
options:
  target:
    description:
      - The nodes to look at, as a Workflow's C(spec.orchestration.target) (C(nodeSelector), C(matchExpressions),
        C(nodeNames), C(taintSelectors)). Cordoned nodes are left out.
    type: dict
    default: {}
  topology_key:
    description:
      - The node label whose values name the racks. Defaults to the platform's key
        (C(topology.k8s.aws/network-node-layer-1) on aws, C(cloud.google.com/gce-topology-block) on gcp,
        C(kubernetes.azure.com/ppg) on azure).
    type: str
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
  idempotent:
    support: full
"""

EXAMPLES = r"""
- name: Show what the cluster offers
  cre.certification.cluster_info:
    kubeconfig: ~/.kube/config
  register: cluster

- name: Only the nodes of one pool
  cre.certification.cluster_info:
    target:
      nodeSelector:
        pool: gpu-a
    topology_key: nvidia.com/gpu.clique
"""

RETURN = r"""
platform:
  description: Platform detected from the nodes' providerIDs.
  returned: success
  type: str
  sample: aws
gpu_architecture:
  description: GPU architecture parsed from C(nvidia.com/gpu.product).
  returned: success
  type: str
  sample: gb200
gpu_product:
  description: The nodes' C(nvidia.com/gpu.product).
  returned: success
  type: str
  sample: NVIDIA-GB200
gpus_per_node:
  description: The smallest allocatable C(nvidia.com/gpu) among the nodes.
  returned: success
  type: int
  sample: 4
catalog_gpus_per_node:
  description: GPUs per node the catalog assumes for this architecture and platform.
  returned: success
  type: int
  sample: 4
total_nodes:
  description: Number of GPU nodes.
  returned: success
  type: int
  sample: 16
ready_nodes:
  description: Number of GPU nodes whose Ready condition is True.
  returned: success
  type: int
  sample: 16
total_gpus:
  description: Sum of allocatable GPUs.
  returned: success
  type: int
  sample: 64
nodes:
  description: Every GPU node with its GPUs, readiness and rack.
  returned: success
  type: list
  elements: dict
  sample: [{name: gpu-node-000, gpus: 4, ready: true, rack: nn-1a000001}]
topology:
  description: The topology label and the racks it defines.
  returned: success
  type: dict
  sample: {key: topology.k8s.aws/network-node-layer-1, racks: [{name: nn-1a000001, nodes: [gpu-node-000], node_count: 1}]}
reason:
  description: Why the cluster could not be summarized (C(HeterogeneousGPU), C(HeterogeneousPlatform), C(NodeDiscoveryError)).
  returned: failure
  type: str
  sample: HeterogeneousGPU
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.cre.certification.plugins.module_utils.kube.client import auth_argument_spec

SPEC = {
    "argument_spec": {
        **auth_argument_spec(),
        "target": {"type": "dict", "default": {}},
        "topology_key": {"type": "str", "no_log": False},
    },
}


def main() -> None:
    module = AnsibleModule(supports_check_mode=True, **SPEC)
    module.fail_json(msg="cre.certification.cluster_info runs on the controller as an action plugin")


if __name__ == "__main__":
    main()
