"""kwok Stages: kwok's own node and pod lifecycles, plus the fault stages that fail pods on chosen nodes."""
from __future__ import annotations

import json
from pathlib import Path

import yaml

from . import commands

# Pods finish after this long unless a test asks otherwise, so a Running phase is observable.
DEFAULT_POD_MILLISECONDS = 1000
POD_COMPLETE = "pod-complete"

FAULT_EXIT = {
    # kind: (exit code, reason, message) of the failed container
    "hardware": (137, "Error", "simulated hardware fault: GPU has fallen off the bus (Xid 79)"),
    "workload": (1, "Error", "simulated workload fault: process exited with status 1"),
    # A stalled run prints nothing more but keeps running; a day later it is killed, as a stuck job would be.
    "stall": (1, "Error", "simulated stall: no progress"),
}
# A broken GPU takes a moment to kill the process (less than a pod's run, so the fault always wins): long
# enough for the health agent's quarantine to be seen by a node-health monitor while the Job still runs.
FAULT_DELAY_MS = {"hardware": 800, "workload": 0, "stall": 24 * 3600 * 1000}

# The agents end a container by annotating its pod (`exit_annotations`): the exit code and message, and the
# restart of the container they end, so that the restarted container runs until judged again.
EXIT_AT = "sim.cre.certification/exit-at-restart"
EXIT_CODE = "sim.cre.certification/exit-code"
EXIT_MESSAGE = "sim.cre.certification/exit-message"
EXIT = "cre-exit"
# An MPI launcher's mpirun ends only after it reached every worker: `ranks` marks the restart that did, and only
# that restart can complete (so a launcher never succeeds beside a worker that was down, however busy the agent).
MPIRUN_REACHED = "sim.cre.certification/mpirun-reached-workers-at-restart"
# A `dcgmi diag` pod ends only after the agent printed its output (`logs/dcgm_logs`): this holds its exit code,
# and only a 0 lets it complete (a failing one ends by `EXIT`), so its log is there before it ends, however busy
# the agent.
DCGM_PRINTED = "sim.cre.certification/dcgm-printed"
# The same for a GEMM burn-in pod (`logs/burn_in_logs`): its whole compressed run is printed at once.
BURN_IN_PRINTED = "sim.cre.certification/burn-in-printed"
# And for a node-drift pod (`logs/node_drift_logs`): the collector's whole output at once.
NODE_DRIFT_PRINTED = "sim.cre.certification/node-drift-printed"
REPLICATED_JOB = "jobset.sigs.k8s.io/replicatedjob-name"
JOBSET_NAME = "jobset.sigs.k8s.io/jobset-name"
LAUNCHER = "launcher"  # the MPI runtimes' mpirun replicatedJob

# The kubelet's back-off between restarts of a crashed container (the kubelet's defaults): the first restart at
# once, then 10 s doubling to 5 minutes. Tests compress it per cluster (`up --backoff-ms`).
KUBELET_BACKOFF_MS = 10000
BACKOFF_STEPS = (0, 1, 2, 4, 8, 16, 30)   # times the base, by the restarts already made; 30 x 10 s = the 300 s cap
RESTART = "kubelet-restart"
CRASH_LOOP = "CrashLoopBackOff"

_RUNNING_CONDITIONS = """conditions:
- lastTransitionTime: {{ $now | Quote }}
  status: "@READY@"
  type: Ready
- lastTransitionTime: {{ $now | Quote }}
  status: "@READY@"
  type: ContainersReady
"""

# The exit before the container's last restart, which the kubelet keeps while it runs again and after it ends
# (containerStatuses is an atomic list: a status written without it drops it).
_LAST_STATE = "  lastState: {{ toJson (or $origin.lastState dict) }}\n"

_RESTARTED_STATUS = """{{ $now := Now }}
{{ $root := . }}
@CONDITIONS@containerStatuses:
{{ range $index, $item := .spec.containers }}
{{ $origin := index $root.status.containerStatuses $index }}
- image: {{ $item.image | Quote }}
  name: {{ $item.name | Quote }}
  ready: true
  restartCount: {{ add1 (or $origin.restartCount 0) }}
  started: true
@LAST_STATE@  state:
    waiting: null
    running:
      startedAt: {{ $now | Quote }}
{{ end }}
phase: Running
""".replace("@CONDITIONS@", _RUNNING_CONDITIONS.replace("@READY@", "True")).replace("@LAST_STATE@", _LAST_STATE)


def _ended_status(state: str, phase: str) -> str:
    """The status the kubelet reports when a pod's containers end (not ready, their restarts kept): `state` is
    the rest of each container's status, `phase` the pod's (both template text)."""
    return """{{ $now := Now }}
{{ $root := . }}
{{ $never := eq (or .spec.restartPolicy "Always") "Never" }}
@CONDITIONS@containerStatuses:
{{ range $index, $item := .spec.containers }}
{{ $origin := index $root.status.containerStatuses $index }}
{{ $started := or (and $origin.state.running $origin.state.running.startedAt) $now }}
- image: {{ $item.image | Quote }}
  name: {{ $item.name | Quote }}
  ready: false
  restartCount: {{ or $origin.restartCount 0 }}
  started: false
@STATE@{{ end }}
phase: @PHASE@
""".replace("@CONDITIONS@", _RUNNING_CONDITIONS.replace("@READY@", "False")).replace("@STATE@", state).replace(
        "@PHASE@", phase)


# A container's exit as the kubelet reports it: under restartPolicy Never the pod fails; otherwise the container
# waits in CrashLoopBackOff on the same node, its exit in lastState, until `RESTART` starts it again.
_EXIT_STATUS = _ended_status("""  {{ if $never }}state{{ else }}lastState{{ end }}:
    running: null
    terminated:
      exitCode: @EXIT@
      finishedAt: {{ $now | Quote }}
      reason: @REASON@
      message: @MESSAGE@
      startedAt: {{ $started | Quote }}
  {{ if not $never }}
  state:
    running: null
    waiting:
      reason: @CRASH_LOOP@
      {{ $pod := printf "%s_%s(%s)" $root.metadata.name $root.metadata.namespace $root.metadata.uid }}
      message: {{ printf "back-off restarting failed container=%s pod=%s" $item.name $pod | Quote }}
  {{ end }}
""", "{{ if $never }}Failed{{ else }}Running{{ end }}").replace("@CRASH_LOOP@", CRASH_LOOP)

# A container that ran to its end, as the kubelet reports it: its restarts, the exit before its last restart
# (lastState) and when it started stay (kwok's own pod-complete resets restartCount to 0 and stamps the start at
# the end).
_COMPLETED_STATUS = _ended_status(_LAST_STATE + """  state:
    running: null
    terminated:
      exitCode: 0
      finishedAt: {{ $now | Quote }}
      reason: Completed
      startedAt: {{ $started | Quote }}
""", "Succeeded")


def base_stages(assets: Path, pod_milliseconds: int = DEFAULT_POD_MILLISECONDS,
                backoff_ms: int = KUBELET_BACKOFF_MS) -> list[dict]:
    """kwok's default node and pod stages (loaded from the kwok module) with pod-complete delayed, held back
    from crash-looping containers, from sshd (`commands.SSHD`), from MPI launchers that have not reached their
    workers, from `dcgmi diag`, GEMM burn-in and node-drift pods not printed yet or failing (`DCGM_PRINTED`,
    `BURN_IN_PRINTED`, `NODE_DRIFT_PRINTED`), and keeping what the
    kubelet keeps of an ended container; the kubelet's restart of a crashed container, and the stage that ends a
    container the agents judged failed (`EXIT_AT`)."""
    stages = [yaml.safe_load(p.read_text()) for p in sorted((assets / "stages").glob("*.yaml"))]
    for stage in stages:
        if stage["metadata"]["name"] == POD_COMPLETE:
            stage["spec"]["delay"] = pod_complete_delay(pod_milliseconds, {})
            stage["spec"]["next"] = {"statusTemplate": _COMPLETED_STATUS}
            stage["spec"]["selector"]["matchExpressions"] += [
                _READY, _NOT_DAEMON, _REACHED, _DCGM_PASSED, _BURN_IN_PASSED, _NODE_DRIFT_PASSED]
    exit_ = ("{{ index $root.metadata.annotations " + json.dumps(EXIT_CODE) + " }}",
             "Error", "{{ index $root.metadata.annotations " + json.dumps(EXIT_MESSAGE) + " | Quote }}")
    # kwok's CEL knows no ContainerStatus type: jq reads the restarts.
    judged = {"key": f'.metadata.annotations[{json.dumps(EXIT_AT)}] == ({_RESTARTS} | tostring)', "operator": "In",
              "values": ["true"]}
    return [*stages, _failing(EXIT, [judged], exit_, 0), restart_stage(backoff_ms)]


_RESTARTS = ".status.containerStatuses[0].restartCount // 0"
_READY = {"key": '.status.conditions.[] | select( .type == "Ready" ) | .status', "operator": "In", "values": ["True"]}
# A launcher that runs no mpirun is an ordinary container (`commands`).
_REACHED = {"key": (f'.metadata.labels[{json.dumps(REPLICATED_JOB)}] != {json.dumps(LAUNCHER)} or '
                    f'({commands.jq_any_container(commands.MPIRUN)} | not) or '
                    f'.metadata.annotations[{json.dumps(MPIRUN_REACHED)}] == ({_RESTARTS} | tostring)'),
            "operator": "In", "values": ["true"]}


def _printed_and_passed(pattern: str, annotation: str) -> dict:
    """Only a workload's pods (a JobSet's, which the agent watches) running `pattern` wait for their print, and
    complete only when it ended with 0 (`annotation` holds the exit code)."""
    return {"key": (f'.metadata.labels[{json.dumps(JOBSET_NAME)}] == null or '
                    f'({commands.jq_any_container(pattern)} | not) or '
                    f'.metadata.annotations[{json.dumps(annotation)}] == "0"'),
            "operator": "In", "values": ["true"]}


_DCGM_PASSED = _printed_and_passed(commands.DCGMI_DIAG, DCGM_PRINTED)
_BURN_IN_PASSED = _printed_and_passed(commands.GEMM_BURN_IN, BURN_IN_PRINTED)
_NODE_DRIFT_PASSED = _printed_and_passed(commands.NODE_DRIFT, NODE_DRIFT_PRINTED)
GPU_RESOURCE = "nvidia.com/gpu"
_USES_GPUS = {"key": f'[.spec.containers[].resources.limits[{json.dumps(GPU_RESOURCE)}] // empty] | length > 0',
              "operator": "In", "values": ["true"]}
# sshd never ends on its own (an MPI worker serves its launcher until the JobSet ends): a pod running it
# completes only when it is deleted.
_NOT_DAEMON = {"key": f"{commands.jq_any_container(commands.SSHD)} | not", "operator": "In", "values": ["true"]}


def restart_stage(backoff_ms: int) -> dict:
    """The kubelet starting a crashed container again on its node, after the back-off its restarts so far earned."""
    steps = json.dumps([backoff_ms * step for step in BACKOFF_STEPS])
    crash_looping = {"key": ".status.containerStatuses.[].state.waiting.reason", "operator": "In", "values": [CRASH_LOOP]}
    return _running_pods_stage(
        RESTART, [crash_looping],
        delay={"durationMilliseconds": backoff_ms, "durationFrom": {"jq": {"expression":
               f'"\\({steps}[[{_RESTARTS}, {len(BACKOFF_STEPS) - 1}] | min])ms"'}}},
        next={"statusTemplate": _RESTARTED_STATUS})


def pod_complete_delay(default_ms: int, by_namespace: dict[str, int]) -> dict:
    """pod-complete's delay: `default_ms`, or a namespace's own duration (so tests that share a cluster each run
    their pods as long as they need). kwok evaluates the CEL map on each pod it completes."""
    if not by_namespace:
        return {"durationMilliseconds": default_ms}
    table = "{" + ", ".join(f"{json.dumps(ns)}: {json.dumps(f'{ms}ms')}" for ns, ms in sorted(by_namespace.items())) + "}"
    ns = "self.metadata.namespace"
    return {"durationMilliseconds": default_ms,
            "durationFrom": {"cel": {"expression": f'{ns} in {table} ? {table}[{ns}] : "{default_ms}ms"'}}}


def fault_stage(kind: str, nodes: list[str]) -> dict:
    """A Stage that ends the running containers of the Job-owned pods on `nodes` that use its GPUs (an MPI
    launcher placed there runs mpirun on the CPU and is not hit); its weight beats pod-complete."""
    exit_code, reason, message = FAULT_EXIT[kind]
    on_nodes = {"cel": {"expression": f"self.spec.nodeName in {json.dumps(sorted(nodes))}"}}
    return _failing(f"cre-fault-{kind}", [on_nodes, _USES_GPUS], (str(exit_code), reason, json.dumps(message)),
                    FAULT_DELAY_MS[kind])


def exit_annotations(restarts: int, code: int, message: str) -> dict[str, str]:
    """What an agent sets on a pod to end its container that has restarted `restarts` times."""
    return {EXIT_AT: str(restarts), EXIT_CODE: str(code), EXIT_MESSAGE: message}


def _failing(name: str, match: list[dict], exit_: tuple[str, str, str], delay_ms: int) -> dict:
    """A Stage that ends the running, ready container of the Job-owned pods `match` selects (`exit_`: the exit
    code, reason and message as template text), as the kubelet reports an exit."""
    exit_code, reason, message = exit_
    job_owned = {"key": ".metadata.ownerReferences.[].kind", "operator": "In", "values": ["Job"]}
    return _running_pods_stage(
        name, [_READY, job_owned, *match], weight=10000, delay={"durationMilliseconds": delay_ms},
        next={"statusTemplate": _EXIT_STATUS.replace("@EXIT@", exit_code).replace("@REASON@", reason)
              .replace("@MESSAGE@", message)})


def _running_pods_stage(name: str, match: list[dict], **spec: object) -> dict:
    """A kwok Stage of the running pods not being deleted that `match` selects; `spec`: its weight, delay and next."""
    running = [{"key": ".metadata.deletionTimestamp", "operator": "DoesNotExist"},
               {"key": ".status.phase", "operator": "In", "values": ["Running"]}]
    return {
        "apiVersion": "kwok.x-k8s.io/v1alpha1",
        "kind": "Stage",
        "metadata": {"name": name},
        "spec": {"resourceRef": {"apiGroup": "v1", "kind": "Pod"},
                 "selector": {"matchExpressions": [*running, *match]}, **spec},
    }
