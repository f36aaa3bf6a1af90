"""The GEMM burn-in's report data (the CertReport category's `burnIn`, issue 41), built from the stored rows.

Pure: the window rows of every node (as the shards hold them; a node's last iteration and attempt) are judged
again node by node with gemm_verdict, so the report says what the Job tier said; then the fleet rule compares the
nodes of one product: a GPU whose median is below FLEET_GPU (0.92x) of the fleet median, or a node whose median
(of its GPUs' medians) is below FLEET_NODE (0.95x), is named slow: a warning, a failure with `slow_fails` (the
category's option, wired by the caller). A GPU named slow also gets a `fleet` finding. Nodes come in natural
order, GPUs by index; a GPU's `series` is every window, warm-up included (the HTML draws it), while its median
is of the steady windows only.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from statistics import median
from typing import Any, Optional, Union

from ..api.naming import natural
from .gemm_burn_in import TEST
from .gemm_verdict import GemmOptions, GemmParameters, judge_rows
from .rows import Row, worst

Obj = dict[str, Any]
FLEET_GPU = 0.92
FLEET_NODE = 0.95


def burn_in_report(rows: Iterable[Union[Row, Obj]], parameters: GemmParameters,  # noqa: UP007 - module_utils typing
                   node_parameters: Optional[Mapping[str, GemmParameters]] = None,  # noqa: UP045 - as above
                   slow_fails: bool = False, skip_is_failure: bool = False) -> Obj:
    """The `burnIn` dict of the contract. `parameters`: the category's (dtype, window, warm-up, floor);
    `node_parameters`: each node's own (its product, floor and default power limit), where its Job had them."""
    runs: dict[str, dict[tuple[int, int], list[Row]]] = {}
    for row in rows:
        row = row if isinstance(row, Row) else Row(**row)
        if row.component == "gpu" and row.test == TEST and row.metric == "tflops" and row.index is not None:
            run = (row.iteration or 0, row.attempt or 0)
            runs.setdefault(row.node, {}).setdefault(run, []).append(row)
    # A node run again (a later iteration or attempt) is judged by its last run, not by every run's windows mixed.
    by_node = {node: of_node[max(of_node)] for node, of_node in runs.items()}
    own = node_parameters or {}
    nodes: list[Obj] = []
    for node in sorted(by_node, key=natural):
        params = own.get(node, parameters)
        verdict = judge_rows(by_node[node], GemmOptions(node, None, skip_is_failure, params))
        gpus = [{key: gpu[key] for key in ("index", "uuid", "median", "outcome", "series", "findings")}
                for gpu in verdict["gpus"]]
        medians = [g["median"] for g in gpus if g["median"] is not None]
        nodes.append({"node": node, "median": _round(median(medians)) if medians else None, "gpus": gpus})
    fleet = _fleet(nodes, {n["node"]: own.get(n["node"], parameters).product for n in nodes}, slow_fails)
    return {
        "dtype": parameters.dtype,
        "windowSeconds": parameters.window_s,
        "warmupSeconds": parameters.warmup_s,
        "floor": {"tflops": parameters.floor_tflops, "provisional": parameters.floor_provisional},
        "nodes": nodes,
        "fleet": fleet,
    }


def _round(value: float) -> float:
    return round(value, 3)


def _fleet(nodes: list[Obj], products: dict[str, str], slow_fails: bool) -> Obj:
    """The fleet median per product (the report's `median` when every node is of one product, else None) and the
    slow GPUs and nodes; a slow GPU's finding is added to it."""
    outcome = "fail" if slow_fails else "warn"
    slow: list[Obj] = []
    medians: dict[str, float] = {}
    for product in sorted(set(products.values())):
        group = [n for n in nodes if products[n["node"]] == product]
        figures = [g["median"] for n in group for g in n["gpus"] if g["median"] is not None]
        if not figures:
            continue
        fleet = medians[product] = median(figures)
        of = f" of {product}" if product else ""
        for node in group:
            slow += _slow_gpus(node, fleet, of, outcome)
            if node["median"] is not None and node["median"] < FLEET_NODE * fleet:
                ratio = node["median"] / fleet
                slow.append({"node": node["node"], "index": None, "ratio": _round(ratio),
                             "message": f"{node['node']}: node median {node['median']:.1f} TFLOPS is {ratio:.3f}x "
                                        f"the fleet median {fleet:.1f}{of} (slow below {FLEET_NODE}x)"})
    slow.sort(key=lambda s: (natural(s["node"]), s["index"] is not None, s["index"] or 0))
    single = len(medians) == 1 and len(set(products.values())) == 1
    return {"median": _round(next(iter(medians.values()))) if single else None, "slow": slow}


def _slow_gpus(node: Obj, fleet: float, of: str, outcome: str) -> list[Obj]:
    out = []
    for gpu in node["gpus"]:
        if gpu["median"] is None or gpu["median"] >= FLEET_GPU * fleet:
            continue
        ratio = gpu["median"] / fleet
        message = (f"GPU {gpu['index']} of {node['node']}: median {gpu['median']:.1f} TFLOPS is {ratio:.3f}x the "
                   f"fleet median {fleet:.1f}{of} (slow below {FLEET_GPU}x)")
        out.append({"node": node["node"], "index": gpu["index"], "ratio": _round(ratio), "message": message})
        gpu["findings"] = [*gpu["findings"], {"rule": "fleet", "outcome": outcome, "message": message}]
        gpu["outcome"] = worst([gpu["outcome"], outcome])
    return out


def fleet_outcome(burn_in: Obj, slow_fails: bool = False) -> Optional[str]:  # noqa: UP045 - as above
    """What the fleet rule gives the category: None when nothing is slow, else warn (fail with `slow_fails`)."""
    return ("fail" if slow_fails else "warn") if burn_in["fleet"]["slow"] else None
