"""NVCRE's GPUArchitectureDefaults message (pkg/controller/gpu_arch_fallback.go @ e6b9ad75 and its
testdata/gpu-arch-fallback-message cases, restated): an architecture the catalog's gpu-defaults.yaml has no row
for names the 4/0 fallback and the counts the run is sized at; a listed, empty or `unknown` one is silent."""
import pytest

from ansible_collections.cre.certification.plugins.module_utils.engine.catalog import entries

CERT, RUN = entries.FIELD_HINT_CERTIFICATION, entries.FIELD_HINT_WORKLOAD_RUN
TAIL = "and file an issue so the architecture can be added to the catalog."


@pytest.mark.parametrize(("arch", "gpus", "mlnx", "hint", "expected"), [
    pytest.param("h20", 8, 2, CERT,
                 'GPU architecture "h20" has no entry in the catalog\'s GPU defaults, which fall back to gpusPerNode=4 '
                 "mlnxPerNode=0 for it; this run is sized at gpusPerNode=8 mlnxPerNode=2. If the nodes differ, set "
                 f"spec.gpusPerNode and spec.mlnxPerNode (or spec.categories[].options), {TAIL}",
                 id="unlisted-arch-overridden"),
    pytest.param("h20", 4, 0, CERT,
                 'GPU architecture "h20" has no entry in the catalog\'s GPU defaults, which fall back to gpusPerNode=4 '
                 "mlnxPerNode=0 for it; this run is sized at gpusPerNode=4 mlnxPerNode=0. If the nodes differ, set "
                 f"spec.gpusPerNode and spec.mlnxPerNode (or spec.categories[].options), {TAIL}", id="unlisted-arch"),
    pytest.param("b300x", 4, 0, RUN,
                 'GPU architecture "b300x" has no entry in the catalog\'s GPU defaults, which fall back to '
                 "gpusPerNode=4 mlnxPerNode=0 for it; this run is sized at gpusPerNode=4 mlnxPerNode=0. If the nodes "
                 f"differ, set spec.gpusPerNode and spec.mlnxPerNode, {TAIL}", id="unlisted-arch-workloadrun-hint"),
    pytest.param("h100", 8, 8, CERT, "", id="known-arch"),
    pytest.param("", 4, 0, CERT, "", id="empty-arch"),
    pytest.param("unknown", 4, 0, CERT, "", id="unknown-sentinel"),
])
def test_gpu_arch_fallback_message(arch, gpus, mlnx, hint, expected):
    assert entries.gpu_arch_fallback_message(arch, gpus, mlnx, hint) == expected


def test_every_listed_architecture_is_silent():
    for arch in entries.gpu_defaults_table()["architectures"]:
        assert entries.gpu_arch_fallback_message(arch, 4, 0, CERT) == "", arch
