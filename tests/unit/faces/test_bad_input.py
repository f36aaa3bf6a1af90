"""Bad-input corpus through the workflow_render face (in-process action plugin): every case fails with a
message naming the field path or the input, never a traceback. One file per case in data/bad_input/.

A case: `args` (task arguments; `definition: "@base"` means the base Workflow), optional `workflow_patch`
(RFC 6902 on the base Workflow, passed as `definition`), `src_text`/`nodes_file_text` (written to a file
passed as `src`/`nodes_file`), and the expectation: `msg` (exact) or `contains` (substrings), optional `reason`.
"""
from pathlib import Path

import jsonpatch
import pytest
import yaml

DATA = Path(__file__).parent / "data" / "bad_input"
BASE = yaml.safe_load((Path(__file__).parents[1] / "engine" / "data" / "render" / "_workflow.yaml").read_text())
CASES = sorted(DATA.glob("*.yaml"))


def task_args(case, tmp_path):
    args = dict(case["args"])
    if "workflow_patch" in case or args.get("definition") == "@base":
        args["definition"] = jsonpatch.apply_patch(BASE, case.get("workflow_patch") or [])
    for option in ("src", "nodes_file"):
        if f"{option}_text" in case:
            path = tmp_path / f"{option}.yaml"
            path.write_text(case[f"{option}_text"])
            args[option] = str(path)
    return args


def test_corpus_is_large_enough():
    assert len(CASES) >= 40


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_bad_input_fails_cleanly(path, tmp_path, run_action):
    case = yaml.safe_load(path.read_text())
    result = run_action("workflow_render", task_args(case, tmp_path))
    assert result.get("failed") is True, result
    assert "exception" not in result and "Traceback" not in result["msg"]
    if "msg" in case:
        assert result["msg"] == case["msg"]
    for part in case.get("contains", []):
        assert part in result["msg"]
    assert result.get("reason") == case.get("reason")
    assert not (result.get("plan") or {}).get("jobs")


def test_an_undecodable_kubeconfig_credential_is_one_line_that_does_not_quote_it(run_action):
    secret = "s3cr3tkey"  # nine base64 characters: one too many to decode
    kubeconfig = {"apiVersion": "v1", "current-context": "x",
                  "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1"}}],
                  "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
                  "users": [{"name": "u", "user": {"client-key-data": secret, "client-certificate-data": secret}}]}
    result = run_action("cluster_info", {"kubeconfig": kubeconfig})
    assert result["failed"] is True
    assert result["msg"] == ("connecting to the cluster: the kubeconfig's credentials cannot be decoded (Invalid "
                             "base64-encoded string); fix its user entry (the *-data fields are base64 of the PEM "
                             "files)")
    assert secret not in str(result)
