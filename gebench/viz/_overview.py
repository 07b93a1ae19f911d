"""A whole-model overview for graphs too large to lay out node by node.

Nodes are grouped by the leading components of their names (``/`` separated as in framework exports, else
``_`` separated), as deep as possible while keeping at most ``max_groups`` groups; each group is drawn as
one box (its name prefix, its size and its most common op types) and group-to-group data edges as one
edge with a count. Laying out a few hundred boxes takes well under a second where the full graph would
take minutes. Read-only.
"""

from __future__ import annotations

import re
from collections import Counter

from gebench import ir

from ._dot import CONST_OP_TYPES, GraphView, ViewEdge, ViewNode

__all__ = ["build_overview", "group_keys"]

_SPLIT = re.compile(r"[/_.]")


def _parts(name: str) -> list[str]:
    if "/" in name:
        return [p for p in name.split("/") if p]
    return [p for p in _SPLIT.split(name) if p]


def group_keys(graph: ir.Graph, *, max_groups: int = 200) -> dict[int, str]:
    """Node id -> group name: the deepest name-prefix depth (1..6) giving at most ``max_groups`` groups
    (depth 1 when even that gives more). Const nodes join the group of their first consumer. O(n * depth)."""
    nodes = graph.nodes()
    parts = {n.id: _parts(n.name) or [n.name] for n in nodes}
    best: dict[int, str] | None = None
    for depth in range(1, 7):
        keys = {nid: "/".join(p[:min(depth, max(1, len(p) - 1))]) for nid, p in parts.items()}
        if best is not None and len(set(keys.values())) > max_groups:
            break
        best = keys
        if all(len(p) - 1 <= depth for p in parts.values()):
            break
    assert best is not None
    for node in nodes:
        if node.op_type in CONST_OP_TYPES:
            uses = graph.all_uses(node)
            if uses:
                best[node.id] = best[uses[0][1].id]
    return best


def build_overview(graph: ir.Graph, *, max_groups: int = 200) -> GraphView:
    """The grouped view of ``graph``; ``element_of`` maps every node id to its group's element (``g<k>``)."""
    keys = group_keys(graph, max_groups=max_groups)
    order: dict[str, int] = {}
    members: dict[int, list[int]] = {}
    for node in graph.nodes():
        k = order.setdefault(keys[node.id], len(order))
        members.setdefault(k, []).append(node.id)
    if len(order) > max_groups:
        # even the first name component gives too many groups: merge neighbours (in topological order)
        per = -(-len(order) // max_groups)
        names = list(order)
        merged: dict[str, int] = {}
        for i, key in enumerate(names):
            merged[key] = i // per
        label = {i // per: f"{names[i]} \u2026 {names[min(len(names), i + per) - 1]}" if per > 1 else names[i]
                 for i in range(0, len(names), per)}
        new_members: dict[int, list[int]] = {}
        for key, k in order.items():
            new_members.setdefault(merged[key], []).extend(members[k])
        keys = {nid: label[merged[key]] for nid, key in keys.items()}
        order = {label[g]: g for g in sorted(new_members)}
        members = new_members
    group_of = {nid: order[key] for nid, key in keys.items()}
    edge_count: Counter[tuple[int, int]] = Counter()
    for src, _, dst, _ in graph.data_edges():
        a, b = group_of[src.id], group_of[dst.id]
        if a != b:
            edge_count[(a, b)] += 1
    nodes = []
    for key, k in order.items():
        ops = Counter(graph.node(i).op_type for i in members[k] if graph.node(i).op_type not in CONST_OP_TYPES)
        top = ", ".join(op for op, _ in ops.most_common(2)) or "Const"
        nodes.append(ViewNode(k, f"{len(members[k])} nodes: {top}", key or "(root)"))
    edges = [ViewEdge(a, -2, b, -2, str(c) if c > 1 else "") for (a, b), c in sorted(edge_count.items())]
    return GraphView(graph.name, nodes, edges, {nid: f"g{k}" for nid, k in group_of.items()},
                     total_nodes=len(graph), edge_labels=True, focused=False, element_prefix="g", groups=members)
