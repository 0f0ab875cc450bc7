"""The PR and commit graphs: which PR builds on which, why, in what state. Pure; networkx inside."""

from __future__ import annotations

from collections.abc import Container, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property, lru_cache

import networkx as nx

from prstack.models import Commit, PRState
from prstack.stack import markers

_commit_id = lru_cache(maxsize=1 << 16)(markers.commit_id)
"""`markers.commit_id`, kept per message: relating PRs asks it of every commit for every pair."""


class Evidence(StrEnum):
    """Why prstack thinks one PR builds on another (the JSON strings of prstack.graph/1)."""

    ANCESTRY = "ancestry"
    """The parent's head is an ancestor of the child's head."""
    PATCH_ID = "patch-id"
    """The child holds copies of the parent's commits (`git patch-id --stable` or commit-id)."""
    EDITED_COPY = "edited-copy"
    """The child holds edited copies of every commit of the parent (same subjects and author,
    other patches): the parent was amended after the child was built."""
    BASE_BRANCH = "base-branch"
    """The child's base branch is the parent's head branch (PR metadata)."""
    MARKER = "marker"
    """A body or commit message names the parent ("depends on #N", ghstack/spr trailers)."""


class MatchKind(StrEnum):
    """How a parent commit was found inside the child."""

    SHA = "sha"
    PATCH_ID = "patch-id"
    COMMIT_ID = "commit-id"
    SUBJECT = "subject"
    """Same subject and author, other patch: an edited copy (counts only beside an exact match)."""


@dataclass(frozen=True)
class PRFacts:
    """What the source knows about one PR: the input of the graph."""

    number: int
    head: str
    fork_point: str
    """Where the PR's history leaves the default branch (merge base, or before its merge commit)."""
    commits: tuple[Commit, ...]
    """fork_point..head, oldest first."""
    own: tuple[Commit, ...]
    """The commits beyond its ancestor PRs' heads (all of `commits` when none is below it)."""
    patch_ids: Mapping[str, str] = field(default_factory=dict)
    """Commit sha -> `git patch-id --stable` (merge commits have none)."""
    paths: Mapping[str, frozenset[str]] = field(default_factory=dict)
    """Commit sha -> the paths it changes (to tell an edited copy from a namesake commit)."""
    merge_bases: tuple[str, ...] = ()
    """Every merge base with the default branch when there are several (criss-cross merges, e.g. a
    release branch merged into both), `fork_point` first; empty when there is one."""
    merged: str | None = None
    """How it is in the default branch: 'ancestry', 'rebase', 'squash' (seen in the clone), or
    'github' (only the PR metadata says so); None when it is not."""
    landed: str | None = None
    """For a merged PR: the default-branch commit that carries it (its head, or the copy)."""
    ref: str | None = None
    title: str | None = None
    body: str | None = None
    head_branch: str | None = None
    base_branch: str | None = None

    @property
    def fork_note(self) -> str | None:
        """Which of several merge bases `fork_point` is, and why (None with one merge base)."""
        if len(self.merge_bases) < 2:
            return None
        others = ", ".join(b[:12] for b in self.merge_bases[1:])
        return (
            f"{len(self.merge_bases)} merge bases with the default branch; fork point {self.fork_point[:12]} is "
            f"the newest by committer date (also {others}); the PR's own change is measured from the "
            "merge bases merged together (when they merge cleanly), so no change of theirs counts as its own"
        )

    @cached_property
    def copy_keys(self) -> frozenset[object] | None:
        """What a copy of one of its commits would share with it (see `may_hold_copies`)."""
        return _copy_keys(self.commits, self.paths)

    @cached_property
    def copy_keys_own(self) -> frozenset[object] | None:
        """The same for its own commits (all of them when none is known as its own)."""
        return _copy_keys(self.own or self.commits, self.paths)


@dataclass(frozen=True)
class CommitMatch:
    """A parent commit and its copy inside the child."""

    parent_sha: str
    child_sha: str
    how: MatchKind


@dataclass(frozen=True)
class Stale:
    """The child holds an old copy of its parent (range-diff style, matched by patch-id)."""

    lacks: tuple[str, ...]
    """Parent commits the child has no copy of (added or rewritten since the child was built)."""
    carries: tuple[str, ...]
    """Commits of the parent copy inside the child that the parent no longer has."""


@dataclass(frozen=True)
class StackEdge:
    """PR `child` builds directly on PR `parent`, and why prstack thinks so."""

    parent: int
    child: int
    evidence: tuple[Evidence, ...]
    tip: str
    """The commit of the child's history where the parent's part ends: the child's own change
    starts here (the parent's head, or the last commit of the parent's copy inside the child)."""
    markers: tuple[str, ...] = ()
    """Marker texts that name the parent, e.g. 'Depends on #40727'."""
    matches: tuple[CommitMatch, ...] = ()
    stale: Stale | None = None


@dataclass(frozen=True)
class Unconfirmed:
    """A marker names a parent but the content does not back it."""

    parent: int
    child: int
    markers: tuple[str, ...]
    reason: str


@dataclass(frozen=True)
class MissingParent:
    """A parent named by a marker or metadata whose PR ref the clone lacks."""

    number: int
    child: int
    markers: tuple[str, ...]
    fetch: str
    """The command that fetches it."""


@dataclass(frozen=True)
class Stack:
    """PRs bottom-first with their direct parents, evidence, states and the commit DAG beneath."""

    order: tuple[int, ...]
    """Topological order: every PR after the PRs it builds on."""
    parents: Mapping[int, tuple[int, ...]]
    edges: tuple[StackEdge, ...]
    cycles: tuple[tuple[int, ...], ...] = ()
    """Contradictory evidence: PRs that claim to build on each other (reported, edges dropped)."""
    facts: Mapping[int, PRFacts] = field(default_factory=dict)
    states: Mapping[int, PRState] = field(default_factory=dict)
    unconfirmed: tuple[Unconfirmed, ...] = ()
    missing: tuple[MissingParent, ...] = ()
    commit_graph: nx.DiGraph[str] = field(default_factory=nx.DiGraph, compare=False, repr=False)
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


def match_copies(
    parent: Sequence[Commit],
    child: Sequence[Commit],
    patch_ids: Mapping[str, str],
    paths: Mapping[str, frozenset[str]] | None = None,
) -> list[CommitMatch]:
    """Pair each parent commit with its copy among the child's commits: same sha, else same
    patch-id, else same commit-id trailer, else same subject and author (an edited copy).

    Patch-ids are read only for the commits `copy_candidates` names (a patch-id can be costly)."""
    need = copy_candidates(parent, child, patch_ids, paths)
    by_sha = {c.sha for c in child}
    by_patch: dict[str, list[str]] = {}
    by_cid: dict[str, list[str]] = {}
    by_subject: dict[tuple[str, str], list[str]] = {}
    for c in child:
        if c.sha in need and (pid := patch_ids.get(c.sha)) is not None:
            by_patch.setdefault(pid, []).append(c.sha)
        if (cid := _commit_id(c.message)) is not None:
            by_cid.setdefault(cid, []).append(c.sha)
        by_subject.setdefault((c.subject, c.author), []).append(c.sha)
    used: set[str] = set()
    matches: list[CommitMatch] = []

    def take(candidates: Iterable[str]) -> str | None:
        return next((s for s in candidates if s not in used), None)

    for p in parent:
        found: tuple[str | None, MatchKind]
        if p.sha in by_sha and p.sha not in used:
            found = (p.sha, MatchKind.SHA)
        elif p.sha in need and (pid := patch_ids.get(p.sha)) and (s := take(by_patch.get(pid, ()))):
            found = (s, MatchKind.PATCH_ID)
        elif (cid := _commit_id(p.message)) and (s := take(by_cid.get(cid, ()))):
            found = (s, MatchKind.COMMIT_ID)
        else:
            same = by_subject.get((p.subject, p.author), ())
            found = (take(s for s in same if _overlap(p.sha, s, paths or {})), MatchKind.SUBJECT)
        if found[0] is not None:
            used.add(found[0])
            matches.append(CommitMatch(p.sha, found[0], found[1]))
    return matches


def may_hold_copies(parent: PRFacts, child: PRFacts) -> bool:
    """Whether `match_copies` could pair a commit of the parent's with one of the child's at all:
    only when both sides have a commit in common, or a commit-id, a subject and author, or the
    paths a commit changes (a patch-id hashes them; a commit whose paths are unknown could share
    one with any). Most pairs of unrelated PRs share none of these: this answers them cheaply."""
    ours, theirs = parent.copy_keys_own, child.copy_keys
    return ours is None or theirs is None or not ours.isdisjoint(theirs)


def _copy_keys(commits: Sequence[Commit], paths: Mapping[str, frozenset[str]]) -> frozenset[object] | None:
    """What a copy of one of `commits` shares with it (see `may_hold_copies`); None: anything."""
    keys: set[object] = set()
    for c in commits:
        changed = paths.get(c.sha)
        if changed is None:
            return None
        keys.update(_commit_keys(c))
        keys.add(changed)
    return frozenset(keys)


@lru_cache(maxsize=1 << 16)
def _commit_keys(c: Commit) -> tuple[object, ...]:
    cid = _commit_id(c.message)
    return (c.sha, (c.subject, c.author)) + ((("commit-id", cid),) if cid is not None else ())


def copy_candidates(
    parent: Sequence[Commit],
    child: Sequence[Commit],
    patch_ids: Container[str],
    paths: Mapping[str, frozenset[str]] | None = None,
) -> set[str]:
    """The commits of either side whose patch-ids (`patch_ids`: the commits that have one) can
    equal one on the other side: the only ones `match_copies` reads. A patch-id hashes the names
    of the files it changes, so two commits share one only when they change the same paths: a
    commit is left out when its paths are known and no commit with a patch-id on the other side
    changes exactly those (or has unknown paths)."""
    paths = paths or {}
    ours = [c.sha for c in parent if c.sha in patch_ids]
    theirs = [c.sha for c in child if c.sha in patch_ids]
    if not ours or not theirs:
        return set()
    return _could_match(ours, theirs, paths) | _could_match(theirs, ours, paths)


def _could_match(side: list[str], other: list[str], paths: Mapping[str, frozenset[str]]) -> set[str]:
    """The commits of `side` (all with patch-ids) whose patch-id may equal one of `other`'s."""
    names = set()
    for sha in other:
        if sha not in paths:
            return set(side)  # unknown paths: any patch-id may be its
        names.add(paths[sha])
    return {sha for sha in side if sha not in paths or paths[sha] in names}


class _Layered(Mapping[str, str]):
    """`{**below, **top}` without reading every value (a source may compute patch-ids on demand)."""

    def __init__(self, top: Mapping[str, str], below: Mapping[str, str]) -> None:
        self.top, self.below = top, below

    def __getitem__(self, key: str) -> str:
        return self.top[key] if key in self.top else self.below[key]

    def __contains__(self, key: object) -> bool:
        return key in self.top or key in self.below

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys([*self.below, *self.top]))

    def __len__(self) -> int:
        return len(set(self.top) | set(self.below))


def _overlap(a: str, b: str, paths: Mapping[str, frozenset[str]]) -> bool:
    """True when the two commits change a common path (or when either's paths are unknown)."""
    if a not in paths or b not in paths:
        return True
    return bool(paths[a] & paths[b])


def relate(
    parent: PRFacts,
    child: PRFacts,
    *,
    ancestry: bool = False,
    markers: Sequence[str] = (),
    base_branch: bool = False,
) -> StackEdge | None:
    """The edge parent -> child when the content backs it, else None.

    Ancestry is enough on its own. Otherwise the child must hold copies of the parent's own commits
    (at least one exact: sha, patch-id or commit-id; or edited copies of all of them) followed by
    commits of its own; copies that differ from the parent's current commits make the edge stale."""
    extra = ((Evidence.BASE_BRANCH,) if base_branch else ()) + (
        (Evidence.MARKER,) if markers else ()
    )
    if ancestry:
        return StackEdge(
            parent.number, child.number, (Evidence.ANCESTRY, *extra), parent.head, tuple(markers)
        )
    if not may_hold_copies(parent, child):
        return None  # (no copies: see below)
    own = parent.own or parent.commits
    patch_ids = _Layered(child.patch_ids, parent.patch_ids)
    matches = match_copies(own, child.commits, patch_ids, {**parent.paths, **child.paths})
    exact = [m for m in matches if m.how is not MatchKind.SUBJECT]
    if not exact and len(matches) < len(own):
        return None  # an edited copy counts only when every commit of the parent has one
    if not exact and (parent.merged or _redone(own, child.commits, matches)):
        return None  # re-done in the child, not an old copy of a parent force-pushed since
    position = {c.sha: i for i, c in enumerate(child.commits)}
    tip_index = max(position[m.child_sha] for m in matches)
    if tip_index == len(child.commits) - 1:
        return None  # the child holds nothing beyond the parent's commits: not stacked on it
    if own[-1].sha not in {m.parent_sha for m in matches} and not (
        markers or parent.number < child.number
    ):
        return None  # shares a base with the parent, not its head: siblings unless told otherwise
    exact_parent = {m.parent_sha for m in exact}
    exact_child = {m.child_sha for m in exact}
    first = min(position[m.child_sha] for m in matches)
    lacks = tuple(c.sha for c in own if c.sha not in exact_parent)
    carries = tuple(c.sha for c in child.commits[first : tip_index + 1] if c.sha not in exact_child)
    stale = Stale(lacks, carries) if lacks or carries else None
    return StackEdge(
        parent.number,
        child.number,
        (Evidence.PATCH_ID if exact else Evidence.EDITED_COPY, *extra),
        child.commits[tip_index].sha,
        tuple(markers),
        tuple(matches),
        stale,
    )


def _redone(parent: Sequence[Commit], child: Sequence[Commit], matches: Sequence[CommitMatch]) -> bool:
    """Whether a child's edited copy of a parent commit was committed after that commit: the child
    re-did the parent's change (an amended parent is committed after the copy the child holds)."""
    when = {c.sha: c.committed for c in (*parent, *child)}
    return any(when[m.child_sha] > when[m.parent_sha] > 0 for m in matches if m.how is MatchKind.SUBJECT)


def build_stack(
    requested: Sequence[int],
    facts: Mapping[int, PRFacts],
    edges: Iterable[StackEdge],
    unconfirmed: Iterable[Unconfirmed] = (),
    missing: Iterable[MissingParent] = (),
) -> Stack:
    """Assemble the stack: drop cycles (reported), keep direct parents only (transitive reduction),
    order bottom-first, and give each PR its state."""
    unconfirmed = tuple(unconfirmed)
    by_pair = {(e.parent, e.child): e for e in edges}
    graph: nx.DiGraph[int] = nx.DiGraph()
    graph.add_nodes_from(requested)
    graph.add_nodes_from(n for e in by_pair for n in e)
    graph.add_edges_from(by_pair)
    cycles: list[tuple[int, ...]] = []
    while True:
        try:
            cycle = nx.find_cycle(graph)
        except nx.NetworkXNoCycle:
            break
        cycles.append(tuple(sorted({u for u, _ in cycle})))
        for u, v in cycle:
            graph.remove_edge(u, v)
    claims: nx.DiGraph[int] = nx.DiGraph(graph)
    claims.add_edges_from((u.parent, u.child) for u in unconfirmed)
    for cycle_nodes in nx.simple_cycles(claims):
        nodes = tuple(sorted(cycle_nodes))
        if nodes not in cycles:
            cycles.append(nodes)
    reduced = nx.transitive_reduction(graph)
    order = tuple(nx.lexicographical_topological_sort(reduced))
    parents = {n: tuple(sorted(reduced.predecessors(n))) for n in order}
    kept = tuple(by_pair[(p, c)] for c in order for p in parents[c])
    states = {n: _state(n, facts, kept) for n in order}
    stack = Stack(
        order, parents, kept, tuple(cycles), dict(facts), states, unconfirmed, tuple(missing)
    )
    _fill_commit_graph(stack)
    return stack


def _state(number: int, facts: Mapping[int, PRFacts], edges: Sequence[StackEdge]) -> PRState:
    f = facts.get(number)
    if f is not None and f.merged:
        return PRState.MERGED
    if any(e.child == number and e.stale for e in edges):
        return PRState.STALE
    return PRState.OPEN


def _fill_commit_graph(stack: Stack) -> None:
    """Add every commit of the stack's PRs; 'pr' names the PR whose own part holds it."""
    graph = stack.commit_graph
    for number in stack.order:
        f = stack.facts.get(number)
        if f is None:
            continue
        for c in f.commits:
            if c.sha not in graph:
                graph.add_node(c.sha, pr=None, subject=c.subject)
            for p in c.parents:
                graph.add_edge(p, c.sha)
        base = stack.base_of(number)
        shas = [c.sha for c in f.commits]
        start = shas.index(base) + 1 if base in shas else 0
        for sha in shas[start:]:
            graph.nodes[sha]["pr"] = number
