"""The generated CRDs on a real kube-apiserver: they install, default like the models, and enforce the CEL rules.

Tables: every update case is a JSON patch applied to a created object and the field/message the API server
must answer with (None = accepted); every create case is a patch of a valid object that must be rejected.
"""
from __future__ import annotations

import copy
import itertools
import json
from functools import partial
from pathlib import Path

import jsonpatch
import pytest
import yaml
from kubernetes import client
from kubernetes.client.rest import ApiException

from ansible_collections.cre.certification.plugins.module_utils.engine import models

from .conftest import SIM

pytestmark = pytest.mark.clusters(SIM)

ROOT = Path(__file__).resolve().parents[2]
GROUP, VERSION = "nvcre.nvidia.com", "v1alpha1"
PLURAL = {"Workflow": "workflows", "Job": "jobs", "Certification": "certifications", "LogProfile": "logprofiles",
          "BandwidthMeasurement": "bandwidthmeasurements", "GoodputMeasurement": "goodputmeasurements"}
CLUSTER_SCOPED = {"LogProfile"}  # and without a status subresource
VALID = yaml.safe_load((ROOT / "tests/unit/engine/data/models/valid.yaml").read_text())
PARSE = {"workflow": models.parse_workflow, "job": models.parse_job, "certification": models.parse_certification,
         "logprofile": partial(models.parse, models.LogProfile),
         "bandwidthmeasurement": partial(models.parse, models.BandwidthMeasurement),
         "goodputmeasurement": partial(models.parse, models.GoodputMeasurement)}
_names = itertools.count()

JOB_SPEC = {
    "workload": {"trainJob": {"runtimeRef": {"name": "nccl-runtime"}, "trainer": {"image": "img:1", "numNodes": 2}}},
    "workloadMetadata": {"labels": {"kai.scheduler/queue": "team-a", "team": "a"}},
    "nodeHealthMonitor": {"cel": {"expression": "node.spec.unschedulable == true"}},
    "goodputMeasurement": {"logProfileRef": "megatron-training", "sampleInterval": "10s"},
    "bandwidthMeasurement": {"logProfileRef": "nccl-bandwidth", "sampleInterval": "30s", "testType": "all_reduce"},
}
OPTIONAL = ("workloadMetadata", "nodeHealthMonitor", "goodputMeasurement", "bandwidthMeasurement")


def workflow(spec: dict) -> dict:
    return {"apiVersion": f"{GROUP}/{VERSION}", "kind": "Workflow", "metadata": {},
            "spec": {"jobTemplate": {"spec": spec}, "orchestration": {},
                     "gangScheduler": {"schedulerName": "kai-scheduler", "queue": "team-a"}}}


def job(spec: dict) -> dict:
    return {"apiVersion": f"{GROUP}/{VERSION}", "kind": "Job", "metadata": {}, "spec": spec}


BARE_SPEC = {"workload": JOB_SPEC["workload"]}
BASES = {
    "workflow": workflow(JOB_SPEC),
    "bare-workflow": jsonpatch.apply_patch(workflow(BARE_SPEC), [{"op": "remove", "path": "/spec/gangScheduler"}]),
    "job": job(JOB_SPEC),
    "bare-job": job(BARE_SPEC),
    "certification": {"apiVersion": f"{GROUP}/{VERSION}", "kind": "Certification", "metadata": {},
                      "spec": {"categories": [{"domain": "communication", "variant": "nccl-all-reduce"}],
                               "gangScheduler": {"schedulerName": "kai-scheduler"}}},
}


def _jobspec_cases(base: str, at: str) -> list[tuple]:
    """The JobSpec immutability matrix, for a JobSpec at `at` (Job: /spec, Workflow: /spec/jobTemplate/spec)."""
    field = at.strip("/").replace("/", ".")
    bare = f"bare-{base}"
    cases = [
        (base, "workload changed", [{"op": "replace", "path": f"{at}/workload/trainJob/trainer/image", "value": "img:2"}],
         f"{field}.workload", "workload is immutable"),
        (base, "workloadMetadata label added",
         [{"op": "add", "path": f"{at}/workloadMetadata/labels/extra", "value": "x"}],
         f"{field}.workloadMetadata", "workloadMetadata is immutable"),
        (base, "workloadMetadata label removed", [{"op": "remove", "path": f"{at}/workloadMetadata/labels/team"}],
         f"{field}.workloadMetadata", "workloadMetadata is immutable"),
        (base, "workloadMetadata label value changed",
         [{"op": "replace", "path": f"{at}/workloadMetadata/labels/team", "value": "b"}],
         f"{field}.workloadMetadata", "workloadMetadata is immutable"),
        (base, "workloadMetadata labels map removed", [{"op": "remove", "path": f"{at}/workloadMetadata/labels"}],
         f"{field}.workloadMetadata", "workloadMetadata is immutable"),
        (base, "nodeHealthMonitor changed",
         [{"op": "replace", "path": f"{at}/nodeHealthMonitor/cel/expression", "value": "true"}],
         f"{field}.nodeHealthMonitor", "nodeHealthMonitor is immutable"),
        (base, "goodputMeasurement changed",
         [{"op": "replace", "path": f"{at}/goodputMeasurement/sampleInterval", "value": "20s"}],
         f"{field}.goodputMeasurement", "goodputMeasurement is immutable"),
        (base, "bandwidthMeasurement changed",
         [{"op": "replace", "path": f"{at}/bandwidthMeasurement/testType", "value": "alltoall"}],
         f"{field}.bandwidthMeasurement", "bandwidthMeasurement is immutable"),
        (base, "other JobSpec fields editable", [{"op": "add", "path": f"{at}/stallMultiplier", "value": 3},
                                                 {"op": "add", "path": f"{at}/thresholds", "value": {"x": "value > 1"}}],
         None, None),
    ]
    for name in OPTIONAL:
        message = f"{name} cannot be added or removed after creation"
        cases.append((base, f"{name} removed", [{"op": "remove", "path": f"{at}/{name}"}], field, message))
        cases.append((bare, f"{name} added", [{"op": "add", "path": f"{at}/{name}", "value": JOB_SPEC[name]}],
                      field, message))
    return cases


# (base, name, patch, expected field or None if accepted, expected message)
UPDATES = _jobspec_cases("workflow", "/spec/jobTemplate/spec") + _jobspec_cases("job", "/spec") + [
    ("workflow", "gangScheduler changed", [{"op": "replace", "path": "/spec/gangScheduler/queue", "value": "team-b"}],
     "spec.gangScheduler", "gangScheduler is immutable"),
    ("workflow", "gangScheduler removed", [{"op": "remove", "path": "/spec/gangScheduler"}],
     "spec", "gangScheduler cannot be added or removed after creation"),
    ("bare-workflow", "gangScheduler added",
     [{"op": "add", "path": "/spec/gangScheduler", "value": {"schedulerName": "kai-scheduler"}}],
     "spec", "gangScheduler cannot be added or removed after creation"),
    ("workflow", "overrides editable",
     [{"op": "add", "path": "/spec/overrides", "value": [{"when": {"platform": {"equals": "aws"}},
                                                         "jobTemplate": {"spec": {"stallMultiplier": 2}}}]}],
     None, None),
    ("workflow", "orchestration and metadata editable",
     [{"op": "add", "path": "/spec/orchestration/iterations", "value": 3},
      {"op": "add", "path": "/metadata/labels", "value": {"edited": "yes"}}], None, None),
    ("workflow", "unchanged update accepted", [], None, None),
    ("certification", "spec changed", [{"op": "add", "path": "/spec/maxSteps", "value": 50}],
     "spec", "spec is immutable after creation"),
    ("certification", "category added",
     [{"op": "add", "path": "/spec/categories/-", "value": {"domain": "training", "variant": "nemotron5-8b"}}],
     "spec", "spec is immutable after creation"),
    ("certification", "gangScheduler changed",
     [{"op": "add", "path": "/spec/gangScheduler/queue", "value": "q"}], "spec", "spec is immutable after creation"),
    ("certification", "metadata editable", [{"op": "add", "path": "/metadata/labels", "value": {"a": "b"}}],
     None, None),
]

LABELS = "/spec/jobTemplate/spec/workloadMetadata/labels"
LABELS_FIELD = "spec.jobTemplate.spec.workloadMetadata.labels"
RESERVED = ('label key is reserved for the controller: "app.kubernetes.io/managed-by" and any key under '
            '"nvcre.nvidia.com/" identify workload ownership')
QUEUE_RESERVED = "queueLabelKey must not be app.kubernetes.io/managed-by or a key under nvcre.nvidia.com/"
# (base, name, patch, expected field, expected message substring): creates that must be rejected.
CREATES = [
    ("workflow", "reserved key managed-by", [{"op": "add", "path": f"{LABELS}/app.kubernetes.io~1managed-by",
                                              "value": "me"}], LABELS_FIELD, RESERVED),
    ("workflow", "reserved key under nvcre.nvidia.com/", [{"op": "add", "path": f"{LABELS}/nvcre.nvidia.com~1job",
                                                           "value": "x"}], LABELS_FIELD, RESERVED),
    ("job", "reserved key on a Job", [{"op": "add", "path": "/spec/workloadMetadata/labels/nvcre.nvidia.com~1x",
                                       "value": "x"}], "spec.workloadMetadata.labels", RESERVED),
    ("workflow", "key grammar", [{"op": "add", "path": f"{LABELS}/-bad", "value": "x"}], LABELS_FIELD,
     "invalid label key: must be a qualified name"),
    ("workflow", "key with two slashes", [{"op": "add", "path": f"{LABELS}/a~1b~1c", "value": "x"}], LABELS_FIELD,
     "invalid label key: must be a qualified name"),
    ("workflow", "key prefix over 253", [{"op": "add", "path": f"{LABELS}/{'a' * 60}.{'b' * 60}.{'c' * 60}.{'d' * 60}"
                                          f".{'e' * 20}~1k", "value": "x"}], LABELS_FIELD,
     "invalid label key: prefix must be no more than 253 characters"),
    ("workflow", "value grammar", [{"op": "add", "path": f"{LABELS}/team2", "value": "a b"}],
     f"{LABELS_FIELD}.team2", "should match"),
    ("workflow", "value over 63", [{"op": "add", "path": f"{LABELS}/team2", "value": "v" * 64}],
     f"{LABELS_FIELD}.team2", "may not be more than 63"),
    ("workflow", "33 labels", [{"op": "replace", "path": LABELS, "value": {f"l{i}": "v" for i in range(33)}}],
     LABELS_FIELD, "must have at most 32 items"),
    ("workflow", "queueLabelKey managed-by", [{"op": "add", "path": "/spec/gangScheduler/queueLabelKey",
                                               "value": "app.kubernetes.io/managed-by"}],
     "spec.gangScheduler.queueLabelKey", QUEUE_RESERVED),
    ("certification", "queueLabelKey under nvcre.nvidia.com/", [{"op": "add", "path": "/spec/gangScheduler/queueLabelKey",
                                                                 "value": "nvcre.nvidia.com/queue"}],
     "spec.gangScheduler.queueLabelKey", QUEUE_RESERVED),
    ("workflow", "queueLabelKey grammar", [{"op": "add", "path": "/spec/gangScheduler/queueLabelKey", "value": "a b"}],
     "spec.gangScheduler.queueLabelKey", "should match"),
    ("workflow", "queueLabelKey prefix over 253", [{"op": "add", "path": "/spec/gangScheduler/queueLabelKey",
                                                    "value": f"{'a' * 60}.{'b' * 60}.{'c' * 60}.{'d' * 60}.{'e' * 20}/q"}],
     "spec.gangScheduler.queueLabelKey", "queueLabelKey prefix must be no more than 253 characters"),
    ("workflow", "queue not a label value", [{"op": "replace", "path": "/spec/gangScheduler/queue", "value": "a b"}],
     "spec.gangScheduler.queue", "should match"),
    ("workflow", "placement enum", [{"op": "add", "path": "/spec/orchestration/placement", "value": "pinned"}],
     "spec.orchestration.placement", "Unsupported value"),
    ("workflow", "empty workload union", [{"op": "replace", "path": "/spec/jobTemplate/spec/workload", "value": {}}],
     "spec.jobTemplate.spec.workload", "exactly one of the fields in [trainJob] must be set"),
    ("certification", "request above limit", [{"op": "add", "path": "/spec/resources",
                                               "value": {"limits": {"cpu": "64"}, "requests": {"cpu": 65}}}],
     "spec.resources", "requests.cpu must not exceed limits.cpu"),
    ("certification", "reserved NIC domain", [{"op": "add", "path": "/spec/nicResourceName",
                                               "value": "k8s.io/nic"}],
     "spec.nicResourceName", "nicResourceName must not use the reserved kubernetes.io or k8s.io domains"),
]


def _create(api: client.CustomObjectsApi, namespace: str, obj: dict) -> dict:
    obj = copy.deepcopy(obj)
    obj["metadata"] = {**obj.get("metadata", {}), "name": f"adm-{next(_names)}"}
    if obj["kind"] in CLUSTER_SCOPED:
        return api.create_cluster_custom_object(GROUP, VERSION, PLURAL[obj["kind"]], obj)
    obj["metadata"]["namespace"] = namespace
    return api.create_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL[obj["kind"]], obj)


def _replace(api: client.CustomObjectsApi, obj: dict) -> dict:
    meta = obj["metadata"]
    return api.replace_namespaced_custom_object(GROUP, VERSION, meta["namespace"], PLURAL[obj["kind"]], meta["name"],
                                                obj)


def _causes(err: ApiException) -> list[tuple[str, str]]:
    body = json.loads(err.body)
    return [(c.get("field", ""), c.get("message", "")) for c in body.get("details", {}).get("causes", [])]


def _assert_rejected(err: ApiException, field: str, message: str) -> None:
    assert err.status == 422, err.body
    causes = _causes(err)
    assert any(f == field and message in m for f, m in causes), f"want {field}: {message}; got {causes}"


def test_crds_established(crds: client.CustomObjectsApi, kube: client.ApiClient):
    ext = client.ApiextensionsV1Api(kube)
    for kind, plural in PLURAL.items():
        crd = ext.read_custom_resource_definition(f"{plural}.{GROUP}")
        assert crd.spec.scope == ("Cluster" if kind in CLUSTER_SCOPED else "Namespaced")
        assert (crd.spec.versions[0].subresources is not None and crd.spec.versions[0].subresources.status is not None) \
            == (kind not in CLUSTER_SCOPED)
        conditions = {c.type: c.status for c in crd.status.conditions}
        assert conditions.get("Established") == "True" and conditions.get("NamesAccepted") == "True"


@pytest.mark.parametrize("case", VALID, ids=[c["name"] for c in VALID])
def test_server_defaults_match_the_models(crds, namespace, case):
    """What the API server stores equals models.dump(): the CRD defaults are the model defaults, nothing pruned."""
    obj = {k: v for k, v in copy.deepcopy(case["input"]).items() if k != "status"}
    obj["metadata"] = {"labels": obj["metadata"].get("labels", {})}
    created = _create(crds, namespace, obj)
    expected = case["dump"] if "dump" in case else jsonpatch.apply_patch(case["input"], case["dump_patch"])
    assert created["spec"] == expected["spec"]
    assert models.dump(PARSE[case["kind"]](created))["spec"] == expected["spec"]
    if "status" in case["input"]:
        created["status"] = case["input"]["status"]
        meta = created["metadata"]
        stored = crds.replace_namespaced_custom_object_status(GROUP, VERSION, namespace, PLURAL[obj["kind"]],
                                                              meta["name"], created)
        assert stored["status"] == case["input"]["status"]


@pytest.mark.parametrize("case", UPDATES, ids=[f"{c[0]}: {c[1]}" for c in UPDATES])
def test_update(crds, namespace, case):
    base, _title, patch, field, message = case
    created = _create(crds, namespace, BASES[base])
    updated = jsonpatch.apply_patch(created, patch)
    if field is None:
        assert _replace(crds, updated)["spec"] == updated["spec"]
        return
    with pytest.raises(ApiException) as err:
        _replace(crds, updated)
    _assert_rejected(err.value, field, message)


@pytest.mark.parametrize("case", CREATES, ids=[f"{c[0]}: {c[1]}" for c in CREATES])
def test_create_rejected(crds, namespace, case):
    base, _title, patch, field, message = case
    with pytest.raises(ApiException) as err:
        _create(crds, namespace, jsonpatch.apply_patch(BASES[base], patch))
    _assert_rejected(err.value, field, message)


def test_32_labels_accepted(crds, namespace):
    obj = jsonpatch.apply_patch(BASES["workflow"], [{"op": "replace", "path": LABELS,
                                                     "value": {f"l{i}": "v" for i in range(32)}}])
    assert len(_create(crds, namespace, obj)["spec"]["jobTemplate"]["spec"]["workloadMetadata"]["labels"]) == 32
