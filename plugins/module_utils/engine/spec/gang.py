"""The gang-scheduling consistency contract (workflow spec §5; NVCRE pkg/platform/transform.go).

`validate_resolved_job_template` checks the post-override Job spec and dependency set against the
Workflow's immutable `gangScheduler` intent. It asserts and never repairs a runtime; the one thing it
restores, the workload queue label an override removed, goes only into the returned working copy.
"""
from __future__ import annotations

import json
import re
from typing import Any

from ..api.errors import WorkflowFailure
from ..api.vocabulary import CLUSTER_TRAINING_RUNTIME, LABEL_MANAGED_BY, RESERVED_LABEL_PREFIX, TRAINER_GROUP

REASON = "GangSchedulingConflict"
LABELS_PATH = "spec.jobTemplate.spec.workloadMetadata.labels"
MAX_LABELS = 32
DEFAULT_QUEUE = "default-queue"
DEFAULT_QUEUE_LABEL_KEY = "kai.scheduler/queue"
JOB_LABELS_PATH = "template.metadata.labels"
POD_LABELS_PATH = "template.spec.template.metadata.labels"

# Texts of k8s.io/apimachinery/pkg/util/validation, which NVCRE's ValidateLabels relays.
_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_NAME_RE = re.compile(f"^{_NAME_FMT}$")
_NAME_MSG = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
             "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
             f"validation is '{_NAME_FMT}')")
_DNS_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
_DNS_RE = re.compile(f"^{_DNS_FMT}$")
_DNS_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
            "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
            f"validation is '{_DNS_FMT}')")
_VALUE_FMT = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?"
_VALUE_RE = re.compile(f"^{_VALUE_FMT}$")
_VALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
              "and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "
              f"'12345', regex used for validation is '{_VALUE_FMT}')")
_RESERVED_MSG = ('label key is reserved for the controller: "app.kubernetes.io/managed-by" and any key under '
                 '"nvcre.nvidia.com/" identify workload ownership')


def label_key_errors(key: str) -> list[str]:
    """Errors of IsQualifiedName for a label key (empty when valid)."""
    parts = key.split("/")
    if len(parts) == 1:
        prefix, name = "", parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            return ["prefix part must be non-empty"]
    else:
        return ["a qualified name " + _NAME_MSG + " with an optional DNS subdomain prefix and '/' (e.g. "
                "'example.com/MyName')"]
    errors = []
    if prefix:
        if len(prefix) > 253:
            errors.append("prefix part must be no more than 253 characters")
        if not _DNS_RE.match(prefix):
            errors.append("prefix part " + _DNS_MSG)
    if not name:
        errors.append("name part must be non-empty")
    elif len(name) > 63:
        errors.append("name part must be no more than 63 characters")
    if name and not _NAME_RE.match(name):
        errors.append("name part " + _NAME_MSG)
    return errors


def label_value_errors(value: str) -> list[str]:
    """Errors of IsValidLabelValue (empty when valid)."""
    errors = []
    if len(value) > 63:
        errors.append("must be no more than 63 characters")
    if not _VALUE_RE.match(value):
        errors.append(_VALUE_MSG)
    return errors


def labels_error(labels: dict[str, Any], path: str = LABELS_PATH) -> str | None:
    """First violation of NVCRE's ValidateLabels: the cap, then keys in sorted order."""
    if len(labels) > MAX_LABELS:
        return f"{path}: {len(labels)} labels exceeds the maximum of {MAX_LABELS}"
    for key in sorted(labels):
        where = f'{path}["{key}"]'
        if key == LABEL_MANAGED_BY or key.startswith(RESERVED_LABEL_PREFIX):
            return f"{where}: {_RESERVED_MSG}"
        if errors := label_key_errors(key):
            return f"{where}: invalid label key: {'; '.join(errors)}"
        value = labels[key]
        value = value if isinstance(value, str) else str(value)
        if errors := label_value_errors(value):
            return f'{where}: invalid label value "{value}": {"; ".join(errors)}'
    return None


def resolve(gang_scheduler: dict[str, Any] | None) -> tuple[str, str, str] | None:
    """(schedulerName, queue, queueLabelKey) with code defaults, or None when no gang scheduler is set."""
    if not gang_scheduler or not gang_scheduler.get("schedulerName"):
        return None
    return (gang_scheduler["schedulerName"], gang_scheduler.get("queue") or DEFAULT_QUEUE,
            gang_scheduler.get("queueLabelKey") or DEFAULT_QUEUE_LABEL_KEY)


def validate_resolved_job_template(job_spec: dict[str, Any], dependencies: list[dict[str, Any]],
                                   gang_scheduler: dict[str, Any] | None, group: str | None = None,
                                   ) -> dict[str, Any]:
    """Check the contract; return the working copy of `job_spec` (queue label restored if it was removed).

    Raises WorkflowFailure(GangSchedulingConflict); with `group` the message is `group <g>: <err>`,
    as at launch time. The input is never modified.
    """
    try:
        return _validate(job_spec, dependencies, gang_scheduler)
    except _Conflict as conflict:
        message = str(conflict)
        raise WorkflowFailure(REASON, f"group {group}: {message}" if group is not None else message) from None


class _Conflict(Exception):
    pass


def _obj(value: Any) -> dict[str, Any]:
    """`value` when it is an object; schemaless user data of another type counts as absent (nothing to read)."""
    return value if isinstance(value, dict) else {}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _validate(job_spec: dict[str, Any], dependencies: list[dict[str, Any]],
              gang_scheduler: dict[str, Any] | None) -> dict[str, Any]:
    working = json.loads(json.dumps(job_spec))  # a JSON deep copy, fast: this runs once per group launch
    labels = (working.get("workloadMetadata") or {}).get("labels") or {}
    if error := labels_error(labels):
        raise _Conflict(error)
    resolved = resolve(gang_scheduler)
    if resolved is None:
        return working
    scheduler, queue, key = resolved
    if key not in labels:
        working.setdefault("workloadMetadata", {}).setdefault("labels", {})[key] = queue
        labels = working["workloadMetadata"]["labels"]
        if error := labels_error(labels):
            raise _Conflict(error)
    elif labels[key] != queue:
        raise _Conflict(f'{LABELS_PATH}["{key}"]: conflicting label value "{labels[key]}", expected "{queue}"')
    _check_runtime(working, dependencies, scheduler, queue, key)
    return working


def _check_runtime(job_spec: dict[str, Any], dependencies: list[dict[str, Any]],
                   scheduler: str, queue: str, key: str) -> None:
    train_job = (job_spec.get("workload") or {}).get("trainJob")
    if not train_job:
        raise _Conflict("gangScheduler is configured but spec.jobTemplate.spec.workload has no trainJob, "
                        "so its runtime scheduling cannot be checked")
    ref = train_job.get("runtimeRef") or {}
    api_group = ref["apiGroup"] if "apiGroup" in ref else TRAINER_GROUP
    kind = ref["kind"] if "kind" in ref else CLUSTER_TRAINING_RUNTIME
    name = ref.get("name", "")
    if api_group != TRAINER_GROUP:
        raise _Conflict(f'gangScheduler is configured but the workload references runtime apiGroup "{api_group}" '
                        f'rather than "{TRAINER_GROUP}", so its scheduling cannot be checked')
    if kind != "TrainingRuntime":
        raise _Conflict(f'gangScheduler is configured but the workload references runtime kind "{kind}"; only a '
                        "namespaced TrainingRuntime supplied as a Workflow dependency can be checked")
    runtime = find_training_runtime(dependencies, name)
    if runtime is None:
        raise _Conflict(f'gangScheduler is configured but the workload references runtime "{name}", which is not '
                        f"among the Workflow's TrainingRuntime.{TRAINER_GROUP} dependencies")
    replicated = _obj(_obj(_obj(runtime.get("spec")).get("template")).get("spec")).get("replicatedJobs")
    if not replicated or not isinstance(replicated, list):
        raise _Conflict(f'gangScheduler is configured but TrainingRuntime "{name}" has no '
                        "spec.template.spec.replicatedJobs, so its queue labels cannot be checked")
    job_patch, pod_patch = folded_patch_labels(train_job)
    head = f'gangScheduler is configured but TrainingRuntime "{name}"'
    for index, rj in enumerate(replicated):
        if not isinstance(rj, dict):
            raise _Conflict(f"{head} replicatedJobs[{index}] is not an object, so its queue label cannot be checked")
        rj_name = _text(rj.get("name"))
        where = f'{head} replicatedJob "{rj_name}"'
        template = rj.get("template")
        if not isinstance(template, dict):
            raise _Conflict(f"{where} has no template, so its queue label cannot be checked")
        pod_template = _obj(template.get("spec")).get("template")
        if not isinstance(pod_template, dict):
            raise _Conflict(f"{where} has no pod template, so its queue label cannot be checked")
        for level_labels, patch, path in (
                (_obj(template.get("metadata")).get("labels"), job_patch, JOB_LABELS_PATH),
                (_obj(pod_template.get("metadata")).get("labels"), pod_patch, POD_LABELS_PATH)):
            effective = {**_obj(level_labels), **patch.get(rj_name, {})}
            sets = (f'gangScheduler is configured with queue "{queue}" but TrainingRuntime "{name}" '
                    f'replicatedJob "{rj_name}"')
            if key not in effective:
                raise _Conflict(f'{sets} is missing label "{key}" on {path}')
            if effective[key] != queue:
                raise _Conflict(f'{sets} sets label "{key}" to "{effective[key]}" on {path}')
        pod_spec = pod_template.get("spec")
        if not isinstance(pod_spec, dict):
            raise _Conflict(f"{where} has no pod spec, so its scheduler name cannot be checked")
        found = pod_spec.get("schedulerName", "")
        if found != scheduler:
            raise _Conflict(f'gangScheduler is configured with schedulerName "{scheduler}" but TrainingRuntime '
                            f'"{name}" replicatedJob "{rj_name}" sets schedulerName "{found}"')


def api_group(api_version: str) -> str:
    """The group of an apiVersion (`trainer.kubeflow.org/v1alpha1` → `trainer.kubeflow.org`, `v1` → "")."""
    return api_version.rpartition("/")[0]


def find_training_runtime(dependencies: list[dict[str, Any]], name: str) -> dict[str, Any] | None:
    for dep in dependencies:
        if (dep.get("kind") == "TrainingRuntime" and api_group(dep.get("apiVersion", "")) == TRAINER_GROUP
                and (dep.get("metadata") or {}).get("name") == name):
            return dep
    return None


def runtime_patch_jobs(train_job: dict[str, Any]) -> list[dict[str, Any]]:
    """Every replicatedJob entry of every runtimePatch, in patch order."""
    entries: list[dict[str, Any]] = []
    for patch in train_job.get("runtimePatches") or []:
        spec = _obj(_obj(_obj(_obj(patch).get("trainingRuntimeSpec")).get("template")).get("spec"))
        found = spec.get("replicatedJobs")
        if isinstance(found, list):
            entries.extend(rj for rj in found if isinstance(rj, dict))
    return entries


def folded_patch_labels(train_job: dict[str, Any]) -> tuple[dict[str, dict], dict[str, dict]]:
    """Job-level and pod-level labels the runtimePatches set, per replicatedJob name, merged in order."""
    job_level: dict[str, dict] = {}
    pod_level: dict[str, dict] = {}
    for rj in runtime_patch_jobs(train_job):
        template = _obj(rj.get("template"))
        name = _text(rj.get("name"))
        job_level.setdefault(name, {}).update(_obj(_obj(template.get("metadata")).get("labels")))
        pod_meta = _obj(_obj(_obj(template.get("spec")).get("template")).get("metadata"))
        pod_level.setdefault(name, {}).update(_obj(pod_meta.get("labels")))
    return job_level, pod_level
