"""`dcgmi diag --json` (`-j`) output read into a DiagReading, in both layouts DCGM has printed.

Followed from NVIDIA/DCGM's dcgmi/Diag.cpp and nvvs/include/NvvsJsonStrings.h (docs/evidence-check.md names the
tags and commits):

- DCGM 3.x (`DCGM GPU Diagnostic`): `test_categories[].tests[].results[]`, a result keyed `gpu_ids` (a string, up
  to 3.2) or `gpu_id` (from 3.3; an integer on a deployment check's error), `status`, `warnings` (a string up to
  3.2; from 3.3 a list of `{warning, error_id, error_category, error_severity}`, where a deployment check's entry
  holds its text under `warnings`, as 3.3's HelperJsonAddBasicTests writes it) and `info` (a string). The
  version, driver and `GPU Device IDs` sit at the root, beside the diagnostic.
- DCGM 4.x (`DCGM Diagnostic`): per-entity results (`entity_group`, `entity_id`, `status`, `warnings[]` with
  `error_id`/`error_category`/`error_severity`, `info[]`), a `test_summary` per test, and at the root
  `entity_groups` (the GPUs in the run) and `metadata` (version, driver).
- Either: `{<name>: {version, runtime_error}}` when the run did not happen, and `{iterations: [...], "Overall
  Result"}` for `--iterations`, each iteration one sample.
"""
from __future__ import annotations

import json
from typing import Any

from .dcgm_results import DiagReading, DiagResult, UnreadableOutput, outcome_of, with_code

V3 = "DCGM GPU Diagnostic"
V4 = "DCGM Diagnostic"


def read_json(text: str) -> DiagReading:
    """The reading of a `dcgmi diag --json` output; UnreadableOutput with the first line or field not read."""
    doc = _parse(text)
    if isinstance(doc, dict) and isinstance(doc.get("iterations"), list):
        return _iterations(doc["iterations"])
    return _read_one(doc, 0, "")


def _parse(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        lines = text.splitlines() or [""]
        if err.lineno > len(lines):  # the text ended first: name its last line, not a line that is not there
            raise UnreadableOutput(f"line {len(lines)}: the JSON ends unfinished after {lines[-1].strip()[:120]!r} "
                                   f"({err.msg})") from None
        line = lines[err.lineno - 1].strip()
        raise UnreadableOutput(f"line {err.lineno}: cannot read {line[:120]!r} as JSON ({err.msg})") from None


def _iterations(items: list[Any]) -> DiagReading:
    """`--iterations N`: each iteration is a whole output of its own; the results keep its number as the sample."""
    if not items:
        raise UnreadableOutput("iterations: an empty list holds no run")
    readings = [_read_one(item, i, f"iterations[{i}].") for i, item in enumerate(items)]
    first = readings[0]
    for later in readings[1:]:
        first.results.extend(later.results)
        first.gpus = sorted(set(first.gpus) | set(later.gpus))
        first.runtime_error = first.runtime_error or later.runtime_error
    return first


def _read_one(doc: Any, sample: int, where: str) -> DiagReading:
    if not isinstance(doc, dict):
        raise UnreadableOutput(f"{where or 'the output'}: a JSON object is expected, not {type(doc).__name__}")
    if V4 in doc:
        return _read_v4(doc, sample, where)
    if V3 in doc:
        return _read_v3(doc, sample, where)
    raise UnreadableOutput(f"{where or 'the output'}: neither {V4!r} (DCGM 4.x) nor {V3!r} (DCGM 3.x) is a key of it; "
                           f"keys: {', '.join(sorted(doc)) or 'none'}")


def _field(obj: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str, required: bool = False) -> Any:
    """obj[key] checked to be `kind` (None when absent and not required)."""
    if key not in obj or obj[key] is None:
        if required:
            raise UnreadableOutput(f"{where}{key}: missing")
        return None
    value = obj[key]
    if not isinstance(value, kind) or isinstance(value, bool):
        raise UnreadableOutput(f"{where}{key}: {value!r} is not what dcgmi writes there")
    return value


def _tests(diag: dict[str, Any], where: str) -> list[tuple[str | None, dict[str, Any], str]]:
    """(category, test object, its path) of every test, in output order."""
    out = []
    for c, category in enumerate(_field(diag, "test_categories", list, where) or []):
        at = f"{where}test_categories[{c}]."
        if not isinstance(category, dict):
            raise UnreadableOutput(f"{at[:-1]}: an object is expected")
        name = _field(category, "category", str, at)
        for t, test in enumerate(_field(category, "tests", list, at) or []):
            if not isinstance(test, dict):
                raise UnreadableOutput(f"{at}tests[{t}]: an object is expected")
            out.append((name, test, f"{at}tests[{t}]."))
    return out


def _read_v3(doc: dict[str, Any], sample: int, where: str) -> DiagReading:
    diag = _object(doc, V3, where)
    at = f"{where}{V3}."
    reading = DiagReading("DCGM 3.x JSON", dcgm_version=_field(doc, "version", str, where)
                          or _field(diag, "version", str, at),
                          driver_version=_field(doc, "Driver Version Detected", str, where),
                          runtime_error=_field(diag, "runtime_error", str, at))
    reading.gpus = list(range(len(_field(doc, "GPU Device IDs", list, where) or [])))
    for category, test, test_at in _tests(diag, at):
        name = _field(test, "name", str, test_at, required=True)
        for r, result in enumerate(_field(test, "results", list, test_at) or []):
            reading.results.append(_result_v3(category, name, result, f"{test_at}results[{r}].", sample))
    return reading


def _object(doc: dict[str, Any], key: str, where: str) -> dict[str, Any]:
    value = doc[key]
    if not isinstance(value, dict):
        raise UnreadableOutput(f"{where}{key}: an object is expected")
    return value


def _gpu_v3(result: dict[str, Any], where: str) -> int | None:
    """The GPU of a 3.x result: `gpu_ids` (a string of one index) up to 3.2, `gpu_id` from 3.3; None: the node."""
    for key in ("gpu_id", "gpu_ids"):
        value = result.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().isdigit():
            return int(value)
        if value is not None:
            raise UnreadableOutput(f"{where}{key}: {value!r} is not a GPU index")
    return None


def _result_v3(category: str | None, test: str, result: Any, where: str, sample: int) -> DiagResult:
    if not isinstance(result, dict):
        raise UnreadableOutput(f"{where[:-1]}: an object is expected")
    status = _field(result, "status", str, where, required=True)
    outcome_of(status, f"{where}status")
    warnings = result.get("warnings")
    if isinstance(warnings, str):  # up to 3.2: one message, no code
        messages: tuple[str, ...] = (warnings,)
    else:
        messages = tuple(_warning(w, f"{where}warnings[{i}].") for i, w in enumerate(_list(result, "warnings", where)))
    info = _field(result, "info", str, where)
    return DiagResult(category, test, _gpu_v3(result, where), status, messages, (info,) if info else (), sample)


def _list(obj: dict[str, Any], key: str, where: str) -> list[Any]:
    return _field(obj, key, list, where) or []


def _warning(entry: Any, where: str) -> str:
    """One error entry's message with its code: `warning` (3.3's deployment checks: `warnings`) and `error_id`."""
    if not isinstance(entry, dict):
        raise UnreadableOutput(f"{where[:-1]}: an object is expected")
    text = entry.get("warning", entry.get("warnings"))
    if not isinstance(text, str):
        raise UnreadableOutput(f"{where}warning: missing")
    return with_code(text, _field(entry, "error_id", int, where))


def _read_v4(doc: dict[str, Any], sample: int, where: str) -> DiagReading:
    diag = _object(doc, V4, where)
    at = f"{where}{V4}."
    metadata = _field(doc, "metadata", dict, where) or {}
    reading = DiagReading("DCGM 4.x JSON", dcgm_version=_field(metadata, "version", str, f"{where}metadata.")
                          or _field(diag, "version", str, at),
                          driver_version=_field(metadata, "Driver Version Detected", str, f"{where}metadata."),
                          runtime_error=_field(diag, "runtime_error", str, at))
    reading.gpus = _entity_gpus(doc, where)
    for category, test, test_at in _tests(diag, at):
        name = _field(test, "name", str, test_at, required=True)
        reading.results.extend(_results_v4(category, name, test, test_at, sample))
    return reading


def _entity_gpus(doc: dict[str, Any], where: str) -> list[int]:
    """The GPUs `entity_groups` lists: every GPU in the run, with a result or not."""
    gpus = []
    for g, group in enumerate(_list(doc, "entity_groups", where)):
        at = f"{where}entity_groups[{g}]."
        if isinstance(group, dict) and group.get("entity_group") == "GPU":
            for e, entity in enumerate(_list(group, "entities", at)):
                if not isinstance(entity, dict):
                    raise UnreadableOutput(f"{at}entities[{e}]: an object is expected")
                gpus.append(_field(entity, "entity_id", int, f"{at}entities[{e}].", required=True))
    return sorted(set(gpus))


def _results_v4(category: str | None, test: str, entry: dict[str, Any], where: str, sample: int) -> list[DiagResult]:
    """A 4.x test's per-entity results, and one node result when its summary holds what no entity does (an error
    of the test as a whole) or when it has no per-entity result at all."""
    out: list[DiagResult] = []
    for r, result in enumerate(_list(entry, "results", where)):
        at = f"{where}results[{r}]."
        if not isinstance(result, dict):
            raise UnreadableOutput(f"{at[:-1]}: an object is expected")
        status = _field(result, "status", str, at, required=True)
        outcome_of(status, f"{at}status")
        messages = tuple(_warning(w, f"{at}warnings[{i}].") for i, w in enumerate(_list(result, "warnings", at)))
        info = tuple(_info_v4(result, at))
        group = _field(result, "entity_group", str, at, required=True)
        entity = _field(result, "entity_id", int, at, required=True)
        if group == "GPU":
            out.append(DiagResult(category, test, entity, status, messages, info, sample))
        else:  # a CPU (the CPU EUD) or another entity: a result of the node, named in its messages
            named = tuple(f"{group} {entity}: {m}" for m in messages or (status,))
            out.append(DiagResult(category, test, None, status, named, info, sample))
    summary = _field(entry, "test_summary", dict, where)
    if summary is not None:
        out.extend(_summary_v4(category, test, summary, out, f"{where}test_summary.", sample))
    return out


def _info_v4(result: dict[str, Any], where: str) -> list[str]:
    info = _list(result, "info", where)
    if not all(isinstance(i, str) for i in info):
        raise UnreadableOutput(f"{where}info: a list of strings is expected")
    return info


def _summary_v4(category: str | None, test: str, summary: dict[str, Any], seen: list[DiagResult], where: str,
                sample: int) -> list[DiagResult]:
    status = _field(summary, "status", str, where, required=True)
    outcome_of(status, f"{where}status")
    known = {m for result in seen for m in result.messages}
    messages = tuple(m for m in (_warning(w, f"{where}warnings[{i}].")
                                 for i, w in enumerate(_list(summary, "warnings", where))) if m not in known)
    if seen and not messages:
        return []  # the summary repeats the entities' results
    return [DiagResult(category, test, None, status, messages, tuple(_info_v4(summary, where)), sample)]
