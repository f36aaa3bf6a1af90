"""What a run could have written, listed from the API server: every listable object in the given namespaces (kind,
name, resourceVersion), the namespaces themselves, the CRDs, LogProfiles and PVs, and each node's labels, taints
and cordon (a node's resourceVersion moves with its heartbeats, so it is not compared)."""
from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from kubernetes import client

# Namespaced kinds whose objects change without anyone asking (or cannot be listed): not ours to compare.
SKIPPED = {"events", "bindings", "localsubjectaccessreviews", "endpoints", "endpointslices", "leases"}
# In the test's namespace the collection writes nothing at all, Events included.
STRICT = {"events"}
READERS = 8


def _get(api: client.ApiClient, path: str) -> Any:
    method, url, headers, _body, _post = api.param_serialize("GET", path, auth_settings=["BearerToken"])
    response = api.call_api(method, url, header_params=headers)
    response.read()
    return json.loads(response.data)


def namespaced_resources(api: client.ApiClient) -> list[str]:
    """The API paths (`/api/v1/<plural>`, `/apis/<group>/<version>/<plural>`) of every listable namespaced kind."""
    bases = ["/api/v1"] + [f"/apis/{g['preferredVersion']['groupVersion']}" for g in _get(api, "/apis")["groups"]]
    out = []
    for base in bases:
        for res in _get(api, base)["resources"]:
            if res["namespaced"] and "/" not in res["name"] and "list" in res["verbs"]:
                out.append(f"{base}/{res['name']}")
    return out


def snapshot(api: client.ApiClient, resources: list[str], namespaces: list[str], strict: str) -> dict[str, Any]:
    """The state of `resources` (namespaced_resources) in `namespaces` and of the cluster-scoped kinds; in
    `strict` Events count too."""
    lists = {}  # state key -> the list's path
    for base in resources:
        head, _sep, plural = base.rpartition("/")
        for ns in namespaces:
            if plural not in SKIPPED or (ns == strict and plural in STRICT):
                lists[f"{ns}/{plural}"] = f"{head}/namespaces/{ns}/{plural}"
    cluster_wide = ("/api/v1/namespaces", "/api/v1/persistentvolumes",
                    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", "/apis/nvcre.nvidia.com/v1alpha1/logprofiles")
    paths = [*lists.values(), *cluster_wide, "/api/v1/nodes"]
    with ThreadPoolExecutor(READERS) as pool:  # the GETs one after another took 1.3 s a snapshot
        answers = dict(zip(paths, pool.map(lambda path: _get(api, path)["items"], paths)))
    state: dict[str, Any] = {key: sorted([i["metadata"]["name"], i["metadata"]["resourceVersion"]] for i in answers[path])
                             for key, path in lists.items()}
    for path in cluster_wide:
        keep_version = not path.endswith("namespaces")  # a namespace's status moves while it is deleted
        state[path] = sorted([i["metadata"]["name"]] + ([i["metadata"]["resourceVersion"]] if keep_version else [])
                             for i in answers[path])
    state["nodes"] = {n["metadata"]["name"]: {"labels": n["metadata"].get("labels") or {},
                                              "taints": (n.get("spec") or {}).get("taints") or [],
                                              "unschedulable": bool((n.get("spec") or {}).get("unschedulable"))}
                      for n in answers["/api/v1/nodes"]}
    return state
