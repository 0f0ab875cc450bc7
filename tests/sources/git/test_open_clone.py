"""Which folders open as a clone (`--git PATH`) and which are bare: the top of a work tree, a linked
work tree, a git folder with or without its config; never a folder inside one, nor outside any."""

from __future__ import annotations

import subprocess
from pathlib import Path

import git
import pytest

from conftest import GitRepo
from prstack.errors import InputError
from prstack.sources.git.repo import GitClone


def _layouts(git_repo: GitRepo, tmp_path: Path) -> dict[str, Path]:
    git_repo.commit("base", {"pkg/a.py": "a\n"})
    bare = tmp_path / "mirror.git"
    subprocess.run(["git", "clone", "--quiet", "--bare", str(git_repo.path), str(bare)], check=True)
    no_config = tmp_path / "no-config.git"
    subprocess.run(["git", "clone", "--quiet", "--bare", str(git_repo.path), str(no_config)], check=True)
    (no_config / "config").unlink()
    linked = tmp_path / "linked"
    git_repo.git("worktree", "add", "--quiet", str(linked))
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "notes.txt").write_text("x\n")
    return {"work tree": git_repo.path, "bare": bare, "bare without config": no_config, "linked work tree": linked,
            "git folder of a work tree": git_repo.path / ".git", "folder in a work tree": git_repo.path / "pkg",
            "folder in a git folder": bare / "refs", "plain folder": plain, "a file": plain / "notes.txt"}


OPENS = {"work tree": False, "bare": True, "bare without config": True, "linked work tree": False,
         "git folder of a work tree": True}


@pytest.mark.parametrize("layout", ["work tree", "bare", "bare without config", "linked work tree",
                                    "git folder of a work tree", "folder in a work tree", "folder in a git folder",
                                    "plain folder", "a file"])
@pytest.mark.slow
def test_which_folders_open_as_clones(git_repo: GitRepo, tmp_path: Path, layout: str) -> None:
    """A clone opens where GitPython (search_parent_directories=False) opens one, bare where it is a
    git folder; anything else is one InputError that names the path."""
    path = _layouts(git_repo, tmp_path)[layout]
    try:
        git.Repo(path, search_parent_directories=False)
        gitpython_opens = True
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        gitpython_opens = False
    assert gitpython_opens == (layout in OPENS)
    if layout in OPENS:
        clone = GitClone(path)
        assert clone.bare is OPENS[layout]
        assert clone.resolve("HEAD") == git_repo.git("rev-parse", "HEAD").strip()
    else:
        with pytest.raises(InputError, match="is not a git repository"):
            GitClone(path)


def test_a_bare_clone_without_main_takes_its_head_branch(git_repo: GitRepo, tmp_path: Path) -> None:
    git_repo.commit("base", {"pkg/a.py": "a\n"})
    git_repo.git("branch", "-m", "main", "trunk")
    bare = tmp_path / "mirror.git"
    subprocess.run(["git", "clone", "--quiet", "--bare", str(git_repo.path), str(bare)], check=True)
    assert GitClone(bare).default_ref == "refs/heads/trunk"


def test_environment_set_for_git_reaches_it(git_repo: GitRepo) -> None:
    """Variables set on the clone are in the environment of every git it runs; None unsets one."""
    git_repo.commit("base", {"pkg/a.py": "a\n"})
    clone = GitClone(git_repo.path)
    clone.git.update_environment(GIT_CONFIG_COUNT="1", GIT_CONFIG_KEY_0="prstack.probe", GIT_CONFIG_VALUE_0="on")
    assert clone.env["GIT_CONFIG_KEY_0"] == "prstack.probe"
    assert clone._run("config", "prstack.probe") == "on"
    clone.git.update_environment(GIT_CONFIG_COUNT=None)
    assert "GIT_CONFIG_COUNT" not in clone.env
