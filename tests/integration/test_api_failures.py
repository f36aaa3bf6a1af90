"""API failures on a live cluster: a missing CRD, a ServiceAccount without rights, a throttling or unavailable
API server (a proxy of the real one answers 503/429 first), and the apiserver or etcd restarting mid-run.

One 2-node cluster for the module, started without the NVCRE CRDs; the test that needs them missing takes them
away and puts them back, so the tests run in any order.
"""
from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import urllib3
import yaml
from kubernetes import client

from ansible_collections.cre.certification.plugins.module_utils.kube.errors import ApiError
from ansible_collections.cre.certification.plugins.module_utils.kube.rest import Kube
from tests.ansible_run import ENV, ROOT, ansible_module, run_until
from tools.sim import cluster

from .conftest import Sim, _name, install_crds, wait_discovery
from .seed import NVCRE, TRAINER, items, nodes, start, stored, workflow

CATEGORY = {"domain": "communication", "variant": "nccl-all-reduce", "options": {"testScale": "intra-node"}}
EVERY_PERMISSION = [
    "get workflows.nvcre.nvidia.com", "list workflows.nvcre.nvidia.com", "watch workflows.nvcre.nvidia.com",
    "update workflows.nvcre.nvidia.com/status",
    "get jobs.nvcre.nvidia.com", "list jobs.nvcre.nvidia.com", "watch jobs.nvcre.nvidia.com",
    "create jobs.nvcre.nvidia.com", "delete jobs.nvcre.nvidia.com", "update jobs.nvcre.nvidia.com/status",
    "get bandwidthmeasurements.nvcre.nvidia.com", "list bandwidthmeasurements.nvcre.nvidia.com",
    "watch bandwidthmeasurements.nvcre.nvidia.com",
    "create bandwidthmeasurements.nvcre.nvidia.com", "update bandwidthmeasurements.nvcre.nvidia.com/status",
    "get goodputmeasurements.nvcre.nvidia.com", "list goodputmeasurements.nvcre.nvidia.com",
    "watch goodputmeasurements.nvcre.nvidia.com",
    "create goodputmeasurements.nvcre.nvidia.com", "update goodputmeasurements.nvcre.nvidia.com/status",
    "list logprofiles.nvcre.nvidia.com cluster-wide", "watch logprofiles.nvcre.nvidia.com cluster-wide",
    "get trainjobs.trainer.kubeflow.org", "list trainjobs.trainer.kubeflow.org", "watch trainjobs.trainer.kubeflow.org",
    "create trainjobs.trainer.kubeflow.org", "delete trainjobs.trainer.kubeflow.org",
    "list pods", "watch pods", "get pods/log", "get configmaps", "list configmaps", "watch configmaps",
    "create configmaps", "update configmaps", "delete configmaps",
    "create events", "list nodes cluster-wide", "watch nodes cluster-wide",
]


@pytest.fixture(scope="module")
def bare() -> Iterator[Sim]:
    name = _name("errors")
    kubeconfig = cluster.up("aws-gb200", 2, name, 4000)
    try:
        yield Sim(name, kubeconfig, cluster.api(kubeconfig))
    finally:
        cluster.down(name, missing_ok=True)


@pytest.fixture(scope="module")
def sim(bare: Sim) -> Sim:
    install_crds(bare.api)
    return bare


def run_args(sim: Sim, ns: str, kubeconfig: Path | None = None, **extra: Any) -> dict[str, Any]:
    return {"name": "nccl-test", "namespace": ns, "kubeconfig": str(kubeconfig or sim.kubeconfig), "timeout": 240,
            "poll_interval": 0.5, **extra}


NVCRE_KINDS = "Workflow, Job, BandwidthMeasurement, GoodputMeasurement, LogProfile"
INSTALL_CRDS = "install the NVCRE CRDs (role cre.certification.crds)"


@pytest.fixture
def without_crds(bare: Sim) -> Iterator[Sim]:
    """The cluster without the NVCRE CRDs (gone, not just being deleted), then with them again."""
    ext = client.ApiextensionsV1Api(bare.api)
    ours = [c for c in ext.list_custom_resource_definition().items if c.spec.group == NVCRE[0]]
    for crd in ours:
        ext.delete_custom_resource_definition(crd.metadata.name)
    deadline = time.monotonic() + 60
    while any(c.spec.group == NVCRE[0] for c in ext.list_custom_resource_definition().items):
        assert time.monotonic() < deadline, "the NVCRE CRDs were not deleted"
        time.sleep(0.2)
    wait_discovery(bare.api, [(f"{c.spec.group}/{v.name}", c.spec.names.kind) for c in ours for v in c.spec.versions
                              if v.served], False)
    try:
        yield bare
    finally:
        install_crds(bare.api)


def test_missing_crds_are_one_line_naming_them_and_the_role(without_crds: Sim) -> None:
    bare = without_crds
    kubeconfig = str(bare.kubeconfig)
    for module, args, line in [
        ("workflow_run", run_args(bare, "default"),
         f"preflight of Workflow default/nccl-test: the server does not serve {NVCRE_KINDS} "
         f"(nvcre.nvidia.com/v1alpha1); {INSTALL_CRDS}, then rerun; nothing was written"),
        ("certification_run", {"kubeconfig": kubeconfig, "name": "gb", "namespace": "default", "categories": [CATEGORY]},
         f"preflight of Certification default/gb: the server does not serve {NVCRE_KINDS}, Certification "
         f"(nvcre.nvidia.com/v1alpha1); {INSTALL_CRDS}, then rerun; nothing was written"),
        ("certification_results", {"kubeconfig": kubeconfig, "workflow": "wf", "namespace": "default"},
         f"reading Workflow default/wf: the server does not serve Workflow (nvcre.nvidia.com/v1alpha1); "
         f"{INSTALL_CRDS} and rerun"),
    ]:
        rc, result = ansible_module(module, args)
        assert (rc, result["msg"]) == (2, line), module


# ---------------------------------------------------------------- a ServiceAccount without rights


def service_account_kubeconfig(sim: Sim, ns: str, account: str, path: Path) -> Path:
    """A kubeconfig for `ns/account`, its token from the TokenRequest API."""
    core = client.CoreV1Api(sim.api)
    core.create_namespaced_service_account(ns, {"metadata": {"name": account}})
    token = core.create_namespaced_service_account_token(account, ns, {"spec": {"expirationSeconds": 3600}})
    config = yaml.safe_load(sim.kubeconfig.read_text())
    config["users"] = [{"name": account, "user": {"token": token.status.token}}]
    config["contexts"][0]["context"]["user"] = account
    path.write_text(yaml.safe_dump(config))
    return path


def world(sim: Sim, ns: str) -> dict[str, Any]:
    """What a run could have written in `ns`."""
    core = client.CoreV1Api(sim.api)
    return {"jobs": items(sim, ns, NVCRE, "jobs"), "trainjobs": items(sim, ns, TRAINER, "trainjobs"),
            # kube-root-ca.crt is the cluster's own, published into a new namespace whenever its controller gets to it
            "configmaps": sorted(c.metadata.name for c in core.list_namespaced_config_map(ns).items
                                 if c.metadata.name != "kube-root-ca.crt"),
            "events": [e.reason for e in core.list_namespaced_event(ns).items],
            "status": stored(sim, ns).get("status")}


def test_no_rights_preflight_lists_everything_missing_and_writes_nothing(sim: Sim, tmp_path: Path) -> None:
    ns = start(sim, workflow(nodes(0, 1)))
    kubeconfig = service_account_kubeconfig(sim, ns, "nobody", tmp_path / "kubeconfig")
    before = world(sim, ns)
    rc, result = ansible_module("workflow_run", run_args(sim, ns, kubeconfig))
    assert rc != 0
    forbidden = [p if p.endswith("cluster-wide") else f"{p} in namespace {ns}" for p in EVERY_PERMISSION]
    assert result["msg"] == (f"preflight of Workflow {ns}/nccl-test: forbidden: {', '.join(forbidden)}; grant the "
                             "permissions (see docs/rbac.md), then rerun; nothing was written")
    rc, checked = ansible_module("workflow_run", run_args(sim, ns, kubeconfig), "--check")
    assert rc != 0 and checked["msg"] == result["msg"]
    assert world(sim, ns) == before and before["status"] is None

    # Granted a part, the line lists only the rest.
    rbac = client.RbacAuthorizationV1Api(sim.api)
    rbac.create_namespaced_role(ns, {"metadata": {"name": "read-workflows"}, "rules": [
        {"apiGroups": ["nvcre.nvidia.com"], "resources": ["workflows"], "verbs": ["get", "list"]},
        {"apiGroups": [""], "resources": ["configmaps", "events"], "verbs": ["*"]}]})
    rbac.create_namespaced_role_binding(ns, {
        "metadata": {"name": "read-workflows"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "read-workflows"},
        "subjects": [{"kind": "ServiceAccount", "name": "nobody", "namespace": ns}]})
    granted = ("get workflows", "list workflows", "get configmaps", "list configmaps", "watch configmaps",
               "create configmaps", "update configmaps", "delete configmaps", "create events")
    rest = [p for p in forbidden if not p.startswith(granted)]
    deadline = time.monotonic() + 60  # RBAC reaches the authorizer's cache within a moment
    while True:
        rc, result = ansible_module("workflow_run", run_args(sim, ns, kubeconfig))
        if "get workflows" not in result["msg"] or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert result["msg"] == (f"preflight of Workflow {ns}/nccl-test: forbidden: {', '.join(rest)}; grant the "
                             "permissions (see docs/rbac.md), then rerun; nothing was written")
    assert world(sim, ns) == before


def test_a_status_too_large_for_etcd_is_one_line_at_once_and_nothing_changes(sim: Sim) -> None:
    """A Workflow's status holds every group: 24,000 of them are over etcd's 1.5 MiB. The apiserver answers 500,
    which is retried for minutes elsewhere; this one is the same every time, so it is not."""
    ns = start(sim, workflow(nodes(0, 1)))
    live = stored(sim, ns)
    groups = [{"name": f"nccl-test-group-{i}", "nodes": [f"gpu-node-{2 * i:05d}", f"gpu-node-{2 * i + 1:05d}"]}
              for i in range(24_000)]
    big = {**live, "status": {"orchestration": {"totalNodes": 48_000, "nodesPerJob": 2, "totalGroups": 24_000,
                                                "groups": groups}}}
    began = time.monotonic()
    with pytest.raises(ApiError) as refused:
        Kube(sim.api).replace(big, sub="status")
    assert refused.value.attempts == 1 and time.monotonic() - began < 10
    assert refused.value.line() == (
        f"updating the status of Workflow {ns}/nccl-test: the cluster cannot store it, it is too large (etcdserver: "
        "request is too large); a Workflow keeps every group in its status: put more nodes in each group "
        "(spec.jobTemplate.spec.workload.trainJob.trainer.numNodes) or split the nodes over several Workflows, then "
        "rerun")
    assert stored(sim, ns) == live


def test_a_forbidden_read_names_the_permission_and_the_identity(sim: Sim, tmp_path: Path) -> None:
    ns = start(sim, workflow(nodes(0, 1)))
    kubeconfig = service_account_kubeconfig(sim, ns, "reader", tmp_path / "kubeconfig")
    rc, result = ansible_module("certification_results", {"kubeconfig": str(kubeconfig), "workflow": "nccl-test",
                                                          "namespace": ns})
    assert rc != 0
    assert result["msg"] == (
        f"reading Workflow {ns}/nccl-test: forbidden: get workflows.nvcre.nvidia.com in namespace {ns} "
        f'(workflows.nvcre.nvidia.com "nccl-test" is forbidden: User "system:serviceaccount:{ns}:reader" cannot get '
        f'resource "workflows" in API group "nvcre.nvidia.com" in the namespace "{ns}"); grant it (see docs/rbac.md)')
    rc, result = ansible_module("cluster_info", {"kubeconfig": str(kubeconfig)})
    assert rc != 0
    assert result["msg"] == (
        'listing Nodes: forbidden: list nodes cluster-wide (nodes is forbidden: User '
        f'"system:serviceaccount:{ns}:reader" cannot list resource "nodes" in API group "" at the cluster scope); '
        "grant it (see docs/rbac.md)")


# ---------------------------------------------------------------- throttling and unavailability


class Flaky(ThreadingHTTPServer):
    """A plain-HTTP proxy of the real apiserver that answers the first `fail` requests itself with `status`
    and a Retry-After, then forwards the rest with the admin's client certificate."""

    daemon_threads = True

    def __init__(self, sim: Sim, fail: int, status: int, retry_after: str) -> None:
        config = yaml.safe_load(sim.kubeconfig.read_text())
        self.upstream = config["clusters"][0]["cluster"]["server"]
        user = config["users"][0]["user"]
        self.pool = urllib3.PoolManager(maxsize=16, cert_file=user["client-certificate"], key_file=user["client-key"],
                                        ca_certs=config["clusters"][0]["cluster"]["certificate-authority"])
        self.fail, self.status, self.retry_after = fail, status, retry_after
        self.refused: list[float] = []  # when each refused request came
        self.forwarded = 0
        self.lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), Handler)

    def kubeconfig(self, path: Path) -> Path:
        path.write_text(yaml.safe_dump({
            "apiVersion": "v1", "kind": "Config", "current-context": "flaky",
            "clusters": [{"name": "flaky", "cluster": {"server": f"http://127.0.0.1:{self.server_address[1]}"}}],
            "users": [{"name": "flaky", "user": {"token": "forwarded-with-a-client-certificate"}}],
            "contexts": [{"name": "flaky", "context": {"cluster": "flaky", "user": "flaky"}}]}))
        return path


class Handler(BaseHTTPRequestHandler):
    server: Flaky

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def handle_one(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        with self.server.lock:
            refuse = len(self.server.refused) < self.server.fail
            if refuse:
                self.server.refused.append(time.monotonic())
            else:
                self.server.forwarded += 1
        if refuse:
            payload = json.dumps({"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": self.server.status,
                                  "message": "the server is currently unable to handle the request"}).encode()
            self.send_response(self.server.status)
            self.send_header("Retry-After", self.server.retry_after)
        else:
            headers = {k: v for k, v in self.headers.items() if k.lower() in ("accept", "content-type")}
            answer = self.server.pool.request(self.command, self.server.upstream + self.path, body=body or None,
                                              headers=headers, preload_content=True)
            payload = answer.data
            self.send_response(answer.status)
            self.send_header("Content-Type", answer.headers.get("Content-Type", "application/json"))
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = handle_one


@pytest.fixture
def flaky(request: pytest.FixtureRequest, sim: Sim) -> Iterator[Flaky]:
    fail, status = request.param
    server = Flaky(sim, fail, status, "1")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("flaky", [(3, 503)], indirect=True)
def test_503_with_retry_after_is_retried(flaky: Flaky, sim: Sim, tmp_path: Path) -> None:
    rc, result = ansible_module("cluster_info", {"kubeconfig": str(flaky.kubeconfig(tmp_path / "kubeconfig"))})
    assert rc == 0, result
    assert result["total_nodes"] == 2 and result["gpu_product"] == "NVIDIA-GB200"
    assert len(flaky.refused) == 3 and flaky.forwarded >= 1
    gaps = [b - a for a, b in zip(flaky.refused, flaky.refused[1:])]
    assert all(gap >= 0.95 for gap in gaps), gaps  # Retry-After: 1 was honoured


@pytest.mark.parametrize("flaky", [(6, 429)], indirect=True)
def test_429_throughout_preflight_and_planning_is_retried(flaky: Flaky, sim: Sim, tmp_path: Path) -> None:
    ns = start(sim, workflow(nodes(0, 1)))
    rc, result = ansible_module("workflow_run", run_args(sim, ns, flaky.kubeconfig(tmp_path / "kubeconfig")),
                                "--check")
    assert rc == 0, result
    assert [j["name"] for j in result["plan"]["jobs"]] == ["nccl-test-job"]
    assert len(flaky.refused) == 6 and flaky.forwarded > 6


def test_insecure_request_warning_is_shown_once_through_ansible(sim: Sim) -> None:
    proc = subprocess.run(
        [str(ROOT / ".venv/bin/ansible"), "localhost", "-m", "cre.certification.cluster_info", "-a",
         json.dumps({"kubeconfig": str(sim.kubeconfig), "validate_certs": False})],
        cwd=ROOT, env={**os.environ, **ENV, "ANSIBLE_NOCOLOR": "1"}, capture_output=True, text=True, timeout=120,
        check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "InsecureRequestWarning" not in proc.stderr and "warnings.warn(" not in proc.stderr
    task = json.loads(proc.stdout)["plays"][0]["tasks"][0]["hosts"]["localhost"]
    assert task["warnings"] == ["InsecureRequestWarning: Unverified HTTPS request is being made to host "
                                "'127.0.0.1'. Adding certificate verification is strongly advised."]


# ---------------------------------------------------------------- restarts mid-run


@pytest.mark.parametrize("component", ["apiserver", "etcd"])
def test_run_survives_a_restart_while_groups_run(sim: Sim, component: str) -> None:
    ns = start(sim, workflow(nodes(0, 1), iterations=2))
    outcome: dict[str, Any] = {}
    runner = threading.Thread(target=lambda: outcome.update(
        zip(("rc", "result"), ansible_module("workflow_run", run_args(sim, ns, timeout=300), timeout=360))))
    runner.start()
    custom = client.CustomObjectsApi(sim.api)
    deadline = time.monotonic() + 120
    while not custom.list_namespaced_custom_object(*TRAINER, ns, "trainjobs")["items"]:
        assert time.monotonic() < deadline and runner.is_alive(), outcome
        time.sleep(0.2)
    cluster.restart(sim.name, component, down_seconds=5)
    runner.join(timeout=400)
    assert outcome.get("rc") == 0, outcome
    result = outcome["result"]
    assert result["phase"] == "Succeeded"
    assert result["condition"] == {"type": "Succeeded", "reason": "JobCompleted",
                                   "message": "All 2 iterations completed successfully"}
    assert result["succeeded_nodes"] == nodes(0, 1) and result["failed_nodes"] == []


# ---------------------------------------------------------------- secrets


def test_the_token_appears_nowhere(sim: Sim, tmp_path: Path) -> None:
    """A run with a bearer token as `api_key`, at -vvv: the token is in no output line, event, status or
    ConfigMap."""
    ns = start(sim, workflow(nodes(0, 1)))
    core = client.CoreV1Api(sim.api)
    core.create_namespaced_service_account(ns, {"metadata": {"name": "runner"}})
    client.RbacAuthorizationV1Api(sim.api).create_cluster_role_binding({
        "metadata": {"name": f"{ns}-runner"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
        "subjects": [{"kind": "ServiceAccount", "name": "runner", "namespace": ns}]})
    token = core.create_namespaced_service_account_token("runner", ns, {"spec": {}}).status.token
    cluster_config = yaml.safe_load(sim.kubeconfig.read_text())["clusters"][0]["cluster"]
    try:
        lines = run_until("workflow_run", {
            "name": "nccl-test", "namespace": ns, "host": cluster_config["server"], "api_key": token,
            "ca_cert": cluster_config["certificate-authority"], "timeout": 120, "poll_interval": 0.5}, None)
    finally:
        client.RbacAuthorizationV1Api(sim.api).delete_cluster_role_binding(f"{ns}-runner")
    assert any("-> Succeeded (JobCompleted)" in line for line in lines), lines[-20:]
    written = json.dumps([stored(sim, ns), client.ApiClient().sanitize_for_serialization(
        [core.list_namespaced_event(ns), core.list_namespaced_config_map(ns)])])
    for secret in (token, token[-24:]):
        assert not [line for line in lines if secret in line]
        assert secret not in written
