"""Least privilege: a whole certify run under exactly the ServiceAccount of rbac/ (CRDs and LogProfiles installed
by an admin beforehand), the resident-controller check without Lease rights, and roles/crds beside CRDs that
another manager owns."""
from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from kubernetes import client, utils

from tests.ansible_run import ROOT

from .conftest import Sim, own_sim

NAMESPACE = "nvcre"
SA = "cre-certification"
CATEGORY = {"domain": "communication", "variant": "nccl-all-reduce", "options": {"testScale": "intra-node"}}


@pytest.fixture(scope="module")
def cluster() -> Iterator[Sim]:
    """A small cluster where an admin installed the CRDs, the LogProfiles (own_sim does) and rbac/."""
    with own_sim("rbac", "aws-h100", 2, 300) as sim:
        for path in sorted((ROOT / "rbac").glob("*.yaml")):
            utils.create_from_yaml(sim.api, str(path))
        yield sim


def token_kubeconfig(sim: Sim, account: str, dest: Path) -> Path:
    """A kubeconfig that authenticates as the ServiceAccount `account` of nvcre (a TokenRequest token)."""
    token = client.CoreV1Api(sim.api).create_namespaced_service_account_token(
        account, NAMESPACE, {"spec": {"expirationSeconds": 3600}}).status.token
    admin = yaml.safe_load(sim.kubeconfig.read_text())
    server = admin["clusters"][0]["cluster"]
    dest.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": account,
        "clusters": [{"name": "sim", "cluster": server}],
        "users": [{"name": account, "user": {"token": token}}],
        "contexts": [{"name": account, "context": {"cluster": "sim", "user": account}}]}))
    return dest


def certify(kubeconfig: Path, work: Path, name: str, **extra: object) -> subprocess.CompletedProcess:
    host = {"k8s_kubeconfig": str(kubeconfig), "certify_certification_name": name, "certify_namespace": NAMESPACE,
            "certify_create_namespace": False, "crds_install": False, "certify_categories": [CATEGORY],
            "certify_poll_interval": 0.5, "certify_timeout": 600, **extra}
    inventory = {"clusters": {"vars": {"ansible_connection": "local",
                                       "ansible_python_interpreter": str(ROOT / ".venv/bin/python")},
                              "hosts": {"lab": host}}}
    (work / "inventory.yml").write_text(yaml.safe_dump(inventory))
    return subprocess.run([str(ROOT / ".venv/bin/ansible-playbook"), "-i", "inventory.yml",
                           str(ROOT / "playbooks/certify.yml")], cwd=work, capture_output=True, text=True,
                          timeout=900, check=False,
                          env={**os.environ, "ANSIBLE_NOCOLOR": "1", "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg")})


def test_a_certify_run_passes_under_the_shipped_service_account(cluster: Sim, tmp_path: Path) -> None:
    # A PriorityClass named: the preflight's get on it is one of the rights rbac/ ships.
    client.SchedulingV1Api(cluster.api).create_priority_class({"metadata": {"name": "cre-rbac"}, "value": 10})
    proc = certify(token_kubeconfig(cluster, SA, tmp_path / "sa.yaml"), tmp_path, "least-privilege",
                   certify_priority_class_name="cre-rbac")
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    report = json.loads((tmp_path / "cre-reports" / "lab" / "report.json").read_text())
    assert report["result"] == "PASSED"
    assert "resident NVCRE controller" not in proc.stdout + proc.stderr  # the Lease check had its rights


def test_without_lease_rights_the_resident_check_warns_once_and_the_run_goes_on(cluster: Sim, tmp_path: Path) -> None:
    rbac = client.RbacAuthorizationV1Api(cluster.api)
    role = yaml.safe_load((ROOT / "rbac" / "40-role-run.yaml").read_text())
    role["metadata"]["name"] = "no-leases"
    role["rules"] = [rule for rule in role["rules"] if "leases" not in rule["resources"]]
    client.CoreV1Api(cluster.api).create_namespaced_service_account(NAMESPACE, {"metadata": {"name": "no-leases"}})
    rbac.create_namespaced_role(NAMESPACE, role)
    subject = [{"kind": "ServiceAccount", "name": "no-leases", "namespace": NAMESPACE}]
    rbac.create_namespaced_role_binding(NAMESPACE, {"metadata": {"name": "no-leases"}, "subjects": subject,
                                                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io",
                                                                "kind": "Role", "name": "no-leases"}})
    rbac.create_cluster_role_binding({"metadata": {"name": "no-leases-read"}, "subjects": subject,
                                      "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                                  "name": "cre-certification-read"}})
    proc = certify(token_kubeconfig(cluster, "no-leases", tmp_path / "sa.yaml"), tmp_path, "no-leases")
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    output = " ".join((proc.stdout + proc.stderr).split())  # the warning is wrapped to the terminal's width
    assert output.count("could not check for a resident NVCRE controller in namespace nvcre: listing Leases "
                        "there is forbidden") == 1


def test_crds_of_another_manager_are_left_alone_unless_taken_over(cluster: Sim) -> None:
    ext = client.ApiextensionsV1Api(cluster.api)
    name = "workflows.nvcre.nvidia.com"
    ext.patch_custom_resource_definition(name, {"metadata": {
        "labels": {"app.kubernetes.io/managed-by": "Helm"},
        "annotations": {"meta.helm.sh/release-name": "nvcre", "meta.helm.sh/release-namespace": "nvcre"}}})
    before = ext.read_custom_resource_definition(name).metadata.resource_version
    refused = crds_role(cluster)
    assert refused.returncode != 0
    assert ("Installing the nvcre.nvidia.com CRDs: workflows.nvcre.nvidia.com (Helm release nvcre/nvcre) is managed "
            "by another installer (a resident NVCRE), so they are left alone. Set crds_install: false to run against "
            "them as they are, or crds_take_over: true to replace them with this collection's.") \
        in " ".join(refused.stdout.split())
    assert ext.read_custom_resource_definition(name).metadata.resource_version == before
    assert crds_role(cluster, crds_install=False).returncode == 0
    taken = crds_role(cluster, crds_take_over=True)
    assert taken.returncode == 0, taken.stdout[-3000:]
    applied = taken.stdout.split("Apply the CRDs with server-side apply", 1)[1].split("TASK [", 1)[0]
    assert "skipping" not in applied and ("changed: [localhost]" in applied or "ok: [localhost]" in applied), applied
    ext.patch_custom_resource_definition(name, {"metadata": {  # hand it back: the next test applies again
        "labels": {"app.kubernetes.io/managed-by": None},
        "annotations": {"meta.helm.sh/release-name": None, "meta.helm.sh/release-namespace": None}}})


def test_check_mode_does_not_wait_for_crds_it_did_not_apply(cluster: Sim) -> None:
    ext = client.ApiextensionsV1Api(cluster.api)
    ext.delete_custom_resource_definition("goodputmeasurements.nvcre.nvidia.com")
    proc = crds_role(cluster, "--check", crds_wait_timeout=5)  # a wait for the unapplied CRD would fail after 5 s
    assert proc.returncode == 0, proc.stdout[-3000:]
    applied = proc.stdout.split("Apply the CRDs with server-side apply", 1)[1].split("TASK [", 1)[0]
    assert "changed: [localhost]" in applied, applied  # it would create the missing CRD
    served = {crd.metadata.name for crd in ext.list_custom_resource_definition().items}
    assert "goodputmeasurements.nvcre.nvidia.com" not in served


def crds_role(sim: Sim, *flags: str, **extra: object) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(ROOT / ".venv/bin/ansible-playbook"), str(ROOT / "tests/integration/playbooks/crds.yml"), *flags,
         "-e", json.dumps({"kubeconfig": str(sim.kubeconfig), **extra})],
        cwd=ROOT, env={**os.environ, "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg"), "ANSIBLE_NOCOLOR": "1"},
        capture_output=True, text=True, timeout=600, check=False)
