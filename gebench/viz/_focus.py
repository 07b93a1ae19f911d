"""Focused views of large graphs: k-hop neighbourhoods, and node search (regular expressions over names,
op types and attrs)."""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable
from typing import Any

from gebench import ir

__all__ = ["find_nodes", "k_hop", "search_nodes"]


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


def _attr_text(key: str, value: Any) -> str:
    """``key=value`` as searched: scalars, strings and short lists as written; tensors by dtype and shape."""
    if isinstance(value, ir.TensorValue):
        return f"{key}=tensor{list(value.shape)}"
    if isinstance(value, (bytes, bytearray)):
        return f"{key}=<{len(value)} bytes>"
    text = value.name if isinstance(value, enum.Enum) else str(value)
    return f"{key}={text[:200]}"


def find_nodes(graph: ir.Graph, query: str, *, limit: int = 200) -> tuple[list[tuple[ir.Node, str]], int]:
    """Nodes matching ``query``, a regular expression (case-insensitive, searched anywhere) over the node's
    name, op type and attrs (``key=value``); a query that is not a valid expression is taken literally.

    Returns ``([(node, where), ...], total)``: at most ``limit`` hits in topological order, an exact name
    match first; ``where`` is ``"name"``, ``"type"`` or ``"attr <key>=<value>"``; ``total`` counts every
    matching node. O(nodes + their attrs); read-only.
    """
    q = query.strip()
    if not q:
        return [], 0
    try:
        rx = re.compile(q, re.IGNORECASE)
    except re.error:
        rx = re.compile(re.escape(q), re.IGNORECASE)
    exact = graph.find(q)
    hits: list[tuple[ir.Node, str]] = [(exact, "name")] if exact is not None else []
    total = len(hits)
    for node in graph.nodes():
        if node is exact:
            continue
        where = ""
        if rx.search(node.name):
            where = "name"
        elif rx.search(node.op_type):
            where = "type"
        else:
            for key, value in node.attrs.items():
                text = _attr_text(key, value)
                if rx.search(text):
                    where = "attr " + (text if len(text) <= 60 else text[:59] + "\u2026")
                    break
        if where:
            total += 1
            if len(hits) < limit:
                hits.append((node, where))
    return hits, total
