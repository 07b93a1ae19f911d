"""``TensorHolder``: one output of a node being built by a :class:`GraphBuilder` (spec §2.2.4)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gebench import ir
from gebench.ge.graph import Node
from gebench.ge.graph.tensor_desc import check_dims
from gebench.ge.graph.types import DataType, Format

if TYPE_CHECKING:
    from .graph_builder import GraphBuilder

__all__ = ["TensorHolder"]


class TensorHolder:
    """Output ``_output_index`` of node ``_ir_node`` in a graph under construction.

    Not constructible from Python (``TensorHolder()`` raises RuntimeError); builders and ES op functions hand them
    out. Holds a strong reference to its builder. Arithmetic: ``+ - * /`` build ``Add``/``Sub``/``Mul``/``Div``
    nodes with inputs ``(self, other)``, converting ints (DT_INT64 scalar Const), floats (DT_FLOAT scalar Const)
    and nested lists to Consts. The reflected forms keep GE's quirk: ``0 + x`` builds ``Add(x, 0)`` and ``2 * x``
    builds ``Mul(x, 2)``, while ``1 - x`` builds ``Sub(1, x)`` and ``1 / x`` builds ``Div(1, x)``. There are no
    comparisons (``==`` is identity), no unary minus, no ``// % ** @``, no indexing.
    """

    __slots__ = ("_builder", "_ir_node", "_output_index")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError("TensorHolder cannot be constructed directly; use GraphBuilder methods or ES op functions")

    @classmethod
    def _create(cls, builder: GraphBuilder, node: ir.Node, output_index: int = 0) -> TensorHolder:
        obj = cls.__new__(cls)
        obj._builder = builder
        obj._ir_node = node
        obj._output_index = output_index
        return obj

    @property
    def name(self) -> str:
        """Name of the producer node."""
        return self._ir_node.name

    def get_owner_builder(self) -> GraphBuilder:
        return self._builder

    def _get_node_snapshot(self) -> Node:
        """A non-owning :class:`ge.graph.Node` view of the producer."""
        return Node._wrap(self._ir_node)

    def _out_desc(self, op: str) -> ir.TensorDesc:
        self._builder._check_live(op)
        return self._ir_node.outputs[self._output_index]

    def set_data_type(self, data_type: DataType) -> TensorHolder:
        """Set the dtype of this output's desc. Raises TypeError (not a DataType) / RuntimeError (built)."""
        if not isinstance(data_type, DataType):
            raise TypeError(f"set_data_type of {self.name!r}: expected a DataType, got {data_type!r}")
        self._out_desc("set_data_type").dtype = data_type
        return self

    def set_format(self, format: Format) -> TensorHolder:
        """Set the format of this output's desc. Raises TypeError (not a Format) / RuntimeError (built)."""
        if not isinstance(format, Format):
            raise TypeError(f"set_format of {self.name!r}: expected a Format, got {format!r}")
        self._out_desc("set_format").format = format
        return self

    def set_shape(self, shape: list[int]) -> TensorHolder:
        """Set the shape of this output's desc. Raises TypeError (not a list of int) / RuntimeError (built)."""
        dims = check_dims(shape, f"set_shape of {self.name!r}: shape")
        self._out_desc("set_shape").shape = tuple(dims)
        return self

    # -- arithmetic
    def _binary(self, op_type: str, lhs: Any, rhs: Any) -> TensorHolder:
        from ._opgen import op_function

        return op_function(op_type)(lhs, rhs)

    def add(self, other: Any) -> TensorHolder:
        """``Add(self, other)``. Raises TypeError (unconvertible other) / ValueError (other builder)."""
        return self._binary("Add", self, other)

    def sub(self, other: Any) -> TensorHolder:
        """``Sub(self, other)``."""
        return self._binary("Sub", self, other)

    def mul(self, other: Any) -> TensorHolder:
        """``Mul(self, other)``."""
        return self._binary("Mul", self, other)

    def div(self, other: Any) -> TensorHolder:
        """``Div(self, other)``."""
        return self._binary("Div", self, other)

    def __add__(self, other: Any) -> TensorHolder:
        return self.add(other)

    def __sub__(self, other: Any) -> TensorHolder:
        return self.sub(other)

    def __mul__(self, other: Any) -> TensorHolder:
        return self.mul(other)

    def __truediv__(self, other: Any) -> TensorHolder:
        return self.div(other)

    def __radd__(self, other: Any) -> TensorHolder:
        return self.add(other)  # GE's order: (self, other)

    def __rmul__(self, other: Any) -> TensorHolder:
        return self.mul(other)  # GE's order: (self, other)

    def __rsub__(self, other: Any) -> TensorHolder:
        return self._binary("Sub", other, self)

    def __rtruediv__(self, other: Any) -> TensorHolder:
        return self._binary("Div", other, self)

    def __repr__(self) -> str:
        return f"<TensorHolder {self._ir_node.name}:{self._output_index} ({self._ir_node.op_type})>"
