"""The Baseline file: reference figures per key, where each came from, and how it is made from reports.

A baseline is written by ``generate`` (from one or many CertReports) or by hand, so ``load`` checks every field
and names its path; a hand-written figure needs only ``value`` (samples 1, no spread, no sources). ``load`` and
``dump`` both pass through the same check, so what is dumped always loads again, in one stable order.

Generating trims outliers as SuperBench does: per figure, compare every sample with the mean of the kept ones
(the trim rule sees ``value``, ``baseline`` = that mean and ``variance``), drop the ones that break the rule,
recompute, and repeat until nothing is dropped; a pass that would drop every sample drops none.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from statistics import fmean, pstdev
from typing import Any, NoReturn

try:
    import yaml
except ImportError:  # requirements.py: no face runs without it
    from ...requirements import ABSENT as yaml  # type: ignore[no-redef]

from ..api.errors import InputError
from ..api.naming import natural
from . import rules
from .figures import FIGURE_NAMES, KEY_FIELDS, figures, is_figure

API_VERSION = "cre.certification/v1"
KIND = "Baseline"
TRIM_RULE = "variance >= -0.1 && variance <= 0.1"
# The reports carry at most four decimals; six keep a mean's precision without float noise in the file.
_DIGITS = 6

_REQUIRED = object()
_TYPES: dict[str, Callable[[Any], bool]] = {
    "a string": lambda v: isinstance(v, str),
    "an integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "a number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "a mapping": lambda v: isinstance(v, dict),
    "a list": lambda v: isinstance(v, list),
}
_TYPE_NAMES = {str: "string", bool: "bool", int: "integer", float: "number", dict: "mapping", list: "list",
               type(None): "nothing"}


def _type_name(value: Any) -> str:
    return _TYPE_NAMES.get(type(value), type(value).__name__)


def key_order(key: Mapping[str, Any]) -> tuple[Any, ...]:
    """Sort key of a figure key: by its fields in KEY_FIELDS order, categories naturally."""
    return (key["gpuProduct"], key["platform"], tuple(natural(key["category"])), key["nodesPerJob"], key["image"])


class _Reader:
    """Checks a Baseline document field by field; every refusal names the field path and the file."""

    def __init__(self, where: str) -> None:
        self.where = where

    def refuse(self, path: str, rule: str) -> NoReturn:
        raise InputError(path, f"{rule} (in {self.where})")

    def field(self, obj: dict, name: str, parent: str, expected: str, default: Any = _REQUIRED) -> Any:
        path = f"{parent}.{name}" if parent else name
        value = obj.get(name)
        if value is None:
            if default is _REQUIRED:
                self.refuse(path, "missing value")
            return default
        if not _TYPES[expected](value):
            self.refuse(path, f"must be {expected}, got {_type_name(value)}")
        return value

    def count(self, obj: dict, name: str, parent: str, minimum: int, default: Any = _REQUIRED) -> Any:
        value = self.field(obj, name, parent, "an integer", default)
        if value < minimum:
            self.refuse(f"{parent}.{name}", f"must be at least {minimum}, got {value}")
        return value

    def positive(self, obj: dict, name: str, parent: str) -> float:
        """A reference value: a variance divides by it."""
        value = self.field(obj, name, parent, "a number")
        if value <= 0:
            self.refuse(f"{parent}.{name}", f"must be greater than 0, got {value}")
        return float(value)

    def mapping(self, value: Any, path: str) -> dict:
        """An item of a list (or the document), which has no field name of its own."""
        if not isinstance(value, dict):
            self.refuse(path, f"must be a mapping, got {_type_name(value)}")
        return value

    def known(self, obj: dict, path: str, fields: Iterable[str]) -> None:
        unknown = sorted(str(name) for name in obj if name not in fields)
        if unknown:
            self.refuse(f"{path}.{unknown[0]}" if path else unknown[0], f"unknown field; known: {', '.join(fields)}")

    def baseline(self, document: Any) -> dict[str, Any]:
        document = self.mapping(document, "")
        api_version = self.field(document, "apiVersion", "", "a string")
        if api_version != API_VERSION:
            self.refuse("apiVersion", f"unknown apiVersion '{api_version}'; this collection reads {API_VERSION}")
        if self.field(document, "kind", "", "a string") != KIND:
            self.refuse("kind", f"must be {KIND}, got '{document['kind']}'")
        self.known(document, "", ("apiVersion", "kind", "metadata", "entries"))
        metadata = self.field(document, "metadata", "", "a mapping")
        self.known(metadata, "metadata", ("name", "created"))
        if not self.field(metadata, "name", "metadata", "a string"):
            self.refuse("metadata.name", "must not be empty")
        entries: list[dict[str, Any]] = []
        seen: dict[tuple[Any, ...], int] = {}
        for index, entry in enumerate(self.field(document, "entries", "", "a list")):
            path = f"entries[{index}]"
            checked = self.entry(entry, path)
            same = seen.setdefault(key_order(checked["key"]), index)
            if same != index:
                self.refuse(f"{path}.key", f"the same key as entries[{same}]")
            entries.append(checked)
        created = self.field(metadata, "created", "metadata", "a string", "")
        return {"apiVersion": API_VERSION, "kind": KIND, "metadata": {"name": metadata["name"], "created": created},
                "entries": sorted(entries, key=lambda entry: key_order(entry["key"]))}

    def entry(self, entry: Any, path: str) -> dict[str, Any]:
        entry = self.mapping(entry, path)
        self.known(entry, path, ("key", "figures"))
        key = self.field(entry, "key", path, "a mapping")
        self.known(key, f"{path}.key", KEY_FIELDS)
        checked_key = {name: self.count(key, name, f"{path}.key", 1) if name == "nodesPerJob"
                       else self.field(key, name, f"{path}.key", "a string") for name in KEY_FIELDS}
        figures_path = f"{path}.figures"
        named = self.field(entry, "figures", path, "a mapping")
        if not named:
            self.refuse(figures_path, "must name at least one figure")
        return {"key": checked_key,
                "figures": {name: self.figure(name, named[name], f"{figures_path}.{name}")
                            for name in sorted(named, key=lambda name: natural(str(name)))}}

    def figure(self, name: Any, figure: Any, path: str) -> dict[str, Any]:
        if not is_figure(str(name)):
            self.refuse(path, f"unknown figure; known: {', '.join(FIGURE_NAMES)}")
        figure = self.mapping(figure, path)
        self.known(figure, path, ("value", "samples", "spread", "trimmed", "sources"))
        value = self.positive(figure, "value", path)
        spread = self.field(figure, "spread", path, "a mapping", {"min": value, "max": value, "stddev": 0.0})
        self.known(spread, f"{path}.spread", ("min", "max", "stddev"))
        sources = []
        for index, source in enumerate(self.field(figure, "sources", path, "a list", [])):
            where = f"{path}.sources[{index}]"
            self.known(self.mapping(source, where), where, ("report", "certification", "created"))
            sources.append({name: self.field(source, name, where, "a string", "")
                            for name in ("report", "certification", "created")})
        return {"value": value, "samples": self.count(figure, "samples", path, 1, 1),
                "spread": {name: float(self.field(spread, name, f"{path}.spread", "a number"))
                           for name in ("min", "max", "stddev")},
                "trimmed": self.count(figure, "trimmed", path, 0, 0), "sources": sources}


def load(text: str, where: str) -> dict[str, Any]:
    """The checked Baseline in ``text`` (YAML or JSON; ``where`` names the file in errors), defaults filled in."""
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise InputError("", f"invalid YAML in {where}{at}: {getattr(err, 'problem', None) or err}") from None
    return _Reader(where).baseline(document)


def dump(baseline: Mapping[str, Any]) -> str:
    """The Baseline as YAML, checked and in the one order ``load`` returns."""
    return yaml.safe_dump(_Reader("the baseline to write").baseline(baseline), sort_keys=False, width=120)


def trim(values: Sequence[float], trim_rule: str = TRIM_RULE) -> list[int]:
    """The positions of the samples kept by the iterative trim (values > 0, so the mean is a valid baseline)."""
    kept = list(range(len(values)))
    while True:
        mean = fmean(values[i] for i in kept)
        keep = [i for i in kept if rules.holds(trim_rule, values[i], mean, "trim_rule")]
        if not keep or len(keep) == len(kept):
            return kept
        kept = keep


def _reference(samples: list[tuple[float, dict[str, str]]], trim_rule: str) -> dict[str, Any]:
    """One figure's baseline from its samples (value, source)."""
    kept = [samples[i] for i in trim([value for value, _source in samples], trim_rule)]
    values = [value for value, _source in kept]
    sources: list[dict[str, str]] = []
    for _value, source in kept:
        if source not in sources:
            sources.append(source)
    return {"value": round(fmean(values), _DIGITS), "samples": len(kept),
            "spread": {"min": min(values), "max": max(values), "stddev": round(pstdev(values), _DIGITS)},
            "trimmed": len(samples) - len(kept), "sources": sources}


def generate(reports: Sequence[tuple[str, Mapping[str, Any]]], name: str, created: str,
             trim_rule: str = TRIM_RULE) -> dict[str, Any]:
    """A Baseline from CertReports, each given as (source label, report): per key and figure, every group's value
    is a sample; the trim keeps the representative ones. ``trim_rule`` is refused at ``trim_rule`` if bad."""
    rules.check(trim_rule, "trim_rule")
    keys: dict[tuple[Any, ...], dict[str, Any]] = {}
    samples: dict[tuple[Any, ...], dict[str, list[tuple[float, dict[str, str]]]]] = {}
    for label, report in reports:
        source = {"report": label, "certification": report.get("name") or "", "created": report.get("created") or ""}
        for figure in figures(report):
            order = key_order(figure["key"])
            keys.setdefault(order, figure["key"])
            samples.setdefault(order, {}).setdefault(figure["figure"], []).append((figure["value"], source))
    entries = [{"key": keys[order], "figures": {figure: _reference(samples[order][figure], trim_rule)
                                                for figure in sorted(samples[order], key=natural)}}
               for order in sorted(keys)]
    return {"apiVersion": API_VERSION, "kind": KIND, "metadata": {"name": name, "created": created}, "entries": entries}
