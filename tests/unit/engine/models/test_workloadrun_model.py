"""The WorkloadRun model: the framework unions, the field paths of refusals, and its CRD's immutability rule."""
from __future__ import annotations

import pytest

from ansible_collections.cre.certification.plugins.module_utils.engine.api.errors import InputError
from ansible_collections.cre.certification.plugins.module_utils.engine.models import crdgen, dump, parse_workload_run

MPI = {"binary": "/usr/local/bin/all_reduce_perf_mpi", "mpirunPath": "/usr/local/mpi/bin/mpirun"}


def run(**spec):
    return {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "WorkloadRun", "metadata": {"name": "wr"},
            "spec": {"image": "nvcr.io/nvidia/pytorch:26.01-py3", "numNodes": 2, **spec}}


def test_mpi_run_parses_with_its_default_implementation():
    parsed = dump(parse_workload_run(run(framework={"mpi": MPI})))
    assert parsed["spec"]["framework"]["mpi"]["mpiImplementation"] == "OpenMPI"


@pytest.mark.parametrize(("spec", "path", "rule"), [
    ({"framework": {"torch": {}}}, "spec.framework.torch", "exactly one of script or module must be set"),
    ({"framework": {"torch": {"script": "a.py", "module": "m"}}}, "spec.framework.torch",
     "exactly one of script or module must be set"),
    ({"framework": {"mpi": MPI, "exec": {"command": ["true"]}}}, "spec.framework",
     "at most one of torch, mpi or exec may be set"),
    ({"framework": {"mpi": {"binary": "b"}}}, "spec.framework.mpi.mpirunPath", "Required value"),
    ({"framework": {"exec": {"command": []}}}, "spec.framework.exec.command", "List should have at least 1 item"),
    ({"framework": {"mpi": MPI}, "numNodes": 0}, "spec.numNodes", "Input should be greater than or equal to 1"),
    ({"framework": {"mpi": MPI}, "orchestration": {"testScale": "diagnose"}}, "spec.orchestration.testScale", ""),
    ({"framework": {"mpi": MPI}, "config": {}}, "spec.config", "exactly one of inline or configMapRef must be set"),
    ({"framework": {"mpi": MPI}, "nicResourceName": "k8s.io/rdma"}, "spec.nicResourceName",
     "nicResourceName must not use the reserved kubernetes.io or k8s.io domains"),
])
def test_bad_specs_are_refused_with_their_field_path(spec, path, rule):
    with pytest.raises(InputError) as err:
        parse_workload_run(run(**spec))
    assert err.value.path == path
    assert rule in err.value.rule


def test_a_spec_without_framework_parses_for_the_controller_to_fail():
    assert parse_workload_run(run(framework={})).spec.framework.mpi is None


def test_crd_spec_is_immutable_and_status_is_a_subresource():
    crd = crdgen.crd("WorkloadRun")
    version = crd["spec"]["versions"][0]
    spec = version["schema"]["openAPIV3Schema"]["properties"]["spec"]
    assert {"rule": "self == oldSelf", "message": "spec is immutable after creation"} in spec["x-kubernetes-validations"]
    assert set(spec["required"]) == {"image", "framework", "numNodes"}
    assert version["subresources"] == {"status": {}}
    assert crd["metadata"]["name"] == "workloadruns.nvcre.nvidia.com"
