"""A target whose file is the file at one of the PR's earlier commits, not at its head (a fix-up
commit dropped from the build): the report names that commit, and the hunks of the file are not
counted as present, also where the PR's net diff is there (the fix-up restored base text)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import GitRepo
from prstack.cli import main


def text(edits: dict[int, str] | None = None) -> str:
    rows = [f"line {i} = {i}" for i in range(1, 61)]
    for at, new in (edits or {}).items():
        rows[at - 1] = new
    return "\n".join(rows) + "\n"


@pytest.fixture
def fixed_up(git_repo: GitRepo) -> tuple[GitRepo, str]:
    """#1: a commit changing lines 5 and 40, then a fix-up putting line 40 back as it was."""
    git_repo.commit("base", {"pkg/__init__.py": "", "pkg/mod.py": text()})
    git_repo.branch("feature")
    first = git_repo.commit("change 5 and, by mistake, 40", {"pkg/mod.py": text({5: "line 5 = 'five'", 40: "oops"})})
    git_repo.commit("fix-up: line 40 back", {"pkg/mod.py": text({5: "line 5 = 'five'"})})
    git_repo.pr_ref(1)
    return git_repo, first


def audit(capsys: pytest.CaptureFixture[str], repo: GitRepo, tree: Path) -> tuple[int, dict[str, object]]:
    code = main(["audit", "1", "--git", str(repo.path), "--tree", str(tree), "--offline", "--format", "json"])
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.slow
def test_a_file_at_an_earlier_commit_of_the_pr_names_it(
    fixed_up: tuple[GitRepo, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The head's tree is all present; the file as the first commit left it: exit 1, the hunk partial,
    its note naming that commit."""
    repo, first = fixed_up
    tree = repo.archive("refs/pull/1/head", tmp_path / "tree")
    assert audit(capsys, repo, tree)[0] == 0
    (tree / "pkg/mod.py").write_text(text({5: "line 5 = 'five'", 40: "oops"}))
    code, report = audit(capsys, repo, tree)
    assert code == 1
    hunks = report["hunks"]
    assert isinstance(hunks, list) and len(hunks) == 1
    assert hunks[0]["status"] == "partial"
    assert f"as at the PR's commit {first[:12]}" in hunks[0]["note"]


@pytest.mark.slow
def test_a_file_edited_otherwise_is_judged_by_its_hunks(
    fixed_up: tuple[GitRepo, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file that differs from the head but is no commit's file of the PR: judged by its hunks alone."""
    repo, _ = fixed_up
    tree = repo.archive("refs/pull/1/head", tmp_path / "tree")
    (tree / "pkg/mod.py").write_text(text({5: "line 5 = 'five'", 50: "a local edit"}))
    code, report = audit(capsys, repo, tree)
    assert code == 0
    assert [h["status"] for h in report["hunks"]] == ["applied"]  # type: ignore[union-attr,index]


def test_a_pr_above_that_leaves_the_file_as_the_earlier_commit_did(
    fixed_up: tuple[GitRepo, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The PR built on it puts line 40 back as the first commit had it: its head's tree is the
    stack, all present."""
    repo, _ = fixed_up
    repo.commit("#2: line 40 as the first commit had it", {"pkg/mod.py": text({5: "line 5 = 'five'", 40: "oops"})})
    repo.pr_ref(2)
    tree = repo.archive("refs/pull/2/head", tmp_path / "tree")
    code = main(["audit", "2", "--git", str(repo.path), "--tree", str(tree), "--offline", "--format", "json"])
    statuses = {h["status"] for h in json.loads(capsys.readouterr().out)["hunks"]}
    assert code == 0 and statuses == {"applied"}


def _tidied_then_put_back(git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """On the checked-out branch: a commit removing line 40, a fix-up putting it back; the PR's own tree
    is all present, and a build holding the file as the removal left it has the hunk partial, its note
    naming the removing commit."""
    removed = "\n".join(x for x in text({5: "line 5 = 'five'"}).splitlines() if x != "line 40 = 40") + "\n"
    slip = git_repo.commit("tidy", {"pkg/mod.py": removed})
    git_repo.commit("fix-up: line 40 back", {"pkg/mod.py": text({5: "line 5 = 'five'"})})
    git_repo.pr_ref(1)
    tree = git_repo.archive("refs/pull/1/head", tmp_path / "tree")
    assert audit(capsys, git_repo, tree)[0] == 0
    (tree / "pkg/mod.py").write_text(removed)
    code, report = audit(capsys, git_repo, tree)
    hunks = report["hunks"]
    assert code == 1
    assert isinstance(hunks, list) and [h["status"] for h in hunks] == ["partial"]
    assert f"as at the PR's commit {slip[:12]}" in hunks[0]["note"]


def test_a_fix_up_restoring_base_text_another_commit_removed(
    git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A commit that only removes a line of base text far from the PR's hunk, and a fix-up putting it
    back: the net diff is the first commit's alone, yet a build holding the file as the removal left it
    has the hunk partial, its note naming the removing commit (which wrote none of the hunk's lines)."""
    git_repo.commit("base", {"pkg/__init__.py": "", "pkg/mod.py": text()})
    git_repo.branch("feature")
    git_repo.commit("change 5", {"pkg/mod.py": text({5: "line 5 = 'five'"})})
    _tidied_then_put_back(git_repo, tmp_path, capsys)


def test_a_fix_up_in_a_branch_that_merged_main(
    git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same fix-up in a branch that merged main before it: the build holding the file as the
    removing commit left it names that commit."""
    git_repo.commit("base", {"pkg/__init__.py": "", "pkg/mod.py": text(), "pkg/other.py": "x = 1\n"})
    git_repo.branch("feature")
    git_repo.commit("change 5", {"pkg/mod.py": text({5: "line 5 = 'five'"})})
    git_repo.git("checkout", "-q", "main")
    git_repo.commit("main goes on", {"pkg/other.py": "x = 2\n"})
    git_repo.git("checkout", "-q", "feature")
    git_repo.git("merge", "-q", "--no-edit", "main")
    _tidied_then_put_back(git_repo, tmp_path, capsys)
