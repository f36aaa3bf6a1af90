"""Which log style a workload prints in: the cluster's default, a namespace's fields over it, as the CLI and
`cluster.log_style` save them and the agent reads them (no cluster: a cluster's state file under a temp home)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tools.sim import __main__ as cli
from tools.sim import cluster
from tools.sim.logs import log_style
from tools.sim.logs.log_style import Source, Style
from tools.sim.state import ClusterState


@pytest.fixture
def sim(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cluster `c` as `up` leaves its state file; returns that file."""
    monkeypatch.setenv("CRE_SIM_HOME", str(tmp_path))
    ClusterState.path("c").parent.mkdir(parents=True)
    ClusterState(name="c", profile="aws-h100", nodes=2, kubeconfig=str(tmp_path / "kubeconfig.yaml")).save()
    return ClusterState.path("c")


def test_the_defaults_are_today_s_output() -> None:
    assert Style() == Style("none", "current", "none", "brief", "megatron")
    assert log_style.DEFAULT == Source(None).style("any")


def test_a_namespace_s_fields_win_over_the_cluster_s_and_the_cluster_s_over_the_defaults() -> None:
    cluster_style = {"transport": "socket", "training": "nemo2"}
    namespaces = {"team-a": {"training": "megatron-skipped", "nccl_prefix": "srun"}}
    assert log_style.resolve(cluster_style, namespaces, "team-a") == Style(
        nccl_prefix="srun", transport="socket", training="megatron-skipped")
    assert log_style.resolve(cluster_style, namespaces, "team-b") == Style(transport="socket", training="nemo2")
    assert log_style.resolve({}, {}, "team-b") == Style()


def test_log_style_sets_fields_over_earlier_ones_and_no_field_clears_them(sim: Path) -> None:
    cluster.log_style("c", None, transport="socket")
    cluster.log_style("c", "team-a", nccl_prefix="tag-output")
    cluster.log_style("c", "team-a", nccl_table="no-root")
    cluster.log_style("c", "team-b", transport="platform")
    saved = ClusterState.load("c")
    assert saved.log_style == {"transport": "socket"}
    assert saved.namespace_log_style == {"team-a": {"nccl_prefix": "tag-output", "nccl_table": "no-root"},
                                         "team-b": {"transport": "platform"}}
    cluster.log_style("c", "team-a")
    cluster.log_style("c")
    saved = ClusterState.load("c")
    assert (saved.log_style, saved.namespace_log_style) == ({}, {"team-b": {"transport": "platform"}})


@pytest.mark.parametrize(("namespace", "style", "message"), [
    (None, {"colour": "red"}, "unknown log style field 'colour'"),
    (None, {"nccl_table": "no-redop"}, "unknown nccl_table 'no-redop': must be one of current, no-root"),
    ("Team_A", {"transport": "socket"}, "invalid namespace 'Team_A'"),
])
def test_log_style_refuses_what_it_does_not_know_and_changes_nothing(
        sim: Path, namespace: str | None, style: dict[str, str], message: str) -> None:
    before = sim.read_text()
    with pytest.raises(cluster.SimError, match=message):
        cluster.log_style("c", namespace, **style)
    assert sim.read_text() == before


def test_the_agent_sees_each_change_at_its_next_look(sim: Path) -> None:
    source = Source(sim)
    assert source.style("team-a") == Style()
    cluster.log_style("c", "team-a", training="nemo2")
    assert source.style("team-a") == Style(training="nemo2")
    cluster.log_style("c", None, nccl_extra_test="sendrecv")  # within the same clock tick as the last save
    assert source.style("team-a") == Style(nccl_extra_test="sendrecv", training="nemo2")
    assert source.style("team-b") == Style(nccl_extra_test="sendrecv")


def test_an_unchanged_state_file_is_not_read_again(sim: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = Source(sim)
    source.style("team-a")
    monkeypatch.setattr(Path, "read_text", lambda self: pytest.fail(f"read {self} again"))
    assert source.style("team-b") == Style()


def test_the_cli_sets_a_namespace_s_style_and_clears_it(sim: Path) -> None:
    assert cli.main(["log-style", "--name", "c", "--namespace", "team-a", "--nccl-prefix", "srun",
                     "--nccl-extra-test", "all_gather", "--training", "megatron-no-tflops"]) == 0
    assert json.loads(sim.read_text())["namespace_log_style"] == {
        "team-a": {"nccl_prefix": "srun", "nccl_extra_test": "all_gather", "training": "megatron-no-tflops"}}
    assert cli.main(["log-style", "--name", "c", "--namespace", "team-a"]) == 0
    assert json.loads(sim.read_text())["namespace_log_style"] == {}


def test_the_cli_offers_every_choice_and_refuses_others(sim: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["log-style", "--name", "c", "--transport", "tcp"])
    err = capsys.readouterr().err
    assert "invalid choice: 'tcp'" in err and all(choice in err for choice in log_style.CHOICES["transport"])
    assert cli.main(["log-style", "--name", "nope", "--transport", "socket"]) == 1
