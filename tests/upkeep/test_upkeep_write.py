"""`prstack upkeep --write DIR` writes as pip writes: never into the folder of the carried patches
unless asked (--in-place), the whole refreshed series swapped in at once, every item that needs a
person kept in `series` after a comment, a symlink in the folder never written through, and the
names from the patches escaped on stderr."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import GitRepo
from helpers.releases import BASE
from helpers.releases import edited as _edit
from helpers.releases import text_of as _text
from prstack.cli import main


def carried(r: GitRepo, folder: Path) -> dict[str, bytes]:
    """Two carried patches in a quilt folder: one that still applies (keep), one whose lines upstream
    rewrote in v1.1 (rebase by hand)."""
    r.commit("base", {"pkg/__init__.py": "", "pkg/mod.py": _text(BASE), "pkg/other.py": "x = 0\n"})
    r.git("tag", "v1.0")
    r.branch("work")
    r.commit("tweak", {"pkg/mod.py": _text(_edit(BASE, l12="value_12 = 'twelve'\n"))})
    rebase = r.git("diff", "v1.0", "HEAD") + "\n"
    keep = ("diff --git a/pkg/other.py b/pkg/other.py\n--- a/pkg/other.py\n+++ b/pkg/other.py\n"
            "@@ -1 +1 @@\n-x = 0\n+x = 1\n")
    r.git("checkout", "-q", "main")
    r.commit("rewrite", {"pkg/mod.py": _text([*BASE[:9], "REWRITTEN = {\n", "    'all': 1,\n", "}\n", *BASE[15:]])})
    r.git("tag", "v1.1")
    folder.mkdir()
    files = {"0001-tweak.patch": rebase.encode(), "0002-other.patch": keep.encode(),
             "series": b"0001-tweak.patch\n0002-other.patch\n"}
    for name, data in files.items():
        (folder / name).write_bytes(data)
    return files


def as_written(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_write_into_the_folder_of_the_carried_patches_is_refused(
        git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    patches = tmp_path / "patches"
    before = carried(git_repo, patches)
    code = main(["upkeep", "--patch", str(patches), "--git", str(git_repo.path), "--onto", "v1.1",
                 "--write", str(patches)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "--in-place" in err
    assert as_written(patches) == before


def test_in_place_replaces_the_series_and_keeps_what_needs_a_person(
        git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """With --in-place the folder becomes the refreshed series; the patch that needs a rebase stays in
    it as it was, listed in `series` after a comment saying why."""
    patches = tmp_path / "patches"
    before = carried(git_repo, patches)
    code = main(["upkeep", "--patch", str(patches), "--git", str(git_repo.path), "--onto", "v1.1",
                 "--write", str(patches), "--in-place"])
    err = capsys.readouterr().err
    assert code == 1, err
    after = as_written(patches)
    series = after["series"].decode().splitlines()
    assert series[0].startswith("# ") and "0001-tweak.patch" in series[0] and "rebase by hand" in series[0]
    assert series[1:] == ["0001-tweak.patch", "0002-other.patch"]
    assert after["0001-tweak.patch"] == before["0001-tweak.patch"]
    assert b"\nRefreshed by prstack upkeep for v1.1." in after["0002-other.patch"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".patches.")]  # (no temporary left)


def test_a_symlink_in_the_folder_is_never_written_through(
        git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A refreshed folder from a checkout whose patch name is a link to a file elsewhere (a stand-in for
    ~/.bashrc): the link goes with the old folder, the file it pointed to is untouched."""
    patches = tmp_path / "patches"
    carried(git_repo, patches)
    out = tmp_path / "refreshed"
    out.mkdir()
    victim = tmp_path / "bashrc"
    victim.write_text("export PATH=/usr/bin\n")
    os.symlink(victim, out / "0002-other.patch")
    (out / "series").write_text("0002-other.patch\n")
    code = main(["upkeep", "--patch", str(patches), "--git", str(git_repo.path), "--onto", "v1.1",
                 "--write", str(out)])
    assert code == 1, capsys.readouterr().err
    assert victim.read_text() == "export PATH=/usr/bin\n"
    assert not (out / "0002-other.patch").is_symlink()
    assert b"Refreshed by prstack upkeep" in (out / "0002-other.patch").read_bytes()


def test_a_folder_holding_other_files_is_not_replaced(
        git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    patches = tmp_path / "patches"
    carried(git_repo, patches)
    out = tmp_path / "project"
    out.mkdir()
    (out / "README.md").write_text("mine\n")
    code = main(["upkeep", "--patch", str(patches), "--git", str(git_repo.path), "--onto", "v1.1",
                 "--write", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and "README.md" in err and err.count("\n") == 1
    assert as_written(out) == {"README.md": b"mine\n"}


def test_escape_sequences_from_a_patch_name_never_reach_the_terminal(
        git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    patches = tmp_path / "patches"
    before = carried(git_repo, patches)
    hostile = patches / "0001-\x1b]0;owned\x07\x1b[31mtweak.patch"
    hostile.write_bytes(before["0001-tweak.patch"])
    code = main(["upkeep", "--patch", str(hostile), "--git", str(git_repo.path), "--onto", "v1.1",
                 "--write", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 1
    assert "rebase by hand" in err and "\x1b" not in err and "\x07" not in err
    assert "\\x1b" in err
