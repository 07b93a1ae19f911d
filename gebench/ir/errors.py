"""Exceptions raised by the IR."""

from __future__ import annotations

__all__ = ["GraphError", "CycleError", "TextFormError"]


class GraphError(ValueError):
    """A graph operation broke an IR rule; the message names the node, port and rule."""


class CycleError(GraphError):
    """An edge would close a cycle in the graph."""


class TextFormError(ValueError):
    """The text form of a graph could not be parsed; the message gives the line and column."""
