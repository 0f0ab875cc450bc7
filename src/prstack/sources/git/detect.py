"""Which PR builds on which: walks the PRs from the requested ones down, relating each to its
candidate parents with the facts pr_facts.py reads from the clone; prstack.stack.graph decides."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from prstack.sources.base import PRMetadata
from prstack.sources.git.fork_points import fork_point
from prstack.sources.git.pr_facts import Candidates, Reader
from prstack.sources.git.repo import GitClone
from prstack.stack.facts import Evidence, MissingParent, PRFacts, StackEdge, Unconfirmed
from prstack.stack.graph import Stack, build_stack, relate

__all__ = ["fork_point", "read_graph"]


def read_graph(
    src: GitClone,
    numbers: Sequence[int],
    metadata: Mapping[int, PRMetadata] | None = None,
    base: str | None = None,
) -> Stack:
    """The stack under `numbers`: every PR they build on, with the evidence on each edge, stale and
    merged states, unconfirmed markers, missing parent refs and cycles.

    `metadata` (PR number -> GitHub's PRMeta, or a PullRequest) adds titles, bodies, states and
    branch names: a body's markers and "base branch = the parent's head branch" become evidence
    (not when the base branch is the default branch: forks' PRs often come from their own main).
    `base` (a sha) is the fork point of PRs whose own cannot be found (fast-forward merged)."""
    reader = Reader(src, metadata or {}, src.default_ref, base=base)
    requested = list(dict.fromkeys(numbers))
    for n in requested:
        reader.heads[n] = src.refs.pr_head(n)[1]  # a missing requested PR is an input error
    found = _Found()
    todo = dict.fromkeys(requested)  # in visiting order; a PR is queued once (a stack's PRs name all below them)
    seen: set[int] = set()
    while todo:
        reader.prefetch(todo, requested)
        number = next(iter(todo))
        del todo[number]
        seen.add(number)
        todo |= dict.fromkeys(n for n in _visit(reader, number, requested, found) if n not in seen)
    facts = {n: f for n in seen if (f := reader.facts.get(n)) is not None}
    return build_stack(requested, facts, found.edges.values(), found.unconfirmed, found.missing.values())


@dataclass
class _Found:
    edges: dict[tuple[int, int], StackEdge] = field(default_factory=dict)
    unconfirmed: list[Unconfirmed] = field(default_factory=list)
    missing: dict[tuple[int, int], MissingParent] = field(default_factory=dict)


def _visit(reader: Reader, number: int, requested: Sequence[int], found: _Found) -> list[int]:
    """Find the parents of one PR (recording edges, unconfirmed markers and missing refs); returns
    the parents, to be visited in turn."""
    src = reader.src
    child = reader.mark_merged(number)
    if child is None:
        if number in requested:
            fork_point(src, reader.heads[number], reader.default)  # raises the user-facing error
        return []
    c = reader.candidates(child, requested)
    ancestry, candidates = c.ancestry, c.candidates
    parents = _try(reader, child, c, found)
    if parents and (collected := _collected(reader, child, c, found, parents)):
        parents += collected
    if not parents and len(child.commits) > 1:
        # nothing found: look for a parent whose commits (not only its head) the child copies,
        # e.g. a parent rebased and extended since the child was built
        deeper = reader.deep_hints(child)
        reader.warm_facts(sorted(deeper), with_ancestors=True)
        for hinted in list(deeper):  # the subject may be named under a PR stacked on the parent
            if reader.load(hinted) is not None:
                deeper |= set(reader.ancestors[hinted])
        deeper -= candidates | ancestry | {number}
        src.patches.warm(ids=sorted(reader.copy_ids(child, deeper)))
        parents = _try(reader, child, replace(c, ancestry=set(), candidates=deeper), found)
    return parents


def _try(reader: Reader, child: PRFacts, tried: Candidates, found: _Found) -> list[int]:
    """Relate each candidate to the child; record edges, unconfirmed markers and missing refs."""
    number = child.number
    markers, claimed, by_branch, ancestry = tried.markers, tried.claimed, tried.by_branch, tried.ancestry
    candidates = tried.candidates
    parents: list[int] = []
    for parent_number in sorted(ancestry | candidates):
        texts = tuple(m.text for m in markers.get(parent_number, []))
        parent = reader.load(parent_number)
        edge: StackEdge | None = None
        if parent is not None:
            edge = relate(
                parent,
                child,
                ancestry=parent_number in ancestry,
                markers=texts,
                base_branch=parent_number in by_branch,
            )
            if edge is not None and edge.evidence[0] is Evidence.EDITED_COPY and parent.merged is None:
                merged = reader.mark_merged(parent_number)  # edited copies of a merged PR: re-done
                edge = None if merged is not None and merged.merged else edge
        if edge is None and parent_number in claimed:
            if parent is None:
                _note_missing(reader, found, parent_number, number, texts)
                continue
            edge = _merged_below(reader, parent_number, child, texts)
            if edge is None:
                reason = _why_not(parent, child)
                found.unconfirmed.append(Unconfirmed(parent_number, number, texts, reason))
        if edge is not None:
            found.edges[(parent_number, number)] = edge
            parents.append(parent_number)
    return parents


def _collected(reader: Reader, child: PRFacts, tried: Candidates, found: _Found, parents: list[int]) -> list[int]:
    """PRs whose commits the child copies last, right after its parents' parts (a merge queue's or
    a combined PR that carries each PR in turn, and nothing of its own after the last): the edges
    `relate` finds with that position, recorded."""
    position = {c.sha: i for i, c in enumerate(child.commits)}
    ends = [position[e.tip] for p in parents if (e := found.edges.get((p, child.number))) and e.tip in position]
    if not ends:
        return []
    out = []
    for number in sorted((tried.ancestry | tried.candidates) - set(parents)):
        parent = reader.load(number)
        if parent is None or parent.merged:
            continue
        edge = relate(parent, child, markers=tuple(m.text for m in tried.markers.get(number, [])), after=max(ends))
        if edge is not None:
            found.edges[(number, child.number)] = edge
            out.append(number)
    return out


def _merged_below(reader: Reader, number: int, child: PRFacts, texts: tuple[str, ...]) -> StackEdge | None:
    """A named parent already merged into the default branch below the child's fork point (the
    child was rebased after the parent landed): the marker holds, the content agrees."""
    parent = reader.mark_merged(number)
    if parent is None or parent.landed is None or not parent.merged:
        return None
    if not reader.src.ancestry.is_ancestor(parent.landed, child.fork_point):
        return None
    evidence = (Evidence.MARKER,) if texts else (Evidence.BASE_BRANCH,)
    return StackEdge(number, child.number, evidence, child.fork_point, texts)


def _note_missing(reader: Reader, found: _Found, parent: int, child: int, texts: tuple[str, ...]) -> None:
    if reader.head(parent) is None:
        fetch = reader.src.refs.fetch_command(parent)
        found.missing[(parent, child)] = MissingParent(parent, child, texts, fetch)
    else:
        reason = f"#{parent}'s history cannot be placed against {reader.default}"
        found.unconfirmed.append(Unconfirmed(parent, child, texts, reason))


def _why_not(parent: PRFacts, child: PRFacts) -> str:
    if parent.merged:
        how = parent.merged
        return f"#{parent.number} is merged ({how}) and #{child.number} holds none of its commits"
    return f"#{child.number} holds neither #{parent.number}'s head nor copies of its commits"
