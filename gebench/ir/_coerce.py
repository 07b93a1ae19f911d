"""Accepting graphs from the layers above the IR without knowing them."""

from __future__ import annotations

from typing import Any

from ._graph import Graph

__all__ = ["as_graph"]


def as_graph(value: Any) -> Graph:
    """``value`` itself when it is an IR graph, or the IR graph a wrapper keeps in ``._ir``
    (``ge.graph.Graph``, ``Run.snapshots`` values). O(1).

    Raises:
        TypeError: ``value`` is neither.
    """
    if isinstance(value, Graph):
        return value
    inner = getattr(value, "_ir", None)
    if isinstance(inner, Graph):
        return inner
    raise TypeError(f"expected an ir.Graph or a ge.graph.Graph, got {type(value).__name__}")
