"""Pattern graphs: an IR graph of Data wildcards, ops and one NetOutput, compiled for the matcher.

GE's pattern validation rules (spec §3.5) live here: no subgraphs; no node other than Data/NetOutput with
control edges or dynamic inputs/outputs; acyclic; at least one output.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterable
from typing import Any, NamedTuple

from gebench.ir import Graph, Node, TensorValue

__all__ = ["Capture", "PatternGraph", "PatternNode", "CONST_TYPES", "DATA_TYPE", "NETOUTPUT_TYPE", "schema_of"]

_log = logging.getLogger(__name__)

#: Op types GE treats as the same constant type when matching.
CONST_TYPES = frozenset({"Const", "Constant"})
DATA_TYPE = "Data"
NETOUTPUT_TYPE = "NetOutput"

_MISSING = object()
_ops_module: Any = _MISSING


def schema_of(op_type: str) -> Any:
    """The op catalogue schema of ``op_type`` (``gebench.ops.get_schema``) or None.

    Returns None when the catalogue is not importable, so the fusion core works on graphs of any op type.
    """
    global _ops_module
    if _ops_module is _MISSING:
        try:
            from gebench import ops as ops_module
        except ImportError as exc:  # the catalogue is optional for the fusion core
            _log.debug("op catalogue unavailable (%s); schemas are not consulted", exc)
            ops_module = None
        _ops_module = ops_module
    if _ops_module is None:
        return None
    return _ops_module.get_schema(op_type)


class Capture(NamedTuple):
    """A captured pattern tensor: output ``port`` of pattern node ``node_id``."""

    node_id: int
    port: int


@dataclasses.dataclass(frozen=True, slots=True)
class PatternNode:
    """One pattern node as the matcher sees it.

    ``inputs`` lists the connected inputs in port order as ``(producer pattern node id, producer port)``;
    ``kind`` is ``"data"``, ``"const"`` or ``"op"``.
    """

    id: int
    name: str
    op_type: str
    kind: str
    inputs: tuple[tuple[int, int], ...]
    data_index: int
    node: Node


class PatternGraph:
    """A pattern: Data wildcards (attr ``index``), op nodes and a ``NetOutput`` whose inputs are the outputs.

    The graph is used read-only; compile it once (on the first :meth:`validate`) and match many times.

    Args:
        graph: the pattern graph.
        captures: ``(pattern node id, output port)`` pairs in capture order.
        name: the pattern name (defaults to ``graph.name``).
    """

    def __init__(self, graph: Graph, captures: Iterable[tuple[int, int]] = (), name: str | None = None) -> None:
        self.graph = graph
        self.captures: list[Capture] = [Capture(int(n), int(p)) for n, p in captures]
        self.name = graph.name if name is None else name
        self._compiled = False
        self._error: str | None = None
        self.nodes: dict[int, PatternNode] = {}
        self.outputs: list[tuple[int, int]] = []
        self.data_ids: list[int] = []

    def __repr__(self) -> str:
        return f"<PatternGraph {self.name!r}: {len(self.graph)} nodes, {len(self.outputs)} outputs>"

    def validate(self) -> str | None:
        """None if the pattern is usable, else the reason it matches nothing (GE §3.5). Cached; O(pattern)."""
        if not self._compiled:
            self._error = self._compile()
            self._compiled = True
        return self._error

    # ------------------------------------------------------------------ compilation
    def _compile(self) -> str | None:
        g = self.graph
        if g.subgraphs:
            return f"pattern {self.name!r} has subgraphs ({', '.join(sorted(g.subgraphs))}); patterns may not"
        nodes = g.nodes()
        for node in nodes:
            if node.subgraph_names:
                return f"pattern {self.name!r}: node {node.name!r} owns subgraphs; patterns may not"
            if node.op_type in (DATA_TYPE, NETOUTPUT_TYPE):
                continue
            if g.control_predecessors(node) or g.control_successors(node):
                return (f"pattern {self.name!r}: node {node.name!r} ({node.op_type}) has control edges; only "
                        "Data and NetOutput may")
            dynamic = _dynamic_anchor(node)
            if dynamic:
                return (f"pattern {self.name!r}: node {node.name!r} ({node.op_type}) has dynamic {dynamic}; ops "
                        "with dynamic inputs or outputs cannot appear in patterns")
        # the IR keeps graphs acyclic on every edge insertion; double-check the order it maintains
        for src, _sp, dst, _dp in g.data_edges():
            if g.position(src) >= g.position(dst):
                return f"pattern {self.name!r} is cyclic at edge {src.name} -> {dst.name}"
        netouts = [n for n in nodes if n.op_type == NETOUTPUT_TYPE]
        if not netouts:
            return f"pattern {self.name!r} has no NetOutput node, so it has no outputs"
        if len(netouts) > 1:
            return f"pattern {self.name!r} has {len(netouts)} NetOutput nodes; it needs exactly one"
        outputs: list[tuple[int, int]] = []
        for port, prod in enumerate(g.producers(netouts[0])):
            if prod is None:
                return f"pattern {self.name!r}: input {port} of {netouts[0].name!r} is not connected"
            outputs.append((prod[0].id, prod[1]))
        if not outputs:
            return f"pattern {self.name!r} has no outputs (its NetOutput has no inputs)"
        data: list[tuple[int, float, int]] = []
        for node in nodes:
            if node.op_type == NETOUTPUT_TYPE:
                continue
            if node.op_type == DATA_TYPE:
                kind = "data"
                idx = node.attrs.get("index")
                index = int(idx) if isinstance(idx, int) and not isinstance(idx, bool) else -1
                data.append((index if index >= 0 else 1 << 30, g.position(node), node.id))
            else:
                kind = "const" if node.op_type in CONST_TYPES else "op"
                index = -1
            inputs = tuple((p[0].id, p[1]) for p in g.producers(node) if p is not None)
            self.nodes[node.id] = PatternNode(node.id, node.name, node.op_type, kind, inputs, index, node)
        self.outputs = outputs
        self.data_ids = [nid for _, _, nid in sorted(data)]
        for cap in self.captures:
            if cap.node_id not in self.nodes:
                _log.debug("pattern %s: capture of node #%d which is not a pattern node", self.name, cap.node_id)
        return None


def _dynamic_anchor(node: Node) -> str:
    """``"input 'x0'"`` / ``"output 'y1'"`` when an anchor is an instance of a dynamic IR input/output, else ``""``."""
    schema = schema_of(node.op_type)
    if schema is None:
        return ""
    for what, defs, names in (("input", schema.inputs, node.input_names), ("output", schema.outputs,
                                                                          node.output_names)):
        dyn = [d.name for d in defs if d.kind == "dynamic"]
        if not dyn:
            continue
        for anchor in names:
            for base in dyn:
                if anchor.startswith(base) and anchor[len(base):].isdigit():
                    return f"{what} {anchor!r}"
    return ""


def const_value(node: Node) -> TensorValue | None:
    """The ``value`` attr of a constant node, or None."""
    value = node.attrs.get("value")
    return value if isinstance(value, TensorValue) else None
