"""The kubelet as the simulator's kwok Stages play it (no cluster: the Stages as kwok reads them)."""
from __future__ import annotations

import json
from pathlib import Path

from tools.sim import commands, stages


def test_the_restart_back_off_is_the_kubelet_s_at_once_then_10s_doubling_to_5_minutes() -> None:
    delay = stages.restart_stage(stages.KUBELET_BACKOFF_MS)["spec"]["delay"]
    expression = delay["durationFrom"]["jq"]["expression"]
    table = json.loads(expression[expression.index("["):expression.index("]") + 1])
    assert table == [0, 10000, 20000, 40000, 80000, 160000, 300000]
    assert "[.status.containerStatuses[0].restartCount // 0, 6] | min" in expression


def test_a_compressed_back_off_keeps_the_kubelet_s_steps() -> None:
    expression = stages.restart_stage(100)["spec"]["delay"]["durationFrom"]["jq"]["expression"]
    assert expression.startswith('"\\([0, 100, 200, 400, 800, 1600, 3000][')


def test_the_restart_starts_a_crash_looping_container_on_its_node_and_counts_it() -> None:
    stage = stages.restart_stage(100)
    selector = stage["spec"]["selector"]["matchExpressions"]
    assert {"key": ".status.containerStatuses.[].state.waiting.reason", "operator": "In",
            "values": ["CrashLoopBackOff"]} in selector
    template = stage["spec"]["next"]["statusTemplate"]
    assert "restartCount: {{ add1 (or $origin.restartCount 0) }}" in template
    assert "phase: Running" in template and "nodeName" not in template


def test_a_fault_fails_the_pod_under_never_and_crash_loops_it_otherwise() -> None:
    stage = stages.fault_stage("workload", ["gpu-node-001", "gpu-node-000"])
    template = stage["spec"]["next"]["statusTemplate"]
    assert '{{ $never := eq (or .spec.restartPolicy "Always") "Never" }}' in template
    assert "phase: {{ if $never }}Failed{{ else }}Running{{ end }}" in template
    assert "{{ if $never }}state{{ else }}lastState{{ end }}:" in template and "reason: CrashLoopBackOff" in template
    assert 'message: "simulated workload fault: process exited with status 1"' in template
    assert {"cel": {"expression": 'self.spec.nodeName in ["gpu-node-000", "gpu-node-001"]'}} in \
        stage["spec"]["selector"]["matchExpressions"]
    # Only a running, ready container can exit: a crash-looping one waits for its restart.
    assert stages._READY in stage["spec"]["selector"]["matchExpressions"]


def test_a_fault_hits_only_the_containers_that_use_the_node_s_gpus() -> None:
    """An MPI launcher placed on a faulty node runs mpirun on the CPU: a broken GPU does not end it."""
    selector = stages.fault_stage("hardware", ["gpu-node-001"])["spec"]["selector"]["matchExpressions"]
    assert {"key": '[.spec.containers[].resources.limits["nvidia.com/gpu"] // empty] | length > 0',
            "operator": "In", "values": ["true"]} in selector


def test_an_agent_ends_one_restart_of_a_container() -> None:
    assert stages.exit_annotations(3, 1, "mpirun failed") == {
        stages.EXIT_AT: "3", stages.EXIT_CODE: "1", stages.EXIT_MESSAGE: "mpirun failed"}


def test_an_mpi_launcher_completes_only_at_a_restart_that_reached_its_workers() -> None:
    """A launcher that runs no mpirun is an ordinary container: it completes at its pod time."""
    assert stages._REACHED["key"] == (
        '.metadata.labels["jobset.sigs.k8s.io/replicatedjob-name"] != "launcher" or '
        f'({commands.jq_any_container(commands.MPIRUN)} | not) or .metadata.annotations'
        '["sim.cre.certification/mpirun-reached-workers-at-restart"] == '
        '(.status.containerStatuses[0].restartCount // 0 | tostring)')


def test_a_pod_running_sshd_in_any_form_never_completes_on_its_own(tmp_path: Path) -> None:
    (tmp_path / "stages").mkdir()
    (tmp_path / "stages" / "pod-complete.yaml").write_text(json.dumps({
        "apiVersion": "kwok.x-k8s.io/v1alpha1", "kind": "Stage", "metadata": {"name": stages.POD_COMPLETE},
        "spec": {"resourceRef": {"apiGroup": "v1", "kind": "Pod"}, "selector": {"matchExpressions": []}}}))
    (complete,) = [s for s in stages.base_stages(tmp_path) if s["metadata"]["name"] == stages.POD_COMPLETE]
    assert {"key": f"{commands.jq_any_container(commands.SSHD)} | not", "operator": "In", "values": ["true"]} in \
        complete["spec"]["selector"]["matchExpressions"]


def test_a_completed_container_keeps_its_restarts_its_last_exit_and_its_start(tmp_path: Path) -> None:
    """kwok's own pod-complete resets restartCount to 0 and stamps the start at the end; the kubelet does neither."""
    (tmp_path / "stages").mkdir()
    (tmp_path / "stages" / "pod-complete.yaml").write_text(json.dumps({
        "apiVersion": "kwok.x-k8s.io/v1alpha1", "kind": "Stage", "metadata": {"name": stages.POD_COMPLETE},
        "spec": {"resourceRef": {"apiGroup": "v1", "kind": "Pod"}, "selector": {"matchExpressions": []},
                 "next": {"statusTemplate": "restartCount: 0"}}}))
    (complete,) = [s for s in stages.base_stages(tmp_path) if s["metadata"]["name"] == stages.POD_COMPLETE]
    template = complete["spec"]["next"]["statusTemplate"]
    assert "restartCount: {{ or $origin.restartCount 0 }}" in template and "restartCount: 0" not in template
    assert "lastState: {{ toJson (or $origin.lastState dict) }}" in template
    assert "startedAt: {{ $started | Quote }}" in template and "phase: Succeeded" in template
    assert 'status: "False"\n  type: Ready' in template


def test_a_restarted_container_still_shows_the_exit_before_its_restart() -> None:
    template = stages.restart_stage(100)["spec"]["next"]["statusTemplate"]
    assert "lastState: {{ toJson (or $origin.lastState dict) }}" in template
