"""The few graph questions a stack of PRs asks, answered in plain Python for its handful of nodes:
is there a cycle, which parents are direct, in what order; and its commits as a graph. Pure."""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping, Sequence

Edge = tuple[int, int]
"""parent -> child."""


def is_acyclic(nodes: Iterable[int], edges: Iterable[Edge]) -> bool:
    """Whether no chain of edges leads from a node back to itself (Kahn's count)."""
    children: dict[int, list[int]] = {n: [] for n in nodes}
    indegree = dict.fromkeys(children, 0)
    for parent, child in edges:
        children.setdefault(parent, []).append(child)
        children.setdefault(child, [])
        indegree[child] = indegree.get(child, 0) + 1
        indegree.setdefault(parent, 0)
    ready = [n for n, d in indegree.items() if d == 0]
    seen = 0
    while ready:
        node = ready.pop()
        seen += 1
        for child in children[node]:
            indegree[child] -= 1
            if indegree[child] == 0:
                ready.append(child)
    return seen == len(indegree)


def direct_parents(nodes: Sequence[int], edges: Iterable[Edge]) -> dict[int, tuple[int, ...]]:
    """Each node's parents (sorted) in the transitive reduction of an acyclic graph: an edge is
    dropped when its child is reachable through another of the parent's children."""
    children: dict[int, set[int]] = {n: set() for n in nodes}
    for parent, child in edges:
        children[parent].add(child)
    reach: dict[int, frozenset[int]] = {}

    def below(node: int) -> frozenset[int]:
        """Every node reachable from `node`, itself left out."""
        if node not in reach:
            found: set[int] = set()
            todo = list(children[node])
            while todo:
                n = todo.pop()
                if n not in found:
                    found.add(n)
                    todo += children[n]
            reach[node] = frozenset(found)
        return reach[node]

    parents: dict[int, list[int]] = {n: [] for n in nodes}
    for parent in nodes:
        kids = children[parent]
        implied = set().union(*(below(k) for k in kids)) if kids else set()
        for child in kids - implied:
            parents[child].append(parent)
    return {n: tuple(sorted(p)) for n, p in parents.items()}


def lowest_first_order(parents: Mapping[int, Sequence[int]]) -> tuple[int, ...]:
    """Every node after its parents; among those ready at once, the lowest number first."""
    children: dict[int, list[int]] = {n: [] for n in parents}
    waiting = {n: len(p) for n, p in parents.items()}
    for node, ps in parents.items():
        for p in ps:
            children[p].append(node)
    ready = [n for n, w in waiting.items() if w == 0]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        node = heapq.heappop(ready)
        order.append(node)
        for child in children[node]:
            waiting[child] -= 1
            if waiting[child] == 0:
                heapq.heappush(ready, child)
    return tuple(order)


class CommitGraph:
    """Commits, each with its attributes (`nodes[sha]`), and edges parent -> child: the part of a
    graph library's directed graph the stack uses (same calls: `add_node`, `add_edge`, `in`)."""

    def __init__(self) -> None:
        self.nodes: dict[str, dict[str, object]] = {}
        self._parents: dict[str, list[str]] = {}

    def __contains__(self, sha: object) -> bool:
        return sha in self.nodes

    def add_node(self, sha: str, **attributes: object) -> None:
        """The commit, with these attributes set (those it has kept)."""
        self.nodes.setdefault(sha, {}).update(attributes)
        self._parents.setdefault(sha, [])

    def add_edge(self, parent: str, child: str) -> None:
        """parent -> child, either commit added without attributes where new."""
        self.add_node(parent)
        self.add_node(child)
        if parent not in self._parents[child]:
            self._parents[child].append(parent)

    def ancestors(self, sha: str) -> set[str]:
        """Every commit an edge path leads from to `sha` (`sha` itself left out)."""
        seen: set[str] = set()
        todo = list(self._parents.get(sha, ()))
        while todo:
            parent = todo.pop()
            if parent not in seen:
                seen.add(parent)
                todo += self._parents.get(parent, ())
        return seen
