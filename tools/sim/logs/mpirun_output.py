"""What Open MPI's mpirun prints when it cannot start its daemon on a host: ssh's own error for the host, then
ORTE's help text `failed-daemon-launch` (open-mpi/ompi `orte/mca/errmgr/base/help-errmgr-base.txt`, commit
097df599c5478b4c8695d6ea7251fb5f1a023544) between the dash lines of `opal_show_help` (74 dashes)."""
from __future__ import annotations

from typing import Any

DASH_LINE = "-" * 74
FAILED_DAEMON_LAUNCH = """ORTE was unable to reliably start one or more daemons.
This usually is caused by:

* not finding the required libraries and/or binaries on
  one or more nodes. Please check your PATH and LD_LIBRARY_PATH
  settings, or configure OMPI with --enable-orterun-prefix-by-default

* lack of authority to execute on one or more specified nodes.
  Please verify your allocation and authorities.

* the inability to write startup files into /tmp (--tmpdir/orte_tmpdir_base).
  Please check with your sys admin to determine the correct location to use.

*  compilation of the orted with dynamic libraries when static are required
  (e.g., on Cray). Please check your configure cmd line and consider using
  one of the contrib/platform definitions for your system type.

* an inability to create a connection back to mpirun due to a
  lack of common network interfaces and/or no route found between
  them. Please check network connectivity (including firewalls
  and network routing requirements)."""


def ssh_host(pod: dict[str, Any]) -> str:
    """The name mpirun's hostfile gives a worker: its hostname in the JobSet's subdomain (Kubeflow Trainer writes
    `<pod hostname>.<subdomain>`), else the pod's name."""
    spec = pod.get("spec") or {}
    host = spec.get("hostname") or (pod.get("metadata") or {}).get("name", "")
    return f"{host}.{spec['subdomain']}" if spec.get("subdomain") else host


def failed_daemon_launch(host: str) -> list[str]:
    """The lines mpirun prints when ssh to `host` is refused (no sshd listens there, or the pod is down)."""
    return [f"ssh: connect to host {host} port 22: Connection refused", DASH_LINE,
            *FAILED_DAEMON_LAUNCH.splitlines(), DASH_LINE]
