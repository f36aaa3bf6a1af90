"""The seed Workflow of the end-to-end tests and small helpers to run it in a fresh namespace."""
from __future__ import annotations

import copy
import itertools
from pathlib import Path
from typing import Any

import yaml
from kubernetes import client

from ansible_collections.cre.certification.plugins.module_utils.engine.reconcile import node_results

from .conftest import Sim

SEED = yaml.safe_load((Path(__file__).parent / "data" / "workflow.yaml").read_text())
NVCRE = ("nvcre.nvidia.com", "v1alpha1")
TRAINER = ("trainer.kubeflow.org", "v1alpha1")
_ns = itertools.count()


def nodes(*numbers: int) -> list[str]:
    return [f"gpu-node-{i:03d}" for i in numbers]


def workflow(target: list[str], **orchestration: Any) -> dict:
    wf = copy.deepcopy(SEED)
    wf["spec"]["orchestration"].update({"target": {"nodeNames": target}, **orchestration})
    return wf


def start(sim: Sim, wf: dict) -> str:
    """Create a namespace and the Workflow in it; return the namespace."""
    ns = f"e2e-{next(_ns)}"
    client.CoreV1Api(sim.api).create_namespace({"metadata": {"name": ns}})
    client.CustomObjectsApi(sim.api).create_namespaced_custom_object(*NVCRE, ns, "workflows", wf)
    return ns


def items(sim: Sim, ns: str, group: tuple[str, str], plural: str) -> list[dict]:
    return client.CustomObjectsApi(sim.api).list_namespaced_custom_object(*group, ns, plural)["items"]


def stored(sim: Sim, ns: str) -> dict:
    return client.CustomObjectsApi(sim.api).get_namespaced_custom_object(*NVCRE, ns, "workflows", "nccl-test")


def node_result_configmaps(sim: Sim, ns: str, uid: str) -> dict[str, tuple[list[str], list[dict]]]:
    """The Workflow's node-result ConfigMaps, decoded: `succeeded-nodes` / `failed-nodes` -> (names, entries)."""
    cms = {}
    for cm in client.CoreV1Api(sim.api).list_namespaced_config_map(ns).items:
        if cm.metadata.name.endswith(uid[:8]):
            plain = client.ApiClient().sanitize_for_serialization(cm)
            cms[cm.metadata.name.rsplit("-", 1)[0]] = (node_results.read_succeeded(plain),
                                                       node_results.read_failed(plain))
    return cms
