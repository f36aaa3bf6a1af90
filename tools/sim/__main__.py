"""CLI: `python -m tools.sim up|down|status|fault|restart|demo` (run from the repo root)."""
from __future__ import annotations

import argparse
import json
import subprocess
import sys

from kubernetes.client import ApiException

from . import cluster, demo, profiles, stages


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.sim", description=__doc__)
    sub = parser.add_subparsers(dest="cmd", required=True)
    p_up = sub.add_parser("up", help="start a simulated GPU cluster; prints its kubeconfig path last")
    p_up.add_argument("--profile", required=True, help=", ".join(sorted(profiles.PROFILES)))
    p_up.add_argument("--nodes", type=int, required=True)
    p_up.add_argument("--name", default="cre")
    p_up.add_argument("--pod-ms", type=int, default=stages.DEFAULT_POD_MILLISECONDS,
                      help="how long a Job pod runs before it succeeds")
    p_down = sub.add_parser("down", help="stop a cluster and remove its files")
    p_down.add_argument("--name", default="cre")
    sub.add_parser("status", help="list the clusters")
    p_fault = sub.add_parser("fault", help="inject a fault on a node")
    p_fault.add_argument("node")
    p_fault.add_argument("--kind", required=True, choices=cluster.FAULT_KINDS)
    p_fault.add_argument("--factor", type=float, default=cluster.DEFAULT_SLOW_FACTOR,
                         help="slow: the node's bandwidth factor (default 0.5)")
    p_fault.add_argument("--name", default="cre")
    p_restart = sub.add_parser("restart", help="kill a control-plane component and start it again")
    p_restart.add_argument("--component", required=True, choices=sorted(cluster.RESTARTABLE))
    p_restart.add_argument("--down-seconds", type=float, default=2.0, help="how long it stays down (default 2)")
    p_restart.add_argument("--name", default="cre")
    sub.add_parser("build", help="build the binaries into the cache (setup does this)")
    sub.add_parser("demo", help="the smoke demo of make demo")
    args = parser.parse_args(argv)
    try:
        if args.cmd == "up":
            print(cluster.up(args.profile, args.nodes, args.name, args.pod_ms))
        elif args.cmd == "down":
            cluster.down(args.name)
        elif args.cmd == "status":
            print(json.dumps(cluster.status(), indent=2))
        elif args.cmd == "fault":
            cluster.fault(args.name, args.node, args.kind, args.factor)
        elif args.cmd == "restart":
            cluster.restart(args.name, args.component, args.down_seconds)
        elif args.cmd == "build":
            print(cluster.binaries()[0])
        elif args.cmd == "demo":
            return demo.main()
    except cluster.SimError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except (subprocess.CalledProcessError, ApiException, RuntimeError, OSError) as exc:
        detail = getattr(exc, "stdout", None) or getattr(exc, "body", None) or exc
        print(f"error: {args.cmd} failed: {str(detail).strip().splitlines()[-1] if str(detail).strip() else exc}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
