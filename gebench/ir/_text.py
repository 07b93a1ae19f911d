"""The one-line-per-node text form of a graph and its parser.

The form is meant for goldens, tests and ``repr``; ``parse_text(to_text(g))`` rebuilds ``g`` exactly
(ids, names, op types, attrs, anchor names and descs, edges, control edges, provenance, subgraphs), so
``to_text(parse_text(t)) == t`` for any text the printer produced.

Grammar (one node per line, nodes in topological order)::

    graph NAME [{ATTRS}]
      #ID NAME = OP(INPUT, ...) [{ATTRS}] [-> (OUTPUT, ...)] [^[CTRL, ...]] [@{provenance=.., subgraphs=[..]}]
    subgraph NAME [parent=NODE] [{ATTRS}]
      ...

``INPUT`` is ``[anchor=]SRC:PORT`` or ``[anchor=]-`` (unfed), followed by ``as DESC`` when the anchor's
desc differs from the producer's output desc (or, unfed, from the placeholder desc). ``OUTPUT`` is
``[anchor:] DESC``. ``DESC`` is ``DT_FLOAT[2,3]`` plus ``{format=NCHW, origin_format=.., origin_shape=[..],
origin_dtype=.., attr.NAME=VALUE}`` for whatever differs from the defaults (format ND, origin format =
format, origin shape = shape). Attribute values: ``true``/``false``, ints, floats (always with ``.``,
``e``, ``inf`` or ``nan``), JSON strings, ``DT_*`` data types, ``[...]`` lists, ``tensor(DESC, [values])``
or ``tensor(DESC, b64"...")``, ``desc(DESC)`` and ``b64"..."`` bytes. Names that are not plain
identifiers are JSON-quoted.
"""

from __future__ import annotations

import base64
import json
import math
import re
from typing import Any

import numpy as np

from ._collector import collector_paused
from ._graph import Graph
from ._node import Node
from ._tensor import TensorDesc, TensorValue
from ._types import DataType, Format
from .errors import GraphError, TextFormError

__all__ = ["to_text", "parse_text"]

_BARE = re.compile(r"[A-Za-z_][A-Za-z0-9_./\-]*\Z")
_INLINE_TENSOR_LIMIT = 16


# ---------------------------------------------------------------------------------------------- printing
def to_text(graph: Graph) -> str:
    """Render ``graph`` (and its subgraphs) in the text form. O(n + e) plus sorting."""
    lines: list[str] = []
    _emit_graph(graph, "graph", lines)
    for name in sorted(graph.subgraphs):
        _emit_graph(graph.subgraphs[name], "subgraph", lines)
    return "\n".join(lines) + "\n"


def _emit_graph(graph: Graph, keyword: str, lines: list[str]) -> None:
    head = f"{keyword} {_name(graph.name)}"
    if keyword == "subgraph" and graph.parent_node_name:
        head += f" parent={_name(graph.parent_node_name)}"
    if graph.attrs:
        head += " " + _attrs(graph.attrs)
    lines.append(head)
    for node in graph.nodes():
        lines.append("  " + _node_line(graph, node))


def _node_line(graph: Graph, node: Node) -> str:
    ins = []
    for port, prod in enumerate(graph.producers(node)):
        anchor = node.input_names[port]
        desc = node.inputs[port]
        if prod is None:
            text = "-"
            if not desc.is_placeholder or desc.has_attrs:
                text += " as " + _desc(desc)
        else:
            src, sp = prod
            text = f"{_name(src.name)}:{sp}"
            if desc != src.outputs[sp]:
                text += " as " + _desc(desc)
        ins.append(f"{_name(anchor)}={text}" if anchor else text)
    line = f"#{node.id} {_name(node.name)} = {_name(node.op_type)}({', '.join(ins)})"
    if node.attrs:
        line += " " + _attrs(node.attrs)
    if node.outputs:
        outs = []
        for anchor, desc in zip(node.output_names, node.outputs, strict=True):
            outs.append(f"{_name(anchor)}: {_desc(desc)}" if anchor else _desc(desc))
        line += f" -> ({', '.join(outs)})"
    ctrl = graph.control_predecessors(node)
    if ctrl:
        ctrl.sort(key=graph.position)
        line += " ^[" + ", ".join(_name(c.name) for c in ctrl) + "]"
    extra = {}
    if node.provenance:
        extra["provenance"] = node.provenance
    if node.subgraph_names:
        extra["subgraphs"] = list(node.subgraph_names)
    if extra:
        line += " @" + _attrs(extra)
    return line


def _name(name: str) -> str:
    return name if _BARE.match(name) and name not in ("true", "false", "inf", "nan", "as") else json.dumps(name)


def _attrs(attrs: dict[str, Any]) -> str:
    return "{" + ", ".join(f"{_name(k)}={_value(v)}" for k, v in attrs.items()) + "}"


def _desc(desc: TensorDesc) -> str:
    text = f"{desc.dtype.name}[{','.join(str(d) for d in desc.shape)}]"
    extra: list[str] = []
    if desc.format != Format.FORMAT_ND:
        extra.append(f"format={_fmt(desc.format)}")
    if desc.origin_format != desc.format:
        extra.append(f"origin_format={_fmt(desc.origin_format)}")
    if desc.origin_shape != desc.shape:
        extra.append(f"origin_shape=[{','.join(str(d) for d in desc.origin_shape)}]")
    if desc.origin_dtype is not None:
        extra.append(f"origin_dtype={DataType(desc.origin_dtype).name}")
    for k, v in desc.attr_items():
        extra.append(f"attr.{_name(k)}={_value(v)}")
    return text + ("{" + ", ".join(extra) + "}" if extra else "")


def _fmt(fmt: Format) -> str:
    return Format(fmt).name[len("FORMAT_"):]


def _float(value: float) -> str:
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    text = repr(float(value))
    return text if any(c in text for c in ".e") else text + ".0"


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, DataType):
        return value.name
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, bytes):
        return 'b64"' + base64.b64encode(value).decode() + '"'
    if isinstance(value, TensorValue):
        return _tensor(value)
    if isinstance(value, TensorDesc):
        return f"desc({_desc(value)})"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    raise TypeError(f"attribute value of type {type(value).__name__} has no text form")


def _tensor(value: TensorValue) -> str:
    desc = TensorDesc(dtype=value.dtype, shape=value.shape, format=value.format,
                      origin_format=value.origin_format if value.origin_format is not None else value.format,
                      origin_shape=value.shape)
    arr = value.array
    if arr.dtype == np.object_:
        body = json.dumps([str(v) for v in arr.ravel()])
    elif arr.size <= _INLINE_TENSOR_LIMIT and arr.dtype.kind in "biuf" and value.dtype != DataType.DT_BF16:
        body = "[" + ", ".join(_scalar(v, arr.dtype) for v in arr.ravel()) + "]"
    else:
        body = 'b64"' + base64.b64encode(value.to_bytes()).decode() + '"'
    return f"tensor({_desc(desc)}, {body})"


def _scalar(v: Any, dtype: np.dtype) -> str:
    if dtype.kind == "b":
        return "true" if bool(v) else "false"
    if dtype.kind in "iu":
        return str(int(v))
    f = float(v)
    if math.isnan(f) or math.isinf(f):
        return _float(f)
    text = np.format_float_positional(v, unique=True, trim="0") if abs(f) < 1e16 else repr(f)
    return text if any(c in text for c in ".e") else text + ".0"


# ---------------------------------------------------------------------------------------------- parsing
class _Cursor:
    """A position in one line; every read skips leading blanks."""

    _TOKEN = re.compile(r'\s*("(?:[^"\\]|\\.)*"|b64"[^"]*"|-?inf\b|nan\b|-?[0-9][0-9.eE+\-]*|[A-Za-z_][A-Za-z0-9_./\-]*|->|.)')

    def __init__(self, text: str, line_no: int) -> None:
        self.text = text
        self.pos = 0
        self.line_no = line_no

    def error(self, message: str) -> TextFormError:
        return TextFormError(f"line {self.line_no}, column {self.pos + 1}: {message}: {self.text.strip()!r}")

    def peek(self) -> str:
        m = self._TOKEN.match(self.text, self.pos)
        return m.group(1) if m else ""

    def take(self) -> str:
        m = self._TOKEN.match(self.text, self.pos)
        if not m:
            return ""
        self.pos = m.end()
        return m.group(1)

    def expect(self, token: str) -> None:
        got = self.take()
        if got != token:
            raise self.error(f"expected {token!r}, found {got!r}")

    def at_end(self) -> bool:
        return not self.text[self.pos:].strip()

    def name(self) -> str:
        tok = self.take()
        if tok.startswith('"'):
            return json.loads(tok)
        if tok and (tok[0].isalpha() or tok[0] == "_"):
            return tok
        raise self.error(f"expected a name, found {tok!r}")


def parse_text(text: str) -> Graph:
    """Parse the text form back into a :class:`Graph`. O(text), with the collector's automatic passes paused
    (:func:`collector_paused`).

    Raises:
        TextFormError: naming the line and column of the first problem.
    """
    with collector_paused():
        return _parse_text(text)


def _parse_text(text: str) -> Graph:
    root: Graph | None = None
    current: Graph | None = None
    pending: list[tuple[Graph, Node, list, list, int]] = []
    for line_no, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip() or raw.lstrip().startswith("//"):
            continue
        cur = _Cursor(raw, line_no)
        if not raw.startswith(" "):
            keyword = cur.take()
            if keyword == "graph":
                if root is not None:
                    raise cur.error("a second 'graph' header")
                root = current = Graph(cur.name())
            elif keyword == "subgraph":
                if root is None:
                    raise cur.error("'subgraph' before 'graph'")
                current = Graph(cur.name())
                if cur.peek() == "parent":
                    cur.take()
                    cur.expect("=")
                    current.parent_node_name = cur.name()
                root.subgraphs[current.name] = current
                current.parent_graph = root
            else:
                raise cur.error("expected 'graph' or 'subgraph'")
            if cur.peek() == "{":
                current.attrs = _parse_attrs(cur)
            if not cur.at_end():
                raise cur.error("unexpected text after the header")
            continue
        if current is None:
            raise cur.error("a node line before the 'graph' header")
        pending.append(_parse_node(cur, current))
    if root is None:
        raise TextFormError("line 1: the text has no 'graph' header")
    for graph, node, ins, ctrl, line_no in pending:
        for port, (src, desc) in enumerate(ins):
            if src is not None:
                src_name, sp = src
                prod = graph.find(src_name)
                if prod is None:
                    raise TextFormError(f"line {line_no}: input {port} of {node.name!r} names unknown node {src_name!r}")
                try:
                    graph.add_edge(prod, sp, node, port)
                except GraphError as exc:  # a port the producer does not have, a cycle ...
                    raise TextFormError(f"line {line_no}: input {port} of {node.name!r}: {exc}") from None
                node.inputs[port] = desc if desc is not None else prod.outputs[sp].copy()
        for c in ctrl:
            pred = graph.find(c)
            if pred is None:
                raise TextFormError(f"line {line_no}: control input of {node.name!r} names unknown node {c!r}")
            try:
                graph.add_control_edge(pred, node)
            except GraphError as exc:
                raise TextFormError(f"line {line_no}: control input of {node.name!r}: {exc}") from None
    return root


def _parse_node(cur: _Cursor, graph: Graph) -> tuple[Graph, Node, list, list, int]:
    tok = cur.take()
    if tok != "#":
        raise cur.error("a node line starts with '#<id>'")
    id_tok = cur.take()
    if not id_tok.isdigit():
        raise cur.error("expected a node id")
    name = cur.name()
    cur.expect("=")
    op_type = cur.name()
    cur.expect("(")
    ins: list[tuple[tuple[str, int] | None, TensorDesc | None]] = []
    anchor_names: list[str] = []
    if cur.peek() != ")":
        while True:
            anchor = ""
            save = cur.pos
            first = cur.take()
            if first != "-" and cur.peek() == "=":
                cur.pos = save
                anchor = cur.name()
                cur.expect("=")
            else:
                cur.pos = save
            if cur.peek() == "-":
                cur.take()
                src = None
            else:
                src_name = cur.name()
                cur.expect(":")
                port = cur.take()
                if not port.isdigit():
                    raise cur.error("expected an output port number")
                src = (src_name, int(port))
            desc = None
            if cur.peek() == "as":
                cur.take()
                desc = _parse_desc(cur)
            elif src is None:
                desc = TensorDesc.placeholder()
            ins.append((src, desc))
            anchor_names.append(anchor)
            sep = cur.take()
            if sep == ")":
                break
            if sep != ",":
                raise cur.error("expected ',' or ')' in the input list")
    else:
        cur.take()
    attrs = _parse_attrs(cur) if cur.peek() == "{" else {}
    outs: list[TensorDesc] = []
    out_names: list[str] = []
    if cur.peek() == "->":
        cur.take()
        cur.expect("(")
        while True:
            save = cur.pos
            first = cur.take()
            anchor = ""
            if cur.peek() == ":" and not first.startswith("DT_"):
                cur.pos = save
                anchor = cur.name()
                cur.expect(":")
            else:
                cur.pos = save
            outs.append(_parse_desc(cur))
            out_names.append(anchor)
            sep = cur.take()
            if sep == ")":
                break
            if sep != ",":
                raise cur.error("expected ',' or ')' in the output list")
    ctrl: list[str] = []
    if cur.peek() == "^":
        cur.take()
        cur.expect("[")
        while True:
            ctrl.append(cur.name())
            sep = cur.take()
            if sep == "]":
                break
            if sep != ",":
                raise cur.error("expected ',' or ']' in the control inputs")
    extra: dict[str, Any] = {}
    if cur.peek() == "@":
        cur.take()
        extra = _parse_attrs(cur)
    if not cur.at_end():
        raise cur.error("unexpected text at the end of the node line")
    try:
        node = graph.add_node(op_type, name=name, attrs=attrs, inputs=len(ins), outputs=outs,
                              input_names=anchor_names, output_names=out_names, node_id=int(id_tok))
    except ValueError as exc:
        raise cur.error(str(exc)) from None
    for port, (_, desc) in enumerate(ins):
        if desc is not None:
            node.inputs[port] = desc
    node.provenance = extra.get("provenance", "")
    node.subgraph_names = list(extra.get("subgraphs", []))
    return graph, node, ins, ctrl, cur.line_no


def _parse_attrs(cur: _Cursor) -> dict[str, Any]:
    cur.expect("{")
    attrs: dict[str, Any] = {}
    if cur.peek() == "}":
        cur.take()
        return attrs
    while True:
        key = cur.name()
        cur.expect("=")
        attrs[key] = _parse_value(cur)
        sep = cur.take()
        if sep == "}":
            return attrs
        if sep != ",":
            raise cur.error("expected ',' or '}' in the attributes")


def _parse_value(cur: _Cursor) -> Any:
    tok = cur.take()
    if tok == "true":
        return True
    if tok == "false":
        return False
    if tok.startswith('b64"'):
        return base64.b64decode(tok[4:-1])
    if tok.startswith('"'):
        return json.loads(tok)
    if tok in ("inf", "-inf", "nan"):
        return float(tok)
    if tok and (tok[0].isdigit() or tok[0] == "-"):
        if any(c in tok for c in ".eE") or tok.endswith("inf"):
            return float(tok)
        return int(tok)
    if tok.startswith("DT_"):
        try:
            return DataType[tok]
        except KeyError:
            raise cur.error(f"unknown data type {tok}") from None
    if tok == "[":
        items: list[Any] = []
        if cur.peek() == "]":
            cur.take()
            return items
        while True:
            items.append(_parse_value(cur))
            sep = cur.take()
            if sep == "]":
                return items
            if sep != ",":
                raise cur.error("expected ',' or ']' in a list")
    if tok == "tensor":
        cur.expect("(")
        desc = _parse_desc(cur)
        cur.expect(",")
        value = _parse_tensor_body(cur, desc)
        cur.expect(")")
        return value
    if tok == "desc":
        cur.expect("(")
        desc = _parse_desc(cur)
        cur.expect(")")
        return desc
    raise cur.error(f"cannot read an attribute value from {tok!r}")


def _parse_tensor_body(cur: _Cursor, desc: TensorDesc) -> TensorValue:
    from ._types import numpy_dtype

    dt = numpy_dtype(desc.dtype)
    origin = desc.origin_format if desc.origin_format != desc.format else None
    tok = cur.peek()
    if tok.startswith('b64"'):
        raw = base64.b64decode(cur.take()[4:-1])
        arr = np.frombuffer(raw, dtype=dt.newbyteorder("<")).astype(dt).reshape(desc.shape)
        return TensorValue(desc.dtype, arr, desc.format, origin)
    values = _parse_value(cur)
    if not isinstance(values, list):
        raise cur.error("a tensor body is a list or b64 bytes")
    if dt == np.object_:
        arr = np.array(values, dtype=object).reshape(desc.shape)
    else:
        arr = np.array(values, dtype=dt).reshape(desc.shape)
    return TensorValue(desc.dtype, arr, desc.format, origin)


def _parse_desc(cur: _Cursor) -> TensorDesc:
    tok = cur.take()
    if not tok.startswith("DT_"):
        raise cur.error(f"expected a tensor desc such as DT_FLOAT[2,3], found {tok!r}")
    try:
        dtype = DataType[tok]
    except KeyError:
        raise cur.error(f"unknown data type {tok}") from None
    shape = _parse_dims(cur)
    desc = TensorDesc(dtype=dtype, shape=shape, origin_shape=shape)
    origin_format_set = False
    if cur.peek() == "{":
        cur.take()
        while True:
            key = cur.name()
            if key == "attr":
                raise cur.error("expected attr.NAME")
            cur.expect("=")
            if key == "format":
                desc.format = _parse_format(cur)
            elif key == "origin_format":
                desc.origin_format = _parse_format(cur)
                origin_format_set = True
            elif key == "origin_shape":
                desc.origin_shape = _parse_dims(cur)
            elif key == "origin_dtype":
                desc.origin_dtype = DataType[cur.take()]
            elif key.startswith("attr."):
                desc.attrs[key[len("attr."):]] = _parse_value(cur)
            else:
                raise cur.error(f"unknown tensor desc field {key!r}")
            sep = cur.take()
            if sep == "}":
                break
            if sep != ",":
                raise cur.error("expected ',' or '}' in a tensor desc")
    if not origin_format_set:
        desc.origin_format = desc.format
    return desc


def _parse_dims(cur: _Cursor) -> tuple[int, ...]:
    cur.expect("[")
    dims: list[int] = []
    if cur.peek() == "]":
        cur.take()
        return ()
    while True:
        tok = cur.take()
        try:
            dims.append(int(tok))
        except ValueError:
            raise cur.error(f"expected a dimension, found {tok!r}") from None
        sep = cur.take()
        if sep == "]":
            return tuple(dims)
        if sep != ",":
            raise cur.error("expected ',' or ']' in a shape")


def _parse_format(cur: _Cursor) -> Format:
    tok = cur.take()
    try:
        return Format["FORMAT_" + tok]
    except KeyError:
        raise cur.error(f"unknown format {tok}") from None
