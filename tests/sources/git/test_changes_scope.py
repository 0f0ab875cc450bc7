"""A PR's own scope on real repositories: branches that merged the default branch back in (twice,
with two merge bases), their squash merges, re-done commits, and a bare clone without config."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import GitRepo
from helpers.lines import text as numbered
from prstack.cli import main
from prstack.models import PRState
from prstack.sources.git.changes import load_changes, read_graph
from prstack.sources.git.repo import GitClone


def text(name: str, edits: dict[int, str] | None = None) -> str:
    return numbered(name, edits, count=60)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, object]]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert out, err
    return code, json.loads(out)


def criss_cross(repo: GitRepo) -> dict[str, str]:
    """main with PR #5 merged by a merge commit; a release branch; PR #7 that merged main (with
    #5 in it) and the release branch, which main merged too: #7 has two merge bases with main."""
    shas = {"base": repo.commit("base", {f"pkg/{n}.py": text(n) for n in "abc"})}
    repo.branch("rel")
    shas["r1"] = repo.commit("R1 release fix", {"pkg/c.py": text("c", {10: "c 10 rel"})})
    repo.branch("main", "main")
    shas["m1"] = repo.commit("M1 main", {"pkg/b.py": text("b", {10: "b 10 main1"})})
    repo.branch("p5")
    shas["p5"] = repo.commit("P5", {"pkg/b.py": text("b", {10: "b 10 main1", 40: "b 40 p5"})})
    repo.pr_ref(5)
    repo.branch("main", "main")
    repo.git("merge", "--quiet", "--no-ff", "-m", "Merge #5", "p5")
    shas["merge5"] = repo.git("rev-parse", "HEAD")
    repo.branch("feat", shas["m1"])
    shas["f1"] = repo.commit("F1 feature", {"pkg/a.py": text("a", {10: "a 10 feat1"})})
    repo.git("merge", "--quiet", "--no-edit", "main")  # Merge branch 'main' into feat (#5 comes in)
    repo.git("merge", "--quiet", "--no-edit", "rel")  # ... and the release branch
    shas["f2"] = repo.commit("F2 feature", {"pkg/a.py": text("a", {10: "a 10 feat1", 50: "a 50 feat2"})})
    shas["head7"] = repo.pr_ref(7)
    repo.branch("child", "feat")
    shas["g1"] = repo.commit("G1 on the feature", {"pkg/c.py": text("c", {10: "c 10 rel", 30: "c 30 g1"})})
    repo.pr_ref(8)
    repo.branch("main", "main")
    repo.git("merge", "--quiet", "--no-edit", "-m", "Merge rel", "rel")
    shas["m2"] = repo.commit("M2 main", {"pkg/c.py": text("c", {10: "c 10 rel", 50: "c 50 main2"})})
    return shas


def scope_of(repo: GitRepo, head: str) -> set[str]:
    return set(repo.git("rev-list", head, "^main").split())


def tree_of(repo: GitRepo, rev: str, dest: Path) -> Path:
    """The repository's files at `rev`, as a plain folder (a --tree target)."""
    dest.mkdir()
    archive = subprocess.run(["git", "-C", str(repo.path), "archive", rev], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)
    return dest


def test_branch_that_merged_main_twice_keeps_only_its_own_change(git_repo: GitRepo) -> None:
    shas = criss_cross(git_repo)
    bases = set(git_repo.git("merge-base", "--all", shas["head7"], "main").split())
    assert bases == {shas["merge5"], shas["r1"]}  # the situation under test: two merge bases
    src = GitClone(git_repo.path)
    stack = read_graph(src, [7])
    assert stack.order == (7,) and stack.parents[7] == ()  # #5 came in with main: no parent
    facts = stack.facts[7]
    assert {c.sha for c in facts.commits} == scope_of(git_repo, shas["head7"])
    assert set(facts.merge_bases) == bases and facts.fork_point == facts.merge_bases[0]
    assert facts.fork_note is not None and facts.fork_point[:12] in facts.fork_note
    changes = load_changes(src, [7])
    hunks = changes.hunks_of(7)
    assert {h.path for h in hunks} == {"pkg/a.py"}  # not main's b.py nor the release's c.py
    assert [h.commit for h in hunks] == [shas["f1"], shas["f2"]]
    assert all(set(h.commits) <= scope_of(git_repo, shas["head7"]) for h in hunks)
    assert {c.sha for c in changes.prs[0].commits} == scope_of(git_repo, shas["head7"])


def test_child_of_such_a_branch_and_its_audit(
    git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shas = criss_cross(git_repo)
    stack = read_graph(GitClone(git_repo.path), [8])
    assert stack.order == (7, 8) and stack.parents[8] == (7,)
    tree = tree_of(git_repo, "main", tmp_path / "tree")  # main: neither PR in it
    code, data = run(capsys, "audit", "8", "--git", str(git_repo.path), "--tree", str(tree), "--format", "json")
    assert code == 1
    prs = {p["number"]: p for p in data["prs"]}  # type: ignore[union-attr]
    assert set(prs) == {7, 8} and prs[8]["depends_on"] == [7] and prs[7]["depends_on"] == []
    assert prs[7]["status"] == "missing" and prs[8]["status"] == "missing"
    hunks = data["hunks"]
    assert isinstance(hunks, list)
    own = {(h["pr"], h["path"], h["commit"]) for h in hunks}
    assert own == {(7, "pkg/a.py", shas["f1"]), (7, "pkg/a.py", shas["f2"]), (8, "pkg/c.py", shas["g1"])}
    code, base_main = run(capsys, "audit", "7", "--git", str(git_repo.path), "--tree", str(tree),
                          "--format", "json", "--base", "main")
    assert [(h["path"], h["commit"]) for h in base_main["hunks"]] == [  # type: ignore[union-attr]
        ("pkg/a.py", shas["f1"]), ("pkg/a.py", shas["f2"])
    ]


def test_squash_of_a_branch_that_merged_main_is_merged(
    git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shas = criss_cross(git_repo)
    git_repo.git("merge", "--squash", "--quiet", shas["head7"])
    squash = git_repo.commit("The feature (#7)", {})
    git_repo.commit("M3 main moves on", {"pkg/b.py": text("b", {10: "b 10 main1", 40: "b 40 p5", 55: "b 55"})})
    stack = read_graph(GitClone(git_repo.path), [7])
    assert stack.facts[7].merged == "squash" and stack.facts[7].landed == squash
    assert stack.states[7] is PRState.MERGED
    tree = tree_of(git_repo, "main", tmp_path / "tree")
    code, data = run(capsys, "audit", "7", "--git", str(git_repo.path), "--tree", str(tree), "--format", "json")
    assert code == 0
    (pr,) = data["prs"]  # type: ignore[misc]
    assert pr["merged"] is True and pr["status"] == "applied"


def test_subject_naming_the_pr_alone_is_no_squash(git_repo: GitRepo) -> None:
    shas = criss_cross(git_repo)
    git_repo.commit("The feature (#7)", {"pkg/a.py": text("a", {10: "a 10 feat1 but other"})})
    stack = read_graph(GitClone(git_repo.path), [7])
    assert stack.facts[7].merged is None and stack.states[7] is PRState.OPEN
    assert shas["head7"] == stack.facts[7].head


@pytest.mark.slow
def test_bare_clone_without_config(git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    criss_cross(git_repo)
    bare = tmp_path / "mirror.git"
    subprocess.run(["git", "clone", "--quiet", "--bare", str(git_repo.path), str(bare)], check=True)
    for number in (5, 7, 8):
        sha = git_repo.git("rev-parse", f"refs/pull/{number}/head")
        subprocess.run(["git", "-C", str(bare), "update-ref", f"refs/pull/{number}/head", sha], check=True)
    (bare / "config").unlink()  # some mirroring tools leave bare repositories so
    assert subprocess.run(["git", "-C", str(bare), "rev-parse", "main"], capture_output=True).returncode == 0
    tree = tree_of(git_repo, "main", tmp_path / "tree")
    args = ["audit", "8", "--tree", str(tree), "--format", "json"]
    code, from_bare = run(capsys, *args, "--git", str(bare))
    code_clone, from_clone = run(capsys, *args, "--git", str(git_repo.path))
    assert code == code_clone == 1
    assert from_bare["hunks"] == from_clone["hunks"] and from_bare["prs"] == from_clone["prs"]
    assert GitClone(bare).default_ref == "refs/heads/main"
    shutil.rmtree(bare)


@pytest.mark.parametrize("parent_merged", [False, True], ids=["parent-open", "parent-squash-merged"])
@pytest.mark.slow
def test_redone_copy_keeps_its_own_change(
    git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str], parent_merged: bool
) -> None:
    """#11 carries an edited copy of #10's commit (same subject and author, made after it, other
    patch) and a commit of its own: it is not built on an old #10, and keeps both its hunks."""
    git_repo.commit("base", {f"pkg/{n}.py": text(n) for n in "ab"})
    git_repo.branch("p10")
    git_repo.commit("Fix the parser", {"pkg/a.py": text("a", {10: "a 10 fixed"})})
    git_repo.pr_ref(10)
    git_repo.branch("p11", "main")
    copy = git_repo.commit("Fix the parser", {"pkg/a.py": text("a", {10: "a 10 fixed, redone"})})
    own = git_repo.commit("Feature on the fix", {"pkg/b.py": text("b", {20: "b 20 feature"})})
    git_repo.pr_ref(11)
    git_repo.branch("main", "main")
    if parent_merged:
        git_repo.git("merge", "--squash", "--quiet", "p10")
        git_repo.commit("Fix the parser (#10)", {})
    stack = read_graph(GitClone(git_repo.path), [11, 10])
    assert stack.edge(10, 11) is None and stack.parents[11] == ()
    assert stack.states[11] is PRState.OPEN
    assert stack.states[10] is (PRState.MERGED if parent_merged else PRState.OPEN)
    tree = tree_of(git_repo, "main", tmp_path / "tree")
    code, data = run(capsys, "audit", "11", "--git", str(git_repo.path), "--tree", str(tree), "--format", "json")
    assert code == 1
    assert [(p["number"], p["depends_on"], p["status"]) for p in data["prs"]] == [  # type: ignore[union-attr]
        (11, [], "missing")  # main's fix is not the redone one: none of #11's change is there
    ]
    assert [(h["pr"], h["path"], h["commit"]) for h in data["hunks"]] == [  # type: ignore[union-attr]
        (11, "pkg/a.py", copy), (11, "pkg/b.py", own)
    ]


def test_old_copy_of_a_merged_parent_stays_the_childs(git_repo: GitRepo) -> None:
    """#11 holds an older version of #10's commit (#10 was amended after, then squash-merged):
    a merged PR is not built upon by edited copies, so #11 keeps the copy's hunk as its own."""
    git_repo.commit("base", {f"pkg/{n}.py": text(n) for n in "ab"})
    git_repo.branch("p11")
    git_repo.commit("Fix the parser", {"pkg/a.py": text("a", {10: "a 10 fixed v1"})})
    git_repo.commit("Feature on the fix", {"pkg/b.py": text("b", {20: "b 20 feature"})})
    git_repo.pr_ref(11)
    git_repo.branch("p10", "main")
    git_repo.commit("Fix the parser", {"pkg/a.py": text("a", {10: "a 10 fixed v2"})})
    git_repo.pr_ref(10)
    src = GitClone(git_repo.path)
    assert read_graph(src, [11]).parents[11] == ()  # open and amended: its edited copy alone is no edge
    git_repo.branch("main", "main")
    git_repo.git("merge", "--squash", "--quiet", "p10")
    git_repo.commit("Fix the parser (#10)", {})
    stack = read_graph(GitClone(git_repo.path), [11])
    assert stack.parents[11] == () and stack.states[11] is PRState.OPEN
    assert {h.path for h in load_changes(GitClone(git_repo.path), [11]).hunks_of(11)} == {"pkg/a.py", "pkg/b.py"}
