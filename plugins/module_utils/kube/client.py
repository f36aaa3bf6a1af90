"""A plain `kubernetes.client.ApiClient` from the same auth options and K8S_AUTH_* variables as kubernetes.core."""
from __future__ import annotations

import binascii
import copy
import os
from typing import Any

from ansible_collections.kubernetes.core.plugins.module_utils.args_common import AUTH_ARG_SPEC

try:
    import kubernetes
    from ansible_collections.kubernetes.core.plugins.module_utils.k8s.client import (
        _create_auth_spec,
        _create_configuration,
        _create_headers,
        _set_header,
    )
except ImportError as exc:  # api_client says what to install; the module stubs stay importable without it
    IMPORT_ERROR: ImportError | None = exc
else:
    IMPORT_ERROR = None


class MissingLibrary(Exception):
    """The controller lacks a Python library the run needs."""


class BadKubeconfig(Exception):
    """The kubeconfig is missing or its credentials cannot be decoded (the message never quotes them)."""


def auth_argument_spec() -> dict[str, Any]:
    """kubernetes.core's auth options (kubeconfig, context, host, api_key, …), to extend in a face's spec."""
    return copy.deepcopy(AUTH_ARG_SPEC)


def api_client(params: dict[str, Any]) -> kubernetes.client.ApiClient:
    """Resolve auth exactly as kubernetes.core does (options, then K8S_AUTH_*, then in-cluster, then kubeconfig)."""
    if IMPORT_ERROR is not None:
        raise MissingLibrary(f"connecting to the cluster needs the kubernetes Python library on the controller "
                             f"({IMPORT_ERROR}); install the collection's requirements.txt")
    auth_params = {k: params.get(k) for k in AUTH_ARG_SPEC}
    path = auth_params["kubeconfig"]
    # Several files may be given, as in KUBECONFIG; only when none exists is it certainly wrong.
    if isinstance(path, str) and not any(os.path.exists(os.path.expanduser(p)) for p in path.split(os.pathsep)):
        raise BadKubeconfig(f"connecting to the cluster: kubeconfig {path} does not exist; set kubeconfig/context (or "
                            "the K8S_AUTH_* variables) to a cluster this controller can reach")
    try:
        configuration = _create_configuration(_create_auth_spec(**auth_params))
    except (binascii.Error, UnicodeDecodeError) as exc:  # client-key-data and the like, base64 that is not
        cause = str(exc).split(":", maxsplit=1)[0]  # the rest may quote the bytes
        raise BadKubeconfig(f"connecting to the cluster: the kubeconfig's credentials cannot be decoded ({cause}); "
                            "fix its user entry (the *-data fields are base64 of the PEM files)") from None
    api = kubernetes.client.ApiClient(configuration)
    for header, value in _create_headers(**auth_params).items():
        _set_header(api, header, value)
    return api
