"""awx/survey.json: generated from the roles' argument_specs and the catalog (no drift), shaped as AWX's survey
validation wants it, offering only catalog categories and only real role variables of the matching type/default."""
from __future__ import annotations

import json
from typing import Any

import pytest
import yaml
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ansible_collections.cre.certification.plugins.module_utils.engine.catalog import registry
from tests.ansible_run import ROOT
from tools import awx_survey

SURVEY = json.loads((ROOT / "awx" / "survey.json").read_text())
# AWX's survey question types (awx/api/views: SURVEY_TYPE_MAPPING) and the Python type each default must have.
AWX_TYPES: dict[str, tuple[type, ...]] = {"text": (str,), "textarea": (str,), "password": (str,),
                                          "multiplechoice": (str,), "multiselect": (str,), "integer": (int,),
                                          "float": (float, int)}
# The argument_specs type each AWX type may carry.
CARRIES = {"text": "str", "integer": "int", "float": "float", "multiplechoice": "bool", "multiselect": "list"}


def role_spec(role: str) -> dict[str, Any]:
    return yaml.safe_load((ROOT / "roles" / role / "meta/argument_specs.yml").read_text())["argument_specs"]["main"]


def role_defaults(role: str) -> dict[str, Any]:
    return yaml.safe_load((ROOT / "roles" / role / "defaults/main.yml").read_text())


def owner(variable: str) -> str:
    return variable.split("_", 1)[0]


def test_committed_survey_is_the_generated_one() -> None:
    assert SURVEY == awx_survey.survey(), "awx/survey.json is stale: .venv/bin/python -m tools.awx_survey > awx/survey.json"
    assert (ROOT / "awx/survey.json").read_text() == json.dumps(awx_survey.survey(), indent=2) + "\n"


def awx_errors(survey: dict[str, Any]) -> list[str]:
    """What AWX's survey spec validation would refuse (the checks of its _validate_spec_data)."""
    errors = [f"missing {key}" for key in ("name", "description", "spec") if key not in survey]
    if not isinstance(survey.get("spec"), list) or not survey["spec"]:
        return [*errors, "spec must be a non-empty list"]
    seen: set[str] = set()
    for index, item in enumerate(survey["spec"]):
        where = f"spec[{index}]"
        errors += [f"{where}: missing {key}" for key in ("question_name", "variable", "type", "required", "default")
                   if key not in item]
        if item.get("type") not in AWX_TYPES:
            errors.append(f"{where}: type {item.get('type')!r} is not one AWX knows")
            continue
        if item["variable"] in seen:
            errors.append(f"{where}: variable {item['variable']} is asked twice")
        seen.add(item["variable"])
        if not isinstance(item["required"], bool):
            errors.append(f"{where}: required must be a boolean")
        if not isinstance(item["default"], AWX_TYPES[item["type"]]) or isinstance(item["default"], bool):
            errors.append(f"{where}: default {item['default']!r} does not fit type {item['type']}")
        if item["type"] in ("multiplechoice", "multiselect"):
            choices = item.get("choices")
            if not isinstance(choices, list) or not choices or not all(isinstance(c, str) and c for c in choices):
                errors.append(f"{where}: choices must be a non-empty list of strings")
                continue
            defaults = item["default"].split("\n") if item["type"] == "multiselect" else [item["default"]]
            errors += [f"{where}: default {d!r} is not a choice" for d in defaults if d and d not in choices]
        for bound in ("min", "max"):
            if bound in item and not isinstance(item[bound], int):
                errors.append(f"{where}: {bound} must be an integer")
    return errors


def test_survey_passes_awx_validation() -> None:
    assert awx_errors(SURVEY) == []


@pytest.mark.parametrize("broken, error", [
    ({"type": "dict"}, "spec[0]: type 'dict' is not one AWX knows"),
    ({"default": 3}, "spec[0]: default 3 does not fit type text"),
    ({"type": "multiselect", "choices": ["a"], "default": "b"}, "spec[0]: default 'b' is not a choice"),
    ({"type": "multiplechoice", "choices": "a\nb"}, "spec[0]: choices must be a non-empty list of strings"),
])
def test_awx_validation_refuses_what_awx_refuses(broken: dict[str, Any], error: str) -> None:
    first = {**SURVEY["spec"][0], **broken}
    assert error in awx_errors({**SURVEY, "spec": [first, *SURVEY["spec"][1:]]})


def test_every_category_offered_exists_and_every_entry_is_offered() -> None:
    (categories,) = [item for item in SURVEY["spec"] if item["variable"] == "certify_categories"]
    assert categories["type"] == "multiselect"
    for choice in categories["choices"]:
        domain, variant = choice.split("/")
        assert registry.lookup(domain, variant).key == choice
        assert (ROOT / "catalog" / domain / f"{variant}.yaml").is_file()
    on_disk = sorted(f"{p.parent.name}/{p.stem}" for p in (ROOT / "catalog").glob("*/*.yaml")
                     if not p.parent.name.startswith("_"))
    assert sorted(categories["choices"]) == on_disk


def test_every_variable_is_a_role_variable_of_matching_type_and_default() -> None:
    for item in SURVEY["spec"]:
        role = owner(item["variable"])
        option = role_spec(role)["options"].get(item["variable"])
        assert option is not None, f"{item['variable']} is not an option of roles/{role}"
        assert option.get("type", "str") == CARRIES[item["type"]], item
        assert item["required"] == bool(option.get("required", False)), item
        default = role_defaults(role)[item["variable"]]
        if item["type"] == "multiplechoice":
            assert item["choices"] == ["true", "false"] and item["default"] == str(option["default"]).lower()
            assert item["default"] == str(default).lower()
        elif item["type"] == "multiselect":
            assert item["default"] == "" and default == []  # required: the user picks
        else:
            assert item["default"] == option.get("default", "") == default, item


def validated(role: str, given: dict[str, Any]) -> dict[str, Any]:
    """The role inputs after its argument_specs validation, as the role's entry point runs it."""
    options = {name: {k: v for k, v in spec.items() if k != "description"}
               for name, spec in role_spec(role)["options"].items()}
    result = ArgumentSpecValidator(options).validate(given)
    assert result.error_messages == [], (role, result.error_messages)
    return result.validated_parameters


def test_awx_answers_pass_the_roles_argument_specs() -> None:
    """Extra vars as AWX sends them for this survey (a multiselect as a list of strings, a multiplechoice as a
    string, numbers typed) are valid inputs of both roles: the defaults, every category at once, a "false"."""
    answers = {item["variable"]: item["default"] for item in SURVEY["spec"]}
    answers["certify_certification_name"] = "lab"
    answers["certify_categories"] = next(i["choices"] for i in SURVEY["spec"] if i["type"] == "multiselect")
    answers["results_fail_on_incomplete"] = "false"
    certify = validated("certify", {k: v for k, v in answers.items() if owner(k) == "certify"})
    assert certify["certify_create_namespace"] is True and certify["certify_timeout"] == 86400
    assert certify["certify_categories"] == answers["certify_categories"]
    # results_dest is set by playbooks/certify.yml, not asked.
    results = validated("results", {**{k: v for k, v in answers.items() if owner(k) == "results"},
                                    "results_dest": "/tmp/reports"})
    assert results["results_fail_on_incomplete"] is False and results["results_fail_on_failure"] is True
