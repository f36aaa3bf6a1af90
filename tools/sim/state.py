"""Where clusters live on disk and what we remember about each one."""
from __future__ import annotations

import json
import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .stages import DEFAULT_POD_MILLISECONDS, KUBELET_BACKOFF_MS

NAME_RE = re.compile(r"^[a-z0-9]([-a-z0-9]{0,30}[a-z0-9])?$")


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
    links: list[list] = field(default_factory=list)  # link faults: [domain label, domain, peer, factor]
    pod_ms: int = DEFAULT_POD_MILLISECONDS  # how long a Job pod runs, unless its namespace has a duration of its own
    namespace_pod_ms: dict[str, int] = field(default_factory=dict)
    backoff_ms: int = KUBELET_BACKOFF_MS  # the kubelet's first back-off before restarting a crashed container

    @staticmethod
    def path(name: str) -> Path:
        return cluster_dir(name) / "cre-sim.json"

    def save(self) -> None:
        tmp = self.path(self.name).with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(self), indent=2, sort_keys=True))
        tmp.replace(self.path(self.name))

    @classmethod
    def load(cls, name: str) -> ClusterState:
        return cls(**json.loads(cls.path(name).read_text()))


def known_clusters() -> list[str]:
    root = workdir() / "clusters"
    return sorted(p.name for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
