"""Stack detection when a branch reverts the commits it took from another PR, on real repositories
built in tmp_path: a PR whose every commit the branch reverts is no parent, and the commits and
their reverts cancel out of the branch's own change."""

from __future__ import annotations

from conftest import GitRepo
from prstack.sources.git.changes import load_changes, read_graph
from prstack.sources.git.repo import GitClone

BASE = "".join(f"line {i}\n" for i in range(60))


def _edit(text: str, index: int, new: str) -> str:
    rows = text.splitlines(keepends=True)
    rows[index] = new + "\n"
    return "".join(rows)


def _revert(repo: GitRepo, sha: str) -> str:
    repo.git("-c", "commit.gpgsign=false", "revert", "--no-edit", sha)
    return repo.git("rev-parse", "HEAD")


def _parent_then_child_branch(r: GitRepo) -> str:
    """main with a.py, b.py and c.py; #1 changes a.py (its commit returned); branch two started on it."""
    r.commit("base", {"a.py": BASE, "b.py": BASE, "c.py": BASE})
    r.branch("one")
    p1 = r.commit("change a", {"a.py": _edit(BASE, 5, "a = 310")})
    r.pr_ref(1)
    r.branch("two")
    return p1


def _parent_moves_on(r: GitRepo) -> None:
    """#1 gets one more commit after #2 was built on it."""
    r.git("checkout", "-q", "one")
    r.commit("more", {"b.py": _edit(BASE, 50, "b = 1")})
    r.pr_ref(1)
    r.git("checkout", "-q", "main")


def _branch_copying_then_reverting(repo: GitRepo, *, parent_moves_on: bool) -> dict[str, str]:
    """#1 changes a.py and b.py; #2's branch starts at #1's commit, fixes c.py, reverts #1's
    commit and fixes c.py again. With `parent_moves_on`, #1 gains a commit after #2 branched (so
    #2 holds a stale copy of #1, as a force-pushed or extended parent leaves it); else #1's head
    is in #2's history."""
    repo.commit("base", {"a.py": BASE, "b.py": BASE, "c.py": BASE})
    repo.branch("one")
    shas = {"p1": repo.commit("py310 and some changes", {"a.py": _edit(BASE, 5, "a = 310"),
                                                          "b.py": _edit(BASE, 40, "b = 310")})}
    repo.pr_ref(1)
    repo.branch("two")
    shas["fix"] = repo.commit("fix", {"c.py": _edit(BASE, 20, "c = 1")})
    shas["revert"] = _revert(repo, shas["p1"])
    shas["fix2"] = repo.commit("fix again", {"c.py": _edit(BASE, 20, "c = 2")})
    repo.pr_ref(2)
    if parent_moves_on:
        repo.git("checkout", "-q", "one")
        shas["p2"] = repo.commit("more", {"a.py": _edit(_edit(BASE, 5, "a = 310"), 50, "a2 = 1")})
        repo.pr_ref(1)
    repo.git("checkout", "-q", "main")
    return shas


def test_a_pr_whose_copied_commit_the_branch_reverts_is_no_parent(git_repo: GitRepo) -> None:
    """#2 holds an old copy of #1's commit and reverts it: #2 stands alone, and its own change is
    its one c.py hunk (what GitHub shows for it), by its own commits; no hunk of a.py or b.py."""
    shas = _branch_copying_then_reverting(git_repo, parent_moves_on=True)
    src = GitClone(git_repo.path)
    stack = read_graph(src, [2])
    assert stack.order == (2,) and stack.edges == ()
    changes = load_changes(src, [2])
    (hunk,) = changes.hunks_of(2)
    assert (hunk.path, [(ln.kind, ln.text) for ln in hunk.lines if ln.kind != " "]) == (
        "c.py", [("-", "line 20"), ("+", "c = 2")])
    assert set(hunk.commits) <= {shas["fix"], shas["fix2"]} and shas["fix2"] in hunk.commits
    assert changes.prs[-1].depends_on == ()


def test_a_parent_head_in_the_branch_whose_commits_it_reverts_is_no_parent(git_repo: GitRepo) -> None:
    """The same when #1's head is in #2's history (ancestry): #1's change is not in #2's."""
    _branch_copying_then_reverting(git_repo, parent_moves_on=False)
    src = GitClone(git_repo.path)
    assert read_graph(src, [2]).edges == ()
    assert {h.path for h in load_changes(src, [2]).hunks_of(2)} == {"c.py"}


def test_a_revert_that_is_itself_reverted_keeps_the_parent(git_repo: GitRepo) -> None:
    """#2 reverts #1's commit and then reverts the revert: #1's change is back in #2, so #2
    stacks on #1 and its own change is its c.py fix only."""
    r = git_repo
    p1 = _parent_then_child_branch(r)
    r.commit("fix", {"c.py": _edit(BASE, 20, "c = 1")})
    _revert(r, _revert(r, p1))
    r.pr_ref(2)
    _parent_moves_on(r)
    src = GitClone(r.path)
    stack = read_graph(src, [2])
    assert stack.parents[2] == (1,)
    assert {h.path for h in load_changes(src, [2]).hunks_of(2)} == {"c.py"}


def test_a_commit_named_as_reverted_but_not_undone_keeps_the_parent(git_repo: GitRepo) -> None:
    """A commit whose message says it reverts #1's commit but whose change is another: #1's
    change is still in #2's branch, so #2 still stacks on #1."""
    r = git_repo
    p1 = _parent_then_child_branch(r)
    r.commit(f"Revert \"change a\"\n\nThis reverts commit {p1}.", {"c.py": _edit(BASE, 20, "c = 1")})
    r.pr_ref(2)
    _parent_moves_on(r)
    assert read_graph(GitClone(r.path), [2]).parents[2] == (1,)
