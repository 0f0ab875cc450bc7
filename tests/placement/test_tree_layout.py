"""A tree target ships by its layout, never by whether the audited file happens to be there: a tree
laid out as the repository (a checkout, a source archive) ships its root and every top folder it
holds, and so lacks a file absent there (file-missing); a top folder it leaves out (tests/ of an
sdist) is not shipped; a folder not laid out as the repository ships what it holds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import GitRepo
from prstack.cli import main
from prstack.placement.paths import PathMap, Placement

REPO = ["pkg/__init__.py", "pkg/core.py", "tests/test_core.py", "examples/run.py", "examples/other.py",
        "setup.py", "README.md"]


def test_a_checkout_ships_its_root_and_its_folders() -> None:
    """A checkout lacking a root file, an example, a test: each is file-missing at its own path."""
    present = [p for p in REPO if p not in ("examples/run.py", "setup.py")]
    pathmap = PathMap(present, [*REPO, "tool.py"], source_tree=True)
    assert pathmap.checkout
    for path in ("examples/run.py", "setup.py", "tool.py", "tests/test_new.py"):
        assert pathmap.locate(path).placement is Placement.FILE_MISSING, path
        assert pathmap.locate(path).installed_path == path


def test_an_unpacked_source_archive_ships_the_folders_it_holds() -> None:
    """An sdist without tests/ and docs/: a module it lacks is file-missing, a test or doc is not shipped."""
    present = ["PKG-INFO", "pkg/__init__.py", "pkg/core.py", "setup.py", "README.md"]
    pathmap = PathMap(present, [*REPO, "pkg/new.py"], source_tree=True)
    assert pathmap.locate("pkg/new.py").placement is Placement.FILE_MISSING
    assert pathmap.locate("tests/test_core.py").placement is Placement.NOT_SHIPPED
    assert pathmap.locate("docs/new.md").placement is Placement.NOT_SHIPPED


def test_site_packages_and_foreign_trees_ship_what_they_hold() -> None:
    """A site directory ships no example; a container layer is no checkout of the repository."""
    installed = ["pkg/__init__.py", "pkg/core.py"]
    assert PathMap(installed, REPO).locate("examples/run.py").placement is Placement.NOT_SHIPPED
    layer = ["usr/lib/python3/site-packages/pkg/__init__.py", "usr/lib/python3/site-packages/pkg/core.py",
             "etc/hosts", "usr/bin/python3"]
    assert not PathMap(layer, REPO, source_tree=True).checkout


@pytest.mark.parametrize("path", ["tool.py", "pkg/new_module.py"])
@pytest.mark.slow
def test_a_new_file_deleted_from_a_checkout_is_file_missing(
    git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str], path: str
) -> None:
    """A PR adding a file at the root (or a module) audited against its own checkout with that
    file deleted: exit 1, the file's hunk file-missing."""
    git_repo.commit("base", {"pkg/__init__.py": "", "pkg/core.py": "x = 1\n", "README.md": "hi\n"})
    git_repo.branch("feature")
    git_repo.commit("add a file", {path: "print('new')\n", "pkg/core.py": "x = 2\n"})
    git_repo.pr_ref(1)
    tree = git_repo.archive("refs/pull/1/head", tmp_path / "tree")
    argv = ["audit", "1", "--git", str(git_repo.path), "--tree", str(tree), "--offline", "--format", "json"]
    assert main(argv) == 0
    capsys.readouterr()
    (tree / path).unlink()
    assert main(argv) == 1
    verdicts = {h["path"]: h["status"] for h in json.loads(capsys.readouterr().out)["hunks"]}
    assert verdicts == {path: "file-missing", "pkg/core.py": "applied"}
