"""Bad module arguments refused before any request (data/bad_input_args.yaml), through the in-process action plugins:
every case fails with one line naming the option, never a traceback, and the API server it was pointed at saw no
connection at all, so nothing can have been written. (The cases that are refused only after reading a cluster, and
the roles' cases, run against a live cluster: tests/integration/test_bad_input_live.py.)"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.bad_input_cases import base_args, case_args
from tests.unit.faces.listener import Listener

DATA = Path(__file__).parent / "data"
CASES = yaml.safe_load((DATA / "bad_input_args.yaml").read_text())
WORKFLOW = yaml.safe_load((Path(__file__).parents[2] / "integration" / "data" / "workflow.yaml").read_text())


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
