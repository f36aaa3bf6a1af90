"""Bad module arguments refused before any request (data/bad_input_args.yaml), through the in-process action plugins:
every case fails with one line naming the option, never a traceback, and the API server it was pointed at saw no
connection at all, so nothing can have been written. (The cases that are refused only after reading a cluster, and
the roles' cases, run against a live cluster: tests/integration/test_bad_input_live.py.)"""
from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.bad_input_cases import base_args, case_args

DATA = Path(__file__).parent / "data"
CASES = yaml.safe_load((DATA / "bad_input_args.yaml").read_text())
WORKFLOW = yaml.safe_load((Path(__file__).parents[2] / "integration" / "data" / "workflow.yaml").read_text())


class Listener:
    """A local TCP server that counts the connections it is offered and answers none."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = int(self.sock.getsockname()[1])
        self.connections = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _addr = self.sock.accept()
            except OSError:  # closed
                return
            self.connections += 1
            conn.close()


@pytest.fixture
def api_server(tmp_path: Path) -> Iterator[tuple[Listener, Path]]:
    """The listener and a kubeconfig that points at it."""
    listener = Listener()
    kubeconfig = tmp_path / "kubeconfig.yaml"
    kubeconfig.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "c", "cluster": {"server": f"https://127.0.0.1:{listener.port}",
                                               "insecure-skip-tls-verify": True}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
        "users": [{"name": "u", "user": {"token": "t"}}]}))
    yield listener, kubeconfig
    listener.sock.close()


def test_corpus_is_large_enough() -> None:
    assert len(CASES) >= 60
    assert len({c["id"] for c in CASES}) == len(CASES)
    assert all("module" in c for c in CASES)


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_bad_argument_is_refused_before_any_request(case: dict[str, Any], api_server: tuple[Listener, Path],
                                                    tmp_path: Path, run_action: Any) -> None:
    listener, kubeconfig = api_server
    (tmp_path / "nodes.yaml").write_text("[]\n")
    result = run_action(case["module"], case_args(case, base_args(kubeconfig, tmp_path, WORKFLOW), tmp_path))
    message = str(result.get("msg", ""))
    assert result.get("failed") is True, result
    assert "Traceback" not in message + str(result.get("exception", "")), result
    assert "\n" not in message.strip(), message
    for part in case["contains"]:
        assert part in message, message
    assert listener.connections == 0, "the module reached the API server before it refused its arguments"


def test_the_listener_sees_a_module_that_reaches_for_the_cluster(api_server: tuple[Listener, Path],
                                                                 run_action: Any) -> None:
    """The check above can fail: cluster_info with good arguments connects (and fails, for no answer comes)."""
    listener, kubeconfig = api_server
    result = run_action("cluster_info", {"kubeconfig": str(kubeconfig)})
    assert result.get("failed") is True and listener.connections > 0, result
