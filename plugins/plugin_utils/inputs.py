# Copyright: (c) 2026, cre.certification developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The input checks a face makes before it reaches the cluster, beyond what the models check: object names,
label selectors and categories, unknown options with a did-you-mean, and error paths named as the task (or the
role that called it) spells them. Bad input is refused here, so nothing is written for it."""
from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping
from typing import Any

from ansible_collections.cre.certification.plugins.module_utils.engine.api.errors import InputError
from ansible_collections.cre.certification.plugins.module_utils.engine.catalog import user
from ansible_collections.cre.certification.plugins.module_utils.engine.models.certification import (
    Category,
    CategoryOptions,
    Resources,
)
from ansible_collections.cre.certification.plugins.module_utils.engine.models.common import (
    LABEL_VALUE,
    QUALIFIED_NAME,
    QUANTITY_PATTERN,
    NodeSelectorRequirement,
    TaintSelector,
    TargetSpec,
)
from ansible_collections.cre.certification.plugins.module_utils.engine.models.gang import GangSchedulerSpec
from ansible_collections.cre.certification.plugins.module_utils.engine.models.priority import DNS_SUBDOMAIN
from ansible_collections.cre.certification.plugins.module_utils.engine.models.pydantic_api import BaseModel

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_QUALIFIED = re.compile(QUALIFIED_NAME)
_LABEL_VALUE = re.compile(LABEL_VALUE)
_LABEL_RULE = ("must be a label value: at most 63 letters, digits, '-', '_' or '.', starting and ending with a "
               "letter or digit")
_KEY_RULE = ("must be an optional DNS subdomain prefix and '/', then at most 63 letters, digits, '-', '_' or '.', "
             "starting and ending with a letter or digit")

# What a value that fails a model's pattern should look like, in words instead of the regular expression.
_PATTERN_RULES = {
    r"^([0-9]+(h|m|s|ms))+$": "must be a duration of h, m, s and ms, such as 90m or 1h30m",
    QUANTITY_PATTERN: "must be a quantity, such as 64, 500m, 10Ti or 1.5Gi",
    r"^[0-9]+(K|M|G|T)?$": "must be a byte count with an optional K, M, G or T, such as 16G",
    LABEL_VALUE: _LABEL_RULE,
    r"^$|^[a-zA-Z0-9]([a-zA-Z0-9._-]*[a-zA-Z0-9])?$": _LABEL_RULE,  # gangScheduler.queue (at most 63 as well)
    DNS_SUBDOMAIN: ("must be a PriorityClass name: lowercase letters, digits, '-' and '.', starting and ending with a "
                    "letter or digit"),  # priorityClassName
}

# The model under each option path, for the did-you-mean of an unknown field ("[]" stands for any index).
_MODELS: dict[str, type[BaseModel]] = {
    "options": CategoryOptions, "options.resources": Resources, "target": TargetSpec,
    "target.matchExpressions[]": NodeSelectorRequirement, "target.taintSelectors[]": TaintSelector,
    "gang_scheduler": GangSchedulerSpec, "categories[]": Category, "categories[].options": CategoryOptions,
    "categories[].options.resources": Resources,
}
# Model paths of the Certification as the certification_run options name them (longest prefix first).
_CERTIFICATION_PATHS = (("spec.gangScheduler", "gang_scheduler"), ("spec.priorityClassName", "priority_class_name"),
                        ("spec.categories", "categories"), ("spec.target", "target"), ("metadata.labels", "labels"),
                        ("metadata.name", "name"), ("metadata.namespace", "namespace"), ("spec", "options"))
_PATH_START = re.compile(r"(^|; )([A-Za-z_][A-Za-z0-9_]*)((?:\.[A-Za-z_][A-Za-z0-9_]*|\[[^\]]*\])*)(?=: )")


def shown(value: str, limit: int = 80) -> str:
    """A value quoted in a message, cut short when it is long (a message stays one readable line)."""
    return value if len(value) <= limit else f"{value[:limit - 3]}..."


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """`; did you mean 'x'?` for the closest choice (a choice the word starts with first: `destination` is
    `dest`), or nothing when none is close."""
    names = list(choices)
    prefixes = sorted((c for c in names if len(c) >= 3 and word.lower().startswith(c.lower())), key=len)
    close = prefixes[-1:] or difflib.get_close_matches(word, names, n=1, cutoff=0.6)
    return f"; did you mean '{close[0]}'?" if close else ""


def type_name(value: Any) -> str:
    """The YAML/JSON name of a value's type (Ansible hands over its own tagged subclasses)."""
    for kind, name in ((bool, "bool"), (int, "int"), (float, "float"), (str, "string"), (list, "list"),
                       (dict, "dict")):
        if isinstance(value, kind):
            return name
    return "null" if value is None else type(value).__name__


def model_fields(model: type[BaseModel]) -> list[str]:
    """The camelCase field names of a model, as a user writes them."""
    return [info.alias or name for name, info in model.model_fields.items()]


def unknown_option(module: str, unknown: list[str], supported: Iterable[str]) -> str:
    """One line for unknown task options: each with its closest supported name."""
    names = sorted(supported)
    parts = [f"'{name}'" + (f" ({hint[2:]})" if (hint := did_you_mean(name, names)) else "") for name in unknown]
    return (f"{module}: unknown option{'s' if len(unknown) > 1 else ''} {', '.join(parts)}; supported options: "
            f"{', '.join(names)}")


def with_suggestion(err: InputError) -> InputError:
    """An `unknown field` error with the closest field of the model at its parent path; a broken pattern with
    what the value should look like."""
    for pattern, rule in _PATTERN_RULES.items():
        if err.rule.startswith(f"String should match pattern '{pattern}'"):
            return InputError(err.path, rule + err.rule[len(pattern) + 30:])
    if not err.rule.startswith("unknown field"):
        return err
    parent, _dot, field = err.path.rpartition(".")
    model = _MODELS.get(re.sub(r"\[\d+\]", "[]", parent))
    if model is None or not field:
        return err
    return InputError(err.path, f"unknown field{did_you_mean(field, model_fields(model))}")


def certification_paths(err: InputError) -> InputError:
    """A Certification model error with its paths as certification_run's options name them."""
    return _rewrite_paths(err, _CERTIFICATION_PATHS)


def renamed(err: InputError, names: Mapping[str, str]) -> InputError:
    """The error with each path that starts with an option in `names` starting with its name there instead (a
    role passes its variable names, so the message names the variable the user set)."""
    return _rewrite_paths(err, sorted(names.items(), key=lambda pair: len(pair[0]), reverse=True))


def _rewrite_paths(err: InputError, prefixes: Iterable[tuple[str, str]]) -> InputError:
    """Each problem's path (the message may list several) with the first matching prefix replaced."""
    ordered = list(prefixes)

    def rename(match: re.Match[str]) -> str:
        path = match.group(2) + match.group(3)
        for old, new in ordered:
            if path == old or path.startswith((old + ".", old + "[")):
                return match.group(1) + new + path[len(old):]
        return match.group(0)
    message = _PATH_START.sub(rename, str(err))
    path, _sep, rule = message.partition(": ")
    return InputError(path, rule) if rule else err


def check_namespace(path: str, value: str) -> None:
    if not (_DNS_LABEL.match(value) and len(value) <= 63):
        raise InputError(path, f"invalid namespace '{shown(value)}': must be a DNS-1123 label (at most 63 lowercase "
                               "letters, digits or '-', starting and ending with a letter or digit)")


def check_name(path: str, value: str, limit: int = 253) -> None:
    """An object name: a DNS-1123 subdomain of at most `limit` characters."""
    if not (_DNS_SUBDOMAIN.match(value) and len(value) <= limit):
        raise InputError(path, f"invalid name '{shown(value)}': must be a DNS-1123 subdomain (at most {limit} lowercase "
                               "letters, digits, '-' or '.', starting and ending with a letter or digit)")


def check_labels(path: str, labels: Any) -> None:
    """A label map: qualified-name keys and label values (strings)."""
    if not isinstance(labels, dict):
        return  # the models name the wrong type
    for key, value in labels.items():
        check_label_key(f'{path}["{key}"]', str(key))
        if not isinstance(value, str):
            raise InputError(f'{path}["{key}"]', f"must be a string, got {type_name(value)}")
        if not _LABEL_VALUE.match(value):
            raise InputError(f'{path}["{key}"]', f"invalid label value '{shown(value)}': {_LABEL_RULE}")


def check_label_key(path: str, key: str) -> None:
    if not (_QUALIFIED.match(key) and key.find("/") <= 253):
        raise InputError(path, f"invalid label key '{shown(key)}': {_KEY_RULE}")


def check_target(target: Any, path: str = "target") -> None:
    """What listing the nodes would send the API server: selector labels and node names."""
    if not isinstance(target, dict):
        return
    check_labels(f"{path}.nodeSelector", target.get("nodeSelector") or {})
    names = target.get("nodeNames") or []
    for index, name in enumerate(names if isinstance(names, list) else []):
        if isinstance(name, str):
            check_name(f"{path}.nodeNames[{index}]", name)
    expressions = target.get("matchExpressions") or []
    for index, expr in enumerate(expressions if isinstance(expressions, list) else []):
        key = expr.get("key") if isinstance(expr, dict) else None
        if isinstance(key, str):
            check_label_key(f"{path}.matchExpressions[{index}].key", key)


def check_catalog_dirs(args: dict[str, Any], path: str = "catalog_dirs") -> tuple[str, ...]:
    """The user's catalog directories as absolute paths, written back into `args` (the driver reads them there);
    a missing one is refused. Their entries are loaded and validated here, before anything is written."""
    dirs = user.check_dirs(args.get("catalog_dirs") or [], path)
    args["catalog_dirs"] = list(dirs)
    return dirs


def catalog_warnings(dirs: tuple[str, ...], asked: Iterable[str] = ()) -> list[str]:
    """One warning per problem of a user catalog entry the run does not ask for (those asked for are refused)."""
    if not dirs:
        return []
    wanted = set(asked)
    return [f"user catalog entry refused (not used by this task): {problem}"
            for key, problems in sorted(user.load(dirs).problems.items()) if "/".join(key) not in wanted
            for problem in problems]


def category_names(items: Any) -> list[str]:
    """The `domain/variant` of each well-formed category item."""
    names = []
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and isinstance(item.get("domain"), str) and isinstance(item.get("variant"), str):
            names.append(f"{item['domain']}/{item['variant']}")
        elif isinstance(item, str):
            names.append(item)
    return names


def check_categories(items: Any, path: str = "categories", dirs: tuple[str, ...] = ()) -> None:
    """Every category is in the catalog, ours or the user's `dirs` (the models name a wrong shape)."""
    for index, item in enumerate(items if isinstance(items, list) else []):
        if isinstance(item, dict) and isinstance(item.get("domain"), str) and isinstance(item.get("variant"), str):
            check_category(f"{path}[{index}]", f"{item['domain']}/{item['variant']}", dirs)
        elif isinstance(item, str):
            check_category(f"{path}[{index}]", item, dirs)


def check_category(path: str, name: str, dirs: tuple[str, ...] = ()) -> None:
    """`domain/variant` is in the catalog; an unknown one is named with its closest match and the valid ones. A
    category whose user entry is broken (or clashes) is refused with each problem's file and field path."""
    if dirs and (refused := user.load(dirs).refused(*name.partition("/")[::2])):
        raise InputError(path, f"category '{shown(name)}' of the user catalog is refused: "
                               + "; ".join(str(problem) for problem in refused))
    known = sorted(f"{domain}/{variant}" for domain, variant in user.load(dirs).entries)
    if name in known:
        return
    by_variant = {full.split("/", 1)[1]: full for full in known}
    close = difflib.get_close_matches(name.rpartition("/")[2], list(by_variant), n=1, cutoff=0.6)
    hint = f"; did you mean '{by_variant[close[0]]}'?" if close else did_you_mean(name, known)
    raise InputError(path, f"unknown category '{shown(name)}'{hint or ';'} valid: {', '.join(known)}")
