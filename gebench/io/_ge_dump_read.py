"""Reading ge_proto dump text laid out as protobuf's printers lay it out (gebench's, GE's ``DebugString``): the
same graph as parsing the whole text and decoding the ModelDef, at a fraction of the cost.

A dump is tens of MB of text per ten thousand ops and almost all of it repeats: ops of one signature (op type,
attrs, descs, peer indexes) differ only in their name, input entries, id and tensor bytes. The text is split at
C speed into top-level fields, graph fields and op blocks (one field per line, two spaces per nesting level,
messages closed by ``}`` on a line of their own). In each op block the lines unique to the op are cut out, and
the rest, its *signature text*, is parsed (``text_format``) and decoded (:func:`~gebench.io._ge_dump_codec.
decode_op`) once; every op with the same signature text reuses that result with its own name, inputs, id and
tensor bytes (unescaped as ``text_format`` unescapes them). The graph is then assembled by the decoder's own
code, so node ids, attr order, edges in peer order and every check are the same.

Anything else (another layout, comments inside graphs, tensor bytes anywhere but an op attr's ``t``, a literal
this module does not read, a parse or decode error) makes :func:`read_dump_text` return None; the caller then
parses the whole text as before, which also gives the errors their file, line and column.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import Any

import numpy as np
from google.protobuf import text_encoding, text_format

from gebench import ir

from . import _ge_dump_codec as codec
from ._progress import Progress
from .proto import ge_ir_pb2 as pb

__all__ = ["SplitDump", "read_dump_text", "split_dump_text"]

_log = logging.getLogger(__name__)

_ID = re.compile(rb"    id: (-?[0-9]+)\n")
#: Lines of an op's attr values that hold per-op values: a tensor's bytes, a string, a string list's item.
_SLOT_PREFIXES = ((b"\n          data: ", 1), (b"\n        s: ", 2), (b"\n          s: ", 3))
_DATA_AT = b"\n          data: "
_KEY_AT = b'    attr {\n      key: "'
#: Attrs the decoder reads beyond their own value (anchor names, schema metadata): never slots.
_RESERVED = frozenset((*codec._ANCHOR_NAME_KEYS, *codec._SCHEMA_KEYS))
_DATA, _STRING, _ITEM = 1, 2, 3
_OP_OPEN = b"  op {\n"
_OP_CLOSE = b"\n  }\n"
_INPUT_KINDS = (b'input: ""\n', b'input: "_:0"\n', b'input: "_:-1"\n')


_NO_DATA: list[bytes] = []


class _NotLaidOut(Exception):
    """The text deviates from the printers' layout; the caller parses it whole."""


def _literal(t: bytes, start: int) -> int:
    """The index of the closing quote of the literal whose body starts at ``start`` (after the opening quote)
    and which ends its line. Raising ``_NotLaidOut`` where ``text_format`` would read the line otherwise: the
    line does not end with a quote, or the body holds an unescaped quote or ends in an escaping backslash."""
    end = t.find(b"\n", start) - 1
    if end < start or t[end] != 0x22:
        raise _NotLaidOut("literal")
    if b'"' in t[start:end] or t[end - 1] == 0x5C:
        # escapes pair from the left: without the escaped backslashes and quotes, no quote and no final
        # backslash may remain
        body = t[start:end].replace(b"\\\\", b"").replace(b'\\"', b"")
        if b'"' in body or body.endswith(b"\\"):
            raise _NotLaidOut("literal")
    return end


def _unescape(literal: bytes) -> bytes:
    """``text_encoding.CUnescape`` of the literal's text (what ``text_format`` does with a literal's body, after
    decoding the line as UTF-8, which raises here too), without its regex pass when there is no ``\\x`` escape
    for it to rewrite."""
    if not literal.isascii():
        literal.decode("utf-8")  # a line text_format could not decode: raises UnicodeDecodeError
    if b"\\x" in literal:
        return text_encoding.CUnescape(literal.decode("utf-8"))
    return literal.decode("unicode_escape").encode("raw_unicode_escape")


def _string(literal: bytes) -> str:
    """The value ``text_format`` gives a string field for the body of a double-quoted literal."""
    if b"\\" not in literal:
        return literal.decode("utf-8")
    return _unescape(literal).decode("utf-8")


class _Op:
    """One op block: what is unique to it, and its signature."""

    __slots__ = ("name", "type", "id", "inputs", "data", "template")

    def __init__(self, name: str, inputs: list[bytes], op_id: int, data: list[bytes], template: _Template) -> None:
        self.name = name
        self.inputs = inputs
        self.id = op_id
        self.data = data
        self.template = template
        self.type = template.type


class _Template:
    """An op signature, parsed and decoded once."""

    __slots__ = ("text", "kinds", "type", "decoded", "peers", "slots", "strings", "mutable", "layouts", "_op")

    def __init__(self, text: bytes, kinds: tuple[int, ...], slot_keys: list[tuple[int, str]]) -> None:
        self.text = text
        self.kinds = kinds
        #: some slots are strings (an op matches this template only after its strings are cut out too)
        self.strings = any(kind != _DATA for kind, _ in slot_keys)
        op = pb.OpDef()
        body = b"".join(_INPUT_KINDS[k] for k in kinds)
        text_format.Parse(b'name: "_"\n' + body + text, op)
        self.type = op.type
        #: per attr with slots: (key, the AttrDef as parsed, [(slot kind, list index)] in slot order, and for a
        #: tensor whose bytes are the only slot, what :func:`_tensor_layout` gives)
        self.slots: list[tuple[str, pb.AttrDef, list[tuple[int, int]], tuple | None]] = []
        by_key: dict[str, list[tuple[int, int]]] = {}
        for k, (kind, key) in enumerate(slot_keys):
            marker = b"#%d" % k
            value = op.attr[key] if key in op.attr else None
            if value is None:
                raise _NotLaidOut("slot outside the attrs")
            if kind == _DATA:
                found = value.WhichOneof("value") == "t" and value.t.data == marker
                index = -1
            elif kind == _STRING:
                found = value.WhichOneof("value") == "s" and value.s == marker
                index = -1
            else:
                items = list(value.list.s) if value.WhichOneof("value") == "list" else []
                index = items.index(marker) if marker in items else -1
                found = index >= 0
            if not found:
                raise _NotLaidOut("slot not where its line is")
            by_key.setdefault(key, []).append((kind, index))
        for key, places in by_key.items():
            value = op.attr[key]
            if any(kind == _DATA for kind, _ in places):
                value.t.data = b""  # the template's own decode must not see the marker as tensor bytes
            kept = pb.AttrDef()
            kept.CopyFrom(value)
            self.slots.append((key, kept, places, _tensor_layout(kept) if places == [(_DATA, -1)] else None))
        #: per slot (in slot order), the tensor layout when its attr is a tensor whose bytes are its only slot
        self.layouts: list[tuple | None] = []
        for _, _, places, layout in self.slots:
            self.layouts.extend([layout] + [None] * (len(places) - 1))
        if not any(self.layouts):
            self.layouts = []
        self.decoded: codec.DecodedOp | None = None
        self.peers = codec.peer_indexes(dict(op.attr))
        self._op = op

    def decode(self, schema_info: dict[str, Any], where: str) -> codec.DecodedOp:
        if self.decoded is None:
            self.decoded = codec.decode_op(self._op, schema_info, where)
            self.mutable = any(type(v) not in _SHARED for v in self.decoded.attrs.values())
            del self._op
        return self.decoded


_SHARED = frozenset({int, float, bool, str, bytes, type(None), ir.TensorValue, ir.DataType, ir.Format,
                     codec.OpaqueAttr})


def _decode(op: _Op, schema_info: dict[str, Any], where: str) -> codec.DecodedOp:
    """The :class:`~gebench.io._ge_dump_codec.DecodedOp` of ``op``: its template's, with fresh copies of what a
    node may change in place, and the op's own edges and tensors."""
    template = op.template
    base = template.decode(schema_info, where)
    attrs = ir.copy_attrs(base.attrs) if template.mutable else base.attrs
    if template.slots:
        attrs = dict(attrs)
        values = iter(op.data)
        for key, kept, places, layout in template.slots:
            if layout is not None:
                first = next(values)
                if type(first) is ir.TensorValue:  # decoded when the op was split (see _Reader.op)
                    attrs[key] = first
                    continue
                raws = [_unescape(first)]
            else:
                raws = [_unescape(next(values)) for _ in places]
            msg = pb.AttrDef()
            msg.CopyFrom(kept)
            for (kind, index), raw in zip(places, raws, strict=True):
                if kind == _DATA:
                    msg.t.data = raw
                elif kind == _STRING:
                    msg.s = raw
                else:
                    msg.list.s[index] = raw
            attrs[key] = codec._decode_attr(msg, where=f"{where} attr {key!r}")
        op.data = _NO_DATA  # the literals can be large: the node holds the values now
    edges, _ = codec.input_edges([_string(s) for s in op.inputs], template.peers, where)
    return codec.DecodedOp(attrs, base.inputs, base.outputs, base.input_names, base.output_names, edges,
                           list(base.subgraph_names))


def _early_values(template: _Template, literals: list[bytes]) -> list[Any]:
    """``literals`` with the tensors of a known layout and the right size decoded (what ``_decode_tensor`` gives
    them): the values are kept instead of their escaped text, about three and a half times larger."""
    out: list[Any] = []
    for literal, layout in zip(literals, template.layouts, strict=True):
        if layout is not None:
            raw = _unescape(literal)
            dtype, np_type, shape, fmt, origin, size = layout
            if len(raw) == size:
                out.append(codec.tensor_of_bytes(raw, dtype, np_type, shape, fmt, origin))
                continue
        out.append(literal)
    return out


def _tensor_layout(msg: pb.AttrDef) -> tuple | None:
    """(dtype, numpy type, shape, format, origin format, byte size) of the tensor an AttrDef holds, as
    :func:`~gebench.io._ge_dump_codec._decode_tensor` reads them, when its bytes decide nothing else: a numpy
    type and known dims. None otherwise (the general decode then runs per op)."""
    if msg.WhichOneof("value") != "t":
        return None
    desc = msg.t.desc
    dtype = codec.cpp_dtype(desc.dtype)
    try:
        np_type = ir.numpy_dtype(dtype)
    except ValueError:
        return None
    shape = tuple(desc.shape.dim)
    if np_type == np.object_ or any(d < 0 for d in shape):
        return None
    fmt = codec.parse_format_string(desc.layout) if desc.layout else ir.Format.FORMAT_ND
    origin = None
    if "origin_format" in desc.attr:
        origin = codec.parse_format_string(desc.attr["origin_format"].s.decode("utf-8", "replace"))
    count = int(np.prod(shape, dtype=np.int64)) if shape else 1
    return dtype, np_type, shape, fmt or ir.Format.FORMAT_ND, origin, count * np_type.itemsize


class _Reader:
    def __init__(self) -> None:
        self.templates: dict[tuple[bytes, tuple[int, ...]], _Template] = {}

    def _slots(self, rest: bytes, *, strings: bool) -> tuple[list[bytes], list[tuple[int, str]], bytes]:
        """Cut the per-op values out of an op's attr entries: tensor bytes, and with ``strings`` the strings of
        attrs that are not :data:`_RESERVED`. Returns (their literals, (slot kind, attr key) per literal, the
        attr text with numbered markers in their place)."""
        hits = []
        for prefix, kind in _SLOT_PREFIXES if strings else _SLOT_PREFIXES[:1]:
            i = rest.find(prefix)
            while i >= 0:
                hits.append((i + 1, kind))
                i = rest.find(prefix, i + 1)
        data: list[bytes] = []
        slot_keys: list[tuple[int, str]] = []
        if not hits:
            return data, slot_keys, rest
        hits.sort()
        pieces = []
        q = 0
        last_at = -1
        key = ""
        for at_line, kind in hits:
            at_key = rest.rfind(_KEY_AT, 0, at_line)
            if at_key < 0:
                raise _NotLaidOut("value line outside an attr")
            if at_key != last_at:
                last_at = at_key
                key = _string(rest[at_key + len(_KEY_AT):rest.index(b'"\n', at_key + len(_KEY_AT))])
            if kind != _DATA and key in _RESERVED:
                continue
            prefix = _SLOT_PREFIXES[kind - 1][0][1:]
            start = at_line + len(prefix) + 1
            if rest[start - 1] != 0x22:
                raise _NotLaidOut("value literal")
            end = _literal(rest, start)
            pieces.append(rest[q:at_line])
            pieces.append(b'%s"#%d"\n' % (prefix, len(data)))
            data.append(rest[start:end])
            slot_keys.append((kind, key))
            q = end + 2
        if not data:
            return data, slot_keys, rest
        pieces.append(rest[q:])
        return data, slot_keys, b"".join(pieces)

    def op(self, t: bytes, p: int, end: int) -> _Op:
        """Split the op block ``t[p:end]`` (its fields, each line ending in ``\\n``) into its unique parts and its
        signature (offsets into the whole text: the block is not copied)."""
        name = ""
        if t.startswith(b'    name: "', p):
            stop = _literal(t, p + 11)
            name = _string(t[p + 11:stop])
            p = stop + 2
        start = p
        if t.startswith(b"    type: ", p):
            p = t.index(b"\n", p) + 1
        type_line = t[start:p]
        inputs = []
        kinds = []
        while t.startswith(b'    input: "', p):
            stop = _literal(t, p + 12)
            literal = t[p + 12:stop]
            inputs.append(literal)
            kinds.append(0 if not literal else 2 if literal.endswith(b":-1") else 1)
            p = stop + 2
        q = p  # the attr entries follow the inputs: they end where the last one (found from the end) closes
        if t.startswith(b"    attr {\n", p):
            last = max(t.rfind(b"\n    attr {\n", p, end) + 1, p)
            q = t.find(b"\n    }\n", last, end)
            if q < 0:
                raise _NotLaidOut("unclosed attr")
            q += len(b"\n    }\n")
        rest = t[p:q]
        tail = t[q:end]
        op_id = 0
        at = 0 if tail.startswith(b"    id: ") else tail.find(b"\n    id: ") + 1
        if at > 0 or tail.startswith(b"    id: "):
            m = _ID.match(tail, at)
            if m is None:
                raise _NotLaidOut("id")
            op_id = int(m.group(1))
            tail = tail[:at] + tail[m.end():]
        kinds_key = tuple(kinds)
        if _DATA_AT in rest:
            data, slot_keys, with_data = self._slots(rest, strings=False)
        else:
            data, slot_keys, with_data = [], [], rest
        key = (type_line + with_data + tail, kinds_key)
        template = self.templates.get(key)
        if template is None or template.strings:
            # not seen, or seen only with per-op strings cut out: cut them out too
            data, slot_keys, with_slots = self._slots(rest, strings=True)
            key = (type_line + with_slots + tail, kinds_key)
            template = self.templates.get(key)
            if template is None:
                signature = key[0]
                if signature.startswith((b"    name: ", b"    input: ", b"    id: ")) \
                        or b"\n    name: " in signature or b"\n    input: " in signature \
                        or b"\n    id: " in signature or _DATA_AT in tail:
                    raise _NotLaidOut("fields out of order")
                template = self.templates[key] = _Template(signature, kinds_key, slot_keys)
        if template.layouts:
            data = _early_values(template, data)
        return _Op(name, inputs, op_id, data, template)


def _body(text: bytes, pos: int, indent: bytes) -> tuple[list[tuple[bool, int, int]], int]:
    """The fields at ``indent`` of the message body starting at ``pos``, as (is a message, start, end), and the
    start of the line closing that message (``}`` at the indent above ``indent``), found on the way: the body is
    read once, without a search for its end first."""
    out = []
    closing = indent[2:] + b"}\n"
    close = b"\n" + indent + b"}\n"
    end = len(text)
    while not text.startswith(closing, pos):
        if pos >= end:
            raise _NotLaidOut("unclosed message")
        field = _field(text, pos, indent, close)
        out.append(field)
        pos = field[2]
    return out, pos


def _field(text: bytes, pos: int, indent: bytes, close: bytes) -> tuple[bool, int, int]:
    """The field starting at ``pos`` at ``indent``: (is a message, ``pos``, its end), a message running to its
    closing line ``close`` (``"\\n" + indent + "}\\n"``). O(its first line), plus the search for that closing line."""
    nl = text.find(b"\n", pos)
    if nl < 0 or not text.startswith(indent, pos) or text[pos + len(indent)] == 0x20:
        raise _NotLaidOut("indentation")
    if text[nl - 1] == 0x7B:
        stop = text.find(close, nl - 1)
        if stop < 0:
            raise _NotLaidOut("unclosed message")
        return True, pos, stop + len(close)
    return False, pos, nl + 1


class SplitDump:
    """A dump text split by :func:`split_dump_text`; :meth:`build` makes its graph without the text."""

    def __init__(self, model: pb.ModelDef, bodies: list[tuple[list[_Op], Any]], source: str,
                 counted: Progress) -> None:
        self._model = model
        self._bodies = bodies
        self._source = source
        self._counted = counted

    def build(self) -> ir.Graph | None:
        """The graph, or None when decoding failed (the caller then parses the text whole)."""
        try:
            graph = codec.decode_model(self._model, source=self._source, bodies=self._bodies)
        except (_NotLaidOut, text_format.ParseError, codec.GeDumpError, UnicodeDecodeError, ValueError) as exc:
            _log.debug("%s: parsed whole (%s: %s)", self._source, type(exc).__name__, exc)
            return None
        finally:
            self._bodies = []
        self._counted.finish()
        return graph


def split_dump_text(text: bytes | str, source: str,
                    progress: Callable[[int, int], None] | None = None) -> SplitDump | None:
    """The first step of :func:`read_dump_text`: split the text and parse each op signature once. None when the
    text is not laid out as the printers lay it out. Nothing of ``text`` is kept, so the caller may drop it
    before :meth:`SplitDump.build`."""
    try:
        return _split(text.encode("utf-8") if isinstance(text, str) else text, source, progress)
    except (_NotLaidOut, text_format.ParseError, codec.GeDumpError, UnicodeDecodeError, ValueError) as exc:
        _log.debug("%s: parsed whole (%s: %s)", source, type(exc).__name__, exc)
        return None


def read_dump_text(text: bytes | str, source: str,
                   progress: Callable[[int, int], None] | None = None) -> ir.Graph | None:
    """The graph :func:`~gebench.io._ge_dump_codec.decode_model` gives for the parsed ``text`` (the file's bytes,
    UTF-8; a str is encoded first), or None when the text is not laid out as protobuf's printers lay it out or
    is not UTF-8 (the caller then parses it whole, and reports what is wrong).

    ``progress(done, total)`` is called with byte counts as the text is read (at most about a hundred times), the
    last time with ``done == total`` once the graph is built.

    Cost: O(len(text)) in C for the splitting, plus O(ops) Python steps and one parse per distinct op signature.
    """
    split = split_dump_text(text, source, progress)
    return None if split is None else split.build()


def _split(text: bytes, source: str, progress: Callable[[int, int], None] | None) -> SplitDump:
    if not text.endswith(b"\n"):
        raise _NotLaidOut("no final newline")
    reader = _Reader()
    rest: list[bytes] = []
    shells: list[bytes] = []
    bodies: list[tuple[list[_Op], Any]] = []
    total = len(text)
    counted = Progress(progress, total)
    pos = 0
    while pos < total:
        if not text.startswith(b"graph {\n", pos):
            _, start, pos = _field(text, pos, b"", b"\n}\n")
            rest.append(text[start:pos])
            continue
        # a graph's end is where its fields end: its text is scanned once, op by op
        fields, close = _body(text, pos + len(b"graph {\n"), b"  ")
        pos = close + len(b"}\n")
        shell: list[bytes] = []
        ops: list[_Op] = []
        # ops among other fields parse as ops listed together, so their order is all that counts
        for sub_message, a, b in fields:
            if sub_message and text.startswith(_OP_OPEN, a):
                ops.append(reader.op(text, a + len(_OP_OPEN), b - len(_OP_CLOSE) + 1))
                counted.advance(b - counted.done)
            else:
                shell.append(text[a:b])
        shells.append(b"".join(shell))
        bodies.append((ops, _decode))
    if not shells:
        raise _NotLaidOut("no graph")
    model = pb.ModelDef()
    text_format.Parse(b"".join(rest), model)
    if model.graph:
        raise _NotLaidOut("graph outside the layout")
    for shell_text in shells:
        shell = model.graph.add()
        text_format.Parse(shell_text, shell)
        if shell.op:
            raise _NotLaidOut("an op not in its own block")  # e.g. written on one line
    _log.debug("%s: %d ops, %d distinct op signatures", source, sum(len(ops) for ops, _ in bodies),
               len(reader.templates))
    return SplitDump(model, bodies, source, counted)
