"""Who belongs to a stack and whose change each commit is, on stacks as people push them: a parent
squash-merged while the child carries edited copies of it, a stack re-pushed under new numbers, a
parent squash-merged with a context line changed upstream meanwhile, and ghstack's refs (stale copies
of each other's commits, a parent's updates replayed as base commits in the child's branch)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import GitRepo
from prstack.cli import main
from prstack.demo.fixture import export_tree
from prstack.models import PRState
from prstack.sources.git.changes import load_changes
from prstack.sources.git.repo import GitClone

LINES = [f"line_{i:02d} = {i}\n" for i in range(1, 41)]


def text(**changed: str) -> str:
    """40 numbered lines, `l07="..."` replacing line 7."""
    out = list(LINES)
    for key, value in changed.items():
        out[int(key[1:]) - 1] = value + "\n"
    return "".join(out)


def audit_json(capsys: pytest.CaptureFixture[str], repo: GitRepo, pr: int, tree: Path) -> tuple[int, dict]:
    code = main(["audit", str(pr), "--git", str(repo.path), "--tree", str(tree), "--format", "json"])
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.slow
def test_a_child_carrying_edited_copies_of_a_squash_merged_parent_judges_them_itself(
        git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """#1 is squash-merged after #2 branched; #2's branch was rebased with #1's commit edited.
    Every change between #2's head and its fork point is judged under #2: dropping the copy's
    change from #2's own tree is caught."""
    repo = git_repo
    repo.commit("base", {"pkg/__init__.py": "", "pkg/a.py": text(), "pkg/b.py": text()})
    repo.branch("p1")
    repo.commit("Fix a", {"pkg/a.py": text(l10="line_10 = 'fixed'")})
    repo.pr_ref(1)
    repo.branch("p2", "main")
    copy = repo.commit("Fix a", {"pkg/a.py": text(l10="line_10 = 'fixed'", l11="line_11 = 'also'")})
    own = repo.commit("Use b", {"pkg/b.py": text(l20="line_20 = 'b'")})
    repo.pr_ref(2)
    repo.branch("main", "main")
    repo.git("merge", "--squash", "--quiet", "p1")
    repo.commit("Fix a (#1)", {})
    tree = export_tree(repo.path, "refs/pull/2/head", tmp_path / "top")
    code, data = audit_json(capsys, repo, 2, tree)
    assert code == 0
    assert {(h["pr"], h["path"], h["commit"]) for h in data["hunks"]} == {(2, "pkg/a.py", copy), (2, "pkg/b.py", own)}
    a = tree / "pkg" / "a.py"
    a.write_text(a.read_text().replace("line_11 = 'also'", "line_11 = 11"))
    code, data = audit_json(capsys, repo, 2, tree)
    assert code == 1
    assert [h["status"] for h in data["hunks"] if h["path"] == "pkg/a.py"] != ["applied"]
    assert [h["status"] for h in data["hunks"] if h["path"] == "pkg/b.py"] == ["applied"]


@pytest.mark.slow
def test_a_stack_re_pushed_under_new_numbers_holds_only_what_its_history_holds(
        git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """#10 <- #11 were closed and re-pushed as #20 <- #21 with #10's commit edited; #10 was then
    amended on its own. #21's stack is #20 and #21: #10 shares subjects and author with #20's
    commit, never its change."""
    repo = git_repo
    repo.commit("base", {"pkg/__init__.py": "", "pkg/a.py": text(), "pkg/b.py": text(), "pkg/c.py": text()})
    repo.branch("old")
    repo.commit("Parser fix", {"pkg/a.py": text(l05="line_05 = 'v1'")})
    repo.pr_ref(10)
    repo.commit("Use it", {"pkg/b.py": text(l05="line_05 = 'use'")})
    repo.pr_ref(11)
    repo.branch("new", "main")
    repo.commit("Parser fix", {"pkg/a.py": text(l05="line_05 = 'v2'")})
    repo.pr_ref(20)
    repo.commit("Use it", {"pkg/b.py": text(l05="line_05 = 'use'"), "pkg/c.py": text(l09="line_09 = 'c'")})
    repo.pr_ref(21)
    repo.branch("old2", "main")  # #10 force-pushed later, with yet another edit of its one commit
    repo.commit("Parser fix", {"pkg/a.py": text(l05="line_05 = 'v3'")})
    repo.pr_ref(10)
    changes = load_changes(GitClone(repo.path), [21])
    assert changes.stack.order == (20, 21)
    tree = export_tree(repo.path, "refs/pull/21/head", tmp_path / "top")
    code, data = audit_json(capsys, repo, 21, tree)
    assert code == 0
    assert [p["number"] for p in data["prs"]] == [20, 21]


def _fix_and_use_with_main_tweaking_beside(repo: GitRepo) -> None:
    """#1 fixes a.py line 10; #2 on it uses b.py; main then changes a.py line 12, beside #1's."""
    repo.commit("base", {"pkg/__init__.py": "", "pkg/a.py": text(), "pkg/b.py": text()})
    repo.branch("p1")
    repo.commit("Fix a", {"pkg/a.py": text(l10="line_10 = 'fixed'")})
    repo.pr_ref(1)
    repo.branch("p2")
    repo.commit("Use b", {"pkg/b.py": text(l20="line_20 = 'b'")})
    repo.pr_ref(2)
    repo.branch("main", "main")
    repo.commit("Tweak a", {"pkg/a.py": text(l12="line_12 = 'tweaked'")})


@pytest.mark.slow
def test_a_parent_squash_merged_with_a_context_line_changed_upstream_is_merged(
        git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Upstream changed a line beside #1's change before squash-merging it: the squash's patch is
    not #1's, its content is. #1 is merged; the open child stacked on it is judged as usual."""
    repo = git_repo
    _fix_and_use_with_main_tweaking_beside(repo)
    repo.git("merge", "--squash", "--quiet", "p1")
    repo.commit("Fix a (#1)", {})
    stack = load_changes(GitClone(repo.path), [2]).stack
    assert stack.order == (1, 2)
    assert stack.states[1] is PRState.MERGED and stack.facts[1].merged == "content"
    assert stack.states[2] is PRState.OPEN
    tree = export_tree(repo.path, "refs/pull/2/head", tmp_path / "top")
    code, data = audit_json(capsys, repo, 2, tree)
    assert code == 0
    assert [(p["number"], p["merged"]) for p in data["prs"]] == [(1, True), (2, False)]


def test_an_open_parent_whose_lines_upstream_only_touched_beside_is_not_merged(git_repo: GitRepo) -> None:
    """Upstream changed a line near #1's change but never made #1's change: #1 stays open."""
    repo = git_repo
    _fix_and_use_with_main_tweaking_beside(repo)
    stack = load_changes(GitClone(repo.path), [2]).stack
    assert stack.states[1] is PRState.OPEN and stack.facts[1].merged is None


@pytest.mark.slow
def test_the_parent_in_the_branch_s_history_outweighs_stale_copies_that_claim_the_reverse(
        git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """ghstack-style refs: #3's branch holds #2's head; #1, an older push of the stack, holds the
    stack's first commit, an earlier rewrite of #2's next one, a copy of #3's commit and one more.
    The copies claim #1 under #2 and #3 under #1, against the history: #2 stays #3's parent, and
    against #2's tree every hunk of #2 is present and #3's own hunk is not."""
    repo = git_repo
    repo.commit("base", {"pkg/__init__.py": "", "pkg/a.py": text(), "pkg/b.py": text(), "pkg/c.py": text()})
    repo.branch("old")
    first = repo.commit("Add scales", {"pkg/a.py": text(l05="line_05 = 'scales'")})
    repo.commit("Refactor observer", {"pkg/a.py": text(l05="line_05 = 'scales'", l20="line_20 = 'v1'")})
    repo.commit("Add MXFP8", {"pkg/b.py": text(l10="line_10 = 'mxfp8'")})
    repo.commit("Add MXFP4", {"pkg/b.py": text(l10="line_10 = 'mxfp8'", l30="line_30 = 'mxfp4'")})
    repo.pr_ref(1)
    repo.branch("new", first)
    repo.commit("Refactor observer", {"pkg/a.py": text(l05="line_05 = 'scales'", l20="line_20 = 'v2'")})
    repo.commit("Observer tests", {"pkg/c.py": text(l03="line_03 = 'test'")})
    repo.pr_ref(2)
    repo.commit("Add MXFP8", {"pkg/b.py": text(l10="line_10 = 'mxfp8'")})
    repo.pr_ref(3)
    stack = load_changes(GitClone(repo.path), [3]).stack
    assert stack.parents[3] == (2,)
    assert (2, 3) in {(e.parent, e.child) for e in stack.edges} and stack.cycles
    tree = export_tree(repo.path, "refs/pull/2/head", tmp_path / "parent")
    code, data = audit_json(capsys, repo, 3, tree)
    assert code == 1
    assert {(h["pr"], h["path"], h["status"]) for h in data["hunks"]} == {
        (2, "pkg/a.py", "applied"), (2, "pkg/c.py", "applied"), (3, "pkg/b.py", "missing")}


def test_a_child_replaying_its_parent_s_update_as_a_base_commit_starts_after_it(
        git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """ghstack-style refs: #1 was updated with a merge of a new base after #2 was built on its
    first commit; #2's branch replays that update as one commit of its own base, with the very
    files of #1's head, then makes its change. #1's part of #2 ends at that commit (not stale):
    against #1's tree every hunk of #1 is present and only #2's change is not."""
    repo = git_repo
    repo.commit("base", {"pkg/__init__.py": "", "pkg/a.py": text(), "pkg/b.py": text()})
    repo.branch("one")
    first = repo.commit("Remove UIntX", {"pkg/a.py": text(l10="line_10 = 'gone'")})
    repo.branch("one-base", "main")
    repo.commit("Update base for Update on \"Remove UIntX\"", {"pkg/a.py": text(l12="line_12 = 'lower'")})
    repo.git("checkout", "-q", "one")
    repo.git("-c", "commit.gpgsign=false", "merge", "-q", "--no-ff", "-m", "Update on \"Remove UIntX\"", "one-base")
    repo.pr_ref(1)
    repo.branch("two", first)
    replay = repo.commit("Update base for Update on \"Use it\"",
                         {"pkg/a.py": text(l10="line_10 = 'gone'", l12="line_12 = 'lower'")})
    assert repo.git("rev-parse", f"{replay}^{{tree}}") == repo.git("rev-parse", "refs/pull/1/head^{tree}")
    repo.commit("Use it", {"pkg/b.py": text(l20="line_20 = 'use'")})
    repo.pr_ref(2)
    stack = load_changes(GitClone(repo.path), [2]).stack
    assert stack.parents[2] == (1,)
    edge = stack.edge(1, 2)
    assert edge is not None and edge.tip == replay and edge.stale is None
    tree = export_tree(repo.path, "refs/pull/1/head", tmp_path / "parent")
    code, data = audit_json(capsys, repo, 2, tree)
    assert code == 1
    assert {(h["pr"], h["path"], h["status"]) for h in data["hunks"]} == {
        (1, "pkg/a.py", "applied"), (2, "pkg/b.py", "missing")}
