"""Diagnose mode's stage machine (workflow spec §9, spec/measurements.md §6): what the end of a round decides.

A round is the Workflow's current groups; when all are terminal and the bandwidth gate has a verdict on each
(`diagnose_gate`), `complete_round` turns the verdicts into the next round's groups, or the final verdict.
Everything it reads is in `status.orchestration.diagnose` and the group list, and everything it decides is
written back there in one status write, so a run killed anywhere repeats the same decision.

Stages: `intra-screening` (one group per domain or √N chunk) → `intra-screening-no-nvl` (each domain again
with MNNVL off, only when the template turns it on) → `inter-screening` (one healthy node of each domain) →
`bisection` of the failed sets, with `cross-boundary` probes where two halves pass alone but failed together
→ `confirmation` of each suspect paired with a healthy node → `complete`.

Choices where the specification is silent (docs/nvcre-compatibility.md):
- A pass without NVL does not clear a node that failed with NVL (else an NVLink fault would vanish).
- A failed set of at most minGroupSize nodes that are all healthy (two representatives whose link fails)
  cannot be a node fault: it is probed like two halves that passed alone.
- A probe's `domain` and a fault's `domain` name the screening domains its nodes belong to (comma-joined);
  `originStage` is the screening stage the probed nodes failed in: `inter-screening` when they span domains.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from ..api.vocabulary import FAILED, SUCCEEDED, WORKLOAD_FAILED
from . import diagnose_bisect as bisection
from .diagnose_gate import Verdict

INTRA = "intra-screening"
INTRA_NO_NVL = "intra-screening-no-nvl"
INTER = "inter-screening"
BISECTION = "bisection"
CROSS_BOUNDARY = "cross-boundary"
CONFIRMATION = "confirmation"
COMPLETE = "complete"

NO_NVL_PREFIX = "screen-no-nvl-"
INTER_GROUP = "inter-domain"
JOB_COMPLETED = "JobCompleted"
ITERATIONS_FAILED = "IterationsFailed"

Obj = dict[str, Any]


def initial_status() -> Obj:
    return {"stage": INTRA, "round": 0}


@dataclass
class Round:
    """The decision at the end of a round: wait (`pending`), the next round, or the final verdict."""

    pending: bool = False
    diagnose: Obj = field(default_factory=dict)
    groups: list[Obj] = field(default_factory=list)
    phase: str = ""                 # "" (InProgress, reason IterationCompleted), Succeeded or Failed
    reason: str = "IterationCompleted"
    message: str = ""
    failed_nodes: list[Obj] = field(default_factory=list)   # the failed-nodes ConfigMap entries of a verdict


def no_mnnvl(group_name: str, nodes: list[str], diagnose: Obj) -> bool:
    """A group whose Job runs with MNNVL forced to 0 (when the template turns it on): the no-NVL re-test,
    probes that do not come from within one NVLink domain, and bisection or confirmation groups holding a node
    that failed only without NVL."""
    if group_name.startswith(NO_NVL_PREFIX):
        return True
    if group_name.startswith("cross-"):
        return ((diagnose.get("crossBoundaryState") or {}).get("originStage") or INTRA) != INTRA
    if group_name.startswith(("bisect-", "confirm-")):
        return bool(set(nodes) & set(diagnose.get("noNVLSuspectNodes") or []))
    return False


def complete_round(diagnose: Obj, groups: list[Obj], verdicts: dict[str, Verdict], min_group_size: int,
                   mnnvl: bool, topology: bool, failures: dict[str, list[Obj]]) -> Round:
    """The end of a round whose groups are all terminal. `verdicts` holds the gate's verdict per group name,
    `failures` each failed group's Job `failedNodes`; `topology` tells screening by domain from chunks."""
    if any(v.pending for v in verdicts.values()):
        return Round(pending=True)
    return _Diagnosis(diagnose, groups, verdicts, max(min_group_size, 1), mnnvl, topology, failures).run()


class _Diagnosis:
    def __init__(self, diagnose: Obj, groups: list[Obj], verdicts: dict[str, Verdict], min_group_size: int,
                 mnnvl: bool, topology: bool, failures: dict[str, list[Obj]]) -> None:
        self.d: Obj = copy.deepcopy(diagnose)
        self.groups = groups
        self.verdicts = verdicts
        self.min = min_group_size
        self.mnnvl = mnnvl
        self.topology = topology
        self.failures = failures
        self.round = int(self.d.get("round") or 0) + 1
        self.d["round"] = self.round
        self.healthy = set(self.d.get("healthyNodes") or [])
        self.suspects = set(self.d.get("suspectNodes") or [])
        self.domain_of: dict[str, str] | None = None

    # ------------------------------------------------------------------ helpers

    def passed(self, group: Obj) -> bool:
        return self.verdicts.get(group["name"], Verdict(False)).passed

    def nodes(self, group: Obj) -> list[str]:
        return list(group.get("nodes") or [])

    def domains(self, nodes: list[str]) -> list[str]:
        """The screening domains (or chunks) the nodes were screened in."""
        if self.domain_of is None:  # once per round: screeningResults is written once, by the first round
            self.domain_of = {n: key for key, result in (self.d.get("screeningResults") or {}).items()
                              for n in result.get("nodes") or []}
        return sorted({self.domain_of[n] for n in nodes if n in self.domain_of})

    def group(self, name: str, nodes: list[str]) -> Obj:
        return bisection.group(name, nodes, self.domains(nodes) if self.topology else None)

    def save(self) -> None:
        for key, values in (("healthyNodes", self.healthy), ("suspectNodes", self.suspects)):
            if values:
                self.d[key] = sorted(values)
            else:
                self.d.pop(key, None)

    def next_round(self, stage: str, groups: list[Obj], message: str) -> Round:
        self.d["stage"] = stage
        self.save()
        return Round(diagnose=self.d, groups=groups, message=message)

    def verdict(self, phase: str, reason: str, message: str, failed_nodes: list[Obj] | None = None) -> Round:
        self.d["stage"] = COMPLETE
        self.save()
        return Round(diagnose=self.d, phase=phase, reason=reason, message=message, failed_nodes=failed_nodes or [])

    # ------------------------------------------------------------------ stages

    def run(self) -> Round:
        stage = self.d.get("stage") or INTRA
        if stage == INTRA:
            return self.intra_screening()
        if stage == INTRA_NO_NVL:
            return self.no_nvl_screening()
        if stage == INTER:
            return self.inter_screening()
        if stage == CONFIRMATION:
            return self.confirmation()
        return self.bisection_round()

    def intra_screening(self) -> Round:
        results: Obj = {}
        for group in self.groups:
            key = (group.get("domains") or [group["name"]])[0]
            passed = self.passed(group)
            results[key] = {"nodes": self.nodes(group), "passed": passed}
            (self.healthy if passed else self.suspects).update(self.nodes(group))
        self.d["screeningResults"] = results
        self.domain_of = None
        if not self.mnnvl:
            return self.after_screening()
        retest = [bisection.group(f"{NO_NVL_PREFIX}{key}", results[key]["nodes"], [key] if self.topology else None)
                  for key in sorted(results)]
        return self.next_round(INTRA_NO_NVL, retest, f"Intra-screening with NVL done: {len(self.healthy)} healthy, "
                               f"{len(self.suspects)} suspect. Re-testing without NVL.")

    def no_nvl_screening(self) -> Round:
        results: Obj = {}
        no_nvl = set(self.d.get("noNVLSuspectNodes") or [])
        for group in self.groups:
            key = group["name"].removeprefix(NO_NVL_PREFIX)
            nodes = self.nodes(group)
            passed = self.passed(group)
            results[key] = {"nodes": nodes, "passed": passed}
            if passed:
                self.healthy.update(n for n in nodes if n not in self.suspects)
            else:
                self.suspects.update(nodes)
                no_nvl.update(nodes)
                self.healthy.difference_update(nodes)
        self.d["noNVLScreeningResults"] = results
        if no_nvl:
            self.d["noNVLSuspectNodes"] = sorted(no_nvl)
        return self.after_screening()

    def after_screening(self) -> Round:
        """Representatives (the first healthy node of each screened group) test the fabric between domains."""
        reps = [next(n for n in self.nodes(g) if n in self.healthy) for g in self.groups
                if any(n in self.healthy for n in self.nodes(g))]
        self.d["representativeNodes"] = reps
        if len(reps) < 2:
            if not self.suspects:
                return self.verdict(SUCCEEDED, JOB_COMPLETED, "All domains healthy, no faults detected")
            return self.start_bisection(self.failed_domain_sets())
        return self.next_round(INTER, [self.group(INTER_GROUP, reps)],
                               f"Screening done: {len(self.healthy)} healthy, {len(self.suspects)} suspect nodes. "
                               "Testing inter-domain fabric.")

    def failed_domain_sets(self) -> list[list[str]]:
        """The suspects of each domain that failed a screening pass, in domain order."""
        screened = self.d.get("screeningResults") or {}
        retested = self.d.get("noNVLScreeningResults") or {}
        sets = []
        for key in sorted(set(screened) | set(retested)):
            results = [r for r in (screened.get(key), retested.get(key)) if r is not None]
            if all(r.get("passed") for r in results):
                continue
            nodes = list(dict.fromkeys(n for r in results for n in r.get("nodes") or []))
            if members := [n for n in nodes if n in self.suspects]:
                sets.append(members)
        return sets

    def inter_screening(self) -> Round:
        sets = self.failed_domain_sets()
        for group in self.groups:
            if not self.passed(group):
                sets.append(self.nodes(group))
        if not sets:
            return self.verdict(SUCCEEDED, JOB_COMPLETED, "All screening passed, no faults detected")
        return self.start_bisection(sets)

    def start_bisection(self, sets: list[list[str]]) -> Round:
        planned = bisection.bisect(sets, self.round, self.min)
        if planned is None:
            return self.converge(self.healthy_sets(sets), [], [])
        groups = [self.group(name, nodes) for name, nodes in planned]
        return self.next_round(BISECTION, groups, f"Bisection round {self.round}: {len(groups)} groups")

    def healthy_sets(self, failed_small: list[list[str]]) -> list[Obj]:
        """Probes for failed small sets of healthy nodes (their fault lies between them); the other nodes of
        failed small sets become suspects."""
        probes = []
        for nodes in failed_small:
            if len(nodes) >= 2 and all(n in self.healthy for n in nodes):
                half_a, half_b = bisection.split(nodes)
                probes.append(self.probe(half_a, half_b))
                self.healthy.difference_update(nodes)  # like halves that passed alone: suspect until probed
            else:
                self.suspects.update(nodes)
        return probes

    def probe(self, half_a: list[str], half_b: list[str], probe_round: int = 1) -> Obj:
        return {"domain": ",".join(self.domains(half_a + half_b)), "halfA": half_a, "halfB": half_b,
                "probeRound": probe_round}

    def origin(self, probes: list[Obj]) -> str:
        """The screening stage the probed nodes come from: across domains, without NVL, or within one domain."""
        nodes = [n for p in probes for n in (p.get("halfA") or []) + (p.get("halfB") or [])]
        if any(len(self.domains((p.get("halfA") or []) + (p.get("halfB") or []))) > 1 for p in probes):
            return INTER
        if set(nodes) & set(self.d.get("noNVLSuspectNodes") or []):
            return INTRA_NO_NVL
        return INTRA

    def bisection_round(self) -> Round:
        """A round of bisect-* and cross-* groups: halves that failed are split again or become suspects,
        halves that both passed are probed, and probes are settled or narrowed."""
        splits: list[list[str]] = []
        small_failed: list[list[str]] = []
        by_name = {g["name"]: g for g in self.groups}
        for group in self.groups:
            if not group["name"].startswith("bisect-"):
                continue
            nodes = self.nodes(group)
            if self.passed(group):
                self.healthy.update(nodes)
            elif len(nodes) <= self.min:
                small_failed.append(nodes)
            else:
                splits.append(nodes)
        new_probes = []
        for group in self.groups:
            stem = bisection.siblings(group["name"])
            other = by_name.get(f"{stem}b") if stem and group["name"].endswith("a") else None
            if other is not None and self.passed(group) and self.passed(other):
                new_probes.append(self.probe(self.nodes(group), self.nodes(other)))
                self.healthy.difference_update(self.nodes(group) + self.nodes(other))
        new_probes += self.healthy_sets(small_failed)
        return self.converge(new_probes, splits, self.settle_probes())

    def settle_probes(self) -> list[Obj]:
        """This round's cross-<i>-mix* results on the pending probes: restored, faults, or narrowed further."""
        state = self.d.get("crossBoundaryState") or {}
        pending = state.get("pendingProbes") or []
        by_name = {g["name"]: g for g in self.groups}
        narrowing = []
        for i, probe in enumerate(pending):
            runs = [by_name[f"cross-{i}-mix{k}"] for k in range(2) if f"cross-{i}-mix{k}" in by_name]
            outcome, settled = bisection.settle(probe, [self.passed(g) for g in runs])
            settled = {**settled, "domain": ",".join(self.domains((settled.get("halfA") or []) +
                                                                  (settled.get("halfB") or [])))}
            kept = set() if outcome == "restore" else set((settled.get("halfA") or []) + (settled.get("halfB") or []))
            # the nodes a passing mix cleared (all of them when every mix passed) are healthy again
            self.healthy.update(n for n in (probe.get("halfA") or []) + (probe.get("halfB") or []) if n not in kept)
            if outcome == "fault":
                fault = {"domain": settled.get("domain", ""), "groupA": settled.get("halfA") or [],
                         "groupB": settled.get("halfB") or [], "stage": state.get("originStage") or INTRA}
                self.d.setdefault("infrastructureFaults", []).append(fault)
            elif outcome == "probe":
                narrowing.append(settled)
        if pending:
            state["pendingProbes"] = []
        return narrowing

    def converge(self, new_probes: list[Obj], splits: list[list[str]], narrowing: list[Obj]) -> Round:
        """The next round from what is left to split and to probe; confirmation or the verdict when nothing is."""
        probes = narrowing + new_probes
        groups: list[Obj] = []
        if splits:
            groups += [self.group(name, nodes) for name, nodes in bisection.bisect(splits, self.round, self.min) or []]
        if probes:
            state = self.d.setdefault("crossBoundaryState", {})
            if not narrowing:  # a new probing episode: its origin is where these nodes failed
                state["originStage"] = self.origin(new_probes)
            state["pendingProbes"] = probes
            for i, probe in enumerate(probes):
                groups += [self.group(f"cross-{i}-mix{k}", mix) for k, mix in enumerate(bisection.mixes(probe))]
            message = (f"Both-halves-pass detected in {len(new_probes)} groups. Probing cross-boundary infrastructure."
                       if new_probes else f"Cross-boundary probing: narrowing {len(narrowing)} infrastructure faults")
            return self.next_round(CROSS_BOUNDARY, groups, message)
        if groups:
            return self.next_round(BISECTION, groups, f"Bisection round {self.round}: {len(groups)} groups")
        return self.confirm_or_finish()

    def confirm_or_finish(self) -> Round:
        candidates = sorted(self.suspects - self.healthy)
        if candidates:
            if not self.healthy:
                message = f"No healthy reference node; {len(candidates)} suspects marked failed"
                entries = [{"name": n, "reason": WORKLOAD_FAILED, "message": message} for n in candidates]
                return self.verdict(FAILED, ITERATIONS_FAILED, message, entries)
            references = sorted(self.healthy)
            groups = [self.group(f"confirm-{i}", [s, references[i % len(references)]])
                      for i, s in enumerate(candidates)]
            return self.next_round(CONFIRMATION, groups,
                                   f"Bisection converged: {len(candidates)} suspects, starting confirmation")
        return self.finish(0)

    def finish(self, confirmed: int, entries: list[Obj] | None = None) -> Round:
        faults = len(self.d.get("infrastructureFaults") or [])
        if confirmed:
            return self.verdict(FAILED, ITERATIONS_FAILED, f"Diagnosis complete: {confirmed} faulty nodes confirmed",
                                entries)
        if faults:
            return self.verdict(FAILED, ITERATIONS_FAILED, f"Diagnosis complete: {faults} infrastructure faults detected")
        if self.d.get("stage") == CONFIRMATION:
            return self.verdict(SUCCEEDED, JOB_COMPLETED, "All suspects cleared, no faults confirmed")
        if "crossBoundaryState" in self.d:
            return self.verdict(SUCCEEDED, JOB_COMPLETED, "Cross-boundary probing complete: no faults confirmed")
        return self.verdict(SUCCEEDED, JOB_COMPLETED, "Bisection complete: all groups passed")

    def confirmation(self) -> Round:
        entries: list[Obj] = []
        for group in self.groups:
            nodes = self.nodes(group)
            if not nodes:
                continue
            if self.passed(group):
                self.healthy.add(nodes[0])
                continue
            entries.append(self.failed_entry(group, nodes[0]))
        return self.finish(len(entries), entries)

    def failed_entry(self, group: Obj, node: str) -> Obj:
        """The confirmed node's failed-nodes entry: its Job's own, else the gate's reason, else WorkloadFailed."""
        for entry in self.failures.get(group["name"]) or []:
            if entry.get("name") == node:
                return {"name": node, "reason": entry.get("reason", WORKLOAD_FAILED), "message": entry.get("message", "")}
        gate = self.verdicts.get(group["name"], Verdict(False))
        if gate.reason:
            return {"name": node, "reason": gate.reason, "message": gate.message}
        return {"name": node, "reason": WORKLOAD_FAILED,
                "message": f"diagnose confirmation group {group['name']} failed"}
