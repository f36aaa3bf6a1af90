"""What the simulator takes a container to run (tools/sim/commands.py): sshd in any form, mpirun."""
from __future__ import annotations

from pathlib import Path

import pytest

from tools.sim import commands

CATALOG = Path(__file__).parents[3] / "catalog" / "_lib" / "deps"
INSTALL_THEN_SSHD = ("command -v sshd || (apt-get update && apt-get install -y openssh-server)\n"
                     "mkdir -p /run/sshd\n/usr/sbin/sshd -D -e -f /etc/ssh/sshd_config\n")


@pytest.mark.parametrize(("command", "args"), [
    (["/usr/sbin/sshd", "-De"], []),                               # Kubeflow Trainer's MPI runtimes
    (["/usr/sbin/sshd", "-De", "-f", "/home/mpiuser/.sshd_config"], []),
    (["sshd", "-D"], []),
    (["/usr/sbin/sshd"], ["-De"]),                                   # split between command and args
    (["/usr/sbin/sshd"], ["-e", "-f", "/etc/ssh/sshd_config", "-D"]),
    (["sshd", "-eD"], []),
    ([], ["/usr/sbin/sshd", "-D"]),                                  # all in args
    (["env", "LANG=C", "/usr/sbin/sshd", "-D"], []),
    (["sh", "-c", "/usr/sbin/sshd -De"], []),                      # our catalog's tests and sim runtime
    (["sh", "-c", "exec /usr/sbin/sshd -De"], []),
    (["/bin/bash", "-lc", "mkdir -p /run/sshd && exec /usr/sbin/sshd -D -e"], []),
    (["bash", "-c"], [INSTALL_THEN_SSHD]),                         # installed when missing, then run
    (["sh", "-c"], ["set -e; /usr/sbin/sshd -D 2>&1 | tee /tmp/sshd.log"]),
    (["sh", "-c", "/usr/sbin/sshd -D; echo never"], []),
    (["sh", "-c", "sshd -D -e 2>&1"], []),
    (["sh", "-c", (CATALOG / "sshd.sh").read_text()], []),
    (["sh", "-c"], [(CATALOG / "aws-gb300-sshd.sh").read_text()]),
])
def test_sshd_in_the_foreground_runs_sshd(command: list[str], args: list[str]) -> None:
    assert commands.runs_sshd({"command": command, "args": args})


@pytest.mark.parametrize(("command", "args"), [
    (["/usr/sbin/sshd"], []),                                       # forks into the background and exits
    (["/usr/sbin/sshd", "-e", "-f", "/etc/ssh/sshd_config"], []),
    (["/usr/sbin/sshd", "-oDenyUsers=nobody"], []),                # -o takes the rest of the word: no -D
    (["sh", "-c", "/usr/sbin/sshd -D & sleep 5"], []),              # in the background: the script ends
    (["sh", "-c", "/usr/sbin/sshd -D >/tmp/log 2>&1 &"], []),
    (["sh", "-c", "service ssh start && sleep 5"], []),
    (["sh", "-c", "command -v sshd || apt-get install -y openssh-server"], []),
    (["sh", "-c", "echo sshd -D"], []),                             # a mention, not a command
    (["echo", "sshd", "-D"], []),                                   # an argument, not the program
    (["python", "-c", "sshd -D"], []),                              # not a shell's script
    (["torchrun", "train.py"], []),
    (["sleep", "infinity"], []),
    ([], []),
])
def test_anything_else_does_not_run_sshd(command: list[str], args: list[str]) -> None:
    assert not commands.runs_sshd({"command": command, "args": args})


@pytest.mark.parametrize(("argv", "mpirun"), [
    (["mpirun", "hostname"], True),
    (["timeout", "3600", "/usr/local/mpi/bin/mpirun", "-N", "4", "all_reduce_perf_mpi"], True),
    (["bash", "-c", "set -x; mpiexec -n 8 ./a.out"], True),
    (["sh", "-c", "sleep 1 && /opt/amazon/openmpi/bin/mpirun --allow-run-as-root all_reduce_perf_mpi"], True),
    (["torchrun", "--nproc-per-node", "4", "train.py"], False),
    (["sh", "-c", "echo done"], False),
    (["/opt/mpirun-wrapper.sh"], False),
])
def test_mpirun_is_a_word_of_the_command(argv: list[str], mpirun: bool) -> None:
    assert commands.runs_mpirun({"command": argv[:1], "args": argv[1:]}) is mpirun


def test_kwok_s_selector_runs_the_same_pattern_over_the_same_words() -> None:
    expression = commands.jq_any_container(commands.SSHD)
    assert expression.startswith('[.spec.containers[] | ((.command // []) + (.args // [])) | map(tostring) | '
                                 'join("\\u001f") | test(')
    assert expression.endswith(")] | any") and f"test({commands.json.dumps(commands.SSHD)})" in expression
