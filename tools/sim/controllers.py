"""JobSet and Kubeflow Trainer run as local processes, their webhooks served on loopback (envtest's way)."""
from __future__ import annotations

import base64
import shutil
from pathlib import Path

import yaml

from . import processes

QPS, BURST = 5000, 10000  # the client limits kwokctl's disableQPSLimits gives the components on their command lines

TRAINER_CONCURRENCY = {"TrainJob.trainer.kubeflow.org": 5, "TrainingRuntime.trainer.kubeflow.org": 1,
                       "ClusterTrainingRuntime.trainer.kubeflow.org": 1}

JOBSET_SKIP = {"mpod.kb.io", "vpod.kb.io"}  # pod webhooks only serve exclusive placement


def _certs(pki: Path, dest: Path) -> None:
    """kwokctl's admin cert has 127.0.0.1 in its SANs and server-auth EKU: it serves the webhooks too."""
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy(pki / "admin.crt", dest / "tls.crt")
    shutil.copy(pki / "admin.key", dest / "tls.key")


def start_jobset(bin_dir: Path, kubeconfig: Path, run: Path, pki: Path) -> tuple[int, dict[str, int]]:
    ports = {"jobset-webhook": processes.free_port(), "jobset-health": processes.free_port()}
    _certs(pki, run / "jobset-certs")
    config = {
        "apiVersion": "config.jobset.x-k8s.io/v1alpha1",
        "kind": "Configuration",
        "internalCertManagement": {"enable": False},
        "leaderElection": {"leaderElect": False},
        "webhook": {"host": "127.0.0.1", "port": ports["jobset-webhook"], "certDir": str(run / "jobset-certs")},
        "metrics": {"bindAddress": "0"},
        "health": {"healthProbeBindAddress": f"127.0.0.1:{ports['jobset-health']}"},
    }
    (run / "jobset.yaml").write_text(yaml.safe_dump(config))
    pid = processes.start(
        [str(bin_dir / "jobset"), f"--kubeconfig={kubeconfig}", f"--config={run / 'jobset.yaml'}",
         "--leader-elect=false", "--metrics-bind-address=0",
         f"--health-probe-bind-address=127.0.0.1:{ports['jobset-health']}"],
        run / "jobset.log",
    )
    return pid, ports


def start_trainer(bin_dir: Path, kubeconfig: Path, run: Path, pki: Path) -> tuple[int, dict[str, int]]:
    ports = {"trainer-webhook": processes.free_port(), "trainer-health": processes.free_port()}
    # Trainer's webhook server reads its certs from $TMPDIR/k8s-webhook-server/serving-certs only.
    _certs(pki, run / "trainer-tmp" / "k8s-webhook-server" / "serving-certs")
    config = {
        "apiVersion": "config.trainer.kubeflow.org/v1alpha1",
        "kind": "Configuration",
        "certManagement": {"enable": False},
        "webhook": {"host": "127.0.0.1", "port": ports["trainer-webhook"]},
        "metrics": {"bindAddress": "0"},
        "health": {"healthProbeBindAddress": f"127.0.0.1:{ports['trainer-health']}"},
        # Trainer's own client defaults to 50 requests/s, which paced every run of a hundred TrainJobs or more: the
        # cluster's other components run without client limits (kwokctl's disableQPSLimits), and so does it.
        "clientConnection": {"qps": QPS, "burst": BURST},
        # As Trainer's own manifests deploy it (manifests/base/manager/controller_manager_config.yaml); without this
        # controller-runtime reconciles one TrainJob at a time, and a hundred groups' JobSets came out one by one.
        "controller": {"groupKindConcurrency": TRAINER_CONCURRENCY},
    }
    (run / "trainer.yaml").write_text(yaml.safe_dump(config))
    pid = processes.start(
        [str(bin_dir / "trainer-controller-manager"), f"--kubeconfig={kubeconfig}", f"--config={run / 'trainer.yaml'}"],
        run / "trainer.log",
        env={"TMPDIR": str(run / "trainer-tmp")},
    )
    return pid, ports


def webhook_configs(manifest: Path, prefix: str, port: int, ca: bytes, skip: set[str] = frozenset()) -> list[dict]:
    """The project's webhook manifests, pointed at https://127.0.0.1:<port><path> with our CA."""
    out = []
    for doc in yaml.safe_load_all(manifest.read_text()):
        if not doc:
            continue
        doc["metadata"] = {"name": f"{prefix}-{doc['metadata']['name']}"}
        doc["webhooks"] = [w for w in doc["webhooks"] if w["name"] not in skip]
        for hook in doc["webhooks"]:
            path = hook["clientConfig"]["service"]["path"]
            hook["clientConfig"] = {"url": f"https://127.0.0.1:{port}{path}", "caBundle": base64.b64encode(ca).decode()}
            hook["timeoutSeconds"] = 10
        out.append(doc)
    return out
