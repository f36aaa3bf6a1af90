"""Bad input against a live cluster (data/bad_input_live.yaml): every case is refused with a message naming the
option or role variable, and the cluster is as it was before the case (compared object by object).

All cases run in one ansible-playbook process (one start-up instead of a hundred): each case is a block whose
rescue stores the failed result, followed by a snapshot of the cluster that this test takes when the playbook
asks for it (a url lookup to a small HTTP server here, so no process starts per snapshot); each case is judged by
the snapshots just before and just after it. Offline cases of workflow_render are in tests/unit/faces."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client

from tests.ansible_run import ROOT
from tests.bad_input_cases import NAMESPACE, base_args, case_args

from .cluster_state import namespaced_resources, snapshot
from .conftest import Sim

DATA = Path(__file__).parent / "data"
CASES = yaml.safe_load((DATA / "bad_input_live.yaml").read_text())
ABSENT = "badinput-absent"  # a namespace no case may create


def snapshot_task(name: str, port: int) -> dict[str, Any]:
    """Asks the test for a snapshot of the cluster named `name` (the lookup runs in the controller process)."""
    url = f"http://127.0.0.1:{port}/{name}"
    return {"name": f"snapshot {name}", "ansible.builtin.debug": {
        "msg": f"{{{{ lookup('ansible.builtin.url', '{url}', use_proxy=false) }}}}"}}


def case_tasks(case: dict[str, Any], bases: dict[str, dict[str, Any]], out: Path, port: int) -> list[dict]:
    """A block running the case, its rescue storing the failed result, then a snapshot of the cluster."""
    name = case["id"]
    given = case_args(case, bases, out)
    if "module" in case:
        task = {"name": f"run {name}", f"cre.certification.{case['module']}": given}
    else:
        task = {"name": f"run {name}", "ansible.builtin.include_role": {"name": f"cre.certification.{case['role']}"},
                "vars": given}
    store = {"name": f"store {name}", "ansible.builtin.copy": {
        "dest": str(out / f"{name}.result.json"), "mode": "0644",
        "content": "{{ {'task': ansible_failed_task.name, 'result': ansible_failed_result} | to_json }}"}}
    return [{"name": f"case {name}", "block": [task], "rescue": [store]}, snapshot_task(name, port)]


def snapshot_server(sim: Sim, out: Path) -> ThreadingHTTPServer:
    """Serves GET /<name>: writes the cluster's snapshot to <out>/<name>.state.json, then answers."""
    resources = namespaced_resources(sim.api)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            state = snapshot(sim.api, resources, [NAMESPACE, "default"], NAMESPACE)
            (out / f"{self.path.strip('/')}.state.json").write_text(json.dumps(state, sort_keys=True))
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args: Any) -> None:
            """Quiet."""

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture(scope="module")
def corpus(make_sim: Callable[..., Sim], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One small cluster, the namespace of the cases, and the whole corpus run once; yields the output folder."""
    sim = make_sim("badin", "onprem-b300", 2)
    client.CoreV1Api(sim.api).create_namespace({"metadata": {"name": NAMESPACE}})
    out = tmp_path_factory.mktemp("bad-input")
    (out / "nodes.yaml").write_text("[]\n")
    bases = base_args(sim.kubeconfig, out, yaml.safe_load((DATA / "workflow.yaml").read_text()))
    server = snapshot_server(sim, out)
    port = server.server_address[1]
    tasks = [snapshot_task("before", port)] + [t for case in CASES for t in case_tasks(case, bases, out, port)]
    play = {"name": "Bad input", "hosts": "localhost", "connection": "local", "gather_facts": False,
            "module_defaults": {"group/cre.certification.certification": {"kubeconfig": str(sim.kubeconfig)}},
            "tasks": tasks}
    (out / "playbook.yml").write_text(yaml.safe_dump([play], sort_keys=False))
    try:
        env = {**os.environ, "ANSIBLE_NOCOLOR": "1", "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg"),
               "ANSIBLE_LOCALHOST_WARNING": "0", "ANSIBLE_PYTHON_INTERPRETER": sys.executable}
        proc = subprocess.run([str(ROOT / ".venv/bin/ansible-playbook"), "-i", "localhost,", str(out / "playbook.yml")],
                              cwd=ROOT, env=env, capture_output=True, text=True, timeout=1200, check=False)
    finally:
        server.shutdown()
    (out / "output.txt").write_text(proc.stdout + proc.stderr)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    yield out


def failed_message(result: dict[str, Any]) -> str:
    """The failed task's message; of a looped task, its first failed item's."""
    items = [r for r in result.get("results") or [] if r.get("failed")]
    return str((items[0] if items else result).get("msg", ""))


def test_corpus_is_large_enough() -> None:
    assert len(CASES) >= 25  # and 60 more refused before any request: tests/unit/faces/test_bad_input_args.py
    assert len({c["id"] for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_bad_input_is_refused_and_changes_nothing(case: dict[str, Any], corpus: Path) -> None:
    stored = corpus / f"{case['id']}.result.json"
    assert stored.is_file(), f"{case['id']} did not fail (see {corpus / 'output.txt'})"
    failure = json.loads(stored.read_text())
    message = failed_message(failure["result"])
    # Ansible 2.19 sets `exception` to "(traceback unavailable)" on every failed result; a real one has a Traceback.
    assert "Traceback" not in message + str(failure["result"].get("exception", "")), failure
    assert "\n" not in message.strip() or case.get("role"), message  # role argument checks list one per line
    for part in case["contains"]:
        assert part in message, (failure["task"], message)
    index = CASES.index(case)
    before = corpus / f"{CASES[index - 1]['id'] if index else 'before'}.state.json"
    after = corpus / f"{case['id']}.state.json"
    was, now = json.loads(before.read_text()), json.loads(after.read_text())
    assert [k for k in now["/api/v1/namespaces"] if k[0] == ABSENT] == []
    changed = {key: (was.get(key), now.get(key)) for key in set(was) | set(now) if was.get(key) != now.get(key)}
    assert changed == {}, changed
