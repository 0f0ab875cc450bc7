"""A child that merged the default branch, in a clone lacking the blobs git would need to merge that
branch into the child's start: the child's own change is still measured from its parent merged with
the default branch (path by path), so the files the default branch brought are not its own."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from conftest import GitRepo
from prstack.cli import main


def text(name: str, edits: dict[int, str] | None = None) -> str:
    rows = [f"{name} {i}" for i in range(1, 41)]
    for at, new in (edits or {}).items():
        rows[at - 1] = new
    return "\n".join(rows) + "\n"


@pytest.mark.slow
def test_files_main_brought_are_not_the_child_s_own_in_a_clone_lacking_blobs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """#1 squash-landed, main then moved pkg/c.py and edited pkg/b.py (which #1 also edits), #2 merged
    main; in a partial clone whose remote is gone, #2's hunks are its own files alone (pkg/a.py, and
    pkg/b.py, which both sides edited), none for pkg/c.py or pkg/c2.py."""
    up = GitRepo(tmp_path / "up")
    up.commit("base", {"pkg/a.py": text("a"), "pkg/b.py": text("b"), "pkg/c.py": text("c")})
    up.branch("feature")
    up.commit("P1", {"pkg/b.py": text("b", {5: "b 5 parent"})})
    up.pr_ref(1)
    up.commit("C1", {"pkg/a.py": text("a", {20: "a 20 child"}),
                     "pkg/b.py": text("b", {5: "b 5 parent", 38: "b 38 child"})})
    up.git("checkout", "-q", "main")
    up.commit("P1 (#1)", {"pkg/b.py": text("b", {5: "b 5 parent"})})
    up.commit("main goes on", {"pkg/c.py": None, "pkg/c2.py": text("c", {30: "c 30 main"}),
                               "pkg/b.py": text("b", {5: "b 5 parent", 33: "b 33 main"})})
    up.git("checkout", "-q", "feature")
    up.git("merge", "-q", "--no-edit", "main")
    up.commit("C2", {"pkg/a.py": text("a", {20: "a 20 child", 25: "a 25 child"})})
    up.pr_ref(2)
    up.git("config", "uploadpack.allowFilter", "true")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--bare", "--filter=blob:none", f"file://{up.path}", str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "fetch", "-q", "--filter=blob:none", "origin",
                    "+refs/pull/*/head:refs/pull/*/head"], check=True)
    tree = up.archive("refs/pull/2/head", tmp_path / "tree")
    up.path.rename(tmp_path / "away")
    code = main(["audit", "2", "--git", str(clone), "--tree", str(tree), "--offline", "--format", "json"])
    hunks = json.loads(capsys.readouterr().out)["hunks"]
    assert code == 1
    assert sorted({(h["pr"], h["path"]) for h in hunks}) == [(1, "pkg/b.py"), (2, "pkg/a.py"), (2, "pkg/b.py")]
    assert {h["unverifiable"] for h in hunks} == {"not-read"}
