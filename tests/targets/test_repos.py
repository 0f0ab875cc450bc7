"""Which repository a tree's checkout names: its git config read as a file (git is not run), confined."""

from __future__ import annotations

import os
from pathlib import Path

from conftest import GitRepo
from prstack.placement.forge import RepoId
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


def test_pr_refs_of_a_clone_loose_packed_and_under_a_remote(tmp_path: Path) -> None:
    from prstack.targets.editable import pr_ref_heads

    repo = GitRepo(tmp_path / "clone")
    one = repo.commit("one", {"a.py": "1\n"})
    two = repo.commit("two", {"a.py": "2\n"})
    repo.git("remote", "add", "upstream", "https://github.com/acme/widget")
    repo.git("update-ref", "refs/pull/1/head", one)
    repo.git("update-ref", "refs/remotes/upstream/pr/2", two)
    assert pr_ref_heads(repo.path, [1, 2, 3]) == {1: one, 2: two}
    repo.git("pack-refs", "--all")
    assert pr_ref_heads(repo.path, [1, 2]) == {1: one, 2: two}
    bare = tmp_path / "bare.git"
    repo.git("clone", "--quiet", "--bare", str(repo.path), str(bare))
    repo.git("-C", str(bare), "update-ref", "refs/pull/1/head", one)
    assert pr_ref_heads(bare, [1]) == {1: one}
    assert pr_ref_heads(tmp_path, [1]) == {}  # no clone


def test_prstack_and_its_dependencies_name_no_repository_of_the_running_environment() -> None:
    import sys

    from prstack.targets.repos import own_closure

    own = own_closure([p for p in sys.path if p and os.path.isdir(p)])
    assert {"prstack", "rich", "typer", "pygithub", "gitpython", "gitdb", "smmap"} <= own
    assert "cryptography" in own  # PyGithub requires pyjwt[crypto]: the extra's requirements too
    assert "pytest" not in own and "hypothesis" not in own  # test extras are not requirements
    named = {name.lower() for name, _ in repo_candidates(TargetSpec("installed"))}
    assert not named & {"rich", "typer", "pygithub", "gitpython", "prstack"}


def test_pr_refs_leading_out_of_the_clone_or_fifos_name_nothing(tmp_path: Path) -> None:
    from prstack.targets.editable import pr_ref_heads

    repo = GitRepo(tmp_path / "clone")
    repo.commit("one", {"a.py": "1\n"})
    outside = tmp_path / "outside"
    outside.write_text("a" * 40 + "\n")
    refs = repo.path / ".git" / "refs" / "pull" / "1"
    refs.mkdir(parents=True)
    (refs / "head").symlink_to(outside)
    (repo.path / ".git" / "refs" / "pull" / "2").mkdir()
    os.mkfifo(repo.path / ".git" / "refs" / "pull" / "2" / "head")
    assert pr_ref_heads(repo.path, [1, 2]) == {}  # (returns: the FIFO is never opened)
