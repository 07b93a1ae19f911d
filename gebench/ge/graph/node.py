"""``Node`` of the ``ge.graph`` facade (spec §2.3.2): a view of one :class:`gebench.ir.Node`."""

from __future__ import annotations

from typing import Any, NoReturn

from gebench import ir

from ._attr import _AttrValue
from .tensor_desc import TensorDesc

__all__ = ["Node"]


def _note_change(node: ir.Node, what: str) -> None:
    """Tell the running pass hook's session (if any) that pass code changed ``node`` in place: GE keeps such
    changes whatever the hook then returns, so the runtime lints them where they surprise (meet_requirements)."""
    from gebench.ge.passes import _session

    note = getattr(_session.current(), "note_node_change", None)
    if note is not None:
        note(node.name, what)


def _got(value: Any) -> str:
    """gebench's detail after GE's message: what was given instead."""
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f" (got {text} of type {type(value).__name__})"


def _check_int(value: Any, message: str) -> int:
    """``value`` if it is an int (not a bool); else ``TypeError(message + detail)``, ``message`` being GE's text."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(message + _got(value))
    return value


def _check_str(value: Any, message: str) -> str:
    """``value`` if it is a str; else ``TypeError(message + detail)``, ``message`` being GE's text."""
    if not isinstance(value, str):
        raise TypeError(message + _got(value))
    return value


class Node:
    """A node of a graph. Not constructible from Python; graphs, match results and tensor holders hand them out.

    Every accessor returns a new wrapper and there is no ``__eq__``: compare nodes by ``name``. Methods that
    read or change the node raise ``RuntimeError`` once the node has been removed from its graph.
    """

    __slots__ = ("_ir_node",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError("Node objects should not be created directly. Get nodes from a Graph, a MatchResult or "
                           "a TensorHolder.")

    @classmethod
    def _wrap(cls, ir_node: ir.Node) -> Node:
        obj = cls.__new__(cls)
        obj._ir_node = ir_node
        return obj

    def _graph(self, failure: str = "") -> ir.Graph:
        """The node's graph; ``RuntimeError`` (starting with ``failure``, GE's message) once it was removed."""
        node = self._ir_node
        if not node.alive:
            raise RuntimeError(f"{failure}: " * bool(failure) + f"node {node.name!r} has been removed from its graph")
        return node.graph

    def _touch(self, what: str) -> None:
        """Tell the node's graph that the node is about to change in place (``what``: which part, for the running
        hook's session). A removed node takes private copies of its attrs and descs instead (a snapshot of its old
        graph may still read the originals)."""
        node = self._ir_node
        if node.alive:
            node.graph.touch(node)
        else:
            node.own_copies()
        _note_change(node, what)

    # -- identity
    @property
    def name(self) -> str:
        return self._ir_node.name

    @property
    def type(self) -> str:
        return self._ir_node.op_type

    # -- anchors and edges
    def get_inputs_size(self) -> int:
        """Number of valid input descs: connected or set inputs, dynamic instances included; unfed optional
        inputs (placeholder descs) are not counted."""
        return sum(1 for d in self._ir_node.inputs if not d.is_placeholder)

    def get_outputs_size(self) -> int:
        """Number of output descs."""
        return len(self._ir_node.outputs)

    def get_in_data_nodes_and_port_indexes(self, in_index: int) -> tuple[Node, int]:
        """The producer of input ``in_index`` and its *output* port.

        Raises:
            TypeError: ``in_index`` is not an int.
            RuntimeError: there is no such input or nothing feeds it.
        """
        _check_int(in_index, "Input index must be an integer")
        failure = f"Failed to get input data node for index {in_index}"
        graph = self._graph(failure)
        node = self._ir_node
        if not 0 <= in_index < len(node.inputs):
            raise RuntimeError(f"{failure}: node {node.name!r} ({node.op_type}) has no input {in_index}; "
                               f"it has {len(node.inputs)}")
        prod = graph.producer(node, in_index)
        if prod is None:
            raise RuntimeError(f"{failure}: input {in_index} of node {node.name!r} ({node.op_type}) is not connected")
        return Node._wrap(prod[0]), prod[1]

    def get_out_data_nodes_and_port_indexes(self, out_index: int) -> list[tuple[Node, int]]:
        """The consumers of output ``out_index`` with their *input* ports, in edge order.

        Raises:
            TypeError: ``out_index`` is not an int.
            RuntimeError: there is no such output.
        """
        _check_int(out_index, "Output index must be an integer")
        failure = f"Failed to get output data node for index {out_index}"
        graph = self._graph(failure)
        node = self._ir_node
        if not 0 <= out_index < len(node.outputs):
            raise RuntimeError(f"{failure}: node {node.name!r} ({node.op_type}) has no output {out_index}; "
                               f"it has {len(node.outputs)}")
        return [(Node._wrap(dst), port) for dst, port in graph.uses(node, out_index)]

    def get_in_control_nodes(self) -> list[Node]:
        return [Node._wrap(n) for n in self._graph().control_predecessors(self._ir_node)]

    def get_out_control_nodes(self) -> list[Node]:
        return [Node._wrap(n) for n in self._graph().control_successors(self._ir_node)]

    # -- attributes
    def has_attr(self, name: str) -> bool:
        _check_str(name, "attr_name must be a string")
        return name in self._ir_node.attrs

    def get_attr(self, key: str) -> Any:
        """The attr ``key`` converted by GE's rules (floats read back as float32 values, data-type lists as ints).

        Raises:
            TypeError: ``key`` is not a str.
            RuntimeError: the node has no such attr, or GE's API cannot read its kind.
        """
        _check_str(key, "Attribute key must be a string")
        try:
            value = self._ir_node.attrs[key]
        except KeyError:
            raise RuntimeError(f"Failed to get attribute '{key}' from Node: node {self.name!r} ({self.type}) has no "
                               f"attr {key!r}") from None
        return _AttrValue.from_ir(value, f"attr {key!r} of node {self.name!r}")

    def set_attr(self, key: str, value: Any) -> None:
        """Set attr ``key`` by GE's marshalling rules.

        Raises:
            TypeError: ``key`` is not a str.
            ValueError: ``value`` cannot be stored (empty list, mixed list, unsupported type).
            RuntimeError: the node was removed from its graph.
        """
        _check_str(key, "Attribute key must be a string")
        value = _AttrValue.to_ir(value, f"attr {key!r} of node {self.name!r}")  # GE converts before it sets
        graph = self._graph(f"Failed to set attribute '{key}' on Node {self.name}")
        graph.touch(self._ir_node)
        _note_change(self._ir_node, f"attr {key!r}")
        self._ir_node.attrs[key] = value

    def _port_desc(self, descs: list[ir.TensorDesc], index: Any, kind: str, failure: str = "") -> ir.TensorDesc:
        """Desc ``index`` of ``descs``. Raises ``TypeError`` (GE's "<Kind> index must be an integer") for a
        non-int index and ``RuntimeError`` starting with ``failure`` (GE's message) for a missing port."""
        _check_int(index, f"{kind.capitalize()} index must be an integer")
        if not 0 <= index < len(descs):
            raise RuntimeError(f"{failure}: " * bool(failure) + f"node {self.name!r} ({self.type}) has no {kind} "
                               f"{index}; it has {len(descs)}")
        return descs[index]

    def get_input_attr(self, name: str, index: int) -> Any:
        """Attr ``name`` of input desc ``index``. Raises RuntimeError when absent."""
        _check_str(name, "Attribute name must be a string")
        failure = f"Failed to get Node {self.name} input attribute '{name}' for index {index}"
        desc = self._port_desc(self._ir_node.inputs, index, "input", failure)
        if name not in desc.attrs:
            raise RuntimeError(f"{failure}: input {index} of node {self.name!r} has no attr {name!r}")
        return _AttrValue.from_ir(desc.attrs[name], f"attr {name!r} of input {index} of node {self.name!r}")

    def set_input_attr(self, name: str, index: int, value: Any) -> None:
        """Set attr ``name`` of input desc ``index``. Raises TypeError / RuntimeError (no such input) /
        ValueError (a value of no storable kind)."""
        _check_str(name, "Attribute name must be a string")
        _check_int(index, "Input index must be an integer")
        value = _AttrValue.to_ir(value, f"attr {name!r} of input {index} of node {self.name!r}")  # GE converts first
        self._port_desc(self._ir_node.inputs, index, "input",
                        f"Failed to set Node {self.name} input attribute '{name}' for index {index}")
        self._touch(f"attr {name!r} of input {index}")  # may replace the descs by private copies: read the desc after it
        self._ir_node.inputs[index].attrs[name] = value

    def get_output_attr(self, name: str, index: int) -> Any:
        """Attr ``name`` of output desc ``index``. Raises RuntimeError when absent."""
        _check_str(name, "Attribute name must be a string")
        failure = f"Failed to get Node {self.name} output attribute '{name}' for index {index}"
        desc = self._port_desc(self._ir_node.outputs, index, "output", failure)
        if name not in desc.attrs:
            raise RuntimeError(f"{failure}: output {index} of node {self.name!r} has no attr {name!r}")
        return _AttrValue.from_ir(desc.attrs[name], f"attr {name!r} of output {index} of node {self.name!r}")

    def set_output_attr(self, name: str, index: int, value: Any) -> None:
        """Set attr ``name`` of output desc ``index`` (errors as :meth:`set_input_attr`)."""
        _check_str(name, "Attribute name must be a string")
        _check_int(index, "Output index must be an integer")
        value = _AttrValue.to_ir(value, f"attr {name!r} of output {index} of node {self.name!r}")  # GE converts first
        self._port_desc(self._ir_node.outputs, index, "output",
                        f"Failed to set Node {self.name} output attribute '{name}' for index {index}")
        self._touch(f"attr {name!r} of output {index}")  # may replace the descs by private copies: read the desc after it
        self._ir_node.outputs[index].attrs[name] = value

    # -- descs
    def get_input_desc(self, index: int) -> TensorDesc:
        """A copy of input desc ``index``; change it and write it back with :meth:`update_input_desc`.

        Raises:
            TypeError: ``index`` is not an int.
            RuntimeError: no such input.
        """
        return TensorDesc._wrap(self._port_desc(self._ir_node.inputs, index, "input",
                                                f"Failed to get input desc for index {index}").copy())

    def get_output_desc(self, index: int) -> TensorDesc:
        """A copy of output desc ``index`` (see :meth:`get_input_desc`)."""
        return TensorDesc._wrap(self._port_desc(self._ir_node.outputs, index, "output",
                                                f"Failed to get output desc for index {index}").copy())

    def update_input_desc(self, index: int, desc: TensorDesc) -> None:
        """Replace input desc ``index`` with a copy of ``desc``.

        Raises:
            TypeError: ``desc`` is not a TensorDesc or ``index`` not an int.
            RuntimeError: no such input.
        """
        self._update(index, desc, "input")

    def update_output_desc(self, index: int, desc: TensorDesc) -> None:
        """Replace output desc ``index`` with a copy of ``desc`` (see :meth:`update_input_desc`)."""
        self._update(index, desc, "output")

    def _update(self, index: Any, desc: Any, kind: str) -> None:
        _check_int(index, f"{kind.capitalize()} index must be an integer")
        if not isinstance(desc, TensorDesc):
            raise TypeError("tensor_desc must be a TensorDesc" + _got(desc))
        node = self._ir_node
        self._port_desc(node.inputs if kind == "input" else node.outputs, index, kind,
                        f"Failed to update {kind} desc for index {index}")
        self._touch(f"{kind} desc {index}")  # may replace the desc lists by private copies: read them after it
        (node.inputs if kind == "input" else node.outputs)[index] = desc._desc.copy()

    def __copy__(self) -> NoReturn:
        raise RuntimeError("Node does not support copy")

    def __deepcopy__(self, memo: dict[int, Any]) -> NoReturn:
        raise RuntimeError("Node does not support deepcopy")

    def __repr__(self) -> str:
        return f"Node(name={self.name!r}, type={self.type!r})"
