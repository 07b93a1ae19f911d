"""Shared machinery of the ONNX importer: errors, dtype tables, the per-node conversion context.

Each op family lives in its own ``_onnx_*.py`` module and registers converters with :func:`converter`.
A converter receives an :class:`OpContext` for one ONNX node and emits GE nodes through it; the driver
(:mod:`gebench.io.onnx_import`) names them the way GE's parser does and wires the edges afterwards.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import onnx
from onnx import numpy_helper

from gebench import ir

__all__ = [
    "OnnxImportError",
    "UnsupportedOnnxOpError",
    "UnsupportedNode",
    "NodeNotConvertible",
    "OpContext",
    "Converter",
    "converter",
    "CONVERTERS",
    "onnx_to_ge_dtype",
    "cast_target_dtype",
    "ge_to_onnx_dtype",
    "tensor_value_from_proto",
]

_log = logging.getLogger(__name__)

MIN_OPSET = 8
MAX_OPSET = 18


class OnnxImportError(ValueError):
    """An ONNX model cannot be imported (malformed file, unsupported opset, unconvertible node)."""


@dataclasses.dataclass(frozen=True)
class UnsupportedNode:
    """One ONNX node that has no GE mapping (or whose attributes GE's plugin rejects)."""

    name: str
    op_type: str
    domain: str
    opset: int
    reason: str

    def describe(self) -> str:
        dom = self.domain or "ai.onnx"
        return f"node {self.name!r} ({dom}::{self.opset}::{self.op_type}): {self.reason}"


class UnsupportedOnnxOpError(OnnxImportError):
    """The model holds nodes GE's ONNX parser would reject; ``nodes`` lists every one of them."""

    def __init__(self, source: str, nodes: Sequence[UnsupportedNode]) -> None:
        self.source = source
        self.nodes = list(nodes)
        first = self.nodes[0]
        lines = "\n".join("  - " + n.describe() for n in self.nodes)
        super().__init__(
            f"{source}: cannot import node {first.name!r}: op {first.op_type!r} at opset {first.opset} has no GE "
            f"mapping ({first.reason}). {len(self.nodes)} unsupported node(s) in the model:\n{lines}\n"
            "Fix: declare the op as a custom op (gebench.ops.load_custom_ops / GEBENCH_CUSTOM_OPS) or rewrite "
            "the model with supported ops."
        )


class NodeNotConvertible(Exception):
    """Raised by a converter when this particular node cannot be mapped (reason in the message)."""


# --------------------------------------------------------------------------- dtypes
#: ONNX TensorProto elem type -> GE DataType (GE parser table, spec §3.6).
_ONNX_TO_GE: dict[int, ir.DataType] = {
    1: ir.DataType.DT_FLOAT,
    2: ir.DataType.DT_UINT8,
    3: ir.DataType.DT_INT8,
    4: ir.DataType.DT_UINT16,
    5: ir.DataType.DT_INT16,
    6: ir.DataType.DT_INT32,
    7: ir.DataType.DT_INT64,
    8: ir.DataType.DT_STRING,
    9: ir.DataType.DT_BOOL,
    10: ir.DataType.DT_FLOAT16,
    11: ir.DataType.DT_DOUBLE,
    12: ir.DataType.DT_UINT32,
    13: ir.DataType.DT_UINT64,
    14: ir.DataType.DT_COMPLEX64,
    15: ir.DataType.DT_COMPLEX128,
    16: ir.DataType.DT_BF16,
    17: ir.DataType.DT_FLOAT8_E4M3FN,
    19: ir.DataType.DT_FLOAT8_E5M2,
    22: ir.DataType.DT_INT4,
}
#: The Cast plugin's smaller table: no FP8 / INT4 (spec §3.6).
_CAST_MISSING = {17, 19, 22}
_GE_TO_ONNX = {v: k for k, v in _ONNX_TO_GE.items()}


def onnx_to_ge_dtype(elem_type: int) -> ir.DataType:
    """GE dtype of an ONNX elem type; DT_UNDEFINED for types GE's parser does not know."""
    return _ONNX_TO_GE.get(int(elem_type), ir.DataType.DT_UNDEFINED)


def cast_target_dtype(elem_type: int) -> ir.DataType:
    """``Cast.dst_type`` as GE's plugin computes it: unmapped targets silently become DT_UNDEFINED (28)."""
    if int(elem_type) in _CAST_MISSING:
        return ir.DataType.DT_UNDEFINED
    return onnx_to_ge_dtype(elem_type)


def ge_to_onnx_dtype(dtype: ir.DataType) -> int | None:
    """ONNX elem type for a GE dtype, or None when ONNX has no equivalent."""
    return _GE_TO_ONNX.get(ir.DataType(dtype))


def tensor_value_from_proto(tensor: onnx.TensorProto, *, where: str) -> ir.TensorValue:
    """Convert an ONNX TensorProto (data already loaded) to an IR TensorValue.

    Raises:
        OnnxImportError: the dtype has no GE/numpy representation or the data cannot be read.
    """
    dtype = onnx_to_ge_dtype(tensor.data_type)
    if dtype == ir.DataType.DT_UNDEFINED:
        raise OnnxImportError(f"{where}: tensor {tensor.name!r} has ONNX elem type {tensor.data_type}, which GE cannot hold")
    try:
        if dtype == ir.DataType.DT_BF16:
            raw = numpy_helper.to_array(tensor)
            arr = np.asarray(raw).view(np.uint16) if raw.dtype.itemsize == 2 else _bf16_bits(np.asarray(raw, np.float32))
        else:
            arr = numpy_helper.to_array(tensor)
        return ir.TensorValue(dtype, np.array(arr, copy=True))
    except OnnxImportError:
        raise
    except Exception as exc:  # numpy_helper raises many types for corrupt data
        raise OnnxImportError(f"{where}: cannot read the data of tensor {tensor.name!r}: {exc}") from exc


def _bf16_bits(values: np.ndarray) -> np.ndarray:
    return (values.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)


def attributes(node: onnx.NodeProto) -> dict[str, Any]:
    """ONNX attributes as Python values (strings decoded, tensors as numpy arrays, graphs as GraphProto)."""
    out: dict[str, Any] = {}
    for attr in node.attribute:
        if attr.ref_attr_name:
            continue
        value = onnx.helper.get_attribute_value(attr)
        if isinstance(value, bytes):
            value = value.decode("utf-8", "replace")
        elif isinstance(value, list) and value and isinstance(value[0], bytes):
            value = [v.decode("utf-8", "replace") for v in value]
        elif isinstance(value, onnx.TensorProto):
            value = numpy_helper.to_array(value)
        out[attr.name] = value
    return out


# --------------------------------------------------------------------------- emitted nodes
#: The formats of an emitted node that sets none (shared; never changed in place).
_NO_FORMATS: dict[int, ir.Format] = {}


@dataclasses.dataclass(slots=True)
class Emitted:
    """A GE node created for one ONNX node, with its pending wiring (tensor names per anchor).

    ``input_formats``/``output_formats`` are read only (nodes without formats share one empty dict).
    """

    node: ir.Node
    inputs: list[str | None]
    outputs: list[str | None]
    suffix: str
    input_formats: dict[int, ir.Format] = dataclasses.field(default_factory=dict)
    output_formats: dict[int, ir.Format] = dataclasses.field(default_factory=dict)


class OpContext:
    """What a converter sees for one ONNX node, and how it emits GE nodes.

    Tensor names are ONNX value names; converters create internal names with :meth:`temp`.
    The driver decides final node names (GE's expansion naming) after the converter returns.
    """

    def __init__(self, driver: Any, node: onnx.NodeProto, name: str, opset: int) -> None:
        self._driver = driver
        self.onnx_node = node
        self.name = name
        self.opset = opset
        self.op_type = node.op_type
        self.attrs = attributes(node)
        self.emitted: list[Emitted] = []
        ins = [name or None for name in node.input]
        while ins and ins[-1] is None:
            ins.pop()
        self._inputs = ins
        self._outputs = [name or None for name in node.output]

    # ---- inputs / outputs of the ONNX node
    def input(self, i: int) -> str | None:
        """ONNX input ``i`` (None when absent or given as the empty name)."""
        return self._inputs[i] if i < len(self._inputs) else None

    @property
    def num_inputs(self) -> int:
        """Count of ONNX inputs, trailing empty names dropped."""
        return len(self._inputs)

    def inputs(self) -> list[str | None]:
        return list(self._inputs)

    def output(self, i: int) -> str | None:
        return self._outputs[i] if i < len(self._outputs) else None

    def outputs(self) -> list[str | None]:
        return list(self._outputs)

    def attr(self, key: str, default: Any = None) -> Any:
        return self.attrs.get(key, default)

    def is_used(self, tensor: str | None) -> bool:
        """True when some node (or a graph output) reads ``tensor``."""
        return tensor is not None and self._driver.is_used(tensor)

    def static_value(self, tensor: str | None) -> np.ndarray | None:
        """The constant value of a tensor produced by an initializer or Constant node, else None."""
        return None if tensor is None else self._driver.static_value(tensor)

    def shape(self, tensor: str | None) -> tuple[int, ...] | None:
        """Static shape from ONNX shape inference (-1 for unknown dims), or None if unknown."""
        return None if tensor is None else self._driver.tensor_shape(tensor)

    def elem_dtype(self, tensor: str | None) -> ir.DataType | None:
        return None if tensor is None else self._driver.tensor_dtype(tensor)

    # ---- emission
    def temp(self, suffix: str) -> str:
        """A fresh internal tensor name (never clashes with ONNX names)."""
        return self._driver.temp_tensor(f"{self.name}/{suffix}")

    def emit(
        self,
        op_type: str,
        inputs: Sequence[str | None],
        outputs: Sequence[str | None],
        *,
        suffix: str | None = None,
        attrs: dict[str, Any] | None = None,
        dynamic_inputs: dict[str, int] | None = None,
        dynamic_outputs: dict[str, int] | None = None,
        input_formats: dict[int, ir.Format] | None = None,
        output_formats: dict[int, ir.Format] | None = None,
    ) -> ir.Node:
        """Create a GE node fed by ``inputs`` (tensor names in anchor order, None = unfed) and producing
        ``outputs`` (tensor names in output-anchor order, None = unused)."""
        # The first node takes the ONNX node's name when it is free (the name it keeps when it stays alone);
        # the driver renames nodes after the converter returns (GE's expansion names, or a fresh name).
        name = self.name if not self.emitted and self._driver.graph.find(self.name) is None else None
        node = self._driver.make_node(op_type, attrs or {}, dynamic_inputs, dynamic_outputs,
                                      n_inputs=len(inputs), n_outputs=len(outputs), name=name)
        if len(inputs) > len(node.inputs) or len(outputs) > len(node.outputs):
            raise RuntimeError(
                f"converter for {self.op_type} gave {len(inputs)} inputs/{len(outputs)} outputs to {op_type}, "
                f"which has {len(node.inputs)}/{len(node.outputs)} anchors"
            )
        ins = list(inputs) + [None] * (len(node.inputs) - len(inputs))
        outs = list(outputs) + [None] * (len(node.outputs) - len(outputs))
        self.emitted.append(Emitted(node, ins, outs, suffix or op_type,
                                    dict(input_formats) if input_formats else _NO_FORMATS,
                                    dict(output_formats) if output_formats else _NO_FORMATS))
        return node

    def outer_scope_inputs(self, bodies: Sequence[onnx.GraphProto]) -> list[str]:
        """Tensors of the enclosing graphs that ``bodies`` read, in first-use order."""
        return self._driver.outer_scope_inputs(bodies)

    def add_subgraph(self, node: ir.Node, name: str, body: onnx.GraphProto, outer: Sequence[str]) -> None:
        """Import ``body`` as subgraph ``name`` of ``node``; outer tensor ``outer[i]`` feeds its Data ``i``."""
        self._driver.import_subgraph(node, name, body, list(outer))

    def const(self, suffix: str, value: ir.TensorValue) -> str:
        """Emit a Const node holding ``value``; returns the tensor name of its output."""
        out = self.temp(suffix)
        node = self.emit("Const", [], [out], suffix=suffix, attrs={"value": value})
        node.outputs[0] = value.desc()
        self._driver.record_const(out, value)
        return out


Converter = Callable[[OpContext], None]


@dataclasses.dataclass(frozen=True)
class ConverterEntry:
    """A converter for an ONNX op over a range of model opsets.

    ``expands`` marks GE plugins with a ParseOpToGraph step: their nodes get
    ``_datadump_original_op_names`` and, when there is more than one, PartitionedCall names. ``direct``: the
    conversion ``fn`` does for an ONNX node without attributes, stated as data (:class:`Direct`), when it can be.
    """

    fn: Converter
    low: int
    high: int
    expands: bool
    ge_types: tuple[str, ...]
    direct: Direct | None = None


@dataclasses.dataclass(frozen=True)
class Direct:
    """What a converter does with an ONNX node that has no attributes, when that is one GE node: op type
    ``ge_type`` with the IR attrs ``attrs`` (immutable values: every node shares them), fed by the first
    ``inputs`` ONNX inputs (all of them when None), producing every ONNX output, with ``output_formats``.

    The importer carries it out for such nodes without calling the converter (no :class:`OpContext`, no
    attribute decoding); the converter must give the same node (the converter :func:`direct_converter` makes
    does, through :meth:`OpContext.emit`)."""

    ge_type: str
    attrs: tuple[tuple[str, Any], ...] = ()
    inputs: int | None = None
    output_formats: dict[int, ir.Format] = dataclasses.field(default_factory=dict)


def direct_converter(direct: Direct) -> Converter:
    """The converter that carries out ``direct`` through :meth:`OpContext.emit` (register it with
    ``converter(..., direct=direct)``)."""
    def convert(ctx: OpContext) -> None:
        inputs = ctx.inputs() if direct.inputs is None else ctx.inputs()[:direct.inputs]
        ctx.emit(direct.ge_type, inputs, ctx.outputs(), attrs=dict(direct.attrs),
                 output_formats=direct.output_formats or None)

    return convert


#: (domain, ONNX op type) -> entries; domain "" is ai.onnx.
CONVERTERS: dict[tuple[str, str], list[ConverterEntry]] = {}


def converter(op_types: str | Sequence[str], opsets: tuple[int, int] = (MIN_OPSET, MAX_OPSET), *,
              expands: bool = False, ge_types: Sequence[str] = (), domain: str = "",
              direct: Direct | None = None) -> Callable[[Converter], Converter]:
    """Register a converter for ``op_types`` at model opsets ``opsets`` (inclusive); ``direct``: what the converter
    does, as data (see :class:`Direct`)."""
    names = [op_types] if isinstance(op_types, str) else list(op_types)

    def deco(fn: Converter) -> Converter:
        for name in names:
            CONVERTERS.setdefault((domain, name), []).append(
                ConverterEntry(fn, opsets[0], opsets[1], expands, tuple(ge_types), direct))
        return fn

    return deco


def find_converter(domain: str, op_type: str, opset: int) -> ConverterEntry | None:
    for entry in CONVERTERS.get((domain, op_type), ()):
        if entry.low <= opset <= entry.high:
            return entry
    return None


def registered_opsets(domain: str, op_type: str) -> list[tuple[int, int]]:
    return [(e.low, e.high) for e in CONVERTERS.get((domain, op_type), ())]


# --------------------------------------------------------------------------- small helpers for converters
def int_list_value(values: Sequence[int], dtype: ir.DataType = ir.DataType.DT_INT32) -> ir.TensorValue:
    return ir.TensorValue(dtype, np.asarray(list(values), dtype=ir.numpy_dtype(dtype)).reshape(len(values)))


def scalar_value(value: Any, dtype: ir.DataType) -> ir.TensorValue:
    return ir.TensorValue(dtype, np.asarray(value, dtype=ir.numpy_dtype(dtype)).reshape(()))


def bool_attr(value: Any) -> bool:
    return bool(int(value))
