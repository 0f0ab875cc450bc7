"""A child PR whose branch merged the default branch after its parent: its own change starts at
the parent's head merged with those default-branch commits, also where that merge conflicted, so
its edits of lines the default branch brought in are its own hunks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import GitRepo
from helpers.lines import text
from prstack.cli import main
from prstack.sources.git.changes import load_changes
from prstack.sources.git.repo import GitClone


def child_that_merged_main(repo: GitRepo, resolved: str) -> None:
    """#1 adds `import sys` atop pkg/a.py; main adds `import os` there (the merge of main into the
    child conflicts, resolved as `resolved`); the child #2 then drops main's `import os` and edits
    line 20."""
    repo.commit("base", {"pkg/a.py": text("a"), "pkg/b.py": text("b")})
    repo.branch("parent")
    repo.commit("P1", {"pkg/a.py": "import sys\n" + text("a"), "pkg/b.py": text("b", {5: "b 5 parent"})})
    repo.pr_ref(1)
    repo.branch("main", "main")
    repo.commit("M1 import os", {"pkg/a.py": "import os\n" + text("a")})
    repo.branch("child", "parent")
    repo.git("merge", "--quiet", "--no-edit", "-s", "ours", "main")  # the conflict, resolved by hand:
    repo.write({"pkg/a.py": resolved + text("a")})
    repo.git("add", "-A")
    repo.git("-c", "commit.gpgsign=false", "commit", "--quiet", "--amend", "--no-edit")
    repo.commit("C1 drop import os", {"pkg/a.py": "import sys\n" + text("a", {20: "a 20 child"})})
    repo.pr_ref(2)


@pytest.mark.parametrize("resolved", ["import os\nimport sys\n", "import sys\nimport os\n"])
@pytest.mark.slow
def test_child_drops_a_line_main_brought_in_as_its_own_hunk(git_repo: GitRepo, resolved: str) -> None:
    """The child's removal of main's line is a hunk of the child, in the order the merge left it."""
    child_that_merged_main(git_repo, resolved)
    changes = load_changes(GitClone(git_repo.path), [2])
    removed = [line for h in changes.hunks_of(2) for kind, line in h.lines if kind == "-"]
    assert "import os" in removed
    assert not any(line == "import sys" for h in changes.hunks_of(2) for _, line in h.lines if _ != " ")


@pytest.mark.parametrize("resolved", ["import os\nimport sys\n", "import sys\nimport os\n"])
@pytest.mark.slow
def test_a_build_that_kept_main_s_line_is_missing_the_child_s_change(
    git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str], resolved: str
) -> None:
    """The top's own tree is all present; the same tree still holding the line the child removed
    is exit 1 with the child's hunk of that file missing (and nothing of another file)."""
    child_that_merged_main(git_repo, resolved)
    tree = git_repo.archive("HEAD", tmp_path / "tree")
    argv = ["audit", "2", "--git", str(git_repo.path), "--tree", str(tree), "--offline", "--format", "json"]
    assert main(argv) == 0, capsys.readouterr()
    capsys.readouterr()
    (tree / "pkg/a.py").write_text(resolved + text("a", {20: "a 20 child"}))
    assert main(argv) == 1
    report = json.loads(capsys.readouterr().out)
    missing = [(h["pr"], h["path"], h["old_start"]) for h in report["hunks"]
               if h["status"] not in ("applied", "relocated")]
    assert (2, "pkg/a.py", 1) in missing
    assert {path for _, path, _ in missing} == {"pkg/a.py"}


def test_a_merge_after_the_childs_own_edits_gives_the_start_without_them(
    git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Where the child edited the file before it merged main, the start is that merge's
    resolution less the child's own edit: main's line the child dropped later, and its edit before
    the merge, are both its hunks; #1's line is not."""
    git_repo.commit("base", {"pkg/a.py": text("a")})
    git_repo.branch("parent")
    git_repo.commit("P1", {"pkg/a.py": "import sys\n" + text("a")})
    git_repo.pr_ref(1)
    git_repo.branch("main", "main")
    git_repo.commit("M1 import os", {"pkg/a.py": "import os\n" + text("a")})
    git_repo.branch("child", "parent")
    git_repo.commit("C0 edit", {"pkg/a.py": "import sys\n" + text("a", {30: "a 30 child"})})
    git_repo.git("merge", "--quiet", "--no-edit", "-s", "ours", "main")
    git_repo.write({"pkg/a.py": "import os\nimport sys\n" + text("a", {30: "a 30 child"})})
    git_repo.git("add", "-A")
    git_repo.git("-c", "commit.gpgsign=false", "commit", "--quiet", "--amend", "--no-edit")
    git_repo.commit("C1 drop import os", {"pkg/a.py": "import sys\n" + text("a", {20: "a 20 child", 30: "a 30 child"})})
    git_repo.pr_ref(2)
    changes = load_changes(GitClone(git_repo.path), [2])
    lines = {(kind, line) for h in changes.hunks_of(2) for kind, line in h.lines if kind != " "}
    assert {("-", "import os"), ("+", "a 20 child"), ("+", "a 30 child")} <= lines
    assert ("+", "import sys") not in lines
