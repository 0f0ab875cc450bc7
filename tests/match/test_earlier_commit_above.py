"""A target whose file is the file at an earlier commit of a PR stacked above the one whose hunk it
holds (that PR removed a line and a fix-up put it back, so it has no hunk of the file): the report
names that commit, and the file's hunks are not counted as present."""

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


def audit(capsys: pytest.CaptureFixture[str], repo: GitRepo, tree: Path) -> tuple[int, list[dict[str, object]]]:
    code = main(["audit", "2", "--git", str(repo.path), "--tree", str(tree), "--offline", "--format", "json"])
    return code, json.loads(capsys.readouterr().out)["hunks"]


@pytest.mark.slow
def test_a_fix_up_in_the_pr_above_names_the_commit_the_file_matches(
    git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """#1 changes line 5; #2 on it removes line 40, then puts it back: #2's tree is all present, and a
    build holding the file as the removal left it has #1's hunk partial, its note naming that commit."""
    git_repo.commit("base", {"pkg/__init__.py": "", "pkg/mod.py": text()})
    git_repo.branch("feature")
    git_repo.commit("change 5", {"pkg/mod.py": text({5: "line 5 = 'five'"})})
    git_repo.pr_ref(1)
    git_repo.commit("#2's own file", {"pkg/other.py": "x = 1\n"})
    removed = "\n".join(x for x in text({5: "line 5 = 'five'"}).splitlines() if x != "line 40 = 40") + "\n"
    slip = git_repo.commit("tidy", {"pkg/mod.py": removed})
    git_repo.commit("fix-up: line 40 back", {"pkg/mod.py": text({5: "line 5 = 'five'"})})
    git_repo.pr_ref(2)
    tree = git_repo.archive("refs/pull/2/head", tmp_path / "tree")
    code, hunks = audit(capsys, git_repo, tree)
    assert code == 0 and {h["status"] for h in hunks} == {"applied"}
    (tree / "pkg/mod.py").write_text(removed)
    code, hunks = audit(capsys, git_repo, tree)
    assert code == 1
    mod = [h for h in hunks if h["path"] == "pkg/mod.py"]
    assert [(h["pr"], h["status"]) for h in mod] == [(1, "partial")]
    assert f"commit {slip[:12]}" in str(mod[0]["note"])
