"""The measurements a Job asks for (spec/measurements.md §2.2): `<job>-bandwidth` and `<job>-goodput`.

The Job tier creates them once the workload exists. Their controller owner is the Job's Workflow, so they
outlive the Job (a retried group's new Job gets its own: the Job UID annotation tells them apart). An
existing object of the name is left alone, as NVCRE does.
"""
from __future__ import annotations

from typing import Any

from ..api import naming
from ..api.objects import condition, controller_reference, is_true, meta
from ..api.vocabulary import (
    ANNOTATION_JOB_UID,
    API_VERSION,
    BANDWIDTH_MEASUREMENT,
    COMPLETE,
    GOODPUT_MEASUREMENT,
    GROUP,
    JOB,
    JOB_SUCCEEDED,
    LABEL_JOB,
    LABEL_MANAGED_BY,
    LABEL_WORKFLOW,
    MANAGED_BY_NVCRE,
    WORKFLOW,
)

Obj = dict[str, Any]
# (Job spec field, kind, name suffix, spec fields copied)
KINDS = (("bandwidthMeasurement", BANDWIDTH_MEASUREMENT, "bandwidth", ("logProfileRef", "sampleInterval", "testType")),
         ("goodputMeasurement", GOODPUT_MEASUREMENT, "goodput", ("logProfileRef", "sampleInterval")))


def wanted(job: Obj) -> list[Obj]:
    """The measurement objects the Job's spec asks for."""
    spec, job_meta = job.get("spec") or {}, meta(job)
    owner = next((r for r in job_meta.get("ownerReferences") or [] if r.get("kind") == WORKFLOW), None)
    out = []
    for field, kind, suffix, copied in KINDS:
        asked = spec.get(field)
        if not asked:
            continue
        labels = {LABEL_MANAGED_BY: MANAGED_BY_NVCRE, LABEL_JOB: job_meta.get("name", "")}
        if (job_meta.get("labels") or {}).get(LABEL_WORKFLOW):
            labels[LABEL_WORKFLOW] = job_meta["labels"][LABEL_WORKFLOW]
        reference = ({**{k: owner[k] for k in ("apiVersion", "kind", "name", "uid")}, "controller": True,
                      "blockOwnerDeletion": True} if owner else controller_reference(job, JOB, API_VERSION))
        out.append({
            "apiVersion": API_VERSION, "kind": kind,
            "metadata": {"name": naming.measurement_name(job_meta.get("name", ""), suffix),
                         "namespace": job_meta.get("namespace", ""), "labels": labels,
                         "annotations": {ANNOTATION_JOB_UID: job_meta.get("uid", "")},
                         "ownerReferences": [reference]},
            "spec": {**{k: asked[k] for k in copied if asked.get(k)},
                     "jobRef": {"apiGroup": GROUP, "kind": JOB, "name": job_meta.get("name", "")}},
        })
    return out


def of_job(measurements: list[Obj], job: Obj, kind: str) -> list[Obj]:
    """The measurements of `kind` whose jobRef names this Job, by name (NVCRE's index by jobRef name)."""
    name = meta(job).get("name")
    return sorted((m for m in measurements if m.get("kind") == kind
                   and ((m.get("spec") or {}).get("jobRef") or {}).get("name") == name),
                  key=lambda m: meta(m).get("name", ""))


def measures(m: Obj, job: Obj) -> bool:
    """The measurement is of this very Job: no Job UID recorded, or this Job's (a same-named later Job is another)."""
    uid = (meta(m).get("annotations") or {}).get(ANNOTATION_JOB_UID)
    return not uid or uid == meta(job).get("uid")


def final(m: Obj) -> bool:
    """Complete with JobSucceeded: the exact figures of the Job's whole log (what thresholds may read)."""
    return is_true(m, COMPLETE) and (condition(m, COMPLETE) or {}).get("reason") == JOB_SUCCEEDED
