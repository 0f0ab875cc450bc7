"""Provenance: every hunk of a PR's own change lists the commits that introduced its lines."""

from __future__ import annotations

from conftest import GitRepo
from prstack.sources.git.changes import load_changes
from prstack.sources.git.repo import GitClone

TEXT = "".join(f"row {i}\n" for i in range(40))


def rows(**changes: str) -> str:
    out = TEXT.splitlines()
    for key, value in changes.items():
        out[int(key[1:])] = value
    return "\n".join(out) + "\n"


def test_each_hunk_names_the_commits_of_its_lines(git_repo: GitRepo) -> None:
    git_repo.commit("base", {"m.py": TEXT})
    git_repo.branch("a")
    c1 = git_repo.commit("first", {"m.py": rows(r3="first")})
    c2 = git_repo.commit("second", {"m.py": rows(r3="first", r4="second")})
    c3 = git_repo.commit("far away", {"m.py": rows(r3="first", r4="second", r30="far")})
    git_repo.pr_ref(1)
    changes = load_changes(GitClone(git_repo.path), [1])
    near, far = changes.hunks_of(1)
    assert near.commits == (c1, c2) and near.commit == c2
    assert far.commits == (c3,)


def test_child_hunks_hold_a_stale_parent_copy_and_not_the_parent_s_exact_copies(git_repo: GitRepo) -> None:
    """The child carries an old copy of its parent: the parent's commits it holds exactly are the
    parent's; the edited copy (A2 old), in no PR's own range otherwise, is judged as the child's.
    The parent is judged as the child's history holds it (A1): its newer A2 is not in the stack."""
    git_repo.commit("base", {"m.py": TEXT, "n.py": TEXT})
    git_repo.branch("a")
    a1 = git_repo.commit("A1", {"m.py": rows(r3="a1")})
    a2 = git_repo.commit("A2", {"m.py": rows(r3="a1", r20="a2 old")})
    git_repo.branch("b")
    b1 = git_repo.commit("B1", {"n.py": rows(r5="b1")})
    b2 = git_repo.commit("B2", {"m.py": rows(r3="a1", r20="a2 old", r35="b2")})
    git_repo.pr_ref(2)
    git_repo.branch("a", a1)
    new = git_repo.commit("A2", {"m.py": rows(r3="a1", r20="a2 new")})
    git_repo.pr_ref(1)
    changes = load_changes(GitClone(git_repo.path), [2])
    assert changes.stack.states[2].value == "stale"
    mine = changes.hunks_of(2)
    assert [(h.path, h.commits) for h in mine] == [("m.py", (a2,)), ("m.py", (b2,)), ("n.py", (b1,))]
    assert all("a1" not in line.text for h in mine for line in h.lines if line.kind != " ")
    assert any(line.text == "a2 old" for h in mine for line in h.lines if line.kind == "+")
    theirs = changes.hunks_of(1)
    assert [h.commits for h in theirs] == [(a1,)]
    assert not any("a2" in line.text for h in theirs for line in h.lines)
    (parent,) = [pr for pr in changes.prs if pr.number == 1]
    assert (parent.head_sha, parent.pr_head) == (a1, new)


def test_rebased_child_hunks_name_only_its_own_commits(git_repo: GitRepo) -> None:
    git_repo.commit("base", {"m.py": TEXT})
    git_repo.branch("a")
    a1 = git_repo.commit("A1", {"m.py": rows(r3="a1")})
    git_repo.pr_ref(1)
    git_repo.branch("main", "main")
    git_repo.commit("main moves", {"other.py": "x\n"})
    git_repo.branch("b")
    git_repo.git("cherry-pick", a1)
    copy = git_repo.git("rev-parse", "HEAD")
    b1 = git_repo.commit("B1", {"m.py": rows(r3="a1", r30="b1")})
    git_repo.pr_ref(2)
    changes = load_changes(GitClone(git_repo.path), [2])
    [hunk] = changes.hunks_of(2)
    assert hunk.commits == (b1,)
    # #1 as the child's history holds it: its rebased copy
    assert [h.commits for h in changes.hunks_of(1)] == [(copy,)]
    assert [(pr.head_sha, pr.pr_head) for pr in changes.prs if pr.number == 1] == [(copy, a1)]


def test_stale_state_reaches_the_pull_request(git_repo: GitRepo) -> None:
    git_repo.commit("base", {"m.py": TEXT})
    git_repo.branch("a")
    a1 = git_repo.commit("A1", {"m.py": rows(r3="a1")})
    git_repo.commit("A2", {"m.py": rows(r3="a1", r20="old")})
    git_repo.branch("b")
    git_repo.commit("B1", {"n.py": "b\n"})
    git_repo.pr_ref(2)
    git_repo.branch("a", a1)
    git_repo.commit("A2", {"m.py": rows(r3="a1", r20="new")})
    git_repo.pr_ref(1)
    changes = load_changes(GitClone(git_repo.path), [2])
    assert [(p.number, p.state, p.depends_on) for p in changes.prs] == [(1, "open", ()), (2, "stale", (1,))]


def test_a_hunk_names_the_commits_of_the_prs_built_on_it_that_changed_its_file(git_repo: GitRepo) -> None:
    """`touched_above`: of the PRs stacked on a hunk's PR (directly or not, not a sibling), the
    commits that changed the hunk's file, in stack order; a file none of them changed names none."""
    git_repo.commit("base", {"m.py": TEXT, "n.py": TEXT, "o.py": TEXT})
    git_repo.branch("a")
    git_repo.commit("A1", {"m.py": rows(r3="a1"), "n.py": rows(r3="a1"), "o.py": rows(r3="a1")})
    git_repo.pr_ref(1)
    git_repo.branch("b")
    b1 = git_repo.commit("B1", {"m.py": rows(r3="a1", r10="b1")})
    git_repo.pr_ref(2)
    git_repo.branch("c")
    c1 = git_repo.commit("C1", {"n.py": rows(r3="a1", r20="c1")})
    c2 = git_repo.commit("C2", {"m.py": rows(r3="a1", r10="b1", r30="c2")})
    git_repo.pr_ref(3)
    git_repo.branch("d", "a")
    d1 = git_repo.commit("D1", {"m.py": rows(r3="a1", r35="d1")})
    git_repo.pr_ref(4)
    changes = load_changes(GitClone(git_repo.path), [3, 4])
    above = {(h.pr, h.path): h.touched_above for h in changes.hunks}
    in_stack_order = {2: (b1,), 3: (c2,), 4: (d1,)}
    order = [n for n in changes.stack.order if n in in_stack_order]
    assert above[(1, "m.py")] == tuple(sha for n in order for sha in in_stack_order[n])
    assert above[(1, "n.py")] == (c1,) and above[(1, "o.py")] == ()
    assert above[(2, "m.py")] == (c2,)  # not the sibling #4's
    assert above[(3, "n.py")] == above[(3, "m.py")] == above[(4, "m.py")] == ()
