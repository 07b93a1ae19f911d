"""``GraphBuilder``, ``InputType`` and the builder scopes of ``ge.es`` (spec §2.2.1-§2.2.3)."""

from __future__ import annotations

import contextlib
import enum
import math
import struct
import threading
from collections.abc import Iterator
from typing import Any, NoReturn

import numpy as np

from gebench import ir, ops
from gebench.fusion._recorded import RecordedOp, RecordedReplacement, make_recorded_op
from gebench.ge.graph import Graph
from gebench.ge.graph._attr import _AttrValue, to_float32
from gebench.ge.graph.tensor_desc import _got, check_dims
from gebench.ge.graph.types import DataType, Format
from gebench.ir import trusted_desc
from gebench.ops._make import _layout, _make_node_fed, fed_anchors

from .tensor_holder import TensorHolder

# GE's module also exposes TensorHolder, Graph, DataType and Format by importing them (not in __all__).
__all__ = ["GraphBuilder", "InputType", "attr_scope", "control_dependency_scope"]

_INT_RANGES = {
    DataType.DT_INT64: (-(2**63), 2**63 - 1),
    DataType.DT_INT32: (-(2**31), 2**31 - 1),
    DataType.DT_UINT64: (0, 2**64 - 1),
    DataType.DT_UINT32: (0, 2**32 - 1),
}


class InputType(enum.Enum):
    """Op type of a graph input node made by :meth:`GraphBuilder.create_input`."""

    DATA = "Data"
    REF_DATA = "RefData"
    AIPP_DATA = "AippData"
    ANY_DATA = "AnyData"


# ----------------------------------------------------------------------------------------------- scopes
class _ScopeState(threading.local):
    def __init__(self) -> None:
        self.attrs: list[dict[str, Any]] = []
        self.deps: list[list[TensorHolder]] = []


_SCOPES = _ScopeState()
# scopes open in any thread: [count]. Node creation tests this plain list before the thread-local state, whose
# attribute reads cost several times more and would be paid for every node of every replacement.
_OPEN_SCOPES = [0]
_OPEN_SCOPES_LOCK = threading.Lock()


@contextlib.contextmanager
def _scope_open() -> Iterator[None]:
    with _OPEN_SCOPES_LOCK:
        _OPEN_SCOPES[0] += 1
    try:
        yield
    finally:
        with _OPEN_SCOPES_LOCK:
            _OPEN_SCOPES[0] -= 1


@contextlib.contextmanager
def attr_scope(attr_maps: dict[str, Any]) -> Iterator[None]:
    """Every node created inside (by any builder, in this thread) gets these attrs; nested scopes merge.

    Raises:
        TypeError: ``attr_maps`` is not a dict with str keys.
        ValueError: a value cannot be stored as an attribute (GE's marshalling rules).
    """
    if not isinstance(attr_maps, dict) or not all(isinstance(k, str) for k in attr_maps):
        raise TypeError(f"attr_scope expects a dict mapping attr names (str) to values, got {attr_maps!r}")
    converted = {k: _AttrValue.to_ir(v, f"attr_scope attr {k!r}") for k, v in attr_maps.items()}
    _SCOPES.attrs.append(converted)
    try:
        with _scope_open():
            yield
    finally:
        _SCOPES.attrs.pop()


@contextlib.contextmanager
def control_dependency_scope(tensors: list[TensorHolder]) -> Iterator[None]:
    """Every node created inside (by any builder, in this thread) gets control edges from the producers of
    ``tensors``; nested scopes accumulate.

    Raises:
        TypeError: ``tensors`` is not a list of TensorHolder.
    """
    if not isinstance(tensors, list) or not all(isinstance(t, TensorHolder) for t in tensors):
        raise TypeError(f"control_dependency_scope expects a list of TensorHolder, got {tensors!r}")
    _SCOPES.deps.append(list(tensors))
    try:
        with _scope_open():
            yield
    finally:
        _SCOPES.deps.pop()


# ----------------------------------------------------------------------------------------------- checks
def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# Each check raises GE's TypeError: ``message`` is GE's text, gebench adds what was given.
def _require_int(value: Any, message: str) -> int:
    if not _is_int(value):
        raise TypeError(message + _got(value))
    return value


def _require_th(value: Any, message: str) -> TensorHolder:
    if not isinstance(value, TensorHolder):
        raise TypeError(message + _got(value))
    return value


def _require_str(value: Any, message: str) -> str:
    if not isinstance(value, str):
        raise TypeError(message + _got(value))
    return value


def _validate_const_shape(values: list[Any], dims: list[int]) -> None:
    """GE's check that ``values`` fill ``dims`` exactly (``ValueError``)."""
    expected = math.prod(dims)
    if len(values) != expected:
        raise ValueError(f"Value count ({len(values)}) doesn't match shape {dims} (expected {expected} elements)")


# Scalar Const values by (dtype, exact value): TensorValues are immutable, so Consts built from the same scalar
# share one (as graph copies do). Bounded; cleared when full.
_SCALARS: dict[tuple[Any, ...], ir.TensorValue] = {}
_SCALARS_MAX = 1024


def _scalar_value(dtype: DataType, value: Any) -> ir.TensorValue:
    # floats key by their exact bit pattern where equality would merge distinct values (0.0 and -0.0, NaN
    # payloads), else by value, as ints do
    if isinstance(value, float) and (not value or value != value):
        key: tuple[Any, ...] = (dtype, float, struct.pack("<d", value))
    else:
        key = (dtype, type(value), value)
    cached = _SCALARS.get(key)
    if cached is None:
        cached = ir.TensorValue(dtype, np.array(value, dtype=ir.numpy_dtype(dtype)))
        if len(_SCALARS) >= _SCALARS_MAX:
            _SCALARS.clear()
        _SCALARS[key] = cached
    return cached


#: op type -> whether its schema has a dynamic input, for the schema object it was worked out from.
_DYNAMIC_INPUTS: dict[str, tuple[ops.OpSchema, bool]] = {}


def _has_dynamic_inputs(schema: ops.OpSchema) -> bool:
    cached = _DYNAMIC_INPUTS.get(schema.op_type)
    if cached is None or cached[0] is not schema:
        cached = (schema, any(d.kind == "dynamic" for d in schema.inputs))
        _DYNAMIC_INPUTS[schema.op_type] = cached
    return cached[1]


class _Recording:
    """What a recording builder was asked for: the record's ops, and per recorded tensor the call that makes it
    (``("data", index)``, ``("const", float32 value)`` or ``("op", schema, inputs, attrs)``) with its holder."""

    __slots__ = ("ops", "replay")

    def __init__(self) -> None:
        self.ops: list[RecordedOp] = []
        self.replay: list[tuple[tuple[Any, ...], TensorHolder]] = []


class _Pending:
    """The ``_ir_node`` of a TensorHolder whose node is recorded, not yet made: ``ref`` is its op index in the
    record (``-1 - index`` for input ``index``). Reading anything else from it makes the builder's nodes first
    (:meth:`GraphBuilder._materialize`) and reads it from the node, so code that takes a holder's node without
    asking the builder still sees the node building eagerly would have given it."""

    __slots__ = ("builder", "ref", "node")

    builder: GraphBuilder
    ref: int
    node: ir.Node | None  # the node once made

    def __getattr__(self, name: str) -> Any:
        if self.node is None:
            self.builder._materialize()
            if self.node is None:
                raise RuntimeError(f"GraphBuilder {self.builder.name!r} was consumed by a rewrite: its tensors "
                                   "can no longer be read (keep no TensorHolder from one replacement to the next)")
        return getattr(self.node, name)


_new_pending = object.__new__  # _Pending has no __init__: the recorder sets its three slots
_DT_FLOAT = DataType.DT_FLOAT
_FORMAT_ND = Format.FORMAT_ND
# anchor-name lists shared by the nodes a builder makes (IR nodes never change them in place)
_DATA_INPUT_NAMES = ["x"]
_DATA_OUTPUT_NAMES = ["y"]

#: ge.graph DataType -> the IR member, converted once per dtype (scalar Consts are made per rewrite).
_IR_DTYPES: dict[DataType, ir.DataType] = {}


def _scalar_desc(dtype: DataType) -> ir.TensorDesc:
    ir_dtype = _IR_DTYPES.get(dtype)
    if ir_dtype is None:
        ir_dtype = _IR_DTYPES[dtype] = ir.DataType(dtype)
    return trusted_desc(ir_dtype, (), Format.FORMAT_ND, Format.FORMAT_ND, ())


def _default_input_desc() -> ir.TensorDesc:
    """A fresh desc of a default input (``create_input(index)``'s): DT_FLOAT, scalar, ND."""
    return trusted_desc(_DT_FLOAT, (), _FORMAT_ND, _FORMAT_ND, ())


def _scalar_const_anchors(dtype: DataType, value: Any) -> tuple[dict[str, Any], list[ir.TensorDesc], list[str],
                                                                list[str]]:
    """What a scalar Const of ``value`` is made of: (attrs, output descs, input names, output names); the attrs
    dict and desc list are fresh, the name lists shared."""
    _, in_names, _, out_names = _layout("Const", None, None)  # Const has no inputs
    return {"value": _scalar_value(dtype, value)}, [_scalar_desc(dtype)], in_names, out_names


#: Python float -> float32-rounded value, for the scalars replacements use over and over (``GEMM(..., 1.0)``).
#: Zeros, NaNs and values that overflow are not cached (``0.0 == -0.0`` as keys; NaN never equals itself; the
#: overflow warning must stay). Bounded; cleared when full.
_F32: dict[float, float] = {}
_F32_MAX = 1024


def _float32_of(value: float) -> float:
    if type(value) is float and value:
        cached = _F32.get(value)
        if cached is not None:
            return cached
        rounded = to_float32(value)
        if math.isfinite(rounded):  # an overflow keeps warning on every call, as without the cache
            if len(_F32) >= _F32_MAX:
                _F32.clear()
            _F32[value] = rounded
        return rounded
    return to_float32(value)


class GraphBuilder:
    """Builds a graph eagerly, node by node (GE's "ES" builder).

    Names: inputs are ``input_<index>`` (or the given name); every other node is ``<OpType>_<k>`` with ``k`` a
    counter shared by all non-input nodes of this builder, Consts included, starting at 0; the output node is
    ``NetOutput_<graph name>``. After :meth:`build_and_reset` the builder is *built* and every method raises
    ``RuntimeError``.

    Raises:
        TypeError: ``name`` is neither a str nor None (``None``/``""`` give ``"graph"``).
    """

    def __init__(self, name: str | None = None) -> None:
        if name is not None and not isinstance(name, str):
            raise TypeError("Graph name must be a string" + _got(name))
        self._name = name or "graph"
        self._graph = ir.StagedGraph(self._name)
        self._counter = 0
        self._inputs: dict[int, ir.Node] = {}
        self._outputs: dict[int, tuple[ir.Node, int]] = {}
        self._built = False
        self._record: _Recording | None = None  # set while recording (see _start_recording)

    @property
    def name(self) -> str:
        return self._name

    # ------------------------------------------------------------------ recording
    def _start_recording(self) -> None:
        """Record the inputs, scalar float Consts and simple op nodes asked for, instead of making them, until
        anything else is asked of this builder or of its tensors: that builds the recorded nodes first, in order,
        exactly as they would have been made (:meth:`_materialize`). The runtime uses this for expression-style
        replacements; :meth:`_take_record` hands the record over."""
        self._record = _Recording()

    def _recordable(self) -> bool:
        """Recording, not built, and no attr or control-dependency scope open (those change the nodes made)."""
        return self._record is not None and not self._built and (
            not _OPEN_SCOPES[0] or not (_SCOPES.attrs or _SCOPES.deps))

    def _record_holder(self, record: _Recording, ref: int, replay: tuple[Any, ...]) -> TensorHolder:
        pending = _new_pending(_Pending)
        pending.builder = self
        pending.ref = ref
        pending.node = None
        th = TensorHolder._create(self, pending, 0)  # type: ignore[arg-type]
        record.replay.append((replay, th))
        return th

    def _record_op(self, schema: ops.OpSchema, inputs: list[Any], attrs: dict[str, Any]) -> TensorHolder:
        """Record the node ``_add_op_node`` would make for a schema without dynamic anchors, fed by ``inputs``
        (recorded TensorHolders of this builder, or None); its anchors are computed as that node's would be."""
        record = self._record
        assert record is not None
        op_type = schema.op_type
        sources: list[tuple[int, int] | None] = []
        feeds: list[ir.TensorDesc | None] = []
        for value in inputs:
            if value is None:
                sources.append(None)
                feeds.append(None)
                continue
            ref = value._ir_node.ref
            port = value._output_index
            sources.append((ref, port))
            # the producer's desc without its per-anchor attrs, as _add_op_node copies it
            feeds.append(record.ops[ref].outputs[port]._without_attrs() if ref >= 0 else
                         _default_input_desc())
        in_descs, out_descs, in_names, out_names = fed_anchors(op_type, feeds)
        name = f"{op_type}_{self._counter}"
        self._counter += 1
        ops_ = record.ops
        ops_.append(make_recorded_op((op_type, name, attrs, in_descs, out_descs, in_names, out_names, sources)))
        # the replay shares ``inputs`` and ``attrs`` with the record: a rewrite that takes the record first
        # leaves the builder built, so nothing is replayed after it
        return self._record_holder(record, len(ops_) - 1, ("op", schema, inputs, attrs))

    def _materialize(self) -> None:
        """Make the recorded nodes, in the order they were asked for, with the builder's own methods, and point
        every recorded TensorHolder at its node; recording stops. The graph, names and counter are then what
        building eagerly would have given."""
        record = self._record
        if record is None:
            return
        self._record = None
        self._counter = 0
        self._inputs = {}
        # nothing was recorded inside an attr or control-dependency scope (see _recordable): the scopes open now
        # were opened after the recorded calls, so the nodes are made without them, as they were then
        scopes = _SCOPES
        attrs_open, deps_open = scopes.attrs, scopes.deps
        scopes.attrs, scopes.deps = [], []
        try:
            for (kind, *args), th in record.replay:
                if kind == "data":
                    made = self._create_default_input(args[0])
                elif kind == "const":
                    made = self._const(DataType.DT_FLOAT, [args[0]], [])
                else:
                    schema, inputs, attrs = args
                    made = TensorHolder._create(self, self._add_op_node(schema, inputs, attrs, {}, {}), 0)
                th._ir_node.node = made._ir_node
                th._ir_node = made._ir_node
        finally:
            scopes.attrs, scopes.deps = attrs_open, deps_open

    def _take_record(self, result: Any, n_inputs: int) -> RecordedReplacement | None:
        """The record, when ``result`` (what the replacement returned) is a recorded TensorHolder of this builder
        or a non-empty list/tuple of them and nothing ended the recording; the builder is then built, as
        ``build_and_reset(list(result))`` would leave it. None otherwise (nothing changes)."""
        record = self._record
        if record is None or self._built:
            return None
        outputs = [result] if type(result) is TensorHolder else result
        if type(outputs) not in (list, tuple) or not outputs:
            return None
        refs: list[tuple[int, int]] = []
        for th in outputs:
            if type(th) is not TensorHolder or th._builder is not self or type(th._ir_node) is not _Pending:
                return None
            refs.append((th._ir_node.ref, th._output_index))
        holders = list(outputs)

        def build() -> Graph:
            self._built = False
            self._record = record
            self._materialize()
            return self.build_and_reset(holders)

        # the builder lets go of the record (its holders point back at the builder): once the rewrite drops the
        # RecordedReplacement, reference counting frees all of it, with no cycle left for the collector
        self._record = None
        self._built = True
        return RecordedReplacement(self._name, n_inputs, record.ops, refs, build)

    # ------------------------------------------------------------------ internals
    def _check_live(self, op: str) -> None:
        if self._record is not None and not self._built:
            self._materialize()
        if self._built:
            raise RuntimeError(f"Cannot {op}: GraphBuilder has already been built. Create a new GraphBuilder to build "
                               f"another graph. (Graph {self._name!r} was returned by build_and_reset.)")

    def _next_name(self, op_type: str) -> str:
        while True:
            name = f"{op_type}_{self._counter}"
            self._counter += 1
            if self._graph.find(name) is None:
                return name

    def _holder(self, node: ir.Node, index: int = 0) -> TensorHolder:
        return TensorHolder._create(self, node, index)

    def _own(self, th: TensorHolder, what: str) -> TensorHolder:
        if th._builder is not self:
            raise RuntimeError(f"{what} {th.name!r} belongs to GraphBuilder {th._builder.name!r}, "
                               f"not to {self._name!r}; tensors cannot cross graph builders")
        return th

    def _apply_scopes(self, node: ir.Node) -> None:
        scopes = _SCOPES
        if not _OPEN_SCOPES[0] or (not scopes.attrs and not scopes.deps):
            return
        for attrs in _SCOPES.attrs:
            for key, value in attrs.items():
                node.attrs[key] = value.copy() if isinstance(value, (ir.TensorValue, list)) else value
        for tensors in _SCOPES.deps:
            for th in tensors:
                self._own(th, "control_dependency_scope tensor")
                if th._ir_node is not node:
                    self._graph.add_control_edge(th._ir_node, node)

    def _connect(self, th: TensorHolder, node: ir.Node, port: int) -> None:
        # ``node`` was just made by this builder (its input ``port`` exists and is unfed) and ``th`` belongs to
        # this builder (checked by the callers): the graph's checked add_edge would only repeat that
        self._graph.add_edge_trusted(th._ir_node, th._output_index, node, port)
        # the producer's desc without its per-anchor attrs
        node.inputs[port] = th._ir_node.outputs[th._output_index]._without_attrs()

    def _add_op_node(self, schema: ops.OpSchema, inputs: list[Any], attrs: dict[str, Any],
                     dynamic_outputs: dict[str, int], subgraphs: dict[str, Graph]) -> ir.Node:
        """Create a node of ``schema`` fed by ``inputs`` (one entry per IR input: TH, None or list of TH)."""
        if self._record is not None:
            self._materialize()
        if self._built:
            self._check_live(f"create a {schema.op_type} node")
        dyn_in = {d.name: len(v) for d, v in zip(schema.inputs, inputs, strict=True) if d.kind == "dynamic"} \
            if _has_dynamic_inputs(schema) else {}
        if not dyn_in and not dynamic_outputs:
            # without dynamic anchors the inputs are the schema's, in order: each fed input starts with its
            # producer's desc (without per-anchor attrs), as _connect would set it, then the edges are linked
            feeds = []
            for value in inputs:
                feeds.append(None if value is None else value._ir_node.outputs[value._output_index]._without_attrs())
            node = _make_node_fed(self._graph, schema.op_type, self._next_name(schema.op_type), attrs, feeds)
            link = self._graph.add_edge_trusted
            port = 0
            for value in inputs:
                if value is not None:
                    link(value._ir_node, value._output_index, node, port)
                port += 1
        elif not dyn_in:
            node = ops.make_node(self._graph, schema.op_type, name=self._next_name(schema.op_type),
                                 dynamic_outputs=dynamic_outputs, attrs=attrs)
            for port, value in enumerate(inputs):
                if value is not None:
                    self._connect(value, node, port)
        else:
            node = ops.make_node(self._graph, schema.op_type, name=self._next_name(schema.op_type),
                                 dynamic_inputs=dyn_in, dynamic_outputs=dynamic_outputs, attrs=attrs)
            for d, value in zip(schema.inputs, inputs, strict=True):
                if d.kind == "dynamic":
                    for i, th in enumerate(value):
                        self._connect(th, node, node.input_index(f"{d.name}{i}"))
                elif value is not None:
                    self._connect(value, node, node.input_index(d.name))
        for slot, graph in subgraphs.items():
            sub = graph._ir
            try:
                self._graph.add_subgraph(sub, parent_node=node)
            except ir.GraphError as exc:
                raise RuntimeError(f"{schema.op_type} subgraph {slot!r}: {exc}") from exc
            graph._invalidate()
        if _OPEN_SCOPES[0] and (_SCOPES.attrs or _SCOPES.deps):
            self._apply_scopes(node)
        return node

    def _const(self, dtype: DataType, values: list[Any], shape: list[int]) -> TensorHolder:
        self._check_live("create a Const")
        if not shape:
            attrs, outputs, in_names, out_names = _scalar_const_anchors(dtype, values[0])
        else:
            value = ir.TensorValue(dtype, np.array(values, dtype=ir.numpy_dtype(dtype)).reshape(shape))
            attrs, outputs = {"value": value}, [ir.TensorDesc.of(dtype, shape, Format.FORMAT_ND)]
            _, in_names, _, out_names = _layout("Const", None, None)  # Const has no inputs
        node = self._graph.add_node_trusted("Const", self._next_name("Const"), attrs, ir.NO_INPUTS, outputs,
                                            in_names, out_names)
        if _OPEN_SCOPES[0] and (_SCOPES.attrs or _SCOPES.deps):
            self._apply_scopes(node)
        return TensorHolder._create(self, node, 0)

    def _int_const(self, dtype: DataType, value: Any, shape: Any, api: str) -> TensorHolder:
        self._check_live(api)
        if isinstance(value, int) and shape is None:
            return self._int_scalar(dtype, value, api)
        values = [value] if isinstance(value, int) else value
        if not isinstance(values, list) or not all(isinstance(v, int) for v in values):
            raise TypeError("Value must be an integer or list of integers" + _got(value))
        dims = [len(values)] if shape is None else check_dims(shape, "Shape must be a list of integers")
        _validate_const_shape(values, dims)
        self._check_range(dtype, values, api)
        return self._const(dtype, [int(v) for v in values], dims)

    def _int_scalar(self, dtype: DataType, value: Any, api: str) -> TensorHolder:
        self._check_live(api)
        if not isinstance(value, int):
            raise TypeError("Value must be an integer" + _got(value))
        self._check_range(dtype, [value], api)
        return self._const(dtype, [int(value)], [])

    @staticmethod
    def _check_range(dtype: DataType, values: list[int], api: str) -> None:
        lo, hi = _INT_RANGES[dtype]
        for v in values:
            if not lo <= v <= hi:
                ge_text = {DataType.DT_UINT64: "Value must be non-negative for uint64: ",
                           DataType.DT_UINT32: "Value must be in range [0, 2^32-1] for uint32: "}.get(dtype, "")
                raise ValueError(f"{ge_text}{api}: value {v} is outside the {dtype.name} range [{lo}, {hi}]")

    # ------------------------------------------------------------------ inputs
    def create_input(self, index: int, *, name: str | None = None, type_str: InputType = InputType.DATA,
                     data_type: DataType = DataType.DT_FLOAT, format: Format = Format.FORMAT_ND,
                     shape: list[int] | None = None) -> TensorHolder:
        """A graph input node (type ``type_str.value``, attr ``index``, desc = dtype/format/shape; ``None`` shape
        is the scalar ``[]``), named ``input_<index>`` unless ``name`` is given. Inputs use no name counter.

        Raises:
            TypeError: ``index`` is not an int, ``shape`` not a list of int, or an enum/name has the wrong type.
            RuntimeError: ``index`` is negative or already used, or the name is taken.
        """
        self._check_live("create_input")
        _require_int(index, "Input index must be an integer")
        dims = [] if shape is None else check_dims(shape, "Shape must be a list of integers")
        # gebench's own checks (GE leaves these to its native layer)
        if name is not None:
            _require_str(name, "create_input: name must be a string")
        if not isinstance(type_str, InputType):
            raise TypeError("create_input: type_str must be an InputType" + _got(type_str))
        if not isinstance(data_type, DataType):
            raise TypeError("create_input: data_type must be a DataType" + _got(data_type))
        if not isinstance(format, Format):
            raise TypeError("create_input: format must be a Format" + _got(format))
        node_name = name if name is not None else f"input_{index}"
        if index < 0 or index in self._inputs or self._graph.find(node_name) is not None:
            why = ("the index is negative" if index < 0 else
                   f"index {index} is already used" if index in self._inputs else f"name {node_name!r} is taken")
            raise RuntimeError(f"Failed to create input: {why}")
        desc = ir.TensorDesc.of(data_type, dims, format) if dims else trusted_desc(data_type, (), format, format, ())
        node = self._graph.add_node_trusted(type_str.value, node_name, {"index": index}, [desc], [desc.copy()],
                                           _DATA_INPUT_NAMES, _DATA_OUTPUT_NAMES)
        self._inputs[index] = node
        self._apply_scopes(node)
        return self._holder(node)

    def _create_default_input(self, index: int) -> TensorHolder:
        """``create_input(index)`` with every keyword at its default, for callers that pass a non-negative int
        (``PatternInputs``): the argument checks are skipped, the index/name collision check is kept.

        Raises:
            RuntimeError: the builder is built, or ``index`` or the name ``input_<index>`` is already used.
        """
        if self._built or index in self._inputs:
            return self.create_input(index)  # the checked path raises GE's error
        if self._recordable():
            self._inputs[index] = None  # type: ignore[assignment]  # made by _materialize when needed
            return self._record_holder(self._record, -1 - index, ("data", index))  # type: ignore[arg-type]
        try:
            node = self._graph.add_node_trusted("Data", f"input_{index}", {"index": index},
                                                [_default_input_desc()], [_default_input_desc()],
                                                _DATA_INPUT_NAMES, _DATA_OUTPUT_NAMES)
        except ir.GraphError:  # the name is taken: the checked path raises GE's error
            return self.create_input(index)
        self._inputs[index] = node
        if _OPEN_SCOPES[0] and (_SCOPES.attrs or _SCOPES.deps):
            self._apply_scopes(node)
        return TensorHolder._create(self, node, 0)

    def create_inputs(self, num: int, start_index: int = 0) -> list[TensorHolder]:
        """``num`` default inputs with indices ``start_index..start_index+num-1``.

        Raises:
            TypeError: ``num`` is not an int > 0 or ``start_index`` not an int >= 0.
            RuntimeError: an index is already used.
        """
        self._check_live("create_inputs")
        if not _is_int(num) or num <= 0:
            raise TypeError("Number of inputs must be a positive integer" + _got(num))
        if not _is_int(start_index) or start_index < 0:
            raise TypeError("Start index must be a non-negative integer" + _got(start_index))
        return [self.create_input(start_index + i) for i in range(num)]

    def create_variable(self, index: int, name: str) -> TensorHolder:
        """A ``Variable`` node called ``name`` with attr ``index``.

        Raises:
            TypeError: ``index`` is not an int or ``name`` not a str.
            RuntimeError: the name is taken.
        """
        self._check_live("create_variable")
        _require_int(index, "Index must be an integer")
        _require_str(name, "Name must be a string")
        if self._graph.find(name) is not None:
            raise RuntimeError(f"Failed to create variable: name {name!r} is taken")
        node = self._graph.add_node("Variable", name=name, attrs={"index": index}, inputs=[ir.TensorDesc()],
                                    outputs=[ir.TensorDesc()], input_names=["x"], output_names=["y"])
        self._apply_scopes(node)
        return self._holder(node)

    # ------------------------------------------------------------------ constants
    def create_const_int64(self, value: int | list[int], shape: list[int] | None = None) -> TensorHolder:
        """A DT_INT64 Const: a scalar for an int without shape, 1-D ``[len]`` for a list without shape.

        Raises:
            TypeError: values are not ints or ``shape`` not a list of int.
            ValueError: the value count does not fill ``shape``, or a value is out of range.
        """
        return self._int_const(DataType.DT_INT64, value, shape, "create_const_int64")

    def create_const_int32(self, value: int | list[int], shape: list[int] | None = None) -> TensorHolder:
        """Like :meth:`create_const_int64` with DT_INT32."""
        return self._int_const(DataType.DT_INT32, value, shape, "create_const_int32")

    def create_const_uint64(self, value: int | list[int], shape: list[int] | None = None) -> TensorHolder:
        """Like :meth:`create_const_int64` with DT_UINT64 (negative values: ValueError)."""
        return self._int_const(DataType.DT_UINT64, value, shape, "create_const_uint64")

    def create_const_uint32(self, value: int | list[int], shape: list[int] | None = None) -> TensorHolder:
        """Like :meth:`create_const_int64` with DT_UINT32 (values outside [0, 2^32-1]: ValueError)."""
        return self._int_const(DataType.DT_UINT32, value, shape, "create_const_uint32")

    def create_const_float(self, value: float | list[float], shape: list[int] | None = None) -> TensorHolder:
        """A DT_FLOAT Const; ints are accepted and cast to float.

        Raises:
            TypeError: values are not numbers or ``shape`` not a list of int.
            ValueError: the value count does not fill ``shape``.
        """
        self._check_live("create_const_float")
        if isinstance(value, (int, float)) and shape is None:
            return self.create_scalar_float(value)
        values = [value] if isinstance(value, (int, float)) else value
        if not isinstance(values, list) or not all(isinstance(v, (int, float)) for v in values):
            raise TypeError("Value must be a float or list of floats" + _got(value))
        dims = [len(values)] if shape is None else check_dims(shape, "Shape must be a list of integers")
        _validate_const_shape(values, dims)
        return self._const(DataType.DT_FLOAT, [float(v) for v in values], dims)

    def create_vector_int64(self, value: list[int]) -> TensorHolder:
        """A 1-D DT_INT64 Const. Raises TypeError unless ``value`` is a list of int."""
        self._check_live("create_vector_int64")
        if not isinstance(value, list) or not all(_is_int(v) for v in value):
            raise TypeError("Value must be a list of integers" + _got(value))
        return self._int_const(DataType.DT_INT64, value, None, "create_vector_int64")

    def create_scalar_int64(self, value: int) -> TensorHolder:
        """A DT_INT64 scalar Const (shape ``[]``). Raises TypeError unless ``value`` is an int."""
        return self._int_scalar(DataType.DT_INT64, value, "create_scalar_int64")

    def create_scalar_int32(self, value: int) -> TensorHolder:
        """A DT_INT32 scalar Const. Raises TypeError (not an int) / ValueError (out of range)."""
        return self._int_scalar(DataType.DT_INT32, value, "create_scalar_int32")

    def create_scalar_uint64(self, value: int) -> TensorHolder:
        """A DT_UINT64 scalar Const. Raises TypeError (not an int) / ValueError (negative)."""
        return self._int_scalar(DataType.DT_UINT64, value, "create_scalar_uint64")

    def create_scalar_uint32(self, value: int) -> TensorHolder:
        """A DT_UINT32 scalar Const. Raises TypeError (not an int) / ValueError (outside [0, 2^32-1])."""
        return self._int_scalar(DataType.DT_UINT32, value, "create_scalar_uint32")

    def create_scalar_float(self, value: float) -> TensorHolder:
        """A DT_FLOAT scalar Const; ints are accepted. Raises TypeError for anything else."""
        if isinstance(value, (int, float)) and self._recordable():
            return self._record_scalar_float(_float32_of(value))
        self._check_live("create_scalar_float")
        if not isinstance(value, (int, float)):
            raise TypeError("Value must be a number" + _got(value))
        return self._const(DataType.DT_FLOAT, [_float32_of(value)], [])

    def _record_scalar_float(self, value: float) -> TensorHolder:
        """Record the Const ``_const(DT_FLOAT, [value], [])`` would make."""
        record = self._record
        assert record is not None
        attrs, outputs, in_names, out_names = _scalar_const_anchors(_DT_FLOAT, value)
        name = f"Const_{self._counter}"
        self._counter += 1
        ops_ = record.ops
        ops_.append(make_recorded_op(("Const", name, attrs, ir.NO_INPUTS, outputs, in_names, out_names, [])))
        return self._record_holder(record, len(ops_) - 1, ("const", value))

    # ------------------------------------------------------------------ outputs and attrs
    def set_graph_output(self, tensor: TensorHolder, output_index: int) -> None:
        """Make ``tensor`` graph output ``output_index``.

        Raises:
            TypeError: ``tensor`` is not a TensorHolder or ``output_index`` not an int.
            RuntimeError: the index is negative or already set, or the tensor belongs to another builder.
        """
        self._check_live("set_graph_output")
        _require_th(tensor, "Tensor must be a TensorHolder")
        _require_int(output_index, "Output index must be an integer")
        failure = f"Failed to set graph output for graph {self._name} output index {output_index}"
        if tensor._builder is not self:
            self._own(tensor, f"{failure}: the tensor")
        if output_index < 0:
            raise RuntimeError(f"{failure}: the index is negative")
        if output_index in self._outputs:
            raise RuntimeError(f"{failure}: the index is already set")
        self._outputs[output_index] = (tensor._ir_node, tensor._output_index)

    def _typed_value(self, api: str, value: Any, kind: str) -> Any:
        if kind == "int64" and not _is_int(value):
            raise TypeError("Value must be an integer" + _got(value))
        if kind == "string" and not isinstance(value, str):
            raise TypeError("Value must be a string" + _got(value))
        if kind == "bool" and not isinstance(value, bool):
            raise TypeError("Value must be a boolean" + _got(value))
        return value

    def _graph_attr(self, kind: str, attr_name: Any, value: Any) -> None:
        api = f"set_graph_attr_{kind}"
        self._check_live(api)
        _require_str(attr_name, "Attribute name must be a string")
        self._graph.attrs[attr_name] = self._typed_value(api, value, kind)

    def set_graph_attr_int64(self, attr_name: str, value: int) -> None:
        """Set an int graph attr (strict type check: TypeError)."""
        self._graph_attr("int64", attr_name, value)

    def set_graph_attr_string(self, attr_name: str, value: str) -> None:
        """Set a str graph attr (strict type check: TypeError)."""
        self._graph_attr("string", attr_name, value)

    def set_graph_attr_bool(self, attr_name: str, value: bool) -> None:
        """Set a bool graph attr (strict type check: TypeError)."""
        self._graph_attr("bool", attr_name, value)

    def _tensor_attr(self, kind: str, where: str, tensor: Any, attr_name: Any, value: Any) -> None:
        api = f"set_{where}_attr_{kind}"
        self._check_live(api)
        _require_th(tensor, "Tensor must be a TensorHolder")
        _require_str(attr_name, "Attribute name must be a string")
        value = self._typed_value(api, value, kind)
        self._own(tensor, f"{api}: tensor")
        if where == "tensor":
            tensor._ir_node.outputs[tensor._output_index].attrs[attr_name] = value
        else:
            tensor._ir_node.attrs[attr_name] = value

    def set_tensor_attr_int64(self, tensor: TensorHolder, attr_name: str, value: int) -> None:
        """Set an int attr on the producer's output desc at ``tensor``'s output index."""
        self._tensor_attr("int64", "tensor", tensor, attr_name, value)

    def set_tensor_attr_string(self, tensor: TensorHolder, attr_name: str, value: str) -> None:
        """Set a str attr on the producer's output desc at ``tensor``'s output index."""
        self._tensor_attr("string", "tensor", tensor, attr_name, value)

    def set_tensor_attr_bool(self, tensor: TensorHolder, attr_name: str, value: bool) -> None:
        """Set a bool attr on the producer's output desc at ``tensor``'s output index."""
        self._tensor_attr("bool", "tensor", tensor, attr_name, value)

    def set_node_attr_int64(self, tensor: TensorHolder, attr_name: str, value: int) -> None:
        """Set an int attr on ``tensor``'s producer node."""
        self._tensor_attr("int64", "node", tensor, attr_name, value)

    def set_node_attr_string(self, tensor: TensorHolder, attr_name: str, value: str) -> None:
        """Set a str attr on ``tensor``'s producer node."""
        self._tensor_attr("string", "node", tensor, attr_name, value)

    def set_node_attr_bool(self, tensor: TensorHolder, attr_name: str, value: bool) -> None:
        """Set a bool attr on ``tensor``'s producer node."""
        self._tensor_attr("bool", "node", tensor, attr_name, value)

    def add_control_dependency(self, dst_tensor: TensorHolder, src_tensors: list[TensorHolder]) -> None:
        """Control edges from the producers of ``src_tensors`` to the producer of ``dst_tensor``.

        Raises:
            TypeError: ``dst_tensor`` is not a TensorHolder or ``src_tensors`` not a list of them.
            RuntimeError: a tensor belongs to another builder, or an edge would close a cycle.
        """
        self._check_live("add_control_dependency")
        _require_th(dst_tensor, "dst_tensor must be a TensorHolder")
        if not isinstance(src_tensors, list):
            raise TypeError("src_tensors must be a list" + _got(src_tensors))
        for th in src_tensors:
            _require_th(th, "src_tensors must be a list of TensorHolder")
        failure = f"Failed to add control dependency for nodes in graph {self._name}"
        for i, th in enumerate(src_tensors):
            if th._builder is not self:
                self._own(th, f"{failure}: src_tensors[{i}]")
        if dst_tensor._builder is not self:
            self._own(dst_tensor, f"{failure}: dst_tensor")
        for th in src_tensors:
            try:
                self._graph.add_control_edge(th._ir_node, dst_tensor._ir_node)
            except ir.GraphError as exc:
                raise RuntimeError(f"{failure}: {exc}") from exc

    # ------------------------------------------------------------------ build
    def build_and_reset(self, outputs: list[TensorHolder] | None = None) -> Graph:
        """Finish the graph: ``outputs[k]`` becomes graph output ``k``; a ``NetOutput_<name>`` node gets input
        ``k`` from graph output ``k``; each input node's input desc becomes a copy of its output desc; subgraphs
        nested in subgraphs move to the root. The builder is then *built*. O(n).

        Raises:
            TypeError: ``outputs`` is not a list (a tuple is refused) of TensorHolder.
            RuntimeError: an output index repeats, or input/output indices do not run 0..n-1
                (``"Failed to build graph"``), or the builder was already built.
        """
        self._check_live("build_and_reset")
        if outputs is not None:
            if not isinstance(outputs, list):
                raise TypeError("Outputs must be a list" + _got(outputs))
            for th in outputs:
                if type(th) is not TensorHolder:
                    _require_th(th, "All outputs must be TensorHolder objects")
            for i, th in enumerate(outputs):
                if th._builder is not self:
                    self._own(th, f"build_and_reset: outputs[{i}]")
                if i in self._outputs:
                    raise RuntimeError(f"build_and_reset: output index {i} is already set by set_graph_output")
        final = dict(self._outputs)
        for i, th in enumerate(outputs or []):
            final[i] = (th._ir_node, th._output_index)
        for what, indices in (("input", self._inputs), ("output", final)):
            # distinct non-negative ints run 0..n-1 exactly when the smallest is 0 and the largest n-1
            if indices and (min(indices) != 0 or max(indices) != len(indices) - 1):
                raise RuntimeError(f"Failed to build graph {self._name!r}: {what} indices {sorted(indices)} "
                                   f"must run 0..{len(indices) - 1} without gaps")
        self._outputs = final
        for node in self._inputs.values():
            node.inputs[0] = node.outputs[0].copy()
        count = len(final)
        graph = self._graph
        sources = [final[k] for k in range(count)]
        # input k of the NetOutput starts as a copy of the desc of what feeds it
        in_descs = []
        for src, port in sources:
            in_descs.append(src.outputs[port].copy())
        _, in_names, _, out_names = _layout("NetOutput", {"x": count}, None)
        net = graph.add_node_trusted("NetOutput", f"NetOutput_{self._name}", {}, in_descs, [], in_names,
                                     out_names)
        link = graph.add_edge_trusted  # net is new with `count` unfed inputs; every source is a node of ours
        for k, (src, port) in enumerate(sources):
            link(src, port, net, k)
        if graph.subgraphs:
            self._hoist_subgraphs()
        self._built = True
        return Graph._wrap(graph, owns=True)

    def _hoist_subgraphs(self) -> None:
        pending = list(self._graph.subgraphs.values())
        while pending:
            sub = pending.pop()
            for nested_name in list(sub.subgraphs):
                nested = sub.remove_subgraph(nested_name)
                try:
                    self._graph.add_subgraph(nested)
                except ir.GraphError as exc:
                    raise RuntimeError(f"Failed to build graph {self._name!r}: {exc}") from exc
                pending.append(nested)

    def __copy__(self) -> NoReturn:
        raise RuntimeError("GraphBuilder does not support copy")

    def __deepcopy__(self, memo: dict[int, Any]) -> NoReturn:
        raise RuntimeError("GraphBuilder does not support deepcopy")

    def __repr__(self) -> str:
        if self._record is not None and not self._built:
            self._materialize()
        state = "built" if self._built else f"{len(self._graph)} nodes"
        return f"<GraphBuilder {self._name!r}: {state}>"
