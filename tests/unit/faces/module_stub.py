"""What a face's documentation test checks of its module stub: the options DOCUMENTATION lists are the argument
spec's (the auth options aside: the kubernetes.core.k8s_auth_options fragment documents them), and EXAMPLES and
RETURN parse."""
from __future__ import annotations

from types import ModuleType
from typing import Any

import yaml

from ansible_collections.cre.certification.plugins.module_utils.kube.client import auth_argument_spec


def documented_spec(stub: ModuleType, keys: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    """The stub's argument spec without the auth options, once each documented option matches it in `keys`."""
    options = yaml.safe_load(stub.DOCUMENTATION)["options"]
    auth = auth_argument_spec()
    spec = {k: v for k, v in stub.SPEC["argument_spec"].items() if k not in auth}
    assert set(options) == set(spec)
    for name, option in options.items():
        assert {k: option[k] for k in keys if k in option} == spec[name], name
    for section in (stub.EXAMPLES, stub.RETURN):
        assert yaml.safe_load(section)
    return spec
