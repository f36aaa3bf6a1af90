"""The measurements a Job asks for (spec/measurements.md §2.2): `<job>-bandwidth` and `<job>-goodput`.

The Job tier creates them once the workload exists. Their controller owner is the Job's Workflow, so they
outlive the Job (a retried group's new Job gets its own: the Job UID annotation tells them apart). An
existing object of the name is left alone, as NVCRE does. `status/job_measurements.py` reads them.
"""
from __future__ import annotations

from typing import Any

from ..api import naming
from ..api.objects import controller_reference, meta
from ..api.vocabulary import (
    ANNOTATION_JOB_UID,
    API_VERSION,
    BANDWIDTH_MEASUREMENT,
    GOODPUT_MEASUREMENT,
    GROUP,
    JOB,
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
