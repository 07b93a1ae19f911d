"""Focused views of large graphs: k-hop neighbourhoods and name/op-type search."""

from __future__ import annotations

from collections.abc import Iterable

from gebench import ir

__all__ = ["k_hop", "search_nodes"]


def k_hop(graph: ir.Graph, seeds: Iterable[int], *, k: int = 2, max_nodes: int = 400) -> set[int]:
    """Node ids within ``k`` data/control edges (either direction) of the ``seeds``.

    Breadth first, so when ``max_nodes`` cuts the search the nearest nodes are kept; seeds come first
    (ids not in the graph are ignored; beyond ``max_nodes`` seeds the rest are dropped). O(visited edges); read-only.
    """
    frontier = [nid for nid in dict.fromkeys(seeds) if graph.has_node_id(nid)][:max_nodes]
    keep: dict[int, None] = dict.fromkeys(frontier)
    for _ in range(k):
        nxt: list[int] = []
        for nid in frontier:
            node = graph.node(nid)
            for other in (*graph.predecessors(node), *graph.successors(node)):
                if other.id not in keep:
                    if len(keep) >= max_nodes:
                        return set(keep)
                    keep[other.id] = None
                    nxt.append(other.id)
        frontier = nxt
        if not frontier:
            break
    return set(keep)


def search_nodes(graph: ir.Graph, query: str, *, limit: int = 50) -> list[ir.Node]:
    """Nodes whose name contains ``query`` or whose op type equals it (case-insensitive), in
    topological order, at most ``limit``. An exact name match comes first. O(n)."""
    q = query.strip().lower()
    if not q:
        return []
    exact = graph.find(query.strip())
    found: list[ir.Node] = [exact] if exact is not None else []
    for node in graph.nodes():
        if len(found) >= limit:
            break
        if node is exact:
            continue
        if q in node.name.lower() or node.op_type.lower() == q:
            found.append(node)
    return found
