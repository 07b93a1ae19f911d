"""``can_fuse``, ``report_fuse`` and :class:`FuseCheckResult` (spec §2.1.18–§2.1.19)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from . import _session
from ._native import PassContext, ir_node_of

__all__ = ["FuseCheckResult", "can_fuse", "report_fuse"]

# Node attributes that must agree among nodes fused into one (GE's IsSupportFuse checks).
_SCOPE_ATTRS = ("_stream_label", "_super_kernel_scope", "_super_kernel_options", "_op_aicore_num",
                "_op_vectorcore_num")


@dataclasses.dataclass(frozen=True)
class FuseCheckResult:
    """Whether a set of nodes may be fused, and why not."""

    ok: bool
    reason: str = ""


def _ir_nodes(nodes: Iterable[Any], what: str) -> list[Any]:
    from gebench.ge.graph import Node

    out = []
    for n in nodes:
        if not isinstance(n, Node):
            raise TypeError(f"{what}: every element must be a ge.graph.Node, got {type(n).__name__}")
        out.append(ir_node_of(n, what))
    return out


def can_fuse(nodes: Iterable[Any]) -> FuseCheckResult:
    """Check whether ``nodes`` could be fused into one node. Never modifies the graph.

    Cost: O(nodes) plus a cycle check bounded by topological positions.

    Raises:
        TypeError: an element is not a ``ge.graph.Node``.
        RuntimeError: a node view is invalid.
    """
    from gebench.fusion import would_create_cycle

    ir_nodes = _ir_nodes(nodes, "can_fuse")
    if not ir_nodes:
        return FuseCheckResult(False, "node set is empty")
    for n in ir_nodes:
        if not n.alive:
            raise RuntimeError(f"can_fuse: node {n.name!r} has been removed from its graph")
    graph = ir_nodes[0].graph
    if any(n.graph is not graph for n in ir_nodes):
        return FuseCheckResult(False, "nodes belong to different graphs")
    for attr in _SCOPE_ATTRS:
        values = {repr(n.attrs[attr]) for n in ir_nodes if attr in n.attrs}
        if len(values) > 1:
            return FuseCheckResult(False, f"nodes have conflicting {attr} settings")
    unique = list({n.id: n for n in ir_nodes}.values())
    if would_create_cycle(graph, unique):
        return FuseCheckResult(False, "it will create cycle after fuse")
    return FuseCheckResult(True, "")


def report_fuse(nodes_before: Iterable[Any], nodes_after: Iterable[Any], context: PassContext) -> None:
    """Record a hand-written rewrite: stamp the pass name on ``nodes_after`` and count one match/effect.

    Call it after re-wiring and before removing the old nodes.

    Raises:
        TypeError: an element is not a ``ge.graph.Node`` or ``context`` is not a ``PassContext``.
        RuntimeError: ``nodes_before`` is empty, nodes span graphs, or the context has no pass name
            (the message is also set on ``context``).
    """
    before = _ir_nodes(nodes_before, "report_fuse nodes_before")
    after = _ir_nodes(nodes_after, "report_fuse nodes_after")
    if not isinstance(context, PassContext):
        raise TypeError(f"report_fuse(): context must be a PassContext, got {type(context).__name__}")

    def fail(msg: str) -> None:
        context.set_error_message(msg)
        raise RuntimeError(msg)

    if not before:
        fail("report_fuse: nodes_before must not be empty")
    pass_name = context.get_pass_name()
    if not pass_name:
        fail("report_fuse: the context has no pass name")
    if any(not n.alive for n in before + after):
        fail("report_fuse: a node has already been removed from its graph; call report_fuse before removing")
    graph = before[0].graph
    if any(n.graph is not graph for n in before + after):
        fail("report_fuse: nodes_before and nodes_after must belong to one graph")
    from gebench.fusion._rewriter import ORIGIN_NAMES_ATTR, inherited_origin_names

    origin = inherited_origin_names(before)
    for n in after:
        graph.touch(n)
        n.provenance = pass_name
        n.attrs[ORIGIN_NAMES_ATTR] = list(origin)
    session = _session.current()
    if session is not None:
        session.note_report_fuse(before, after, _session.caller_location())
