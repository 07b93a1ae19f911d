"""Random structural mutations of an ``ir.Graph`` for property tests (shared by the IR and journal tests).

:func:`mutate` applies one step ``(op, a, b, port)`` drawn by hypothesis; the integers pick nodes, edges, ports
and names. A refused mutation raises ``GraphError`` and leaves the graph as it was.
"""

from __future__ import annotations

from gebench.ir import Graph

#: the structural mutations :func:`mutate` knows
STRUCTURAL = ["add_node", "add_edge", "remove_edge", "remove_node", "remove_nodes", "add_control",
              "remove_control", "replace_uses", "rename", "retype", "place"]


def mutate(g: Graph, op: str, a: int, b: int, port: int) -> None:
    """Apply mutation ``op`` to ``g``; an unknown ``op`` does nothing. Raises GraphError when refused."""
    nodes = g.nodes()
    if op == "add_node" or not nodes:
        g.add_node(f"Op{a % 3}", inputs=1 + port % 3, outputs=1 + port % 2)
    elif op == "add_edge":
        src, dst = nodes[a % len(nodes)], nodes[b % len(nodes)]
        g.add_edge(src, port % len(src.outputs), dst, port % len(dst.inputs))
    elif op == "remove_edge":
        edges = g.data_edges()
        if edges:
            g.remove_edge(*edges[a % len(edges)])
    elif op == "remove_node":
        g.remove_node(nodes[a % len(nodes)])
    elif op == "remove_nodes":  # a node, up to two of its consumers (edges among them) and one more, in one call
        first = nodes[a % len(nodes)]
        picked = {first.id: first}
        for succ in g.data_successors(first)[:2]:
            picked.setdefault(succ.id, succ)
        other = nodes[b % len(nodes)]
        picked.setdefault(other.id, other)
        g.remove_nodes(list(picked.values()))
    elif op == "add_control":
        g.add_control_edge(nodes[a % len(nodes)], nodes[b % len(nodes)])
    elif op == "remove_control":
        edges = g.control_edges()
        if edges:
            g.remove_control_edge(*edges[a % len(edges)])
    elif op == "replace_uses":
        src, dst = nodes[a % len(nodes)], nodes[b % len(nodes)]
        g.replace_all_uses(src, 0, dst, 0)
    elif op == "rename":
        g.rename(nodes[a % len(nodes)], f"n{b}")
    elif op == "retype":
        g.set_op_type(nodes[a % len(nodes)], f"Op{b % 4}")
    elif op == "place":
        new = g.add_node("Placed", inputs=1, outputs=1)
        g.place_between([new], after=[nodes[a % len(nodes)]], before=[nodes[b % len(nodes)]])
