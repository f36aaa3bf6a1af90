"""The report snapshot ConfigMap: owned by the Certification, report.json.gz with its sha256, and back."""
from __future__ import annotations

import base64
import gzip

import pytest

from ansible_collections.cre.certification.plugins.module_utils.engine.api.errors import InputError
from ansible_collections.cre.certification.plugins.module_utils.engine.report import snapshot

CERT = {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Certification",
        "metadata": {"name": "gpu-cert", "namespace": "nvcre", "uid": "u-1"}}
TEXT = '{\n  "name": "gpu-cert",\n  "result": "PASSED"\n}\n'


def test_configmap_shape_and_round_trip() -> None:
    cm = snapshot.configmap(CERT, TEXT, snapshot.compress(TEXT))
    assert cm["metadata"]["name"] == "gpu-cert-report" and cm["metadata"]["namespace"] == "nvcre"
    assert cm["metadata"]["labels"] == {"app.kubernetes.io/managed-by": "nvcre",
                                        "nvcre.nvidia.com/certification": "gpu-cert"}
    assert cm["metadata"]["ownerReferences"] == [{"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Certification",
                                                  "name": "gpu-cert", "uid": "u-1", "controller": True,
                                                  "blockOwnerDeletion": True}]
    assert gzip.decompress(base64.b64decode(cm["binaryData"]["report.json.gz"])).decode() == TEXT
    assert snapshot.report_text(cm) == TEXT
    assert snapshot.same(cm, snapshot.configmap(CERT, TEXT, snapshot.compress(TEXT)))  # same bytes every time
    assert not snapshot.same(cm, snapshot.configmap(CERT, TEXT + " ", snapshot.compress(TEXT + " ")))


def test_a_tampered_or_unreadable_snapshot_is_refused() -> None:
    cm = snapshot.configmap(CERT, TEXT, snapshot.compress(TEXT))
    cm["binaryData"]["report.json.gz"] = base64.b64encode(snapshot.compress(TEXT + "x")).decode()
    with pytest.raises(InputError, match="does not match its sha256 annotation nvcre.nvidia.com/report-sha256"):
        snapshot.report_text(cm)
    with pytest.raises(InputError, match="ConfigMap nvcre/gpu-cert-report holds no readable report.json.gz"):
        snapshot.report_text({**cm, "binaryData": {}})


def test_payload_too_large() -> None:
    assert snapshot.too_large(TEXT, snapshot.compress(TEXT)) == ""
    big = "x" * (snapshot.MAX_RAW + 1)
    assert snapshot.too_large(big, b"").startswith("PayloadTooLarge: the report is 8388609 bytes")
    assert snapshot.too_large(TEXT, b"0" * (snapshot.MAX_GZ + 1)).startswith("PayloadTooLarge")
