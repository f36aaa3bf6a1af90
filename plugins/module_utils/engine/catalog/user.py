"""A user's own catalog directories (`catalog_dirs`): entries in our format, loaded beside ours and validated.

Each directory looks like `catalog/`: `<domain>/<variant>.yaml` entries and an optional `_lib/` of fragments of
its own (an entry's `$lib` resolves there first, then in ours). Every entry is validated when loaded, before
anything is written: its YAML, its fields, and that its spec renders for a mock architecture (h100 and gb200)
and is a valid WorkflowSpec (the models the Certification build uses, and the overrides' checks).

A broken entry never hides the others: it is left out and its problems recorded against its category
(`Catalog.problems`), each one line `<file>: <field path>: <what is wrong>`. A run that asks for a broken
category is refused with them; the faces warn of the others. A category that is already one of ours is refused
(naming both files) unless its entry says `overrides: builtin`; one defined in two user directories is refused
(naming both) and neither is used.

Loaded once per content: the cache key is the directories and the size and mtime of every file in them.
"""
from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

try:
    import yaml
except ImportError:  # requirements.py: no face runs without it
    from ...requirements import ABSENT as yaml  # type: ignore[no-redef]

from ..api.errors import InputError
from ..models import parse_workflow
from ..spec.overrides import validate_overrides
from . import entries
from .registry import ROOT, Catalog, Entry, Problem, builtin_catalog, builtin_registry, entry_files, make_entry
from .template import PLACEHOLDER, TemplateError

OVERRIDES = "overrides"
OVERRIDES_BUILTIN = "builtin"   # `overrides: builtin`: this entry replaces our category of the same name
FIELDS = ("description", "meta", "perNode", "vars", "spec", OVERRIDES)
META_FIELDS = ("minGPUs", "timeoutPerJob", "parallelism")
PARALLEL_FIELDS = ("tp", "pp", "ep")
# The mock builds an entry must survive: a Hopper node and a Grace-Blackwell one (MNNVL on).
MOCK_BUILDS = ({"gpuArchitecture": "h100", "platform": "onprem"},
               {"gpuArchitecture": "gb200", "platform": "onprem", "enableMNNVL": True})
NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DURATION = re.compile(r"^([0-9]+(h|m|s|ms))+$")


def check_dirs(dirs: Any, path: str = "catalog_dirs") -> tuple[str, ...]:
    """The directories as absolute paths; one that is missing or not a directory is bad input."""
    out = []
    for index, value in enumerate(dirs or []):
        where = f"{path}[{index}]"
        if not isinstance(value, str) or not value:
            raise InputError(where, "must be the path of a directory")
        folder = Path(os.path.expanduser(value)).absolute()
        if not folder.is_dir():
            raise InputError(where, f"not a directory: {folder}")
        out.append(str(folder))
    return tuple(out)


def load(dirs: tuple[str, ...]) -> Catalog:
    """The catalog with the user's `dirs` (absolute paths, `check_dirs`), loaded again only when a file changed;
    ours alone without `dirs`. A run loads it once, at the driver's boundary, and hands it to the engine."""
    return _load(dirs, _fingerprint(dirs)) if dirs else builtin_catalog()


def _fingerprint(dirs: tuple[str, ...]) -> tuple:
    files = []
    for folder in dirs:
        for path in sorted(Path(folder).rglob("*")):
            if path.is_file():
                stat = path.stat()
                files.append((str(path), stat.st_size, stat.st_mtime_ns))
    return tuple(files)


@lru_cache(maxsize=8)
def _load(dirs: tuple[str, ...], _fingerprint: tuple) -> Catalog:
    builtin = builtin_registry()
    catalog = Catalog(dict(builtin))
    owners: dict[tuple[str, str], str] = {}
    for folder in dirs:
        lib = Path(folder) / "_lib"
        lib_dirs = (str(lib),) if lib.is_dir() else ()
        for path in entry_files(Path(folder)):
            key = (path.parent.name, path.stem)
            file = str(path)
            if key in owners:  # neither user entry is used
                if key in builtin:
                    catalog.entries[key] = builtin[key]
                else:
                    catalog.entries.pop(key, None)
                catalog.problems.setdefault(key, []).append(Problem(
                    file, "", f"{key[0]}/{key[1]} is also defined in {owners[key]}; rename one of them"))
                continue
            owners[key] = file
            entry, problems = _entry(path, lib_dirs, key in builtin)
            if problems:
                catalog.problems[key] = problems
            elif entry is not None:
                catalog.entries[key] = entry
    return catalog


def _entry(path: Path, lib_dirs: tuple[str, ...], shadows: bool) -> tuple[Entry | None, list[Problem]]:
    """One user entry file, validated: the Entry, or the problems that refuse it (all those found)."""
    file = str(path)
    if not (NAME.match(path.parent.name) and NAME.match(path.stem)):
        return None, [Problem(file, "", f"{path.parent.name}/{path.stem}: the domain (folder) and variant (file) "
                                        "names must be lowercase letters, digits and '-', starting and ending with a "
                                        "letter or digit")]
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        return None, [Problem(file, "", f"cannot be read: {exc}")]
    except yaml.YAMLError as exc:
        return None, [Problem(file, "", f"not valid YAML: {' '.join(str(exc).split())}")]
    problems = _fields(file, doc, shadows)
    if problems:
        return None, problems
    entry = make_entry(path, doc, file, lib_dirs)
    return (None, [problem]) if (problem := _builds(file, entry)) else (entry, [])


def _fields(file: str, doc: Any, shadows: bool) -> list[Problem]:
    """The entry's own fields: every problem found, each with its field path."""
    if not isinstance(doc, dict):
        return [Problem(file, "", f"must be a mapping of {', '.join(FIELDS)}, got {_kind(doc)}")]
    out = [Problem(file, str(key), f"unknown field; an entry has {', '.join(FIELDS)}")
           for key in doc if key not in FIELDS]
    if not isinstance(doc.get("description"), str) or not doc["description"].strip():
        out.append(Problem(file, "description", f"required, a non-empty string (got {_kind(doc.get('description'))})"))
    if "perNode" in doc and not isinstance(doc["perNode"], bool):
        out.append(Problem(file, "perNode", f"must be true or false, got {_kind(doc['perNode'])}"))
    if "vars" in doc and not isinstance(doc["vars"], dict):
        out.append(Problem(file, "vars", f"must be a mapping of template variables, got {_kind(doc['vars'])}"))
    if not isinstance(doc.get("spec"), dict):
        out.append(Problem(file, "spec", f"required, the WorkflowSpec template (a mapping), got {_kind(doc.get('spec'))}"))
    out += _meta(file, doc.get("meta", {}))
    if OVERRIDES in doc and doc[OVERRIDES] != OVERRIDES_BUILTIN:
        out.append(Problem(file, OVERRIDES, f"the only value is '{OVERRIDES_BUILTIN}', got {doc[OVERRIDES]!r}"))
    elif shadows and OVERRIDES not in doc:
        key = f"{Path(file).parent.name}/{Path(file).stem}"
        builtin = ROOT / Path(file).parent.name / Path(file).name
        out.append(Problem(file, "", f"{key} is a built-in category ({builtin}); add 'overrides: builtin' to this "
                                     "file to replace it, or rename the file"))
    elif not shadows and OVERRIDES in doc:
        out.append(Problem(file, OVERRIDES, "there is no built-in category of this name to override"))
    return out


def _meta(file: str, meta: Any) -> list[Problem]:
    if not isinstance(meta, dict):
        return [Problem(file, "meta", f"must be a mapping of {', '.join(META_FIELDS)}, got {_kind(meta)}")]
    out = [Problem(file, f"meta.{key}", f"unknown field; meta has {', '.join(META_FIELDS)}")
           for key in meta if key not in META_FIELDS]
    if "minGPUs" in meta and not (_is_int(meta["minGPUs"]) and meta["minGPUs"] >= 0):
        out.append(Problem(file, "meta.minGPUs", f"must be an integer of 0 or more, got {meta['minGPUs']!r}"))
    if "timeoutPerJob" in meta and not (isinstance(meta["timeoutPerJob"], str) and DURATION.match(meta["timeoutPerJob"])):
        out.append(Problem(file, "meta.timeoutPerJob",
                           f"must be a duration of h, m, s and ms, such as 90m or 1h30m, got {meta['timeoutPerJob']!r}"))
    parallelism = meta.get("parallelism", {})
    if not isinstance(parallelism, dict):
        return [*out, Problem(file, "meta.parallelism", f"must be a mapping of architecture (or default) to "
                                                        f"{{tp, pp, ep}}, got {_kind(parallelism)}")]
    for arch, row in parallelism.items():
        where = f"meta.parallelism.{arch}"
        if not isinstance(row, dict):
            out.append(Problem(file, where, f"must be a mapping of {', '.join(PARALLEL_FIELDS)}, got {_kind(row)}"))
            continue
        for key, value in row.items():
            least = 0 if key == "ep" else 1
            if key not in PARALLEL_FIELDS:
                out.append(Problem(file, f"{where}.{key}", f"unknown field; a row has {', '.join(PARALLEL_FIELDS)}"))
            elif not (_is_int(value) and value >= least):
                out.append(Problem(file, f"{where}.{key}", f"must be an integer of {least} or more, got {value!r}"))
    return out


def _builds(file: str, entry: Entry) -> Problem | None:
    """The first problem met building the entry for each mock architecture and validating the result."""
    for options in MOCK_BUILDS:
        arch = options["gpuArchitecture"]
        try:
            spec = entries.build_entry(entry, options)
        except TemplateError as exc:
            return Problem(file, _where(entry, str(exc)), f"does not render for {arch}: {exc}")
        except InputError as exc:
            return Problem(file, exc.path, f"does not build for {arch}: {exc.rule}")
        try:
            parse_workflow({"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Workflow",
                            "metadata": {"name": "catalog-entry"}, "spec": spec})
            validate_overrides(spec)
        except InputError as exc:
            return Problem(file, exc.path, f"{exc.rule} (in the WorkflowSpec it renders for {arch})")
    return None


def _where(entry: Entry, error: str) -> str:
    """The field path of the template node a render error comes from: the placeholder of an unknown variable,
    the `$lib` of a missing fragment; `spec` when it cannot be told."""
    quoted = re.search(r"'([^']+)'", error)
    if quoted is None:
        return "spec"
    name = quoted.group(1)
    for root, node in (("vars", entry.vars), ("spec", entry.template)):
        if found := _find(node, root, name):
            return found
    return "spec"


def _find(node: Any, path: str, name: str) -> str:
    if isinstance(node, str):
        hit = name in {m.group(1) for m in PLACEHOLDER.finditer(node)} or node == name
        return path if hit else ""
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, value in items:
        sub = f"{path}[{key}]" if isinstance(key, int) else f"{path}.{key}"
        if found := _find(value, sub, name):
            return found
    return ""


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _kind(value: Any) -> str:
    for kind, name in ((bool, "a boolean"), (int, "a number"), (float, "a number"), (str, "a string"),
                       (list, "a list"), (dict, "a mapping")):
        if isinstance(value, kind):
            return name
    return "nothing" if value is None else type(value).__name__
