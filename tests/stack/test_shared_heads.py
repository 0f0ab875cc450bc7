"""PRs of one stack that share a head: their change is counted once, under the PR the stack's graph
gives its commits to, and the audit of the PR above both still judges every change of the stack."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import GitRepo
from helpers.lines import text
from prstack.cli import main


@pytest.mark.slow
def test_two_prs_sharing_one_head_count_its_change_once(
    git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """#1 and #2 name one head, #3 builds on it: each hunk once (the shared one under the PR owning
    its commit in `graph`, the table saying the other one has its head), exit 0 on #3's tree and
    exit 1 with that hunk missing where the tree lacks it."""
    git_repo.commit("base", {"pkg/a.py": text("a"), "pkg/b.py": text("b")})
    git_repo.branch("f", "main")
    git_repo.commit("change a", {"pkg/a.py": text("a", {10: "a 10 changed"})})
    git_repo.pr_ref(1)
    git_repo.pr_ref(2)
    git_repo.commit("change b", {"pkg/b.py": text("b", {20: "b 20 changed"})})
    git_repo.pr_ref(3)
    assert main(["graph", "3", "--git", str(git_repo.path), "--offline", "--format", "json"]) == 0
    graph = json.loads(capsys.readouterr().out)
    owner = next(c["pr"] for p in graph["prs"] for c in p["commits"] if c["subject"] == "change a")
    assert owner in (1, 2)
    tree = git_repo.archive("refs/pull/3/head", tmp_path / "tree")
    argv = ["audit", "3", "--git", str(git_repo.path), "--tree", str(tree), "--offline", "--format", "json"]
    code = main(argv)
    report = json.loads(capsys.readouterr().out)
    assert sorted((h["pr"], h["path"], h["status"]) for h in report["hunks"]) == [
        (owner, "pkg/a.py", "applied"), (3, "pkg/b.py", "applied")]
    assert code == 0
    other = 3 - owner
    assert main(argv[:-2]) == 0
    assert f"#{other} has the head of #{owner}; its change is counted there." in " ".join(
        capsys.readouterr().out.split())
    (tree / "pkg/a.py").write_text(text("a"))
    code = main(argv)
    lacking = [(h["pr"], h["path"]) for h in json.loads(capsys.readouterr().out)["hunks"]
               if h["status"] != "applied"]
    assert (code, lacking) == (1, [(owner, "pkg/a.py")])


@pytest.mark.slow
def test_two_prs_on_one_parent_sharing_one_head_say_so(
    git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """#2 and #3 both build on #1 and name one head, #4 builds on it: the one of #2 and #3 whose change
    is not counted says whose head it has, not that it carries #1."""
    git_repo.commit("base", {"pkg/a.py": text("a"), "pkg/b.py": text("b")})
    git_repo.branch("f", "main")
    git_repo.commit("change a", {"pkg/a.py": text("a", {10: "a 10 changed"})})
    git_repo.pr_ref(1)
    git_repo.commit("change b", {"pkg/b.py": text("b", {20: "b 20 changed"})})
    git_repo.pr_ref(2)
    git_repo.pr_ref(3)
    git_repo.commit("change a again", {"pkg/a.py": text("a", {10: "a 10 changed", 30: "a 30 changed"})})
    git_repo.pr_ref(4)
    tree = git_repo.archive("refs/pull/4/head", tmp_path / "tree")
    argv = ["audit", "4", "--git", str(git_repo.path), "--tree", str(tree), "--offline"]
    assert main([*argv, "--format", "json"]) == 0
    counted = {h["pr"] for h in json.loads(capsys.readouterr().out)["hunks"] if h["path"] == "pkg/b.py"}
    assert len(counted) == 1 and counted <= {2, 3}
    owner = counted.pop()
    assert main(argv) == 0
    flat = " ".join(capsys.readouterr().out.split())
    assert f"#{5 - owner} has the head of #{owner}; its change is counted there." in flat
    assert f"#{5 - owner} carries" not in flat
