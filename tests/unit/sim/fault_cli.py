"""`python -m tools.sim fault` on one node of the faked cluster `c` (tests/unit/sim/conftest.py's `sim`), and the
faked API that answers it."""
from __future__ import annotations

from kubernetes import client

from tools.sim import __main__ as cli
from tools.sim import profiles

NODE = "gpu-node-001"


def fault(*args: str) -> int:
    return cli.main(["fault", NODE, "--name", "c", *args])


class FakeCore:
    """read_node as the API answers it: the profile's nodes, 404 for any other name."""

    def __init__(self, apic: client.ApiClient, profile: str = "aws-h100") -> None:
        self.nodes = {n["metadata"]["name"]: n for n in profiles.build_nodes(profile, 2)}

    def read_node(self, name: str) -> client.V1Node:
        if name not in self.nodes:
            raise client.ApiException(status=404)
        return client.ApiClient()._ApiClient__deserialize(self.nodes[name], "V1Node")  # type: ignore[attr-defined]
