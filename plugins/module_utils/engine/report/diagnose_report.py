"""A diagnose category in the report (spec measurements.md §6): its rounds, what it made of each node, and the
Markdown and JUnit renderings of its findings."""
from __future__ import annotations

from ..api.vocabulary import FAILED as PHASE_FAILED
from ..api.vocabulary import SUCCEEDED as PHASE_SUCCEEDED
from .text import NODE_FAILED, NODE_PASSED, md_cell, natural

# A diagnose group's stage, by its name's prefix (spec measurements.md §6.3), in the order the stages run.
_STAGE_PREFIXES = (("screen-no-nvl-", "intra-screening-no-nvl"), ("screen-", "intra-screening"),
                   ("inter-domain", "inter-screening"), ("bisect-", "bisection"), ("intra-", "bisection"),
                   ("cross-", "cross-boundary"), ("confirm-", "confirmation"))
_STAGE_ORDER = list(dict.fromkeys(stage for _prefix, stage in _STAGE_PREFIXES))


def _stage_of(group_name: str) -> str:
    return next((stage for prefix, stage in _STAGE_PREFIXES if group_name.startswith(prefix)), "")


def diagnose_rounds(orchestration: dict) -> list[dict]:
    """The diagnose rounds the status still shows: any in iterationHistory, then the current groups, numbered
    with diagnose's own round (the last one counted once complete, else the one running); for each its stage(s)
    as its groups' names tell, its groups, and how many of them passed and failed so far."""
    diagnose = orchestration.get("diagnose") or {}
    done = int(diagnose.get("round") or 0)
    current = done if diagnose.get("stage") == "complete" else done + 1
    rounds = [(entry.get("iteration", 0), entry.get("groups") or []) for entry in orchestration.get("iterationHistory") or []]
    rounds.append((current, orchestration.get("groups") or []))
    out = []
    for number, members in rounds:
        if not members:
            continue
        stages = sorted({s for g in members if (s := _stage_of(g.get("name", "")))}, key=_STAGE_ORDER.index)
        out.append({"round": number, "stage": ", ".join(stages), "groups": [g.get("name", "") for g in members],
                    "passed": sum(1 for g in members if g.get("phase") == PHASE_SUCCEEDED),
                    "failed": sum(1 for g in members if g.get("phase") == PHASE_FAILED)})
    return out


def confirmed_nodes(cat: dict) -> list[str]:
    """The nodes diagnose confirmed faulty: those its failed-nodes records blame."""
    return [n for n, v in cat["nodes"].items() if v["status"] == NODE_FAILED and v["reason"]]


def diagnose_role(diagnose: dict, confirmed: list[str], node: str) -> str:
    """What diagnose made of a node: confirmed faulty, healthy (a suspect cleared is healthy again), on a side of
    an infrastructure fault, else the suspicion it is still under (the no-NVL one says more: it failed with
    NVLink out of the way)."""
    infrastructure = [n for f in diagnose.get("infrastructureFaults") or [] for n in
                      [*(f.get("groupA") or []), *(f.get("groupB") or [])]]
    for role, members in (("confirmed", confirmed), ("healthy", diagnose.get("healthyNodes")),
                          ("infrastructure", infrastructure), ("no-nvl-suspect", diagnose.get("noNVLSuspectNodes")),
                          ("suspect", diagnose.get("suspectNodes"))):
        if node in (members or []):
            return role
    return ""


def _names(nodes: list[str] | None) -> str:
    """`<count>` and the names in brackets, as the Summary lists failed nodes."""
    nodes = list(nodes or [])
    return f"{len(nodes)}" + (f" ({', '.join(nodes)})" if nodes else "")


def diagnose_lines(cat: dict) -> list[str]:
    """The diagnose findings: stage and rounds, the node sets, each round, the screening results and the
    infrastructure faults."""
    diagnose = cat.get("diagnose")
    if not diagnose:
        return []
    confirmed = confirmed_nodes(cat)
    lines = ["### Diagnose", "", "| Field | Value |", "|---|---|", f"| Stage | {md_cell(diagnose.get('stage') or '-')} |",
             f"| Rounds | {diagnose.get('round', 0)} |",
             f"| Healthy Nodes | {len(diagnose.get('healthyNodes') or [])} |",
             f"| Suspect Nodes | {md_cell(_names(diagnose.get('suspectNodes')))} |",
             f"| No-NVL Suspect Nodes | {md_cell(_names(diagnose.get('noNVLSuspectNodes')))} |",
             f"| Confirmed Faulty Nodes | {md_cell(_names(confirmed))} |",
             f"| Infrastructure Faults | {len(diagnose.get('infrastructureFaults') or [])} |"]
    if diagnose.get("representativeNodes"):
        lines.append(f"| Representative Nodes | {md_cell(', '.join(diagnose['representativeNodes']))} |")
    lines.append("")
    if cat.get("diagnoseRounds"):
        lines += ["| Round | Stage | Groups | Passed | Failed |", "|---|---|---|---|---|"]
        lines += [f"| {r['round']} | {md_cell(r['stage'] or '-')} | {md_cell(', '.join(r['groups']))} | {r['passed']} "
                  f"| {r['failed']} |" for r in cat["diagnoseRounds"]]
        lines.append("")
    screening = [(f"{domain}{suffix}", result) for key, suffix in (("screeningResults", ""),
                                                                   ("noNVLScreeningResults", " (no NVL)"))
                 for domain, result in sorted((diagnose.get(key) or {}).items(), key=lambda i: natural(i[0]))]
    if screening:
        lines += ["| Screening Domain | Nodes | Result |", "|---|---|---|"]
        lines += [f"| {md_cell(name)} | {md_cell(', '.join(result.get('nodes') or []))} | "
                  f"{NODE_PASSED if result.get('passed') else NODE_FAILED} |" for name, result in screening]
        lines.append("")
    if faults := diagnose.get("infrastructureFaults"):
        lines += ["| Infrastructure Fault | Stage | Group A | Group B |", "|---|---|---|---|"]
        lines += [f"| {md_cell(f.get('domain', ''))} | {md_cell(f.get('stage', ''))} | "
                  f"{md_cell(', '.join(f.get('groupA') or []))} | {md_cell(', '.join(f.get('groupB') or []))} |"
                  for f in faults]
        lines.append("")
    return lines


def diagnose_properties(cat: dict) -> dict[str, str]:
    """The suite's diagnose properties (JUnit): stage, rounds and the node sets."""
    diagnose = cat.get("diagnose")
    if not diagnose:
        return {}
    return {"diagnose.stage": diagnose.get("stage", ""), "diagnose.rounds": str(diagnose.get("round", 0)),
            "diagnose.healthyNodes": ",".join(diagnose.get("healthyNodes") or []),
            "diagnose.suspectNodes": ",".join(diagnose.get("suspectNodes") or []),
            "diagnose.noNVLSuspectNodes": ",".join(diagnose.get("noNVLSuspectNodes") or []),
            "diagnose.confirmedNodes": ",".join(confirmed_nodes(cat)),
            "diagnose.infrastructureFaults": str(len(diagnose.get("infrastructureFaults") or []))}
