"""pod-complete's delay per namespace (no cluster: the Stage's delay as kwok reads it)."""
from __future__ import annotations

from tools.sim import stages


def test_no_namespace_of_its_own_keeps_the_plain_delay() -> None:
    assert stages.pod_complete_delay(1000, {}) == {"durationMilliseconds": 1000}


def test_namespaces_get_their_own_duration_and_the_rest_the_cluster_s() -> None:
    delay = stages.pod_complete_delay(1000, {"slow-ns": 25000, "fast": 200})
    assert delay["durationMilliseconds"] == 1000
    expression = delay["durationFrom"]["cel"]["expression"]
    table = '{"fast": "200ms", "slow-ns": "25000ms"}'
    assert expression == f'self.metadata.namespace in {table} ? {table}[self.metadata.namespace] : "1000ms"'
