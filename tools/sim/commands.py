"""What a container runs, read from its command and args: an MPI worker's sshd, an MPI launcher's mpirun.

The rules are regular expressions over the container's argv (`command` + `args`) joined by `SEP`, a character no
command line holds, so that one pattern sees both forms a container is written in: exec form (the words are
argv: `[/usr/sbin/sshd, -De]`, or `[sshd]` + args `[-D, -e]`) and shell form (`[sh, -c, SCRIPT]`, the script a
word of its own). The same pattern runs in the agent (Python `re`) and in kwok's Stages (gojq's `test`, Go's
RE2): it uses only syntax both read alike (no `\\s`, which Python's str patterns also match on `SEP`).

Runs sshd (it never ends on its own; mpirun can reach the pod): sshd is started in the foreground, that is
with `-D` among its flags (alone or in a cluster of sshd's flags without arguments: `-D`, `-De`, `-eD`), as
- exec form: argv[0] is sshd (any path), after `env`, `exec`, `sudo` or `VAR=value` words if any;
- shell form: argv[0] is a shell (`sh`, `bash`, `dash`, `zsh`, `ksh`, any path) given `-c` (alone or in a
  cluster: `-c`, `-lc`, `-ec`), and its script runs sshd as a command: at the script's start or after `;`, a
  newline, `&&`, `||`, `|`, `(`, `{`, optionally behind `exec`, `env`, `sudo` or `VAR=value`; and that command
  does not end with a lone `&` (which puts it in the background: the script goes on, and ends).
Anything else does not run sshd: sshd without `-D` (it forks and its parent exits), `service ssh start`, a
mention that is not a command (`command -v sshd`, `echo sshd -D`).

Runs mpirun: `mpirun` or `mpiexec` (any path) is a word of argv or of a script in it.

Runs a DCGM diagnostic: `dcgmi` (any path) followed by the word `diag`, in argv or in a script in it.

Runs the GEMM burn-in harness (`compute/gemm-burn-in`): `gemm_burn_in.py` (any path) is a word of argv or of a
script in it.

Runs the node-drift collector (`configuration/node-drift`): `node_drift.py` (any path) is a word of argv or of a
script in it.
"""
from __future__ import annotations

import functools
import json
import re
from typing import Any

SEP = "\x1f"   # ASCII unit separator: between argv words
_WORD_END = r"(?:$|[ \t\x1f\n;&|)])"
_PREFIX = r"(?:(?:exec|env|sudo|[A-Za-z_][A-Za-z0-9_]*=[^ \t\x1f\n;&|]*)[ \t\x1f]+)*"
_SHELL_SCRIPT = (r"(?:[^\x1f]*/)?(?:ba|da|z|k)?sh\x1f(?:[-+][A-Za-z]+\x1f)*?-[A-Za-z]*c[A-Za-z]*\x1f"
                 r"(?:[^\x1f]*[\n;&|({])?[ \t\n]*")
# sshd's flags that take no argument (sshd.c's getopt string), so a cluster of them may hold D.
_SSHD_FOREGROUND = r"-[46GQRTdeiqrtV]*D"
SSHD = (rf"^(?:{_SHELL_SCRIPT})?{_PREFIX}(?:[^ \t\x1f\n;&|]*/)?sshd"
        rf"(?:[ \t\x1f]+[^ \t\x1f\n;&|]+)*?[ \t\x1f]+{_SSHD_FOREGROUND}"
        r"(?:[^\n;&|]|[<>]&)*(?:$|[\n;|]|&&)")
MPIRUN = rf"(?:^|[ \t\x1f\n;&|(/])(?:mpirun|mpiexec){_WORD_END}"
DCGMI_DIAG = rf"(?:^|[ \t\x1f\n;&|(/])dcgmi[ \t\x1f]+diag{_WORD_END}"
GEMM_BURN_IN = rf"(?:^|[ \t\x1f\n;&|(/])gemm_burn_in\.py{_WORD_END}"
NODE_DRIFT = rf"(?:^|[ \t\x1f\n;&|(/])node_drift\.py{_WORD_END}"

Obj = dict[str, Any]


def argv(container: Obj) -> str:
    """The container's command and args as one string, words joined by `SEP`."""
    return SEP.join(str(w) for w in [*(container.get("command") or []), *(container.get("args") or [])])


# The agent asks of every pod on every pass (10 a second), and a run's pods share a few command lines.
@functools.lru_cache(maxsize=1024)
def _matches(pattern: str, line: str) -> bool:
    return re.search(pattern, line) is not None


def runs_sshd(container: Obj) -> bool:
    return _matches(SSHD, argv(container))


def runs_mpirun(container: Obj) -> bool:
    return _matches(MPIRUN, argv(container))


def runs_dcgmi_diag(container: Obj) -> bool:
    return _matches(DCGMI_DIAG, argv(container))


def runs_gemm_burn_in(container: Obj) -> bool:
    return _matches(GEMM_BURN_IN, argv(container))


def runs_node_drift(container: Obj) -> bool:
    return _matches(NODE_DRIFT, argv(container))


def jq_any_container(pattern: str) -> str:
    """A jq expression (kwok's selectors) true when one of the pod's containers' argv matches `pattern`."""
    joined = f"((.command // []) + (.args // [])) | map(tostring) | join({json.dumps(SEP)})"
    return f"[.spec.containers[] | {joined} | test({json.dumps(pattern)})] | any"
