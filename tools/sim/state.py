"""Where clusters live on disk and what we remember about each one."""
from __future__ import annotations

import fcntl
import json
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .logs.dcgm_tests import DEFAULT_LAYOUT
from .stages import DEFAULT_POD_MILLISECONDS, KUBELET_BACKOFF_MS

NAME_RE = re.compile(r"^[a-z0-9]([-a-z0-9]{0,30}[a-z0-9])?$")
STATE_FILE = "cre-sim.json"   # in the cluster's dir, beside its kubeconfig (where the agent finds it)


def home() -> Path:
    """Root of the binaries cache and the clusters' work dirs (outside the repo)."""
    return Path(os.environ.get("CRE_SIM_HOME", Path.home() / ".cache" / "cre-sim"))


def workdir() -> Path:
    """KWOK_WORKDIR: kwokctl keeps `clusters/<name>/` below it."""
    return home() / "run"


def cluster_dir(name: str) -> Path:
    return workdir() / "clusters" / name


@dataclass
class ClusterState:
    """Saved as `cre-sim.json` beside kwokctl's files; the source of truth for down/fault/status."""

    name: str
    profile: str
    nodes: int
    kubeconfig: str
    pids: dict[str, int] = field(default_factory=dict)
    ports: dict[str, int] = field(default_factory=dict)
    faults: dict[str, str] = field(default_factory=dict)  # node -> kind
    # node -> GPU index (a string: JSON keys) -> the DCGM tests failing on it, or `all-skip` (`fault --kind dcgm`)
    dcgm_faults: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    # node -> GPU index (a string) -> GEMM burn-in fault kind -> its parameters (`fault --kind gpu-slow ...`)
    gpu_faults: dict[str, dict[str, dict[str, dict]]] = field(default_factory=dict)
    # node -> the node-drift configuration faults [{field, gpu (None for a NIC field)}] (`fault --kind config`)
    config_faults: dict[str, list[dict]] = field(default_factory=dict)
    dcgm_layout: int = DEFAULT_LAYOUT  # what `dcgmi diag --json` prints: DCGM 3.x's layout or 4.x's
    links: list[list] = field(default_factory=list)  # link faults: [domain label, domain, peer, factor]
    pod_ms: int = DEFAULT_POD_MILLISECONDS  # how long a Job pod runs, unless its namespace has a duration of its own
    namespace_pod_ms: dict[str, int] = field(default_factory=dict)
    backoff_ms: int = KUBELET_BACKOFF_MS  # the kubelet's first back-off before restarting a crashed container
    log_style: dict[str, str] = field(default_factory=dict)  # how workloads print (log_style.CHOICES), unless
    namespace_log_style: dict[str, dict[str, str]] = field(default_factory=dict)  # their namespace says otherwise

    @staticmethod
    def path(name: str) -> Path:
        return cluster_dir(name) / STATE_FILE

    def save(self) -> None:
        tmp = self.path(self.name).with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(self), indent=2, sort_keys=True))
        tmp.replace(self.path(self.name))

    @classmethod
    def load(cls, name: str) -> ClusterState:
        return cls(**json.loads(cls.path(name).read_text()))

    @classmethod
    @contextmanager
    def update(cls, name: str) -> Iterator[ClusterState]:
        """The state, saved when the block ends; held against other processes' updates meanwhile (test workers
        that share a cluster set their namespaces' settings at once, and a load-change-save would lose some)."""
        with open(cluster_dir(name) / "cre-sim.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                state = cls.load(name)
                yield state
                state.save()
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)


def known_clusters() -> list[str]:
    root = workdir() / "clusters"
    return sorted(p.name for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
