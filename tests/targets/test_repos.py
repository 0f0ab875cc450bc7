"""Which repository a tree's checkout names: its git config read as a file (git is not run), confined."""

from __future__ import annotations

import os
from pathlib import Path

from conftest import GitRepo
from prstack.forge import RepoId
from prstack.targets.base import TargetSpec
from prstack.targets.repos import repo_candidates, repo_of_checkout


def test_upstream_names_the_project_over_a_forks_origin(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "tree")
    repo.commit("base", {"pkg/__init__.py": ""})
    repo.git("remote", "add", "origin", "git@github.com:me/widget.git")
    repo.git("remote", "add", "upstream", "https://github.com/acme/widget")
    assert repo_of_checkout(repo.path) == RepoId("acme", "widget")
    named = repo_candidates(TargetSpec("tree", str(repo.path)))
    assert named == [(str(repo.path), frozenset({RepoId("acme", "widget")}))]


def test_origin_alone_and_two_unrelated_remotes(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "tree")
    repo.commit("base", {"a.py": ""})
    repo.git("remote", "add", "origin", "ssh://git@example.com/team/tool.git")
    assert repo_of_checkout(repo.path) == RepoId("team", "tool", "example.com")
    repo.git("remote", "rename", "origin", "one")
    repo.git("remote", "add", "two", "https://github.com/other/thing")
    assert repo_of_checkout(repo.path) is None  # neither upstream nor origin, and not one alone


def test_a_git_config_that_is_a_fifo_or_leads_out_names_nothing(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.write_text('[remote "origin"]\n\turl = https://github.com/evil/repo\n')
    tree = tmp_path / "tree"
    (tree / ".git").mkdir(parents=True)
    (tree / ".git" / "config").symlink_to(outside)
    assert repo_of_checkout(tree) is None
    (tree / ".git" / "config").unlink()
    os.mkfifo(tree / ".git" / "config")
    assert repo_of_checkout(tree) is None  # (returns: a FIFO is never opened)
