"""Subgraph boundaries: which target tensors feed a matched/replaced region and which leave it (GE §3.6-§3.8)."""

from __future__ import annotations

import dataclasses
from collections import deque

from gebench.ir import Graph, Node

__all__ = ["Boundary", "BoundaryInput", "decompose_boundary", "boundary_subgraph", "escaping_use"]


@dataclasses.dataclass(slots=True)
class BoundaryInput:
    """One boundary input: the consumer anchors ``(node, input port)`` fed by one producer output.

    Like GE's ``SubgraphInput`` built from a list, nothing checks that every anchor has the same producer;
    :meth:`producer` answers for the first anchor.
    """

    anchors: list[tuple[Node, int]]

    def producer(self, graph: Graph) -> tuple[Node, int]:
        """The producer ``(node, output port)`` feeding the first anchor. O(1).

        Raises:
            RewriteError: the input has no anchor, or the first anchor is unconnected or not in ``graph``.
        """
        from ._rewriter import RewriteError, RewriteReason

        if not self.anchors:
            raise RewriteError(RewriteReason.BOUNDARY_INPUT_EMPTY,
                               "a boundary input has no consumer anchor; add (node, input port) pairs to it")
        node, port = self.anchors[0]
        if node not in graph:
            raise RewriteError(RewriteReason.FOREIGN_NODE,
                               f"boundary input anchor {node.name!r} is not a node of graph {graph.name!r}")
        if not 0 <= port < len(node.inputs):
            raise RewriteError(RewriteReason.BOUNDARY_INPUT_UNRESOLVED,
                               f"boundary input anchor {node.name}:{port} does not exist "
                               f"({node.op_type} has {len(node.inputs)} inputs)")
        prod = graph.producer(node, port)
        if prod is None:
            raise RewriteError(RewriteReason.BOUNDARY_INPUT_UNRESOLVED,
                               f"boundary input anchor {node.name}:{port} has no producer; every boundary input "
                               "must be fed")
        return prod


@dataclasses.dataclass(slots=True)
class Boundary:
    """Boundary of a region: input ``i`` maps to replacement Data ``index=i``, output ``k`` to replacement
    output ``k``. ``outputs`` holds ``(producer node, output port)`` pairs."""

    inputs: list[BoundaryInput]
    outputs: list[tuple[Node, int]]

    def nodes(self) -> list[Node]:
        """Distinct nodes named by the boundary (input consumers and output producers), first-seen order."""
        seen: dict[int, Node] = {}
        for bi in self.inputs:
            for node, _ in bi.anchors:
                seen.setdefault(node.id, node)
        for node, _ in self.outputs:
            seen.setdefault(node.id, node)
        return list(seen.values())


def decompose_boundary(graph: Graph, node: Node) -> Boundary:
    """The boundary DecomposePass uses for one node (GE §3.8.2). O(inputs + outputs).

    One input per distinct connected producer output, in input-port order (inputs fed by the same producer
    output share one boundary input; unconnected optional inputs are skipped); one output per output port.
    """
    groups: dict[tuple[int, int], BoundaryInput] = {}
    for port, prod in enumerate(graph.producers(node)):
        if prod is None:
            continue
        key = (prod[0].id, prod[1])
        group = groups.get(key)
        if group is None:
            groups[key] = BoundaryInput([(node, port)])
        else:
            group.anchors.append((node, port))
    return Boundary(list(groups.values()), [(node, k) for k in range(len(node.outputs))])


def boundary_subgraph(graph: Graph, output_nodes: list[Node], stop_ids: set[int]) -> list[Node]:
    """Nodes found by a backward data-edge BFS from ``output_nodes`` that stops at ``stop_ids`` (GE §3.7.1).

    Output nodes that are themselves input producers are not part of the region. O(region + its in-edges).
    """
    seen: dict[int, Node] = {}
    queue: deque[Node] = deque()
    for node in output_nodes:
        if node.id not in stop_ids and node.id not in seen:
            seen[node.id] = node
            queue.append(node)
    while queue:
        node = queue.popleft()
        for prod in graph.producers(node):
            if prod is None:
                continue
            p = prod[0]
            if p.id in stop_ids or p.id in seen:
                continue
            seen[p.id] = p
            queue.append(p)
    return list(seen.values())


def escaping_use(graph: Graph, region: dict[int, Node], output_ids: set[int]) -> tuple[Node, int, Node, int] | None:
    """The first data edge ``(inner, port, outside consumer, input port)`` that leaves ``region`` from a node
    that is not an output node, or None when the region is self-contained (GE §3.7.1).

    "First": region nodes in ``region`` order, then output port, then edge order. The use tables are read in place
    and the search stops at that edge, so the cost is the uses read up to it: O(edges inside the region + 1), not
    the fan-out of an inner node (a Const matched by the pattern but shared by thousands of nodes answers at its
    first outside use).
    """
    for nid, node in region.items():
        if nid in output_ids:
            continue
        port = 0
        for uses in graph.output_uses(node):
            for did, in_port in uses:
                if did not in region:
                    return node, port, graph.node(did), in_port
            port += 1
    return None
