"""IR <-> ``ge.proto.ModelDef`` conversion: the encoding GE's model serializer uses (spec ge-dump-format §4).

Two numberings of data types meet here: ``TensorDescriptor.dtype`` uses the ``ge_ir.proto`` enum, while
``AttrDef.dt`` and dtype-valued int attrs use the C++ ``ge::DataType`` numbering kept by :class:`ir.DataType`.
Both are mapped by name, which the two enums share.

What survives a round trip IR -> ModelDef -> IR: node ids (``OpDef.id``), names, op types, attrs (all IR value
kinds), anchor names and descs, data edges in use order, control edges, subgraphs and their parents, graph attrs
and graph outputs. What does not: ``Node.provenance``, attr insertion order (decoded attrs come in schema order,
then sorted by name), the last digits of float attrs (GE stores float32; they read back as the shortest decimal
of the float32 value, so 1e-5 stays 1e-5), and the desc fields GE fills during build (``size``, ...).
Values GE can store but the IR cannot hold (NamedAttrs, graphs, symbolic expressions, tensors of types without
a numpy form) are kept as :class:`OpaqueAttr` so they are written back unchanged.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from gebench import ir, ops
from gebench.ir import DataType, Format, TensorDesc, TensorValue

from .proto import ge_ir_pb2 as pb

__all__ = [
    "GeDumpError",
    "OpaqueAttr",
    "GRAPH_OUTPUTS_ATTR",
    "OPTION_ATTRS",
    "encode_model",
    "decode_model",
    "graph_outputs",
    "proto_dtype",
    "cpp_dtype",
    "format_string",
    "parse_format_string",
    "dtype_serial_string",
]

_log = logging.getLogger(__name__)

#: Graph attr holding the graph outputs (``["node:port", ...]``) of a graph that has no NetOutput node, as
#: GE's parsers leave it before graph preparation (``GraphDef.output``).
GRAPH_OUTPUTS_ATTR = "outputs"

#: NamedAttrs GE adds to the dumped graph at DUMP_GE_GRAPH levels 1 and 2 (option strings).
OPTION_ATTRS = ("GraphOptions", "SessionOptions", "GlobalOptions")

#: Attrs GE serializes beside an op's own attrs; derived from the anchors and the op schema on write.
_ANCHOR_NAME_KEYS = ("_input_name_key", "_input_name_value", "_output_name_key", "_output_name_value",
                     "_input_name_idx_key", "_input_name_idx_value", "_src_out_peer_index_for_ge_txt_load")
_SCHEMA_KEYS = ("_ir_inputs_key", "_ir_inputs_value", "_ir_outputs_key", "_ir_outputs_value",
                "_opt_input", "_ir_attr_names")
#: Framework definitions GE drops from every op below DUMP_GE_GRAPH=1.
FRAMEWORK_DEF_ATTRS = ("node_def", "op_def", "func_def")
CONST_TYPES = ("Const", "Constant")
#: Op types GE counts as graph inputs (``GraphDef.input``).
DATA_TYPES = ("Data", "RefData", "AippData")

_VT = pb.AttrDef.ListValue
_IR_INPUT_KIND = {"required": 0, "optional": 1, "dynamic": 2}
_IR_OUTPUT_KIND = {"required": 0, "dynamic": 1}


class GeDumpError(ValueError):
    """A GE dump (or AIR file) could not be read or written; the message names the file, line and fix."""


class OpaqueAttr(bytes):
    """An attr value the IR has no type for (NamedAttrs, graph, expression, a tensor without numpy form), kept
    as the bytes of its serialized ``ge.proto.AttrDef`` so that writing the graph back reproduces it.

    It is a ``bytes`` subclass, so every part of gebench that handles bytes attrs (text form, copies, widgets)
    handles it; after a trip through the IR text form it comes back as plain ``bytes``.
    """

    @property
    def kind(self) -> str:
        """The AttrDef field that holds the value (``"func"``, ``"g"``, ``"t"``, ...)."""
        return self.to_proto().WhichOneof("value") or ""

    @property
    def serialized(self) -> bytes:
        return bytes(self)

    def to_proto(self) -> pb.AttrDef:
        msg = pb.AttrDef()
        msg.ParseFromString(bytes(self))
        return msg

    def __repr__(self) -> str:
        return f"OpaqueAttr({self.kind}, {len(self)} bytes)"


# ------------------------------------------------------------------------------------------------ enums
_PROTO_DT_BY_NAME = {v.name: v.number for v in pb.DataType.DESCRIPTOR.values}
_CPP_DT_BY_PROTO = {number: DataType[name] for name, number in _PROTO_DT_BY_NAME.items() if name in DataType.__members__}
_SERIAL_DT = {DataType.DT_BF16: "DT_BFLOAT16"}
_DT_FROM_SERIAL = {**{m.name: m for m in DataType}, "DT_BFLOAT16": DataType.DT_BF16, "DT_FLOAT32": DataType.DT_FLOAT}


def proto_dtype(dtype: DataType) -> int:
    """The ``ge_ir.proto`` DataType number of a C++ ``ge::DataType`` (DT_MAX maps to DT_UNDEFINED)."""
    return _PROTO_DT_BY_NAME.get(DataType(dtype).name, 0)


def cpp_dtype(number: int) -> DataType:
    """The C++ ``ge::DataType`` of a ``ge_ir.proto`` DataType number; unknown numbers give DT_UNDEFINED."""
    return _CPP_DT_BY_PROTO.get(number, DataType.DT_UNDEFINED)


def dtype_serial_string(dtype: DataType) -> str:
    """GE's serial string of a data type (``"DT_FLOAT"``, ``"DT_BFLOAT16"`` for DT_BF16)."""
    dtype = DataType(dtype)
    return _SERIAL_DT.get(dtype, dtype.name)


def _dtype_from_serial(text: str) -> DataType | None:
    return _DT_FROM_SERIAL.get(text.strip().upper())


def format_string(fmt: Format) -> str:
    """GE's format string: the enum name without ``FORMAT_`` (``"ND"``), except ``"FORMAT_RESERVED"``."""
    fmt = Format(fmt)
    return fmt.name if fmt == Format.FORMAT_RESERVED else fmt.name[len("FORMAT_"):]


_FORMAT_BY_STRING = {**{m.name[len("FORMAT_"):].upper(): m for m in Format}, **{m.name.upper(): m for m in Format}}


def parse_format_string(text: str) -> Format | None:
    """The format named ``text`` (with or without ``FORMAT_``, any case), or None."""
    return _FORMAT_BY_STRING.get(text.strip().upper())


def _format_from_int(value: int) -> Format | None:
    # The low byte is the primary format; the higher bits carry sub-format and C0, which the IR does not keep.
    try:
        return Format(int(value) & 0xFF)
    except ValueError:
        return None


# ------------------------------------------------------------------------------------------------ writing
def _ordered_schema() -> tuple[Any, ...]:
    """ModelDef and AttrDef classes of a copy of ``ge_ir.proto`` whose maps are plain repeated entry messages.

    Maps print (and serialize) in hash order in protobuf's C implementation; GE's printer sorts them by key.
    The copy has the same field names and numbers, so its text and binary forms are those of ``ModelDef``, but
    entries keep the order the encoder adds them in (sorted), and ``str()`` prints in C at full speed.
    """
    fdp = descriptor_pb2.FileDescriptorProto()
    pb.DESCRIPTOR.CopyToProto(fdp)
    fdp.name = "gebench/io/proto/ge_ir_ordered.proto"
    fdp.package = "ge.proto_ordered"

    def unmap(message: descriptor_pb2.DescriptorProto) -> None:
        if message.options.map_entry:
            message.ClearField("options")
        for field in message.field:
            if field.type_name.startswith(".ge.proto."):
                field.type_name = ".ge.proto_ordered." + field.type_name[len(".ge.proto."):]
        for nested in message.nested_type:
            unmap(nested)

    for message in fdp.message_type:
        unmap(message)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    return tuple(message_factory.GetMessageClass(pool.FindMessageTypeByName(f"ge.proto_ordered.{name}"))
                 for name in ("ModelDef", "AttrDef", "TensorDescriptor"))


_OrderedModelDef, _OrderedAttrDef, _OrderedTensorDescriptor = _ordered_schema()


class _AttrMap:
    """Entries of a map field (in the ordered schema) added by key, then put in key order as GE prints maps."""

    __slots__ = ("_field", "_items")

    def __init__(self, field: Any) -> None:
        self._field = field
        self._items: dict[str, Any] = {}

    def __getitem__(self, key: str) -> Any:
        item = self._items.get(key)
        if item is None:
            entry = self._field.add()
            entry.key = key
            item = self._items[key] = entry.value
        return item

    def __contains__(self, key: str) -> bool:
        return key in self._items

    def flush(self) -> None:
        if len(self._items) > 1:
            self._field.sort(key=_entry_key)


def _entry_key(entry: Any) -> str:
    return entry.key


def model_text(model: Any) -> str:
    """The protobuf text form of an encoded model, printed as GE prints it (fields by number, maps by key)."""
    return str(model)


@dataclasses.dataclass(frozen=True)
class EncodeOptions:
    """What to keep when encoding (DUMP_GE_GRAPH level semantics).

    Attributes:
        const_values: keep the ``value`` attr of Const/Constant nodes (level 1).
        framework_defs: keep ``node_def``/``op_def``/``func_def`` attrs (level 1).
        graph_options: add the GraphOptions/SessionOptions/GlobalOptions NamedAttrs (levels 1 and 2).
        peer_index: write ``_src_out_peer_index_for_ge_txt_load`` (dump files; not AIR).
    """

    const_values: bool = True
    framework_defs: bool = True
    graph_options: bool = True
    peer_index: bool = True




def graph_outputs(graph: ir.Graph) -> list[tuple[ir.Node, int]]:
    """The graph outputs: the producers of the NetOutput node's inputs in port order, or else the entries of
    the ``outputs`` graph attr.

    Raises:
        GeDumpError: an entry of ``outputs`` names a node or port that does not exist.
    """
    net = [n for n in graph.nodes_of_type("NetOutput")]
    if net:
        return [p for p in graph.producers(net[0]) if p is not None]
    out = []
    for entry in graph.attrs.get(GRAPH_OUTPUTS_ATTR, []) or []:
        name, _, port = str(entry).rpartition(":")
        node = graph.find(name)
        if node is None or not port.lstrip("-").isdigit() or not 0 <= int(port) < node.num_outputs:
            raise GeDumpError(
                f"graph {graph.name!r}: graph output {entry!r} in attr {GRAPH_OUTPUTS_ATTR!r} names no existing "
                "node output; fix or remove the entry"
            )
        out.append((node, int(port)))
    return out


def encode_model(graph: ir.Graph, options: EncodeOptions = EncodeOptions(), *, model_name: str = "") -> Any:
    """Encode ``graph`` (a root graph with its subgraphs) as a ModelDef the way GE's dump does.

    The result is a message of the ordered copy of the schema (maps as sorted entries, see
    :func:`_ordered_schema`): print it with :func:`model_text`; its binary form parses as ``ge_ir_pb2.ModelDef``.

    ``graph[0]`` is the root, ``graph[1..]`` every subgraph (flattened, insertion order); the model attrs are
    GE's fixed build-info ints and ``target_type``. O(nodes + edges + attr sizes).

    Raises:
        GeDumpError: an attr value has a type GE cannot store (the message names graph, node and attr).
    """
    graph = ir.as_graph(graph)
    model = _OrderedModelDef()
    if model_name:
        model.name = model_name
    _encode_graph(graph, model.graph.add(), options, root=True)
    for sub in _all_subgraphs(graph):
        _encode_graph(sub, model.graph.add(), options, root=False)
    _encode_model_attrs(model)
    return model


def _encode_model_attrs(model: Any) -> None:
    """GE's fixed build-info ints and ``target_type`` (the model's attrs)."""
    attrs = _AttrMap(model.attr)
    for key in ("memory_size", "p2p_memory_size", "stream_num", "event_num", "label_num", "weight_size"):
        attrs[key].i = 0
    attrs["target_type"].s = b"MINI"
    attrs.flush()


def _all_subgraphs(graph: ir.Graph) -> list[ir.Graph]:
    out: list[ir.Graph] = []
    seen: set[int] = set()

    def visit(g: ir.Graph) -> None:
        for sub in g.subgraphs.values():
            if id(sub) not in seen:
                seen.add(id(sub))
                out.append(sub)
                visit(sub)

    visit(graph)
    return out


def _encode_graph(graph: ir.Graph, msg: Any, options: EncodeOptions, *, root: bool) -> None:
    msg.name = graph.name
    nodes = graph.nodes()
    for node in nodes:
        if node.op_type in DATA_TYPES:
            msg.input.append(f"{node.name}:0")
    for node, port in graph_outputs(graph):
        msg.output.append(f"{node.name}:{port}")
    # Peer positions computed once per graph: O(edges) instead of O(uses) per input.
    peers: dict[tuple[int, int], int] = {}
    control_peers: dict[tuple[int, int], int] = {}
    for node in nodes:
        for port in range(node.num_outputs):
            for i, (dst, dp) in enumerate(graph.uses(node, port)):
                peers[(dst.id, dp)] = i
        for i, succ in enumerate(sorted(graph.control_successors(node), key=graph.position)):
            control_peers[(node.id, succ.id)] = i
    for node in nodes:
        _encode_node(graph, node, msg.op.add(), options, peers, control_peers)
    _encode_graph_attrs(graph, msg, options, root=root)


def _encode_graph_attrs(graph: ir.Graph, msg: Any, options: EncodeOptions, *, root: bool) -> None:
    """The graph's attrs (without its outputs) and, on the root at levels 1-2, GE's option NamedAttrs.

    Raises:
        GeDumpError: an attr value GE cannot store.
    """
    attrs = _AttrMap(msg.attr)
    for key, value in graph.attrs.items():
        if key == GRAPH_OUTPUTS_ATTR:
            continue
        _encode_attr_into(attrs[key], value, None, where=f"graph {graph.name!r} attr {key!r}")
    if root and options.graph_options:
        for key in OPTION_ATTRS:
            if key not in attrs:
                attrs[key].func.name = key
    attrs.flush()


def _schema(op_type: str) -> ops.OpSchema | None:
    try:
        return ops.get_schema(op_type)
    except ops.OpsError as exc:  # a broken custom-op file must not stop a dump
        _log.warning("no schema for %s while encoding: %s", op_type, exc)
        return None


def _schema_attrs(schema: ops.OpSchema | None) -> dict[str, Any]:
    """The reserved IR-metadata attrs GE derives from an op's prototype."""
    if schema is None:
        return {}
    return {
        "_ir_inputs_key": [i.name for i in schema.inputs],
        "_ir_inputs_value": [_IR_INPUT_KIND.get(i.kind, 0) for i in schema.inputs],
        "_ir_outputs_key": [o.name for o in schema.outputs],
        "_ir_outputs_value": [_IR_OUTPUT_KIND.get(o.kind, 0) for o in schema.outputs],
        "_opt_input": [i.name for i in schema.inputs if i.kind == "optional"],
        "_ir_attr_names": [a.name for a in schema.attrs],
    }


def _encode_node(graph: ir.Graph, node: ir.Node, msg: Any, options: EncodeOptions,
                 peers: dict[tuple[int, int], int], control_peers: dict[tuple[int, int], int]) -> None:
    msg.name = node.name
    msg.type = node.op_type
    msg.id = node.id
    peer_index: list[int] = []
    for port, prod in enumerate(graph.producers(node)):
        if prod is None:
            msg.input.append("")
            peer_index.append(-1)
        else:
            src, sp = prod
            msg.input.append(f"{src.name}:{sp}")
            peer_index.append(peers[(node.id, port)])
    for src in sorted(graph.control_predecessors(node), key=graph.position):
        msg.input.append(f"{src.name}:-1")
        peer_index.append(control_peers[(src.id, node.id)])
    schema = _schema(node.op_type)
    hints = {a.name: a.type for a in schema.attrs} if schema is not None else {}
    where = f"graph {graph.name!r} node {node.name!r} ({node.op_type})"
    attrs = _AttrMap(msg.attr)
    for key, value in node.attrs.items():
        if not options.framework_defs and key in FRAMEWORK_DEF_ATTRS:
            continue
        if not options.const_values and key == "value" and node.op_type in CONST_TYPES:
            continue
        _encode_attr_into(attrs[key], value, hints.get(key), where=f"{where} attr {key!r}")
    reserved: dict[str, tuple[list, int]] = {}
    named_in = [(n, i) for i, n in enumerate(node.input_names) if n]
    if named_in:
        reserved["_input_name_key"] = ([n for n, _ in named_in], _VT.VT_LIST_STRING)
        reserved["_input_name_value"] = ([i for _, i in named_in], _VT.VT_LIST_INT)
    named_out = [(n, i) for i, n in enumerate(node.output_names) if n]
    if named_out:
        reserved["_output_name_key"] = ([n for n, _ in named_out], _VT.VT_LIST_STRING)
        reserved["_output_name_value"] = ([i for _, i in named_out], _VT.VT_LIST_INT)
    for key, value in _schema_attrs(schema).items():
        reserved[key] = (value, _VT.VT_LIST_INT if key.endswith("_value") else _VT.VT_LIST_STRING)
    if options.peer_index:
        reserved["_src_out_peer_index_for_ge_txt_load"] = (peer_index, _VT.VT_LIST_INT)
    for key, (values, vt) in reserved.items():
        if key in node.attrs:
            continue  # a value read from a real dump wins over the derived one
        lst = attrs[key].list
        lst.val_type = vt
        if vt == _VT.VT_LIST_STRING:
            lst.s.extend(v.encode() for v in values)
        else:
            lst.i.extend(values)
    attrs.flush()
    for desc in node.inputs:
        _encode_desc(desc, msg.input_desc.add(), where=f"{where} input desc")
    for desc in node.outputs:
        _encode_desc(desc, msg.output_desc.add(), where=f"{where} output desc")
    msg.subgraph_name.extend(node.subgraph_names)


def _encode_desc(desc: TensorDesc, msg: Any, *, where: str) -> None:
    if not desc.has_attrs:
        # Most descs of a graph repeat; encode each distinct one once.
        msg.MergeFromString(_plain_desc_bytes(desc.dtype, desc.shape, desc.format, desc.origin_format,
                                              desc.origin_shape, desc.origin_dtype))
        return
    _encode_desc_fields(desc, msg, where=where)


@functools.lru_cache(maxsize=4096)
def _plain_desc_bytes(dtype: DataType, shape: tuple[int, ...], fmt: Format, origin_format: Format,
                      origin_shape: tuple[int, ...], origin_dtype: DataType | None) -> bytes:
    msg = _OrderedTensorDescriptor()
    _encode_desc_fields(TensorDesc(dtype=dtype, shape=shape, format=fmt, origin_format=origin_format,
                                   origin_shape=origin_shape, origin_dtype=origin_dtype), msg, where="")
    return msg.SerializeToString()


def _encode_desc_fields(desc: TensorDesc, msg: Any, *, where: str) -> None:
    minimal_placeholder = (desc.is_placeholder and desc.origin_format == desc.format and not desc.origin_shape
                           and not desc.shape and desc.origin_dtype is None)
    msg.dtype = proto_dtype(desc.dtype)
    if desc.shape or not minimal_placeholder:
        msg.shape.dim.extend(desc.shape)
    msg.layout = format_string(desc.format)
    attrs = _AttrMap(msg.attr)
    if not minimal_placeholder:
        attrs["format_for_int"].i = int(desc.format)
        attrs["origin_format"].s = format_string(desc.origin_format).encode()
        attrs["origin_format_for_int"].i = int(desc.origin_format)
        if desc.origin_dtype is not None:
            attrs["origin_data_type"].s = dtype_serial_string(desc.origin_dtype).encode()
        attrs["origin_shape_initialized"].b = True
        origin = attrs["origin_shape"].list
        origin.val_type = _VT.VT_LIST_INT
        origin.i.extend(desc.origin_shape)
        msg.device_type = "NPU"
    for key, value in desc.attr_items():
        _encode_attr_into(attrs[key], value, None, where=f"{where} attr {key!r}")
    attrs.flush()


def _encode_tensor(value: TensorValue, msg: Any) -> None:
    d = msg.desc
    d.dtype = proto_dtype(value.dtype)
    d.shape.dim.extend(value.shape)
    d.layout = format_string(value.format)
    if value.origin_format is not None and value.origin_format != value.format:
        attrs = _AttrMap(d.attr)
        attrs["origin_format"].s = format_string(value.origin_format).encode()
        attrs["origin_format_for_int"].i = int(value.origin_format)
        attrs.flush()
    msg.data = value.to_bytes()


_LIST_HINTS = {
    "ListInt": "i", "ListFloat": "f", "ListBool": "b", "ListString": "s", "ListStr": "s", "ListType": "dt",
    "ListDataType": "dt", "ListTensor": "t", "ListTensorDesc": "td", "ListBytes": "bt",
}


def _list_kind(values: Sequence[Any], hint: str | None) -> str:
    if not values:
        if hint in ("ListListInt", "ListListFloat"):
            return "lli" if hint == "ListListInt" else "llf"
        return _LIST_HINTS.get(hint or "", "i")
    if all(isinstance(v, (list, tuple)) for v in values):
        flat = [x for v in values for x in v]
        if hint == "ListListFloat" or any(isinstance(x, float) for x in flat):
            return "llf"
        return "lli"
    if all(isinstance(v, bool) for v in values):
        return "b"
    if all(isinstance(v, DataType) for v in values):
        return "dt"
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return "f" if hint == "ListFloat" else ("dt" if hint == "ListType" else "i")
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return "f"
    if all(isinstance(v, str) for v in values):
        return "s"
    if all(isinstance(v, bytes) for v in values):
        return "bt"
    if all(isinstance(v, TensorValue) for v in values):
        return "t"
    if all(isinstance(v, TensorDesc) for v in values):
        return "td"
    return "?"


_VT_OF_KIND = {"s": _VT.VT_LIST_STRING, "i": _VT.VT_LIST_INT, "f": _VT.VT_LIST_FLOAT, "b": _VT.VT_LIST_BOOL,
               "bt": _VT.VT_LIST_BYTES, "td": _VT.VT_LIST_TENSOR_DESC, "t": _VT.VT_LIST_TENSOR,
               "dt": _VT.VT_LIST_DATA_TYPE}


def _encode_attr_into(msg: Any, value: Any, hint: str | None, *, where: str) -> None:
    """Fill ``msg`` (an ordered-schema AttrDef) with the AttrDef encoding of an IR attr value (spec §4.3)."""
    if isinstance(value, OpaqueAttr):
        msg.ParseFromString(value.serialized)
        _sort_entries(msg)
    elif isinstance(value, bool):
        msg.b = value
    elif isinstance(value, DataType):
        msg.dt = int(value)
    elif isinstance(value, int):
        if hint == "Float":
            msg.f = float(value)
        elif hint in ("Type", "DataType"):
            msg.dt = int(value)
        else:
            msg.i = value
    elif isinstance(value, float):
        msg.f = value
    elif isinstance(value, str):
        msg.s = value.encode("utf-8", "surrogateescape")
    elif isinstance(value, bytes):
        msg.bt = value
    elif isinstance(value, TensorValue):
        _encode_tensor(value, msg.t)
    elif isinstance(value, TensorDesc):
        _encode_desc(value, msg.td, where=where)
    elif isinstance(value, (list, tuple)):
        kind = _list_kind(value, hint)
        if kind == "lli":
            msg.list_list_int.SetInParent()
            for row in value:
                msg.list_list_int.list_list_i.add().list_i.extend(int(x) for x in row)
        elif kind == "llf":
            msg.list_list_float.SetInParent()
            for row in value:
                msg.list_list_float.list_list_f.add().list_f.extend(float(x) for x in row)
        elif kind == "?":
            raise GeDumpError(f"{where}: a list mixing {sorted({type(v).__name__ for v in value})} has no GE "
                              "encoding; use one element type")
        else:
            lst = msg.list
            lst.val_type = _VT_OF_KIND[kind]
            if kind == "s":
                lst.s.extend(v.encode("utf-8", "surrogateescape") for v in value)
            elif kind == "f":
                lst.f.extend(float(v) for v in value)
            elif kind == "dt":
                lst.dt.extend(int(v) for v in value)
            elif kind == "t":
                for v in value:
                    _encode_tensor(v, lst.t.add())
            elif kind == "td":
                for v in value:
                    _encode_desc(v, lst.td.add(), where=where)
            else:
                getattr(lst, kind).extend(value)
    else:
        raise GeDumpError(f"{where}: a value of type {type(value).__name__} has no GE attr encoding; store an int, "
                          "float, bool, str, bytes, DataType, TensorValue, TensorDesc or a list of one of them")


def _sort_entries(msg: Any) -> None:
    """Put every map-entry list below ``msg`` in key order (for opaque values parsed from bytes)."""
    for field, value in msg.ListFields():
        if field.message_type is None:
            continue
        if field.is_repeated:
            if sorted(f.name for f in field.message_type.fields) == ["key", "value"]:
                value.sort(key=lambda e: e.key)
            for item in value:
                _sort_entries(item)
        else:
            _sort_entries(value)


# ------------------------------------------------------------------------------------------------ reading
def _float32(value: float) -> float:
    """The shortest decimal that names the same float32, so 0.1 stored as float32 reads back as 0.1."""
    return float(str(np.float32(value)))


def _decode_desc(msg: pb.TensorDescriptor, *, where: str) -> TensorDesc:
    attrs = dict(msg.attr)
    fmt = None
    if "format_for_int" in attrs and attrs["format_for_int"].WhichOneof("value") == "i":
        fmt = _format_from_int(attrs["format_for_int"].i)
    if fmt is None:
        fmt = parse_format_string(msg.layout) if msg.layout else Format.FORMAT_ND
        if fmt is None:
            raise GeDumpError(f"{where}: unknown layout {msg.layout!r}")
    origin_fmt = None
    if "origin_format_for_int" in attrs and attrs["origin_format_for_int"].WhichOneof("value") == "i":
        origin_fmt = _format_from_int(attrs["origin_format_for_int"].i)
    if origin_fmt is None and "origin_format" in attrs:
        origin_fmt = parse_format_string(attrs["origin_format"].s.decode("utf-8", "replace"))
    if origin_fmt is None:
        origin_fmt = fmt
    shape = tuple(msg.shape.dim)
    origin_shape = shape
    initialized = attrs["origin_shape_initialized"].b if "origin_shape_initialized" in attrs else None
    if initialized or (initialized is None and "origin_shape" in attrs):
        origin_shape = tuple(attrs["origin_shape"].list.i) if "origin_shape" in attrs else ()
    origin_dtype = None
    if "origin_data_type" in attrs:
        text = attrs["origin_data_type"].s.decode("utf-8", "replace")
        origin_dtype = _dtype_from_serial(text)
        if origin_dtype is None:
            raise GeDumpError(f"{where}: unknown origin_data_type {text!r}")
    extra = {}
    for key in sorted(attrs):
        if key in ("format_for_int", "origin_format", "origin_format_for_int", "origin_data_type",
                   "origin_shape_initialized", "origin_shape"):
            continue
        extra[key] = _decode_attr(attrs[key], where=f"{where} attr {key!r}")
    return TensorDesc(dtype=cpp_dtype(msg.dtype), shape=shape, format=fmt, origin_format=origin_fmt,
                      origin_shape=origin_shape, origin_dtype=origin_dtype, attrs=extra)


def _decode_tensor(msg: pb.TensorDef, *, where: str) -> TensorValue | None:
    """The TensorValue of a TensorDef, or None when its type has no numpy form (kept opaque by the caller)."""
    dtype = cpp_dtype(msg.desc.dtype)
    fmt = parse_format_string(msg.desc.layout) if msg.desc.layout else Format.FORMAT_ND
    origin = None
    if "origin_format" in msg.desc.attr:
        origin = parse_format_string(msg.desc.attr["origin_format"].s.decode("utf-8", "replace"))
    shape = tuple(msg.desc.shape.dim)
    try:
        np_type = ir.numpy_dtype(dtype)
    except ValueError:
        return None
    if np_type == np.object_:
        return None
    count = int(np.prod(shape, dtype=np.int64)) if shape else 1
    if any(d < 0 for d in shape):
        raise GeDumpError(f"{where}: tensor shape {list(shape)} has unknown dimensions")
    expected = count * np_type.itemsize
    if not msg.data and expected:
        return None  # a tensor without its bytes (GE allows it); kept opaque so it is written back as read
    if len(msg.data) != expected:
        raise GeDumpError(f"{where}: tensor data holds {len(msg.data)} bytes but {dtype.name}{list(shape)} needs "
                          f"{expected}; the file is damaged or was cut short")
    return tensor_of_bytes(msg.data, dtype, np_type, shape, fmt or Format.FORMAT_ND, origin)


_LITTLE_ENDIAN = sys.byteorder == "little"


def tensor_of_bytes(raw: bytes, dtype: DataType, np_type: np.dtype, shape: tuple[int, ...], fmt: Format,
                    origin: Format | None) -> TensorValue:
    """The TensorValue of a dump's tensor bytes (little-endian, ``len(raw)`` already checked against ``shape``).
    On a little-endian host the value's array is a read-only view of ``raw`` (nothing is copied), else a
    byte-swapped copy. O(1), or O(bytes) on a big-endian host."""
    if _LITTLE_ENDIAN:
        return ir.trusted_value(dtype, np.frombuffer(raw, dtype=np_type).reshape(shape), fmt, origin)
    return TensorValue(dtype, np.frombuffer(raw, dtype=np_type.newbyteorder("<")).astype(np_type).reshape(shape),
                       fmt, origin)


def _opaque(msg: pb.AttrDef) -> OpaqueAttr:
    return OpaqueAttr(msg.SerializeToString(deterministic=True))


def _decode_attr(msg: pb.AttrDef, *, where: str) -> Any:
    kind = msg.WhichOneof("value")
    if kind == "s":
        return msg.s.decode("utf-8", "surrogateescape")
    if kind == "i":
        return int(msg.i)
    if kind == "f":
        return _float32(msg.f)
    if kind == "b":
        return bool(msg.b)
    if kind == "bt":
        return bytes(msg.bt)
    if kind == "dt":
        try:
            return DataType(msg.dt)
        except ValueError:
            return _opaque(msg)
    if kind == "td":
        return _decode_desc(msg.td, where=where)
    if kind == "t":
        value = _decode_tensor(msg.t, where=where)
        return value if value is not None else _opaque(msg)
    if kind == "list_list_int":
        return [[int(x) for x in row.list_i] for row in msg.list_list_int.list_list_i]
    if kind == "list_list_float":
        return [[_float32(x) for x in row.list_f] for row in msg.list_list_float.list_list_f]
    if kind == "list":
        return _decode_list(msg, where=where)
    if kind is None:
        return _opaque(msg)
    return _opaque(msg)  # func (NamedAttrs), g (graph), expression


def _decode_list(msg: pb.AttrDef, *, where: str) -> Any:
    lst = msg.list
    vt = lst.val_type
    if vt == _VT.VT_LIST_NONE:
        populated = [f.name for f, _ in lst.ListFields() if f.name != "val_type"]
        if not populated:
            return []
        vt = {"s": _VT.VT_LIST_STRING, "i": _VT.VT_LIST_INT, "f": _VT.VT_LIST_FLOAT, "b": _VT.VT_LIST_BOOL,
              "bt": _VT.VT_LIST_BYTES, "td": _VT.VT_LIST_TENSOR_DESC, "t": _VT.VT_LIST_TENSOR,
              "dt": _VT.VT_LIST_DATA_TYPE}.get(populated[0], _VT.VT_LIST_NONE)
    if vt == _VT.VT_LIST_STRING:
        return [v.decode("utf-8", "surrogateescape") for v in lst.s]
    if vt == _VT.VT_LIST_INT:
        return [int(v) for v in lst.i]
    if vt == _VT.VT_LIST_FLOAT:
        return [_float32(v) for v in lst.f]
    if vt == _VT.VT_LIST_BOOL:
        return [bool(v) for v in lst.b]
    if vt == _VT.VT_LIST_BYTES:
        return [bytes(v) for v in lst.bt]
    if vt == _VT.VT_LIST_TENSOR_DESC:
        return [_decode_desc(d, where=where) for d in lst.td]
    if vt == _VT.VT_LIST_DATA_TYPE:
        try:
            return [DataType(v) for v in lst.dt]
        except ValueError:
            return _opaque(msg)
    if vt == _VT.VT_LIST_TENSOR:
        values = [_decode_tensor(t, where=where) for t in lst.t]
        return _opaque(msg) if any(v is None for v in values) else values
    return _opaque(msg)  # lists of graphs / NamedAttrs


def _schema_info(op_type: str) -> tuple[dict[str, Any], list[str]]:
    """The derived IR-metadata attrs and the attr order of an op type (schemas are fixed while decoding)."""
    schema = _schema(op_type)
    return _schema_attrs(schema), [a.name for a in schema.attrs] if schema is not None else []


@dataclasses.dataclass(slots=True)
class _PendingEdge:
    src: str
    src_port: int
    dst: ir.Node
    dst_port: int  # -1 for a control edge
    peer_index: int
    order: int


def _split_input(entry: str) -> tuple[str, int] | None:
    """Split ``"name:port"`` at the last colon; None for an empty entry (unfed anchor)."""
    if entry == "":
        return None
    name, sep, port = entry.rpartition(":")
    if not sep or not port.lstrip("-").isdigit():
        raise ValueError(f"input entry {entry!r} is not '<node>:<port>'")
    return name, int(port)


def decode_model(model: pb.ModelDef, *, source: str, locate: Any = None,
                 bodies: Sequence[tuple[Any, Any]] | None = None) -> ir.Graph:
    """Rebuild the IR root graph (with its subgraphs) from a ModelDef.

    Args:
        model: the parsed ModelDef.
        source: the file name used in error messages.
        locate: optional callable ``(graph_name, op_name) -> line number`` for error messages.
        bodies: per graph of ``model``, (its ops, their decode function) when ``model``'s graphs hold no ops
            (the dump reader's templates; see :func:`_decode_graph_body`).

    Raises:
        GeDumpError: the model has no graph, an input names a node that does not exist, a tensor is damaged,
            a subgraph is missing or the edges form a cycle. Nothing is returned in that case.

    Cost: O(nodes + edges + attribute bytes), with the collector's automatic passes paused (see
    :func:`gebench.ir.collector_paused`).
    """
    with ir.collector_paused():
        return _decode_model(model, source=source, locate=locate, bodies=bodies)


def _decode_model(model: pb.ModelDef, *, source: str, locate: Any,
                  bodies: Sequence[tuple[Any, Any]] | None = None) -> ir.Graph:
    """``bodies``: per graph of ``model``, its ops and their decode function (see :func:`_decode_graph_body`),
    when the graphs of ``model`` hold no ops (the dump reader's fast path)."""
    if not model.graph:
        raise GeDumpError(f"{source}: the ModelDef holds no graph; is this a GE dump of a graph?")

    def at(graph_name: str, op_name: str | None = None) -> str:
        # Names only: the file line is looked up when an error is raised (see _located).
        return f"graph {graph_name!r}" + (f" op {op_name!r}" if op_name is not None else "")

    def located(graph_name: str, op_name: str | None, exc: GeDumpError) -> GeDumpError:
        line = locate(graph_name, op_name) if locate is not None else None
        return GeDumpError(f"{source}:{line}: {exc}" if line else f"{source}: {exc}")

    if bodies is None:
        graphs = [_decode_graph(g, at, located) for g in model.graph]
    else:
        graphs = [_decode_graph(g, at, located, ops, decode) for g, (ops, decode) in zip(model.graph, bodies,
                                                                                        strict=True)]
    root = graphs[0]
    by_name = {g.name: g for g in graphs[1:]}
    for opt in OPTION_ATTRS:
        value = root.attrs.get(opt)
        if isinstance(value, OpaqueAttr) and value.kind == "func":
            del root.attrs[opt]
    parents: dict[str, ir.Node] = {}
    for graph in graphs:
        for node in graph.nodes():
            for sub_name in node.subgraph_names:
                if sub_name not in by_name:
                    raise located(graph.name, node.name, GeDumpError(
                        f"{at(graph.name, node.name)}: subgraph {sub_name!r} is not in the file"))
                if sub_name in parents:
                    raise located(graph.name, node.name, GeDumpError(
                        f"{at(graph.name, node.name)}: subgraph {sub_name!r} also belongs to "
                        f"{parents[sub_name].name!r}; a subgraph has one parent"))
                parents[sub_name] = node
    if len(by_name) != len(graphs) - 1:
        raise GeDumpError(f"{source}: two graphs of the file have the same name")
    for sub in graphs[1:]:  # file order, so a second dump lists them in the same order
        parent = parents.get(sub.name)
        if parent is None:
            _log.warning("%s: subgraph %r has no parent node; attached to the root graph", source, sub.name)
        root.add_subgraph(sub, parent_node=parent)
    return root


def _decode_graph(msg: pb.GraphDef, at: Any, located: Any, ops: Any = None, decode: Any = None) -> ir.Graph:
    """Decode one GraphDef; an error gets the file line of the op being decoded (looked up only then)."""
    current: list[str | None] = [None]
    try:
        return _decode_graph_body(msg, at, current, ops, decode)
    except GeDumpError as exc:
        raise located(msg.name, current[0], exc) from None


@dataclasses.dataclass(slots=True)
class DecodedOp:
    """One OpDef decoded into what its IR node is made of (:func:`decode_op`); the graph adds it."""

    attrs: dict[str, Any]
    inputs: list[TensorDesc]
    outputs: list[TensorDesc]
    input_names: list[str]
    output_names: list[str]
    #: (source name, source port, input port or -1 for control, peer index) per input entry with a source
    edges: list[tuple[str, int, int, int]]
    subgraph_names: list[str]


def decode_op(op: pb.OpDef, schema_info: dict[str, tuple[dict[str, Any], list[str]]], where: str) -> DecodedOp:
    """Decode ``op`` (its name, type and id are the caller's). ``schema_info`` caches :func:`_schema_info` per
    op type across calls.

    Raises:
        GeDumpError: a malformed input entry, desc or attr value (the message starts with ``where``).
    """
    attrs = dict(op.attr)
    inputs = [_decode_desc(d, where=f"{where} input_desc[{i}]") for i, d in enumerate(op.input_desc)]
    outputs = [_decode_desc(d, where=f"{where} output_desc[{i}]") for i, d in enumerate(op.output_desc)]
    edges, data_inputs = _op_inputs(op, attrs, where)
    inputs.extend(TensorDesc() for _ in range(data_inputs - len(inputs)))
    in_names, out_names = _anchor_names(attrs, len(inputs), len(outputs))
    info = schema_info.get(op.type)
    if info is None:
        info = schema_info[op.type] = _schema_info(op.type)
    node_attrs = _op_attrs(attrs, info, where)
    return DecodedOp(node_attrs, inputs, outputs, in_names, out_names, edges, list(op.subgraph_name))


def _decode_graph_body(msg: pb.GraphDef, at: Any, current: list[str | None],
                       ops: Sequence[Any] | None = None, decode: Any = None) -> ir.Graph:
    """Build the graph of ``msg``. ``ops``/``decode``: the ops (anything with ``name``, ``type`` and ``id``) and
    ``decode(op, schema_info, where) -> DecodedOp``, when they do not come from ``msg.op`` (the dump reader's
    templates); ``msg`` then gives only the graph's name, outputs and attrs."""
    graph = ir.Graph(msg.name)
    schema_info: dict[str, tuple[dict[str, Any], list[str]]] = {}
    if ops is None:
        ops, decode = msg.op, decode_op
    ids = [op.id for op in ops]
    use_ids = len(set(ids)) == len(ids) and all(i >= 0 for i in ids)
    pending: list[_PendingEdge] = []
    for op in ops:
        current[0] = op.name
        where = at(msg.name, op.name)
        decoded = decode(op, schema_info, where)
        try:
            node = graph.add_node(op.type, name=op.name, attrs=decoded.attrs, inputs=decoded.inputs,
                                  outputs=decoded.outputs, input_names=decoded.input_names,
                                  output_names=decoded.output_names, node_id=op.id if use_ids else None)
        except ir.GraphError as exc:
            raise GeDumpError(f"{where}: {exc}") from None
        if decoded.subgraph_names:
            node.subgraph_names = decoded.subgraph_names
        base = len(pending)
        pending.extend(_PendingEdge(src, sp, node, dp, peer, base + k)
                       for k, (src, sp, dp, peer) in enumerate(decoded.edges))
    _connect(graph, pending, at, current)
    current[0] = None
    graph_attrs = {key: _decode_attr(msg.attr[key], where=f"{at(msg.name)} attr {key!r}") for key in msg.attr}
    declared = [str(o) for o in msg.output]
    derived_out = [f"{n.name}:{p}" for n, p in graph_outputs(graph)] if graph.nodes_of_type("NetOutput") else []
    if declared and declared != derived_out:
        for entry in declared:
            name, _, port = entry.rpartition(":")
            node = graph.find(name)
            if node is None or not port.isdigit() or int(port) >= node.num_outputs:
                raise GeDumpError(f"{at(msg.name)}: graph output {entry!r} names no node output")
        graph_attrs[GRAPH_OUTPUTS_ATTR] = declared
    graph.attrs.update({key: graph_attrs[key] for key in sorted(graph_attrs)})
    return graph


def _op_inputs(op: pb.OpDef, attrs: dict[str, pb.AttrDef], where: str) -> tuple[list[tuple[str, int, int, int]], int]:
    """The edges into ``op`` as (source name, source port, input port or -1, peer index) and its data input count.

    ``input`` lists one entry per input anchor (``""`` when unfed) and then ``"<src>:-1"`` per control edge.
    """
    return input_edges(op.input, peer_indexes(attrs), where)


def peer_indexes(attrs: dict[str, pb.AttrDef]) -> list[int]:
    """The ``_src_out_peer_index_for_ge_txt_load`` list of an op's attrs (empty without one)."""
    key = "_src_out_peer_index_for_ge_txt_load"
    return list(attrs[key].list.i) if key in attrs else []


def input_edges(entries: Sequence[str], peers: Sequence[int], where: str) -> tuple[list[tuple[str, int, int, int]], int]:
    """:func:`_op_inputs` for the ``input`` entries of an op and its peer index list."""
    if len(peers) != len(entries):
        peers = []  # GE's loader also falls back to file order when the list does not fit
    data_port = 0
    edges: list[tuple[str, int, int, int]] = []
    for k, entry in enumerate(entries):
        try:
            parsed = _split_input(entry)
        except ValueError as exc:
            raise GeDumpError(f"{where}: {exc}") from None
        if parsed is None:
            data_port += 1
            continue
        src, sp = parsed
        if sp < -1:
            raise GeDumpError(f"{where}: input {entry!r} has a negative port other than -1")
        edges.append((src, sp, -1 if sp == -1 else data_port, peers[k] if peers else -1))
        if sp != -1:
            data_port += 1
    return edges, data_port


def _anchor_names(attrs: dict[str, pb.AttrDef], n_inputs: int, n_outputs: int) -> tuple[list[str], list[str]]:
    """Input and output anchor names from the ``_input_name_*``/``_output_name_*`` maps (older names too)."""
    in_names = [""] * n_inputs
    out_names = [""] * n_outputs
    for keys, values, names in (("_input_name_key", "_input_name_value", in_names),
                                ("_input_name_idx_key", "_input_name_idx_value", in_names),
                                ("_output_name_key", "_output_name_value", out_names)):
        if keys in attrs and values in attrs:
            for name, idx in zip(attrs[keys].list.s, attrs[values].list.i, strict=False):
                if 0 <= idx < len(names) and not names[idx]:
                    names[idx] = name.decode("utf-8", "replace")
    return in_names, out_names


def _op_attrs(attrs: dict[str, pb.AttrDef], info: tuple[dict[str, Any], list[str]], where: str) -> dict[str, Any]:
    """The op's own attrs in schema order, then by name; IR metadata equal to the schema's is dropped."""
    node_attrs = {key: _decode_attr(attrs[key], where=f"{where} attr {key!r}")
                  for key in attrs if key not in _ANCHOR_NAME_KEYS}
    derived, order = info
    for key in _SCHEMA_KEYS:
        if key in node_attrs and key in derived and node_attrs[key] == derived[key]:
            del node_attrs[key]
    ir_names = node_attrs.get("_ir_attr_names")
    if isinstance(ir_names, list):
        order = [str(n) for n in ir_names]
    ordered = {k: node_attrs[k] for k in order if k in node_attrs}
    ordered.update({k: node_attrs[k] for k in sorted(node_attrs) if k not in ordered})
    return ordered


#: Most output anchors an input entry may imply for an op written without any ``output_desc``.
MAX_IMPLIED_OUTPUTS = 1 << 16


def _connect(graph: ir.Graph, pending: list[_PendingEdge], at: Any, current: list[str | None]) -> None:
    """Add the edges so that every output's use list comes out in the file's peer order.

    An input naming output ``k`` of an op that has ``output_desc`` entries must have ``k`` below their count; an
    op written without any ``output_desc`` gets anchors on demand (at most :data:`MAX_IMPLIED_OUTPUTS`).
    """
    pending.sort(key=_edge_order)
    descless = {n.id for n in graph.nodes() if n.num_outputs == 0}
    find = graph.find
    for edge in pending:
        src = find(edge.src)
        dst = edge.dst
        current[0] = dst._name
        src_port = edge.src_port
        if src is None:
            raise GeDumpError(f"{at(graph.name, dst.name)}: input {edge.src}:{src_port} names no node of graph "
                              f"{graph.name!r}")
        if src_port >= len(src.outputs) and (src.id not in descless or src_port >= MAX_IMPLIED_OUTPUTS):
            count = (f"it has {src.num_outputs} output_desc entr{'y' if src.num_outputs == 1 else 'ies'}"
                     if src.id not in descless else f"an op without output_desc may imply at most "
                     f"{MAX_IMPLIED_OUTPUTS} outputs")
            raise GeDumpError(f"{at(graph.name, dst.name)}: input {edge.src}:{src_port} names output {src_port} of "
                              f"{edge.src!r} ({src.op_type}), but {count}; fix the port or add the op's "
                              "output_desc entries")
        try:
            if edge.dst_port == -1:
                graph.add_control_edge(src, dst)
            else:
                while len(src.outputs) <= src_port:
                    graph.add_output_anchor(src)  # an op written without output_desc: anchors on demand
                graph.add_edge(src, src_port, dst, edge.dst_port)
        except ir.GraphError as exc:
            raise GeDumpError(f"{at(graph.name, dst.name)}: {exc}") from None


def _edge_order(edge: _PendingEdge) -> tuple[bool, int, int]:
    """Edges with a peer index first, by it (the use order the file gives), then the others in file order."""
    return edge.peer_index < 0, edge.peer_index, edge.order
