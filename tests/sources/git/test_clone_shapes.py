"""Clones as users have them: origin a fork whose main is behind the project's (upstream holds the PR
refs), origin a local path with the PR refs under refs/remotes/origin/pr/N, no remote at all. Each
audits as the project's own repository does."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from conftest import GitRepo
from helpers.lines import text
from prstack.cli import main


def project(repo: GitRepo) -> dict[str, str]:
    """main: base, PR #5 (pkg/b.py) merged by a merge commit, then PR #7 (pkg/a.py) forked from
    there and still open."""
    shas = {"base": repo.commit("base", {"pkg/__init__.py": "", "pkg/a.py": text("a"), "pkg/b.py": text("b")})}
    repo.branch("p5")
    repo.commit("Speed up b", {"pkg/b.py": text("b", {10: "b 10 faster"})})
    repo.pr_ref(5)
    repo.branch("main", "main")
    repo.git("merge", "--quiet", "--no-ff", "-m", "Merge #5", "p5")
    repo.branch("p7")
    repo.commit("Fix a", {"pkg/a.py": text("a", {20: "a 20 fixed"})})
    shas["head7"] = repo.pr_ref(7)
    repo.branch("main", "main")
    return shas


def git(*args: str | Path) -> str:
    return subprocess.run(["git", *map(str, args)], check=True, capture_output=True, text=True).stdout.strip()


def fork_clone(upstream: GitRepo, root: Path, stale: str) -> Path:
    """A fork of the project whose main is still at `stale`, cloned (origin = the fork), with the
    project added as `upstream` and its PR refs fetched as refs/remotes/upstream/pr/N."""
    fork = root / "someone" / "kvs.git"
    git("init", "--quiet", "--bare", "--initial-branch=main", fork)
    git("-C", upstream.path, "push", "--quiet", fork, f"{stale}:refs/heads/main")
    clone = root / "clone"
    git("clone", "--quiet", fork, clone)
    git("-C", clone, "remote", "add", "upstream", upstream.path)
    git("-C", clone, "config", "--add", "remote.upstream.fetch", "+refs/pull/*/head:refs/remotes/upstream/pr/*")
    git("-C", clone, "fetch", "--quiet", "upstream")
    assert git("-C", clone, "rev-parse", "refs/remotes/origin/HEAD") == stale
    return clone


def audit(capsys: pytest.CaptureFixture[str], clone: Path, tree: Path) -> tuple[int, dict[str, object]]:
    code = main(["audit", "7", "--git", str(clone), "--offline", "--tree", str(tree), "--format", "json"])
    out, err = capsys.readouterr()
    assert out, err
    return code, json.loads(out)


@pytest.mark.slow
def test_a_fork_whose_main_is_behind_audits_against_the_project_s_main(
    git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The project's main (upstream's) is the default branch, not the fork's stale one: #5, merged
    there, is no parent of #7, and #7's hunks are its own change only."""
    shas = project(git_repo)
    tree = git_repo.archive(shas["head7"], tmp_path / "tree")
    clone = fork_clone(git_repo, tmp_path, shas["base"])
    code, from_fork = audit(capsys, clone, tree)
    code_project, from_project = audit(capsys, git_repo.path, tree)
    assert code == code_project == 0
    assert [pr["number"] for pr in from_fork["prs"]] == [7]  # type: ignore[index]
    assert {h["path"] for h in from_fork["hunks"]} == {"pkg/a.py"}  # type: ignore[union-attr]
    assert from_fork["hunks"] == from_project["hunks"] and from_fork["prs"] == from_project["prs"]


@pytest.mark.parametrize("shape", ["path-origin", "no-remote"])
@pytest.mark.slow
def test_pr_refs_under_other_names_audit_as_the_project_s_repository(
    git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str], shape: str
) -> None:
    """A clone of a local path with `+refs/pull/*/head:refs/remotes/origin/pr/*`, and a repository
    with no remote holding main and refs/pull/N/head, give the project's own answer."""
    shas = project(git_repo)
    tree = git_repo.archive(shas["head7"], tmp_path / "tree")
    clone = tmp_path / shape
    if shape == "path-origin":
        git("clone", "--quiet", git_repo.path, clone)
        git("-C", clone, "config", "--add", "remote.origin.fetch", "+refs/pull/*/head:refs/remotes/origin/pr/*")
        git("-C", clone, "fetch", "--quiet", "origin")
        assert git("-C", clone, "for-each-ref", "refs/pull") == ""
    else:
        git("init", "--quiet", "--initial-branch=main", clone)
        git("-C", clone, "fetch", "--quiet", "--update-head-ok", git_repo.path, "+refs/heads/main:refs/heads/main",
            "+refs/pull/*/head:refs/pull/*/head")
        assert git("-C", clone, "remote") == ""
    code, got = audit(capsys, clone, tree)
    code_project, want = audit(capsys, git_repo.path, tree)
    assert code == code_project == 0
    assert [pr["number"] for pr in got["prs"]] == [7]  # type: ignore[index]
    assert got["hunks"] == want["hunks"] and got["prs"] == want["prs"]


def one_line_error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    code = main(argv)
    out, err = capsys.readouterr()
    lines = [x for x in err.splitlines() if x.strip()]
    assert code == 2 and not out and len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_a_pr_the_fork_clone_lacks_is_fetched_from_upstream_by_the_command_named(
    git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Where origin is a fork (no PR refs there), the fetch command named for a missing PR fetches
    from upstream, and running it makes the PR auditable."""
    shas = project(git_repo)
    clone = fork_clone(git_repo, tmp_path, shas["base"])
    git_repo.branch("p9", "main")
    head9 = git_repo.commit("Fix b", {"pkg/b.py": text("b", {10: "b 10 faster", 30: "b 30 fixed"})})
    git_repo.pr_ref(9)
    git_repo.branch("main", "main")
    tree = git_repo.archive(head9, tmp_path / "tree9")
    argv = ["audit", "9", "--git", str(clone), "--offline", "--tree", str(tree), "--format", "json"]
    line = one_line_error(capsys, argv)
    command = line.split("fetch it with: ", 1)[1]
    assert " fetch upstream " in command
    subprocess.run(command, shell=True, check=True, capture_output=True)
    assert main(argv) == 0
    assert [pr["number"] for pr in json.loads(capsys.readouterr().out)["prs"]] == [9]


def test_a_clone_without_remotes_is_told_no_remote_it_lacks(
    git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A repository with no remote is not told to fetch from `origin`: the command names the
    project's URL to fill in."""
    shas = project(git_repo)
    tree = git_repo.archive(shas["head7"], tmp_path / "tree")
    line = one_line_error(capsys, ["audit", "9", "--git", str(git_repo.path), "--offline", "--tree", str(tree)])
    assert "fetch origin" not in line
    fetch = "fetch https://github.com/OWNER/NAME.git '+refs/pull/9/head:refs/pull/9/head'"
    assert f"git -C {git_repo.path} {fetch}" in line
