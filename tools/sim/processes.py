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


def alive(pid: int, owner: str | None = None) -> bool:
    """True for a running process; a zombie (exited, not yet reaped) counts as gone. With `owner` (a cluster's
    directory), only a process whose command line names it: pids wrap at 32,768 here, so within a test session the
    pid in the file of a process that died long ago may be another's (another cluster's apiserver, a test worker)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes() if owner is not None else b""
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z" and (owner is None or owner.encode() in cmdline)


def stop(pids: list[int], owner: str, grace: float = 5.0) -> None:
    """SIGTERM every process of `pids` that is still `owner`'s, SIGKILL those left after `grace` seconds (at once
    with 0: what kwokctl does), and wait until they are gone; reaps those that are our children."""
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
        if sig == signal.SIGTERM and grace <= 0:
            continue
        left = [pid for pid in pids if alive(pid, owner)]
        for pid in left:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + wait
        while left and time.monotonic() < deadline:
            for pid in left:
                try:
                    os.waitpid(pid, os.WNOHANG)
                except ChildProcessError:
                    pass
            # Signalled, it is the cluster's until reaped (an exiting process's command line reads empty first).
            left = [pid for pid in left if alive(pid)]
            if left:
                time.sleep(0.05)
        if not left:
            return


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
