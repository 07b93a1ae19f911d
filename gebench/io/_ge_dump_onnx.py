"""The ``ge_onnx_*.pbtxt`` writer: GE's ONNX-shaped dump for Netron (spec ge-dump-format §5).

The format is lossy by design (no subgraph linkage, no dt/NamedAttrs/bytes attrs, strings only at level 1,
no attributes at all at level 3), so gebench writes it but never reads it back; import ge_proto dumps instead.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from gebench import ir
from gebench.ir import DataType, TensorDesc, TensorValue

from ._ge_dump_codec import (
    OpaqueAttr,
    _all_subgraphs,
    dtype_serial_string,
    format_string,
    graph_outputs,
    proto_dtype,
)
from ._ge_dump_env import DumpLevel
from .proto import ge_ir_pb2
from .proto import ge_onnx_pb2 as onnx_pb

__all__ = ["encode_onnx_model", "ONNX_ELEM_TYPE"]

_AT = onnx_pb.AttributeProto
#: GE data type -> ONNX TensorProto elem_type (GE's kGeDataTypeToOnnxMap; others give 0).
ONNX_ELEM_TYPE = {
    DataType.DT_FLOAT: 1, DataType.DT_UINT8: 2, DataType.DT_INT8: 3, DataType.DT_UINT16: 4, DataType.DT_INT16: 5,
    DataType.DT_INT32: 6, DataType.DT_INT64: 7, DataType.DT_STRING: 8, DataType.DT_BOOL: 9,
    DataType.DT_FLOAT16: 10, DataType.DT_DOUBLE: 11, DataType.DT_UINT32: 12, DataType.DT_UINT64: 13,
    DataType.DT_COMPLEX64: 14, DataType.DT_COMPLEX128: 15, DataType.DT_BF16: 16,
}
#: GE writes one JSON string per tensor desc when a node has at least this many inputs or outputs.
_STRUCTURED_THRESHOLD = 20
_EMPTY_INTS = ("src_index", "dst_index", "input_i", "output_i", "workspace", "workspace_bytes", "is_input_const")
_EMPTY_STRINGS = ("input_name", "src_name", "dst_name")


def encode_onnx_model(graph: ir.Graph, level: DumpLevel, *, producer_name: str = "GE") -> onnx_pb.ModelProto:
    """Encode ``graph`` as GE's ge_onnx ModelProto at DUMP_GE_GRAPH ``level``. O(nodes + edges + attrs)."""
    graph = ir.as_graph(graph)
    model = onnx_pb.ModelProto(ir_version=6, producer_name=producer_name)
    _encode_graph(graph, model.graph, level, root=True)
    for sub in _all_subgraphs(graph):
        node = model.graph.node.add(name=sub.name, op_type="subgraph")
        attr = node.attribute.add(name="graph", type=_AT.GRAPH)
        _encode_graph(sub, attr.g, level, root=False)
    return model


def _encode_graph(graph: ir.Graph, msg: onnx_pb.GraphProto, level: DumpLevel, *, root: bool) -> None:
    for node in graph.nodes():
        _encode_node(graph, node, msg.node.add(), level)
    _encode_graph_shell(graph, msg, root=root)


def _encode_graph_shell(graph: ir.Graph, msg: onnx_pb.GraphProto, *, root: bool) -> None:
    """The graph's fields other than its nodes: name, Data inputs (subgraphs only) and outputs."""
    msg.name = graph.name
    if not root:
        for node in graph.nodes_of_type("Data"):
            msg.input.append(_value_info(node, [0]))
    seen: dict[int, list[int]] = {}
    for node, port in graph_outputs(graph):
        seen.setdefault(node.id, []).append(port)
    for node_id in seen:
        msg.output.append(_value_info(graph.node(node_id), list(range(graph.node(node_id).num_outputs))))


def _value_info(node: ir.Node, ports: list[int]) -> onnx_pb.ValueInfoProto:
    info = onnx_pb.ValueInfoProto(name=node.name)
    tensor = info.type.tensor_type
    tensor.SetInParent()
    for port in ports:
        if port >= node.num_outputs:
            continue
        desc = node.outputs[port]
        tensor.elem_type = ONNX_ELEM_TYPE.get(desc.dtype, 0)
        shape = tensor.shape
        shape.SetInParent()
        for dim in desc.shape:  # GE appends the dims of every output to one shape
            shape.dim.add(dim_value=dim)
    return info


def _encode_node(graph: ir.Graph, node: ir.Node, msg: onnx_pb.NodeProto, level: DumpLevel) -> None:
    for prod in graph.producers(node):
        msg.input.append("" if prod is None else f"{prod[0].name}:{prod[1]}")
    for src in sorted(graph.control_predecessors(node), key=graph.position):
        msg.input.append(f"{src.name}:-1")
    for port in range(node.num_outputs):
        if graph.num_uses(node, port):
            msg.output.append(f"{node.name}:{port}")
    if graph.control_successors(node):
        msg.output.append(f"{node.name}:-1")
    msg.name = node.name
    msg.op_type = "ge:" + node.op_type
    if level >= DumpLevel.DUMP_WITH_OUT_DESC:
        return
    full = level == DumpLevel.DUMP_ALL
    field = msg.attribute

    def add(name: str, kind: int, value: Any = None) -> None:
        _add_attr(field, name, kind, value)

    add("id", _AT.INT, node.id)
    add("stream_id", _AT.INT, 0)
    for key in _EMPTY_STRINGS:
        add(key, _AT.STRINGS)
    for key in _EMPTY_INTS:
        add(key, _AT.INTS)
    named = sorted((name, i) for i, name in enumerate(node.input_names) if name)
    if named:
        add("_input_name_key", _AT.STRINGS, [n for n, _ in named])
        add("_input_name_value", _AT.INTS, [i for _, i in named])
    add("input_desc_nums", _AT.INT, node.num_inputs)
    add("output_desc_nums", _AT.INT, node.num_outputs)
    structured = node.num_inputs >= _STRUCTURED_THRESHOLD or node.num_outputs >= _STRUCTURED_THRESHOLD
    for prefix, descs in (("input_desc", node.inputs), ("output_desc", node.outputs)):
        for i, desc in enumerate(descs):
            if not structured and not desc.has_attrs:
                msg.MergeFromString(_plain_desc_attr_bytes(prefix, i, desc.dtype, desc.shape, desc.format,
                                                           desc.origin_format, desc.origin_shape, desc.origin_dtype,
                                                           full))
                continue
            entries = _desc_entries(desc, full)
            if structured:
                add(f"{prefix}_{i}", _AT.STRING, json.dumps({k: v for k, (_, v) in entries.items()}, sort_keys=True))
            else:
                for key, (kind, value) in entries.items():
                    add(f"{prefix}_{key}:{i}", kind, value)
    for key, value in node.attrs.items():
        for name, kind, encoded in _op_attr_entries(key, value, full):
            add(name, kind, encoded)
    field.sort(key=_attr_name)


def _attr_name(attr: onnx_pb.AttributeProto) -> str:
    return attr.name


def _add_attr(field: Any, name: str, kind: int, value: Any = None) -> None:
    attr = field.add(name=name, type=kind)
    if value is None:
        return
    if kind == _AT.INT:
        attr.i = int(value)
    elif kind == _AT.FLOAT:
        attr.f = float(value)
    elif kind == _AT.STRING:
        attr.s = value if isinstance(value, bytes) else str(value).encode("utf-8", "surrogateescape")
    elif kind == _AT.INTS:
        attr.ints.extend(int(v) for v in value)
    elif kind == _AT.FLOATS:
        attr.floats.extend(float(v) for v in value)
    elif kind == _AT.STRINGS:
        attr.strings.extend(str(v).encode("utf-8", "surrogateescape") for v in value)


@functools.lru_cache(maxsize=8192)
def _plain_desc_attr_bytes(prefix: str, index: int, dtype: DataType, shape: tuple[int, ...], fmt: Any,
                           origin_format: Any, origin_shape: tuple[int, ...], origin_dtype: DataType | None,
                           full: bool) -> bytes:
    """The serialized attributes of one attr-less tensor desc (descs repeat, so each is encoded once)."""
    holder = onnx_pb.NodeProto()
    desc = TensorDesc(dtype=dtype, shape=shape, format=fmt, origin_format=origin_format, origin_shape=origin_shape,
                      origin_dtype=origin_dtype)
    for key, (kind, value) in _desc_entries(desc, full).items():
        _add_attr(holder.attribute, f"{prefix}_{key}:{index}", kind, value)
    return holder.SerializeToString()


def _desc_entries(desc: TensorDesc, full: bool) -> dict[str, tuple[int, Any]]:
    origin = desc.origin_dtype if desc.origin_dtype is not None else DataType.DT_UNDEFINED
    entries: dict[str, tuple[int, Any]] = {
        "dtype": (_AT.STRING, dtype_serial_string(desc.dtype)),
        "origin_dtype": (_AT.STRING, dtype_serial_string(origin)),
        "shape": (_AT.INTS, list(desc.shape)),
        "origin_shape": (_AT.INTS, list(desc.origin_shape)),
        "layout": (_AT.STRING, format_string(desc.format)),
        "origin_layout": (_AT.STRING, format_string(desc.origin_format)),
        "size": (_AT.INT, 0),
        "weight_size": (_AT.INT, 0),
        "reuse_input": (_AT.INT, 0),
        "output_tensor": (_AT.INT, 0),
        "device_type": (_AT.STRING, "NPU"),
        "input_tensor": (_AT.INT, 0),
        "real_dim_cnt": (_AT.INT, len(desc.shape)),
        "data_offset": (_AT.INT, 0),
        "cmps_size": (_AT.INT, 0),
        "cmps_tab": (_AT.STRING, ""),
        "cmps_tab_offset": (_AT.INT, 0),
    }
    for key, value in desc.attr_items():
        for name, kind, encoded in _op_attr_entries(key, value, full):
            entries[f"attr_{name}"] = (kind, encoded)
    return entries


def _op_attr_entries(name: str, value: Any, full: bool) -> list[tuple[str, int, Any]]:
    """The ONNX attributes one GE attr becomes (none for the kinds GE leaves out)."""
    if isinstance(value, OpaqueAttr) or isinstance(value, (bytes, DataType, TensorDesc)):
        return []  # dt, NamedAttrs, graphs, bytes, expressions, descs: not emitted by GE
    if isinstance(value, bool):
        return [(name, _AT.INT, int(value))]
    if isinstance(value, int):
        return [(name, _AT.INT, value)]
    if isinstance(value, float):
        return [(name, _AT.FLOAT, value)]
    if isinstance(value, str):
        return [(name, _AT.STRING, value)] if full else []
    if isinstance(value, TensorValue):
        out: list[tuple[str, int, Any]] = [
            (f"{name}_desc_dtype", _AT.STRING, ge_ir_pb2.DataType.Name(proto_dtype(value.dtype))),
            (f"{name}_desc_shape", _AT.INTS, list(value.shape)),
            (f"{name}_desc_layout", _AT.STRING, format_string(value.format)),
            (f"{name}_desc_device_type", _AT.STRING, "NPU"),
        ]
        if full:
            out.append((f"{name}_data", _AT.STRING, value.to_bytes()))
        return out
    if isinstance(value, (list, tuple)):
        if not value:
            return [(name, _AT.INTS, [])]
        if all(isinstance(v, (list, tuple)) for v in value):
            if all(isinstance(x, int) for v in value for x in v):
                return [(f"{name}_{i}", _AT.INTS, list(v)) for i, v in enumerate(value)]
            return []
        if all(isinstance(v, bool) for v in value):
            return [(name, _AT.INTS, [int(v) for v in value])]
        if any(isinstance(v, (DataType, TensorValue, TensorDesc, bytes)) for v in value):
            return []
        if all(isinstance(v, int) for v in value):
            return [(name, _AT.INTS, list(value))]
        if all(isinstance(v, (int, float)) for v in value):
            return [(name, _AT.FLOATS, list(value))]
        if all(isinstance(v, str) for v in value):
            return [(name, _AT.STRINGS, list(value))] if full else []
    return []
