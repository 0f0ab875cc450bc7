"""Choosing and mapping the distribution: same package twice, namespace packages, renamed and compiled code."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from helpers.targets import (
    MODEL,
    Project,
    audit_with_build,
    install_into,
    make_project,
    make_wheel,
    statuses,
)
from prstack.demo.example import DemoBuild
from prstack.errors import InputError
from prstack.placement.choose import Asked, DistFiles, choose
from prstack.placement.paths import PathMap
from prstack.render.table import build_notes
from prstack.targets.base import TargetSpec, open_target
from prstack.targets.built_from import BuildReport

UPSTREAM = ("Project-URL: Source, https://github.com/upstream/kvs",)
FORK = ("Project-URL: Source, https://github.com/someone/kvs-fork",)


def two_dists(tmp_path: Path, *, same_content: bool = False) -> tuple[Path, Project]:
    """kvs (upstream, the base) installed, then kvs-fork (the PR head) installed over it."""
    project = make_project(tmp_path)
    site = tmp_path / "site"
    first = project.head if same_content else project.base
    install_into(make_wheel(tmp_path / "d1", "kvs", "1.0.0", project.files_at(first), metadata=UPSTREAM), site)
    install_into(make_wheel(tmp_path / "d2", "kvs-fork", "1.0.0", project.files_at(project.head), metadata=FORK),
                 site, overwrite=True)
    return site, project


def test_two_distributions_of_one_package_the_files_are_the_last_installed(tmp_path: Path) -> None:
    site, project = two_dists(tmp_path)
    report, target = audit_with_build(project, TargetSpec("site-packages", str(site)))
    assert report.target.distribution == "kvs-fork"
    assert statuses(report)["src/kvs/model.py"] == ["applied"]
    ev = target.evidence
    assert ev.chosen_by == "its RECORD matches the files on disk (installed last)"
    assert ev.candidates == ("kvs",)
    assert ev.record is not None and ev.record.clean  # kvs's files are not "unrecorded" for kvs-fork


def test_the_repository_url_picks_between_them_and_record_shows_the_overwrite(tmp_path: Path) -> None:
    site, project = two_dists(tmp_path)
    spec = TargetSpec("site-packages", str(site), repo="Upstream/KVS")
    report, target = audit_with_build(project, spec)
    assert report.target.distribution == "kvs"
    assert target.evidence.chosen_by == "its Project-URL or direct_url names upstream/kvs"
    record = target.evidence.record
    assert record is not None and record.edited == ("kvs/model.py",)  # kvs-fork wrote over it
    [model] = [r for r in report.results if r.hunk.path == "src/kvs/model.py"]
    assert model.evidence.note is not None and "kvs/model.py: edited after install" in model.evidence.note


def test_dist_overrides_and_names_the_others(tmp_path: Path) -> None:
    site, project = two_dists(tmp_path)
    report, target = audit_with_build(project, TargetSpec("site-packages", str(site), dist="KVS"))
    assert report.target.distribution == "kvs"
    assert target.evidence.chosen_by == "--dist KVS" and target.evidence.candidates == ("kvs-fork",)
    assert report.build is not None
    assert any("also shipping these files: kvs-fork" in text for text, _ in _notes(report.build))


def _notes(build: BuildReport) -> list[tuple[str, str]]:
    return build_notes(build)


def test_indistinguishable_distributions_are_reported_with_the_candidates(tmp_path: Path) -> None:
    site, project = two_dists(tmp_path, same_content=True)
    with pytest.raises(InputError, match=r"several distributions .* \(kvs, kvs-fork\); pick one with `dist`"):
        audit_with_build(project, TargetSpec("site-packages", str(site)))


def test_namespace_package_siblings_are_told_apart(tmp_path: Path) -> None:
    project = make_project(tmp_path, package="src/acme/kv")
    site = tmp_path / "site"
    install_into(make_wheel(tmp_path / "d1", "acme-kv", "2.0", project.files_at(project.head)), site)
    other = {"acme/other/__init__.py": b"", "acme/other/model.py": MODEL.encode()}
    install_into(make_wheel(tmp_path / "d2", "acme-other", "1.0", other), site)
    report, target = audit_with_build(project, TargetSpec("site-packages", str(site)))
    assert report.target.distribution == "acme-kv"
    [model] = [r for r in report.results if r.hunk.path == "src/acme/kv/model.py"]
    assert (model.status.value, model.installed_path) == ("applied", "acme/kv/model.py")
    assert target.evidence.candidates == ()  # acme/other/model.py is no copy of acme/kv/model.py
    record = target.evidence.record
    assert record is not None and record.unrecorded == ()  # acme/other/* belongs to acme-other
    assert target.evidence.top_level == ("acme",)


def test_src_layout_maps_to_the_package(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    install_into(make_wheel(tmp_path / "d", "kvs", "1.0", project.files_at(project.head)), tmp_path / "site")
    report, _ = audit_with_build(project, TargetSpec("site-packages", str(tmp_path / "site")))
    assert {r.installed_path for r in report.results} == {"kvs/model.py"}


def test_top_level_package_named_unlike_the_repository_folder(tmp_path: Path) -> None:
    project = make_project(tmp_path, package="lib/kvserve")
    files = project.files_at(project.head, prefix="lib/", rename="kvserve=kvs")
    assert "kvs/model.py" in files
    install_into(make_wheel(tmp_path / "d", "kvserve-core", "1.0", files,
                            dist_info={"top_level.txt": "kvs\n"}), tmp_path / "site")
    # a distribution holding none of the repository's package names is audited when named
    report, target = audit_with_build(project, TargetSpec("site-packages", str(tmp_path / "site"), "kvserve-core"))
    [model] = report.results
    assert (model.status.value, model.installed_path) == ("applied", "kvs/model.py")
    assert target.evidence.top_level == ("kvs",)


SO = "kvs/_C.cpython-311-x86_64-linux-gnu.so"


def test_extension_module_next_to_csrc_is_unverifiable_naming_the_binary(tmp_path: Path) -> None:
    project = make_project(tmp_path, kernel=True)
    files = project.files_at(project.head) | {SO: b"\x7fELF\x02\x01\x01" + bytes(64)}
    install_into(make_wheel(tmp_path / "d", "kvs", "1.0", files), tmp_path / "site")
    report, target = audit_with_build(project, TargetSpec("site-packages", str(tmp_path / "site")))
    assert statuses(report) == {"csrc/cache.cpp": ["unverifiable"], "src/kvs/model.py": ["applied"]}
    [kernel] = [r for r in report.results if r.hunk.path == "csrc/cache.cpp"]
    assert kernel.evidence.note == f"compiled into {SO}, which cannot be checked hunk by hunk"
    assert target.evidence.binaries == (SO,)
    assert report.all_present  # unverifiable does not count against the exit code


def test_among_several_binaries_the_one_named_like_the_source(tmp_path: Path) -> None:
    project = make_project(tmp_path, kernel=True)
    files = project.files_at(project.head) | {"kvs/_cache.abi3.so": b"\x7fELF", "kvs/_flash.abi3.so": b"\x7fELF"}
    install_into(make_wheel(tmp_path / "d", "kvs", "1.0", files), tmp_path / "site")
    report, _ = audit_with_build(project, TargetSpec("site-packages", str(tmp_path / "site")))
    [kernel] = [r for r in report.results if r.hunk.path == "csrc/cache.cpp"]
    assert kernel.evidence.note == "compiled into kvs/_cache.abi3.so, which cannot be checked hunk by hunk"


def test_wheel_target_checks_its_record_against_the_zip(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    wheel = make_wheel(tmp_path / "d", "kvs", f"1.0+g{project.head[:9]}", project.files_at(project.head),
                       metadata=FORK)
    tampered = tmp_path / "t" / wheel.name
    tampered.parent.mkdir()
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(tampered, "w") as dst:
        for item in src.infolist():
            data = src.read(item)
            dst.writestr(item, MODEL.encode() if item.filename == "kvs/model.py" else data)
        dst.writestr("kvs/backdoor.py", b"X = 1\n")
    report, target = audit_with_build(project, TargetSpec("wheel", str(tampered)))
    assert statuses(report)["src/kvs/model.py"] == ["missing"]
    record = target.evidence.record
    assert record is not None
    assert (record.edited, record.unrecorded) == (("kvs/model.py",), ("kvs/backdoor.py",))
    assert report.build is not None and report.build.disagreements[0].cause.startswith("files changed after install")
    clean, _ = audit_with_build(project, TargetSpec("wheel", str(wheel)))
    assert clean.build is not None and clean.build.evidence.record is not None
    assert clean.build.evidence.record.clean and clean.build.evidence.project_urls == (
        ("Source", "https://github.com/someone/kvs-fork"),)


def test_tree_target_that_is_a_checkout_names_its_head(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    project.repo.git("checkout", "--quiet", "fix")
    report, _ = audit_with_build(project, TargetSpec("tree", str(project.path)))
    assert report.target.vcs_commit == project.head
    assert report.build is not None
    assert report.build.header == (
        f"tree, built from {project.head[:9]} (the checkout's .git/HEAD), which contains #7's head"
    )


def test_choose_is_pure_and_prefers_files_then_fit() -> None:
    a = DistFiles("a", "1", frozenset({"pkg/x.py", "pkg/y.py"}))
    b = DistFiles("b", "1", frozenset({"pkg/x.py"}))
    c = DistFiles("c", "1", frozenset({"docs/z.md"}))
    choice = choose([b, c, a], ["src/pkg/x.py", "src/pkg/y.py"], ["src/pkg/x.py", "src/pkg/y.py"], "here")
    assert (choice.dist.name, choice.candidates) == ("a", ("b",))
    with pytest.raises(InputError, match="no distribution in here ships any file"):
        choose([c], ["src/pkg/x.py"], ["src/pkg/x.py"], "here")
    with pytest.raises(InputError, match="`dist` nope: not installed in here"):
        choose([a], ["src/pkg/x.py"], ["src/pkg/x.py"], "here", Asked("nope"))


def test_the_project_beats_packages_sharing_only_common_names_with_its_old_layout() -> None:
    """An old PR of a project that since made its modules private (api.py -> _api.py): only its
    __init__.py is still where the PR has it, while other packages of the environment hold an
    __init__.py and an exceptions.py side by side (a PathMap maps the repo's folder onto theirs)."""
    repo = ["webclient/__init__.py", "webclient/api.py", "webclient/client.py", "webclient/exceptions.py",
            "webclient/utils.py", "tests/test_api.py"]
    pr_paths = ["webclient/__init__.py", "webclient/api.py", "webclient/client.py", "webclient/exceptions.py"]
    project = DistFiles("webclient", "2", frozenset({"webclient/__init__.py", "webclient/_api.py",
                                                     "webclient/_client.py", "webclient/_exceptions.py"}))
    others = [DistFiles(name, "1", frozenset({f"{name}/__init__.py", f"{name}/exceptions.py", f"{name}/utils.py",
                                              f"{name}/session.py", f"{name}/sub/deep.py"}))
              for name in ("cloudsdk", "solver")]
    assert PathMap(others[0].files, repo).locate("webclient/exceptions.py").installed_path == "cloudsdk/exceptions.py"
    choice = choose([*others, project], pr_paths, repo, "here")
    assert (choice.dist.name, choice.candidates) == ("webclient", ())


def test_plain_tree_says_it_has_no_build_commit(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    tree = tmp_path / "tree"
    for rel, data in project.files_at(project.head, prefix="").items():
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_bytes(data)
    report, _ = audit_with_build(project, TargetSpec("tree", str(tree)))
    assert statuses(report) == {"src/kvs/model.py": ["applied"]}
    assert report.build is not None
    assert report.build.header == "tree, no build commit recorded (no package metadata, not a git checkout)"


def test_a_vendored_copy_loses_to_the_real_package() -> None:
    real = DistFiles("rich", "13", frozenset({"rich/console.py", "rich/text.py"}))
    vendoring = DistFiles("pip", "24", frozenset({"pip/_vendor/rich/console.py", "pip/_vendor/rich/text.py"}))
    repo = ["rich/console.py", "rich/text.py", "tests/test_console.py"]
    choice = choose([vendoring, real], ["rich/console.py"], repo, "here")
    assert (choice.dist.name, choice.candidates) == ("rich", ("pip",))


@pytest.mark.slow
def test_tree_that_is_a_site_directory_is_read_through_its_metadata(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    layer = tmp_path / "layer" / "usr" / "lib" / "python3" / "dist-packages"
    wheel = make_wheel(tmp_path / "d", "kvs", f"1.0+g{project.head[:9]}", project.files_at(project.head))
    install_into(wheel, layer)
    report, target = audit_with_build(project, TargetSpec("tree", str(layer), dist="kvs"))
    assert (report.target.kind, report.target.distribution) == ("tree", "kvs")
    assert statuses(report) == {"src/kvs/model.py": ["applied"]}
    assert target.evidence.record is not None and target.evidence.record.clean
    unrelated = tmp_path / "other-layer"
    install_into(make_wheel(tmp_path / "d2", "other", "1.0", {"other/x.py": b"X = 1\n"}), unrelated)
    (unrelated / "src" / "kvs").mkdir(parents=True)
    (unrelated / "src" / "kvs" / "model.py").write_bytes(project.files_at(project.head)["kvs/model.py"])
    plain, _ = audit_with_build(project, TargetSpec("tree", str(unrelated)))
    assert plain.target.distribution is None and statuses(plain) == {"src/kvs/model.py": ["applied"]}
    with pytest.raises(InputError, match="`dist` nope: not installed"):
        audit_with_build(project, TargetSpec("tree", str(layer), dist="nope"))


@pytest.mark.parametrize("kind", ["tree", "wheel", "site-packages"])
def test_every_target_tells_a_files_size_without_reading_it(demo_build: DemoBuild, kind: str) -> None:
    """The package index skips files too large to index by their size, before reading them."""
    path = {"tree": demo_build.tree, "wheel": demo_build.wheel, "site-packages": demo_build.site_packages}[kind]
    target = open_target(TargetSpec(kind, path=str(path)), ["src/kvserve/runner.py"], ["src/kvserve/runner.py"])
    files = sorted(target.files())
    assert files
    for name in files:
        data = target.read(name)
        assert data is not None and target.size(name) == len(data)
    assert target.size("no/such/file.py") is None
