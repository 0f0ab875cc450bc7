"""A PR combining two stacks that fork from the default branch at different commits: each stack's
PRs are measured from their own starts (the lower PR of the second stack from its fork point, never
from the first stack's head), each hunk is counted once under the PR that introduced it, and the
combining PR, which adds nothing, has no hunk of its own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import GitRepo
from helpers.lines import text
from prstack.cli import main


def two_stacks_combined(repo: GitRepo) -> None:
    """#1 then #2 on main's first commit (#1 since rebased onto a later main: #2 holds a copy of
    it); main then changes pkg/m.py and adds pkg/n.py; #3 then #4 on that later main; #5 merges
    #2, then #4, onto #2's fork point."""
    first = repo.commit("base", {f"pkg/{n}.py": text(n) for n in "abm"})
    repo.branch("s1", "main")
    repo.commit("change a 10", {"pkg/a.py": text("a", {10: "a 10 by #1"})})
    repo.commit("change a 30", {"pkg/a.py": text("a", {10: "a 10 by #1", 30: "a 30 by #2"})})
    repo.pr_ref(2)
    repo.branch("main", "main")
    repo.commit("main moves on", {"pkg/m.py": text("m", {5: "m 5 on main"}), "pkg/n.py": text("n")})
    repo.branch("r1", "main")
    repo.git("-c", "commit.gpgsign=false", "cherry-pick", "s1~1")
    repo.pr_ref(1)
    repo.branch("s2", "main")
    repo.commit("change b 10", {"pkg/b.py": text("b", {10: "b 10 by #3"})})
    repo.pr_ref(3)
    repo.commit("change b 30", {"pkg/b.py": text("b", {10: "b 10 by #3", 30: "b 30 by #4"})})
    repo.pr_ref(4)
    repo.branch("combined", first)
    repo.git("merge", "--quiet", "--no-ff", "--no-edit", "s1")
    repo.git("merge", "--quiet", "--no-ff", "--no-edit", "s2")
    repo.pr_ref(5)
    repo.git("checkout", "--quiet", "main")


@pytest.mark.slow
def test_two_stacks_with_different_fork_points_each_hunk_once(
    git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The combining PR's tree: exit 0, the four PRs' hunks each once under its own PR, none of the
    default branch's change counted as a PR's, none under the combining PR."""
    two_stacks_combined(git_repo)
    tree = git_repo.archive("refs/pull/5/head", tmp_path / "tree")
    argv = ["audit", "5", "--git", str(git_repo.path), "--tree", str(tree), "--offline", "--format", "json"]
    code = main(argv)
    report = json.loads(capsys.readouterr().out)
    placed = sorted((h["pr"], h["path"], h["new_start"], h["status"]) for h in report["hunks"])
    assert placed == [(1, "pkg/a.py", 7, "applied"), (2, "pkg/a.py", 27, "applied"),
                      (3, "pkg/b.py", 7, "applied"), (4, "pkg/b.py", 27, "applied")]
    assert code == 0
