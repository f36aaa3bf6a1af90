"""The WorkloadRun controller's build (surroundings.md §3.4): one run -> one Workflow of the same name.

Pure functions over Kubernetes-JSON dicts. The runtime comes from the catalog's `_lib` fragments (the MPI
runtime of the NCCL entries, the one-pod runtime for torch and exec), the platform overrides from
`_lib/overrides/workloadrun.yaml`; then the Certification's resolved transforms (gang scheduler, priority class,
workload labels) run over the result exactly as for a category. Build problems raise InputError (bad input, refused
before anything is written) or WorkflowFailure; the tier records them as Failed/BuildFailed.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from ..api.errors import InputError, WorkflowFailure
from ..api.objects import controller_reference, orchestration_of
from ..api.vocabulary import (
    API_VERSION,
    BUILD_FAILED,
    LABEL_MANAGED_BY,
    LABEL_WORKLOAD_RUN,
    MANAGED_BY_NVCRE,
    WORKFLOW,
    WORKLOAD_RUN,
)
from ..catalog.entries import FIELD_HINT_WORKLOAD_RUN, gpu_arch_fallback_message, gpu_defaults, read_lib
from ..catalog.template import Renderer, parsed_yaml
from ..spec.overrides import OverrideContext, matches_when
from . import category_build, network

OVERRIDES = "overrides/workloadrun.yaml"
# NVCRE's default timeoutPerJob of a WorkloadRun (catalog.DefaultWorkloadRunTimeoutPerJob).
DEFAULT_TIMEOUT_PER_JOB = "1h"
# Fields of an override item applied at build time (they shape the trainer's command line).
BUILD_TIME = ("env", "preCommand", "mpiArgs")
_RUNTIMES = {"mpi": "deps/mpi-runtime.yaml", "torch": "deps/single-node-runtime.yaml",
             "exec": "deps/single-node-runtime.yaml"}
# NVCRE's ValidateWRPlacement (pkg/controller/placement.go), word for word.
_UNPINNED_SCALE = {
    "intra-node": "intra-node runs one job per target node, Unpinned runs exactly one job; drop one of the two",
    "intra-rack": ("intra-rack runs one job per topology domain, Unpinned runs exactly one job; to confine a single "
                   "unpinned job to one domain, name the domain label in target.matchExpressions instead"),
}

Obj = dict[str, Any]


@dataclass
class Resolved:
    """What the build decided from the run and detection (the run's status records some of it)."""

    framework: str
    gpus_per_node: int
    mlnx_per_node: int
    nodes_per_job: int
    enable_mnnvl: bool
    defaults_warning: str = ""
    """The GPUArchitectureDefaults message when the catalog has no row for the architecture, else ""."""


def framework_of(spec: Obj) -> str:
    """torch, mpi or exec; empty when none is set."""
    for name in ("torch", "mpi", "exec"):
        if (spec.get("framework") or {}).get(name) is not None:
            return name
    return ""


# The controller's BuildFailed text when no framework is set (prefixed `workloadrun <name>: ` like every build error).
NO_FRAMEWORK = "exec framework selected but spec.framework.exec is nil"


def validate_placement(spec: Obj) -> None:
    """ValidateWRPlacement: Unpinned runs one job, so a testScale asking for one job per node or rack is refused."""
    orchestration = orchestration_of(spec)
    scale = orchestration.get("testScale") or ""
    if orchestration.get("placement") == "Unpinned" and scale in _UNPINNED_SCALE:
        raise InputError("orchestration.placement",
                         f'Unpinned is incompatible with orchestration.testScale "{scale}": {_UNPINNED_SCALE[scale]}')


def node_counts(spec: Obj, platform: str, gpu_architecture: str) -> tuple[int, int]:
    """(gpusPerNode, mlnxPerNode) the run is sized at: its own, else the catalog's GPU defaults."""
    gpus, mlnx = gpu_defaults(gpu_architecture, platform)
    return spec.get("gpusPerNode") or gpus, mlnx if spec.get("mlnxPerNode") is None else spec["mlnxPerNode"]


def defaults_warning(spec: Obj, platform: str, gpu_architecture: str) -> str:
    """The GPUArchitectureDefaults message for this run, or "" when the catalog knows the architecture."""
    return gpu_arch_fallback_message(gpu_architecture, *node_counts(spec, platform, gpu_architecture),
                                     FIELD_HINT_WORKLOAD_RUN)


def resolve(spec: Obj, platform: str, gpu_architecture: str) -> Resolved:
    framework = framework_of(spec)
    gpus_per_node, mlnx_per_node = node_counts(spec, platform, gpu_architecture)
    scale = orchestration_of(spec).get("testScale")
    mnnvl = spec.get("enableMNNVL")
    return Resolved(framework=framework, gpus_per_node=gpus_per_node, mlnx_per_node=mlnx_per_node,
                    # intra-node: one node per job, so the Workflow makes one group per node.
                    nodes_per_job=1 if scale == "intra-node" else spec["numNodes"],
                    enable_mnnvl=gpu_architecture in network.MNNVL_ARCHITECTURES if mnnvl is None else mnnvl,
                    defaults_warning=defaults_warning(spec, platform, gpu_architecture))


def merge_env(*layers: list[Obj] | None) -> list[Obj]:
    """Env lists merged by name, later layers winning, in first-seen order."""
    merged: dict[str, Obj] = {}
    for layer in layers:
        for var in layer or []:
            merged[var["name"]] = copy.deepcopy(var)
    return list(merged.values())


def forwarded_names(mpi_args: list[str]) -> set[str]:
    """Names the user's mpiArgs already pass with `-x NAME` or `-x NAME=value`."""
    return {mpi_args[i + 1].split("=", 1)[0] for i, arg in enumerate(mpi_args[:-1]) if arg == "-x"}


def env_mpi_args(env: list[Obj], taken: set[str]) -> list[str]:
    """`-x NAME=value` for each env var (bare `-x NAME` for valueFrom), except the ones the user passes."""
    out: list[str] = []
    for var in env:
        if var["name"] not in taken:
            out += ["-x", f"{var['name']}={var['value']}" if "value" in var else var["name"]]
    return out


def trainer_command(spec: Obj, resolved: Resolved, env: list[Obj], platform_args: list[str],
                    pre_command: list[str]) -> tuple[list[str], list[str]]:
    """(command, args) of the trainer for the run's framework."""
    framework = spec["framework"][resolved.framework]
    if resolved.framework == "mpi":
        user = list(framework.get("mpiArgs") or [])
        taken = forwarded_names(user)
        leading = Renderer({"gpusPerNode": resolved.gpus_per_node}, read_lib).render(
            parsed_yaml(read_lib("nccl/mpi-leading-args.yaml")))
        platform = _drop_forwarded(platform_args, taken)
        args = [*leading, *env_mpi_args(env, taken | forwarded_names(platform)), *platform, *user,
                framework["binary"], *(framework.get("args") or [])]
        # preCommand runs on the launcher only; the ranks get what mpirun forwards.
        return ["timeout", "3600", framework["mpirunPath"]], args
    if resolved.framework == "torch":
        head = ["-m", framework["module"]] if framework.get("module") else [framework["script"]]
        command, args = ["torchrun"], [*head, *(framework.get("args") or [])]
    else:
        command, args = list(framework["command"]), list(framework.get("args") or [])
    if pre_command:
        # The platform's clean-up first, then the workload itself with its own argv.
        return ["bash", "-c"], ["; ".join(pre_command) + '; exec "$0" "$@"', *command, *args]
    return command, args


def _drop_forwarded(args: list[str], taken: set[str]) -> list[str]:
    """Platform `-x NAME=...` pairs the user forwards themselves are left out: the user's -x wins."""
    out: list[str] = []
    skip = False
    for index, arg in enumerate(args):
        if skip:
            skip = False
            continue
        if arg == "-x" and index + 1 < len(args) and args[index + 1].split("=", 1)[0] in taken:
            skip = True
            continue
        out.append(arg)
    return out


def platform_overrides(variables: Obj, ctx: OverrideContext) -> tuple[list[Obj], Obj]:
    """The rendered `_lib/overrides/workloadrun.yaml`: (Workflow overrides, build-time fields of the matching
    items, each list concatenated in file order)."""
    items = Renderer(variables, read_lib).render(parsed_yaml(read_lib(OVERRIDES)))
    workflow_overrides: list[Obj] = []
    build_time: dict[str, list[Any]] = {key: [] for key in BUILD_TIME}
    for index, item in enumerate(items):
        if not any(key in item for key in BUILD_TIME):
            workflow_overrides.append(item)
        elif matches_when(item.get("when") or {}, ctx, f"{OVERRIDES}[{index}].when"):
            for key in BUILD_TIME:
                build_time[key] += item.get(key) or []
    return workflow_overrides, build_time


def _runtime(name: str, resolved: Resolved, spec: Obj) -> Obj:
    """The TrainingRuntime from the catalog fragment, sized and carrying the run's pod additions."""
    variables = {"entryName": name, "gpusPerNode": resolved.gpus_per_node, "workloadRun": True}
    runtime = Renderer(variables, read_lib).render({"$lib": _RUNTIMES[resolved.framework]})[0]
    for rj in runtime["spec"]["template"]["spec"]["replicatedJobs"]:
        pod = rj["template"]["spec"]["template"]["spec"]
        worker = rj["name"] == "node"
        if spec.get("imagePullSecrets"):
            pod["imagePullSecrets"] = [{"name": s} for s in spec["imagePullSecrets"]]
        if worker:
            pod["volumes"] = [*(pod.get("volumes") or []), *copy.deepcopy(spec.get("volumes") or []), *_config_volume(
                name, spec)]
            container = pod["containers"][0]
            mounts = [*copy.deepcopy(spec.get("volumeMounts") or []),
                      *([{"name": "config-volume", "mountPath": "/config"}] if spec.get("config") else [])]
            if mounts:
                container["volumeMounts"] = [*(container.get("volumeMounts") or []), *mounts]
            for kind, values in (spec.get("resources") or {}).items():
                container["resources"].setdefault(kind, {}).update(copy.deepcopy(values))
            if spec.get("initContainers"):
                pod["initContainers"] = [*(pod.get("initContainers") or []), *copy.deepcopy(spec["initContainers"])]
        if not pod.get("volumes"):
            pod.pop("volumes", None)
    return runtime


def _config_volume(name: str, spec: Obj) -> list[Obj]:
    config = spec.get("config")
    if not config:
        return []
    source = (config.get("configMapRef") or {}).get("name") or f"{name}-config"
    return [{"name": "config-volume", "configMap": {"name": source, "defaultMode": 0o755}}]


def _dependencies(name: str, resolved: Resolved, spec: Obj) -> list[Obj]:
    deps = [_runtime(name, resolved, spec)]
    if (spec.get("config") or {}).get("inline"):
        deps.append({"apiVersion": "v1", "kind": "ConfigMap",
                     "metadata": {"name": f"{name}-config", "labels": {"app": name}},
                     "data": copy.deepcopy(spec["config"]["inline"])})
    checkpoint = spec.get("checkpoint")
    if checkpoint:
        claim: Obj = {"accessModes": ["ReadWriteMany"], "resources": {"requests": {"storage": checkpoint["storageSize"]}}}
        if checkpoint.get("storageClassName"):
            claim["storageClassName"] = checkpoint["storageClassName"]
        deps.append({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                     "metadata": {"name": f"{name}-checkpoint-pvc", "labels": {"app": name}}, "spec": claim})
    return deps


def _orchestration(spec: Obj) -> Obj:
    wr = orchestration_of(spec)
    out: Obj = {"iterations": wr.get("repeatCount") or 1,
                "execution": {"timeoutPerJob": wr.get("timeoutPerJob") or DEFAULT_TIMEOUT_PER_JOB}}
    if spec.get("target"):
        out["target"] = copy.deepcopy(spec["target"])
    if wr.get("placement"):
        out["placement"] = wr["placement"]
    if wr.get("maxConcurrent") is not None:
        out["execution"]["maxConcurrent"] = wr["maxConcurrent"]
    return out


def _one_job_per_rack(workflow_spec: Obj, platform: str, gpu_architecture: str) -> None:
    """intra-rack: one job per topology domain, on the key the platform override set (the GB200/GB300 clique)."""
    topology = workflow_spec["orchestration"].get("topology") or {}
    if not topology.get("topologyKey"):
        raise InputError("orchestration.testScale", f'"intra-rack" needs a topology key; none is known for '
                                                    f"{platform or 'an unknown platform'}/{gpu_architecture}")
    topology["strictDomain"] = True


def _job_spec(name: str, spec: Obj, resolved: Resolved, command: list[str], args: list[str], env: list[Obj]) -> Obj:
    trainer: Obj = {"image": spec["image"], "command": command, "args": args, "numNodes": resolved.nodes_per_job,
                    "numProcPerNode": resolved.gpus_per_node}
    if env:
        trainer["env"] = env
    # The catalog's runtime patch (a memory-backed /dev/shm, pull secrets) addresses the launcher too, so the
    # Job tier's pod label lands on every pod a measurement reads (an MPI run's table is the launcher's log).
    secrets = [{"name": s} if isinstance(s, str) else s for s in spec.get("imagePullSecrets") or []]
    patches = Renderer({"imagePullSecrets": secrets} if secrets else {}, read_lib).render(
        {"$lib": "common/dshm-runtime-patches.yaml", "$with": {"launcher": resolved.framework == "mpi"}})
    job: Obj = {
        "nodeHealthMonitor": parsed_yaml(read_lib("common/health-monitor.yaml")),
        "workload": {"trainJob": {"runtimeRef": {"kind": "TrainingRuntime", "name": f"{name}-runtime"},
                                  "runtimePatches": patches, "trainer": trainer}},
    }
    for key in ("bandwidthMeasurement", "goodputMeasurement"):
        if spec.get(key):
            job[key] = copy.deepcopy(spec[key])
    if spec.get("checkpoint"):
        job["checkpoint"] = {"pvcName": f"{name}-checkpoint-pvc",
                             "maxRestarts": spec["checkpoint"].get("maxRestarts") or 0}
    return job


def build_spec(run: Obj, *, platform: str, gpu_architecture: str, nodes: list | None = None) -> tuple[Obj, Resolved]:
    """The WorkflowSpec of a run (before its name and owner), with what was resolved on the way."""
    name = run["metadata"]["name"]
    spec = run.get("spec") or {}
    validate_placement(spec)
    resolved = resolve(spec, platform, gpu_architecture)
    if not resolved.framework:
        raise WorkflowFailure(BUILD_FAILED, NO_FRAMEWORK)
    variables = {"entryName": name, "nodesPerJob": resolved.nodes_per_job, "gpusPerNode": resolved.gpus_per_node,
                 "mlnxPerNode": resolved.mlnx_per_node, "framework": resolved.framework,
                 "mnnvl": "1" if resolved.enable_mnnvl else "0",
                 **({"nicResourceName": spec["nicResourceName"]} if spec.get("nicResourceName") else {})}
    ctx = OverrideContext.for_spec({}, platform=platform, gpu_architecture=gpu_architecture, nodes=nodes)
    generated, build_time = platform_overrides(variables, ctx)
    base_env = Renderer(variables, read_lib).render(parsed_yaml(read_lib("nccl/base-env.yaml")))
    env = merge_env(base_env, build_time["env"], spec.get("env"))
    command, args = trainer_command(spec, resolved, env, build_time["mpiArgs"], build_time["preCommand"])
    workflow_spec: Obj = {"jobTemplate": {"spec": _job_spec(name, spec, resolved, command, args, env)},
                          "orchestration": _orchestration(spec), "dependencies": _dependencies(name, resolved, spec)}
    if generated:
        workflow_spec["overrides"] = generated
    if spec.get("thresholds"):
        thresholds = {"thresholds": copy.deepcopy(spec["thresholds"])}
        workflow_spec["validation"] = {"performance": {"enabled": True, "thresholds": thresholds}}
    workflow_spec = category_build.resolve_overrides(workflow_spec, platform, gpu_architecture, nodes)
    if orchestration_of(spec).get("testScale") == "intra-rack":
        _one_job_per_rack(workflow_spec, platform, gpu_architecture)
    # The resolved transforms, after overrides, exactly as the Certification build runs them (ADR-079).
    gang_scheduler = category_build.resolved_gang_scheduler(spec)
    category_build.apply_gang_scheduler(workflow_spec, gang_scheduler)
    category_build.apply_priority_class(workflow_spec, spec.get("priorityClassName"))
    category_build.apply_image(workflow_spec, spec["image"])
    category_build.apply_workload_labels(workflow_spec, (spec.get("workloadMetadata") or {}).get("labels"),
                                         gang_scheduler)
    if gang_scheduler:
        workflow_spec["gangScheduler"] = gang_scheduler
    if spec.get("overrides"):
        # The user's own come after the generated ones and are the Workflow controller's to apply, so one that
        # breaks the gang intent meets its check (GangSchedulingConflict) instead of being repaired here.
        workflow_spec["overrides"] = [*(workflow_spec.get("overrides") or []), *copy.deepcopy(spec["overrides"])]
    return workflow_spec, resolved


def build_workflow(run: Obj, *, platform: str, gpu_architecture: str, nodes: list | None = None) -> tuple[Obj, Resolved]:
    """The Workflow the WorkloadRun controller creates: the run's name and namespace, its label, the run as
    controller owner."""
    meta = run["metadata"]
    spec, resolved = build_spec(run, platform=platform, gpu_architecture=gpu_architecture, nodes=nodes)
    metadata: Obj = {"name": meta["name"],
                     "labels": {LABEL_MANAGED_BY: MANAGED_BY_NVCRE, LABEL_WORKLOAD_RUN: meta["name"]}}
    if meta.get("namespace"):
        metadata["namespace"] = meta["namespace"]
    metadata["ownerReferences"] = [controller_reference(run, WORKLOAD_RUN, API_VERSION)]
    return {"apiVersion": API_VERSION, "kind": WORKFLOW, "metadata": metadata, "spec": spec}, resolved
