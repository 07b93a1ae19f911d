"""Structural diffs between two versions of a graph (before/after a rewrite, a pass or a stage).

Node ids are stable and never reused, and snapshots are copies that keep ids, so nodes are aligned by id:
a node only in ``before`` was removed, only in ``after`` was added, and in both but with a different op
type, name, attrs, descs or producers was changed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gebench import ir

__all__ = ["GraphDiff", "diff_graphs", "diff_highlight"]


@dataclass
class GraphDiff:
    """Ids of removed / added / changed nodes, with a reason per changed node."""

    removed: list[int] = field(default_factory=list)
    added: list[int] = field(default_factory=list)
    changed: dict[int, str] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not (self.removed or self.added or self.changed)

    def summary(self) -> str:
        return f"-{len(self.removed)} removed, +{len(self.added)} added, ~{len(self.changed)} changed"


def _producer_key(graph: ir.Graph, node: ir.Node) -> list[tuple[int, int] | None]:
    return [None if p is None else (p[0].id, p[1]) for p in graph.producers(node)]


def _change(before: ir.Graph, b: ir.Node, after: ir.Graph, a: ir.Node) -> str:
    if b.op_type != a.op_type:
        return f"op type {b.op_type} -> {a.op_type}"
    if b.name != a.name:
        return f"renamed {b.name} -> {a.name}"
    if _producer_key(before, b) != _producer_key(after, a):
        return "inputs rewired"
    if b.attrs.keys() != a.attrs.keys() or any(b.attrs[k] != a.attrs[k] for k in b.attrs):
        keys = sorted(k for k in set(b.attrs) | set(a.attrs) if b.attrs.get(k) != a.attrs.get(k))
        return "attrs " + ", ".join(keys)
    if b.inputs != a.inputs or b.outputs != a.outputs:
        return "tensor descs"
    return ""


def diff_graphs(before: ir.Graph | Any, after: ir.Graph | Any) -> GraphDiff:
    """Compare two graphs node by node (aligned by id). O(n + e); neither graph is mutated.

    ``before`` and ``after`` are ``ir.Graph`` or ``ge.graph.Graph`` (its ``.ir`` is compared); the diff names IR
    node ids (``graph.ir.node(i)``)."""
    before, after = ir.as_graph(before), ir.as_graph(after)
    diff = GraphDiff()
    b_nodes = {n.id: n for n in before.nodes()}
    a_nodes = {n.id: n for n in after.nodes()}
    diff.removed = [nid for nid in b_nodes if nid not in a_nodes]
    diff.added = [nid for nid in a_nodes if nid not in b_nodes]
    for nid, b in b_nodes.items():
        a = a_nodes.get(nid)
        if a is None:
            continue
        why = _change(before, b, after, a)
        if why:
            diff.changed[nid] = why
    return diff


def diff_highlight(diff: GraphDiff) -> dict[int, str]:
    """Node id -> diff status (``removed``/``added``/``changed``) for restyling a drawing."""
    out: dict[int, str] = {nid: "removed" for nid in diff.removed}
    out.update({nid: "added" for nid in diff.added})
    out.update({nid: "changed" for nid in diff.changed})
    return out
