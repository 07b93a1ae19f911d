"""The fuse-cycle check GE runs after ``meet_requirements`` (spec §3.4.3b)."""

from __future__ import annotations

from collections.abc import Iterable

from gebench.ir import Graph, Node

__all__ = ["would_create_cycle"]


def would_create_cycle(graph: Graph, nodes: Iterable[Node]) -> bool:
    """True when fusing ``nodes`` into one node would close a cycle.

    That happens when a node reachable forward (data or control edges) from an external successor of the set
    is itself in the set (:meth:`gebench.ir.Graph.contraction_closes_cycle`: O(the set's out-degree) when every
    external successor comes after the set's last node, else bounded by the region between them).
    """
    return graph.contraction_closes_cycle(nodes)
