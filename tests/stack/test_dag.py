"""The stack's own graph answers agree with networkx's on graphs of the sizes stacks have."""

from __future__ import annotations

import random

import networkx as nx
import pytest

from prstack.stack.dag import CommitGraph, direct_parents, is_acyclic, lowest_first_order


def _random_graph(seed: int, acyclic: bool) -> tuple[list[int], list[tuple[int, int]]]:
    rng = random.Random(seed)
    nodes = rng.sample(range(1, 200), rng.randint(1, 14))
    edges = [(u, v) for u in nodes for v in nodes
             if u != v and rng.random() < 0.3 and (not acyclic or nodes.index(u) < nodes.index(v))]
    return nodes, edges


@pytest.mark.parametrize("seed", range(60))
def test_reduction_and_order_equal_networkx(seed: int) -> None:
    """Direct parents are the transitive reduction's; the order is the lowest-number-first
    topological order, whatever order the nodes and edges come in."""
    nodes, edges = _random_graph(seed, acyclic=True)
    graph: nx.DiGraph[int] = nx.DiGraph()
    graph.add_nodes_from(nodes)
    graph.add_edges_from(edges)
    reduced = nx.transitive_reduction(graph)
    parents = direct_parents(nodes, edges)
    assert parents == {n: tuple(sorted(reduced.predecessors(n))) for n in nodes}
    assert lowest_first_order(parents) == tuple(nx.lexicographical_topological_sort(reduced))
    assert is_acyclic(nodes, edges)


@pytest.mark.parametrize("seed", range(60))
def test_cycles_are_seen_as_networkx_sees_them(seed: int) -> None:
    nodes, edges = _random_graph(seed, acyclic=False)
    graph: nx.DiGraph[int] = nx.DiGraph()
    graph.add_nodes_from(nodes)
    graph.add_edges_from(edges)
    assert is_acyclic(nodes, edges) == nx.is_directed_acyclic_graph(graph)


def test_a_cycle_through_a_node_only_an_edge_names() -> None:
    assert not is_acyclic([1], [(1, 2), (2, 3), (3, 2)])
    assert is_acyclic([], [(1, 2), (2, 3)])


def test_a_chain_keeps_only_its_links() -> None:
    assert direct_parents([3, 1, 2], [(1, 2), (2, 3), (1, 3)]) == {3: (2,), 1: (), 2: (1,)}
    assert lowest_first_order({5: (), 4: (), 9: (4,), 6: (5, 9)}) == (4, 5, 9, 6)


@pytest.mark.parametrize("seed", range(20))
def test_commit_graph_holds_what_a_networkx_digraph_holds(seed: int) -> None:
    """Attributes set on adding a commit and later, commits named only by an edge, and ancestors."""
    rng = random.Random(seed)
    shas = [f"{i:040x}" for i in rng.sample(range(1000), 12)]
    ours, theirs = CommitGraph(), nx.DiGraph()
    for i, sha in enumerate(shas):
        parents = rng.sample(shas[:i], min(i, 2)) if i else ["f" * 40]
        for graph in (ours, theirs):
            graph.add_node(sha, pr=None, subject=f"s{i}")
            for parent in parents:
                graph.add_edge(parent, sha)
    for graph in (ours, theirs):
        graph.nodes[shas[3]]["pr"] = 7
    assert set(ours.nodes) == set(theirs.nodes) and "f" * 40 in ours and "e" * 40 not in ours
    assert all(ours.nodes[n] == theirs.nodes[n] for n in theirs.nodes)
    assert all(ours.ancestors(n) == nx.ancestors(theirs, n) for n in theirs.nodes)
