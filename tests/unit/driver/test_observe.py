"""What the driver keeps of the cluster and which Jobs a change touches (no cluster: the caches are filled by hand
through Informer.put, as a write's answer would)."""
from __future__ import annotations

from typing import Any

import pytest

from ansible_collections.cre.certification.plugins.module_utils.driver import observe
from ansible_collections.cre.certification.plugins.module_utils.kube.watch import Informer

GPU = "nvidia.com/gpu.present=true"


def spec(target: dict[str, Any] | None = None, **orchestration: Any) -> dict[str, Any]:
    return {"orchestration": {"target": target or {}, **orchestration}}


@pytest.mark.parametrize(("workflow_spec", "selector"), [
    (spec(), GPU),
    (spec({"nodeSelector": {"pool": "a", "rack": "r1"}}), f"{GPU},pool=a,rack=r1"),
    (spec({"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z1", "z2"]},
                                {"key": "bad", "operator": "NotIn", "values": ["yes"]},
                                {"key": "ib", "operator": "Exists"}, {"key": "old", "operator": "DoesNotExist"},
                                {"key": "gpus", "operator": "Gt", "values": ["4"]}]}),
     f"{GPU},zone in (z1,z2),bad notin (yes),ib,!old"),  # Gt is no label-selector operator: filtered here
    (spec({"nodeSelector": {"pool": "a"}}, placement="Unpinned"), GPU),  # its affinity reads every GPU node
    ({**spec({"nodeSelector": {"pool": "a"}}), "overrides": [{"orchestration": {"target": {"nodeSelector": {}}}}]},
     GPU),  # an override may change the target
])
def test_nodes_are_selected_on_the_server_where_the_target_cannot_change(workflow_spec, selector):
    assert observe.node_selector(workflow_spec) == selector


def test_a_node_keeps_what_rules_read_and_not_its_heartbeats():
    node = {"metadata": {"name": "n", "labels": {"a": "b"}}, "spec": {"unschedulable": True},
            "status": {"images": [{"names": ["x"]}], "addresses": [{}], "daemonEndpoints": {}, "allocatable": {"cpu": "1"},
                       "conditions": [{"type": "Ready", "status": "True", "lastHeartbeatTime": "t1",
                                       "lastTransitionTime": "t0"}]}}
    assert observe.trim_node(node) == {
        "metadata": {"name": "n", "labels": {"a": "b"}}, "spec": {"unschedulable": True},
        "status": {"allocatable": {"cpu": "1"},
                   "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "t0"}]}}


def test_a_pod_keeps_its_node_its_container_names_and_its_status():
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"x": "y"}},
           "spec": {"nodeName": "n1", "containers": [{"name": "node", "image": "i", "env": [{"name": "A"}]}],
                    "initContainers": [{"name": "init", "command": ["sh"]}], "volumes": [{"name": "v"}]},
           "status": {"phase": "Running"}}
    assert observe.trim_pod(pod) == {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"x": "y"}},
        "spec": {"nodeName": "n1", "containers": [{"name": "node"}], "initContainers": [{"name": "init"}]},
        "status": {"phase": "Running"}}


def observer() -> observe.Observer:
    """An Observer whose caches are filled by hand (nothing listed or watched)."""
    obs = observe.Observer(None, "ns", "wf")  # type: ignore[arg-type]
    for api_version, kind, ns in (("v1", "Pod", ""), ("v1", "Node", ""), (observe.API_VERSION, "GoodputMeasurement", "ns")):
        obs.informers[(api_version, kind)] = Informer(None, api_version, kind, ns)  # type: ignore[arg-type]
    return obs


def pod(name: str, job: str, node: str, version: int = 1) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "resourceVersion": str(version),
                                                            "labels": {observe.LABEL_JOB: job}},
            "spec": {"nodeName": node}}


def test_a_node_change_reaches_the_jobs_with_pods_there_and_not_the_workflow_tier():
    obs = observer()
    obs.record(pod("a-0", "job-a", "n1"))
    obs.record(pod("a-1", "job-a", "n2"))
    obs.record(pod("b-0", "job-b", "n2"))
    first = obs.take()
    assert first.jobs == {"job-a", "job-b"} and first.workflow
    obs.record({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n2", "resourceVersion": "5"}})
    changes = obs.take()
    assert changes.jobs == {"job-a", "job-b"} and changes.any and not changes.workflow
    obs.record({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n3", "resourceVersion": "6"}})
    assert obs.take().jobs == set()  # nobody runs there


def test_a_deleted_pod_leaves_the_index_but_its_job_still_hears_of_it():
    obs = observer()
    obs.record(pod("a-0", "job-a", "n1"))
    obs.record(pod("a-1", "job-a", "n1"))  # two pods of one Job on one node (a launcher beside a worker)
    obs.take()
    obs.informers[("v1", "Pod")]._items.pop("a-0")
    obs._changed("Pod", "event", ["a-0"])
    assert obs.take().jobs == {"job-a"}
    obs.record({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "resourceVersion": "9"}})
    assert obs.take().jobs == {"job-a"}  # a-1 is still there
    obs.informers[("v1", "Pod")]._items.pop("a-1")
    obs._changed("Pod", "event", ["a-1"])
    obs.take()
    obs.record({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "resourceVersion": "10"}})
    assert obs.take().jobs == set()


def test_a_measurement_change_names_the_measurement_and_its_job():
    obs = observer()
    obs.record({"apiVersion": observe.API_VERSION, "kind": "GoodputMeasurement",
                "metadata": {"name": "m", "namespace": "ns", "resourceVersion": "3"}, "spec": {"jobRef": {"name": "j"}}})
    changes = obs.take()
    assert changes.measurements == {"m"} and changes.jobs == {"j"} and changes.workflow


def test_pods_by_job_are_rebuilt_only_for_the_job_whose_pod_changed():
    obs = observer()
    for name, job, node in (("b-1", "job-b", "n2"), ("a-1", "job-a", ""), ("a-0", "job-a", "n1")):
        obs.record(pod(name, job, node))  # a-1 is not bound yet: it still belongs to its Job
    first = obs.pods()
    assert {job: [p["metadata"]["name"] for p in pods] for job, pods in first.items()} == {
        "job-a": ["a-0", "a-1"], "job-b": ["b-1"]}
    obs.record(pod("a-1", "job-a", "n3", version=2))
    second = obs.pods()
    assert second["job-b"] is first["job-b"]  # untouched: not sorted again
    assert [p["spec"]["nodeName"] for p in second["job-a"]] == ["n1", "n3"]
    obs.informers[("v1", "Pod")]._items.pop("b-1")
    obs._changed("Pod", "event", ["b-1"])
    assert list(obs.pods()) == ["job-a"]


def test_the_node_list_is_kept_until_a_node_changes():
    obs = observer()
    for name in ("n2", "n1"):
        obs.record({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "resourceVersion": "1"}})
    first = obs.nodes()
    assert [n["metadata"]["name"] for n in first] == ["n1", "n2"]
    assert obs.nodes() is first
    obs.record({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "resourceVersion": "2",
                                                                 "labels": {"gpu": "lost"}}})
    assert [n["metadata"].get("labels") for n in obs.nodes()] == [{"gpu": "lost"}, None]


def test_a_node_result_write_goes_to_its_own_cache_and_wakes_no_pass():
    obs = observer()
    obs.results = {name: Informer(None, "v1", "ConfigMap", "ns", fields=f"metadata.name={name}")  # type: ignore[arg-type]
                   for name in ("succeeded-nodes-abcd1234", "failed-nodes-abcd1234")}
    assert obs.node_results() == {}
    written = {"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": "succeeded-nodes-abcd1234", "namespace": "ns", "resourceVersion": "7"}}
    obs.record(written)
    assert obs.node_results() == {"succeeded-nodes-abcd1234": written}
    assert not obs.take().any  # only the Workflow tier reads them, when something else woke it
    obs.record({**written, "metadata": {**written["metadata"], "resourceVersion": "6"}})  # an older answer
    assert obs.node_results()["succeeded-nodes-abcd1234"]["metadata"]["resourceVersion"] == "7"
    other = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "unrelated", "namespace": "ns"}}
    obs.record(other)  # no cache of its kind: nothing kept, nothing woken
    assert list(obs.node_results()) == ["succeeded-nodes-abcd1234"] and not obs.take().any


@pytest.mark.parametrize(("running", "seconds"), [(0, 0.05), (1, 0.05), (16, 0.05), (32, 0.1), (64, 0.2),
                                                  (96, 0.3), (512, 0.3), (-1, 0.05)])
def test_a_pass_waits_longer_for_its_burst_the_more_groups_run(running, seconds):
    # Up to 16 groups a run reacts within 50 ms; 128 groups' streams of events are gathered for 0.3 s, no longer.
    assert observe.settle(running) == pytest.approx(seconds)


def workload_pod(name: str, labels: dict[str, str], node: str = "n1") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "resourceVersion": "1", "labels": labels},
            "spec": {"nodeName": node}}


@pytest.mark.parametrize(("labels", "owner"), [
    ({observe.LABEL_JOB: "j", observe.JOBSET_NAME: "j-workload"}, ("j", True)),   # a worker
    ({observe.JOBSET_NAME: "j-workload"}, ("j", False)),                          # NVCRE's MPI launcher
    ({observe.JOBSET_NAME: "someone-elses"}, ("", False)),                        # not a Job's workload
    ({}, ("", False)),
])
def test_a_pods_job_is_its_label_else_its_jobsets_name(labels, owner):
    assert observe.pod_owner(workload_pod("p", labels)) == owner


def test_the_launcher_is_a_workload_pod_but_not_one_of_the_jobs_labelled_pods():
    """NVCRE's Job controller finds the Job's pods by its label (the workers); a measurement finds the launcher by
    its JobSet. A launcher's change still wakes its Job."""
    obs = observer()
    obs.record(workload_pod("j-workload-node-0-0", {observe.LABEL_JOB: "j", observe.JOBSET_NAME: "j-workload"}))
    obs.take()
    obs.record(workload_pod("j-workload-launcher-0-0", {observe.JOBSET_NAME: "j-workload"}, node="n2"))
    assert obs.take().jobs == {"j"}
    assert [p["metadata"]["name"] for p in obs.pods()["j"]] == ["j-workload-node-0-0"]
    assert [p["metadata"]["name"] for p in obs.workload_pods()["j"]] == [
        "j-workload-launcher-0-0", "j-workload-node-0-0"]
    obs.record({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n2", "resourceVersion": "7"}})
    assert obs.take().jobs == {"j"}  # the launcher's node reaches its Job


def test_a_shard_write_is_kept_without_its_rows_and_wakes_its_job_not_the_workflow_tier():
    obs = observer()
    obs.informers[("v1", "ConfigMap")] = Informer(None, "v1", "ConfigMap", "ns", trim=observe.trim_metadata,  # type: ignore[arg-type]
                                                  metadata_only=True, changed=obs._changed)
    shard = {"apiVersion": "v1", "kind": "ConfigMap", "binaryData": {"rows.ndjson.gz": "H4sI"},
             "metadata": {"name": "wf-g-iter-1-evidence-2-1", "namespace": "ns", "resourceVersion": "9",
                          "labels": {"cre.certification/job": "wf-g-iter-1"}}}
    obs.record(shard)
    changes = obs.take()
    assert changes.jobs == {"wf-g-iter-1"} and changes.any and not changes.workflow
    kept = obs.shards()["wf-g-iter-1"]["wf-g-iter-1-evidence-2-1"]
    assert "binaryData" not in kept and kept["metadata"]["labels"] == shard["metadata"]["labels"]
