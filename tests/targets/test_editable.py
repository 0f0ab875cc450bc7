"""Editable installs: the audit reads the source directory the finder, .pth or .egg-link points at."""

from __future__ import annotations

import json
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
from prstack.cli import main
from prstack.targets.base import TargetSpec
from prstack.targets.built_from import Containment
from prstack.targets.editable import _finder_mapping, find_editable

FINDER = '''import sys
from importlib.machinery import ModuleSpec
MAPPING: dict[str, str] = {{'kvs': {src!r}}}
NAMESPACES: dict[str, list[str]] = {{}}
PATH_PLACEHOLDER = '__editable__.kvs-1.0.0.finder' + ".__path_hook__"


def install():
    raise SystemExit("prstack must never run this")
'''


def editable_wheel(tmp_path: Path, mechanism: str, checkout: Path) -> Path:
    """The editable wheel setuptools (PEP 660 finder or static .pth) or hatchling would build."""
    src = checkout / "src"
    if mechanism == "pep660-finder":
        files = {
            "__editable__.kvs-1.0.0.pth":
                b"import __editable___kvs_1_0_0_finder; __editable___kvs_1_0_0_finder.install()\n",
            "__editable___kvs_1_0_0_finder.py": FINDER.format(src=str(src / "kvs")).encode(),
        }
    elif mechanism == "pth":
        files = {"_kvs.pth": f"{src}\n".encode()}
    else:
        files = {"_kvs.py": f"from editables.redirector import RedirectingFinder as F\nF.install()\n"
                            f"F.map_module('kvs', '{src / 'kvs' / '__init__.py'}')\n".encode(),
                 "_kvs.pth": b"import _kvs\n"}
    return make_wheel(tmp_path / "dist", "kvs", "1.0.0", files)


def install_editable(project: Project, tmp_path: Path, mechanism: str) -> Path:
    site = tmp_path / "site"
    wheel = editable_wheel(tmp_path, mechanism, project.path)
    install_into(wheel, site, direct_url={"url": project.path.as_uri(), "dir_info": {"editable": True}})
    return site


@pytest.mark.parametrize("mechanism", ["pep660-finder", "pth", "editables"])
@pytest.mark.slow
def test_editable_install_reads_the_checkout_it_points_at(tmp_path: Path, mechanism: str) -> None:
    project = make_project(tmp_path)
    project.repo.git("checkout", "--quiet", "fix")  # `pip install -e .` in the clone, on the PR branch
    site = install_editable(project, tmp_path, mechanism)
    report, target = audit_with_build(project, TargetSpec("site-packages", str(site)))
    assert statuses(report) == {"src/kvs/model.py": ["applied"]}
    ev = target.evidence
    assert ev.editable is not None and ev.editable.mechanism == mechanism
    src = str(project.path / "src")
    assert ev.editable.source_dirs == ((src + "/kvs",) if mechanism != "pth" else (src,))
    assert ev.checkout_commit == project.head and ev.build_commit == project.head
    assert ev.record is not None and ev.record.clean
    build = report.build
    assert build is not None
    assert "editable install: read from " + src in build.header
    assert build.header.endswith(
        f"built from {project.head[:9]} (direct_url: editable directory {project.path.as_uri()}; "
        "the checkout's .git/HEAD), which contains #7's head"
    )


def test_uncommitted_revert_in_the_editable_source_is_flagged(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    project.repo.git("checkout", "--quiet", "fix")
    site = install_editable(project, tmp_path, "pep660-finder")
    (project.path / "src" / "kvs" / "model.py").write_text(MODEL)  # not committed
    report, _ = audit_with_build(project, TargetSpec("site-packages", str(site)))
    assert statuses(report) == {"src/kvs/model.py": ["missing"]}
    assert report.build is not None
    [flag] = report.build.disagreements
    assert flag.containment is Containment.HEAD
    assert flag.cause == "the editable source directory differs from that commit (uncommitted or other checkout)"


def test_legacy_egg_link(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    project.repo.git("checkout", "--quiet", "fix")
    egg = project.path / "src" / "kvs.egg-info"
    egg.mkdir()
    (egg / "PKG-INFO").write_text("Metadata-Version: 1.1\nName: kvs\nVersion: 1.0.0\n")
    (egg / "top_level.txt").write_text("kvs\n")
    (egg / "SOURCES.txt").write_text("src/kvs/__init__.py\nsrc/kvs/model.py\n")
    site = tmp_path / "site"
    site.mkdir()
    (site / "kvs.egg-link").write_text(f"{project.path / 'src'}\n../\n")
    (site / "easy-install.pth").write_text(f"{project.path / 'src'}\n")
    report, target = audit_with_build(project, TargetSpec("site-packages", str(site)))
    assert statuses(report) == {"src/kvs/model.py": ["applied"]}
    assert report.results[0].installed_path == "kvs/model.py"
    ev = target.evidence
    assert ev.editable is not None and ev.editable.mechanism == "egg-link"
    assert ev.build_commit == project.head


def test_editable_through_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = make_project(tmp_path)
    project.repo.git("checkout", "--quiet", "fix")
    site = install_editable(project, tmp_path, "pep660-finder")
    code = main(["audit", "7", "--git", str(project.path), "--site-packages", str(site), "--format", "json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    assert [(h["path"], h["installed_path"], h["status"]) for h in data["hunks"]] == [
        ("src/kvs/model.py", "kvs/model.py", "applied")]


def test_finder_mapping_is_read_not_run() -> None:
    text = FINDER.format(src="/x/src/kvs")
    assert _finder_mapping(text) == {"kvs": "/x/src/kvs"}
    assert _finder_mapping("MAPPING = {'a': '/p/a'}\n") == {"a": "/p/a"}
    assert _finder_mapping("MAPPING = make()\n") == {}
    assert _finder_mapping("def (:\n") == {}


def test_a_regular_pth_of_folders_inside_site_packages_is_not_editable(tmp_path: Path) -> None:
    site = tmp_path / "site"
    (site / "win32" / "lib").mkdir(parents=True)
    (site / "pywin32.pth").write_text("# .pth file\nwin32\nwin32/lib\nimport pywin32_bootstrap\n")
    source = find_editable(site, ["pywin32.pth"])
    assert source is not None and source.mechanism == "pth"  # the raw reading sees path entries ...
    wheel = make_wheel(tmp_path / "d", "pywin32", "306", {"pywin32.pth": (site / "pywin32.pth").read_bytes(),
                                                         "win32/lib/x.py": b"X = 1\n"})
    (site / "pywin32.pth").unlink()
    (site / "win32" / "lib").rmdir()
    (site / "win32").rmdir()
    install_into(wheel, site)
    from importlib import metadata

    from prstack.targets.installed import dist_files

    [dist] = list(metadata.distributions(path=[str(site)]))
    assert dist_files(dist).editable is None  # ... but inside site-packages, without dir_info: regular


def test_git_head_of_a_worktree_and_of_packed_refs(tmp_path: Path) -> None:
    from prstack.targets.editable import enclosing_checkout, git_head

    project = make_project(tmp_path)
    project.repo.git("worktree", "add", "--quiet", str(tmp_path / "wt"), "fix")
    assert git_head(tmp_path / "wt") == project.head  # .git is a file: gitdir + commondir
    project.repo.git("pack-refs", "--all")
    assert git_head(project.path) == project.base  # main, from packed-refs
    project.repo.git("checkout", "--quiet", "--detach", project.head)
    assert git_head(project.path) == project.head
    found = enclosing_checkout(project.path / "src" / "kvs")
    assert found == (project.path.resolve(), project.head)
    assert git_head(tmp_path) is None
