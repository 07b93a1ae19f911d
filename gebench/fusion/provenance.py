"""Provenance: which passes made a node of a compiled graph, and from which original nodes.

GE marks what a fusion made with two list-of-strings attrs, and gebench's rewriter stamps both as GE does:

* ``pass_name`` (:data:`~gebench.fusion._rewriter.PASS_NAME_ATTR`): on nodes spliced in by a
  ``PatternFusionPass`` or a ``DecomposePass``, the ``pass_name`` lists of the replaced nodes followed by the pass
  that replaced them, so a node made by ``Second`` from a node ``First`` made carries ``["First", "Second"]``;
* ``_datadump_original_op_names`` (:data:`~gebench.fusion._rewriter.ORIGIN_NAMES_ATTR`): the original op names
  of the replaced nodes (each one's own list, such as the ONNX node name an importer stamped, else its name).

The ledger adds what the attrs cannot tell: every rewrite (``REPLACED`` record) lists the nodes it replaced and
the ids of the nodes it added, so following records from a node back to nodes no rewrite added gives the nodes
of the input graph it comes from, with every step (pass, stage, pattern) on the way. This also covers nodes of
``report_fuse`` and ``SubgraphRewriter.replace``, which GE gives no ``pass_name``.

:func:`provenance` answers for one node; ``Run.provenance(node)`` is the same as a method. Cost: the first call
on a ledger indexes its rewrites (O(records)); each call then costs O(steps + nodes on the way back).
"""

from __future__ import annotations

import dataclasses
import weakref
from typing import Any

from ._rewriter import ORIGIN_NAMES_ATTR, PASS_NAME_ATTR

__all__ = ["Provenance", "ProvenanceStep", "provenance"]


@dataclasses.dataclass(frozen=True)
class ProvenanceStep:
    """One rewrite on the way from the original nodes to a node: the pass, where it ran, what it replaced
    (``replaced``: node names as they were then) and the ids of the nodes it added."""

    pass_name: str
    stage: str
    graph_name: str
    pattern_name: str
    via: str
    replaced: tuple[str, ...]
    added_ids: tuple[int, ...]

    def to_dict(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "replaced": list(self.replaced), "added_ids": list(self.added_ids)}


@dataclasses.dataclass(frozen=True)
class Provenance:
    """Where a node of a compiled graph comes from.

    Attributes:
        node: the node's name; ``node_id`` its id; ``graph_name`` the graph it is in (root or a subgraph).
        passes: the passes that made it, oldest first: its ``pass_name`` attr when it has one (GE's mark), else
            the passes of :attr:`steps`. Empty for a node of the input graph.
        original_nodes: names of the input graph's nodes it was made from (itself for a node no pass made).
        original_op_names: its ``_datadump_original_op_names`` (names in the source model, such as the ONNX
            node names; its own name when it has none).
        steps: the rewrites that led to it, in run order.
        created_by_pass: True when a pass made the node (a rewrite added it, or it carries ``pass_name``).
    """

    node: str
    node_id: int
    graph_name: str
    passes: tuple[str, ...]
    original_nodes: tuple[str, ...]
    original_op_names: tuple[str, ...]
    steps: tuple[ProvenanceStep, ...]
    created_by_pass: bool

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able dict."""
        return {"node": self.node, "node_id": self.node_id, "graph_name": self.graph_name,
                "passes": list(self.passes), "original_nodes": list(self.original_nodes),
                "original_op_names": list(self.original_op_names), "steps": [s.to_dict() for s in self.steps],
                "created_by_pass": self.created_by_pass}

    def text(self) -> str:
        """Readable lines: who made the node, from what, step by step."""
        if not self.created_by_pass:
            return f"{self.node!r} is a node of the input graph (no pass made it)"
        lines = [f"{self.node!r} was made by {' -> '.join(self.passes) or 'a pass'} from "
                 f"{', '.join(self.original_nodes) or '(no recorded node)'}"]
        if list(self.original_op_names) != list(self.original_nodes):
            lines.append(f"  original op names: {', '.join(self.original_op_names)}")
        for step in self.steps:
            where = f" [{step.pattern_name}]" if step.pattern_name else ""
            via = f" via {step.via}" if step.via else ""
            lines.append(f"  {step.stage} / {step.pass_name}{where}{via}: replaced {', '.join(step.replaced)}")
        return "\n".join(lines)


# ledger -> (records indexed, {(graph name, added node id): record index})
_INDEXES: weakref.WeakKeyDictionary[Any, tuple[int, dict[tuple[str, int], int]]] = weakref.WeakKeyDictionary()


def _added_index(ledger: Any) -> dict[tuple[str, int], int]:
    """``(graph name, node id) -> index of the REPLACED record that added it``, grown with the ledger."""
    records = ledger.records
    done, index = _INDEXES.get(ledger, (0, {}))
    for i in range(done, len(records)):
        r = records[i]
        if getattr(r.status, "value", r.status) == "REPLACED":
            for nid in r.added_node_ids:
                index[(r.graph_name, nid)] = i
    _INDEXES[ledger] = (len(records), index)
    return index


def _resolve(graph: Any, node: Any) -> tuple[Any, Any]:
    """``(ir node, its graph)`` for a name, an id, an ``ir.Node`` or a ``ge.graph.Node`` in ``graph`` or its
    subgraphs.

    Raises:
        KeyError: no such node (the message names it).
    """
    ir_node = getattr(node, "_ir_node", node)
    graphs = list(graph.all_graphs()) if hasattr(graph, "all_graphs") else [graph]
    for g in graphs:
        if isinstance(ir_node, str):
            found = g.find(ir_node)
        elif isinstance(ir_node, int) and not isinstance(ir_node, bool):
            found = g.node(ir_node) if g.has_node_id(ir_node) else None
        else:
            found = ir_node if ir_node in g else None
        if found is not None:
            return found, g
    raise KeyError(f"no node {getattr(node, 'name', node)!r} in graph {graph.name!r} or its subgraphs")


def provenance(run: Any, node: Any) -> Provenance:
    """Which passes made ``node`` of ``run``'s final graph, and from which original nodes.

    Args:
        run: a :class:`~gebench.fusion.runtime.Run` (its graph and ledger).
        node: a node name, an id, an ``ir.Node`` or a ``ge.graph.Node`` of ``run``'s graph (or a subgraph).

    Raises:
        KeyError: the node is not in the run's graph.
    """
    ir_node, graph = _resolve(run.ir_graph, node)
    ledger = run.ledger
    records = ledger.records
    index = _added_index(ledger)
    steps: list[int] = []
    originals: list[str] = []
    seen_steps: set[int] = set()
    stack: list[tuple[str, int, str]] = [(graph.name, ir_node.id, ir_node.name)]
    seen_nodes: set[tuple[str, int]] = set()
    while stack:  # depth-first back through the rewrites; leaves are nodes no rewrite added
        gname, nid, name = stack.pop()
        if (gname, nid) in seen_nodes:
            continue
        seen_nodes.add((gname, nid))
        ri = index.get((gname, nid))
        if ri is None:
            originals.append(name)
            continue
        if ri not in seen_steps:
            seen_steps.add(ri)
            steps.append(ri)
        r = records[ri]
        for tid, tname in reversed(list(zip(r.target_node_ids, r.target_node_names, strict=False))):
            stack.append((r.graph_name, tid, tname))
    steps.sort()
    made = tuple(_step(records[i]) for i in steps)
    marks = ir_node.attrs.get(PASS_NAME_ATTR)
    if isinstance(marks, list) and marks:
        passes = tuple(str(m) for m in marks)
    else:
        passes = tuple(s.pass_name for s in made)
    origin = ir_node.attrs.get(ORIGIN_NAMES_ATTR)
    original_op_names = tuple(str(o) for o in origin) if isinstance(origin, list) and origin else (ir_node.name,)
    created = bool(made) or bool(passes) or bool(ir_node.provenance)
    if not made and not passes and ir_node.provenance:
        passes = (ir_node.provenance,)
    original_nodes = tuple(originals) if made else (() if created else (ir_node.name,))
    return Provenance(ir_node.name, ir_node.id, graph.name, passes, original_nodes, original_op_names, made, created)


def _step(record: Any) -> ProvenanceStep:
    detail = record.detail if isinstance(record.detail, dict) else {}
    return ProvenanceStep(record.pass_name, record.stage, record.graph_name, record.pattern_name,
                          str(detail.get("via") or ""), tuple(record.target_node_names),
                          tuple(record.added_node_ids))
