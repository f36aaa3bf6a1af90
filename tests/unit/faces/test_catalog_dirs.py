"""catalog_dirs on the faces: catalog_info lists a user's entries marked as theirs, and certification_run refuses a
broken user category with its file and field path before any request reaches the cluster."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.unit.faces.listener import Listener

EXAMPLE = Path(__file__).resolve().parents[3] / "docs" / "examples" / "catalog"
GEMM = (EXAMPLE / "compute" / "gemm-goodput.yaml").read_text()


def user_catalog(tmp_path: Path) -> Path:
    """The worked example's entry (good) and a copy whose goodput sampleInterval is no duration (broken)."""
    folder = tmp_path / "catalog"
    (folder / "compute").mkdir(parents=True)
    (folder / "_lib" / "images").mkdir(parents=True)
    (folder / "_lib" / "images" / "gemm-goodput.yaml").write_text("registry.example.com/gemm-goodput:1\n")
    (folder / "compute" / "gemm-goodput.yaml").write_text(GEMM)
    (folder / "compute" / "broken-goodput.yaml").write_text(GEMM.replace("sampleInterval: 5s", "sampleInterval: 5"))
    return folder


def test_catalog_info_lists_the_good_entry_as_the_user_s_and_the_broken_one_as_a_problem(
        tmp_path: Path, run_action: Any) -> None:
    folder = user_catalog(tmp_path)
    result = run_action("catalog_info", {"catalog_dirs": [str(folder)]})
    assert not result.get("failed"), result
    (mine,) = [c for c in result["categories"] if c["source"] == "user"]
    assert (mine["domain"], mine["variant"], mine["path"]) == ("compute", "gemm-goodput",
                                                               str(folder / "compute" / "gemm-goodput.yaml"))
    assert len(result["categories"]) == 14
    (problem,) = result["problems"]
    assert problem["file"] == str(folder / "compute" / "broken-goodput.yaml")
    assert problem["path"] == "spec.jobTemplate.spec.goodputMeasurement.sampleInterval"
    assert result["warnings"] == [f"user catalog entry refused: {problem['error']}"]
    built = run_action("catalog_info", {"catalog_dirs": [str(folder)], "domain": "compute", "variant": "gemm-goodput",
                                        "options": {"gpuArchitecture": "b300"}})
    assert built["spec"]["jobTemplate"]["spec"]["goodputMeasurement"]["logProfileRef"] == "gemm-goodput", built


def test_a_broken_user_category_is_refused_with_its_file_and_field_path_before_any_request(
        tmp_path: Path, api_server: tuple[Listener, Path], run_action: Any) -> None:
    listener, kubeconfig = api_server
    folder = user_catalog(tmp_path)
    result = run_action("certification_run", {
        "kubeconfig": str(kubeconfig), "name": "mine", "catalog_dirs": [str(folder)],
        "categories": ["compute/gemm-goodput", {"domain": "compute", "variant": "broken-goodput"}]})
    assert result.get("failed") is True, result
    assert result["msg"].startswith(
        f"categories[1]: category 'compute/broken-goodput' of the user catalog is refused: "
        f"{folder / 'compute' / 'broken-goodput.yaml'}: spec.jobTemplate.spec.goodputMeasurement.sampleInterval: ")
    assert "\n" not in result["msg"] and listener.connections == 0


def test_a_missing_catalog_dir_and_a_user_category_without_its_dir_are_refused(
        tmp_path: Path, api_server: tuple[Listener, Path], run_action: Any) -> None:
    listener, kubeconfig = api_server
    result = run_action("certification_run", {"kubeconfig": str(kubeconfig), "name": "mine",
                                              "catalog_dirs": [str(tmp_path / "nowhere")], "categories": ["x/y"]})
    assert result["msg"] == f"catalog_dirs[0]: not a directory: {tmp_path / 'nowhere'}"
    result = run_action("certification_run", {"kubeconfig": str(kubeconfig), "name": "mine",
                                              "categories": ["compute/gemm-goodput"]})
    assert result["msg"].startswith("categories[0]: unknown category 'compute/gemm-goodput'")
    assert listener.connections == 0
