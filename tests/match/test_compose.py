"""A stack is judged as one composed change: a parent's hunk that a child rewrote is present when
the rewrite is, and says which PR rewrote it; what the child did not rewrite is still checked."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from conftest import GitRepo
from prstack.cli import main
from prstack.diff.hunks import parse_diff
from prstack.match.compose import chains_above, compose_stack, stacked_above
from prstack.models import PullRequest, Rewrite

CORE = "def a():\n    return 1\n\n\ndef b():\n    x = 2\n    return x\n\n\ndef c():\n    return 3\n"
NEW = "ONE = 1\nTWO = 2\nTHREE = 3\nFOUR = 4\nFIVE = 5\nSIX = 6\nSEVEN = 7\n"



def _stack(repo: GitRepo) -> dict[str, str]:
    """main; PR 1 changes `x = 2` and adds pkg/new.py; PR 2, on PR 1, changes the same line
    again and rewrites one line of the new file."""
    base = repo.commit("base", {"pkg/__init__.py": "", "pkg/core.py": CORE})
    repo.branch("p1")
    p1 = repo.commit("p1: x and the new table", {"pkg/core.py": CORE.replace("x = 2", "x = 20"),
                                                  "pkg/new.py": NEW})
    repo.pr_ref(1)
    repo.branch("p2")
    p2 = repo.commit("p2: x again, TWO", {"pkg/core.py": CORE.replace("x = 2", "x = 200"),
                                          "pkg/new.py": NEW.replace("TWO = 2", "TWO = 22")})
    repo.pr_ref(2)
    return {"base": base, "p1": p1, "p2": p2}


def _audit(capsys: pytest.CaptureFixture[str], repo: GitRepo, pr: int, tree: Path) -> tuple[int, list[dict]]:
    code = main(["audit", str(pr), "--git", str(repo.path), "--tree", str(tree), "--format", "json"])
    out, _ = capsys.readouterr()
    return code, json.loads(out)["hunks"]


def test_the_top_of_a_stack_whose_child_rewrote_its_parent_is_all_present(
        git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shas = _stack(git_repo)
    code, hunks = _audit(capsys, git_repo, 2, git_repo.archive(shas["p2"], tmp_path / "top"))
    assert code == 0
    parent = {h["path"]: h for h in hunks if h["pr"] == 1}
    assert set(parent) == {"pkg/core.py", "pkg/new.py"}
    for h in parent.values():
        assert h["status"] == "applied"
        assert h["superseded_by"] == {"pr": 2, "commit": shas["p2"]}
        assert "rewritten later by #2" in h["note"]
    assert all(h["superseded_by"] is None for h in hunks if h["pr"] == 2)


def test_a_dropped_line_the_child_did_not_rewrite_is_not_present(
        git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shas = _stack(git_repo)
    tree = git_repo.archive(shas["p2"], tmp_path / "top")
    new = tree / "pkg" / "new.py"
    new.write_text(new.read_text().replace("SIX = 6\n", ""))
    code, hunks = _audit(capsys, git_repo, 2, tree)
    assert code == 1
    (table,) = [h for h in hunks if h["pr"] == 1 and h["path"] == "pkg/new.py"]
    assert table["status"] not in ("applied", "relocated")
    assert table["superseded_by"] == {"pr": 2, "commit": shas["p2"]}
    (core,) = [h for h in hunks if h["pr"] == 1 and h["path"] == "pkg/core.py"]
    assert core["status"] == "applied"


def test_the_parent_alone_is_present_as_it_wrote_it_and_the_child_missing(
        git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shas = _stack(git_repo)
    code, hunks = _audit(capsys, git_repo, 2, git_repo.archive(shas["p1"], tmp_path / "parent"))
    assert code == 1
    assert {h["status"] for h in hunks if h["pr"] == 1} == {"applied"}
    assert {h["status"] for h in hunks if h["pr"] == 2} == {"missing"}


@pytest.mark.slow
def test_the_table_says_applied_rewritten_later(
        git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shas = _stack(git_repo)
    tree = git_repo.archive(shas["p2"], tmp_path / "top")
    code = main(["audit", "2", "--git", str(git_repo.path), "--tree", str(tree), "--verbose"])
    out, _ = capsys.readouterr()
    assert code == 0
    assert out.count("applied (rewritten later by #2)") == 2


def _pr(number: int, head: str, base: str) -> PullRequest:
    return PullRequest(number, head, base)


def _hunks(number: int, diff: str) -> list:
    return parse_diff(diff, number)


PARENT = """\
diff --git a/m.py b/m.py
--- a/m.py
+++ b/m.py
@@ -10,6 +10,8 @@
 c1
 c2
 c3
+p1
+p2
 c4
 c5
 c6
"""


def _child(old_start: int, body: str, new_start: int | None = None) -> str:
    lines = body.splitlines()
    old = sum(1 for x in lines if not x.startswith("+"))
    new = sum(1 for x in lines if not x.startswith("-"))
    return ("diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n"
            f"@@ -{old_start},{old} +{new_start or old_start},{new} @@\n{body}")


def test_compose_a_child_that_rewrites_an_added_line() -> None:
    child = _child(11, " c2\n c3\n p1\n-p2\n+q2\n c4\n c5\n c6\n")
    hunks = _hunks(1, PARENT) + _hunks(2, child)
    done = compose_stack([_pr(1, "h1", "b"), _pr(2, "h2", "h1")], hunks)
    assert set(done) == {0}
    c = done[0]
    assert c.by == Rewrite(2, None) and c.head == "h2"
    assert c.hunk.added == ("p1", "q2")
    assert c.hunk.old_image == _hunks(1, PARENT)[0].old_image
    assert (c.hunk.old_start, c.hunk.new_start) == (10, 10)


def test_compose_leaves_alone_a_child_that_only_adds_beside_the_hunk() -> None:
    after = _child(17, " c6\n+d1\n")  # right after the parent's last context line
    before = _child(8, " b1\n+d0\n b2\n", 8)
    hunks = _hunks(1, PARENT) + _hunks(2, before + after.split("\n", 3)[3])
    assert len(hunks) == 3
    assert compose_stack([_pr(1, "h1", "b"), _pr(2, "h2", "h1")], hunks) == {}


def test_compose_follows_line_shifts_and_a_grandchild() -> None:
    """A child that inserts lines above moves the hunk down; the grandchild's rewrite is found there."""
    child = _child(2, " a\n+n1\n+n2\n b\n")
    grandchild = _child(12, " c1\n c2\n c3\n-p1\n+r1\n p2\n", 12)
    hunks = _hunks(1, PARENT) + _hunks(2, child) + _hunks(3, grandchild)
    prs = [_pr(1, "h1", "b"), _pr(2, "h2", "h1"), _pr(3, "h3", "h2")]
    done = compose_stack(prs, hunks)
    assert set(done) == {0}
    assert done[0].by.pr == 3 and done[0].head == "h3"
    assert done[0].hunk.added == ("r1", "p2")
    assert done[0].hunk.new_start == 12


def test_compose_finds_a_rewrite_a_few_lines_off_and_skips_one_that_disagrees() -> None:
    """A child measured against its parent merged with main counts lines a little differently."""
    off = _child(14, " c2\n c3\n p1\n-p2\n+q2\n c4\n", 14)  # its lines sit three lines higher
    hunks = _hunks(1, PARENT) + _hunks(2, off)
    done = compose_stack([_pr(1, "h1", "b"), _pr(2, "h2", "h1")], hunks)
    assert done[0].hunk.added == ("p1", "q2")
    wrong = _child(11, " x\n y\n z\n-p2\n+q2\n")
    hunks = _hunks(1, PARENT) + _hunks(2, wrong)
    assert compose_stack([_pr(1, "h1", "b"), _pr(2, "h2", "h1")], hunks) == {}


def test_compose_skips_a_pr_not_built_on_the_hunks_head() -> None:
    child = _child(11, " c2\n c3\n p1\n-p2\n+q2\n c4\n c5\n c6\n")
    hunks = _hunks(1, PARENT) + _hunks(2, child)
    assert compose_stack([_pr(1, "h1", "b"), _pr(2, "h2", "elsewhere")], hunks) == {}


@pytest.mark.slow
def test_a_file_the_parent_added_and_the_child_deleted_is_not_missing_from_the_top(
        git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    git_repo.commit("base", {"pkg/__init__.py": "", "pkg/core.py": CORE})
    git_repo.branch("p1")
    git_repo.commit("p1: a helper module", {"pkg/helper.py": NEW, "pkg/core.py": CORE.replace("x = 2", "x = 20")})
    git_repo.pr_ref(1)
    git_repo.branch("p2")
    top = git_repo.commit("p2: fold the helper into core", {"pkg/helper.py": None,
                                                           "pkg/core.py": CORE.replace("x = 2", "x = 20") + NEW})
    git_repo.pr_ref(2)
    tree = git_repo.archive(top, tmp_path / "top")
    code, hunks = _audit(capsys, git_repo, 2, tree)
    assert code == 0
    (helper,) = [h for h in hunks if h["pr"] == 1 and h["path"] == "pkg/helper.py"]
    assert helper["status"] == "applied" and "gone at #2's head" in helper["note"]
    (tree / "pkg" / "core.py").write_text(CORE)  # both PRs' core.py changes dropped: caught
    code, hunks = _audit(capsys, git_repo, 2, tree)
    assert code == 1
    assert {h["pr"] for h in hunks if h["path"] == "pkg/core.py" and h["status"] != "applied"} == {1, 2}


def test_a_repeated_line_the_child_removed_elsewhere_leaves_the_parent_present(
        git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The parent adds a line the file already holds twice; the child removes one of the older
    copies: the top holds it as often as the base did, and the parent's change is still there."""
    body = "".join(f"def f{i}():\n    check()\n    return {i}\n\n\n" for i in range(2))
    git_repo.commit("base", {"pkg/__init__.py": "", "pkg/m.py": body})
    git_repo.branch("p1")
    added = body + "def f9():\n    check()\n    return 9\n"
    git_repo.commit("p1: f9", {"pkg/m.py": added})
    git_repo.pr_ref(1)
    git_repo.branch("p2")
    unchecked = added.replace("    check()\n    return 0", "    return 0", 1)
    top = git_repo.commit("p2: f0 without the check", {"pkg/m.py": unchecked})
    git_repo.pr_ref(2)
    code, hunks = _audit(capsys, git_repo, 2, git_repo.archive(top, tmp_path / "top"))
    assert code == 0, hunks
    assert {h["status"] for h in hunks} == {"applied"}


def test_cumulative_patches_of_a_stack_are_judged_as_one_composed_change(
        git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Each PR's diff as GitHub serves a fork's stack (from the fork point: the child's holds the
    parent's change too): the top's tree is all present; a dropped line is not."""
    shas = _stack(git_repo)
    patches = []
    for name in ("p1", "p2"):
        out = tmp_path / f"{name}.diff"
        out.write_bytes(subprocess.run(["git", "-C", str(git_repo.path), "diff", shas["base"], shas[name]],
                                       capture_output=True, check=True).stdout)
        patches += ["--patch", str(out)]
    tree = git_repo.archive(shas["p2"], tmp_path / "top")
    assert main(["audit", *patches, "--tree", str(tree), "--format", "json"]) == 0
    hunks = json.loads(capsys.readouterr().out)["hunks"]
    assert {h["status"] for h in hunks} == {"applied"}
    new = tree / "pkg" / "new.py"
    new.write_text(new.read_text().replace("SIX = 6\n", ""))
    assert main(["audit", *patches, "--tree", str(tree), "--format", "json"]) == 1
    hunks = json.loads(capsys.readouterr().out)["hunks"]
    assert all(h["status"] != "applied" for h in hunks if h["path"] == "pkg/new.py")


@pytest.mark.slow
def test_a_target_built_from_part_of_the_stack_holds_the_lower_prs_as_the_part_left_them(
        git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """#1 <- #2 <- #3 each rewrite the same line; installed from #2's head, #1 and #2 are present
    (#1 as #2 rewrote it) and only #3 is missing."""
    git_repo.commit("base", {"pkg/__init__.py": "", "pkg/core.py": CORE})
    heads = {}
    for n, value in ((1, "20"), (2, "200"), (3, "2000")):
        git_repo.branch(f"p{n}")
        heads[n] = git_repo.commit(f"p{n}", {"pkg/core.py": CORE.replace("x = 2\n", f"x = {value}\n")})
        git_repo.pr_ref(n)
    code, hunks = _audit(capsys, git_repo, 3, git_repo.archive(heads[2], tmp_path / "middle"))
    assert code == 1
    assert [(h["pr"], h["status"]) for h in hunks] == [(1, "applied"), (2, "applied"), (3, "missing")]
    assert hunks[0]["superseded_by"] == {"pr": 3, "commit": heads[3]}
    assert "rewritten later by #2" in hunks[0]["note"]


def test_a_rename_is_applied_only_where_the_old_name_is_gone(
        git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """git pairs identical files by chance (empty __init__.py ones): a target that still has the
    old name has not taken the rename, whatever the new name holds."""
    git_repo.commit("base", {"pkg/__init__.py": "", "pkg/old/__init__.py": "", "pkg/old/mod.py": CORE})
    git_repo.branch("p1")
    top = git_repo.commit("p1: old -> new", {"pkg/old/__init__.py": None, "pkg/old/mod.py": None,
                                            "pkg/new/__init__.py": "", "pkg/new/mod.py": CORE})
    git_repo.pr_ref(1)
    tree = git_repo.archive(top, tmp_path / "top")
    code, hunks = _audit(capsys, git_repo, 1, tree)
    assert code == 0 and {h["status"] for h in hunks} == {"applied"}
    for rel in ("pkg/old/__init__.py", "pkg/old/mod.py"):
        (tree / rel).parent.mkdir(exist_ok=True)
        (tree / rel).write_text("" if rel.endswith("__init__.py") else CORE)
    code, hunks = _audit(capsys, git_repo, 1, tree)
    assert code == 1
    assert {h["status"] for h in hunks if h["change"] == "renamed"} == {"missing"}


def _patches(repo: GitRepo, base: str, heads: list[str], into: Path) -> list[str]:
    """Each head's diff from `base` (a fork's stacked PRs as GitHub serves them), as --patch options."""
    out = []
    for n, head in enumerate(heads, 1):
        path = into / f"{n}.diff"
        path.write_bytes(subprocess.run(["git", "-C", str(repo.path), "diff", base, head],
                                        capture_output=True, check=True).stdout)
        out += ["--patch", str(path)]
    return out


def test_cumulative_patches_where_the_child_undid_a_parents_change_are_present_on_the_top(
        git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The child takes back a line its parent added, and changes another place of the file: the
    child's diff from the fork point no longer shows the parent's line, and starts from the same
    file. It carries the parent's new table (a cumulative patch, not a sibling's): the stack
    leaves the old lines there, so the top holds the parent's change as undone."""
    base = git_repo.commit("base", {"pkg/__init__.py": "", "pkg/core.py": CORE})
    git_repo.branch("p1")
    p1 = git_repo.commit("p1: a guard in b, a table", {
        "pkg/core.py": CORE.replace("    x = 2\n", "    x = 2\n    assert x\n"), "pkg/new.py": NEW})
    git_repo.branch("p2")
    p2 = git_repo.commit("p2: no guard, c returns 4", {"pkg/core.py": CORE.replace("return 3", "return 4")})
    tree = git_repo.archive(p2, tmp_path / "top")
    patches = _patches(git_repo, base, [p1, p2], tmp_path)
    assert main(["audit", *patches, "--tree", str(tree), "--format", "json"]) == 0
    hunks = json.loads(capsys.readouterr().out)["hunks"]
    guard = [h for h in hunks if h["pr"] == 1 and h["path"] == "pkg/core.py"]
    assert [(h["status"], h["superseded_by"]) for h in guard] == [("applied", {"pr": 2, "commit": None})]
    # the parent's tree has the guard but not the child's change: the child is missing there
    assert main(["audit", *patches, "--tree", str(git_repo.archive(p1, tmp_path / "p1")), "--format", "json"]) == 1
    hunks = json.loads(capsys.readouterr().out)["hunks"]
    assert [h["status"] for h in hunks if h["pr"] == 2 and h["path"] == "pkg/core.py"] == ["missing"]


@pytest.mark.slow
def test_a_change_of_the_final_newline_alone_is_applied_where_its_lines_are(
        git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A parent drops the file's final newline and the child puts it back: the hunk's two images
    are the same lines, so the top holding them holds the stack."""
    base = git_repo.commit("base", {"pkg/__init__.py": "", "pkg/core.py": CORE})
    git_repo.branch("p1")
    p1 = git_repo.commit("p1: no final newline", {"pkg/core.py": CORE.rstrip("\n")})
    git_repo.pr_ref(1)
    git_repo.branch("p2")
    p2 = git_repo.commit("p2: final newline, a returns 5",
                         {"pkg/core.py": CORE.replace("return 1", "return 5")})
    git_repo.pr_ref(2)
    tree = git_repo.archive(p2, tmp_path / "top")
    patches = _patches(git_repo, base, [p1, p2], tmp_path)
    assert main(["audit", *patches, "--tree", str(tree), "--format", "json"]) == 0
    hunks = json.loads(capsys.readouterr().out)["hunks"]
    assert [h["status"] for h in hunks] == ["applied", "applied"]
    code, hunks = _audit(capsys, git_repo, 2, tree)
    assert code == 0 and {h["status"] for h in hunks} == {"applied"}
    # without the child's own change the top is not there
    core = tree / "pkg" / "core.py"
    core.write_text(core.read_text().replace("return 5", "return 1"))
    code, hunks = _audit(capsys, git_repo, 2, tree)
    assert code == 1 and sorted(h["status"] for h in hunks if h["pr"] == 2) == ["applied", "missing"]


def test_patches_that_move_most_of_a_folder_leave_the_files_still_in_it_at_their_place(
        git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A PR moves pkg/old/{a,b,c}.py to pkg/new/ and edits pkg/old/config.py, while pkg/new has a
    config.py of its own: the moves are no renamed folder, and the edit is judged in pkg/old."""
    files = {"pkg/__init__.py": "", "pkg/old/__init__.py": "", "pkg/new/__init__.py": "",
             "pkg/new/config.py": "NEW = True\n", "pkg/old/config.py": CORE}
    files.update({f"pkg/old/{name}.py": CORE.replace("return 1", f"return '{name}'") for name in "abc"})
    base = git_repo.commit("base", files)
    git_repo.branch("p1")
    moved: dict[str, str | bytes | None] = {f"pkg/old/{name}.py": None for name in "abc"}
    moved.update({f"pkg/new/{name}.py": files[f"pkg/old/{name}.py"] for name in "abc"})
    moved["pkg/old/config.py"] = CORE.replace("x = 2", "x = 3")
    p1 = git_repo.commit("p1: move a, b, c", moved)
    tree = git_repo.archive(p1, tmp_path / "top")
    patches = _patches(git_repo, base, [p1], tmp_path)
    assert main(["audit", *patches, "--tree", str(tree), "--format", "json"]) == 0
    hunks = json.loads(capsys.readouterr().out)["hunks"]
    (edit,) = [h for h in hunks if h["path"] == "pkg/old/config.py"]
    assert (edit["installed_path"], edit["status"]) == ("pkg/old/config.py", "applied")
    assert {h["status"] for h in hunks} == {"applied"}
    # the old names back in place: the moves are not done
    for name in "abc":
        (tree / f"pkg/old/{name}.py").write_text(files[f"pkg/old/{name}.py"])
    assert main(["audit", *patches, "--tree", str(tree), "--format", "json"]) == 1
    hunks = json.loads(capsys.readouterr().out)["hunks"]
    assert {h["status"] for h in hunks if h["change"] == "renamed"} == {"missing"}


def test_patches_whose_child_deletes_a_file_the_parent_changed_leave_no_file_there(
        git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Patches name no heads to read a file from: the child's patch deleting the file tells that
    the stack leaves none, so the top lacking it holds the parent's change as the stack left it."""
    base = git_repo.commit("base", {"pkg/__init__.py": "", "pkg/core.py": CORE, "pkg/old.py": NEW})
    git_repo.branch("p1")
    p1 = git_repo.commit("p1: SIX", {"pkg/old.py": NEW.replace("SIX = 6", "SIX = 66")})
    git_repo.branch("p2")
    p2 = git_repo.commit("p2: no old.py, c returns 4", {"pkg/old.py": None,
                                                         "pkg/core.py": CORE.replace("return 3", "return 4")})
    patches = _patches(git_repo, base, [p1, p2], tmp_path)
    tree = git_repo.archive(p2, tmp_path / "top")
    assert main(["audit", *patches, "--tree", str(tree), "--format", "json"]) == 0
    hunks = json.loads(capsys.readouterr().out)["hunks"]
    (six,) = [h for h in hunks if h["pr"] == 1]
    assert (six["status"], six["superseded_by"]) == ("applied", {"pr": 2, "commit": None})
    assert "gone at #2" in six["note"]
    # without the child's deletion the file is judged as it is: the parent's line is not there
    (tree / "pkg" / "old.py").write_text(NEW)
    assert main(["audit", *patches, "--tree", str(tree), "--format", "json"]) == 1
    hunks = json.loads(capsys.readouterr().out)["hunks"]
    assert [h["status"] for h in hunks if h["pr"] == 1] == ["missing"]


def test_cumulative_patches_whose_child_keeps_part_of_a_parents_hunk(
        git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The parent changes two lines six apart (one hunk); the child takes one change back. The
    child's diff from the fork point has a hunk for the kept change alone, which holds only part
    of the parent's lines: the two, from the same file, compose over all of them."""
    lines = [f"V{n} = {n}\n" for n in range(1, 30)]
    text = "".join(lines)
    base = git_repo.commit("base", {"pkg/__init__.py": "", "pkg/table.py": text})
    git_repo.branch("p1")
    p1 = git_repo.commit("p1: V10, V16", {"pkg/table.py": text.replace("V10 = 10", "V10 = 100")
                                          .replace("V16 = 16", "V16 = 160")})
    git_repo.branch("p2")
    p2 = git_repo.commit("p2: V16 back", {"pkg/table.py": text.replace("V10 = 10", "V10 = 100")})
    patches = _patches(git_repo, base, [p1, p2], tmp_path)
    tree = git_repo.archive(p2, tmp_path / "top")
    assert main(["audit", *patches, "--tree", str(tree), "--format", "json"]) == 0
    hunks = json.loads(capsys.readouterr().out)["hunks"]
    assert [(h["pr"], h["status"], h["superseded_by"]) for h in hunks] == [
        (1, "applied", {"pr": 2, "commit": None}), (2, "applied", None)]
    table = tree / "pkg" / "table.py"
    table.write_text(text)
    assert main(["audit", *patches, "--tree", str(tree), "--format", "json"]) == 1
    hunks = json.loads(capsys.readouterr().out)["hunks"]
    assert all(h["status"] != "applied" for h in hunks)


@pytest.mark.slow
def test_cumulative_patches_whose_child_takes_back_a_whole_file(
        git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The child puts a file the parent changed back as it was: its diff from the fork point no
    longer names the file. With the clone, history says the child took the change back: the top
    holds it undone. The two diffs alone have the shape of two sibling patches sharing one file
    (the child names one of the parent's two files): nothing in them says the second carries the
    first, so the parent's change of the other file is missing, as the target holds it."""
    base = git_repo.commit("base", {"pkg/__init__.py": "", "pkg/core.py": CORE, "pkg/table.py": NEW})
    git_repo.branch("p1")
    p1 = git_repo.commit("p1: SIX, c", {"pkg/table.py": NEW.replace("SIX = 6", "SIX = 66"),
                                        "pkg/core.py": CORE.replace("return 3", "return 4")})
    git_repo.branch("p2")
    p2 = git_repo.commit("p2: SIX back, a", {"pkg/table.py": NEW, "pkg/core.py": CORE.replace(
        "return 3", "return 4").replace("return 1", "return 5")})
    git_repo.pr_ref(2)
    git_repo.pr_ref(1, p1)
    tree = git_repo.archive(p2, tmp_path / "top")
    assert main(["audit", "2", "--git", str(git_repo.path), "--tree", str(tree), "--format", "json"]) == 0
    (six,) = [h for h in json.loads(capsys.readouterr().out)["hunks"] if h["path"] == "pkg/table.py" and h["pr"] == 1]
    assert (six["status"], six["superseded_by"]) == ("applied", {"pr": 2, "commit": p2})
    patches = _patches(git_repo, base, [p1, p2], tmp_path)
    assert main(["audit", *patches, "--tree", str(tree), "--format", "json"]) == 1
    (six,) = [h for h in json.loads(capsys.readouterr().out)["hunks"] if h["path"] == "pkg/table.py"]
    assert (six["pr"], six["status"], six["superseded_by"]) == (1, "missing", None)
    # the parent's tree holds SIX = 66: the child is not there
    assert main(["audit", *patches, "--tree", str(git_repo.archive(p1, tmp_path / "p1")), "--format", "json"]) == 1


def test_a_symbolic_link_is_unverifiable_by_design_not_compared_by_what_it_points_to(
        git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A PR adding AGENTS.md as a link to GUIDE.md: its diff's text is the link's target path,
    while reading the file in the target follows the link. The top holds the link: exit 0."""
    git_repo.commit("base", {"pkg/__init__.py": "", "GUIDE.md": "# guide\n\nrun the tests\n"})
    git_repo.branch("p1")
    (git_repo.path / "AGENTS.md").symlink_to("GUIDE.md")
    top = git_repo.commit("p1: AGENTS.md, a constant", {"pkg/__init__.py": "X = 1\n"})
    git_repo.pr_ref(1)
    tree = git_repo.archive(top, tmp_path / "top")
    assert (tree / "AGENTS.md").is_symlink()
    code, hunks = _audit(capsys, git_repo, 1, tree)
    assert code == 0
    by_path = {h["path"]: h for h in hunks}
    assert (by_path["AGENTS.md"]["status"], by_path["AGENTS.md"]["unverifiable"]) == ("unverifiable", "by-design")
    assert by_path["pkg/__init__.py"]["status"] == "applied"


@pytest.mark.slow
def test_a_parent_the_child_holds_as_a_copy_that_main_rewrote_is_present_on_the_top(
        git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The parent was merged upstream by rebase, and main rewrote its line later. The child, not
    built on the parent's head, cherry-picked the parent's commit and then merged main: no PR's
    own change holds the rewrite, yet the top's file is the child's head's, which holds the
    parent's change as its history left it."""
    git_repo.commit("base", {"pkg/__init__.py": "", "pkg/core.py": CORE})
    git_repo.branch("p1")
    p1 = git_repo.commit("p1: x is 20", {"pkg/core.py": CORE.replace("x = 2", "x = 20")})
    git_repo.pr_ref(1)
    git_repo.branch("p2", "main")
    git_repo.commit("p2: a returns 5", {"pkg/core.py": CORE.replace("return 1", "return 5")})
    git_repo.git("cherry-pick", p1)
    git_repo.branch("main", "main")
    git_repo.git("cherry-pick", p1)
    git_repo.commit("main: x is 200", {"pkg/core.py": CORE.replace("x = 2", "x = 200")})
    git_repo.branch("p2", "p2")
    git_repo.git("-c", "commit.gpgsign=false", "merge", "--quiet", "-X", "theirs", "-m", "Merge main", "main")
    top = git_repo.commit("p2: c returns 4", {"pkg/core.py": CORE.replace("x = 2", "x = 200")
                                             .replace("return 3", "return 4").replace("return 1", "return 5")})
    git_repo.pr_ref(2)
    tree = git_repo.archive(top, tmp_path / "top")
    code, hunks = _audit(capsys, git_repo, 2, tree)
    assert code == 0, hunks
    (parent,) = [h for h in hunks if h["pr"] == 1]
    assert parent["status"] == "applied" and "#2" in parent["note"]
    # the child's own change reverted in the file: neither holds
    (tree / "pkg" / "core.py").write_text(CORE.replace("x = 2", "x = 200").replace("return 1", "return 5"))
    code, hunks = _audit(capsys, git_repo, 2, tree)
    assert code == 1 and any(h["status"] != "applied" for h in hunks if h["pr"] == 2)


def test_the_prs_above_a_pr_are_every_pr_built_on_it_the_top_first() -> None:
    """#2 holds a copy of #1's commit but is not built on #1's head; #3 is built on #2's head, #4
    on #1's head: all of them hold #1's change, though only #4 carries its lines by position."""
    one = PullRequest(number=1, head_sha="h1", base_sha="b")
    two = PullRequest(number=2, head_sha="h2", base_sha="b2", depends_on=(1,))
    three = PullRequest(number=3, head_sha="h3", base_sha="h2", depends_on=(2,))
    four = PullRequest(number=4, head_sha="h4", base_sha="h1", depends_on=(1,))
    # built on #4's head, though its parent by the graph is a PR outside the stack
    five = PullRequest(number=5, head_sha="h5", base_sha="h4", depends_on=(99,))
    prs = [one, two, three, four, five]
    assert [pr.number for pr in stacked_above(prs)[1]] == [5, 4, 3, 2]
    assert [pr.number for pr in stacked_above(prs)[2]] == [3]
    assert [pr.number for pr in stacked_above(prs)[4]] == [5]
    assert stacked_above(prs)[3] == () == stacked_above(prs)[5]
    assert [pr.number for pr in chains_above(prs)[1]] == [4, 5]


def test_cumulative_patches_from_different_bases_judge_the_parent_by_the_file_the_child_leaves(
        git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The child merged main after its parent forked, then took back the parent's line: its diff
    from its newer fork point shares no blob with the parent's, and shows nothing where the
    parent's line was. The child's diff carries the parent's new table (a cumulative patch): where
    the target's file is the one the child's diff names for its head, the file is as the stack
    leaves it, and the parent's change is present as the child rewrote it. A target that differs
    from that file gets no such pass."""
    base = git_repo.commit("base", {"pkg/__init__.py": "", "pkg/core.py": CORE})
    git_repo.branch("p1")
    p1 = git_repo.commit("p1: x, a table", {"pkg/core.py": CORE.replace("x = 2", "x = 20"), "pkg/new.py": NEW})
    git_repo.branch("main", base)
    m1 = git_repo.commit("main: c", {"pkg/core.py": CORE.replace("return 3", "return 30")})
    git_repo.branch("p2", p1)
    git_repo.git("-c", "commit.gpgsign=false", "merge", "--quiet", "--no-edit", "main")
    p2 = git_repo.commit("p2: x back, a returns 10", {"pkg/core.py": CORE.replace("return 3", "return 30")
                                                      .replace("return 1", "return 10")})
    patches = []
    for n, (start, head) in enumerate([(base, p1), (m1, p2)], 1):
        path = tmp_path / f"{n}.diff"
        path.write_bytes(subprocess.run(["git", "-C", str(git_repo.path), "diff", start, head],
                                        capture_output=True, check=True).stdout)
        patches += ["--patch", str(path)]
    tree = git_repo.archive(p2, tmp_path / "top")
    assert main(["audit", *patches, "--tree", str(tree), "--format", "json"]) == 0
    hunks = json.loads(capsys.readouterr().out)["hunks"]
    (x,) = [h for h in hunks if h["pr"] == 1 and h["path"] == "pkg/core.py"]
    assert (x["status"], x["superseded_by"]) == ("applied", {"pr": 2, "commit": None})
    assert "file identical to its head" in x["note"]
    # one byte off the child's file: the parent's line is judged as it is, and is not there
    core = tree / "pkg" / "core.py"
    core.write_text(core.read_text() + "# local\n")
    assert main(["audit", *patches, "--tree", str(tree), "--format", "json"]) == 1
    hunks = json.loads(capsys.readouterr().out)["hunks"]
    (x,) = [h for h in hunks if h["pr"] == 1 and h["path"] == "pkg/core.py"]
    assert x["status"] == "missing"


def test_sibling_patches_from_one_base_say_nothing_of_each_others_change(
        git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two carried patches from the same release, each its own change of one file (no stack):
    a target built with the second alone holds the file the second's diff names for its head, and
    the first patch's change is still missing."""
    base = git_repo.commit("base", {"pkg/__init__.py": "", "pkg/core.py": CORE})
    git_repo.branch("a")
    a = git_repo.commit("a: x", {"pkg/core.py": CORE.replace("x = 2", "x = 20")})
    git_repo.branch("b", base)
    b = git_repo.commit("b: c", {"pkg/core.py": CORE.replace("return 3", "return 30")})
    patches = _patches(git_repo, base, [a, b], tmp_path)
    tree = git_repo.archive(b, tmp_path / "b-only")
    assert main(["audit", *patches, "--tree", str(tree), "--format", "json"]) == 1
    hunks = json.loads(capsys.readouterr().out)["hunks"]
    assert {h["pr"]: h["status"] for h in hunks} == {1: "missing", 2: "applied"}


def _five_files(repo: GitRepo) -> dict[str, str]:
    """PR 1 changes three modules, pkg/util.py, and adds pkg/extra.py; PR 2, on it, keeps the three
    modules' changes (and adds to one), takes back pkg/util.py's and deletes pkg/extra.py."""
    mods = {f"pkg/{m}.py": CORE for m in ("core", "api", "cli", "util")}
    base = repo.commit("base", {"pkg/__init__.py": "", **mods})
    repo.branch("p1")
    changed = {path: CORE.replace("    x = 2\n", "    x = 2\n    assert x > 1, 'x'\n") for path in mods}
    p1 = repo.commit("p1", {**changed, "pkg/extra.py": NEW})
    repo.branch("p2")
    p2 = repo.commit("p2", {"pkg/util.py": CORE, "pkg/extra.py": None,
                            "pkg/core.py": changed["pkg/core.py"].replace("return 3", "return 30")})
    return {"base": base, "p1": p1, "p2": p2}


def test_a_cumulative_patch_that_leaves_out_a_lower_patchs_files_took_their_change_back(
        git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The child's diff from the fork point carries most of the parent's files and names neither
    the parent's util.py change nor its new file: the stack took them back. On the child's head
    they are present as the child leaves them; where the child is not there, nothing is."""
    shas = _five_files(git_repo)
    patches = _patches(git_repo, shas["base"], [shas["p1"], shas["p2"]], tmp_path)
    top = git_repo.archive(shas["p2"], tmp_path / "top")
    assert main(["audit", *patches, "--tree", str(top), "--format", "json"]) == 0
    hunks = json.loads(capsys.readouterr().out)["hunks"]
    left = {h["path"]: h for h in hunks if h["pr"] == 1 and h["path"] in ("pkg/util.py", "pkg/extra.py")}
    assert {path: (h["status"], h["superseded_by"]) for path, h in left.items()} == {
        "pkg/util.py": ("applied", {"pr": 2, "commit": None}), "pkg/extra.py": ("applied", {"pr": 2, "commit": None})}
    for name, rev, want in (("base", shas["base"], {1: {"missing", "file-missing"}, 2: {"missing"}}),
                            ("p1", shas["p1"], {1: {"applied"}, 2: {"applied", "partial"}})):
        assert main(["audit", *patches, "--tree", str(git_repo.archive(rev, tmp_path / name)),
                     "--format", "json"]) == 1
        got: dict[int, set[str]] = {}
        for h in json.loads(capsys.readouterr().out)["hunks"]:
            got.setdefault(h["pr"], set()).add(h["status"])
        assert got == want, name


def test_a_sibling_patch_sharing_one_file_and_its_lines_does_not_vouch_for_the_others_files(
        git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two patches from one release both add the same guard to core.py; the first also changes
    api.py. A target with the second alone lacks the first's api.py change: missing."""
    guard = CORE.replace("    x = 2\n", "    x = 2\n    assert x > 1, 'x'\n    assert x < 9, 'x'\n    x += 0\n")
    base = git_repo.commit("base", {"pkg/__init__.py": "", "pkg/core.py": CORE, "pkg/api.py": CORE})
    git_repo.branch("a")
    a = git_repo.commit("a", {"pkg/core.py": guard, "pkg/api.py": CORE.replace("return 1", "return 10")})
    git_repo.branch("b", base)
    b = git_repo.commit("b", {"pkg/core.py": guard.replace("return 3", "return 30")})
    patches = _patches(git_repo, base, [a, b], tmp_path)
    assert main(["audit", *patches, "--tree", str(git_repo.archive(b, tmp_path / "b")), "--format", "json"]) == 1
    api = [h for h in json.loads(capsys.readouterr().out)["hunks"] if h["path"] == "pkg/api.py"]
    assert [(h["pr"], h["status"]) for h in api] == [(1, "missing")]


@pytest.mark.slow
def test_a_file_one_pr_deletes_and_the_pr_on_it_adds_back_is_as_the_later_one_leaves_it(
        git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """PR 1 deletes a.py and b.py; PR 2, on it, brings a.py back as it was and b.py edited. The top's
    tree holds both files: PR 1's deletions are present as PR 2 rewrote them. The base's tree holds
    a.py as the stack leaves it, not b.py: PR 1's deletion of b.py is missing there."""
    lines = "".join(f"a = {i}\n" for i in range(30))
    base = git_repo.commit("base", {"pkg/__init__.py": "", "pkg/a.py": lines, "pkg/b.py": lines.replace("a =", "b =")})
    git_repo.branch("p1")
    git_repo.commit("remove a and b", {"pkg/a.py": None, "pkg/b.py": None})
    git_repo.pr_ref(1)
    git_repo.branch("p2")
    top = git_repo.commit("bring them back", {"pkg/a.py": lines,
                                              "pkg/b.py": lines.replace("a =", "b =").replace("b = 7\n", "b = 700\n")})
    git_repo.pr_ref(2)

    def audit(rev: str, name: str) -> tuple[int, dict[tuple[int, str], tuple[str, object]]]:
        code = main(["audit", "2", "--git", str(git_repo.path), "--tree", str(git_repo.archive(rev, tmp_path / name)),
                     "--format", "json"])
        hunks = json.loads(capsys.readouterr().out)["hunks"]
        return code, {(h["pr"], h["path"]): (h["status"], h["superseded_by"]) for h in hunks}

    code, got = audit(top, "top")
    assert code == 0
    assert got[(1, "pkg/a.py")] == got[(1, "pkg/b.py")] == ("applied", {"pr": 2, "commit": top})
    code, got = audit(base, "base")
    assert code == 1
    assert got[(1, "pkg/a.py")] == ("applied", {"pr": 2, "commit": top})
    assert got[(1, "pkg/b.py")] == ("missing", None)


def test_the_same_stack_asked_again_gets_the_same_answer_and_another_stack_its_own() -> None:
    """The next target of a run asks for the very same PRs and hunks: the answer is the first one's
    (a copy: changing it changes nothing kept); another stack, even asked right after, is composed."""
    child = _child(11, " c2\n c3\n p1\n-p2\n+q2\n c4\n c5\n c6\n")
    prs, hunks = [_pr(1, "h1", "b"), _pr(2, "h2", "h1")], _hunks(1, PARENT) + _hunks(2, child)
    first = compose_stack(prs, hunks)
    first.clear()
    again = compose_stack(prs, hunks)
    assert set(again) == {0} and again[0].hunk.added == ("p1", "q2")
    elsewhere = [_pr(1, "h1", "b"), _pr(2, "h2", "elsewhere")]
    assert compose_stack(elsewhere, hunks) == {}
    other = _hunks(1, PARENT) + _hunks(2, _child(11, " c2\n c3\n p1\n-p2\n+r2\n c4\n c5\n c6\n"))
    assert compose_stack(prs, other)[0].hunk.added == ("p1", "r2")
