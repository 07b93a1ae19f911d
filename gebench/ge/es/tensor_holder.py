"""``TensorHolder``: one output of a node being built by a :class:`GraphBuilder` (spec §2.2.4)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gebench import ir
from gebench.ge.graph import Node
from gebench.ge.graph.tensor_desc import _got, check_dims
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
        raise RuntimeError("TensorHolder objects should not be created directly; use GraphBuilder methods or ES op "
                           "functions")

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

    def _out_desc(self, failure: str) -> ir.TensorDesc:
        """This output's desc; ``RuntimeError`` starting with ``failure`` (GE's message) once the builder is built."""
        try:
            self._builder._check_live(failure[len("Failed to "):])
        except RuntimeError as exc:
            raise RuntimeError(f"{failure}: {exc}") from None
        return self._ir_node.outputs[self._output_index]

    def set_data_type(self, data_type: DataType) -> TensorHolder:
        """Set the dtype of this output's desc. Raises TypeError (not a DataType) / RuntimeError (built)."""
        if not isinstance(data_type, DataType):
            raise TypeError("Data type must be a DataType enum" + _got(data_type))
        self._out_desc("Failed to set data type").dtype = data_type
        return self

    def set_format(self, format: Format) -> TensorHolder:
        """Set the format of this output's desc. Raises TypeError (not a Format) / RuntimeError (built)."""
        if not isinstance(format, Format):
            raise TypeError("Format must be a Format enum" + _got(format))
        self._out_desc("Failed to set format").format = format
        return self

    def set_shape(self, shape: list[int]) -> TensorHolder:
        """Set the shape of this output's desc. Raises TypeError (not a list of int) / RuntimeError (built)."""
        if not isinstance(shape, list):
            raise TypeError("Shape must be a list of integers" + _got(shape))
        dims = check_dims(shape, "All shape dimensions must be integers")
        self._out_desc("Failed to set shape").shape = tuple(dims)
        return self

    def _validate_operation(self, other: Any, op_name: str) -> None:
        """GE's check that both operands of ``op_name`` come from the same builder (``ValueError``)."""
        if isinstance(other, TensorHolder) and other._builder is not self._builder:
            raise ValueError(f"Cannot perform {op_name}: tensors from different GraphBuilders "
                             f"('{self._builder.name}' vs '{other._builder.name}')")

    # -- arithmetic
    def _binary(self, op_type: str, lhs: Any, rhs: Any) -> TensorHolder:
        from ._opgen import op_function

        return op_function(op_type)(lhs, rhs)

    def add(self, other: Any) -> TensorHolder:
        """``Add(self, other)``. Raises TypeError (unconvertible other) / ValueError (other builder)."""
        self._validate_operation(other, "add")
        return self._binary("Add", self, other)

    def sub(self, other: Any) -> TensorHolder:
        """``Sub(self, other)``."""
        self._validate_operation(other, "sub")
        return self._binary("Sub", self, other)

    def mul(self, other: Any) -> TensorHolder:
        """``Mul(self, other)``."""
        self._validate_operation(other, "mul")
        return self._binary("Mul", self, other)

    def div(self, other: Any) -> TensorHolder:
        """``Div(self, other)``."""
        self._validate_operation(other, "div")
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
