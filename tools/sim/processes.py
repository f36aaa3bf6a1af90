"""Detached processes of a cluster: start, probe, stop. Loopback only."""
from __future__ import annotations

import os
import signal
import socket
import ssl
import subprocess
import time
import urllib.request
from pathlib import Path

# The control plane is Go, and a quarter of the apiserver's CPU went to its garbage collector. Collecting at 5x the
# live heap instead of 2x took 19% off the apiserver's CPU in test_diagnose; the soft limit still holds each process
# near 1.2 GiB (memory is plentiful here, the two cores are not). Nothing the cluster does changes.
GO_RUNTIME = {"GOGC": "400", "GOMEMLIMIT": "1200MiB"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(argv: list[str], log: Path, env: dict[str, str] | None = None) -> int:
    """Start a process in its own session so it outlives this command; returns its pid."""
    with open(log, "ab") as out:
        proc = subprocess.Popen(
            argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            env={**os.environ, **GO_RUNTIME, **(env or {})}, start_new_session=True,
        )
    return proc.pid


def alive(pid: int) -> bool:
    """True for a running process; a zombie (exited, not yet reaped) counts as gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def stop(pid: int, grace: float = 5.0) -> None:
    """SIGTERM, then SIGKILL after `grace` seconds; reaps it when it is our child."""
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            try:
                if os.waitpid(pid, os.WNOHANG)[0] == pid:
                    return
            except ChildProcessError:
                pass
            if not alive(pid):
                return
            time.sleep(0.05)


def wait_https_ok(url: str, timeout: float, pid: int | None = None) -> None:
    """Poll a health endpoint until it answers 200; fail early if the process died."""
    ctx = ssl.create_default_context()
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
    # No proxy: these are our own loopback servers.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), urllib.request.HTTPSHandler(context=ctx))
    deadline = time.monotonic() + timeout
    while True:
        try:
            with opener.open(url, timeout=2) as resp:
                if resp.status == 200:
                    return
        except OSError:
            pass
        if pid is not None and not alive(pid):
            raise RuntimeError(f"process {pid} exited before {url} answered")
        if time.monotonic() > deadline:
            raise RuntimeError(f"{url} did not answer within {timeout:.0f}s")
        time.sleep(0.2)
