"""Pod templates as NVCRE's newest release writes them (issue 43, "Pods"), on Workflows rendered offline as the
modules render them: the catalog's per platform, and WorkloadRuns'."""
from __future__ import annotations

import copy
from typing import Any

import pytest

from ansible_collections.cre.certification.plugins.module_utils.engine.catalog import entries
from ansible_collections.cre.certification.plugins.module_utils.engine.plan import category_build, mocknodes
from ansible_collections.cre.certification.plugins.module_utils.engine.plan.render import render
from ansible_collections.cre.certification.plugins.module_utils.engine.plan.workloadrun_build import build_workflow

Obj = dict[str, Any]

MPI_ENTRIES = ["nccl-all-gather", "nccl-all-reduce", "nccl-alltoall"]
# Every platform × architecture the mock nodes offer.
TARGETS = [(p, a) for p in sorted(mocknodes.PLATFORMS) for a in sorted(mocknodes.ARCHITECTURES)]
# NVCRE's sshdProbeCommand (pkg/platform/runtime.go) and its catalog copy, byte for byte.
PROBE_SCRIPT = (
    "command -v ssh >/dev/null 2>&1 || exec grep -q ':0016 [0-9A-F]*:[0-9A-F]* 0A ' /proc/net/tcp /proc/net/tcp6\n"
    "set -- ssh -n -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null "
    "-o ConnectTimeout=5 127.0.0.1 true\n"
    'command -v timeout >/dev/null 2>&1 && set -- timeout 8 "$@"\n'
    'exec "$@"')
PROBE = {"exec": {"command": ["sh", "-c", PROBE_SCRIPT]}, "initialDelaySeconds": 5, "periodSeconds": 30,
         "timeoutSeconds": 10}
WORKER_SCRIPT = (
    "set -x &&\n"
    "test -x /usr/sbin/sshd || (apt-get update && apt-get install -y --no-install-recommends openssh-server) &&\n"
    "mkdir -p /var/run/sshd  &&\n"
    "chmod 0755 /var/run/sshd  &&\n"
    "mkdir -p /root/.ssh &&\n"
    "chmod 700 /root/.ssh &&\n"
    "cp /tmp/mpi-ssh-raw/* /root/.ssh/ &&\n"
    "chmod 600 /root/.ssh/id_rsa &&\n"
    "chmod 644 /root/.ssh/id_rsa.pub /root/.ssh/authorized_keys &&\n"
    "/usr/sbin/sshd -De")
LAUNCHER_INIT_SCRIPT = (
    "set -x &&\n"
    "cp /tmp/mpi-ssh-raw/* /root/.ssh/ &&\n"
    "chmod 600 /root/.ssh/id_rsa &&\n"
    "chmod 644 /root/.ssh/id_rsa.pub /root/.ssh/authorized_keys")
GKE_ANNOTATIONS = {"networking.gke.io/default-interface", "networking.gke.io/interfaces"}
MPI_RUN = {"binary": "/usr/local/bin/all_reduce_perf_mpi", "args": ["-b", "8"], "mpirunPath": "/usr/local/mpi/bin/mpirun"}
RUN_FRAMEWORKS = {"mpi": MPI_RUN, "torch": {"script": "train.py"}, "exec": {"command": ["nvidia-smi"]}}


def catalog_workflow(variant: str, platform: str, arch: str, domain: str = "communication") -> Obj:
    """The entry's Workflow as `workflow_render` resolves it on that platform's nodes."""
    spec = entries.build_spec(domain, variant, {"gpuArchitecture": arch, "platform": platform, "nodesPerJob": 2})
    workflow = {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Workflow", "metadata": {"name": "w"}, "spec": spec}
    out = render(workflow, mocknodes.mock_nodes(platform, arch, 4))
    assert out.failure is None, out.failure and out.failure.message
    return out.workflow


def workloadrun_workflow(framework: str, platform: str, arch: str, nodes: list[Obj] | None = None) -> Obj:
    run = {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "WorkloadRun",
           "metadata": {"name": "wr", "namespace": "ns", "uid": "uid-1"},
           "spec": {"image": "img:1", "numNodes": 2, "framework": {framework: copy.deepcopy(RUN_FRAMEWORKS[framework])}}}
    nodes = nodes or mocknodes.mock_nodes(platform, arch, 4)
    workflow, _resolved = build_workflow(run, platform=platform, gpu_architecture=arch, nodes=nodes)
    out = render(workflow, nodes)
    assert out.failure is None, out.failure and out.failure.message
    return out.workflow


def replicated_jobs(workflow: Obj) -> dict[str, Obj]:
    (runtime,) = [d for d in workflow["spec"]["dependencies"] if d.get("kind") == "TrainingRuntime"]
    return {rj["name"]: rj for rj in runtime["spec"]["template"]["spec"]["replicatedJobs"]}


def pod_spec(rj: Obj) -> Obj:
    return rj["template"]["spec"]["template"]["spec"]


def container(rj: Obj, name: str = "node", init: bool = False) -> Obj:
    (found,) = [c for c in pod_spec(rj)["initContainers" if init else "containers"] if c["name"] == name]
    return found


@pytest.mark.parametrize(("platform", "arch"), TARGETS)
@pytest.mark.parametrize("variant", MPI_ENTRIES)
def test_every_catalog_sshd_worker_has_the_ssh_session_probe_and_sys_chroot(variant, platform, arch):
    """ADR-093: an exec loopback-ssh readiness probe (30 s / 10 s), IPC_LOCK and SYS_CHROOT, sshd installed only
    when missing; platform patches that replace the worker's args (AWS GB300) keep both."""
    worker = container(replicated_jobs(catalog_workflow(variant, platform, arch))["node"])
    assert worker["readinessProbe"] == PROBE
    assert worker["securityContext"]["capabilities"]["add"] == ["IPC_LOCK", "SYS_CHROOT"]
    if (platform, arch) != ("aws", "gb300"):
        assert worker["args"] == [WORKER_SCRIPT]


@pytest.mark.parametrize(("platform", "arch"), [("aws", "h100"), ("aws", "gb200"), ("aws", "gb300"), ("gcp", "gb200"),
                                                ("onprem", "b300")])
def test_a_workloadrun_mpi_worker_has_the_same_sshd_rule(platform, arch):
    """The WorkloadRun runtime is the catalog's: the AWS EFA patches add resources, not a capability list."""
    worker = container(replicated_jobs(workloadrun_workflow("mpi", platform, arch))["node"])
    assert worker["readinessProbe"] == PROBE
    assert worker["securityContext"]["capabilities"]["add"] == ["IPC_LOCK", "SYS_CHROOT"]


@pytest.mark.parametrize("framework", ["torch", "exec"])
def test_no_torch_or_exec_worker_runs_sshd_or_asks_for_sys_chroot(framework):
    worker = container(replicated_jobs(workloadrun_workflow(framework, "aws", "h100"))["node"])
    assert "readinessProbe" not in worker
    assert "SYS_CHROOT" not in str(worker)


@pytest.mark.parametrize(("variant", "platform", "arch"), [
    ("nccl-all-reduce", "onprem", "b300"), ("nccl-all-gather", "aws", "gb200"), ("nccl-alltoall", "gcp", "gb300"),
    ("nccl-all-reduce", "aws", "gb300")])
def test_the_launcher_init_copies_the_keys_with_nvcres_script(variant, platform, arch):
    """fix-ssh-permissions copies the mounted keys and sets their modes under `set -x`; the emptyDir is
    neither created nor chmod-ed."""
    init = container(replicated_jobs(catalog_workflow(variant, platform, arch))["launcher"], "fix-ssh-permissions",
                     init=True)
    assert init["command"] == ["sh", "-c"]
    assert init["args"] == [LAUNCHER_INIT_SCRIPT]


@pytest.mark.parametrize(("source", "arch"), [
    ("nccl-all-reduce", "gb200"), ("nccl-loopback", "gb300"), ("nemotron5-8b", "gb200"), ("workloadrun", "gb200")])
def test_gcp_gke_interface_annotations_sit_on_the_node_job_not_on_its_pods(source, arch):
    """NVCRE's gcp-gb200-roce-runtime-patch-{comm,training}.yaml annotate the replicatedJob's Job template."""
    if source == "workloadrun":
        workflow = workloadrun_workflow("mpi", "gcp", arch)
    else:
        domain = "training" if source.startswith("nemotron") else "communication"
        workflow = catalog_workflow(source, "gcp", arch, domain)
    node = replicated_jobs(workflow)["node"]
    assert set(node["template"]["metadata"]["annotations"]) == GKE_ANNOTATIONS
    assert node["template"]["metadata"]["annotations"]["networking.gke.io/default-interface"] == "eth0"
    pod_meta = node["template"]["spec"]["template"].get("metadata") or {}
    assert not GKE_ANNOTATIONS & set(pod_meta.get("annotations") or {})


def rtx_nodes(gpus: int) -> list[Obj]:
    """GCP G4 nodes: the mock GCP nodes with an RTX PRO 6000 product label and `gpus` GPUs."""
    nodes = mocknodes.mock_nodes("gcp", "h100", 4)
    for node in nodes:
        node["metadata"]["labels"]["nvidia.com/gpu.product"] = "NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition"
        node["metadata"]["labels"]["nvidia.com/gpu.count"] = str(gpus)
        for key in ("capacity", "allocatable"):
            node["status"][key]["nvidia.com/gpu"] = str(gpus)
    return nodes


def platform_mpi_args(workflow: Obj) -> list[str]:
    """The -x flags between the leading mpirun options and the binary."""
    args = workflow["spec"]["jobTemplate"]["spec"]["workload"]["trainJob"]["trainer"]["args"]
    return args[args.index("-o StrictHostKeyChecking=no") + 1:args.index(MPI_RUN["binary"])]


def test_a_gcp_rtx_pro_6000_mpi_run_forwards_nccl_over_tcp_to_the_ranks():
    """NVCRE pkg/platform/testdata/override-mpi-args/mpi-framework (gpusPerNode 4); the default G4 size is 8."""
    assert platform_mpi_args(workloadrun_workflow("mpi", "gcp", "rtxpro6000", rtx_nodes(8))) == [
        "-x", "NCCL_MNNVL_ENABLE=0", "-x", "NCCL_DEBUG=INFO", "-x", "NCCL_IB_DISABLE=1", "-x", "NCCL_NET_PLUGIN=none",
        "-x", "NCCL_SOCKET_IFNAME=eth0", "-x", "NCCL_P2P_LEVEL=SYS"]


@pytest.mark.parametrize(("platform", "arch"), [("gcp", "h100"), ("gcp", "gb200"), ("onprem", "b300")])
def test_other_gpus_get_no_g4_flags(platform, arch):
    flags = platform_mpi_args(workloadrun_workflow("mpi", platform, arch))
    assert "NCCL_IB_DISABLE=1" not in flags and not any(f.startswith("NCCL_P2P_LEVEL=") for f in flags)


@pytest.mark.parametrize(("gpus", "level"), [(2, "PHB"), (4, "PHB"), (8, "SYS"), (1, None)])
def test_the_rtx_pro_6000_p2p_level_follows_the_node_size(gpus, level):
    run = {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "WorkloadRun",
           "metadata": {"name": "wr", "namespace": "ns", "uid": "uid-1"},
           "spec": {"image": "img:1", "numNodes": 2, "gpusPerNode": gpus, "framework": {"mpi": copy.deepcopy(MPI_RUN)}}}
    workflow, _resolved = build_workflow(run, platform="gcp", gpu_architecture="rtxpro6000", nodes=rtx_nodes(gpus))
    flags = platform_mpi_args(workflow)
    assert flags[:10] == ["-x", "NCCL_MNNVL_ENABLE=0", "-x", "NCCL_DEBUG=INFO", "-x", "NCCL_IB_DISABLE=1",
                          "-x", "NCCL_NET_PLUGIN=none", "-x", "NCCL_SOCKET_IFNAME=eth0"]
    assert flags[10:] == ([] if level is None else ["-x", f"NCCL_P2P_LEVEL={level}"])


@pytest.mark.parametrize("framework", ["torch", "exec"])
def test_a_gcp_rtx_pro_6000_torch_or_exec_run_gets_no_mpi_flags(framework):
    workflow = workloadrun_workflow(framework, "gcp", "rtxpro6000", rtx_nodes(8))
    assert "NCCL_P2P_LEVEL" not in str(workflow["spec"]["jobTemplate"])


@pytest.mark.parametrize(("variant", "platform", "arch", "image"), [
    ("nccl-all-reduce", "aws", "gb300", "public.ecr.aws/hpc-cloud/nccl-tests:latest"),
    ("nccl-alltoall", "aws", "gb300", "public.ecr.aws/hpc-cloud/nccl-tests:latest"),
    ("nccl-all-gather", "aws", "gb200",
     "public.ecr.aws/hpc-cloud/nccl-tests:cuda12.8.1-efa1.43.2-ofiv1.16.3-ncclv2.27.7-1-testsv2.16.9"),
])
def test_the_launcher_and_the_workers_run_the_trainers_nccl_tests_image(variant, platform, arch, image):
    """AWS (NVCRE aws-gb300-roce-runtime-patch-comm.yaml, aws-gb200-efa-runtime-patch-comm.yaml): one image for
    the launcher's mpirun (the trainer's image), its runtime container and the workers' sshd."""
    workflow = catalog_workflow(variant, platform, arch)
    jobs = replicated_jobs(workflow)
    assert workflow["spec"]["jobTemplate"]["spec"]["workload"]["trainJob"]["trainer"]["image"] == image
    assert container(jobs["launcher"])["image"] == container(jobs["node"])["image"] == image


# Nscale NKS (NVCRE nscale-ib-env.yaml and nscale-b200-ib-env.yaml, testdata/certification-render-nscale, newest
# in the asivanadi0/cluster-readiness-engine snapshot 5b13c30c): what mpirun forwards, then B200's tuning.
NSCALE_LEADING = ["--allow-run-as-root", "--mca", "plm_rsh_args", "-o StrictHostKeyChecking=no"]
B200_TUNING = ["NCCL_IB_QPS_PER_CONNECTION=8", "NCCL_MIN_NCHANNELS=32", "NCCL_MIN_CTAS=64"]
# NVCRE's cases: all-reduce at full scale, all-gather intra-rack, alltoall diagnose; binary, then its flags.
NSCALE_MPI = {
    "nccl-all-reduce": ({}, ["/usr/local/bin/all_reduce_perf_mpi", "-b", "8", "-e", "16G", "-f", "2", "-n", "100",
                             "-N", "10"]),
    "nccl-all-gather": ({"testScale": "intra-rack"}, ["/usr/local/bin/all_gather_perf_mpi", "-b", "8", "-e", "16G",
                                                      "-f", "2", "-n", "100", "-N", "10"]),
    "nccl-alltoall": ({"testScale": "diagnose"}, ["/usr/local/bin/alltoall_perf_mpi", "-d", "uint8", "-b", "8", "-e",
                                                  "16G", "-f", "2", "-n", "5", "-N", "1"]),
}


def nscale_ib_env(mnnvl: str) -> list[str]:
    return ["NCCL_SOCKET_IFNAME=eth0", "NCCL_DEBUG=INFO", "NCCL_NVLS_ENABLE=1", "NCCL_CUMEM_ENABLE=1",
            "NCCL_P2P_NET_CHUNKSIZE=2097152", f"NCCL_MNNVL_ENABLE={mnnvl}", "NCCL_IB_PCI_RELAXED_ORDERING=1",
            "SHARP_COLL_ENABLE_PCI_RELAXED_ORDERING=1", "OMPI_MCA_btl_openib_warn_default_gid_prefix=0",
            "PMIX_MCA_gds=^ds12"]


def nscale_nodes(arch: str) -> list[Obj]:
    """Nscale NKS nodes (OpenStack providerID, the rdmashare resource) with B200 or GB300 GPUs."""
    nodes = mocknodes.mock_nodes("onprem", "gb300" if arch == "gb300" else "b300", 8)
    for i, node in enumerate(nodes):
        node["spec"]["providerID"] = f"openstack:///{i:08d}"
        node["metadata"]["labels"]["nvidia.com/gpu.product"] = "NVIDIA-GB300" if arch == "gb300" else "NVIDIA-B200"
        node["metadata"]["labels"]["topology.nks.nscale.com/accelerator-domain"] = "domain-0"
        for key in ("capacity", "allocatable"):
            node["status"][key]["nscale.com/rdmashare"] = "1"
    return nodes


def nscale_workflow(variant: str, arch: str, options: Obj | None = None) -> Obj:
    """The Workflow certification_run builds for an 8-node Nscale Certification of that category."""
    category = {"domain": "communication", "variant": variant, **({"options": options} if options else {})}
    cert = {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Certification",
            "metadata": {"name": "nscale-cert", "namespace": "ns", "uid": "uid-1"},
            "spec": {"nodesPerJob": 8, "categories": [category]}}
    return category_build.build_workflow(cert, category, platform="nscale", gpu_architecture=arch, available_nodes=8,
                                         nodes=nscale_nodes(arch))


def env_strings(env: list[Obj] | None) -> list[str]:
    return [f"{e['name']}={e['value']}" for e in env or []]


def x_pairs(names: list[str]) -> list[str]:
    return [arg for name in names for arg in ("-x", name)]


@pytest.mark.parametrize(("arch", "gpus", "mnnvl", "tuning"), [("b200", "8", "0", B200_TUNING), ("gb300", "4", "1", [])])
@pytest.mark.parametrize("variant", sorted(NSCALE_MPI))
def test_an_nscale_launcher_forwards_nvcres_ib_env(variant, arch, gpus, mnnvl, tuning):
    """mpirun -x: the pod network for NCCL's bootstrap first, NCCL_NET unset, B200's QP/channel tuning last; the
    launcher's and the workers' containers carry only GB300's ComputeDomain MNNVL switch."""
    options, binary = NSCALE_MPI[variant]
    workflow = nscale_workflow(variant, arch, options)
    trainer = workflow["spec"]["jobTemplate"]["spec"]["workload"]["trainJob"]["trainer"]
    assert trainer["args"] == ["-N", gpus, *NSCALE_LEADING, *x_pairs(nscale_ib_env(mnnvl) + tuning), *binary]
    assert "env" not in trainer
    jobs = replicated_jobs(workflow)
    assert env_strings(container(jobs["node"]).get("env")) == ([] if arch == "b200" else ["NCCL_MNNVL_ENABLE=1"])
    assert env_strings(container(jobs["launcher"]).get("env")) == []


@pytest.mark.parametrize(("arch", "mnnvl"), [("b200", "0"), ("gb300", "1")])
@pytest.mark.parametrize(("variant", "tail"), [("nccl-loopback", ["NCCL_SHM_DISABLE=1", "NCCL_P2P_DISABLE=1"]),
                                               ("nccl-loopback-nvswitch", [])])
def test_an_nscale_loopback_runs_with_the_ib_env_and_no_b200_tuning(variant, tail, arch, mnnvl):
    trainer = nscale_workflow(variant, arch)["spec"]["jobTemplate"]["spec"]["workload"]["trainJob"]["trainer"]
    assert env_strings(trainer["env"]) == nscale_ib_env(mnnvl) + tail
