"""The PR stack as a graph: which PR builds on which, in what order. Pure; networkx stays inside."""

from __future__ import annotations

from collections.abc import Mapping, Set
from dataclasses import dataclass

import networkx as nx


@dataclass(frozen=True)
class StackEdge:
    """PR `child` builds directly on PR `parent`, and why prstack thinks so."""

    parent: int
    child: int
    evidence: str
    """e.g. 'ancestry' (the parent's head is an ancestor of the child's head)."""


@dataclass(frozen=True)
class Stack:
    """PRs bottom-first with their direct parents."""

    order: tuple[int, ...]
    """Topological order: every PR after the PRs it builds on."""
    parents: Mapping[int, tuple[int, ...]]
    edges: tuple[StackEdge, ...]
    cycles: tuple[tuple[int, ...], ...] = ()
    """Contradictory evidence: PRs that claim to build on each other (reported, edges dropped)."""


def build_stack(requested: Set[int] | list[int], ancestors: Mapping[int, Set[int]]) -> Stack:
    """Build the stack from ancestry facts.

    `ancestors[n]` holds every PR whose head is an ancestor of n's head and is not yet merged
    into the default branch. Direct parents are what remains after transitive reduction:
    in a stack A <- B <- C, C's ancestors are {A, B} but its parent is B.
    """
    graph: nx.DiGraph[int] = nx.DiGraph()
    graph.add_nodes_from(requested)
    for child, below in ancestors.items():
        graph.add_node(child)
        for parent in below:
            if parent != child:
                graph.add_edge(parent, child)
    cycles: list[tuple[int, ...]] = []
    while True:
        try:
            cycle = nx.find_cycle(graph)
        except nx.NetworkXNoCycle:
            break
        nodes = tuple(sorted({u for u, _ in cycle}))
        cycles.append(nodes)
        for u, v in cycle:
            graph.remove_edge(u, v)
    reduced = nx.transitive_reduction(graph)
    order = tuple(nx.lexicographical_topological_sort(reduced))
    parents = {n: tuple(sorted(reduced.predecessors(n))) for n in order}
    edges = tuple(StackEdge(p, c, "ancestry") for c in order for p in parents[c])
    return Stack(order=order, parents=parents, edges=edges, cycles=tuple(cycles))
