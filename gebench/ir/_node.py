"""IR nodes."""

from __future__ import annotations

import operator
from typing import TYPE_CHECKING, Any

from ._tensor import TensorDesc, copy_attrs

if TYPE_CHECKING:
    from ._graph import Graph

__all__ = ["Node", "NO_INPUTS", "NO_SUBGRAPHS"]

_new_object = object.__new__
_copy_desc = TensorDesc.copy

#: The ``subgraph_names`` of every node that owns no subgraph (one shared, never-changed empty list).
NO_SUBGRAPHS: list[str] = []
#: The inputs list of a node without input anchors (a Const, a Variable): shared, so never changed in place
#: (the graph gives a node a new list when it adds an input anchor).
NO_INPUTS: list[Any] = []


class Node:
    """One operator instance in a :class:`Graph`.

    ``id`` is an integer unique in the graph and never reused. ``name`` is unique in its graph and
    ``op_type`` is GE's op type; both change only through :meth:`Graph.rename` / :meth:`Graph.set_op_type`
    so the graph's indexes stay current. ``attrs`` and the anchor descs may be edited in place (no index
    depends on them), after calling ``graph.touch(node)`` so that open journals (snapshots) keep the node as it was
    (a node removed from its graph: after :meth:`own_copies`).
    ``inputs[i]``/``outputs[i]`` are the descs of input/output anchor ``i``; ``input_names`` and
    ``output_names`` run parallel to them (``""`` where unknown). Anchors are added or dropped only
    through the graph. ``provenance`` names the pass that created the node (``""`` for original nodes).

    ``input_names``, ``output_names`` and ``subgraph_names`` may be shared with other nodes (builders hand
    every node of an op type the same name lists; nodes without subgraphs share :data:`NO_SUBGRAPHS`): they are
    never changed in place. Nor is an empty ``inputs`` list, which importers and builders may share
    (:data:`NO_INPUTS`). Code that changes one assigns a new list (``node.input_names = [*old, name]``),
    as the graph's anchor and subgraph methods do.
    """

    __slots__ = ("id", "_name", "_op_type", "attrs", "inputs", "outputs", "input_names", "output_names",
                 "subgraph_names", "provenance", "_graph")

    def __init__(self, node_id: int, name: str, op_type: str, graph: Graph) -> None:
        self.id = node_id
        self._name = name
        self._op_type = op_type
        self.attrs: dict[str, Any] = {}
        self.inputs: list[TensorDesc] = []
        self.outputs: list[TensorDesc] = []
        self.input_names: list[str] = []
        self.output_names: list[str] = []
        self.subgraph_names: list[str] = []
        self.provenance = ""
        self._graph: Graph | None = graph

    # read-only views of the slots; their getters are C-level (``attrgetter``), so a read costs no Python call.
    # Python 3.11 does not specialise a property read (measured: 37 ns against 9 ns for the slot), so the
    # library's per-candidate and per-rewrite loops read ``_name`` / ``_op_type`` directly; they never write them.
    name = property(operator.attrgetter("_name"), doc="The node's name (unique in its graph).")
    op_type = property(operator.attrgetter("_op_type"), doc="GE's op type.")

    @property
    def graph(self) -> Graph:
        """The owning graph.

        Raises:
            GraphError: the node was removed from its graph.
        """
        if self._graph is None:
            from .errors import GraphError

            raise GraphError(f"node {self._name!r} (#{self.id}) has been removed from its graph")
        return self._graph

    @property
    def alive(self) -> bool:
        """False once the node has been removed from its graph."""
        return self._graph is not None

    @property
    def num_inputs(self) -> int:
        return len(self.inputs)

    @property
    def num_outputs(self) -> int:
        return len(self.outputs)

    def input_index(self, name: str) -> int:
        """Index of the input anchor called ``name``; -1 when there is none."""
        try:
            return self.input_names.index(name)
        except ValueError:
            return -1

    def _clone_into(self, graph: Graph, node_id: int, name: str) -> Node:
        clone = _new_object(Node)
        clone.id = node_id
        clone._name = name
        clone._op_type = self._op_type
        clone._graph = graph
        clone.attrs = copy_attrs(self.attrs)
        clone.inputs = list(map(_copy_desc, self.inputs))  # map: no comprehension call on Python 3.11
        clone.outputs = list(map(_copy_desc, self.outputs))
        clone.input_names = self.input_names  # never changed in place (see the class docstring): shared
        clone.output_names = self.output_names
        clone.subgraph_names = self.subgraph_names
        clone.provenance = self.provenance
        return clone

    def _share_into(self, graph: Graph | None) -> Node:
        """A node object of ``graph`` with this node's id and fields that shares its ``attrs`` dict and anchor desc
        lists: a copy-on-write copy (:meth:`Graph.copy` with ``share=True`` and built snapshots, whose graphs give
        the node private copies in :meth:`Graph.touch` before its first in-place change), or with ``graph``
        None a view of a removed node (what graph journals keep). O(1)."""
        clone = _new_object(Node)
        clone.id = self.id
        clone._name = self._name
        clone._op_type = self._op_type
        clone._graph = graph
        clone.attrs = self.attrs
        clone.inputs = self.inputs
        clone.outputs = self.outputs
        clone.input_names = self.input_names
        clone.output_names = self.output_names
        clone.subgraph_names = self.subgraph_names
        clone.provenance = self.provenance
        return clone

    def own_copies(self) -> None:
        """Give this node private deep copies of its ``attrs`` and anchor descs. Call it before editing a node that
        was removed from its graph in place: a journal of that graph may still read the originals (the facade's
        setters do). O(attrs + anchors)."""
        self.attrs = copy_attrs(self.attrs)
        self.inputs = list(map(_copy_desc, self.inputs))
        self.outputs = list(map(_copy_desc, self.outputs))

    def __repr__(self) -> str:
        return f"<Node #{self.id} {self._name}: {self._op_type}>"
