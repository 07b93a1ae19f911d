"""The text of ``ge_proto`` and ``ge_onnx`` dumps, written piece by piece: the same bytes as protobuf's printer
gives for the encoded model (:func:`~gebench.io._ge_dump_codec.encode_model` /
:func:`~gebench.io._ge_dump_onnx.encode_onnx_model` then ``str()``), without building that model.

A dump repeats itself: every node of an op type carries the same schema attrs, most descs are equal, most peer
index lists are ``[0]``. Each such piece (an ``attr`` entry, an ``input_desc`` block, an ONNX ``attribute``) is
encoded and printed once, by the encoders and protobuf's printer themselves, in a one-field holder message,
and its text is reused for every node that has the same content. What is unique per node (names, input
entries, ids, tensor bytes) is formatted directly with protobuf's escaping rules (:func:`string_literal`,
:func:`bytes_literal`); a node with anything else (a desc with attrs, an attr value not keyed here) is encoded
and printed whole, as before. The text comes as a stream of chunks, so a file is written without ever holding
the whole text (or the whole message) in memory.

Invariant: ``"".join(ge_proto_chunks(g, options)) == model_text(encode_model(g, options))`` and
``"".join(ge_onnx_chunks(g, level)) == str(encode_onnx_model(g, level))`` for every graph, errors included
(the same ``GeDumpError`` for the same first offending value). Cost: O(nodes + edges + attr sizes), with
per-node work of a few string joins.
"""

from __future__ import annotations

import json
import operator
import re
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from gebench import ir
from gebench.ir import DataType, TensorDesc, TensorValue

from . import _ge_dump_codec as codec
from . import _ge_dump_onnx as onnx_codec
from ._ge_dump_env import DumpLevel
from .proto import ge_onnx_pb2 as onnx_pb

__all__ = ["bytes_literal", "string_literal", "ge_proto_chunks", "ge_onnx_chunks"]


# ------------------------------------------------------------------------------------------------ escaping
def _byte_escape(b: int) -> str:
    named = {0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t", 0x22: '\\"', 0x27: "\\'", 0x5C: "\\\\"}
    if b in named:
        return named[b]
    return chr(b) if 0x20 <= b < 0x7F else f"\\{b:03o}"


#: str.translate tables: protobuf's text printer escapes ``\n \r \t " ' \`` by name and every other byte
#: outside printable ASCII as three octal digits; a string field keeps its UTF-8 characters above ASCII as
#: they are.
_BYTES_TABLE = {b: _byte_escape(b) for b in range(256) if _byte_escape(b) != chr(b)}
_STRING_TABLE = {b: esc for b, esc in _BYTES_TABLE.items() if b < 0x80}


#: The escape of every byte as a NUL-padded 4-byte string (escapes hold no NUL).
_ESCAPES_S4 = np.array([_byte_escape(b).encode("ascii") for b in range(256)], dtype="S4")
#: Below this many bytes str.translate is quicker than the vectorised escape.
_VECTOR_MIN = 48
_NEEDS_ESCAPE = re.compile(r"[\x00-\x1f\"'\\\x7f]")


def bytes_literal(data: bytes) -> str:
    """The body of the quoted literal protobuf's printer writes for a ``bytes`` field. O(len) in C (numpy)."""
    if len(data) < _VECTOR_MIN:
        return data.decode("latin-1").translate(_BYTES_TABLE)
    return _ESCAPES_S4[np.frombuffer(data, np.uint8)].tobytes().replace(b"\0", b"").decode("ascii")


def string_literal(text: str) -> str:
    """The body of the quoted literal protobuf's printer writes for a ``string`` field. O(len) in C."""
    if _NEEDS_ESCAPE.search(text) is None:
        return text
    return text.translate(_STRING_TABLE)


def _indent(text: str, spaces: int) -> str:
    """``text`` (lines ending in ``\\n``) with every line indented. Escaped literals hold no raw newline."""
    if not text:
        return text
    pad = " " * spaces
    return pad + text[:-1].replace("\n", "\n" + pad) + "\n"


def _split_at_line(text: str, line: str) -> tuple[str, str]:
    """(text before ``line``, text after it); ``line`` must occur exactly once."""
    pos = text.index(line)
    if text.find(line, pos + 1) >= 0:
        raise AssertionError(f"marker line {line!r} printed twice")
    return text[:pos], text[pos + len(line):]


def _value_key(value: Any) -> tuple | None:
    """A hashable key that is equal only for attr values that encode to the same text (the type is part of it:
    ``True``, ``1`` and ``1.0`` are equal in Python but not in a dump), or None for values not keyed here."""
    kind = type(value)
    if kind is bool:
        return ("b", value)
    if kind is int:
        return ("i", value)
    if kind is float:
        return ("f", repr(value))  # -0.0 and 0.0 differ; NaNs print alike
    if kind is str:
        return ("s", value)
    if kind is DataType:
        return ("dt", int(value))
    if kind is bytes:
        return ("bt", value)
    if kind is codec.OpaqueAttr:
        return ("op", bytes(value))
    if kind is TensorDesc:
        return None if value.attrs else ("td", *_desc_key(value))
    if kind is list or kind is tuple:
        items = []
        for item in value:
            key = _value_key(item)
            if key is None:
                return None
            items.append(key)
        return ("l", tuple(items))
    return None


def _desc_key(desc: TensorDesc) -> tuple:
    return (desc.dtype, desc.shape, desc.format, desc.origin_format, desc.origin_shape, desc.origin_dtype)


_by_key = operator.itemgetter(0)

#: Marks where a template takes the node's id.
_ID_SLOT = object()


class _Strings:
    """Where a template takes the values of an attr holding a string or a list of strings (per-node names, as in
    ``_datadump_original_op_names``): one line ``<prefix><literal>"`` per value, the text around it from the
    template's printed frame."""

    __slots__ = ("index", "prefix", "skip_empty")

    def __init__(self, index: int, prefix: str, skip_empty: bool) -> None:
        self.index = index  # among the node's string-valued attrs, in attr order
        self.prefix = prefix
        self.skip_empty = skip_empty  # a proto3 field that is not printed when empty

    def lines(self, values: list[str]) -> list[str]:
        out = []
        for value in values:
            encoded = value.encode("utf-8", "surrogateescape")
            if encoded or not self.skip_empty:
                out.append(f'{self.prefix}{bytes_literal(encoded)}"\n')
        return out


def _fill(parts: list[str], pieces: list[Any], tensors: list[TensorValue], strings: list[list[str]], node_id: int,
          id_prefix: str, data_prefix: str) -> None:
    """Append a template's pieces to ``parts`` with its open slots filled: the node id (``id_prefix`` + id, left out
    for id 0), each tensor's bytes (``data_prefix`` + literal, left out when empty) and each string slot. O(pieces)."""
    for piece in pieces:
        if type(piece) is str:
            parts.append(piece)
        elif piece is _ID_SLOT:
            if node_id:
                parts.append(f"{id_prefix}{node_id}\n")
        elif type(piece) is int:
            data = tensors[piece].to_bytes()
            if data:
                parts.append(f'{data_prefix}"{bytes_literal(data)}"\n')
        else:
            parts.extend(piece.lines(strings[piece.index]))


def _attr_signature(attrs: dict[str, Any], signature: list[Any], tensors: list[TensorValue],
                    strings: list[list[str]], *, with_origin_format: bool) -> bool:
    """Append each attr's name and value key to ``signature``, its TensorValue to ``tensors`` and its strings to
    ``strings`` (the parts a template leaves open); False when some value is not keyed here. A TensorValue is keyed
    by dtype, shape and format (and origin format with ``with_origin_format``). O(attrs)."""
    for key, value in attrs.items():
        values = _string_values(value)
        if values is not None:
            vkey: tuple | None = ("str", type(value) is str)
            strings.append(values)
        else:
            vkey = _value_key(value)
            if vkey is None:
                if type(value) is not TensorValue:
                    return False
                vkey = (("tv", value.dtype, value.shape, value.format, value.origin_format) if with_origin_format
                        else ("tv", value.dtype, value.shape, value.format))
                tensors.append(value)
        signature.append(key)
        signature.append(vkey)
    return True


def _string_values(value: Any) -> list[str] | None:
    """The strings of an attr value that is a string or a non-empty list of strings, else None."""
    if type(value) is str:
        return [value]
    if (type(value) is list or type(value) is tuple) and value and all(type(v) is str for v in value):
        return list(value)
    return None


def _marker_frame(text: str) -> tuple[str, str, str]:
    """(text before, text after, the line's prefix up to the literal) around the one line holding the literal
    ``"\\001"`` of a holder printed with a marker value."""
    at = text.index('"\\001"\n')
    start = text.rindex("\n", 0, at) + 1
    if text.find('"\\001"\n', at + 1) >= 0:
        raise AssertionError("marker printed twice")
    return text[:start], text[at + len('"\\001"\n'):], text[start:at + 1]


def _merge_text(pieces: list[Any]) -> list[Any]:
    """Join neighbouring strings of a template (slots stay)."""
    out: list[Any] = []
    for piece in pieces:
        if type(piece) is str and out and type(out[-1]) is str:
            out[-1] += piece
        else:
            out.append(piece)
    return out


# ------------------------------------------------------------------------------------------------ ge_proto
def _ordered_class(path: Callable[[Any], Any]) -> type:
    return type(path(codec._OrderedModelDef()))


_OpDef = _ordered_class(lambda m: m.graph.add().op.add())
_GraphDef = _ordered_class(lambda m: m.graph.add())


class _ProtoText:
    """Pieces of one ``ge_proto`` dump (caches live as long as one dump)."""

    def __init__(self, options: codec.EncodeOptions, advance: Callable[[int], None]) -> None:
        self.options = options
        self._advance = advance
        self._attrs: dict[tuple, str] = {}
        self._descs: dict[tuple, str] = {}
        self._tensors: dict[tuple, tuple[str, str]] = {}
        self._types: dict[str, tuple[dict[str, str], list[tuple[str, int, tuple]]]] = {}
        self._bodies: dict[tuple, list[Any]] = {}
        self._strings: dict[tuple[str, bool], tuple[str, str, str]] = {}

    def chunks(self, graph: ir.Graph, model_name: str) -> Iterator[str]:
        if model_name:
            yield f'name: "{string_literal(model_name)}"\n'
        for g in (graph, *codec._all_subgraphs(graph)):
            yield from self._graph(g, root=g is graph)
        model = codec._OrderedModelDef()
        codec._encode_model_attrs(model)
        yield codec.model_text(model)

    # ---- graphs
    def _graph(self, graph: ir.Graph, *, root: bool) -> Iterator[str]:
        yield "graph {\n"
        nodes = graph.nodes()
        literal = {node.id: string_literal(node._name) for node in nodes}
        head = []
        if graph.name:
            head.append(f'  name: "{string_literal(graph.name)}"\n')
        for node in nodes:
            if node._op_type in codec.DATA_TYPES:
                head.append(f'  input: "{literal[node.id]}:0"\n')
        for node, port in codec.graph_outputs(graph):
            head.append(f'  output: "{literal[node.id]}:{port}"\n')
        yield "".join(head)
        peers: dict[tuple[int, int], int] = {}
        control_peers: dict[tuple[int, int], int] = {}
        for node in nodes:
            for uses in graph.output_uses(node):
                for i, use in enumerate(uses):
                    peers[use] = i
            successors = graph.control_successors(node)
            if successors:
                for i, succ in enumerate(sorted(successors, key=graph.position)):
                    control_peers[(node.id, succ.id)] = i
        batch: list[str] = []
        for node in nodes:
            text = self._op(graph, node, literal, peers, control_peers)
            if text is None:
                holder = _OpDef()
                codec._encode_node(graph, node, holder, self.options, peers, control_peers)
                text = "  op {\n" + _indent(codec.model_text(holder), 4) + "  }\n"
            batch.append(text)
            if len(batch) >= 256:
                self._advance(len(batch))
                yield "".join(batch)
                batch = []
        self._advance(len(batch))
        yield "".join(batch)
        shell = _GraphDef()
        codec._encode_graph_attrs(graph, shell, self.options, root=root)
        yield _indent(codec.model_text(shell), 2) + "}\n"

    # ---- ops
    def _op(self, graph: ir.Graph, node: ir.Node, literal: dict[int, str], peers: dict[tuple[int, int], int],
            control_peers: dict[tuple[int, int], int]) -> str | None:
        """The ``op`` block of ``node``, or None when a part of it is not handled here (then it is printed whole).

        The lines unique to the node (name, inputs) are formatted here; the rest comes from a template cached by
        the node's signature (op type, anchor names, attr values, peer indexes, descs), with slots for the id and
        for tensor bytes."""
        parts = ["  op {\n"]
        if node._name:
            parts.append(f'    name: "{literal[node.id]}"\n')
        op_type = node._op_type
        if op_type:
            parts.append(f'    type: "{string_literal(op_type)}"\n')
        node_id = node.id
        peer_index: list[int] = []
        port = 0
        for prod in graph.producers(node):
            if prod is None:
                parts.append('    input: ""\n')
                peer_index.append(-1)
            else:
                parts.append(f'    input: "{literal[prod[0].id]}:{prod[1]}"\n')
                peer_index.append(peers[(node_id, port)])
            port += 1
        predecessors = graph.control_predecessors(node)
        if predecessors:
            for src in sorted(predecessors, key=graph.position):
                parts.append(f'    input: "{literal[src.id]}:-1"\n')
                peer_index.append(control_peers[(src.id, node_id)])
        signature: list[Any] = [op_type, tuple(node.input_names), tuple(node.output_names), tuple(peer_index),
                                tuple(node.subgraph_names)]
        tensors: list[TensorValue] = []
        strings: list[list[str]] = []
        if not _attr_signature(node.attrs, signature, tensors, strings, with_origin_format=True):
            return None
        signature.append(None)  # attrs end, descs follow
        for desc in node.inputs:
            if desc.has_attrs:
                return None
            signature.append(desc.dtype)
            signature.append(desc.shape)
            signature.append((desc.format, desc.origin_format, desc.origin_shape, desc.origin_dtype))
        signature.append(None)
        for desc in node.outputs:
            if desc.has_attrs:
                return None
            signature.append(desc.dtype)
            signature.append(desc.shape)
            signature.append((desc.format, desc.origin_format, desc.origin_shape, desc.origin_dtype))
        key = tuple(signature)
        template = self._bodies.get(key)
        if template is None:
            template = self._bodies[key] = self._body(graph, node, peer_index)
        _fill(parts, template, tensors, strings, node_id, "    id: ", "          data: ")
        return "".join(parts)

    def _body(self, graph: ir.Graph, node: ir.Node, peer_index: list[int]) -> list[Any]:
        """The template of an op block after its input lines: text pieces, :data:`_ID_SLOT` and tensor slots
        (the index of the tensor among the node's TensorValue attrs, for its ``data`` line)."""
        op_type = node._op_type
        type_info = self._types.get(op_type)
        if type_info is None:
            type_info = self._types[op_type] = self._type_info(op_type)
        hints, schema_reserved = type_info
        options = self.options
        attrs = node.attrs
        entries: list[tuple[str, list[Any]]] = []
        n_tensors = 0
        n_strings = 0
        for key, value in attrs.items():
            if _string_values(value) is not None:
                if (not options.framework_defs and key in codec.FRAMEWORK_DEF_ATTRS) or (
                        not options.const_values and key == "value" and op_type in codec.CONST_TYPES):
                    n_strings += 1
                    continue
                before, after, prefix = self._string_frame(key, type(value) is str)
                entries.append((key, [before, _Strings(n_strings, prefix, False), after]))
                n_strings += 1
                continue
            is_tensor = type(value) is TensorValue
            if not options.framework_defs and key in codec.FRAMEWORK_DEF_ATTRS:
                n_tensors += is_tensor
                continue
            if not options.const_values and key == "value" and op_type in codec.CONST_TYPES:
                n_tensors += is_tensor
                continue
            if is_tensor:
                before, after = self._tensor_frame(key, value)
                entries.append((key, [before, n_tensors, after]))
                n_tensors += 1
            else:
                entries.append((key, [self._attr(graph, node, key, value, hints.get(key))]))
        reserved: list[tuple[str, int, tuple]] = []
        named_in = [(n, i) for i, n in enumerate(node.input_names) if n]
        if named_in:
            reserved.append(("_input_name_key", _VT_STRING, tuple(n for n, _ in named_in)))
            reserved.append(("_input_name_value", _VT_INT, tuple(i for _, i in named_in)))
        named_out = [(n, i) for i, n in enumerate(node.output_names) if n]
        if named_out:
            reserved.append(("_output_name_key", _VT_STRING, tuple(n for n, _ in named_out)))
            reserved.append(("_output_name_value", _VT_INT, tuple(i for _, i in named_out)))
        reserved.extend(schema_reserved)
        if options.peer_index:
            reserved.append(("_src_out_peer_index_for_ge_txt_load", _VT_INT, tuple(peer_index)))
        for key, vt, values in reserved:
            if key not in attrs:
                entries.append((key, [self._reserved(key, vt, values)]))
        entries.sort(key=_by_key)
        pieces: list[Any] = [piece for _, entry in entries for piece in entry]
        pieces.append(_ID_SLOT)
        for desc in node.inputs:
            pieces.append(self._desc("input_desc", desc))
        for desc in node.outputs:
            pieces.append(self._desc("output_desc", desc))
        for sub in node.subgraph_names:
            pieces.append(f'    subgraph_name: "{string_literal(sub)}"\n')
        pieces.append("  }\n")
        return _merge_text(pieces)

    def _type_info(self, op_type: str) -> tuple[dict[str, str], list[tuple[str, int, tuple]]]:
        schema = codec._schema(op_type)
        hints = {a.name: a.type for a in schema.attrs} if schema is not None else {}
        reserved = [(key, _VT_INT if key.endswith("_value") else _VT_STRING, tuple(values))
                    for key, values in codec._schema_attrs(schema).items()]
        return hints, reserved

    def _attr(self, graph: ir.Graph, node: ir.Node, key: str, value: Any, hint: str | None) -> str:
        """An attr entry of a value :func:`_value_key` keys."""
        cache_key = (key, hint, _value_key(value))
        text = self._attrs.get(cache_key)
        if text is None:
            holder = _OpDef()
            entry = holder.attr.add()
            entry.key = key
            codec._encode_attr_into(entry.value, value, hint,
                                    where=f"graph {graph.name!r} node {node.name!r} ({node.op_type}) attr {key!r}")
            text = self._attrs[cache_key] = _indent(codec.model_text(holder), 4)
        return text

    def _reserved(self, key: str, vt: int, values: tuple) -> str:
        cache_key = (key, vt, values)
        text = self._attrs.get(cache_key)
        if text is None:
            holder = _OpDef()
            entry = holder.attr.add()
            entry.key = key
            lst = entry.value.list
            lst.val_type = vt
            if vt == _VT_STRING:
                lst.s.extend(v.encode() for v in values)
            else:
                lst.i.extend(values)
            text = self._attrs[cache_key] = _indent(codec.model_text(holder), 4)
        return text

    def _string_frame(self, key: str, scalar: bool) -> tuple[str, str, str]:
        """The text of an attr entry holding a string (or a list of strings) around its value lines."""
        cache_key = (key, scalar)
        frame = self._strings.get(cache_key)
        if frame is None:
            holder = _OpDef()
            entry = holder.attr.add()
            entry.key = key
            codec._encode_attr_into(entry.value, "\x01" if scalar else ["\x01"], None, where="")
            frame = self._strings[cache_key] = _marker_frame(_indent(codec.model_text(holder), 4))
        return frame

    def _tensor_frame(self, key: str, value: TensorValue) -> tuple[str, str]:
        """The text of an attr entry holding a tensor, before and after its ``data`` line."""
        cache_key = (key, value.dtype, value.shape, value.format, value.origin_format)
        frame = self._tensors.get(cache_key)
        if frame is None:
            holder = _OpDef()
            entry = holder.attr.add()
            entry.key = key
            codec._encode_tensor(value, entry.value.t)
            entry.value.t.data = b"\x01"
            frame = self._tensors[cache_key] = _split_at_line(_indent(codec.model_text(holder), 4),
                                                              '          data: "\\001"\n')
        return frame

    def _desc(self, field: str, desc: TensorDesc) -> str:
        cache_key = (field, desc.dtype, desc.shape, desc.format, desc.origin_format, desc.origin_shape,
                     desc.origin_dtype)
        text = self._descs.get(cache_key)
        if text is None:
            holder = _OpDef()
            codec._encode_desc(desc, getattr(holder, field).add(), where="")
            text = self._descs[cache_key] = _indent(codec.model_text(holder), 4)
        return text


_VT_STRING = codec._VT.VT_LIST_STRING
_VT_INT = codec._VT.VT_LIST_INT


_DEFAULT_OPTIONS = codec.EncodeOptions()


def _ignore(count: int) -> None:
    return None


def ge_proto_chunks(graph: ir.Graph, options: codec.EncodeOptions = _DEFAULT_OPTIONS, *, model_name: str = "",
                    advance: Callable[[int], None] = _ignore) -> Iterator[str]:
    """The text of ``encode_model(graph, options, model_name=...)`` as :func:`model_text` prints it, in chunks.
    ``advance(n)`` is called as the ops of ``n`` more nodes (of the graph and its subgraphs) are made.

    Raises:
        GeDumpError: as :func:`encode_model` (raised while iterating).
    """
    return _ProtoText(options, advance).chunks(ir.as_graph(graph), model_name)


# ------------------------------------------------------------------------------------------------ ge_onnx
_AT = onnx_pb.AttributeProto


class _OnnxText:
    """Pieces of one ``ge_onnx`` dump (caches live as long as one dump)."""

    def __init__(self, level: DumpLevel, advance: Callable[[int], None]) -> None:
        self.level = level
        self._advance = advance
        self.full = level == DumpLevel.DUMP_ALL
        self._entries: dict[tuple, str] = {}
        self._descs: dict[tuple, list[tuple[str, str]]] = {}
        self._frames: dict[tuple, tuple[str, str]] = {}
        self._templates: dict[tuple, list[Any]] = {}

    def chunks(self, graph: ir.Graph, producer_name: str) -> Iterator[str]:
        yield str(onnx_pb.ModelProto(ir_version=6, producer_name=producer_name))
        yield "graph {\n"
        yield from self._nodes(graph, 2)
        for sub in codec._all_subgraphs(graph):
            nodes = list(self._nodes(sub, 8))
            holder = onnx_pb.NodeProto(name=sub.name, op_type="subgraph")
            attr = holder.attribute.add(name="graph", type=_AT.GRAPH)
            onnx_codec._encode_graph_shell(sub, attr.g, root=False)
            text = _indent(str(holder), 4)
            if text.count("      g {\n") != 1:  # an empty body is not printed: print the holder whole
                holder = onnx_pb.NodeProto(name=sub.name, op_type="subgraph")
                attr = holder.attribute.add(name="graph", type=_AT.GRAPH)
                onnx_codec._encode_graph(sub, attr.g, self.level, root=False)
                yield "  node {\n" + _indent(str(holder), 4) + "  }\n"
                continue
            start, rest = _split_at_line(text, "      g {\n")
            yield "  node {\n" + start + "      g {\n"
            yield from nodes
            yield rest + "  }\n"
        shell = onnx_pb.GraphProto()
        onnx_codec._encode_graph_shell(graph, shell, root=True)
        yield _indent(str(shell), 2) + "}\n"

    def _nodes(self, graph: ir.Graph, indent: int) -> Iterator[str]:
        nodes = graph.nodes()
        literal = {node.id: string_literal(node._name) for node in nodes}
        batch: list[str] = []
        for node in nodes:
            batch.append(self._node(graph, node, literal, indent))
            if len(batch) >= 256:
                self._advance(len(batch))
                yield "".join(batch)
                batch = []
        self._advance(len(batch))
        yield "".join(batch)

    def _node(self, graph: ir.Graph, node: ir.Node, literal: dict[int, str], indent: int) -> str:
        pad = " " * (indent + 2)
        parts = [" " * indent + "node {\n"]
        for prod in graph.producers(node):
            parts.append(f'{pad}input: ""\n' if prod is None else f'{pad}input: "{literal[prod[0].id]}:{prod[1]}"\n')
        predecessors = graph.control_predecessors(node)
        if predecessors:
            for src in sorted(predecessors, key=graph.position):
                parts.append(f'{pad}input: "{literal[src.id]}:-1"\n')
        name = literal[node.id]
        port = 0
        for uses in graph.output_uses(node):
            if uses:
                parts.append(f'{pad}output: "{name}:{port}"\n')
            port += 1
        if graph.control_successors(node):
            parts.append(f'{pad}output: "{name}:-1"\n')
        if node._name:
            parts.append(f'{pad}name: "{name}"\n')
        parts.append(f'{pad}op_type: "ge:{string_literal(node._op_type)}"\n')
        if self.level < DumpLevel.DUMP_WITH_OUT_DESC:
            template = self._template(node, indent + 2)
            if template is None:
                parts.extend(self._attributes(node, indent + 2))
            else:
                node_id = node.id
                tensors, strings, pieces = template
                _fill(parts, pieces, tensors, strings, node_id, f"{pad}  i: ", f"{pad}  s: ")
        parts.append(" " * indent + "}\n")
        return "".join(parts)

    def _template(self, node: ir.Node, indent: int) -> tuple[list[TensorValue], list[list[str]], list[Any]] | None:
        """(the node's TensorValue attrs, the template of its attribute blocks) from the cache by the node's
        signature (anchor names and counts, descs, attr values), or None when some value is not keyed here."""
        signature: list[Any] = [indent, tuple(node.input_names), len(node.inputs), len(node.outputs)]
        tensors: list[TensorValue] = []
        strings: list[list[str]] = []
        if not _attr_signature(node.attrs, signature, tensors, strings, with_origin_format=False):
            return None
        signature.append(None)
        for descs in (node.inputs, node.outputs):
            for desc in descs:
                if desc.has_attrs:
                    return None
                signature.append(desc.dtype)
                signature.append(desc.shape)
                signature.append((desc.format, desc.origin_format, desc.origin_shape, desc.origin_dtype))
            signature.append(None)
        key = tuple(signature)
        template = self._templates.get(key)
        if template is None:
            template = self._templates[key] = self._make_template(node, indent)
        return tensors, strings, template

    def _make_template(self, node: ir.Node, indent: int) -> list[Any]:
        """:meth:`_attributes` of ``node`` with the id and the tensor bytes left as slots."""
        entries = self._entries_of(node, indent, slots=True)
        return _merge_text([piece for _, pieces in entries for piece in pieces])

    def _attributes(self, node: ir.Node, indent: int) -> list[str]:
        """The node's attribute blocks in the encoder's order (sorted by name, stable)."""
        return [pieces[0] for _, pieces in self._entries_of(node, indent, slots=False)]

    def _entries_of(self, node: ir.Node, indent: int, *, slots: bool) -> list[tuple[str, list[Any]]]:
        """(name, text pieces) of the node's attribute blocks, added in the encoder's order and sorted by name
        (stable). With ``slots``, the id and each tensor's bytes are slots (:data:`_ID_SLOT`, the index of the
        tensor among the node's TensorValue attrs) between the text around them."""
        entries: list[tuple[str, list[Any]]] = []
        entry = self._entry
        if slots:
            before, after = self._frame("id", _AT.INT, 1, "i: 1\n", indent)
            entries.append(("id", [before, _ID_SLOT, after]))
        else:
            entries.append(("id", [self._id(node.id, indent)]))
        entries.append(("stream_id", [entry("stream_id", _AT.INT, 0, indent)]))
        for key in onnx_codec._EMPTY_STRINGS:
            entries.append((key, [entry(key, _AT.STRINGS, None, indent)]))
        for key in onnx_codec._EMPTY_INTS:
            entries.append((key, [entry(key, _AT.INTS, None, indent)]))
        named = sorted((name, i) for i, name in enumerate(node.input_names) if name)
        if named:
            entries.append(("_input_name_key",
                            [entry("_input_name_key", _AT.STRINGS, [n for n, _ in named], indent)]))
            entries.append(("_input_name_value",
                            [entry("_input_name_value", _AT.INTS, [i for _, i in named], indent)]))
        entries.append(("input_desc_nums", [entry("input_desc_nums", _AT.INT, node.num_inputs, indent)]))
        entries.append(("output_desc_nums", [entry("output_desc_nums", _AT.INT, node.num_outputs, indent)]))
        structured = (node.num_inputs >= onnx_codec._STRUCTURED_THRESHOLD
                      or node.num_outputs >= onnx_codec._STRUCTURED_THRESHOLD)
        full = self.full
        for prefix, descs in (("input_desc", node.inputs), ("output_desc", node.outputs)):
            for i, desc in enumerate(descs):
                if not structured and not desc.has_attrs:
                    entries.extend((name, [text]) for name, text in self._plain_desc(prefix, i, desc, indent))
                    continue
                desc_entries = onnx_codec._desc_entries(desc, full)
                if structured:
                    text = json.dumps({k: v for k, (_, v) in desc_entries.items()}, sort_keys=True)
                    entries.append((f"{prefix}_{i}", [entry(f"{prefix}_{i}", _AT.STRING, text, indent)]))
                else:
                    for key, (kind, value) in desc_entries.items():
                        name = f"{prefix}_{key}:{i}"
                        entries.append((name, [entry(name, kind, value, indent)]))
        slot = 0
        string_slot = 0
        for key, value in node.attrs.items():
            if slots and _string_values(value) is not None:
                for name, kind, _ in onnx_codec._op_attr_entries(key, value, full):
                    scalar = kind == _AT.STRING
                    before, after, prefix = self._marker(name, kind, "\x01" if scalar else ["\x01"], indent)
                    entries.append((name, [before, _Strings(string_slot, prefix, scalar), after]))
                string_slot += 1
                continue
            is_tensor = type(value) is TensorValue
            for name, kind, encoded in onnx_codec._op_attr_entries(key, value, full):
                if slots and is_tensor and name == f"{key}_data":
                    before, after = self._frame(name, _AT.STRING, b"\x01", 's: "\\001"\n', indent)
                    entries.append((name, [before, slot, after]))
                else:
                    entries.append((name, [entry(name, kind, encoded, indent)]))
            slot += is_tensor
        entries.sort(key=_by_key)
        return entries

    def _entry(self, name: str, kind: int, value: Any, indent: int) -> str:
        """One ``attribute`` block as ``_add_attr`` encodes it."""
        if value is None:
            vkey: tuple = ()
        elif kind == _AT.INT:
            vkey = (int(value),)
        elif kind == _AT.FLOAT:
            vkey = (repr(float(value)),)
        elif kind == _AT.STRING:
            encoded = value if isinstance(value, bytes) else str(value).encode("utf-8", "surrogateescape")
            if len(encoded) > 64:  # tensor bytes and the like: unique, formatted directly
                return self._long_string(name, encoded, indent)
            vkey = (encoded,)
        elif kind == _AT.INTS:
            vkey = tuple(int(v) for v in value)
        elif kind == _AT.FLOATS:
            vkey = tuple(repr(float(v)) for v in value)
        elif kind == _AT.STRINGS:
            vkey = tuple(str(v).encode("utf-8", "surrogateescape") for v in value)
        else:
            vkey = ("?", repr(value))
        cache_key = (name, kind, value is None, vkey, indent)
        text = self._entries.get(cache_key)
        if text is None:
            holder = onnx_pb.NodeProto()
            onnx_codec._add_attr(holder.attribute, name, kind, value)
            text = self._entries[cache_key] = _indent(str(holder), indent)
        return text

    def _frame(self, name: str, kind: int, marker: Any, marker_line: str, indent: int) -> tuple[str, str]:
        key = (name, kind, indent)
        frame = self._frames.get(key)
        if frame is None:
            holder = onnx_pb.NodeProto()
            onnx_codec._add_attr(holder.attribute, name, kind, marker)
            frame = self._frames[key] = _split_at_line(_indent(str(holder), indent),
                                                       " " * (indent + 2) + marker_line)
        return frame

    def _marker(self, name: str, kind: int, marker: Any, indent: int) -> tuple[str, str, str]:
        """An attribute block printed with a marker value: the text before and after its value lines, and their
        prefix."""
        key = ("marker", name, kind, indent)
        frame = self._frames.get(key)
        if frame is None:
            holder = onnx_pb.NodeProto()
            onnx_codec._add_attr(holder.attribute, name, kind, marker)
            frame = self._frames[key] = _marker_frame(_indent(str(holder), indent))  # type: ignore[assignment]
        return frame  # type: ignore[return-value]

    def _id(self, node_id: int, indent: int) -> str:
        if not node_id:
            return self._entry("id", _AT.INT, 0, indent)
        before, after = self._frame("id", _AT.INT, 1, "i: 1\n", indent)
        return f"{before}{' ' * (indent + 2)}i: {node_id}\n{after}"

    def _long_string(self, name: str, data: bytes, indent: int) -> str:
        before, after = self._frame(name, _AT.STRING, b"\x01", 's: "\\001"\n', indent)
        return f'{before}{" " * (indent + 2)}s: "{bytes_literal(data)}"\n{after}'

    def _plain_desc(self, prefix: str, index: int, desc: TensorDesc, indent: int) -> list[tuple[str, str]]:
        key = (prefix, index, *_desc_key(desc), indent)
        entries = self._descs.get(key)
        if entries is None:
            entries = []
            for name, (kind, value) in onnx_codec._desc_entries(desc, self.full).items():
                full_name = f"{prefix}_{name}:{index}"
                entries.append((full_name, self._entry(full_name, kind, value, indent)))
            self._descs[key] = entries
        return entries


def ge_onnx_chunks(graph: ir.Graph, level: DumpLevel, *, producer_name: str = "GE",
                   advance: Callable[[int], None] = _ignore) -> Iterator[str]:
    """The text of ``encode_onnx_model(graph, level)`` as ``str()`` prints it, in chunks. ``advance(n)`` is
    called as the nodes of ``n`` more nodes (of the graph and its subgraphs) are made."""
    return _OnnxText(DumpLevel(level), advance).chunks(ir.as_graph(graph), producer_name)
