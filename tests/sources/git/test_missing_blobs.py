"""Clones that lack blobs (a `--filter=blob:none` partial clone, a mirror that dropped files): the
missing blobs are fetched in one batch from a promisor remote that answers; otherwise the files
whose blobs are missing are unverifiable and not read (exit 1), the rest is judged, and one line
names the files and the command that fetches their blobs."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import GitRepo
from helpers.lines import text
from prstack.cli import main
from prstack.sources.git.changes import _looked_at, _OwnRange
from prstack.sources.git.missing import HistoryWalk, find_missing
from prstack.sources.git.objects import Objects
from prstack.sources.git.patchids import Patches
from prstack.sources.git.releases import blobs_at
from prstack.sources.git.repo import GitClone
from prstack.sources.git.runner import run_git


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def blobless_clone(tmp_path: Path) -> tuple[GitRepo, Path, Path]:
    """Upstream with #1 (pkg/b.py) and #2 on it (pkg/a.py, pkg/c.py); a bare `--filter=blob:none`
    clone of it holding the PR refs and no blob yet; the tree of #2's head."""
    up = GitRepo(tmp_path / "up")
    up.commit("base", {"pkg/a.py": text("a"), "pkg/b.py": text("b"), "pkg/c.py": text("c")})
    up.branch("feature")
    up.commit("P1", {"pkg/b.py": text("b", {5: "b 5 parent"})})
    up.pr_ref(1)
    up.commit("C1", {"pkg/a.py": text("a", {20: "a 20 child"}), "pkg/c.py": text("c", {9: "c 9 child"})})
    up.pr_ref(2)
    up.branch("main", "main")
    up.git("config", "uploadpack.allowFilter", "true")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--bare", "--filter=blob:none", f"file://{up.path}", str(clone)], check=True)
    git(clone, "fetch", "-q", "--filter=blob:none", "origin", "+refs/pull/*/head:refs/pull/*/head")
    return up, clone, up.archive("refs/pull/2/head", tmp_path / "tree")


def missing_in(clone: Path) -> set[str]:
    out = git(clone, "rev-list", "--objects", "--all", "--missing=print")
    return {line[1:] for line in out.splitlines() if line.startswith("?")}


def audit(capsys: pytest.CaptureFixture[str], clone: Path, tree: Path, fmt: str = "json") -> tuple[int, str]:
    code = main(["audit", "2", "--git", str(clone), "--tree", str(tree), "--offline", "--format", fmt])
    return code, capsys.readouterr().out


@pytest.mark.slow
def test_missing_blobs_come_from_the_promisor_remote_in_one_fetch(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A partial clone whose remote answers: exit 0, every blob the audit reads fetched by a
    single fetch (one new pack), not one lazy fetch per blob."""
    _, clone, tree = blobless_clone(tmp_path)
    packs = set((clone / "objects/pack").glob("*.pack"))
    code, out = audit(capsys, clone, tree)
    assert code == 0, out
    assert len(set((clone / "objects/pack").glob("*.pack")) - packs) == 1


@pytest.mark.slow
def test_without_the_blobs_those_files_are_not_read_and_the_rest_is_judged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The remote gone and pkg/b.py's blobs already at hand: #1's file is judged (applied), #2's
    two files are unverifiable, not read (exit 1); the table's one line names them and a command
    that, once the remote is back, fetches what the audit needs; the closing sentence says #2's
    hunks were not read, not that they are missing."""
    up, clone, tree = blobless_clone(tmp_path)
    git(clone, "cat-file", "-p", "refs/pull/1/head:pkg/b.py")  # (fetched now, lazily)
    git(clone, "cat-file", "-p", "refs/pull/1/head~1:pkg/b.py")
    away = up.path.rename(tmp_path / "away")
    code, out = audit(capsys, clone, tree)
    assert code == 1
    report = json.loads(out)
    verdicts = {(h["pr"], h["path"]): (h["status"], h["unverifiable"]) for h in report["hunks"]}
    assert verdicts == {(1, "pkg/b.py"): ("applied", None), (2, "pkg/a.py"): ("unverifiable", "not-read"),
                        (2, "pkg/c.py"): ("unverifiable", "not-read")}
    code, table = audit(capsys, clone, tree, "table")
    assert code == 1
    fetch = _fetch_command(table, "pkg/a.py, pkg/c.py")
    assert "Not fully in the target: #2 (not read: 2 of 2 shipped hunks)." in " ".join(table.split())
    away.rename(up.path)
    subprocess.run(fetch, shell=True, check=True, capture_output=True)
    assert not missing_in(clone) & {git(clone, "rev-parse", "refs/pull/2/head:pkg/a.py").strip()}
    up.path.rename(away)
    assert audit(capsys, clone, tree)[0] == 0


@pytest.mark.slow
def test_a_clone_that_dropped_blobs_without_a_promisor(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A mirror lacking blobs, no promisor remote at all: no exit 2; the files are not read and
    the fetch command names the clone's remote."""
    _, clone, tree = blobless_clone(tmp_path)
    git(clone, "config", "--unset", "remote.origin.promisor")
    git(clone, "config", "--unset", "remote.origin.partialclonefilter")
    for marker in (clone / "objects/pack").glob("*.promisor"):
        marker.unlink()
    code, out = audit(capsys, clone, tree)
    assert code == 1
    report = json.loads(out)
    assert {h["status"] for h in report["hunks"]} == {"unverifiable"}
    assert all(h["unverifiable"] == "not-read" for h in report["hunks"])
    assert {p["status"] for p in report["prs"]} == {"missing"}
    code, table = audit(capsys, clone, tree, "table")
    assert f"git -C {clone} -c fetch.negotiationAlgorithm=noop fetch origin" in " ".join(table.split())
    shutil.rmtree(clone)



def test_patch_ids_of_commits_whose_blobs_are_missing_leave_those_files_out(tmp_path: Path) -> None:
    """In a partial clone whose remote is gone, the patch-id of a commit whose blobs it lacks (a main
    commit the stack's copies are looked for in) is taken without those files, not an error; a
    commit whose blobs are at hand keeps its own."""
    up, clone, _ = blobless_clone(tmp_path)
    git(clone, "cat-file", "-p", "refs/pull/1/head:pkg/b.py")  # (fetched now, lazily)
    git(clone, "cat-file", "-p", "refs/pull/1/head~1:pkg/b.py")
    up.path.rename(tmp_path / "away")
    p1, c1 = git(clone, "rev-parse", "refs/pull/1/head", "refs/pull/2/head").split()
    ids = Patches(lambda args, data: run_git(clone, args, {}, data)).ids([c1, p1])
    assert set(ids) == {p1}


def test_a_child_that_merged_main_in_a_clone_lacking_main_s_blobs_is_judged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """#1 landed on main by a squash, main went on (a file moved, one both sides edit), #2 merged main
    and went on; a partial clone whose remote is gone lacks every blob of those commits: no exit 2;
    #2's own change is measured from #1 merged with main path by path, so its hunks are its own
    files alone (pkg/a.py, and pkg/b.py, which both sides edit), none for the file main moved; the
    files not read are unverifiable."""
    up = GitRepo(tmp_path / "up")
    up.commit("base", {"pkg/a.py": text("a"), "pkg/b.py": text("b"), "pkg/c.py": text("c")})
    up.branch("feature")
    up.commit("P1", {"pkg/b.py": text("b", {5: "b 5 parent"})})
    up.pr_ref(1)
    up.commit("C1", {"pkg/a.py": text("a", {20: "a 20 child"}), "pkg/b.py": text("b", {5: "b 5 parent",
                                                                                       38: "b 38 child"})})
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
    git(clone, "fetch", "-q", "--filter=blob:none", "origin", "+refs/pull/*/head:refs/pull/*/head")
    tree = up.archive("refs/pull/2/head", tmp_path / "tree")
    up.path.rename(tmp_path / "away")
    code, out = audit(capsys, clone, tree)
    assert code == 1, out
    hunks = json.loads(out)["hunks"]
    assert sorted({(h["pr"], h["path"]) for h in hunks}) == [(1, "pkg/b.py"), (2, "pkg/a.py"), (2, "pkg/b.py")]
    assert {h["unverifiable"] for h in hunks} == {"not-read"}


def test_a_trees_files_are_listed_without_the_blobs_the_clone_lacks(tmp_path: Path) -> None:
    """The files of a revision with their sizes, in a partial clone whose remote is gone: those whose
    blobs it holds, sized, the others left out, no error."""
    up, clone, _ = blobless_clone(tmp_path)
    held = git(clone, "cat-file", "-p", "refs/pull/1/head:pkg/b.py")  # (fetched now, lazily)
    up.path.rename(tmp_path / "away")
    rows = Objects(clone, dict).tree_blobs("refs/pull/1/head")
    assert [(path, size) for path, _, size in rows] == [("pkg/b.py", len(held.encode()))]



def test_the_ranges_looked_at_again_are_those_the_first_look_did_not_cover(tmp_path: Path) -> None:
    """The blobs a range of the stack lacks are looked for again unless the first look (the
    requested head past its fork point, and that fork's tree) saw them all: a range in the
    head's history from its fork point or from a commit past it is not, and lacks nothing that
    look did not find; a merged parent's range below the fork point, or one from a later commit of
    the default branch, or one off the head's history, is, and lacks a blob that look did not see."""
    up = GitRepo(tmp_path / "up")
    up.commit("base", {"pkg/a.py": text("a"), "pkg/b.py": text("b"), "pkg/c.py": text("c")})
    up.branch("feature")
    h1 = up.commit("P1", {"pkg/b.py": text("b", {5: "b 5 parent"})})
    up.git("checkout", "-q", "main")
    up.git("merge", "-q", "--no-ff", "--no-edit", "feature")
    later = up.commit("main goes on", {"pkg/c.py": text("c", {9: "c 9 main"})})
    up.git("checkout", "-q", "feature")
    h2 = up.commit("C1", {"pkg/a.py": text("a", {20: "a 20 child"})})
    h3 = up.commit("C2", {"pkg/a.py": text("a", {20: "a 20 child", 30: "a 30 child"})})
    up.branch("other", h1)
    other = up.commit("O1", {"pkg/c.py": text("c", {9: "c 9 other"})})
    up.git("config", "uploadpack.allowFilter", "true")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--bare", "--filter=blob:none", f"file://{up.path}", str(clone)], check=True)
    git(clone, "fetch", "-q", "--filter=blob:none", "origin", f"+{h3}:refs/pull/3/head", f"+{other}:refs/pull/4/head")
    for rev in (f"{h3}:pkg/a.py", f"{h3}:pkg/b.py", f"{h3}:pkg/c.py", f"{h2}:pkg/a.py", f"{h1}:pkg/a.py"):
        git(clone, "cat-file", "-p", rev)  # (fetched now, lazily)
    up.path.rename(tmp_path / "away")
    src = GitClone(clone)
    assert src.lacking_blobs([h3]) is None  # the first look: nothing lacking
    looked = {}
    for start, head in [("refs/heads/main~1^1", h1), (h1, h2), (h2, h3), (later, h3), (h1, other)]:
        start = git(clone, "rev-parse", start).strip()
        lacking = find_missing(clone, {}, [HistoryWalk((head,), (start,))], "refs/heads/main")
        looked[(start, head)] = _looked_at(src, _OwnRange(0, start, start, head, ()), [h3])
        assert not (looked[(start, head)] and lacking)
        assert looked[(start, head)] or lacking
    assert list(looked.values()) == [False, True, True, False, False]


def merged_parent_clone(tmp_path: Path) -> tuple[GitRepo, Path, Path]:
    """Upstream where #1 (pkg/b.py) is merged into main by a merge commit and #2 (pkg/a.py,
    pkg/c.py) is built on #1's head; a bare `--filter=blob:none` clone of it holding the PR refs and
    no blob yet; the tree of #2's head."""
    up = GitRepo(tmp_path / "up")
    up.commit("base", {"pkg/a.py": text("a"), "pkg/b.py": text("b"), "pkg/c.py": text("c")})
    up.branch("feature")
    up.commit("P1", {"pkg/b.py": text("b", {5: "b 5 parent"})})
    up.pr_ref(1)
    up.git("checkout", "-q", "main")
    up.git("merge", "-q", "--no-ff", "--no-edit", "feature")
    up.git("checkout", "-q", "feature")
    up.commit("C1", {"pkg/a.py": text("a", {20: "a 20 child"}), "pkg/c.py": text("c", {9: "c 9 child"})})
    up.pr_ref(2)
    up.git("checkout", "-q", "main")
    up.git("config", "uploadpack.allowFilter", "true")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--bare", "--filter=blob:none", f"file://{up.path}", str(clone)], check=True)
    git(clone, "fetch", "-q", "--filter=blob:none", "origin", "+refs/pull/*/head:refs/pull/*/head")
    return up, clone, up.archive("refs/pull/2/head", tmp_path / "tree")


def unreachable_remote(clone: Path, tmp_path: Path) -> Path:
    """The clone's remote made to refuse every fetch, each attempt written to the file returned: as
    `asked` when a process other than git started the fetch (the audit's one batch fetch), as `lazy`
    when git did (a git process fetching a blob it lacks as it reads it)."""
    log, script = tmp_path / "fetches.log", tmp_path / "refusing-upload-pack"
    script.write_text(f"""#!{sys.executable}
from pathlib import Path

def parent(pid):
    return int(Path(f"/proc/{{pid}}/stat").read_text().rsplit(")", 1)[1].split()[1])

pid = parent(parent(__import__("os").getpid()))
while b"fetch" not in Path(f"/proc/{{pid}}/cmdline").read_bytes().split(b"\\0"):
    pid = parent(pid)
by = Path(f"/proc/{{parent(pid)}}/comm").read_text().strip()
with open({str(log)!r}, "a") as out:
    out.write("lazy\\n" if by.startswith("git") else "asked\\n")
raise SystemExit(1)
""")
    script.chmod(0o755)
    git(clone, "config", "remote.origin.uploadpack", str(script))
    return log


@pytest.mark.slow
def test_a_merged_parent_s_files_the_clone_lacks_are_not_read_and_the_rest_is_judged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """#1 merged into main by a merge commit, #2 built on it, a partial clone whose remote refuses
    to answer and that holds pkg/a.py's blobs alone: no exit 2; #1's pkg/b.py and #2's pkg/c.py
    are unverifiable, not read, #2's pkg/a.py is judged (applied); git is asked for the lacking
    blobs once, by the audit's own batch fetch, never lazily by a git reading them; the target is
    still placed at main by content; the command the table names fetches every blob the audit
    lacked (the audit then exits 0)."""
    _, clone, tree = merged_parent_clone(tmp_path)
    git(clone, "cat-file", "-p", "refs/pull/2/head:pkg/a.py")  # (fetched now, lazily)
    git(clone, "cat-file", "-p", "refs/pull/1/head:pkg/a.py")
    fetches = unreachable_remote(clone, tmp_path)
    code, out = audit(capsys, clone, tree)
    assert code == 1, out
    verdicts = {(h["pr"], h["path"]): (h["status"], h["unverifiable"]) for h in json.loads(out)["hunks"]}
    assert verdicts == {(1, "pkg/b.py"): ("unverifiable", "not-read"), (2, "pkg/a.py"): ("applied", None),
                        (2, "pkg/c.py"): ("unverifiable", "not-read")}
    assert fetches.read_text().split() == ["asked"]
    placed = json.loads(out)["target"]["build"]["placed"]  # (by the blob ids main's trees list)
    assert (placed["ref"], placed.get("how")) == (git(clone, "rev-parse", "refs/heads/main").strip(), "content")
    code, table = audit(capsys, clone, tree, "table")
    assert code == 1
    fetch = _fetch_command(table, "pkg/b.py, pkg/c.py")
    git(clone, "config", "--unset", "remote.origin.uploadpack")
    subprocess.run(fetch, shell=True, check=True, capture_output=True)
    assert not missing_in(clone) & set(git(clone, "rev-parse", "refs/pull/1/head~1:pkg/b.py",
                                           "refs/pull/1/head:pkg/b.py", "refs/pull/2/head:pkg/c.py").split())
    assert audit(capsys, clone, tree)[0] == 0


def test_ranges_stacked_on_one_another_are_each_looked_at_past_their_own_start(tmp_path: Path) -> None:
    """The blobs lacking in ranges where one starts at the other's head (a merged parent's own
    range, and its child's from that parent's head): those of both, the parent's commits not
    hidden by the child's start."""
    up, clone, _ = merged_parent_clone(tmp_path)
    up.path.rename(tmp_path / "away")
    base, h1, h2 = git(clone, "rev-parse", "refs/pull/1/head~1", "refs/pull/1/head", "refs/pull/2/head").split()
    lacking = GitClone(clone).lacking_blobs([h1, h2], [base, h1])
    assert lacking is not None
    assert lacking.paths == {"pkg/a.py", "pkg/b.py", "pkg/c.py"}


def test_blob_ids_at_commits_are_read_from_trees_without_a_fetch(tmp_path: Path) -> None:
    """The blob id of each (commit, path) in a partial clone that holds none of them and whose remote
    refuses to answer: those of files as the trees list them, None for a folder, a path not there
    or one under a file; no fetch asked."""
    up, clone, _ = merged_parent_clone(tmp_path)
    up.commit("a root file", {"setup.py": "setup()\n"})
    git(clone, "fetch", "-q", "--filter=blob:none", "origin", "+refs/heads/main:refs/heads/main")
    fetches = unreachable_remote(clone, tmp_path)
    names = [("refs/pull/1/head", "pkg/b.py"), ("refs/heads/main", "setup.py"), ("refs/pull/2/head", "pkg/c.py"),
             ("refs/pull/1/head", "pkg"), ("refs/pull/1/head", "setup.py"), ("refs/pull/2/head", "pkg/a.py/x"),
             ("no-such-ref", "pkg/a.py")]
    expected = [git(clone, "rev-parse", f"{rev}:{path}").strip() for rev, path in names[:3]] + [None] * 4
    assert blobs_at(GitClone(clone), names) == expected
    assert missing_in(clone) >= {blob for blob in expected if blob}
    assert not fetches.exists()


def _fetch_command(table: str, paths: str) -> str:
    """The command the table gives to fetch the blobs of `paths` (as it lists them), which it says it lacks."""
    flat = " ".join(table.split())
    line = re.search(rf"The clone lacks the blobs of 2 file\(s\) \({re.escape(paths)}\): not read, so not present\. "
                     r"Fetch them: (git -C \S+ .*?)(?= ╭| Not fully)", flat)
    assert line is not None, table
    return line.group(1)
