"""playbooks/certify.yml as AWX runs a job of awx/job-template.yml: through ansible-runner, in a private data dir
holding the survey answers (env/extravars), the multi-context kubeconfig credential of awx/credential-type.yml as
AWX injects it (a private file under env/, K8S_AUTH_KUBECONFIG in env/envvars), the project's playbooks and an
inventory of three clusters: two simulated ones through one kubeconfig (k8s_context per host) and one whose API
server does not answer. Then job slicing: two jobs over --limit subsets, merged by the fleet report step."""
from __future__ import annotations

import base64
import gzip
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ansible_runner
import pytest
import yaml
from kubernetes import client

from tests.ansible_run import ROOT
from tests.awx_credentials import BEARER_TOKEN, KUBECONFIG, inject

from .conftest import Sim, closed_port

pytestmark = pytest.mark.clusters(("onprem-b300", 4), ("onprem-b300", 4, 1))

SURVEY = json.loads((ROOT / "awx" / "survey.json").read_text())
CATEGORY = "communication/nccl-all-reduce"
LIVE = ("east", "west")
# What the execution environment brings: its ansible-playbook first on PATH, and its collections (this checkout,
# linked by make setup, and kubernetes.core).
EXECUTION_ENVIRONMENT = {"PATH": f"{ROOT / '.venv/bin'}:{os.environ['PATH']}", "ANSIBLE_NOCOLOR": "1",
                         "ANSIBLE_COLLECTIONS_PATH": f"{ROOT / '.collections'}:{ROOT / '.venv/lib/python3.11/site-packages'}"}


@pytest.fixture(scope="module")
def clusters(pooled: Callable[..., Sim]) -> dict[str, Sim]:
    return {name: pooled("onprem-b300", 4, instance, pod_ms={"nvcre": 300}) for instance, name in enumerate(LIVE)}


def embedded(path: str) -> str:
    return base64.b64encode(Path(path).read_bytes()).decode()


def fleet_kubeconfig(clusters: dict[str, Sim]) -> str:
    """One kubeconfig with a context per cluster, certificates embedded (the job's container has no other files);
    the dead context reuses east's credentials against a closed port."""
    named: dict[str, dict[str, Any]] = {}
    for name, sim in clusters.items():
        config = yaml.safe_load(sim.kubeconfig.read_text())
        cluster, user = config["clusters"][0]["cluster"], config["users"][0]["user"]
        named[name] = {"cluster": {"server": cluster["server"],
                                   "certificate-authority-data": embedded(cluster["certificate-authority"])},
                       "user": {"client-certificate-data": embedded(user["client-certificate"]),
                                "client-key-data": embedded(user["client-key"])}}
    named["dead"] = {"cluster": {**named["east"]["cluster"], "server": f"https://127.0.0.1:{closed_port()}"},
                     "user": named["east"]["user"]}
    return yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "gpu-east",
        "clusters": [{"name": f"gpu-{n}", "cluster": c["cluster"]} for n, c in named.items()],
        "users": [{"name": f"gpu-{n}", "user": c["user"]} for n, c in named.items()],
        "contexts": [{"name": f"gpu-{n}", "context": {"cluster": f"gpu-{n}", "user": f"gpu-{n}"}} for n in named]})


def survey_answers(name: str) -> dict[str, Any]:
    """The extra vars AWX sends for the survey: every default, a name and one category (a multiselect is a list)."""
    answers = {item["variable"]: item["default"] for item in SURVEY["spec"]}
    return {**answers, "certify_certification_name": name, "certify_categories": [CATEGORY],
            "certify_namespace": "nvcre", "certify_poll_interval": 0.5, "certify_timeout": 600}


def private_data_dir(root: Path, kubeconfig: str, extravars: dict[str, Any]) -> Path:
    """What AWX lays out for a job: project checkout, inventory, extra vars and the credential's environment."""
    root.mkdir(parents=True)
    shutil.copytree(ROOT / "playbooks", root / "project" / "playbooks")
    env = inject(KUBECONFIG, {"kubeconfig": kubeconfig}, root)
    (root / "env" / "envvars").write_text(json.dumps({**env, **EXECUTION_ENVIRONMENT}))
    (root / "env" / "extravars").write_text(json.dumps(extravars))
    hosts = {name: {"k8s_context": f"gpu-{name}"} for name in (*LIVE, "dead")}
    (root / "inventory").mkdir()
    (root / "inventory" / "hosts.yml").write_text(yaml.safe_dump({"clusters": {
        "vars": {"ansible_connection": "local", "ansible_python_interpreter": str(ROOT / ".venv/bin/python")},
        "hosts": hosts}}))
    return root


def run(pdd: Path, playbook: str, ident: str, **kwargs: Any) -> ansible_runner.Runner:
    return ansible_runner.run(private_data_dir=str(pdd), playbook=playbook, ident=ident, quiet=True, timeout=900,
                              **kwargs)


def artifact_data(runner: ansible_runner.Runner) -> dict[str, Any]:
    """What the job's set_stats published, as AWX reads it (the playbook_on_stats event's artifact_data)."""
    (stats,) = [e for e in runner.events if e["event"] == "playbook_on_stats"]
    return stats["event_data"].get("artifact_data", {})


def failures(runner: ansible_runner.Runner, host: str) -> list[str]:
    return [e["event_data"]["res"].get("msg", "") for e in runner.host_events(host) if e["event"] == "runner_on_failed"]


def fleet_rows(report_dir: Path) -> dict[str, dict[str, Any]]:
    return {row["host"]: row for row in json.loads((report_dir / "fleet.json").read_text())["rows"]}


def assert_dead_reported(row: dict[str, Any]) -> None:
    assert row["verdict"] == "ERROR" and row["error"]["kind"] == "unreachable", row


def test_awx_job_certifies_the_live_clusters_and_reports_the_dead_one(clusters: dict[str, Sim], tmp_path: Path) -> None:
    pdd = private_data_dir(tmp_path / "job", fleet_kubeconfig(clusters), survey_answers("awx-acceptance"))
    runner = run(pdd, "playbooks/certify.yml", "job-1")
    assert runner.status == "failed" and runner.rc != 0, runner.stdout.read()[-4000:]
    assert (pdd / "artifacts" / "job-1" / "job_events").is_dir()
    reports = pdd / "project" / "cre-reports"
    for name in LIVE:
        report = json.loads((reports / name / "report.json").read_text())
        assert report["result"] == "PASSED", report
        assert {n["name"] for n in report["nodeResults"]} == {f"gpu-node-{i:03d}" for i in range(4)}
        # The report survives the job's container: the snapshot in the cluster holds the same report.
        snapshot = client.CoreV1Api(clusters[name].api).read_namespaced_config_map("awx-acceptance-report", "nvcre")
        assert json.loads(gzip.decompress(base64.b64decode(snapshot.binary_data["report.json.gz"]))) == report
    # The dead cluster stopped only itself; the job fails on it with one line naming the connection it could not make.
    assert runner.stats["failures"] == {"dead": 1}
    message = failures(runner, "dead")[-1]
    assert message.startswith("Cluster dead: ") and "Connection refused" in message and "\n" not in message, message
    assert "Traceback" not in runner.stdout.read()
    stats = artifact_data(runner)
    assert set(stats["certify_results"]) == set(LIVE)
    assert {name: stats["results_reports"][name]["result"] for name in LIVE} == dict.fromkeys(LIVE, "PASSED")
    rows = fleet_rows(reports)
    assert {name: rows[name]["verdict"] for name in LIVE} == dict.fromkeys(LIVE, "PASSED")
    assert_dead_reported(rows["dead"])
    assert stats["cre_fleet"]["result"] == "FAILED"
    assert {p.name for p in reports.glob("fleet.*")} == {"fleet.json", "fleet.md", "fleet.html"}


def test_job_slices_merge_into_one_fleet_report(clusters: dict[str, Sim], tmp_path: Path) -> None:
    """AWX's job slicing runs one job per --limit subset, each in its own container; the fleet report step then
    reads each slice's report dir (kept on a shared volume) and writes one fleet report over all of them. The
    slices continue the Certification of the test above when it ran (a finished one is only reported again)."""
    kubeconfig = fleet_kubeconfig(clusters)
    slices = {"slice-1": "east,dead", "slice-2": "west"}
    dirs = []
    for ident, limit in slices.items():
        pdd = private_data_dir(tmp_path / ident, kubeconfig, survey_answers("awx-acceptance"))
        runner = run(pdd, "playbooks/certify.yml", ident, limit=limit)
        assert runner.rc != 0 if "dead" in limit else runner.rc == 0, runner.stdout.read()[-4000:]
        assert set(fleet_rows(pdd / "project" / "cre-reports")) == set(limit.split(","))
        dirs.append(str(pdd / "project" / "cre-reports"))
    merge = private_data_dir(tmp_path / "fleet", kubeconfig, {"cre_report_dir": dirs,
                                                              "cre_fleet_dest": str(tmp_path / "fleet-report")})
    runner = run(merge, "playbooks/fleet_report.yml", "fleet")
    assert runner.rc != 0  # the dead cluster fails the fleet step too
    rows = fleet_rows(tmp_path / "fleet-report")
    assert set(rows) == {*LIVE, "dead"}
    assert {name: rows[name]["verdict"] for name in LIVE} == dict.fromkeys(LIVE, "PASSED")
    assert_dead_reported(rows["dead"])
    assert artifact_data(runner)["cre_fleet"]["result"] == "FAILED"


def test_bearer_token_credential_reaches_the_cluster(clusters: dict[str, Sim], tmp_path: Path) -> None:
    """The bearer-token credential type as AWX injects it (host, a ServiceAccount token, the CA as a file): this
    collection's modules reach the cluster with nothing else (no kubeconfig at all)."""
    sim, core = clusters["east"], client.CoreV1Api(clusters["east"].api)
    core.create_namespaced_service_account("default", {"metadata": {"name": "awx-certifier"}})
    client.RbacAuthorizationV1Api(sim.api).create_cluster_role_binding({
        "metadata": {"name": "awx-certifier"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
        "subjects": [{"kind": "ServiceAccount", "name": "awx-certifier", "namespace": "default"}]})
    token = core.create_namespaced_service_account_token("awx-certifier", "default", {"spec": {}}).status.token
    cluster = yaml.safe_load(sim.kubeconfig.read_text())["clusters"][0]["cluster"]
    env = inject(BEARER_TOKEN, {"host": cluster["server"], "bearer_token": token, "verify_ssl": True,
                                "ssl_ca_cert": Path(cluster["certificate-authority"]).read_text()}, tmp_path)
    (tmp_path / "env" / "envvars").write_text(json.dumps({**env, **EXECUTION_ENVIRONMENT,
                                                          "KUBECONFIG": str(tmp_path / "none")}))
    runner = ansible_runner.run(private_data_dir=str(tmp_path), host_pattern="localhost", ident="adhoc", quiet=True,
                                module="cre.certification.cluster_info", timeout=120)
    assert runner.rc == 0, runner.stdout.read()[-3000:]
    (result,) = [e["event_data"]["res"] for e in runner.events if e["event"] == "runner_on_ok"]
    assert [n["name"] for n in result["nodes"]] == [f"gpu-node-{i:03d}" for i in range(4)]
