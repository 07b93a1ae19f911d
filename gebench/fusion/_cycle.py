"""The fuse-cycle check GE runs after ``meet_requirements`` (spec §3.4.3b)."""

from __future__ import annotations

import math
from collections.abc import Iterable

from gebench.ir import Graph, Node

__all__ = ["would_create_cycle"]


def would_create_cycle(graph: Graph, nodes: Iterable[Node]) -> bool:
    """True when fusing ``nodes`` into one node would close a cycle.

    That happens when a node reachable forward (data or control edges) from an external successor of the set
    is itself in the set. The search only visits nodes whose topological position is at most the last
    node of the set, so its cost is bounded by the region between the set's first successor and its last
    node, not by the graph.
    """
    members: dict[int, Node] = {}
    for n in nodes:  # plain loops: this runs per match, and a comprehension is a call on Python 3.11
        members[n.id] = n
    if len(members) < 2:
        return False
    position = graph.position
    limit = -math.inf
    for n in members.values():
        p = position(n)
        if p > limit:
            limit = p
    starts: dict[int, Node] = {}
    for node in members.values():
        for succ in graph.successors(node):
            # a successor placed after the last member cannot lead back to one (paths go forward in position)
            if succ.id not in members and position(succ) < limit:
                starts.setdefault(succ.id, succ)
    if not starts:
        return False
    return graph.reaches_any(starts.values(), set(members), limit=limit)
