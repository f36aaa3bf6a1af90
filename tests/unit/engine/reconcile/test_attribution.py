"""Failed-node attribution's failure logs (spec/workflow.md §8.6)."""
from __future__ import annotations

from ansible_collections.cre.certification.plugins.module_utils.engine.reconcile import attribution


def test_a_timeout_keeps_the_trainer_pods_node_container_log():
    """§8.6: the pod labelled trainjob-ancestor-step=trainer first, its container `node` first; reason Timeout."""
    worker = {"metadata": {"name": "a-worker"}, "spec": {"nodeName": "n1", "containers": [{"name": "node"}]}}
    launcher = {"metadata": {"name": "z-launcher", "labels": {attribution.ANCESTOR_STEP: "trainer"}},
                "spec": {"nodeName": "n2", "containers": [{"name": "sidecar"}, {"name": "node"}]}}
    target = attribution.timeout_target([worker, launcher])
    assert target is not None and target[0] is launcher and target[1] == "node"
    assert attribution.timeout_failure_log(target, "x\n" * 2000)["tail"].count("\n") == attribution.TAIL_LINES
    assert attribution.timeout_failure_log(target, "") == {"podName": "z-launcher", "nodeName": "n2", "reason": "Timeout"}
    assert attribution.timeout_failure_log(attribution.timeout_target([]), "") == {"reason": "PodNotFound"}
