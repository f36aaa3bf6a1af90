"""The Trainer API the catalog is written for is the one the local cluster serves (issue 12).

NVCRE v0.12 installs Kubeflow Trainer v2.2.1 (its Helm chart brings JobSet 0.11.0). Trainer v2.2 took
`numProcPerNode` out of the torch policy (the TrainJob's `trainer.numProcPerNode` carries it) and replaced
`podTemplateOverrides` with `runtimePatches`. So the simulator must serve the CRDs of the controllers it
runs, and every catalog dependency, for every platform and architecture an entry distinguishes, must be
accepted by those CRDs and the Trainer webhooks, with strict field validation as the driver creates them.
"""
from __future__ import annotations

import hashlib
import json
import re
import subprocess
import time
from pathlib import Path

import pytest
import yaml
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from ansible_collections.cre.certification.plugins.module_utils.engine.catalog import entries as catalog
from ansible_collections.cre.certification.plugins.module_utils.engine.catalog import registry
from ansible_collections.cre.certification.plugins.module_utils.engine.plan import category_build, workload
from ansible_collections.cre.certification.plugins.module_utils.engine.plan.dependencies import is_cluster_scoped, strip_when
from ansible_collections.cre.certification.plugins.module_utils.kube.rest import Kube
from tools.sim import cluster

from .conftest import ROOT, SIM, Sim

pytestmark = pytest.mark.clusters(SIM)

BUILD = (ROOT / "tools/sim/build.sh").read_text()
TRAINER = re.search(r"\bTRAINER=(\S+)", BUILD).group(1)
JOBSET = re.search(r"\bJOBSET=(\S+)", BUILD).group(1)
TRAINER_MODULE, JOBSET_MODULE = "github.com/kubeflow/trainer/v2", "sigs.k8s.io/jobset"
CRD_FILES = {
    "trainjobs.trainer.kubeflow.org":
        (TRAINER_MODULE, TRAINER, "manifests/base/crds/trainer.kubeflow.org_trainjobs.yaml"),
    "trainingruntimes.trainer.kubeflow.org":
        (TRAINER_MODULE, TRAINER, "manifests/base/crds/trainer.kubeflow.org_trainingruntimes.yaml"),
    "clustertrainingruntimes.trainer.kubeflow.org":
        (TRAINER_MODULE, TRAINER, "manifests/base/crds/trainer.kubeflow.org_clustertrainingruntimes.yaml"),
    "jobsets.jobset.x-k8s.io": (JOBSET_MODULE, JOBSET, "config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml"),
}
# Build options besides the defaults: the optional dependencies (checkpoint PVC, pull secrets, hostPath RDMA).
OPTION_SETS = [{}, {"enableCheckpoint": True, "imagePullSecrets": ["regcred"], "rdmaDeviceAccess": "hostPath"}]


def module_dir(module: str, version: str) -> Path:
    out = subprocess.run(["go", "mod", "download", "-json", f"{module}@{version}"], check=True,
                         capture_output=True, text=True, cwd="/")
    return Path(json.loads(out.stdout)["Dir"])


def built_module(binary: Path) -> tuple[str, str]:
    """(module path, version) of the main package a Go binary was built from (its embedded build info)."""
    out = subprocess.run(["go", "version", "-m", str(binary)], check=True, capture_output=True, text=True).stdout
    mod = next(line.split() for line in out.splitlines() if line.strip().startswith("mod\t"))
    return mod[1], mod[2]


def served_schema(kube: client.ApiClient, name: str) -> dict:
    crd = Kube(kube).request("GET", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}")
    (version,) = [v for v in crd["spec"]["versions"] if v["served"]]
    return version["schema"]["openAPIV3Schema"]


def test_sim_serves_the_crds_of_the_trainer_and_jobset_controllers_it_runs(sim: Sim) -> None:
    bin_dir, _assets = cluster.binaries()
    assert built_module(bin_dir / "trainer-controller-manager") == (TRAINER_MODULE, TRAINER)
    assert built_module(bin_dir / "jobset") == (JOBSET_MODULE, JOBSET)
    for name, (module, version, rel) in CRD_FILES.items():
        shipped = yaml.safe_load((module_dir(module, version) / rel).read_text())
        (want,) = [v["schema"]["openAPIV3Schema"] for v in shipped["spec"]["versions"] if v["served"]]
        assert served_schema(sim.api, name) == want, f"{name} is not the CRD of {module}@{version}"
    # The API the catalog relies on: the v2.2 torch policy is empty, TrainJobs take runtimePatches and
    # trainer.numProcPerNode (an integer).
    runtime = served_schema(sim.api, "trainingruntimes.trainer.kubeflow.org")["properties"]["spec"]["properties"]
    assert "properties" not in runtime["mlPolicy"]["properties"]["torch"]
    assert "numProcPerNode" in runtime["mlPolicy"]["properties"]["mpi"]["properties"]
    trainjob = served_schema(sim.api, "trainjobs.trainer.kubeflow.org")["properties"]["spec"]["properties"]
    assert "runtimePatches" in trainjob and "podTemplateOverrides" not in trainjob
    assert trainjob["trainer"]["properties"]["numProcPerNode"]["type"] == "integer"


def _mentioned(spec: dict, key: str) -> set[str]:
    """Every value an override's `when.<key>` clause names."""
    values: set[str] = set()
    for override in spec.get("overrides") or []:
        clause = (override.get("when") or {}).get(key) or {}
        for op in ("equals", "in", "notIn"):
            value = clause.get(op)
            values.update([value] if isinstance(value, str) else value or [])
    return values


def render_everywhere() -> tuple[int, dict[str, dict], dict[str, tuple[str, dict]]]:
    """Build every category as the Certification build does, for every platform and architecture the
    catalog's overrides name (plus every architecture with GPU defaults), with each option set, at the smallest
    valid node count. Returns (builds, unique dependencies by content, unique TrainJob specs with their runtime)."""
    entries = sorted(registry.builtin_registry().items())
    bases = {key: catalog.build_spec(*key, {"gpuArchitecture": "h100"}) for key, _entry in entries}
    platforms = set().union(*(_mentioned(b, "platform") for b in bases.values())) | {"onprem"}
    archs = set(catalog.gpu_defaults_table()["architectures"]).union(
        *(_mentioned(b, "gpuArchitecture") for b in bases.values()))
    builds, dependencies, train_jobs = 0, {}, {}
    for (domain, variant), entry in entries:
        for platform in sorted(platforms):
            for arch in sorted(archs):
                gpus, _mlnx = catalog.gpu_defaults(arch, platform)
                nodes = 1 if entry.per_node else next(n for n in range(1, 65) if entry.valid_nodes(n, gpus, arch))
                for options in OPTION_SETS:
                    category = {"domain": domain, "variant": variant, "options": options}
                    cert = {"metadata": {"name": "api", "uid": "0"}, "spec": {"categories": [category]}}
                    spec = category_build.build_workflow(cert, category, platform=platform, gpu_architecture=arch,
                                                         available_nodes=nodes)["spec"]
                    builds += 1
                    runtime = ""
                    for dep in spec.get("dependencies") or []:
                        obj = strip_when(dep)
                        key = json.dumps(obj, sort_keys=True)
                        dependencies.setdefault(key, obj)
                        if obj["kind"] == "TrainingRuntime":
                            runtime = key
                    train_job = spec["jobTemplate"]["spec"]
                    train_jobs.setdefault(json.dumps([runtime, train_job], sort_keys=True), (runtime, train_job))
    return builds, dependencies, train_jobs


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:10]


def test_every_catalog_dependency_and_trainjob_is_accepted_by_the_served_api(sim: Sim, namespace: str) -> None:
    """Each unique dependency (TrainingRuntimes, ConfigMaps, PVCs, ComputeDomains, ResourceClaimTemplates) is
    created server-side with dryRun and fieldValidation=Strict, the way the driver creates them; each unique
    TrainJob is then dry-run against its runtime, created for real, so Trainer's validating webhook checks it."""
    builds, dependencies, train_jobs = render_everywhere()
    kinds = {obj["kind"] for obj in dependencies.values()}
    assert builds >= 11 * 2 * 9 and {"TrainingRuntime", "ConfigMap", "PersistentVolumeClaim"} <= kinds, (builds, kinds)
    kube = Kube(sim.api)
    refused = []
    for key in dependencies:
        obj = json.loads(key)
        if not is_cluster_scoped(obj):
            obj["metadata"]["namespace"] = namespace
        try:
            kube.create(obj, dry_run=True)
        except ApiException as exc:
            refused.append(f"{obj['kind']} {obj['metadata']['name']}: {exc.status} {exc.body}")
    assert refused == [], f"{len(refused)} of {len(dependencies)} refused:\n" + "\n".join(refused[:10])

    created: dict[str, str] = {}
    for runtime_key, job_spec in train_jobs.values():
        runtime = json.loads(runtime_key)
        name = created.get(runtime_key)
        if name is None:
            name = created[runtime_key] = f"rt-{_digest(runtime_key)}"
            runtime["metadata"].update(name=name, namespace=namespace)
            kube.create(runtime)
        job_spec = json.loads(json.dumps(job_spec))
        job_spec["workload"]["trainJob"]["runtimeRef"]["name"] = name
        job = {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Job",
               "metadata": {"name": f"j-{_digest(json.dumps(job_spec, sort_keys=True))}", "namespace": namespace,
                            "uid": "00000000-0000-0000-0000-000000000000"}, "spec": job_spec}
        train_job = workload.build(job)
        deadline = time.monotonic() + 60
        while True:  # Trainer's webhook reads runtimes from its cache, which lags the create a little
            try:
                kube.create(train_job, dry_run=True)
                break
            except ApiException as exc:
                if "not found" in (exc.body or "") and time.monotonic() < deadline:
                    time.sleep(0.2)
                    continue
                refused.append(f"TrainJob on {name}: {exc.status} {exc.body}")
                break
    assert refused == [], f"{len(refused)} of {len(train_jobs)} TrainJobs refused:\n" + "\n".join(refused[:10])
    # Every catalog runtime was created for real and had a TrainJob validated against it.
    assert set(created) == {k for k, obj in dependencies.items() if obj["kind"] == "TrainingRuntime"}
