"""Cluster lifecycle: up, down, status, restart, and the settings a running cluster keeps (pod durations, log
styles). Every entry point validates before it changes anything. Faults are `faults`' job."""
from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import yaml
from kubernetes import client, config

from . import computedomain, controllers, processes, profiles, stages, volumes
from .logs import dcgm_tests
from .logs import log_style as log_styles
from .state import NAME_RE, ClusterState, cluster_dir, known_clusters, workdir

ROOT = Path(__file__).resolve().parents[2]
NAMESPACE_RE = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")  # a DNS-1123 label, as Kubernetes wants


class SimError(Exception):
    """A one-line user error: printed without a traceback, exit code 1."""


def binaries() -> tuple[Path, Path]:
    """(bin dir, assets dir), building them on first use."""
    out = subprocess.run(["bash", str(ROOT / "tools/sim/build.sh")], check=True, stdout=subprocess.PIPE, text=True)
    bin_dir = Path(out.stdout.strip().splitlines()[-1])
    return bin_dir, bin_dir.parent / "assets"


def api(kubeconfig: str | Path) -> client.ApiClient:
    return config.new_client_from_config(config_file=str(kubeconfig))


def _env(bin_dir: Path) -> dict[str, str]:
    # kwokctl's binary runtime starts the control plane with its own environment.
    return {**os.environ, **processes.GO_RUNTIME, "KWOK_WORKDIR": str(workdir()), "KWOK_RUNTIME": "binary",
            "PATH": f"{bin_dir}:{os.environ.get('PATH', '')}"}


def _kwokctl(bin_dir: Path, *args: str) -> None:
    subprocess.run([str(bin_dir / "kwokctl"), *args], check=True, env=_env(bin_dir),
                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def _kubectl(bin_dir: Path, kubeconfig: str, *args: str) -> None:
    subprocess.run([str(bin_dir / "kubectl"), f"--kubeconfig={kubeconfig}", *args], check=True,
                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def validate_up(profile: str, nodes: int, name: str) -> None:
    if profile not in profiles.PROFILES:
        raise SimError(f"unknown profile {profile!r}: must be one of {', '.join(sorted(profiles.PROFILES))}")
    if nodes < 1:
        raise SimError(f"--nodes must be at least 1, got {nodes}")
    if not NAME_RE.match(name):
        raise SimError(f"invalid cluster name {name!r}: lowercase letters, digits and '-', at most 32")
    if cluster_dir(name).exists():
        raise SimError(f"cluster {name!r} already exists (run 'down --name {name}' first)")


# kwokctl picks free ports, but with several clusters starting at once one can be taken before its component
# binds it; such a start is torn down and made once more.
STARTS = 2
COMPONENTS = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok-controller")
# kwok renews every node's lease each lease/4, and kwokctl's lease is 40 s times the heartbeat factor: at its
# default factor 5, 10,000 nodes would cost the apiserver 200 lease writes a second. Big clusters get a longer
# lease (KCM's node grace period grows with it) so that renewals stay at this rate; small ones keep 5.
LEASE_RENEWALS_PER_SECOND = 20
DEFAULT_HEARTBEAT_FACTOR = 5.0
CREATE_THREADS = 8
KWOK_PARALLELISM = 16


def heartbeat_factor(nodes: int) -> float:
    return max(DEFAULT_HEARTBEAT_FACTOR, nodes / (10 * LEASE_RENEWALS_PER_SECOND))


def ready_timeout(nodes: int) -> float:
    """How long the nodes may take to become Ready: kwok initializes some hundreds a second on this machine."""
    return 120 + nodes / 50


def owner(name: str) -> str:
    """What every process of cluster `name` has on its command line (a path of its directory): a pid from its
    files is signalled or counted as running only when it still is one of them (`processes.alive`)."""
    return f"{cluster_dir(name)}/"


def read_pid(pid_file: Path) -> int:
    """The pid in a pid file; 0 (no process) when the file is gone or unreadable."""
    try:
        return int(pid_file.read_text().strip())
    except (OSError, ValueError):
        return 0


def component_pids(name: str) -> dict[Path, int]:
    """The pid files kwokctl wrote for the cluster's components, and the pid in each."""
    return {pid_file: read_pid(pid_file) for pid_file in (cluster_dir(name) / "pids").glob("*.pid")}


@contextmanager
def ports_taken() -> Iterator[None]:
    """Held (across processes: parallel test workers start clusters at once) from the moment kwokctl and
    `controllers` pick free ports until every component has bound its own, so two starts never pick one port."""
    workdir().mkdir(parents=True, exist_ok=True)
    with open(workdir() / "ports.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def up(profile: str, nodes: int, name: str, pod_milliseconds: int = stages.DEFAULT_POD_MILLISECONDS,
       backoff_ms: int = stages.KUBELET_BACKOFF_MS, dcgm_layout: int = dcgm_tests.DEFAULT_LAYOUT) -> Path:
    """Start a cluster and return its kubeconfig path. On any failure, tear down what was started.
    `dcgm_layout`: the JSON layout its `dcgmi diag --json` pods print, DCGM 3.x's or 4.x's."""
    validate_up(profile, nodes, name)
    if backoff_ms < 0:
        raise SimError(f"--backoff-ms must be 0 or more, got {backoff_ms}")
    if dcgm_layout not in dcgm_tests.LAYOUTS:
        raise SimError(f"--dcgm-layout must be 3 (DCGM {dcgm_tests.DCGM_VERSION[3]}) or 4 "
                       f"(DCGM {dcgm_tests.DCGM_VERSION[4]}), got {dcgm_layout}")
    bin_dir, assets = binaries()
    attempt = 1
    while True:
        try:
            return _up(bin_dir, assets, profile, nodes, name, pod_milliseconds, backoff_ms, dcgm_layout)
        except ComponentDied:
            down(name, missing_ok=True)
            if attempt >= STARTS:
                raise
            attempt += 1
        except BaseException:
            down(name, missing_ok=True)
            raise


class ComponentDied(SimError):
    """A control-plane component exited right after the start (most often: its port was taken meanwhile)."""


def _alive(name: str) -> None:
    """Every control-plane component kwokctl started still runs, and kube-controller-manager answers its health
    check (under load it can give up waiting for the apiserver and exit some seconds after the start)."""
    config_doc = next(d for d in yaml.safe_load_all((cluster_dir(name) / "kwok.yaml").read_text())
                      if d and d.get("kind") == "KwokctlConfiguration")
    kcm = next((c for c in config_doc.get("components") or [] if c.get("name") == "kube-controller-manager"), {})
    port = next((p["port"] for p in kcm.get("ports") or [] if p.get("name") == "https"), None)
    pid_file = cluster_dir(name) / "pids" / "kube-controller-manager.pid"
    if port and pid_file.exists():
        try:
            processes.wait_https_ok(f"https://127.0.0.1:{port}/healthz", 60, read_pid(pid_file))
        except RuntimeError as exc:
            raise ComponentDied(f"kube-controller-manager of cluster {name!r}: {exc}") from None
    pids = {pid_file.stem: pid for pid_file, pid in component_pids(name).items()}
    for component in COMPONENTS:
        if not processes.alive(pids.get(component, 0), owner(name)):
            log = cluster_dir(name) / "logs" / f"{component}.log"
            last = log.read_text(errors="replace").strip().splitlines()[-1:] if log.exists() else []
            raise ComponentDied(f"{component} of cluster {name!r} is not running: {' '.join(last)[-300:]}") from None


def _up(bin_dir: Path, assets: Path, profile: str, nodes: int, name: str, pod_ms: int, backoff_ms: int,
        dcgm_layout: int) -> Path:
    run = cluster_dir(name) / "cre"
    run.mkdir(parents=True)
    sched = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "leaderElection": {"leaderElect": False},
        # kwokctl's disableQPSLimits reaches the scheduler as flags, which a config file overrides: without this
        # the scheduler keeps its default 50 requests/s, and a DRA pod costs it 3 writes (nomination, the claim's
        # allocation, the binding) against a plain pod's one.
        "clientConnection": {"qps": controllers.QPS, "burst": controllers.BURST},
        # Gang-scheduled runtimes name kai-scheduler; a second profile binds their pods too.
        "profiles": [{"schedulerName": "default-scheduler"}, {"schedulerName": "kai-scheduler"}],
    }
    (run / "scheduler.yaml").write_text(yaml.safe_dump(sched))
    kwok_cfg = {
        "apiVersion": "config.kwok.x-k8s.io/v1alpha1",
        "kind": "KwokctlConfiguration",
        "options": {
            "runtime": "binary", "bindAddress": "127.0.0.1", "kubeBinaryPrefix": str(bin_dir),
            "etcdBinary": str(bin_dir / "etcd"), "kwokControllerBinary": str(bin_dir / "kwok"),
            "kubeSchedulerConfig": str(run / "scheduler.yaml"), "enableCRDs": ["Stage", "Logs"],
            "disableQPSLimits": True,
        },
        "componentsPatches": [
            # A node kwok has not initialized yet within the startup grace is marked NotReady and tainted by
            # the node controller: thousands of extra writes (and kwok's re-initializations) in a big start.
            # Its Job controller syncs 5 Jobs at a time by default: ~3 pods a second under 5,000 JobSets; 50.
            {"name": "kube-controller-manager", "extraArgs": [
                {"key": "leader-elect", "value": "false"},
                {"key": "concurrent-job-syncs", "value": "50"},
                {"key": "node-startup-grace-period", "value": f"{ready_timeout(nodes):.0f}s"}]},
            # kwok logs every node and pod patch at INFO: at 10,000 nodes the log costs it more than the patches.
            {"name": "kwok-controller", "extraArgs": [{"key": "v", "value": "WARN"}]},
        ],
    }
    # kwok plays 4 node stages, leases and pod stages at a time by default: a big start then waits on round trips.
    # kwokctl saves this document with every option spelled out, false for the unset booleans: the three kwok
    # defaults to true are set here (without the debugging handlers kwok serves no pod logs).
    kwok_options = {"apiVersion": "config.kwok.x-k8s.io/v1alpha1", "kind": "KwokConfiguration",
                    "options": {"nodePlayStageParallelism": KWOK_PARALLELISM, "nodeLeaseParallelism": KWOK_PARALLELISM,
                                "podPlayStageParallelism": KWOK_PARALLELISM, "enableDebuggingHandlers": True,
                                "enableProfilingHandler": True, "enablePodsOnNodeSyncListPager": True}}
    (run / "kwokctl.yaml").write_text(yaml.safe_dump_all([kwok_cfg, kwok_options]))
    with ports_taken():
        _kwokctl(bin_dir, "create", "cluster", "--name", name, "--config", str(run / "kwokctl.yaml"),
                 "--kubeconfig", "", "--wait", "3m", "--heartbeat-factor", f"{heartbeat_factor(nodes):g}")
        time.sleep(1)  # a component that cannot bind its port exits within a second
        _alive(name)
    kubeconfig = cluster_dir(name) / "kubeconfig.yaml"
    state = ClusterState(name=name, profile=profile, nodes=nodes, kubeconfig=str(kubeconfig), pod_ms=pod_ms,
                         backoff_ms=backoff_ms, dcgm_layout=dcgm_layout)
    state.save()
    apic = api(kubeconfig)
    custom = client.CustomObjectsApi(apic)
    _wait_crd(apic, "stages.kwok.x-k8s.io")
    for stage in stages.base_stages(assets, pod_ms, backoff_ms):
        custom.create_cluster_custom_object("kwok.x-k8s.io", "v1alpha1", "stages", stage)
    node_objs = profiles.build_nodes(profile, nodes)
    _create_nodes(apic, node_objs)
    crds = ["jobsets.jobset.x-k8s.io", "trainjobs.trainer.kubeflow.org",
            "trainingruntimes.trainer.kubeflow.org", "clustertrainingruntimes.trainer.kubeflow.org"]
    imex = computedomain.imex_nodes(node_objs)
    if imex:  # the NVIDIA DRA driver runs on GB200/GB300 clusters only, as in the field
        computedomain.install(apic, imex, CREATE_THREADS)
        crds.append(computedomain.crd()["metadata"]["name"])
    volumes.install(apic)  # before any claim: the default class is set on a claim when it is created
    _kubectl(bin_dir, str(kubeconfig), "apply", "--server-side", "--field-manager=cre-sim", "-f", str(assets / "crds"))
    for crd in crds:
        _wait_crd(apic, crd)
    pki = cluster_dir(name) / "pki"
    ca = (pki / "ca.crt").read_bytes()
    admission = client.AdmissionregistrationV1Api(apic)
    for project, start, skip in (("jobset", controllers.start_jobset, controllers.JOBSET_SKIP),
                                 ("trainer", controllers.start_trainer, frozenset())):
        with ports_taken():
            pid, ports = start(bin_dir, kubeconfig, run, pki)
            state.pids[project] = pid
            state.ports.update(ports)
            state.save()
            processes.wait_https_ok(f"http://127.0.0.1:{ports[project + '-health']}/readyz", 60, pid)
        for hook in controllers.webhook_configs(assets / "webhooks" / f"{project}.yaml", f"cre-sim-{project}",
                                                ports[project + "-webhook"], ca, skip):
            create = (admission.create_mutating_webhook_configuration if hook["kind"].startswith("Mutating")
                      else admission.create_validating_webhook_configuration)
            create(hook)
    state.pids["agent"] = processes.start([sys.executable, "-m", "tools.sim.agent", str(kubeconfig)],
                                          run / "agent.log", env={"PYTHONPATH": str(ROOT)})
    state.save()
    _wait_nodes_ready(apic, nodes, ready_timeout(nodes))
    return kubeconfig


def _wait_crd(apic: client.ApiClient, name: str, timeout: float = 60) -> None:
    ext = client.ApiextensionsV1Api(apic)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            crd = ext.read_custom_resource_definition(name)
            if any(c.type == "Established" and c.status == "True" for c in (crd.status.conditions or [])):
                return
        except client.ApiException as exc:
            if exc.status != 404:
                raise
        time.sleep(0.2)
    raise SimError(f"CRD {name} not Established within {timeout:.0f}s")


def _create_nodes(apic: client.ApiClient, nodes: list[dict]) -> None:
    core = client.CoreV1Api(apic)
    with ThreadPoolExecutor(CREATE_THREADS) as pool:  # the answers stay raw: a V1Node model costs more than the call
        list(pool.map(lambda node: core.create_node(node, _preload_content=False), nodes))


def _wait_nodes_ready(apic: client.ApiClient, count: int, timeout: float) -> None:
    """Poll the node list (from the apiserver's cache, as raw JSON: at 10,000 nodes the client's models would
    cost seconds a list) until `count` nodes are Ready."""
    core = client.CoreV1Api(apic)
    deadline = time.monotonic() + timeout
    while True:
        items = json.loads(core.list_node(resource_version="0", _preload_content=False).data).get("items") or []
        ready = sum(1 for n in items if any(c.get("type") == "Ready" and c.get("status") == "True"
                                            for c in (n.get("status") or {}).get("conditions") or []))
        if ready >= count:
            return
        if time.monotonic() > deadline:
            raise SimError(f"only {ready} of {count} nodes became Ready within {timeout:.0f}s")
        time.sleep(0.1 if count <= 100 else 1.0)


def down(name: str, missing_ok: bool = False) -> None:
    """Stop every process of the cluster and delete its files."""
    if not NAME_RE.match(name) or not cluster_dir(name).exists():
        if missing_ok:
            return
        raise SimError(f"no cluster named {name!r}")
    try:
        pids = ClusterState.load(name).pids
    except (OSError, ValueError):
        pids = {}
    processes.stop(list(pids.values()), owner(name))
    # kwokctl kills the pid of each pid file it finds, whoever has it now: the components are killed here (as
    # kwokctl would, at once), only while they are the cluster's, and kwokctl is left no pid file.
    components = component_pids(name)
    processes.stop(list(components.values()), owner(name), grace=0)
    for pid_file in components:
        pid_file.unlink(missing_ok=True)
    try:
        _kwokctl(binaries()[0], "delete", "cluster", "--name", name, "--kubeconfig", "")
    except (subprocess.CalledProcessError, OSError):
        pass
    shutil.rmtree(cluster_dir(name), ignore_errors=True)


def running(name: str, st: ClusterState) -> bool:
    """Every process of the cluster runs: kwokctl's components and ours."""
    pids = [*component_pids(name).values(), *st.pids.values()]
    return bool(pids) and all(processes.alive(p, owner(name)) for p in pids)


def status() -> list[dict]:
    out: list[dict] = []
    for name in known_clusters():
        try:
            st = ClusterState.load(name)
        except (OSError, ValueError):
            out.append({"name": name, "state": "broken"})
            continue
        out.append({"name": name, "profile": st.profile, "nodes": st.nodes, "kubeconfig": st.kubeconfig,
                    "state": "running" if running(name, st) else "degraded", "faults": st.faults, "links": st.links})
    return out


def pod_duration(name: str, namespace: str, milliseconds: int | None) -> None:
    """How long the Job pods of one namespace run before they succeed (None: the cluster's own duration again).
    Tests that share a cluster set their namespace's duration instead of starting a cluster for it."""
    if not NAME_RE.match(name) or not cluster_dir(name).exists():
        raise SimError(f"no cluster named {name!r}")
    if milliseconds is not None and milliseconds < 0:
        raise SimError(f"--ms must be 0 or more, got {milliseconds}")
    if not NAMESPACE_RE.match(namespace):
        raise SimError(f"invalid namespace {namespace!r}: lowercase letters, digits and '-', at most 63")
    with ClusterState.update(name) as st:  # the stage too: two workers replacing it at once would conflict
        if milliseconds is None:
            st.namespace_pod_ms.pop(namespace, None)
        else:
            st.namespace_pod_ms[namespace] = milliseconds
        custom = client.CustomObjectsApi(api(st.kubeconfig))
        stage = custom.get_cluster_custom_object("kwok.x-k8s.io", "v1alpha1", "stages", stages.POD_COMPLETE)
        stage["spec"]["delay"] = stages.pod_complete_delay(st.pod_ms, st.namespace_pod_ms)
        custom.replace_cluster_custom_object("kwok.x-k8s.io", "v1alpha1", "stages", stages.POD_COMPLETE, stage)


def log_style(name: str, namespace: str | None = None, **style: str) -> None:
    """How the workloads print their logs (fields and choices: `log_style.CHOICES`): the cluster's default
    (`namespace` None) or one namespace's, whose fields win over the cluster's. The fields given are set over
    those set before; none clears the cluster's default (today's output) or the namespace's own fields. The
    agent sees it on its next pass: a workload started after this call prints so."""
    if not NAME_RE.match(name) or not cluster_dir(name).exists():
        raise SimError(f"no cluster named {name!r}")
    if namespace is not None and not NAMESPACE_RE.match(namespace):
        raise SimError(f"invalid namespace {namespace!r}: lowercase letters, digits and '-', at most 63")
    if wrong := log_styles.problems(style):
        raise SimError("; ".join(wrong))
    with ClusterState.update(name) as st:
        if namespace is None:
            st.log_style = {**st.log_style, **style} if style else {}
        elif style:
            st.namespace_log_style[namespace] = {**st.namespace_log_style.get(namespace, {}), **style}
        else:
            st.namespace_log_style.pop(namespace, None)


# `restart --component` names → the kwokctl component (its pid file under pids/).
RESTARTABLE = {"apiserver": "kube-apiserver", "etcd": "etcd", "scheduler": "kube-scheduler",
               "kwok": "kwok-controller"}


def restart(name: str, component: str, down_seconds: float = 2.0) -> None:
    """Kill one control-plane component, keep it down for `down_seconds`, start it again (kwokctl starts what
    is not running) and wait until the apiserver is ready and the component runs."""
    if component not in RESTARTABLE:
        raise SimError(f"unknown component {component!r}: must be one of {', '.join(RESTARTABLE)}")
    if not NAME_RE.match(name) or not cluster_dir(name).exists():
        raise SimError(f"no cluster named {name!r}")
    if down_seconds < 0:
        raise SimError(f"--down-seconds must be 0 or more, got {down_seconds:g}")
    st = ClusterState.load(name)
    pid_file = cluster_dir(name) / "pids" / f"{RESTARTABLE[component]}.pid"
    bin_dir = binaries()[0]
    # The stopped component's port is free until it is back: a cluster started meanwhile (another test worker)
    # must not pick it, so the ports stay taken from the stop until the component answers again.
    with ports_taken():
        processes.stop([read_pid(pid_file)], owner(name))
        time.sleep(down_seconds)
        _start_again(name, component, st, pid_file, bin_dir)


def _start_again(name: str, component: str, st: ClusterState, pid_file: Path, bin_dir: Path) -> None:
    deadline = time.monotonic() + 60
    while True:
        if not processes.alive(read_pid(pid_file), owner(name)):
            # kwokctl skips a component whose pid still exists, be it a zombie not yet reaped or another process
            # that got the pid meanwhile: without the file it starts it.
            pid_file.unlink(missing_ok=True)
            _kwokctl(bin_dir, "start", "cluster", "--name", name, "--wait", "2m")
        try:
            _kubectl(bin_dir, st.kubeconfig, "get", "--raw", "/readyz")
            if processes.alive(read_pid(pid_file), owner(name)):
                return
            log = cluster_dir(name) / "logs" / f"{RESTARTABLE[component]}.log"
            last = log.read_text(errors="replace").strip().splitlines()[-1:] if log.exists() else []
            problem = f"{RESTARTABLE[component]} not running: {' '.join(last)[-300:]}"
        except subprocess.CalledProcessError as exc:
            problem = f"apiserver not ready: {exc.stdout.strip()}"
        if time.monotonic() > deadline:
            raise SimError(f"cluster {name!r} after restarting {component}: {problem}")
        time.sleep(0.5)
