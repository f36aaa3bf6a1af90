"""Regression rules (history/rules.py): defaults per kind, user rules and the busBW shorthand, CEL refused early."""
from __future__ import annotations

import pytest

from ansible_collections.cre.certification.plugins.module_utils.engine.api.errors import InputError
from ansible_collections.cre.certification.plugins.module_utils.engine.history import rules


def test_defaults_allow_five_percent_the_worse_way():
    assert rules.effective(["groupBusBW", "busBW@8", "goodput", "tflops", "stepTime"], {}) == {
        "groupBusBW": "variance >= -0.05", "busBW@8": "variance >= -0.05 || baseline - value < 0.015",
        "goodput": "variance >= -0.05", "tflops": "variance >= -0.05", "stepTime": "variance <= 0.05"}


@pytest.mark.parametrize("value, baseline, passes", [
    (0.17, 0.18, True),     # one printed hundredth below: within what two decimals can tell apart
    (0.18, 0.19, True),     # the same, where the float difference is a hair over 0.01
    (0.16, 0.18, False),    # two hundredths (11%): a real drop
    (380.0, 400.0, True),   # 5% at the peak
    (379.0, 400.0, False),
])
def test_the_per_size_default_allows_one_printed_hundredth(value, baseline, passes):
    assert rules.holds(rules.rule_for("busBW@8192", {}), value, baseline, "rules.busBW@8192") is passes


@pytest.mark.parametrize("shorthand", ["busBW", "busBW@*"])
def test_the_busbw_shorthand_applies_to_every_size_and_an_exact_size_wins(shorthand):
    user = {shorthand: "variance >= -0.2", "busBW@1024": "variance >= -0.5"}
    rules.validate(user)
    assert rules.effective(["busBW@8", "busBW@8589934592", "busBW@1024", "groupBusBW"], user) == {
        "busBW@8": "variance >= -0.2", "busBW@8589934592": "variance >= -0.2", "busBW@1024": "variance >= -0.5",
        "groupBusBW": "variance >= -0.05"}


def test_a_user_rule_replaces_the_default_of_its_figure_only():
    assert rules.effective(["stepTime", "tflops"], {"stepTime": "variance <= 0.1"}) == {
        "stepTime": "variance <= 0.1", "tflops": "variance >= -0.05"}


@pytest.mark.parametrize("value, baseline, expected", [(380.0, 400.0, True), (379.0, 400.0, False), (500.0, 400.0, True)])
def test_holds_uses_the_variance_against_the_baseline(value, baseline, expected):
    assert rules.holds("variance >= -0.05", value, baseline, "rules.groupBusBW") is expected


def test_variance_is_relative_to_the_baseline():
    assert rules.variance(380.0, 400.0) == pytest.approx(-0.05)
    assert rules.variance(4.4, 4.0) == pytest.approx(0.1)


def test_a_rule_sees_value_and_baseline_too():
    assert rules.holds("value - baseline > -25.0", 380.0, 400.0, "rules.groupBusBW")
    assert not rules.holds("value - baseline > -15.0", 380.0, 400.0, "rules.groupBusBW")


@pytest.mark.parametrize("user, path, rule", [
    ({"groupBusBW": "variance >= "}, "rules.groupBusBW", "compile CEL expression: syntax error at 1:10"),
    ({"goodput": "valu >= 1.0"}, "rules.goodput", "compile CEL expression: undeclared reference to 'valu'"),
    ({"tflops": "variance + 1.0"}, "rules.tflops", "CEL expression must return bool, got double"),
    ({"stepTime": 'variance <= "a"'}, "rules.stepTime",
     "eval CEL expression: found no matching overload for 'relation_le' applied to '(double, string)'"),
    ({"busBW": 0.05}, "rules.busBW", "expected a CEL expression string, got float"),
    ({"busBandwidth": "variance >= 0.0"}, "rules.busBandwidth",
     "unknown figure 'busBandwidth'; known: busBW, groupBusBW, busBW@<sizeBytes>, goodput, tflops, stepTime"),
    ({"busBW@1k": "variance >= 0.0"}, "rules.busBW@1k", None),
    # The first bad one in sorted order.
    ({"tflops": "x", "goodput": "y"}, "rules.goodput", "compile CEL expression: undeclared reference to 'y'"),
])
def test_bad_rules_are_refused_with_their_path(user, path, rule):
    with pytest.raises(InputError) as err:
        rules.validate(user)
    assert err.value.path == path
    if rule is not None:
        assert err.value.rule == rule


def test_rules_must_be_a_mapping():
    with pytest.raises(InputError) as err:
        rules.validate(["variance >= 0"])  # type: ignore[arg-type]
    assert (err.value.path, err.value.rule) == ("rules", "expected a mapping of figure name to CEL expression, got list")


def test_an_error_that_depends_on_the_values_is_left_to_evaluation():
    rules.validate({"groupBusBW": "1 / 0 > 0"})
    with pytest.raises(InputError) as err:
        rules.holds("1 / 0 > 0", 1.0, 1.0, "rules.groupBusBW")
    assert err.value.path == "rules.groupBusBW" and err.value.rule.startswith("eval CEL expression:")
