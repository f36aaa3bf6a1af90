"""The face input checks on their own: path renaming, did-you-mean, and words for a model's patterns."""
import pytest

from ansible_collections.cre.certification.plugins.module_utils.engine.api.errors import InputError
from ansible_collections.cre.certification.plugins.plugin_utils import inputs


def test_every_problem_of_a_model_error_is_named_as_the_options_and_the_role_name_them():
    err = InputError("spec.categories[0].options.numCycles", "Input should be greater than or equal to 1; "
                     "spec.target.nodeNames[1]: Input should be a valid string; spec.testScale: Input should be x")
    options = inputs.certification_paths(err)
    assert str(options) == ("categories[0].options.numCycles: Input should be greater than or equal to 1; "
                            "target.nodeNames[1]: Input should be a valid string; options.testScale: Input should be x")
    role = inputs.renamed(options, {"categories": "certify_categories", "target.nodeNames": "certify_node_names",
                                    "options": "certify_options", "target": "wrong: the longer prefix wins"})
    assert role.path == "certify_categories[0].options.numCycles"
    assert str(role).endswith("certify_node_names[1]: Input should be a valid string; certify_options.testScale: "
                              "Input should be x")


@pytest.mark.parametrize(("path", "suggestion"), [
    ("options.nodesperjob", "nodesPerJob"), ("categories[3].options.resources.limit", "limits"),
    ("target.taintSelectors[0].efect", "effect"), ("gang_scheduler.queu", "queue"),
])
def test_an_unknown_field_names_the_closest_field_of_its_model(path, suggestion):
    assert inputs.with_suggestion(InputError(path, "unknown field")).rule == f"unknown field; did you mean '{suggestion}'?"


def test_a_broken_pattern_is_said_in_words_and_the_other_problems_stay():
    err = InputError("options.timeoutPerJob", "String should match pattern '^([0-9]+(h|m|s|ms))+$'; options.x: y")
    assert str(inputs.with_suggestion(err)) == ("options.timeoutPerJob: must be a duration of h, m, s and ms, such as "
                                                "90m or 1h30m; options.x: y")


def test_unknown_options_prefer_the_option_they_start_with():
    line = inputs.unknown_option("cre.certification.x", ["destination", "zzz"], ["dest", "certification", "name"])
    assert line == ("cre.certification.x: unknown options 'destination' (did you mean 'dest'?), 'zzz'; supported "
                    "options: certification, dest, name")
