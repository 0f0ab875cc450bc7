"""Paths resolved under a root as the file system resolves them: a folder's resolved path is built from
its parent's, so a symbolic link anywhere on the way is followed (out of the root: refused)."""

from __future__ import annotations

from pathlib import Path

import pytest

from prstack.targets.confined import Unreadable, inside, read_confined


def _tree(tmp_path: Path) -> tuple[Path, Path]:
    root, outside = tmp_path / "root", tmp_path / "outside"
    (outside / "a/b").mkdir(parents=True)
    (outside / "a/b/c.py").write_text("out = 1\n")
    (root / "real/b").mkdir(parents=True)
    (root / "real/b/c.py").write_text("inner = 1\n")
    return root, outside


def test_a_file_two_folders_below_a_folder_linked_out_is_refused(tmp_path: Path) -> None:
    root, outside = _tree(tmp_path)
    (root / "a").symlink_to(outside / "a", target_is_directory=True)
    assert inside(str(root), "a/b/c.py") is None
    with pytest.raises(Unreadable, match="leads outside"):
        read_confined(str(root), "a/b/c.py")


def test_a_file_below_a_folder_linked_inside_is_read_and_a_root_reached_by_a_link_too(tmp_path: Path) -> None:
    root, _ = _tree(tmp_path)
    (root / "inner").symlink_to(root / "real", target_is_directory=True)
    assert read_confined(str(root), "inner/b/c.py") == b"inner = 1\n"
    assert inside(str(root), "inner/b/c.py") == str((root / "real/b/c.py").resolve())
    alias = tmp_path / "alias"
    alias.symlink_to(root, target_is_directory=True)
    assert read_confined(str(alias), "real/b/c.py") == b"inner = 1\n"
    assert read_confined(str(alias), "inner/../real/b/c.py") == b"inner = 1\n"
