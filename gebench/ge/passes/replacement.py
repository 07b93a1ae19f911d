"""``create_replacement`` (spec §2.1.9)."""

from __future__ import annotations

from typing import Any

__all__ = ["create_replacement"]


def create_replacement(graph: Any) -> Any:
    """Return ``graph`` unchanged (a readability helper).

    Raises:
        TypeError: ``graph`` is not a ``ge.graph.Graph``.
    """
    from gebench.ge.graph import Graph

    if not isinstance(graph, Graph):
        raise TypeError(f"replacement graph must be a ge.graph.Graph (got {type(graph).__name__})")
    return graph
