#!/usr/bin/python
# Copyright: (c) 2026, cre.certification developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Documentation stub: fleet_report runs on the controller as an action plugin."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: fleet_report
short_description: One report over every cluster of a fleet (JSON, Markdown, HTML)
version_added: 0.1.0
description:
  - Reads the per-host folders under each O(report_dir) (the C(cre_report_dir) of C(playbooks/certify.yml)). A
    folder holding C(report.json) (the cluster's C(CertReport)) or C(status.json) (what the play recorded, when
    the host ran, whether it hit its timeout, or the error that stopped it) is one inventory host.
  - Writes C(fleet.json), C(fleet.md) and C(fleet.html) into O(dest) with a row per host (verdict, categories,
    failed nodes with reasons, duration, or the error that stopped it, classified as C(unreachable),
    C(forbidden), C(unauthorized), C(timed out) or C(failed)) and, per cluster, its node x category matrix and
    its group bandwidth by rack/clique (a heat map in the HTML). The HTML is self-contained (no network).
  - Several report dirs (job slices that wrote to separate dirs) merge into one report; a host found in more
    than one counts once, from the run that finished last.
  - A host whose run stopped on an error shows that error, never a report an earlier run left in its folder.
  - Runs on the controller and reads only local files; no cluster is contacted. Accepts kubernetes.core's auth
    options (O(kubeconfig), O(context), ...) and ignores them, so that one C(module_defaults) block for the
    action group C(group/cre.certification.certification) serves every module of the collection.
author:
  - cre.certification developers (@cre-certification)
extends_documentation_fragment:
  - cre.certification.attributes
  - kubernetes.core.k8s_auth_options
options:
  report_dir:
    description:
      - The directories holding one folder per inventory host, in order (on a tie, the later one wins).
    type: list
    elements: path
    required: true
  hosts:
    description:
      - Hosts that must appear; one with no folder gets a row with the error C(no report).
    type: list
    elements: str
    default: []
  dest:
    description:
      - Directory for the fleet files; the first O(report_dir) when not set.
    type: path
attributes:
  check_mode:
    support: full
    details: Reports whether the files would change and writes nothing.
  diff_mode:
    support: none
  idempotent:
    support: full
"""

EXAMPLES = r"""
- name: Merge the reports of two job slices into one fleet report
  cre.certification.fleet_report:
    report_dir:
      - /runner/artifacts/slice-1/cre-reports
      - /runner/artifacts/slice-2/cre-reports
    dest: fleet-reports
  register: fleet

- name: Show each cluster's verdict
  ansible.builtin.debug:
    msg: "{{ fleet.summary }}"
"""

RETURN = r"""
result:
  description: The fleet's verdict, the worst of its hosts (C(FAILED) when a host failed or stopped on an error).
  returned: success
  type: str
  sample: FAILED
fleet:
  description: The content of C(fleet.json).
  returned: success
  type: dict
  contains:
    title:
      description: C(Fleet Certification Report).
      type: str
    result:
      description: As RV(result).
      type: str
    hosts:
      description: Number of hosts.
      type: int
    counts:
      description: Hosts per verdict.
      type: dict
    rows:
      description:
        - One per host, sorted by name - C(host), C(verdict) (C(PASSED), C(FAILED), C(RUNNING), C(INCOMPLETE) or
          C(ERROR)), C(name), C(platform), C(gpu), C(totalNodes), C(categories) (C(category), C(status),
          C(failureReason)), C(categoriesPassed), C(categoriesTotal), C(failedNodes) (C(name), C(reason),
          C(message)), C(duration), C(error) (C(kind), C(task), C(message), C(hint) - what to do; null when none), C(folder).
      type: list
      elements: dict
    burnIn:
      description:
        - The burn-in fleet rule across the clusters, null when no host's report has a burn-in - C(groups) per GPU
          product and dtype (C(product), C(dtype), C(median) over every GPU's median, C(gpus), C(nodes),
          C(clusters)) and C(slow), the GPUs below 0.92x and the nodes below 0.95x that median, as warnings
          (C(host), C(category), C(node), C(index) - null for a node, C(product), C(dtype), C(median), C(ratio),
          C(message), C(text)).
      type: dict
    configuration:
      description:
        - Node drift across the clusters, null when no host's report has a node-drift category - C(nodes) (with a
          configuration finding, fail or warn, each host's count its row's C(configNodes)), C(clusters) and C(drift),
          per GPU product the fields whose values differ across the clusters' drift tables (C(product),
          C(component), C(field), C(majority), C(of), C(clusters), C(values) - C(value), C(nodes), C(majority),
          C(hosts) with C(host) and C(nodes)).
      type: dict
  sample: {title: Fleet Certification Report, result: PASSED, hosts: 1, counts: {PASSED: 1}, rows: []}
summary:
  description: One line per host naming its verdict (or its error), then the fleet's.
  returned: success
  type: list
  elements: str
  sample: ["east: PASSED (1/1 categories passed, failed nodes: none, 2m3s)", "Fleet: PASSED (1 clusters)"]
files:
  description: The fleet files under O(dest) (written, or already up to date).
  returned: success
  type: list
  elements: str
  sample: [cre-reports/fleet.json, cre-reports/fleet.md, cre-reports/fleet.html]
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.cre.certification.plugins.module_utils.kube.client import auth_argument_spec

SPEC = {
    "argument_spec": {
        **auth_argument_spec(),  # accepted for the action group's module_defaults, ignored
        "report_dir": {"type": "list", "elements": "path", "required": True},
        "hosts": {"type": "list", "elements": "str", "default": []},
        "dest": {"type": "path"},
    },
}


def main() -> None:
    module = AnsibleModule(supports_check_mode=True, **SPEC)
    module.fail_json(msg="cre.certification.fleet_report runs on the controller as an action plugin")


if __name__ == "__main__":
    main()
