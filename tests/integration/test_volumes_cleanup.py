"""certify_cleanup and the PersistentVolume of a checkpointing category (workflow spec §7.3, §12): the training pods
mount their checkpoint claim, so when the Workflow ends the claim is still in use (its ref kept) and its Retain PV
Bound. Deleting the Certification lets the garbage collector take the pods and the claim; the cleanup then switches
the released PV, stamped with the Workflow's UID, to Delete, and the PV controller removes it."""
from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from kubernetes import client

from tests.ansible_run import ROOT

from .conftest import Sim, own_sim
from .pvs_seen import PVWatch, wait_for


@pytest.fixture(scope="module")
def trainer() -> Iterator[Sim]:
    """Two aws-h100 nodes; a training pod runs 25 s (an iteration line every 0.5 s, 10 steps each)."""
    with own_sim("volclean", "aws-h100", 2, 25000) as sim:
        yield sim


def test_certify_cleanup_reclaims_the_checkpoint_pv(trainer: Sim, tmp_path: Path) -> None:
    host = {"k8s_kubeconfig": str(trainer.kubeconfig), "certify_certification_name": "ckpt",
            "certify_namespace": "volclean",
            "certify_categories": [{"domain": "training", "variant": "nemotron5-8b", "options": {
                "maxSteps": 500, "saveInterval": 50, "enableCheckpoint": True, "storageClassName": "sim-retain",
                "storageSize": "1Gi"}}],
            "certify_poll_interval": 1, "certify_timeout": 400, "certify_cleanup": True}
    inventory = {"clusters": {"vars": {"ansible_connection": "local",
                                       "ansible_python_interpreter": str(ROOT / ".venv/bin/python")},
                              "hosts": {"lab": host}}}
    (tmp_path / "inventory.yml").write_text(yaml.safe_dump(inventory))
    seen = PVWatch(trainer)
    proc = subprocess.run([str(ROOT / ".venv/bin/ansible-playbook"), "-i", "inventory.yml",
                           str(ROOT / "playbooks/certify.yml")], cwd=tmp_path, capture_output=True, text=True,
                          timeout=900, check=False,
                          env={**os.environ, "ANSIBLE_NOCOLOR": "1", "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg")})
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "Switch the released ones from Retain to Delete" in proc.stdout
    core = client.CoreV1Api(trainer.api)
    assert wait_for(lambda: not core.list_persistent_volume().items), [
        pv.metadata.name for pv in core.list_persistent_volume().items]
    seen.close()
    (name,) = {n for _e, n, _p, _ph, _s in seen.seen}
    events = seen.of(name)
    uid = next(stamp for _e, _p, _ph, stamp in events if stamp)
    # stamped while Bound (the run), Released on Retain (the claim gone with the Certification), then Delete, gone
    assert ("MODIFIED", "Retain", "Bound", uid) in events, events
    assert events.index(("MODIFIED", "Retain", "Released", uid)) < events.index(("MODIFIED", "Delete", "Released", uid))
    assert events[-1][0] == "DELETED", events
    assert core.list_namespaced_persistent_volume_claim("volclean").items == []
