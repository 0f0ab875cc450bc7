"""A stack that moves a folder, judged against a source tree from before the move: the path map
must not place the moved files onto their old selves (which would make the move "applied")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import GitRepo
from prstack.cli import main
from prstack.placement.paths import Location, PathMap, Placement

A = "def a():\n    return 'a'\n"
B = "def b():\n    return 'b'\n\n\ndef bb():\n    return 'bb'\n"
C = "def c():\n    return 'c'\n"



def _stack(repo: GitRepo) -> dict[str, str]:
    """PR 1 changes pkg/core.py; PR 2, on it, moves pkg/sub/ up into pkg/ (a.py as it is, b.py
    with an edit) and deletes pkg/sub/c.py."""
    repo.commit("base", {"pkg/__init__.py": "", "pkg/core.py": "X = 1\n",
                         "pkg/sub/a.py": A, "pkg/sub/b.py": B, "pkg/sub/c.py": C})
    repo.branch("p1")
    p1 = repo.commit("p1: X", {"pkg/core.py": "X = 2\n"})
    repo.pr_ref(1)
    repo.branch("p2")
    p2 = repo.commit("p2: move sub up", {"pkg/sub/a.py": None, "pkg/sub/b.py": None, "pkg/sub/c.py": None,
                                         "pkg/a.py": A, "pkg/b.py": B.replace("'bb'", "'BB'")})
    repo.pr_ref(2)
    return {"p1": p1, "p2": p2}


def _audit(capsys: pytest.CaptureFixture[str], repo: GitRepo, tree: Path) -> tuple[int, list[dict]]:
    code = main(["audit", "2", "--git", str(repo.path), "--tree", str(tree), "--format", "json"])
    out, _ = capsys.readouterr()
    return code, json.loads(out)["hunks"]


def test_a_file_at_the_repository_path_is_that_file_and_no_moved_file_lands_on_it() -> None:
    installed = ["pkg/__init__.py", "pkg/core.py", "pkg/sub/a.py", "pkg/sub/b.py", "pkg/sub/c.py"]
    repo = ["pkg/__init__.py", "pkg/core.py", "pkg/a.py", "pkg/b.py"]
    moved = PathMap(installed, repo)
    assert moved.locate("pkg/a.py").installed_path == "pkg/sub/a.py"  # (a renamed package, as in a wheel)
    assert moved.locate("pkg/core.py") == Location(Placement.SHIPPED, "pkg/core.py")
    assert moved.locate("pkg/sub/c.py") == Location(Placement.SHIPPED, "pkg/sub/c.py")
    aware = PathMap(installed, repo, left=["pkg/sub/a.py", "pkg/sub/b.py", "pkg/sub/c.py"])
    assert aware.locate("pkg/a.py") == Location(Placement.FILE_MISSING, "pkg/a.py")


@pytest.mark.slow
def test_the_move_judged_against_the_tree_before_it_is_not_present(
        git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shas = _stack(git_repo)
    code, hunks = _audit(capsys, git_repo, git_repo.archive(shas["p1"], tmp_path / "before"))
    assert code == 1
    mine = [h for h in hunks if h["pr"] == 2]
    assert {h["path"] for h in mine} >= {"pkg/a.py", "pkg/b.py", "pkg/sub/c.py"}
    present = [(h["path"], h["status"], h["note"]) for h in mine if h["status"] in ("applied", "relocated")]
    assert present == []
    assert all(h["status"] == "applied" for h in hunks if h["pr"] == 1)


@pytest.mark.slow
def test_the_move_judged_against_its_own_tree_is_present(
        git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shas = _stack(git_repo)
    code, hunks = _audit(capsys, git_repo, git_repo.archive(shas["p2"], tmp_path / "after"))
    assert code == 0, [(h["path"], h["status"]) for h in hunks]
