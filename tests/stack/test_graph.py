"""The pure stack logic on literal data: matching copies, relating PRs, building the graph."""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping
from dataclasses import replace

import pytest

from prstack.models import Commit
from prstack.stack.copies import copy_candidates, match_copies, may_hold_copies
from prstack.stack.facts import Evidence, MatchKind, PRFacts, StackEdge, Unconfirmed
from prstack.stack.graph import PRState, build_stack, relate


def c(sha: str, subject: str, message: str = "") -> Commit:
    return Commit(sha * 40 if len(sha) == 1 else sha, (), subject, "ada", message or subject)


def facts(number: int, commits: list[Commit], own: int | None = None, **kw: object) -> PRFacts:
    return PRFacts(
        number=number,
        head=commits[-1].sha,
        fork_point="0" * 40,
        commits=tuple(commits),
        own=tuple(commits[own:] if own is not None else commits),
        **kw,  # type: ignore[arg-type]
    )


def test_match_copies_prefers_sha_then_patch_then_commit_id_then_subject() -> None:
    parent = [c("a", "A"), c("b", "B"), c("d", "D", "D\n\ncommit-id: 12345678"), c("e", "E")]
    child = [c("a", "A"), c("x", "B"), c("y", "D2", "D2\n\ncommit-id: 12345678"), c("z", "E")]
    pids = {"b" * 40: "p1", "x" * 40: "p1"}
    got = [(m.parent_sha[0], m.child_sha[0], m.how) for m in match_copies(parent, child, pids)]
    assert got == [
        ("a", "a", MatchKind.SHA),
        ("b", "x", MatchKind.PATCH_ID),
        ("d", "y", MatchKind.COMMIT_ID),
        ("e", "z", MatchKind.SUBJECT),
    ]


def test_subject_match_needs_a_common_path() -> None:
    parent, child = [c("a", "Docs")], [c("b", "Docs")]
    paths = {"a" * 40: frozenset({"x.py"}), "b" * 40: frozenset({"y.py"})}
    assert match_copies(parent, child, {}, paths) == []
    paths["b" * 40] = frozenset({"x.py", "z.py"})
    assert len(match_copies(parent, child, {}, paths)) == 1


class ReadLog(Mapping[str, str]):
    """Patch-ids that remember which were read (a source computes them on demand)."""

    def __init__(self, ids: dict[str, str]) -> None:
        self.ids = ids
        self.read: set[str] = set()

    def __getitem__(self, sha: str) -> str:
        self.read.add(sha)
        return self.ids[sha]

    def __contains__(self, sha: object) -> bool:
        return sha in self.ids

    def __iter__(self) -> Iterator[str]:
        return iter(self.ids)

    def __len__(self) -> int:
        return len(self.ids)


def test_patch_ids_read_only_where_the_paths_agree() -> None:
    """Equal patch-ids change the same paths: a commit whose paths no commit on the other side
    changes is matched without reading its patch-id (which can take a second to compute)."""
    parent = [c("a", "A"), c("b", "B"), c("h", "Huge")]
    child = [c("x", "A again"), c("y", "B again"), c("z", "Z")]
    one, two, huge = frozenset({"one.py"}), frozenset({"two.py"}), frozenset({"huge.py", "one.py"})
    paths = {"a" * 40: one, "b" * 40: two, "h" * 40: huge, "x" * 40: one, "y" * 40: frozenset({"two.py", "3"}),
             "z" * 40: frozenset({"z.py"})}
    pids = ReadLog({sha * 40: f"p{sha}" for sha in "abhyz"} | {"x" * 40: "pa"})
    assert copy_candidates(parent, child, pids, paths) == {"a" * 40, "x" * 40}
    got = [(m.parent_sha[0], m.child_sha[0], m.how) for m in match_copies(parent, child, pids, paths)]
    assert got == [("a", "x", MatchKind.PATCH_ID)]
    assert pids.read == {"a" * 40, "x" * 40}
    # unknown paths on one side: every patch-id on the other may match, all are read
    del paths["z" * 40]
    assert copy_candidates(parent, child, pids, paths) == {sha * 40 for sha in "abhxz"}
    assert copy_candidates(parent, child, pids, None) == {sha * 40 for sha in "abhxyz"}


def test_relate_needs_own_commits_beyond_the_copy() -> None:
    a = facts(1, [c("a", "A")], patch_ids={"a" * 40: "p"})
    copy_only = facts(2, [c("b", "A")], patch_ids={"b" * 40: "p"})
    assert relate(a, copy_only) is None
    stacked = facts(2, [c("b", "A"), c("c", "C")], patch_ids={"b" * 40: "p"})
    edge = relate(a, stacked)
    assert edge is not None and edge.tip == "b" * 40 and edge.stale is None


def test_relate_ends_the_parent_s_part_where_the_child_has_its_head_s_files() -> None:
    """The child holds the parent's first commit, then a commit with the files of the parent's
    updated head (no copy of its commits): the parent's part ends there, and the edge is not
    stale; the child's last commit never counts (then it would hold nothing of its own)."""
    parent = facts(1, [c("a", "A"), replace(c("m", "Update A"), tree="t2")])
    child = facts(2, [c("a", "A"), replace(c("b", "Update base"), tree="t2"), c("d", "D")])
    edge = relate(parent, child)
    assert edge is not None and edge.tip == "b" * 40 and edge.stale is None
    older = facts(2, [c("a", "A"), c("b", "Update base"), c("d", "D")])
    edge = relate(parent, older)
    assert edge is not None and edge.tip == "a" * 40 and edge.stale is not None
    same = facts(2, [c("a", "A"), replace(c("b", "Update base"), tree="t2")])
    edge = relate(parent, same)
    assert edge is not None and edge.tip == "a" * 40 and edge.stale is not None


def test_relate_sibling_without_shared_head_is_no_parent() -> None:
    sibling = facts(5, [c("a", "A"), c("b", "B")], own=1)
    child = facts(3, [c("a", "A"), c("c", "C")], own=1)
    assert relate(sibling, child) is None


def edges_for(pairs: list[tuple[int, int]]) -> list[StackEdge]:
    return [StackEdge(p, ch, (Evidence.ANCESTRY,), f"{p:040d}") for p, ch in pairs]


@pytest.mark.parametrize("seed", range(5))
def test_build_stack_is_order_independent(seed: int) -> None:
    pairs = [(1, 2), (2, 3), (1, 3), (1, 4), (4, 5), (2, 5)]
    random.Random(seed).shuffle(pairs)
    stack = build_stack([5, 3], {}, edges_for(pairs))
    assert stack.order == (1, 2, 3, 4, 5)
    assert stack.parents == {1: (), 2: (1,), 3: (2,), 4: (1,), 5: (2, 4)}
    assert stack.children(1) == (2, 4)


def test_cycles_are_reported_and_dropped() -> None:
    stack = build_stack(
        [1],
        {},
        edges_for([(1, 2), (2, 1), (2, 3)]),
        [Unconfirmed(4, 3, ("Depends on #4",), "no"), Unconfirmed(3, 4, ("x",), "no")],
    )
    assert set(stack.cycles) == {(1, 2), (3, 4)}
    assert [(e.parent, e.child) for e in stack.edges] == [(2, 3)]


def test_a_cycle_keeps_its_edge_of_ancestry() -> None:
    """Copies claim 3 under 1 and 1 under 2 while 2's head is in 3's history: the cycle is
    reported and only the claims of copies are dropped."""
    copies = [StackEdge(p, ch, (Evidence.PATCH_ID,), f"{p:040d}") for p, ch in [(1, 2), (3, 1)]]
    stack = build_stack([3], {}, [*copies, *edges_for([(2, 3)])])
    assert stack.cycles == ((1, 2, 3),)
    assert [(e.parent, e.child) for e in stack.edges] == [(2, 3)]
    assert stack.parents[3] == (2,)


def test_states() -> None:
    a = facts(1, [c("a", "A")], merged="squash")
    b = facts(2, [c("a", "A"), c("b", "B")], own=1)
    stale = StackEdge(1, 2, (Evidence.PATCH_ID,), "a" * 40, stale=None)
    stack = build_stack([2], {1: a, 2: b}, [stale])
    assert stack.states == {1: PRState.MERGED, 2: PRState.OPEN}
    assert stack.base_of(2) == "a" * 40 and stack.own_commits(2) == ("b" * 40,)


def test_only_prs_with_something_in_common_may_hold_copies() -> None:
    """The cheap test before matching copies: a shared sha, commit-id, subject and author, or
    changed paths (a patch-id's input) let a pair through; unknown paths let anything through."""
    p = facts(1, [c("a", "Fix the parser")], paths={"a" * 40: frozenset({"x.py"})})
    unrelated = facts(2, [c("b", "Add docs"), c("d", "Tidy")],
                      paths={"b" * 40: frozenset({"doc.md"}), "d" * 40: frozenset({"y.py"})})
    assert not may_hold_copies(p, unrelated)
    assert relate(p, unrelated) is None
    namesake = facts(3, [c("e", "Fix the parser"), c("f", "More")],
                     paths={"e" * 40: frozenset({"z.py"}), "f" * 40: frozenset({"w.py"})})
    assert may_hold_copies(p, namesake)
    same_paths = facts(4, [c("g", "Reworded"), c("h", "More")],
                       paths={"g" * 40: frozenset({"x.py"}), "h" * 40: frozenset({"w.py"})})
    assert may_hold_copies(p, same_paths)
    by_id = facts(5, [c("i", "Other", "Other\n\ncommit-id: 4242abcd"), c("j", "More")],
                  paths={"i" * 40: frozenset({"q.py"}), "j" * 40: frozenset({"w.py"})})
    p_id = facts(6, [c("k", "Fix", "Fix\n\ncommit-id: 4242abcd")], paths={"k" * 40: frozenset({"x.py"})})
    assert may_hold_copies(p_id, by_id) and not may_hold_copies(p, by_id)
    assert may_hold_copies(p, facts(7, [c("l", "Add docs"), c("m", "Tidy")]))  # paths unknown


def test_undone_needs_every_commit_reverted_and_each_revert_kept() -> None:
    """A revert undoes what it names only when it comes later; a revert of the revert brings it back."""
    a, b, r, rr = c("a", "A"), c("b", "B"), c("r", "Revert A"), c("s", "Revert Revert A")
    child = facts(2, [a, b, r], reverts={r.sha: a.sha})
    assert child.undone([a.sha]) and not child.undone([a.sha, b.sha]) and not child.undone([])
    assert not facts(2, [a, b, r, rr], reverts={r.sha: a.sha, rr.sha: r.sha}).undone([a.sha])
    assert not facts(2, [r, a], reverts={r.sha: a.sha}).undone([a.sha])
    parent = facts(1, [a])
    assert relate(parent, child) is None
    assert relate(parent, facts(2, [a, b])) is not None
