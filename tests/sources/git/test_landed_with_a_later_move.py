"""A PR whose change landed by a squash naming it, then pushed again with a commit that moves a file
it added: the default branch does not hold the move, so the PR is not taken as landed, and a build
lacking the moved file misses it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import GitRepo
from helpers.lines import text
from prstack.cli import main


@pytest.mark.slow
def test_a_move_the_default_branch_never_had_is_not_landed(
    git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """#1 adds pkg/x.py, #2 on it edits pkg/a.py, each squash-landed naming it; #2 then moves pkg/x.py
    to pkg/moved/x.py: #2's own tree is all present, and the tree without the moved file has that
    hunk file-missing (exit 1), not "as the landing left it"."""
    git_repo.commit("base", {"pkg/__init__.py": "", "pkg/a.py": text("a")})
    git_repo.branch("feature")
    git_repo.commit("add x", {"pkg/x.py": text("x")})
    git_repo.pr_ref(1)
    git_repo.commit("edit a", {"pkg/a.py": text("a", {10: "a 10 feature"})})
    git_repo.git("checkout", "-q", "main")
    git_repo.commit("add x (#1)", {"pkg/x.py": text("x")})
    git_repo.commit("edit a (#2)", {"pkg/a.py": text("a", {10: "a 10 feature"})})
    git_repo.git("checkout", "-q", "feature")
    git_repo.commit("move x", {"pkg/x.py": None, "pkg/moved/x.py": text("x")})
    git_repo.pr_ref(2)
    tree = git_repo.archive("refs/pull/2/head", tmp_path / "tree")
    argv = ["audit", "2", "--git", str(git_repo.path), "--tree", str(tree), "--offline", "--format", "json"]
    assert main(argv) == 0
    capsys.readouterr()
    (tree / "pkg/moved/x.py").unlink()
    code = main(argv)
    report = json.loads(capsys.readouterr().out)
    assert [(h["pr"], h["path"], h["status"]) for h in report["hunks"] if h["status"] != "applied"] == [
        (2, "pkg/moved/x.py", "file-missing")]
    assert code == 1
    assert next(p for p in report["prs"] if p["number"] == 2).get("landed") is None
