"""The catalog's registry: which categories a run can ask for, and the entry file behind each.

An `Entry` is one `<domain>/<variant>.yaml` file as loaded. Ours live at `catalog/` (the collection root, `ROOT`)
and are loaded once per process (`builtin_registry`); a `Catalog` is ours plus the good entries of a user's own
`catalog_dirs` and the problems of their refused ones. `user.py` loads a user's Catalog, `entries.py` builds an
entry into a WorkflowSpec; both build on this module, and the engine is handed the Catalog its run loaded
(`CertificationWorld.catalog`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache, lru_cache
from pathlib import Path

try:
    import yaml
except ImportError:  # requirements.py: no face runs without it
    from ...requirements import ABSENT as yaml  # type: ignore[no-redef]

from ..api.errors import InputError
from .template import TemplateError

ROOT = Path(__file__).resolve().parents[4] / "catalog"
LIB = ROOT / "_lib"


@dataclass(frozen=True)
class Entry:
    domain: str
    variant: str
    description: str
    template: dict
    per_node: bool = False
    min_gpus: int = 0
    timeout_per_job: str = ""
    parallelism: dict = field(default_factory=dict)
    vars: dict = field(default_factory=dict)
    source: str = ""                      # the user's entry file; empty for a built-in entry
    lib_dirs: tuple[str, ...] = ()        # the user's `_lib` folders searched before ours

    @property
    def key(self) -> str:
        return f"{self.domain}/{self.variant}"

    def read_lib(self, rel: str) -> str:
        """A `_lib` fragment as this entry sees it: its own directory's `_lib` first, then ours."""
        return read_lib_in(self.lib_dirs, rel) if self.lib_dirs else read_lib(rel)

    def parallel(self, arch: str) -> tuple[int, int, int]:
        """TP, PP, EP for the config architecture, else the `default` row (EP 0 = unset)."""
        row = self.parallelism.get(config_arch(arch)) or self.parallelism.get("default") or {}
        return int(row.get("tp", 1)), int(row.get("pp", 1)), int(row.get("ep", 0))

    def valid_nodes(self, nodes: int, gpus_per_node: int, arch: str) -> bool:
        total = nodes * gpus_per_node
        tp, pp, ep = self.parallel(arch)
        if nodes < 1 or total < self.min_gpus or total % (tp * pp):
            return False
        return not ep or (total // (tp * pp)) % ep == 0

    def max_valid_nodes(self, available: int, gpus_per_node: int, arch: str) -> int:
        """The largest node count <= available meeting minGPUs, TP×PP divisibility and DP%EP (0 if none)."""
        return next((n for n in range(available, 0, -1) if self.valid_nodes(n, gpus_per_node, arch)), 0)

    def effective_timeout(self, user_value: str, test_scale: str) -> str:
        """timeoutPerJob: the user's value, then the entry's meta, then 15m in diagnose, else 1h."""
        return user_value or self.timeout_per_job or ("15m" if test_scale == "diagnose" else "1h")


def config_arch(arch: str) -> str:
    """Architecture whose configs an entry uses: gb300 shares gb200's."""
    return "gb200" if arch == "gb300" else arch


@cache
def read_lib(rel: str) -> str:
    """A `_lib` file's text, read once per process; paths may not leave `_lib`."""
    path = (LIB / rel).resolve()
    if LIB.resolve() not in path.parents or not path.is_file():
        raise TemplateError(f"_lib fragment {rel!r} does not exist")
    return path.read_text(encoding="utf-8")


def read_lib_in(dirs: tuple[str, ...], rel: str) -> str:
    """A `_lib` fragment from the first of `dirs` (a user's `_lib` folders) that has it, else ours; paths may not
    leave their `_lib`. Read each time: a user may edit a fragment between two runs of one process."""
    for lib in map(Path, dirs):
        path = (lib / rel).resolve()
        if lib.resolve() in path.parents and path.is_file():
            return path.read_text(encoding="utf-8")
    return read_lib(rel)


def entry_files(root: Path) -> list[Path]:
    """The entry files of a catalog folder: `<domain>/<variant>.yaml`, `_`-folders (fragments) left out."""
    return [path for path in sorted(root.glob("*/*.yaml")) if not path.parent.name.startswith("_")]


def make_entry(path: Path, doc: dict, source: str = "", lib_dirs: tuple[str, ...] = ()) -> Entry:
    meta = doc.get("meta") or {}
    return Entry(domain=path.parent.name, variant=path.stem, description=doc["description"], template=doc["spec"],
                 per_node=bool(doc.get("perNode")), min_gpus=int(meta.get("minGPUs", 0)),
                 timeout_per_job=meta.get("timeoutPerJob", ""), parallelism=meta.get("parallelism") or {},
                 vars=doc.get("vars") or {}, source=source, lib_dirs=lib_dirs)


@lru_cache(maxsize=1)
def builtin_registry() -> dict[tuple[str, str], Entry]:
    """Every entry at catalog/<domain>/<variant>.yaml, loaded once per process."""
    return {(path.parent.name, path.stem): make_entry(path, yaml.safe_load(path.read_text(encoding="utf-8")))
            for path in entry_files(ROOT)}


@dataclass(frozen=True)
class Problem:
    """Why one user entry file is refused: its file, the field path in it ('' for the whole file) and the rule."""

    file: str
    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}: {self.path}: {self.message}" if self.path else f"{self.file}: {self.message}"


@dataclass
class Catalog:
    """Ours plus the user's good entries (`entries`), and the problems of the refused ones by category."""

    entries: dict[tuple[str, str], Entry]
    problems: dict[tuple[str, str], list[Problem]] = field(default_factory=dict)

    def refused(self, domain: str, variant: str) -> list[Problem]:
        return self.problems.get((domain, variant), [])

    def all_problems(self) -> list[Problem]:
        return [p for key in sorted(self.problems) for p in self.problems[key]]


@lru_cache(maxsize=1)
def builtin_catalog() -> Catalog:
    """Ours alone: the Catalog of a run without `catalog_dirs`."""
    return Catalog(builtin_registry())


def lookup(domain: str, variant: str, catalog: Catalog | None = None) -> Entry:
    """The entry of `domain/variant` in the run's catalog (ours when none is given)."""
    entry = (catalog or builtin_catalog()).entries.get((domain, variant))
    if entry is None:
        raise InputError("", f"Unknown certification category: {domain}/{variant}")
    return entry


def list_categories(catalog: Catalog | None = None) -> list[dict]:
    """Categories sorted by domain, then variant, with what a user needs to pick one; a user's entry also says
    `source: user` and its `path` (ours: `source: builtin`)."""
    rows = []
    for (domain, variant), entry in sorted((catalog or builtin_catalog()).entries.items()):
        rows.append({
            "domain": domain, "variant": variant, "description": entry.description,
            "minGPUs": entry.min_gpus, "perNode": entry.per_node,
            "timeoutPerJob": entry.effective_timeout("", "full-scale"),
            "iterations": max(1, int(entry.template.get("orchestration", {}).get("iterations", 1))),
            "source": "user" if entry.source else "builtin", **({"path": entry.source} if entry.source else {}),
        })
    return rows
