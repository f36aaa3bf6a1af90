"""How the simulated workloads print their logs: a style per cluster, overridden field by field per namespace.

Each field picks one shape a real tool prints (see HELP); the first choice of each is what the simulator has
always printed. `cluster.log_style` keeps the styles in the cluster's state file; the agent reads them from there
(`Source`), so a style set just before a run shows in it: tests that share a cluster set their own namespace's.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

# field -> its choices, the default first.
CHOICES: dict[str, tuple[str, ...]] = {
    "nccl_prefix": ("none", "srun", "tag-output", "rank"),
    "nccl_table": ("current", "no-root"),
    "nccl_extra_test": ("none", "sendrecv", "all_gather"),
    "transport": ("brief", "platform", "socket"),
    "training": ("megatron", "megatron-no-timestamp", "megatron-skipped", "megatron-no-tflops", "nemo2"),
}

HELP = """log styles (log-style [--namespace NS] --FIELD VALUE ...; each first choice is the default, no field clears):
  --nccl-prefix      none | srun (`srun -l`: ` 0: `) | tag-output (`mpirun --tag-output`: `[1,0]<stdout>:`)
                     | rank (torchrun's `--log-line-prefix-template '[rank${rank}]:'`): before each line of a rank
  --nccl-table       current | no-root (nccl-tests <= 2.9, 2019-2021: no root column, a float `error` column,
                     times over 10 ms as integers; all_gather and sendrecv without redop either, and a log
                     holding sendrecv_perf is 2.10's, whose type column is 8 wide)
  --nccl-extra-test  none | sendrecv | all_gather: a second test after the asked one, each traced by the shell
  --transport        brief (one `Using network` line) | platform (every rank's NCCL_DEBUG=INFO init lines of the
                     platform's network: AWS Libfabric, GCP FasTrak, else IB) | socket (the same lines of a run that
                     fell back to TCP sockets, and a socket's bus bandwidth across nodes)
  --training         megatron | megatron-no-timestamp (Megatron-LM of late 2023) | megatron-skipped (fp16 loss
                     scaler skips: lines without `lm loss`) | megatron-no-tflops (no --log-throughput)
                     | nemo2 (`Training epoch 0, iteration 9/4999 | ... | train_step_timing in s: 0.05`)
"""


@dataclass(frozen=True)
class Style:
    nccl_prefix: str = CHOICES["nccl_prefix"][0]
    nccl_table: str = CHOICES["nccl_table"][0]
    nccl_extra_test: str = CHOICES["nccl_extra_test"][0]
    transport: str = CHOICES["transport"][0]
    training: str = CHOICES["training"][0]


DEFAULT = Style()


def problems(style: dict[str, str]) -> list[str]:
    """What is wrong with a set of style fields (unknown fields or values), empty when nothing is."""
    out = []
    for key, value in style.items():
        if key not in CHOICES:
            out.append(f"unknown log style field {key!r}: must be one of {', '.join(CHOICES)}")
        elif value not in CHOICES[key]:
            out.append(f"unknown {key} {value!r}: must be one of {', '.join(CHOICES[key])}")
    return out


def resolve(cluster: dict[str, str], namespaces: dict[str, dict[str, str]], namespace: str) -> Style:
    """The style of a namespace's workloads: its own fields over the cluster's, the cluster's over the defaults."""
    return Style(**{**cluster, **namespaces.get(namespace, {})})


class Source:
    """The styles one cluster's state file holds, as the agent reads them: a stat per look, a read only when the
    file changed. The file is replaced whole (`ClusterState.save`), so a read never sees half of it and each save
    is a new inode: two saves within one tick of the clock are still told apart."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._seen: tuple[int, int] | None = None
        self._styles: tuple[dict[str, str], dict[str, dict[str, str]]] = ({}, {})

    def style(self, namespace: str) -> Style:
        try:
            stat = os.stat(self.path) if self.path else None
        except FileNotFoundError:
            stat = None
        seen = (stat.st_ino, stat.st_mtime_ns) if stat else None
        if seen != self._seen:
            saved = json.loads(self.path.read_text()) if self.path and seen else {}
            self._seen, self._styles = seen, (saved.get("log_style") or {}, saved.get("namespace_log_style") or {})
        return resolve(*self._styles, namespace)
