"""Read what a run left in the cluster (Workflows, node-result ConfigMaps, Jobs, measurements) and write the report
files."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ..engine.api import naming
from ..engine.api.actions import Create, Ref, Step
from ..engine.api.errors import InputError
from ..engine.api.objects import owned_by, status_orchestration
from ..engine.api.vocabulary import (
    API_VERSION,
    BELOW_FLEET_MEDIAN,
    CERTIFICATION,
    JOB,
    LABEL_DOMAIN,
    LABEL_VARIANT,
    LABEL_WORKFLOW,
    REGRESSION_DETECTED,
    WORKFLOW,
    WORKLOAD_RUN,
)
from ..engine.catalog import entries
from ..engine.evidence import summary as evidence_summary
from ..engine.plan import category_build, category_detect, workloadrun_build
from ..engine.reconcile import node_results
from ..engine.report import certreport, html, junit, markdown, snapshot
from ..engine.status.node_results import read_failed, read_succeeded
from ..kube.rest import ApiException, Kube
from . import annotate, bundle, burn_in_report, configuration_report, evidence_store, execute, history
from .measurements import list_measurements

FILES = ("report.json", "junit.xml", "report.md", "report.html")
WORKLOAD_RUN_DOMAIN = "workloadrun"  # a WorkloadRun's one category: `workloadrun/<run>`

Obj = dict[str, Any]


def category_data(kube: Kube, namespace: str, category: Obj, workflow: Obj | None, slow_fails: bool = False) -> Obj:
    """What certreport.build_report needs for one category: the Workflow, its decoded node results, its Jobs, its
    BandwidthMeasurements and GoodputMeasurements and, when it stored evidence, its `evidence` entry (each GPU's
    verdict streamed from its shards) and the store it was read from (`stored`, what a bundle is written from); for a
    GEMM burn-in, its `burnIn` (`slow_fails`: the fleet rule's slow GPUs fail)."""
    data: Obj = {"domain": category["domain"], "variant": category["variant"], "workflow": workflow,
                 "succeeded": [], "failed": [], "jobs": {}, "measurements": []}
    if workflow is None:
        return data
    status = workflow.get("status") or {}
    for key, ref, read in (("succeeded", "succeededNodesRef", read_succeeded), ("failed", "failedNodesRef", read_failed)):
        name = (status.get(ref) or {}).get("name")
        if name:
            data[key] = read(kube.get(Ref("v1", "ConfigMap", namespace, name)))
    name = workflow["metadata"]["name"]
    data["jobs"] = {j["metadata"]["name"]: j for j in kube.list(API_VERSION, JOB, namespace, f"{LABEL_WORKFLOW}={name}")}
    data["measurements"] = list_measurements(kube, namespace, name)
    stored = data["stored"] = evidence_store.read(kube, workflow, data["jobs"])
    # Until each workload names its evidence reader, a category has evidence when the cluster shows some.
    if stored.stored:
        gpus = evidence_summary.gpus(evidence_store.rows(kube, stored))
        data["evidence"] = evidence_summary.category_evidence(stored.status, stored.seals, gpus)
        burn_in = burn_in_report.of(kube, stored, data["jobs"], slow_fails)
        if burn_in is not None:
            data["burnIn"] = burn_in
        configuration = configuration_report.of(kube, stored, data["jobs"])
        if configuration is not None:
            data["configuration"] = configuration
    return data


def certification_data(kube: Kube, cert: Obj, slow_fails: bool = False) -> list[Obj]:
    """Every category of a Certification in order, with its Workflow (the recorded ref, else the derived name)."""
    meta, spec = cert["metadata"], cert.get("spec") or {}
    namespace = meta.get("namespace") or "default"
    recorded = (cert.get("status") or {}).get("categoryStatuses") or []
    out = []
    for index, category in enumerate(spec.get("categories") or []):
        ref = (recorded[index].get("workflowRef") or {}) if index < len(recorded) else {}
        name = ref.get("name") or category_build.workflow_name(meta["name"], category)
        workflow = kube.get(Ref(API_VERSION, WORKFLOW, namespace, name))
        data = category_data(kube, namespace, category, workflow, slow_fails)
        platform, arch = _detected(workflow)
        event = category_detect.architecture_defaults_event(arch, platform, category_build.resolve_options(
            spec, category), entries.FIELD_HINT_CERTIFICATION)
        data["warnings"] = [event["message"]] if event else []
        out.append(data)
    return out


def _detected(workflow: Obj | None) -> tuple[str, str]:
    """(platform, GPU architecture) the Workflow recorded; empty before its first pass."""
    orchestration = status_orchestration(workflow)
    return orchestration.get("detectedPlatform", ""), orchestration.get("detectedGPUArchitecture", "")


def report_json(built: Obj) -> str:
    return bundle.json_text(built)


def render_files(built: Obj) -> dict[str, str]:
    return {"report.json": report_json(built), "junit.xml": junit.junit_xml(built),
            "report.md": markdown.markdown(built), "report.html": html.report_html(built)}


def store_snapshot(kube: Kube, cert: Obj, text: str, check_mode: bool) -> tuple[bool, str]:
    """Keep report.json in the Certification's snapshot ConfigMap: (changed, warning). A namesake that is not
    the Certification's is left alone, and a report over NVCRE's limits is not kept (the files still are)."""
    packed = snapshot.compress(text)
    ref = Ref("v1", "ConfigMap", cert["metadata"].get("namespace") or "default", snapshot.name(cert["metadata"]["name"]))
    if problem := snapshot.too_large(text, packed):
        return False, f"report snapshot {ref.namespace}/{ref.name} not kept: {problem}"
    desired = snapshot.configmap(cert, text, packed)
    live = kube.get(ref)
    if live is not None and not owned_by(live, cert["metadata"]["uid"]):
        return False, (f"report snapshot not kept: ConfigMap {ref.namespace}/{ref.name} exists and is not owned by "
                       f"Certification {cert['metadata']['name']}; rename or delete that ConfigMap")
    if live is not None and snapshot.same(live, desired):
        return False, ""
    if not check_mode:
        if live is None:
            try:
                kube.create(desired)
            except ApiException as exc:
                if exc.status != 409:
                    raise
                return store_snapshot(kube, cert, text, check_mode)  # created meanwhile: compare with it
        else:
            desired["metadata"]["resourceVersion"] = live["metadata"]["resourceVersion"]
            kube.replace(desired)
    return True, ""


def from_snapshot(kube: Kube, cert: Obj) -> Obj | None:
    """The report kept in the Certification's snapshot, None when there is none."""
    ref = Ref("v1", "ConfigMap", cert["metadata"].get("namespace") or "default", snapshot.name(cert["metadata"]["name"]))
    cm = kube.get(ref)
    if cm is None or not owned_by(cm, cert["metadata"]["uid"]):
        return None
    built: Obj = json.loads(snapshot.report_text(cm))
    return built


def write_files(dest: str, contents: dict[str, str], check_mode: bool) -> bool:
    """Write the files whose content differs; True if any did (or would, in check mode)."""
    changed = False
    for name, text in contents.items():
        path = os.path.join(dest, name)
        try:
            with open(path, encoding="utf-8") as handle:
                if handle.read() == text:
                    continue
        except FileNotFoundError:
            pass
        changed = True
        if not check_mode:
            os.makedirs(dest, exist_ok=True)
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(text)
    return changed


def _history(kube: Kube, namespace: str, report: Obj, args: Obj, warnings: list[str]) -> list[history.Earlier]:
    found: list[history.Earlier] = []
    if args.get("history", True):
        kept, problems = history.snapshots(kube, namespace)
        found += kept
        warnings += problems
    found += history.report_files(args.get("history_reports") or [], "history_reports")
    return history.earlier(report, found)


def enforce(kube: Kube, data: list[Obj], regressed: list[Obj], check_mode: bool,
            reason: str = REGRESSION_DETECTED) -> bool:
    """Move the nodes `regressed` names ({category, name, message}) from each category's succeeded-nodes ConfigMap
    to its failed-nodes ConfigMap with `reason` (RegressionDetected; BelowFleetMedian for the burn-in's fleet rule);
    True when a ConfigMap changed (or would). NVCRE's conditions stay as they are."""
    changed = False
    by_category = {f"{c['domain']}/{c['variant']}": c for c in data if c.get("workflow")}
    for key in sorted({r["category"] for r in regressed}):
        category = by_category.get(key)
        if category is None:
            continue
        entries = [{"name": r["name"], "reason": reason, "message": r["message"]}
                   for r in regressed if r["category"] == key]
        workflow, namespace = category["workflow"], category["workflow"]["metadata"]["namespace"]
        for name, write in node_results.regressed(workflow, _result_configmaps(kube, namespace, workflow), entries):
            changed = True
            if not check_mode:
                # execute.run: the ownership rules of every write (a namesake is adopted or refused, a 409 re-read).
                execute.run(kube, Step([write]), workflow["metadata"]["name"])
                if isinstance(write, Create) and name.startswith("failed-nodes-"):
                    # A Workflow with no failed node had no ref to follow: NVCRE sets it with the ConfigMap.
                    kube.merge_patch(Ref(API_VERSION, WORKFLOW, namespace, workflow["metadata"]["name"]),
                                     {"status": {"failedNodesRef": {"kind": "ConfigMap", "name": name}}}, "status")
    return changed


def slow_failures(data: list[Obj]) -> list[Obj]:
    """The burn-in's fleet rule as failures: each node a slow GPU (or the node itself) is on, {category, name,
    message} with every slow entry's message of that node."""
    out: dict[tuple[str, str], list[str]] = {}
    for category in data:
        for slow in ((category.get("burnIn") or {}).get("fleet") or {}).get("slow") or []:
            out.setdefault((f"{category['domain']}/{category['variant']}", slow["node"]), []).append(slow["message"])
    return [{"category": key, "name": node, "message": "; ".join(messages)} for (key, node), messages in out.items()]


def _result_configmaps(kube: Kube, namespace: str, workflow: Obj) -> dict[str, Obj]:
    """The Workflow's two node-result ConfigMaps that exist, by their derived names (a ref may not be set yet)."""
    uid = workflow["metadata"]["uid"]
    names = (naming.succeeded_nodes_configmap(uid), naming.failed_nodes_configmap(uid))
    return {name: cm for name in names if (cm := kube.get(Ref("v1", "ConfigMap", namespace, name)))}


def _compared(kube: Kube, cert: Obj, data: list[Obj], args: Obj, check_mode: bool,
              warnings: list[str]) -> tuple[Obj, bool]:
    """The Certification's report with its comparison; with enforcement, the regressed nodes moved to the failed
    nodes first (and the report built again from what the ConfigMaps then hold)."""
    name, namespace = cert["metadata"]["name"], cert["metadata"].get("namespace") or "default"
    created = cert["metadata"].get("creationTimestamp", "")
    built = certreport.build_report(name, data, created=created)
    earlier = _history(kube, namespace, built, args, warnings)
    comparison = history.comparison(built, earlier, args)
    enforced = bool(comparison["enforced"] and comparison["regressedNodes"]) and \
        enforce(kube, data, comparison["regressedNodes"], check_mode)
    slow = slow_failures(data) if args.get("burn_in_slow_is_failure") else []
    enforced |= bool(slow) and enforce(kube, data, slow, check_mode, BELOW_FLEET_MEDIAN)
    if enforced and not check_mode:  # the nodes now failed count among this run's failures (repeat offenders)
        built = certreport.build_report(name, certification_data(kube, cert, bool(args.get("burn_in_slow_is_failure"))),
                                        created=created)
        comparison = history.comparison(built, earlier, args)
    built["comparison"] = comparison
    return built, enforced


def _single_report(kube: Kube, namespace: str, args: Obj) -> tuple[Obj, list[Obj]]:
    """The report of one Workflow, or of a WorkloadRun (its Workflow, category `workloadrun/<run>`), and the data of
    its category."""
    if args.get("workload_run"):
        run = kube.get(Ref(API_VERSION, WORKLOAD_RUN, namespace, args["workload_run"]))
        if run is None:
            raise InputError("workload_run", f'WorkloadRun "{args["workload_run"]}" not found in namespace '
                                             f'"{namespace}"')
        name = ((run.get("status") or {}).get("workflowRef") or {}).get("name") or args["workload_run"]
        category = {"domain": WORKLOAD_RUN_DOMAIN, "variant": args["workload_run"]}
        workflow = kube.get(Ref(API_VERSION, WORKFLOW, namespace, name))
        data = category_data(kube, namespace, category, workflow)
        platform, arch = _detected(workflow)
        warning = workloadrun_build.defaults_warning(run.get("spec") or {}, platform, arch)
        data["warnings"] = [warning] if warning else []
        return certreport.build_report(args["workload_run"], [data],
                                       created=run["metadata"].get("creationTimestamp", "")), [data]
    workflow = kube.get(Ref(API_VERSION, WORKFLOW, namespace, args["workflow"]))
    if workflow is None:
        raise InputError("workflow", f'Workflow "{args["workflow"]}" not found in namespace "{namespace}"')
    labels = workflow["metadata"].get("labels") or {}
    # A Workflow outside a Certification is its own category: `workflow/<name>`.
    category = {"domain": labels.get(LABEL_DOMAIN, "workflow"), "variant": labels.get(LABEL_VARIANT, args["workflow"])}
    data = category_data(kube, namespace, category, workflow)
    return certreport.build_report(args["workflow"], [data],
                                   created=workflow["metadata"].get("creationTimestamp", "")), [data]


def _bundle(kube: Kube, directory: Path, built: Obj, stores: list[evidence_store.WorkflowEvidence] | None,
            check_mode: bool) -> Obj:
    """The results bundle under `directory` (driver/bundle.py): `bundle` (its manifest) and whether it changed. Not
    written in check mode; refused for a report from a snapshot (the shards went with the Workflows)."""
    if stores is None:
        raise InputError("bundle_dir", "the report came from the Certification's snapshot: its Workflows, and the "
                                       "evidence shards they owned, are gone; a bundle needs them (leave bundle_dir "
                                       "out, or run the certification again)")
    if check_mode:
        return {}
    before = _read_bytes(directory / bundle.MANIFEST)
    manifest = bundle.from_cluster(kube, directory, built, stores)
    return {"bundle": {"path": str(directory), **manifest},
            "changed": before != _read_bytes(directory / bundle.MANIFEST)}


def _read_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def results(kube: Kube, args: Obj, check_mode: bool) -> Obj:
    """The report of a Certification (`args["certification"]`) or of one Workflow, and its files under `dest`."""
    namespace = args["namespace"]
    source, snapshot_changed = "cluster", False
    warnings: list[str] = []
    if args["certification"]:
        cert = kube.get(Ref(API_VERSION, CERTIFICATION, namespace, args["certification"]))
        if cert is None:
            raise InputError("certification", f'Certification "{args["certification"]}" not found in namespace '
                                              f'"{namespace}"')
        data = [] if args["from_snapshot"] else certification_data(kube, cert, bool(args.get("burn_in_slow_is_failure")))
        # Asked for, or every Workflow is gone (deleted after the run): the report the last run kept.
        kept = from_snapshot(kube, cert) if args["from_snapshot"] or not any(c["workflow"] for c in data) else None
        if kept is not None:
            built, source = kept, "snapshot"
        elif args["from_snapshot"]:
            raise InputError("from_snapshot", f"Certification {namespace}/{args['certification']} has no report "
                                              f"snapshot (ConfigMap {snapshot.name(args['certification'])}): run "
                                              "certification_results without from_snapshot to build one")
        else:
            built, enforced = _compared(kube, cert, data, args, check_mode, warnings)
            snapshot_changed, warning = store_snapshot(kube, cert, report_json(built), check_mode)
            snapshot_changed |= enforced
            warnings += [warning] if warning else []
    else:
        if args["from_snapshot"]:
            raise InputError("from_snapshot", "only a Certification's report is kept in the cluster; give "
                                              "certification instead of workflow or workload_run")
        built, data = _single_report(kube, namespace, args)
    if args.get("annotate_nodes") and args["certification"]:
        snapshot_changed |= annotate.annotate_nodes(kube, built, namespace, args["certified_for_days"], check_mode)
    out: Obj = {"changed": snapshot_changed, "result": built["result"], "report": built, "source": source,
                "summary": certreport.summary(built)}
    if args["certification"]:
        out["snapshot"] = snapshot.name(args["certification"])
        out["comparison"] = built.get("comparison")
    stores = [c["stored"] for c in data if c.get("stored") is not None]
    warnings += [f"evidence of Workflow {e.namespace}/{e.workflow}: {line}" for e in stores
                 for line in [*e.problems, *e.ignored]]
    if warnings:
        out["warnings"] = warnings
    if args["dest"]:
        out["changed"] |= write_files(args["dest"], render_files(built), check_mode)
        out["files"] = [os.path.join(args["dest"], name) for name in FILES]
    if args.get("bundle_dir"):
        written = _bundle(kube, Path(args["bundle_dir"]), built, stores if source == "cluster" else None, check_mode)
        out["changed"] |= written.pop("changed", False)
        out.update(written)
    return out
