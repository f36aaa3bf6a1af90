"""Before a run writes anything (and in check mode): are the APIs it needs served, and may it do what it will do?

A run that dies on its tenth write for want of a CRD or a permission leaves a half-made Workflow behind and
tells the user one missing thing at a time. This asks once, up front: one aggregated discovery call, then
one SelfSubjectAccessReview per permission, in parallel; everything missing is reported in one line.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from ..engine.api.actions import Ref
from ..engine.api.errors import InputError
from ..engine.api.vocabulary import (
    API_VERSION,
    BANDWIDTH_MEASUREMENT,
    CERTIFICATION,
    GOODPUT_MEASUREMENT,
    GROUP,
    JOB,
    LOG_PROFILE,
    TRAINER_API_VERSION,
    TRAINER_GROUP,
    TRAINJOB,
    WORKFLOW,
    WORKLOAD_RUN,
)
from ..kube.errors import JOBSET_GROUP, RBAC_DOC, NotServed, Target, install_fix
from ..kube.rest import Kube
from .errors import DriverError

JOBSET_API_VERSION = f"{JOBSET_GROUP}/v1alpha2"
SSAR_PATH = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
SSAR = Target("create", "authorization.k8s.io/v1", "SelfSubjectAccessReview",
              resource="selfsubjectaccessreviews.authorization.k8s.io", what="a SelfSubjectAccessReview")
CONCURRENCY = 8


@dataclass(frozen=True)
class Permission:
    """One RBAC permission: verbs on group/resource[/subresource], in the run's namespace unless cluster-wide."""

    group: str
    resource: str
    verbs: tuple[str, ...]
    sub: str = ""
    cluster: bool = False

    def text(self, verb: str, namespace: str) -> str:
        resource = f"{self.resource}.{self.group}" if self.group else self.resource
        where = "cluster-wide" if self.cluster else f"in namespace {namespace}"
        return f"{verb} {resource}{'/' + self.sub if self.sub else ''} {where}"


# What the driver does (driver/workflow.py, observe.py, execute.py, measurements.py), kind by kind; what it
# reads it lists once and then watches.
WORKFLOW_PERMISSIONS = (
    Permission(GROUP, "workflows", ("get", "list", "watch")),
    Permission(GROUP, "workflows", ("update",), "status"),
    Permission(GROUP, "jobs", ("get", "list", "watch", "create", "delete")),
    Permission(GROUP, "jobs", ("update",), "status"),
    Permission(GROUP, "bandwidthmeasurements", ("get", "list", "watch", "create")),
    Permission(GROUP, "bandwidthmeasurements", ("update",), "status"),
    Permission(GROUP, "goodputmeasurements", ("get", "list", "watch", "create")),
    Permission(GROUP, "goodputmeasurements", ("update",), "status"),
    Permission(GROUP, "logprofiles", ("list", "watch"), cluster=True),
    Permission(TRAINER_GROUP, "trainjobs", ("get", "list", "watch", "create", "delete")),
    Permission("", "pods", ("list", "watch")),
    Permission("", "pods", ("get",), "log"),
    Permission("", "configmaps", ("get", "list", "watch", "create", "update", "delete")),  # delete: evidence shards
    Permission("", "events", ("create",)),
    Permission("", "nodes", ("list", "watch"), cluster=True),
)
# The Certification tier on top (driver/certification.py): its own object and one Workflow per category.
CERTIFICATION_PERMISSIONS = (
    Permission(GROUP, "certifications", ("get", "create")),
    Permission(GROUP, "certifications", ("update",), "status"),
    Permission(GROUP, "workflows", ("create",)),
)
WORKFLOW_KINDS = ((API_VERSION, WORKFLOW), (API_VERSION, JOB), (API_VERSION, BANDWIDTH_MEASUREMENT),
                  (API_VERSION, GOODPUT_MEASUREMENT), (API_VERSION, LOG_PROFILE), (TRAINER_API_VERSION, TRAINJOB),
                  (JOBSET_API_VERSION, "JobSet"))
CERTIFICATION_KINDS = ((API_VERSION, CERTIFICATION),)
WORKLOAD_RUN_PERMISSIONS = (
    Permission(GROUP, "workloadruns", ("get", "create")),
    Permission(GROUP, "workloadruns", ("update",), "status"),
    Permission(GROUP, "workflows", ("create",)),
)
WORKLOAD_RUN_KINDS = ((API_VERSION, WORKLOAD_RUN),)
# Only when the run names spec.priorityClassName: that the PriorityClass exists (one get, cluster-wide).
PRIORITY_CLASS_API_VERSION = "scheduling.k8s.io/v1"
PRIORITY_CLASS_PATH = "spec.priorityClassName"
PRIORITY_CLASS_PERMISSIONS = (Permission("scheduling.k8s.io", "priorityclasses", ("get",), cluster=True),)


class PreflightFailure(DriverError):
    """Something the run needs is missing; the message lists all of it."""


def missing_kinds(kube: Kube, kinds: tuple[tuple[str, str], ...]) -> list[tuple[str, str]]:
    """(api_version, kind) of the kinds the server does not serve."""
    served = kube.discover()
    missing = []
    for api_version, kind in kinds:
        if api_version not in served:
            missing.append((api_version, kind))
            continue
        try:
            kube.resource(api_version, kind)
        except NotServed:
            missing.append((api_version, kind))
    return missing


def denied(kube: Kube, namespace: str, permissions: tuple[Permission, ...]) -> list[str]:
    """The permissions SelfSubjectAccessReview says this identity lacks, in the order given."""
    checks = [(p, verb) for p in permissions for verb in p.verbs]

    def allowed(check: tuple[Permission, str]) -> bool:
        permission, verb = check
        attributes = {"verb": verb, "group": permission.group, "resource": permission.resource,
                      **({"subresource": permission.sub} if permission.sub else {}),
                      **({} if permission.cluster else {"namespace": namespace})}
        review = kube.request("POST", SSAR_PATH, {"apiVersion": "authorization.k8s.io/v1",
                                                  "kind": "SelfSubjectAccessReview",
                                                  "spec": {"resourceAttributes": attributes}}, target=SSAR)
        return bool((review.get("status") or {}).get("allowed"))

    with ThreadPoolExecutor(CONCURRENCY) as pool:
        answers = list(pool.map(allowed, checks))
    return [p.text(verb, namespace) for (p, verb), ok in zip(checks, answers) if not ok]


def preflight(kube: Kube, namespace: str, subject: str, certification: bool = False,
              workload_run: bool = False, priority_class: str = "") -> None:
    """Raise PreflightFailure listing every missing API and permission of a run in `namespace`; `subject`
    names what the run drives ("Workflow nvcre/x"). With `priority_class`, raise InputError at
    spec.priorityClassName when that PriorityClass does not exist: the API server would refuse every pod."""
    kinds = WORKFLOW_KINDS + (CERTIFICATION_KINDS if certification else ()) + (
        WORKLOAD_RUN_KINDS if workload_run else ())
    permissions = WORKFLOW_PERMISSIONS + (CERTIFICATION_PERMISSIONS if certification else ()) + (
        WORKLOAD_RUN_PERMISSIONS if workload_run else ()) + (PRIORITY_CLASS_PERMISSIONS if priority_class else ())
    absent = missing_kinds(kube, kinds)
    forbidden = denied(kube, namespace, permissions)
    if not absent and not forbidden:
        check_priority_class(kube, priority_class)
        return
    problems: list[str] = []
    fixes: list[str] = []
    if absent:
        by_version: dict[str, list[str]] = {}
        for api_version, kind in absent:
            by_version.setdefault(api_version, []).append(kind)
        problems.append("the server does not serve " + ", ".join(f"{', '.join(kinds)} ({v})"
                                                                 for v, kinds in by_version.items()))
        fixes.extend(dict.fromkeys(install_fix(v) for v in by_version))
    if forbidden:
        problems.append("forbidden: " + ", ".join(forbidden))
        fixes.append(f"grant the permissions (see {RBAC_DOC})")
    raise PreflightFailure(f"preflight of {subject}: {'; '.join(problems)}; {', '.join(fixes)}, then rerun; "
                           "nothing was written")


def check_priority_class(kube: Kube, name: str) -> None:
    """Refuse a priorityClassName no PriorityClass has, before anything is written: the pods would be refused by
    the API server's Priority admission (`no PriorityClass with name <name> was found`) one by one, mid-run."""
    if name and kube.get(Ref(PRIORITY_CLASS_API_VERSION, "PriorityClass", "", name)) is None:
        raise InputError(PRIORITY_CLASS_PATH, f'no PriorityClass named "{name}" exists; create it or name one that '
                                              "does (kubectl get priorityclasses), then rerun; nothing was written")
