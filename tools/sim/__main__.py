"""CLI: `python -m tools.sim up|down|status|fault|restart|pod-ms|log-style|reset|demo` (run from the repo root)."""
from __future__ import annotations

import argparse
import json
import subprocess
import sys

from kubernetes.client import ApiException

from . import cluster, demo, faults, profiles, reset, stages
from .logs import dcgm_tests, log_style

FAULTS = """fault kinds (fault NODE --kind KIND):
  hardware  GPU marked unhealthy; the health agent cordons the node once a workload runs on it; its GPU pods fail
  workload  the node's GPU Job pods exit 1 (restarted in place as their restartPolicy says)
  cordon    spec.unschedulable
  slow      every group with the node prints its bus bandwidth times --factor
  nvlink    GB200/GB300: multi-node groups with the node print times --factor while they run over MNNVL
            (NCCL_MNNVL_ENABLE not 0, nodes of one clique); with NCCL_MNNVL_ENABLE=0 they print the
            network-only figure and look healthy
  fabric    GB200/GB300: the node's GPU fabric never completes (NVML state 1): NCCL turns MNNVL off without a
            warning for every multi-node group with the node, which then prints the network-only figure,
            `MNNVL 0` and the node's fabric state
  stall     the node's GPU Job pods hang: Megatron lines stop after three, nccl-tests print no table
  crash     the training pod fails once, after its first checkpoint
  dcgm      with --gpu N --test TEST: `dcgmi diag` fails TEST on GPU N of the node (DCGM's message and error
            code in its JSON, dcgmi's exit code 205 or 226) when the level runs TEST; --test all-skip: every
            test of GPU N is Skip (DCGM still exits 0). Each call adds one; several GPUs and tests add up
GEMM burn-in faults on GPU N (the next `compute/gemm-burn-in` run on the node; several GPUs and kinds add up):
  gpu-slow      --gpu N --factor F: its TFLOPS and SM clock times F
  gpu-throttle  --gpu N --reason {hw_slowdown,hw_thermal,hw_power_brake,sw_power_cap} [--after-minutes M]: from
                minute M the reason shows and the figure drops (hardware reasons 15%, sw_power_cap 3%)
  gpu-degrade   --gpu N --factor F: after the warm-up its figure falls steadily to F times its own by the end
  gpu-wrong     --gpu N: every window's result check is wrong (the harness exits 1)
  power-limit   --gpu N --factor F: its enforced power limit is F times the default, its figure lower
node-drift configuration faults (the next `configuration/node-drift` run on the node; several add up):
  config    --field F [--gpu N]: F one of ecc-off, ecc-pending, remap-pending, persistence-off, nvlink-down,
            pcie-downgraded (Gen4 x8), gpu-missing, power-limit (80% of the default), vbios (on GPU N, default 0),
            nic-port-down (the node's first RDMA port), nic-fw (every NIC of the node on other firmware)
  none      clears every fault of the node (its DCGM, burn-in GPU and configuration ones too)
link faults (fault DOMAIN_A --kind link --peer DOMAIN_B [--factor F]):
  groups with nodes in both topology domains (values of one label: clique, rack, network layer, block) print
  times F; each domain alone passes. `fault DOMAIN_A --kind none` clears the domain's link faults.
"""


def _fault_parser(sub: argparse._SubParsersAction) -> None:
    """The `fault` command and its arguments."""
    p_fault = sub.add_parser("fault", help="inject a fault on a node, or on the link between two topology domains",
                             description=FAULTS, formatter_class=argparse.RawDescriptionHelpFormatter)
    p_fault.add_argument("node", help="the node; for --kind link (and clearing one) a topology domain")
    p_fault.add_argument("--kind", required=True, choices=faults.FAULT_KINDS)
    p_fault.add_argument("--factor", type=float, default=None,
                         help="slow, link, nvlink: the bandwidth factor (default: slow 0.5, link 0.5, nvlink 0.25); "
                              "gpu-slow, gpu-degrade, power-limit: the GPU's factor (required)")
    p_fault.add_argument("--peer", default="", help="link: the domain on the other side of the faulty link")
    p_fault.add_argument("--gpu", type=int, default=None,
                         help="dcgm, config and the burn-in kinds: the GPU's index on the node")
    p_fault.add_argument("--field", default=None, help="config: the configuration field the fault changes")
    p_fault.add_argument("--reason", default=None, help="gpu-throttle: the NVML throttle reason that shows")
    p_fault.add_argument("--after-minutes", type=float, default=None,
                         help="gpu-throttle: the minute of the run from which it throttles (default 0)")
    p_fault.add_argument("--test", default=None,
                         help=f"dcgm: the failing test as DCGM's JSON names it ({', '.join(dcgm_tests.names())}), "
                              f"or {dcgm_tests.ALL_SKIP}")
    p_fault.add_argument("--name", default="cre")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.sim", description=__doc__, epilog=FAULTS,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    p_up = sub.add_parser("up", help="start a simulated GPU cluster; prints its kubeconfig path last")
    p_up.add_argument("--profile", required=True, help=", ".join(sorted(profiles.PROFILES)))
    p_up.add_argument("--nodes", type=int, required=True)
    p_up.add_argument("--name", default="cre")
    p_up.add_argument("--pod-ms", type=int, default=stages.DEFAULT_POD_MILLISECONDS,
                      help="how long a Job pod runs before it succeeds")
    p_up.add_argument("--backoff-ms", type=int, default=stages.KUBELET_BACKOFF_MS,
                      help="the kubelet's first back-off before restarting a crashed container (it doubles up to "
                           "30 times this; default the kubelet's 10 s)")
    p_up.add_argument("--dcgm-layout", type=int, default=dcgm_tests.DEFAULT_LAYOUT,
                      help=f"the JSON layout `dcgmi diag --json` pods print: 3 (DCGM {dcgm_tests.DCGM_VERSION[3]}) "
                           f"or 4 (DCGM {dcgm_tests.DCGM_VERSION[4]}, the default)")
    p_down = sub.add_parser("down", help="stop a cluster and remove its files")
    p_down.add_argument("--name", default="cre")
    sub.add_parser("status", help="list the clusters")
    _fault_parser(sub)
    p_restart = sub.add_parser("restart", help="kill a control-plane component and start it again")
    p_restart.add_argument("--component", required=True, choices=sorted(cluster.RESTARTABLE))
    p_restart.add_argument("--down-seconds", type=float, default=2.0, help="how long it stays down (default 2)")
    p_restart.add_argument("--name", default="cre")
    p_pods = sub.add_parser("pod-ms", help="how long the Job pods of one namespace run before they succeed")
    p_pods.add_argument("namespace")
    p_pods.add_argument("--ms", type=int, default=None, help="milliseconds; leave out for the cluster's own --pod-ms")
    p_pods.add_argument("--name", default="cre")
    p_style = sub.add_parser("log-style", help="how the workloads print their logs: the cluster's default, or one "
                                               "namespace's", description=log_style.HELP,
                             formatter_class=argparse.RawDescriptionHelpFormatter)
    p_style.add_argument("--namespace", default=None,
                         help="the namespace whose workloads print so (default: the cluster's default, which "
                              "namespaces' own fields win over)")
    for key, choices in log_style.CHOICES.items():
        p_style.add_argument(f"--{key.replace('_', '-')}", dest=key, choices=choices, default=None)
    p_style.add_argument("--name", default="cre")
    p_reset = sub.add_parser("reset", help="clear every fault, cordon, pod duration and log style and delete what "
                                           "users made in the namespaces (shared test clusters)")
    p_reset.add_argument("--name", default="cre")
    sub.add_parser("build", help="build the binaries into the cache (setup does this)")
    sub.add_parser("demo", help="the smoke demo of make demo")
    args = parser.parse_args(argv)
    try:
        if args.cmd == "up":
            print(cluster.up(args.profile, args.nodes, args.name, args.pod_ms, args.backoff_ms, args.dcgm_layout))
        elif args.cmd == "down":
            cluster.down(args.name)
        elif args.cmd == "status":
            print(json.dumps(cluster.status(), indent=2))
        elif args.cmd == "fault":
            faults.fault(args.name, args.node, args.kind, args.factor, args.peer, args.gpu, args.test, args.reason,
                         args.after_minutes, args.field)
        elif args.cmd == "restart":
            cluster.restart(args.name, args.component, args.down_seconds)
        elif args.cmd == "pod-ms":
            cluster.pod_duration(args.name, args.namespace, args.ms)
        elif args.cmd == "log-style":
            cluster.log_style(args.name, args.namespace,
                              **{key: value for key in log_style.CHOICES if (value := getattr(args, key)) is not None})
        elif args.cmd == "reset":
            reset.reset(args.name)
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
