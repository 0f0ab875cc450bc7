"""Stack detection on real repositories: stacks as people build them (markers, base branches,
rebases, copies, merged parents), built with git in tmp_path."""

from __future__ import annotations

import pytest

from conftest import GitRepo
from prstack.models import PRState, PullRequest
from prstack.sources.git.changes import StackChanges, load_changes, read_graph
from prstack.sources.git.repo import GitClone
from prstack.stack.facts import Evidence
from prstack.stack.graph import Stack


def lines(n: int, tag: str = "") -> str:
    """A file of n distinct lines; edits far apart make separate hunks."""
    return "".join(f"line {i}{tag if i == 0 else ''}\n" for i in range(n))


def edit(text: str, index: int, new: str) -> str:
    rows = text.splitlines(keepends=True)
    rows[index] = new + "\n"
    return "".join(rows)


A0 = lines(60)


def base_repo(repo: GitRepo) -> str:
    """main with a.py, b.py, c.py of 60 lines each."""
    return repo.commit("base", {"a.py": A0, "b.py": A0, "c.py": A0})


def paths_of(changes: StackChanges, pr: int) -> set[str]:
    return {h.path for h in changes.hunks_of(pr)}


def evidence(stack: Stack, parent: int, child: int) -> tuple[Evidence, ...]:
    edge = stack.edge(parent, child)
    assert edge is not None, f"no edge #{parent} -> #{child}: {stack.edges}"
    return edge.evidence


def test_two_level_stack_by_ancestry(git_repo: GitRepo) -> None:
    base_repo(git_repo)
    git_repo.branch("a")
    git_repo.commit("A: fix a", {"a.py": edit(A0, 5, "fixed a")})
    git_repo.pr_ref(1)
    git_repo.branch("b")
    git_repo.commit("B: feature b", {"b.py": edit(A0, 5, "feature b")})
    git_repo.pr_ref(2)
    src = GitClone(git_repo.path)
    stack = read_graph(src, [2])
    assert stack.order == (1, 2)
    assert evidence(stack, 1, 2) == (Evidence.ANCESTRY,)
    assert stack.states == {1: PRState.OPEN, 2: PRState.OPEN}
    changes = load_changes(src, [2])
    assert paths_of(changes, 1) == {"a.py"}
    assert paths_of(changes, 2) == {"b.py"}
    assert changes.prs[1].depends_on == (1,)


def test_fork_style_stack_targeting_main(git_repo: GitRepo) -> None:
    """The child's PR targets main (GitHub metadata says so) and simply holds the parent's commits;
    the parent's ref is a fork remote's pr/N ref; main moved on since."""
    base_repo(git_repo)
    git_repo.branch("fork-a")
    a = git_repo.commit("A: fix a", {"a.py": edit(A0, 5, "fixed a")})
    git_repo.git("update-ref", "refs/remotes/upstream/pr/11", a)
    git_repo.branch("fork-b")
    git_repo.commit("B: feature b", {"b.py": edit(A0, 5, "feature b")})
    git_repo.pr_ref(12)
    git_repo.branch("main", "main")
    git_repo.commit("main moves on", {"c.py": edit(A0, 30, "main")})
    meta = {
        11: PullRequest(11, a, "", title="Fix a", head_ref="fork-a", base_ref="main"),
        12: PullRequest(12, "", "", title="Feature b", head_ref="fork-b", base_ref="main"),
    }
    # a fork's PR from its own main is no parent of PRs that target main
    meta[13] = PullRequest(13, "", "", head_ref="main", base_ref="main")
    src = GitClone(git_repo.path)
    stack = read_graph(src, [12], meta)
    assert stack.order == (11, 12)
    assert evidence(stack, 11, 12) == (Evidence.ANCESTRY,)
    assert stack.missing == () and stack.unconfirmed == ()
    changes = load_changes(src, [12], metadata=meta)
    assert paths_of(changes, 12) == {"b.py"}
    assert [p.title for p in changes.prs] == ["Fix a", "Feature b"]


def test_base_branch_is_evidence_when_metadata_says_so(git_repo: GitRepo) -> None:
    base_repo(git_repo)
    git_repo.branch("feature-a")
    a = git_repo.commit("A", {"a.py": edit(A0, 5, "a")})
    git_repo.pr_ref(1)
    git_repo.branch("feature-b")
    b = git_repo.commit("B", {"b.py": edit(A0, 5, "b")})
    git_repo.pr_ref(2)
    meta = {
        1: PullRequest(1, a, "", head_ref="feature-a", base_ref="main"),
        2: PullRequest(2, b, "", head_ref="feature-b", base_ref="feature-a"),
    }
    stack = read_graph(GitClone(git_repo.path), [2], meta)
    assert evidence(stack, 1, 2) == (Evidence.ANCESTRY, Evidence.BASE_BRANCH)


def test_rebased_stack_new_shas_same_patches(git_repo: GitRepo) -> None:
    base_repo(git_repo)
    git_repo.branch("a")
    a1 = git_repo.commit("A1", {"a.py": edit(A0, 5, "a1")})
    a2 = git_repo.commit("A2", {"a.py": edit(edit(A0, 5, "a1"), 40, "a2")})
    git_repo.pr_ref(1)
    git_repo.branch("main", "main")
    git_repo.commit("main moves on", {"c.py": edit(A0, 30, "main")})
    git_repo.branch("b")  # B: rebased copies of A's commits on the new main, then its own
    git_repo.git("cherry-pick", a1, a2)
    git_repo.commit("B", {"b.py": edit(A0, 5, "b")})
    git_repo.pr_ref(2)
    src = GitClone(git_repo.path)
    stack = read_graph(src, [2])
    assert stack.order == (1, 2)
    edge = stack.edge(1, 2)
    assert edge is not None and edge.evidence == (Evidence.PATCH_ID,)
    assert edge.stale is None
    assert {m.how.value for m in edge.matches} == {"patch-id"}
    assert stack.states[2] is PRState.OPEN
    changes = load_changes(src, [2])
    assert paths_of(changes, 1) == {"a.py"}
    assert paths_of(changes, 2) == {"b.py"}
    assert changes.prs[1].base_sha == edge.tip


def _force_pushed(repo: GitRepo, *, rebase_parent: bool) -> dict[str, str]:
    base_repo(repo)
    repo.branch("a")
    a1 = repo.commit("A1", {"a.py": edit(A0, 5, "a1")})
    a2 = repo.commit("A2 tweak", {"a.py": edit(edit(A0, 5, "a1"), 40, "a2 old")})
    repo.branch("b")
    repo.commit("B", {"b.py": edit(A0, 5, "b")})
    repo.pr_ref(2)
    # the parent is force-pushed after B was built: A2 rewritten, A3 added
    if rebase_parent:
        repo.branch("main", "main")
        repo.commit("main moves on", {"c.py": edit(A0, 30, "main")})
        repo.branch("a")
        repo.git("reset", "--quiet", "--hard", "main")
        repo.git("cherry-pick", a1)
    else:
        repo.branch("a", a1)
    new2 = repo.commit("A2 tweak", {"a.py": edit(edit(A0, 5, "a1"), 40, "a2 new")})
    a3 = repo.commit("A3 docs", {"c.py": edit(A0, 50, "docs")})
    repo.pr_ref(1)
    return {"a1": a1, "a2": a2, "new2": new2, "a3": a3}


def test_force_pushed_parent_is_stale(git_repo: GitRepo) -> None:
    shas = _force_pushed(git_repo, rebase_parent=False)
    src = GitClone(git_repo.path)
    stack = read_graph(src, [2])
    assert stack.order == (1, 2)
    edge = stack.edge(1, 2)
    assert edge is not None and Evidence.PATCH_ID in edge.evidence
    assert edge.stale is not None
    assert edge.stale.lacks == (shas["new2"], shas["a3"])
    assert edge.stale.carries == (shas["a2"],)
    assert edge.tip == shas["a1"]  # where the branch stops holding #1's change as it is
    assert stack.states[2] is PRState.STALE
    changes = load_changes(src, [2])
    # the stale copy of #1's A2 is in the branch and in no PR's range but #2's: judged there
    assert paths_of(changes, 2) == {"a.py", "b.py"}
    assert {h.commit for h in changes.hunks_of(2) if h.path == "a.py"} == {shas["a2"]}
    # #1 as #2's history holds it (A1): A3's c.py, pushed since, is not in the stack audited
    assert {h.path for h in changes.hunks_of(1)} == {"a.py"}
    assert [(pr.head_sha, pr.pr_head) for pr in changes.prs if pr.number == 1] == [(shas["a1"], shas["a3"])]


def test_rebased_and_force_pushed_parent_found_by_marker(git_repo: GitRepo) -> None:
    shas = _force_pushed(git_repo, rebase_parent=True)
    # no sha in common any more: only a marker points at #1, content (patch-ids) confirms it
    git_repo.branch("b", "refs/pull/2/head")
    git_repo.commit("B docs\n\nDepends on #1", {"b.py": edit(edit(A0, 5, "b"), 50, "b docs")})
    git_repo.pr_ref(2)
    stack = read_graph(GitClone(git_repo.path), [2])
    edge = stack.edge(1, 2)
    assert edge is not None
    assert edge.evidence == (Evidence.PATCH_ID, Evidence.MARKER)
    assert edge.markers == ("Depends on #1",)
    assert edge.stale is not None
    assert edge.stale.carries == (shas["a2"],)
    assert shas["a3"] in edge.stale.lacks
    changes = load_changes(GitClone(git_repo.path), [2])
    assert paths_of(changes, 2) == {"a.py", "b.py"}  # the stale copy of A2 is judged as #2's


def test_parent_merged_with_a_merge_commit(git_repo: GitRepo) -> None:
    base_repo(git_repo)
    git_repo.branch("a")
    git_repo.commit("A", {"a.py": edit(A0, 5, "a")})
    git_repo.pr_ref(1)
    git_repo.branch("b")
    git_repo.commit("B", {"b.py": edit(A0, 5, "b")})
    git_repo.pr_ref(2)
    git_repo.branch("main", "main")
    git_repo.commit("main moves on", {"c.py": edit(A0, 30, "main")})
    git_repo.git("merge", "--no-ff", "--quiet", "-m", "Merge #1", "a")
    src = GitClone(git_repo.path)
    stack = read_graph(src, [2])
    assert stack.order == (1, 2)
    assert evidence(stack, 1, 2) == (Evidence.ANCESTRY,)
    assert stack.states[1] is PRState.MERGED and stack.facts[1].merged == "ancestry"
    changes = load_changes(src, [2])
    assert paths_of(changes, 1) == {"a.py"}  # judged from its own fork point, not empty
    assert paths_of(changes, 2) == {"b.py"}  # not recounted in the child
    assert changes.prs[0].merged and not changes.prs[1].merged


@pytest.mark.parametrize("how", ["squash", "rebase"])
@pytest.mark.slow
def test_parent_squash_or_rebase_merged(git_repo: GitRepo, how: str) -> None:
    base_repo(git_repo)
    git_repo.branch("a")
    a1 = git_repo.commit("A1", {"a.py": edit(A0, 5, "a1")})
    a2 = git_repo.commit("A2", {"a.py": edit(edit(A0, 5, "a1"), 40, "a2")})
    git_repo.pr_ref(1)
    git_repo.branch("b")
    git_repo.commit("B", {"b.py": edit(A0, 5, "b")})
    git_repo.pr_ref(2)
    git_repo.branch("main", "main")
    git_repo.commit("main moves on", {"c.py": edit(A0, 30, "main")})
    if how == "squash":
        git_repo.git("merge", "--squash", "--quiet", "a")
        git_repo.git("commit", "--quiet", "-m", "A (#1)")
    else:
        git_repo.git("cherry-pick", a1, a2)
    src = GitClone(git_repo.path)
    stack = read_graph(src, [2])
    assert stack.order == (1, 2)
    assert stack.states[1] is PRState.MERGED
    assert stack.facts[1].merged == how
    assert stack.states[2] is PRState.OPEN
    changes = load_changes(src, [2])
    assert paths_of(changes, 1) == {"a.py"}
    assert paths_of(changes, 2) == {"b.py"}


def test_three_level_stack(git_repo: GitRepo) -> None:
    base_repo(git_repo)
    for number, path in ((1, "a.py"), (2, "b.py"), (3, "c.py")):
        git_repo.branch(f"pr{number}")
        git_repo.commit(f"PR {number}", {path: edit(A0, 5, f"pr {number}")})
        git_repo.pr_ref(number)
    src = GitClone(git_repo.path)
    stack = read_graph(src, [3])
    assert stack.order == (1, 2, 3)
    assert stack.parents == {1: (), 2: (1,), 3: (2,)}
    assert [(e.parent, e.child) for e in stack.edges] == [(1, 2), (2, 3)]
    changes = load_changes(src, [3])
    assert [paths_of(changes, n) for n in (1, 2, 3)] == [{"a.py"}, {"b.py"}, {"c.py"}]


def test_two_children_of_one_parent(git_repo: GitRepo) -> None:
    base_repo(git_repo)
    git_repo.branch("a")
    a = git_repo.commit("A", {"a.py": edit(A0, 5, "a")})
    git_repo.pr_ref(1)
    git_repo.branch("b")
    git_repo.commit("B", {"b.py": edit(A0, 5, "b")})
    git_repo.pr_ref(2)
    git_repo.branch("c", a)
    git_repo.commit("C", {"c.py": edit(A0, 5, "c")})
    git_repo.pr_ref(3)
    src = GitClone(git_repo.path)
    stack = read_graph(src, [2, 3])
    assert stack.order == (1, 2, 3)
    assert stack.children(1) == (2, 3)
    assert stack.parents[2] == (1,) and stack.parents[3] == (1,)
    changes = load_changes(src, [2, 3])
    assert [paths_of(changes, n) for n in (1, 2, 3)] == [{"a.py"}, {"b.py"}, {"c.py"}]
    # asking for one child does not drag its sibling in
    assert read_graph(src, [3]).order == (1, 3)


def test_marker_in_body_backed_by_content(git_repo: GitRepo) -> None:
    base_repo(git_repo)
    git_repo.branch("a")
    a = git_repo.commit("A", {"a.py": edit(A0, 5, "a")})
    git_repo.pr_ref(1)
    git_repo.branch("b")
    b = git_repo.commit("B", {"b.py": edit(A0, 5, "b")})
    git_repo.pr_ref(2)
    meta = {2: PullRequest(2, b, "", body="Stacked on #1, please review that first."),
            1: PullRequest(1, a, "")}
    stack = read_graph(GitClone(git_repo.path), [2], meta)
    edge = stack.edge(1, 2)
    assert edge is not None and edge.evidence == (Evidence.ANCESTRY, Evidence.MARKER)
    assert edge.markers == ("Stacked on #1",)
    assert stack.unconfirmed == ()


def test_marker_without_content_is_unconfirmed_and_missing_ref_named(git_repo: GitRepo) -> None:
    base_repo(git_repo)
    git_repo.branch("a")
    git_repo.commit("A", {"a.py": edit(A0, 5, "a")})
    git_repo.pr_ref(1)
    git_repo.branch("b", "main")
    git_repo.commit("B\n\nDepends on #1\nBased on #999", {"b.py": edit(A0, 5, "b")})
    git_repo.pr_ref(2)
    src = GitClone(git_repo.path)
    stack = read_graph(src, [2])
    assert stack.order == (2,)
    assert stack.edges == ()
    [unconfirmed] = stack.unconfirmed
    assert (unconfirmed.parent, unconfirmed.child) == (1, 2)
    assert unconfirmed.markers == ("Depends on #1",)
    assert "holds neither" in unconfirmed.reason
    [missing] = stack.missing
    assert (missing.number, missing.child) == (999, 2)
    assert "fetch https://github.com/OWNER/NAME.git '+refs/pull/999/head:refs/pull/999/head'" in missing.fetch
    # the hunks are still the child's own change only
    assert paths_of(load_changes(src, [2]), 2) == {"b.py"}


def test_cycle_in_markers_is_reported_not_crashed(git_repo: GitRepo) -> None:
    base_repo(git_repo)
    git_repo.branch("a")
    git_repo.commit("A\n\nDepends on #2", {"a.py": edit(A0, 5, "a")})
    git_repo.pr_ref(1)
    git_repo.branch("b", "main")
    git_repo.commit("B\n\nDepends on #1", {"b.py": edit(A0, 5, "b")})
    git_repo.pr_ref(2)
    stack = read_graph(GitClone(git_repo.path), [1, 2])
    assert stack.cycles == ((1, 2),)
    assert {(u.parent, u.child) for u in stack.unconfirmed} == {(1, 2), (2, 1)}
    assert stack.order == (1, 2) and stack.edges == ()


def test_ghstack_trailers_name_the_commits_own_prs(git_repo: GitRepo) -> None:
    base_repo(git_repo)
    url = "https://github.com/o/r/pull"
    git_repo.branch("gh/u/1/head")
    git_repo.commit(f"A\n\nghstack-source-id: 1a2b\nPull Request resolved: {url}/1",
                    {"a.py": edit(A0, 5, "a")})
    git_repo.pr_ref(1)
    git_repo.commit(f"B\n\nghstack-source-id: 3c4d\nPull Request resolved: {url}/2",
                    {"b.py": edit(A0, 5, "b")})
    git_repo.pr_ref(2)
    stack = read_graph(GitClone(git_repo.path), [2])
    edge = stack.edge(1, 2)
    assert edge is not None and edge.evidence == (Evidence.ANCESTRY, Evidence.MARKER)
    assert edge.markers == (f"Pull Request resolved: {url}/1",)


def test_spr_commit_id_ties_an_edited_copy(git_repo: GitRepo) -> None:
    """The child holds a copy of the parent's commit that was amended (another patch) but keeps
    the spr commit-id: matched by commit-id, and the child's own change starts after it."""
    base_repo(git_repo)
    git_repo.branch("a")
    git_repo.commit("A\n\ncommit-id: 8a3b1c2d", {"a.py": edit(A0, 5, "a v2")})
    git_repo.pr_ref(1)
    git_repo.branch("b", "main")
    git_repo.commit("A (older)\n\ncommit-id: 8a3b1c2d", {"a.py": edit(A0, 5, "a v1")})
    git_repo.commit("B", {"b.py": edit(A0, 5, "b")})
    git_repo.pr_ref(2)
    src = GitClone(git_repo.path)
    stack = read_graph(src, [2, 1])
    edge = stack.edge(1, 2)
    assert edge is not None
    assert [m.how.value for m in edge.matches] == ["commit-id"]
    assert edge.stale is None
    assert paths_of(load_changes(src, [2]), 2) == {"b.py"}


def test_unrelated_prs_stay_apart(git_repo: GitRepo) -> None:
    base_repo(git_repo)
    git_repo.branch("a")
    git_repo.commit("Same subject", {"a.py": edit(A0, 5, "a")})
    git_repo.pr_ref(1)
    git_repo.branch("b", "main")
    git_repo.commit("Same subject", {"b.py": edit(A0, 5, "b")})
    git_repo.pr_ref(2)
    stack = read_graph(GitClone(git_repo.path), [2, 1])
    assert stack.edges == () and stack.order == (1, 2)


def test_missing_requested_pr_names_the_fetch(git_repo: GitRepo) -> None:
    from prstack.errors import InputError

    base_repo(git_repo)
    with pytest.raises(InputError, match=r"refs/pull/7/head"):
        read_graph(GitClone(git_repo.path), [7])


def test_commit_graph_under_the_stack(git_repo: GitRepo) -> None:
    shas = _force_pushed(git_repo, rebase_parent=False)
    stack = read_graph(GitClone(git_repo.path), [2])
    assert stack.owner(shas["new2"]) == 1
    b_head = stack.facts[2].head
    assert stack.own_commits(2) == (shas["a2"], b_head)
    assert stack.owner(shas["a2"]) == 2  # the stale copy is judged under the child that carries it
    assert stack.owner(shas["a1"]) == 1


def test_marker_to_a_parent_squash_merged_before_the_child_was_rebased(git_repo: GitRepo) -> None:
    base_repo(git_repo)
    git_repo.branch("a")
    git_repo.commit("A1", {"a.py": edit(A0, 5, "a1")})
    git_repo.commit("A2", {"a.py": edit(edit(A0, 5, "a1"), 40, "a2")})
    git_repo.pr_ref(1)
    git_repo.branch("main", "main")
    git_repo.git("merge", "--squash", "--quiet", "a")
    git_repo.git("commit", "--quiet", "-m", "A (#1)")
    git_repo.branch("b")  # rebased onto main after #1 landed: holds none of #1's commits
    git_repo.commit("B\n\nDepends on #1", {"b.py": edit(A0, 5, "b")})
    git_repo.pr_ref(2)
    src = GitClone(git_repo.path)
    stack = read_graph(src, [2])
    assert stack.order == (1, 2)
    assert evidence(stack, 1, 2) == (Evidence.MARKER,)
    assert stack.states[1] is PRState.MERGED and stack.facts[1].merged == "squash"
    assert stack.unconfirmed == ()
    changes = load_changes(src, [2])
    assert paths_of(changes, 1) == {"a.py"}
    assert paths_of(changes, 2) == {"b.py"}


def test_fast_forward_merged_pr_needs_base(git_repo: GitRepo) -> None:
    from prstack.errors import InputError

    first = base_repo(git_repo)
    git_repo.commit("A", {"a.py": edit(A0, 5, "a")})
    git_repo.pr_ref(1)  # its head is on main itself: merged by fast-forward
    src = GitClone(git_repo.path)
    with pytest.raises(InputError, match="`base`"):
        read_graph(src, [1])
    changes = load_changes(src, [1], base=first)
    assert paths_of(changes, 1) == {"a.py"}
    assert changes.stack.states[1] is PRState.MERGED


def test_an_amended_parent_s_edited_copy_alone_makes_no_edge(git_repo: GitRepo) -> None:
    """The parent's only commit was amended after the child was built: no sha or patch-id in
    common, same subject and author. The branch holds none of the parent's change as it is now:
    the parent is not under the child, whose own change keeps the copy (nothing goes unjudged)."""
    base_repo(git_repo)
    git_repo.branch("a")
    old = git_repo.commit("Fix the offset", {"a.py": edit(A0, 5, "fix v1")})
    git_repo.branch("b")
    git_repo.commit("Feature", {"b.py": edit(A0, 5, "b")})
    git_repo.pr_ref(2)
    git_repo.branch("a", "main")
    git_repo.commit("Fix the offset", {"a.py": edit(A0, 5, "fix v2")})
    git_repo.pr_ref(1)
    src = GitClone(git_repo.path)
    stack = read_graph(src, [2])
    assert stack.edge(1, 2) is None and stack.order == (2,)
    assert stack.states[2] is PRState.OPEN
    changes = load_changes(src, [2])
    assert paths_of(changes, 2) == {"a.py", "b.py"}
    assert {h.commit for h in changes.hunks_of(2) if h.path == "a.py"} == {old}


def test_namesake_commits_in_other_files_are_no_copy(git_repo: GitRepo) -> None:
    base_repo(git_repo)
    git_repo.branch("a")
    git_repo.commit("Update docs", {"a.py": edit(A0, 5, "a")})
    git_repo.pr_ref(1)
    git_repo.branch("b", "main")
    git_repo.commit("Update docs", {"b.py": edit(A0, 5, "b")})
    git_repo.commit("Feature", {"c.py": edit(A0, 5, "c")})
    git_repo.pr_ref(2)
    stack = read_graph(GitClone(git_repo.path), [2])
    assert stack.order == (2,) and stack.edges == ()


def test_base_branch_of_a_pr_missing_from_the_clone(git_repo: GitRepo) -> None:
    base_repo(git_repo)
    git_repo.branch("b")
    b = git_repo.commit("B", {"b.py": edit(A0, 5, "b")})
    git_repo.pr_ref(2)
    meta = {
        2: PullRequest(2, b, "", head_ref="feature-b", base_ref="feature-x"),
        5: PullRequest(5, "", "", head_ref="feature-x", base_ref="main", state="merged"),
    }
    stack = read_graph(GitClone(git_repo.path), [2], meta)
    [missing] = stack.missing
    assert (missing.number, missing.child, missing.markers) == (5, 2, ())
    assert "refs/pull/5/head" in missing.fetch


def test_github_says_merged(git_repo: GitRepo) -> None:
    base_repo(git_repo)
    git_repo.branch("a")
    a = git_repo.commit("A", {"a.py": edit(A0, 5, "a")})
    git_repo.pr_ref(1)
    meta = {1: PullRequest(1, a, "", state="merged")}
    stack = read_graph(GitClone(git_repo.path), [1], meta)
    assert stack.states[1] is PRState.MERGED and stack.facts[1].merged == "github"


def test_parent_rebased_and_extended_found_without_marker(git_repo: GitRepo) -> None:
    """No sha in common, the parent's head is a new commit: found by the subjects of its commits,
    confirmed by patch-ids; a PR stacked on the new parent does not stand in for it."""
    shas = _force_pushed(git_repo, rebase_parent=True)
    git_repo.branch("d", "refs/pull/1/head")
    git_repo.commit("D on the new A", {"b.py": edit(A0, 20, "d")})
    git_repo.pr_ref(4)
    stack = read_graph(GitClone(git_repo.path), [2])
    assert stack.order == (1, 2)
    edge = stack.edge(1, 2)
    assert edge is not None and edge.evidence == (Evidence.PATCH_ID,)
    assert edge.stale is not None and edge.stale.carries == (shas["a2"],)
    assert paths_of(load_changes(GitClone(git_repo.path), [2]), 2) == {"a.py", "b.py"}


def test_marker_in_body_without_content_is_unconfirmed(git_repo: GitRepo) -> None:
    base_repo(git_repo)
    git_repo.branch("a")
    a = git_repo.commit("A", {"a.py": edit(A0, 5, "a")})
    git_repo.pr_ref(1)
    git_repo.branch("b", "main")
    b = git_repo.commit("B", {"b.py": edit(A0, 5, "b")})
    git_repo.pr_ref(2)
    meta = {1: PullRequest(1, a, ""), 2: PullRequest(2, b, "", body="Depends on #1 (I think)")}
    stack = read_graph(GitClone(git_repo.path), [2], meta)
    assert stack.edges == ()
    assert [(u.parent, u.child, u.markers) for u in stack.unconfirmed] == [(1, 2, ("Depends on #1",))]


def test_child_that_merged_main_after_its_parent(git_repo: GitRepo) -> None:
    base_repo(git_repo)
    git_repo.branch("a")
    git_repo.commit("A", {"a.py": edit(A0, 5, "a")})
    git_repo.pr_ref(1)
    git_repo.branch("b")
    git_repo.commit("B1", {"b.py": edit(A0, 5, "b1")})
    git_repo.branch("main", "main")
    upstream = git_repo.commit("main moves on", {"c.py": edit(A0, 30, "main")})
    git_repo.branch("b", "b")
    git_repo.git("merge", "--quiet", "--no-edit", "main")
    b2 = git_repo.commit("B2", {"b.py": edit(edit(A0, 5, "b1"), 50, "b2")})
    git_repo.pr_ref(2)
    src = GitClone(git_repo.path)
    changes = load_changes(src, [2])
    assert changes.stack.order == (1, 2)
    assert paths_of(changes, 2) == {"b.py"}  # main's c.py change came in by the merge
    assert upstream not in {c.sha for c in changes.prs[1].commits}
    assert b2 in {c.sha for c in changes.prs[1].commits}


def test_stack_list_in_body_is_a_marker(git_repo: GitRepo) -> None:
    base_repo(git_repo)
    git_repo.branch("a")
    a = git_repo.commit("A", {"a.py": edit(A0, 5, "a")})
    git_repo.pr_ref(1)
    git_repo.branch("b")
    b = git_repo.commit("B", {"b.py": edit(A0, 5, "b")})
    git_repo.pr_ref(2)
    body = "Stack from [ghstack](https://github.com/ezyang/ghstack):\n* __->__ #2\n* #1\n"
    meta = {1: PullRequest(1, a, ""), 2: PullRequest(2, b, "", body=body)}
    stack = read_graph(GitClone(git_repo.path), [2], meta)
    edge = stack.edge(1, 2)
    assert edge is not None and edge.evidence == (Evidence.ANCESTRY, Evidence.MARKER)
    assert edge.markers == ("stack list: #1 below #2",)
