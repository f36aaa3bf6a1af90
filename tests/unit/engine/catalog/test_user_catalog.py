"""User catalog directories (catalog/user.py): entries of the user's own beside ours, each validated when loaded,
a broken one refused with its file and field path without hiding the others."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ansible_collections.cre.certification.plugins.module_utils.engine.api.errors import InputError
from ansible_collections.cre.certification.plugins.module_utils.engine.api.vocabulary import ANNOTATION_CATALOG_SOURCE
from ansible_collections.cre.certification.plugins.module_utils.engine.catalog import entries, registry, user
from ansible_collections.cre.certification.plugins.module_utils.engine.plan import category_build
from ansible_collections.cre.certification.plugins.module_utils.engine.report import certreport

ROOT = Path(__file__).resolve().parents[4]
EXAMPLE = ROOT / "docs" / "examples" / "catalog"
GEMM = (EXAMPLE / "compute" / "gemm-goodput.yaml").read_text()
IMAGE = {"_lib/images/gemm-goodput.yaml": (EXAMPLE / "_lib" / "images" / "gemm-goodput.yaml").read_text()}
SMALL = "description: a small one\nperNode: true\nspec: {$lib: workloads/dcgm.yaml}\nvars: {level: 1, extraArgs: []}\n"


def catalog(tmp_path: Path, files: dict[str, str], name: str = "mine") -> Path:
    folder = tmp_path / name
    for rel, text in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)
    folder.mkdir(exist_ok=True)
    return folder


def load(*folders: Path) -> user.Catalog:
    return user.load(user.check_dirs([str(f) for f in folders]))


def problems(cat: user.Catalog) -> list[str]:
    return [str(p) for p in cat.all_problems()]


def test_the_example_catalog_loads_beside_ours(tmp_path: Path) -> None:
    cat = load(EXAMPLE)
    assert cat.all_problems() == []
    entry = cat.entries[("compute", "gemm-goodput")]
    assert entry.source == str(EXAMPLE / "compute" / "gemm-goodput.yaml") and entry.per_node
    assert set(registry.builtin_registry()) < set(cat.entries)
    assert registry.builtin_catalog().entries is registry.builtin_registry()  # ours stay cached, untouched by the user's


def test_the_registry_of_a_dir_is_cached_until_a_file_changes(tmp_path: Path) -> None:
    folder = catalog(tmp_path, {"compute/small.yaml": SMALL})
    dirs = user.check_dirs([str(folder)])
    assert user.load(dirs) is user.load(dirs)
    (folder / "compute" / "small.yaml").write_text(SMALL.replace("a small one", "a changed one!"))
    assert user.load(dirs).entries[("compute", "small")].description == "a changed one!"


def test_broken_yaml_is_refused_with_its_file_and_line(tmp_path: Path) -> None:
    folder = catalog(tmp_path, {"compute/broken.yaml": "description: [unclosed\n", "compute/small.yaml": SMALL})
    cat = load(folder)
    (problem,) = cat.refused("compute", "broken")
    assert problem.file == str(folder / "compute" / "broken.yaml")
    assert problem.message.startswith("not valid YAML: ") and "line 2" in problem.message
    assert ("compute", "small") in cat.entries  # the good one is still there


def test_every_field_problem_is_reported_with_its_path(tmp_path: Path) -> None:
    folder = catalog(tmp_path, {"compute/bad.yaml": (
        "description: ''\nperNode: yes please\nmeta: {minGPUs: -1, timeoutPerJob: soon, colour: red,"
        " parallelism: {h100: {tp: 0}}}\nspec: []\nextra: 1\n")})
    file = folder / "compute" / "bad.yaml"
    assert problems(load(folder)) == [
        f"{file}: extra: unknown field; an entry has description, meta, perNode, vars, spec, overrides",
        f"{file}: description: required, a non-empty string (got a string)",
        f"{file}: perNode: must be true or false, got a string",
        f"{file}: spec: required, the WorkflowSpec template (a mapping), got a list",
        f"{file}: meta.colour: unknown field; meta has minGPUs, timeoutPerJob, parallelism",
        f"{file}: meta.minGPUs: must be an integer of 0 or more, got -1",
        f"{file}: meta.timeoutPerJob: must be a duration of h, m, s and ms, such as 90m or 1h30m, got 'soon'",
        f"{file}: meta.parallelism.h100.tp: must be an integer of 1 or more, got 0",
    ]


def test_a_spec_that_is_no_workflow_spec_is_refused_with_the_field_path(tmp_path: Path) -> None:
    broken = GEMM.replace("sampleInterval: 5s", "sampleInterval: every five seconds")
    folder = catalog(tmp_path, {"compute/gemm-goodput.yaml": GEMM, "compute/broken-goodput.yaml": broken, **IMAGE})
    cat = load(folder)
    (problem,) = cat.refused("compute", "broken-goodput")
    assert problem.path == "spec.jobTemplate.spec.goodputMeasurement.sampleInterval"
    assert "(in the WorkflowSpec it renders for h100)" in problem.message
    assert str(problem).startswith(f"{folder / 'compute' / 'broken-goodput.yaml'}: spec.jobTemplate.spec.")
    assert ("compute", "gemm-goodput") in cat.entries and ("compute", "broken-goodput") not in cat.entries


def test_a_template_error_names_where_it_comes_from(tmp_path: Path) -> None:
    folder = catalog(tmp_path, {
        "compute/unknown-var.yaml": GEMM.replace('"{{matrixSize|str}}"', '"{{matrixSide|str}}"'),
        "compute/missing-lib.yaml": GEMM.replace("images/gemm-goodput.yaml}   ", "images/nowhere.yaml}   "), **IMAGE,
    })
    cat = load(folder)
    assert cat.refused("compute", "unknown-var")[0].path == "spec.jobTemplate.spec.workload.trainJob.trainer.args[5]"
    assert "unknown template variable 'matrixSide'" in cat.refused("compute", "unknown-var")[0].message
    missing = cat.refused("compute", "missing-lib")[0]
    assert missing.path.startswith("spec.dependencies[0].") and "'images/nowhere.yaml' does not exist" in \
        missing.message


def test_a_clash_with_a_builtin_is_refused_naming_both_files(tmp_path: Path) -> None:
    folder = catalog(tmp_path, {"diagnostics/dcgm-level1.yaml": SMALL})
    cat = load(folder)
    (problem,) = cat.refused("diagnostics", "dcgm-level1")
    assert str(problem) == (f"{folder / 'diagnostics' / 'dcgm-level1.yaml'}: diagnostics/dcgm-level1 is a built-in "
                            f"category ({entries.ROOT / 'diagnostics' / 'dcgm-level1.yaml'}); add 'overrides: builtin' "
                            "to this file to replace it, or rename the file")


def test_overrides_builtin_replaces_ours(tmp_path: Path) -> None:
    folder = catalog(tmp_path, {"diagnostics/dcgm-level1.yaml": SMALL + "overrides: builtin\n",
                                "compute/typo.yaml": SMALL + "overrides: builtin\n"})
    cat = load(folder)
    assert cat.entries[("diagnostics", "dcgm-level1")].description == "a small one"
    assert registry.builtin_registry()[("diagnostics", "dcgm-level1")].source == ""
    assert [p.message for p in cat.refused("compute", "typo")] == [
        "there is no built-in category of this name to override"]


def test_a_clash_between_two_user_dirs_is_refused_and_neither_is_used(tmp_path: Path) -> None:
    first = catalog(tmp_path, {"compute/small.yaml": SMALL}, "first")
    second = catalog(tmp_path, {"compute/small.yaml": SMALL}, "second")
    cat = load(first, second)
    assert ("compute", "small") not in cat.entries
    assert problems(cat) == [f"{second / 'compute' / 'small.yaml'}: compute/small is also defined in "
                             f"{first / 'compute' / 'small.yaml'}; rename one of them"]


def test_lib_fragments_resolve_in_the_user_s_lib_first_then_ours(tmp_path: Path) -> None:
    folder = catalog(tmp_path, {
        "compute/gemm-goodput.yaml": GEMM,
        "_lib/images/gemm-goodput.yaml": "registry.example.com/mine:2\n",
        "_lib/images/dcgm.yaml": "registry.example.com/my-dcgm:1\n",  # shadows ours for this dir's entries only
        "diagnostics/my-dcgm.yaml": SMALL,
    })
    loaded = load(folder)
    spec = entries.build_spec("compute", "gemm-goodput", {"gpuArchitecture": "h100"}, loaded)
    trainer = spec["jobTemplate"]["spec"]["workload"]["trainJob"]["trainer"]
    assert trainer["image"] == "registry.example.com/mine:2"
    assert spec["jobTemplate"]["spec"]["nodeHealthMonitor"]["cel"]["expression"] == "node.spec.unschedulable == true"
    mine = entries.build_spec("diagnostics", "my-dcgm", {"gpuArchitecture": "h100"}, loaded)
    assert mine["jobTemplate"]["spec"]["workload"]["trainJob"]["trainer"]["image"] == "registry.example.com/my-dcgm:1"
    ours = entries.build_spec("diagnostics", "dcgm-level1", {"gpuArchitecture": "h100"}, loaded)
    assert ours["jobTemplate"]["spec"]["workload"]["trainJob"]["trainer"]["image"].startswith("nvcr.io/")


def test_bad_names_and_missing_dirs(tmp_path: Path) -> None:
    folder = catalog(tmp_path, {"Compute/Big_One.yaml": SMALL})
    assert "names must be lowercase" in problems(load(folder))[0]
    with pytest.raises(InputError, match=r"^catalog_dirs\[0\]: not a directory: "):
        user.check_dirs([str(tmp_path / "nowhere")])


def test_list_categories_marks_the_user_s(tmp_path: Path) -> None:
    rows = registry.list_categories(load(EXAMPLE))
    (mine,) = [r for r in rows if r["source"] == "user"]
    assert (mine["domain"], mine["variant"], mine["perNode"], mine["path"]) == (
        "compute", "gemm-goodput", True, str(EXAMPLE / "compute" / "gemm-goodput.yaml"))
    assert all(r["source"] == "builtin" and "path" not in r for r in rows if r is not mine)


def test_the_workflow_records_its_source_and_the_report_shows_it(tmp_path: Path) -> None:
    loaded = load(EXAMPLE)
    categories = [{"domain": "compute", "variant": "gemm-goodput"}, {"domain": "diagnostics", "variant": "dcgm-level1"}]
    cert = {"metadata": {"name": "c", "namespace": "n", "uid": "u"}, "spec": {"categories": categories}}
    category_build.check_categories(cert["spec"], loaded)
    built = [category_build.build_workflow(cert, c, platform="aws", gpu_architecture="h100", available_nodes=4,
                                           catalog=loaded) for c in categories]
    assert built[0]["metadata"]["annotations"][ANNOTATION_CATALOG_SOURCE] == str(EXAMPLE / "compute" / "gemm-goodput.yaml")
    assert ANNOTATION_CATALOG_SOURCE not in built[1]["metadata"]["annotations"]
    reports = [certreport.category_report({**c, "workflow": w}) for c, w in zip(categories, built)]
    assert (reports[0]["source"], reports[0]["sourcePath"]) == ("user", built[0]["metadata"]["annotations"][
        ANNOTATION_CATALOG_SOURCE])
    assert reports[1]["source"] == "builtin" and "sourcePath" not in reports[1]


def test_the_example_copied_elsewhere_still_finds_its_own_lib(tmp_path: Path) -> None:
    shutil.copytree(EXAMPLE, tmp_path / "copy")
    spec = entries.build_spec("compute", "gemm-goodput", {"gpuArchitecture": "gb200"},
                              load(tmp_path / "copy"))
    assert spec["jobTemplate"]["spec"]["workload"]["trainJob"]["trainer"]["args"][:2] == ["--gpus", "4"]
