"""The bad-input corpora's cases as module arguments: each module's good base arguments, a case's bad values over
them, and the files a case names (tests/integration/test_bad_input_live.py, tests/unit/faces/test_bad_input_args.py)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

NAMESPACE = "badinput"
CATEGORY = "communication/nccl-all-reduce"
# A "billion laughs": nine levels, each aliasing the one before nine times (9^9 strings once expanded).
BOMB = "lol: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]\n" for i in range(1, 9))


def base_args(kubeconfig: Path, out: Path, workflow: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each module's arguments that are fine on their own (`workflow`: a valid Workflow for workflow_render), so a
    case's one bad value is what it is refused for."""
    auth = {"kubeconfig": str(kubeconfig)}
    return {
        "certification_run": {**auth, "name": "bad-input", "namespace": NAMESPACE, "categories": [CATEGORY],
                              "timeout": 60, "poll_interval": 0.5},
        "workflow_run": {**auth, "name": "nccl", "namespace": NAMESPACE, "timeout": 30, "poll_interval": 0.5},
        "workloadrun_run": {**auth, "name": "bad-input-run", "namespace": NAMESPACE, "timeout": 60, "poll_interval": 0.5,
                            "spec": {"image": "img:1", "numNodes": 1, "framework": {"exec": {"command": ["nvidia-smi"]}}}},
        "certification_results": {**auth, "certification": "bad-input", "namespace": NAMESPACE,
                                  "dest": str(out / "report")},
        "cluster_info": auth,
        "workflow_render": {"definition": workflow, "nodes_file": str(out / "nodes.yaml")},
        "fleet_report": {"report_dir": [str(out)]},
        "evidence_check": {"path": str(out / "nodes.yaml"), "format": "dcgm-diag-text"},
        "bundle_read": {"path": str(out)},
        "golden_generate": {"src": [str(out)], "dest": str(out / "golden.yaml")},
        "certify": {"certify_certification_name": "bad-input", "certify_namespace": NAMESPACE,
                    "certify_categories": [CATEGORY], "certify_timeout": 60, "certify_poll_interval": 0.5},
        "results": {"results_certification_name": "bad-input", "results_namespace": NAMESPACE,
                    "results_dest": str(out / "report")},
        "crds": {},
    }


def generated(value: Any) -> Any:
    """The corpus's shorthand for big inputs: "@N text" is N copies of text, "@N labels" N distinct labels."""
    if isinstance(value, str) and value.startswith("@") and value[1:].split(" ")[0].isdigit():
        count, _sep, what = value[1:].partition(" ")
        if what == "labels":
            return {f"label-{i}": "x" for i in range(int(count))}
        return [what] * int(count)
    if isinstance(value, dict):
        return {k: generated(v) for k, v in value.items()}
    return value


def merged(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = {**base, **generated(over)}
    return {k: v for k, v in out.items() if v is not None}  # `~` in a case drops a base argument


def case_args(case: dict[str, Any], bases: dict[str, dict[str, Any]], out: Path) -> dict[str, Any]:
    """The case's module arguments or role variables, the files it names written under `out`."""
    given = merged(bases[case.get("module") or case["role"]], case.get("args") or case.get("vars") or {})
    for option, text in (case.get("files") or {}).items():
        path = out / f"{case['id']}-{option}.yaml"
        path.write_text(BOMB if text == "@bomb" else text)
        given[option] = str(path)
    return given
