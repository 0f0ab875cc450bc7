"""The PR and commit graphs: which PR builds on which, why, in what state. Pure; networkx inside
where evidence contradicts itself (a cycle), our own few lines (`stack.dag`) otherwise."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from prstack.models import Commit, PRState
from prstack.stack.copies import (
    _Layered,
    match_copies,
    may_hold_copies,
)
from prstack.stack.dag import CommitGraph, direct_parents, is_acyclic, lowest_first_order
from prstack.stack.facts import Evidence, MatchKind, MissingParent, PRFacts, StackEdge, Stale, Unconfirmed

if TYPE_CHECKING:
    import networkx as nx


@dataclass(frozen=True)
class Stack:
    """PRs bottom-first with their direct parents, evidence, states and the commit DAG beneath."""

    order: tuple[int, ...]
    """Topological order: every PR after the PRs it builds on."""
    parents: Mapping[int, tuple[int, ...]]
    edges: tuple[StackEdge, ...]
    cycles: tuple[tuple[int, ...], ...] = ()
    """Contradictory evidence: PRs that claim to build on each other (reported; the cycle's edges
    dropped, but for those of ancestry)."""
    facts: Mapping[int, PRFacts] = field(default_factory=dict)
    states: Mapping[int, PRState] = field(default_factory=dict)
    unconfirmed: tuple[Unconfirmed, ...] = ()
    missing: tuple[MissingParent, ...] = ()
    commit_graph: CommitGraph = field(default_factory=CommitGraph, compare=False, repr=False)
    """Commits of every PR in the stack (edges parent -> child commit; node attribute 'pr')."""

    def edge(self, parent: int, child: int) -> StackEdge | None:
        return next((e for e in self.edges if e.parent == parent and e.child == child), None)

    def base_of(self, number: int) -> str | None:
        """Where the PR's own change starts when a PR is below it: the latest parent tip."""
        incoming = [e for e in self.edges if e.child == number]
        if not incoming:
            return None
        facts = self.facts.get(number)
        position = {c.sha: i for i, c in enumerate(facts.commits)} if facts else {}
        return max(incoming, key=lambda e: position.get(e.tip, -1)).tip

    def tips_of(self, number: int) -> tuple[str, ...]:
        """Where each parent's part of the PR's history ends (a tip per parent, several for a PR
        that collects others: a merge queue's or a combined PR)."""
        return tuple(dict.fromkeys(e.tip for e in self.edges if e.child == number))

    def carried_from(self, sha: str) -> int | None:
        """The PR whose change a commit of some PR's history copies (not its own, not the PR's
        own commits): the parent whose part of that history holds it."""
        if sha not in self.commit_graph:
            return None
        pr = self.commit_graph.nodes[sha].get("carried")
        return pr if isinstance(pr, int) else None

    def below(self, number: int) -> set[int]:
        """Every PR under `number` in the stack (its parents, theirs, and so on)."""
        seen: set[int] = set()
        todo = list(self.parents.get(number, ()))
        while todo:
            n = todo.pop()
            if n not in seen:
                seen.add(n)
                todo += self.parents.get(n, ())
        return seen

    def children(self, number: int) -> tuple[int, ...]:
        return tuple(e.child for e in self.edges if e.parent == number)

    def own_commits(self, number: int) -> tuple[str, ...]:
        """The PR's own commits (beyond its parents' tips), oldest first."""
        f = self.facts.get(number)
        return tuple(c.sha for c in f.commits if self.owner(c.sha) == number) if f else ()

    def owner(self, sha: str) -> int | None:
        """The PR whose own commits hold `sha`."""
        if sha not in self.commit_graph:
            return None
        pr = self.commit_graph.nodes[sha].get("pr")
        return pr if isinstance(pr, int) else None


def relate(
    parent: PRFacts,
    child: PRFacts,
    *,
    ancestry: bool = False,
    markers: Sequence[str] = (),
    base_branch: bool = False,
    after: int | None = None,
) -> StackEdge | None:
    """The edge parent -> child when the branch's history holds the parent's change, else None.

    Ancestry is enough on its own, unless the child's own history reverts every commit of the
    parent's it holds (then none of the parent's change is in it: no edge). Otherwise the child
    must hold exact copies of some of the parent's own commits (sha, patch-id or commit-id),
    not all reverted later in the child, followed by commits of its own: edited copies (same
    subject and author, another patch) support such an edge but never make one alone, and
    copies that differ from the parent's current commits make the edge stale. The child's own
    change then starts before its first edited copy: a change the branch holds only as an
    edited copy is judged as the child's own, never left out of every PR. But where a later
    commit of the child's, before its last, has the very files of the parent's head (ghstack
    replays each update of the parent as a "base" commit in the child's branch), the child's
    history holds the parent's current change: the parent's part ends there, not stale.

    `after`: the position in the child's commits where its other parents' parts end. A child that
    holds nothing beyond the parent's commits is no child of it (the same change re-pushed),
    unless those copies follow right after the other parents' parts: the child collects PRs (a
    merge queue's or a combined PR) and carries this one last."""
    extra = ((Evidence.BASE_BRANCH,) if base_branch else ()) + (
        (Evidence.MARKER,) if markers else ()
    )
    if ancestry:
        if child.undone(c.sha for c in parent.own or parent.commits if len(c.parents) < 2):
            return None  # the branch reverts every commit of the parent's: none of its change is there
        return StackEdge(
            parent.number, child.number, (Evidence.ANCESTRY, *extra), parent.head, tuple(markers)
        )
    if not may_hold_copies(parent, child):
        return None  # (no copies: see below)
    own = parent.own or parent.commits
    patch_ids = _Layered(child.patch_ids, parent.patch_ids)
    matches = match_copies(own, child.commits, patch_ids, {**parent.paths, **child.paths})
    exact = [m for m in matches if m.how is not MatchKind.SUBJECT]
    if not exact:
        return None  # edited copies alone: the parent's change is not in the branch's history
    if child.undone(m.child_sha for m in exact):
        return None  # the branch reverts every copy it holds: none of the parent's change is there
    position = {c.sha: i for i, c in enumerate(child.commits)}
    last = max(position[m.child_sha] for m in matches)
    if last == len(child.commits) - 1 and (after is None or min(position[m.child_sha] for m in exact) != after + 1):
        return None  # the child holds nothing beyond the parent's commits: not stacked on it
    if (at := _reaching_head(parent, child.commits, last)) is not None:
        return StackEdge(
            parent.number,
            child.number,
            (Evidence.PATCH_ID, *extra),
            child.commits[at].sha,
            tuple(markers),
            tuple(matches),
        )
    if own[-1].sha not in {m.parent_sha for m in matches} and not (
        markers or parent.number < child.number
    ):
        return None  # shares a base with the parent, not its head: siblings unless told otherwise
    exact_parent = {m.parent_sha for m in exact}
    exact_child = {m.child_sha for m in exact}
    first = min(position[m.child_sha] for m in matches)
    lacks = tuple(c.sha for c in own if c.sha not in exact_parent and len(c.parents) < 2)  # (a merge of
    # the default branch into the parent is no change of the parent's that the child lacks)
    carries = tuple(c.sha for c in child.commits[first : last + 1] if c.sha not in exact_child)
    stale = Stale(lacks, carries) if lacks or carries else None
    edited = [position[m.child_sha] for m in matches if m.how is MatchKind.SUBJECT]
    tip = _before(child.commits, min(edited)) if edited else child.commits[last].sha
    return StackEdge(
        parent.number,
        child.number,
        (Evidence.PATCH_ID, *extra),
        tip,
        tuple(markers),
        tuple(matches),
        stale,
    )


def _reaching_head(parent: PRFacts, commits: Sequence[Commit], start: int) -> int | None:
    """The position of the child's last commit, from `start` on and before its own last, whose
    tree is the parent's head's (None: none is, or the trees are unknown)."""
    tree = next((c.tree for c in reversed(parent.commits) if c.sha == parent.head), "")
    if not tree:
        return None
    return next((i for i in range(len(commits) - 2, start - 1, -1) if commits[i].tree == tree), None)


def _before(commits: Sequence[Commit], at: int) -> str:
    """The commit just before `commits[at]` in the child's history."""
    return commits[at - 1].sha if at > 0 else (commits[0].parents[0] if commits[0].parents else commits[0].sha)


def build_stack(
    requested: Sequence[int],
    facts: Mapping[int, PRFacts],
    edges: Iterable[StackEdge],
    unconfirmed: Iterable[Unconfirmed] = (),
    missing: Iterable[MissingParent] = (),
) -> Stack:
    """Assemble the stack: break cycles (reported), keep direct parents only (transitive reduction),
    order bottom-first, and give each PR its state.

    A cycle is broken by dropping its edges of copies alone: an edge of ancestry (the parent's
    head in the child's history) is the strongest evidence and is kept. Ancestry alone never makes
    a cycle; copies do, among refs holding stale copies of each other's commits (ghstack pushes
    each PR's old rewrites), and their claims yield to the history."""
    unconfirmed = tuple(unconfirmed)
    by_pair = {(e.parent, e.child): e for e in edges}
    nodes = list(dict.fromkeys([*requested, *(n for e in by_pair for n in e)]))
    pairs: list[tuple[int, int]] = list(by_pair)
    cycles: list[tuple[int, ...]] = []
    if not is_acyclic(nodes, [*by_pair, *((u.parent, u.child) for u in unconfirmed)]):
        pairs, cycles = _broken_cycles(nodes, by_pair, unconfirmed)
    direct = direct_parents(nodes, pairs)
    order = lowest_first_order(direct)
    parents = {n: direct[n] for n in order}
    kept = tuple(by_pair[(p, c)] for c in order for p in parents[c])
    states = {n: _state(n, facts, kept) for n in order}
    stack = Stack(
        order, parents, kept, tuple(cycles), dict(facts), states, unconfirmed, tuple(missing)
    )
    _fill_commit_graph(stack)
    return stack


def _broken_cycles(
    nodes: Sequence[int], by_pair: Mapping[tuple[int, int], StackEdge], unconfirmed: Sequence[Unconfirmed]
) -> tuple[list[tuple[int, int]], list[tuple[int, ...]]]:
    """The edges left once every cycle is broken, and the cycles (those of unconfirmed claims too)."""
    import networkx as nx

    graph: nx.DiGraph[int] = nx.DiGraph()
    graph.add_nodes_from(nodes)
    graph.add_edges_from(by_pair)
    cycles: list[tuple[int, ...]] = []
    while True:
        try:
            cycle = nx.find_cycle(graph)
        except nx.NetworkXNoCycle:
            break
        cycles.append(tuple(sorted({u for u, _ in cycle})))
        weak = [(u, v) for u, v in cycle if Evidence.ANCESTRY not in by_pair[(u, v)].evidence]
        for u, v in weak or cycle:  # (never all of ancestry: a head is no ancestor of itself)
            graph.remove_edge(u, v)
    claims: nx.DiGraph[int] = nx.DiGraph(graph)
    claims.add_edges_from((u.parent, u.child) for u in unconfirmed)
    for cycle_nodes in nx.simple_cycles(claims):
        members = tuple(sorted(cycle_nodes))
        if members not in cycles:
            cycles.append(members)
    return list(graph.edges), cycles


def _state(number: int, facts: Mapping[int, PRFacts], edges: Sequence[StackEdge]) -> PRState:
    f = facts.get(number)
    if f is not None and f.merged:
        return PRState.MERGED
    if any(e.child == number and e.stale for e in edges):
        return PRState.STALE
    return PRState.OPEN


def _fill_commit_graph(stack: Stack) -> None:
    """Add every commit of the stack's PRs; 'pr' names the PR whose own part holds it: of a PR's
    commits, those no parent's part holds (no ancestor of a parent's tip). A commit of a parent's
    part that no PR owns is a copy the PR carries: 'carried' names that parent."""
    graph = stack.commit_graph
    added: set[str] = set()  # commits whose edges are in (PRs stacked on others share most of theirs)
    for number in stack.order:
        f = stack.facts.get(number)
        if f is None:
            continue
        for c in f.commits:
            if c.sha in added:
                continue
            added.add(c.sha)
            if c.sha not in graph:
                graph.add_node(c.sha, pr=None, subject=c.subject)
            for p in c.parents:
                graph.add_edge(p, c.sha)
        held: dict[str, int] = {}
        for edge in sorted((e for e in stack.edges if e.child == number), key=lambda e: e.parent):
            if edge.tip in graph:
                for sha in (edge.tip, *graph.ancestors(edge.tip)):
                    held.setdefault(sha, edge.parent)
        for c in f.commits:
            if c.sha not in held:
                graph.nodes[c.sha]["pr"] = number
            elif graph.nodes[c.sha]["pr"] is None:
                graph.nodes[c.sha]["carried"] = held[c.sha]
