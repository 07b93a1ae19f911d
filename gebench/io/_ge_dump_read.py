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

from google.protobuf import text_encoding, text_format

from gebench import ir

from . import _ge_dump_codec as codec
from ._progress import Progress
from .proto import ge_ir_pb2 as pb

__all__ = ["read_dump_text"]

_log = logging.getLogger(__name__)

_ID = re.compile(r"    id: (-?[0-9]+)\n")
#: Lines of an op's attr values that hold per-op values: a tensor's bytes, a string, a string list's item.
_SLOT_PREFIXES = (("\n          data: ", 1), ("\n        s: ", 2), ("\n          s: ", 3))
_DATA_AT = "\n          data: "
_KEY_AT = '    attr {\n      key: "'
#: Attrs the decoder reads beyond their own value (anchor names, schema metadata): never slots.
_RESERVED = frozenset((*codec._ANCHOR_NAME_KEYS, *codec._SCHEMA_KEYS))
_DATA, _STRING, _ITEM = 1, 2, 3
_OP_OPEN = "  op {\n"
_OP_CLOSE = "\n  }\n"
_INPUT_KINDS = ('input: ""\n', 'input: "_:0"\n', 'input: "_:-1"\n')


_NO_DATA: list[str] = []


class _NotLaidOut(Exception):
    """The text deviates from the printers' layout; the caller parses it whole."""


def _literal(t: str, start: int) -> int:
    """The index of the closing quote of the literal whose body starts at ``start`` (after the opening quote)
    and which ends its line. Raising ``_NotLaidOut`` where ``text_format`` would read the line otherwise: the
    line does not end with a quote, or the body holds an unescaped quote or ends in an escaping backslash."""
    end = t.find("\n", start) - 1
    if end < start or t[end] != '"':
        raise _NotLaidOut("literal")
    if '"' in t[start:end] or t[end - 1] == "\\":
        # escapes pair from the left: without the escaped backslashes and quotes, no quote and no final
        # backslash may remain
        body = t[start:end].replace("\\\\", "").replace('\\"', "")
        if '"' in body or body.endswith("\\"):
            raise _NotLaidOut("literal")
    return end


def _unescape(literal: str) -> bytes:
    """``text_encoding.CUnescape`` (what ``text_format`` does with a literal's body), without its regex pass
    when the body has no ``\\x`` escape for that pass to rewrite."""
    if "\\x" in literal:
        return text_encoding.CUnescape(literal)
    return literal.encode("utf-8").decode("unicode_escape").encode("raw_unicode_escape")


def _string(literal: str) -> str:
    """The value ``text_format`` gives a string field for the body of a double-quoted literal."""
    if "\\" not in literal:
        return literal
    return _unescape(literal).decode("utf-8")


class _Op:
    """One op block: what is unique to it, and its signature."""

    __slots__ = ("name", "type", "id", "inputs", "data", "template")

    def __init__(self, name: str, inputs: list[str], op_id: int, data: list[str], template: _Template) -> None:
        self.name = name
        self.inputs = inputs
        self.id = op_id
        self.data = data
        self.template = template
        self.type = template.type


class _Template:
    """An op signature, parsed and decoded once."""

    __slots__ = ("text", "kinds", "type", "decoded", "peers", "slots", "strings", "mutable", "_op")

    def __init__(self, text: str, kinds: tuple[int, ...], slot_keys: list[tuple[int, str]]) -> None:
        self.text = text
        self.kinds = kinds
        #: some slots are strings (an op matches this template only after its strings are cut out too)
        self.strings = any(kind != _DATA for kind, _ in slot_keys)
        op = pb.OpDef()
        body = "".join(_INPUT_KINDS[k] for k in kinds)
        text_format.Parse('name: "_"\n' + body + text, op)
        self.type = op.type
        #: per attr with slots: (key, the AttrDef as parsed, [(slot kind, list index)] in slot order)
        self.slots: list[tuple[str, pb.AttrDef, list[tuple[int, int]]]] = []
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
            self.slots.append((key, kept, places))
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
        for key, kept, places in template.slots:
            msg = pb.AttrDef()
            msg.CopyFrom(kept)
            for kind, index in places:
                raw = _unescape(next(values))
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


class _Reader:
    def __init__(self) -> None:
        self.templates: dict[tuple[str, tuple[int, ...]], _Template] = {}

    def _slots(self, rest: str, *, strings: bool) -> tuple[list[str], list[tuple[int, str]], str]:
        """Cut the per-op values out of an op's attr entries: tensor bytes, and with ``strings`` the strings of
        attrs that are not :data:`_RESERVED`. Returns (their literals, (slot kind, attr key) per literal, the
        attr text with numbered markers in their place)."""
        hits = []
        for prefix, kind in _SLOT_PREFIXES if strings else _SLOT_PREFIXES[:1]:
            i = rest.find(prefix)
            while i >= 0:
                hits.append((i + 1, kind))
                i = rest.find(prefix, i + 1)
        data: list[str] = []
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
                key = _string(rest[at_key + len(_KEY_AT):rest.index('"\n', at_key + len(_KEY_AT))])
            if kind != _DATA and key in _RESERVED:
                continue
            prefix = _SLOT_PREFIXES[kind - 1][0][1:]
            start = at_line + len(prefix) + 1
            if rest[start - 1] != '"':
                raise _NotLaidOut("value literal")
            end = _literal(rest, start)
            pieces.append(rest[q:at_line])
            pieces.append(f'{prefix}"#{len(data)}"\n')
            data.append(rest[start:end])
            slot_keys.append((kind, key))
            q = end + 2
        if not data:
            return data, slot_keys, rest
        pieces.append(rest[q:])
        return data, slot_keys, "".join(pieces)

    def op(self, t: str) -> _Op:
        """Split one op block (its fields, each line ending in ``\\n``) into its unique parts and signature."""
        p = 0
        name = ""
        if t.startswith('    name: "', 0):
            end = _literal(t, 11)
            name = _string(t[11:end])
            p = end + 2
        start = p
        if t.startswith("    type: ", p):
            p = t.index("\n", p) + 1
        type_line = t[start:p]
        inputs = []
        kinds = []
        while t.startswith('    input: "', p):
            end = _literal(t, p + 12)
            literal = t[p + 12:end]
            inputs.append(literal)
            kinds.append(0 if not literal else 2 if literal.endswith(":-1") else 1)
            p = end + 2
        q = p  # the attr entries follow the inputs, one block each
        while t.startswith("    attr {\n", q):
            q = t.find("\n    }\n", q)
            if q < 0:
                raise _NotLaidOut("unclosed attr")
            q += len("\n    }\n")
        rest = t[p:q]
        tail = t[q:]
        op_id = 0
        at = 0 if tail.startswith("    id: ") else tail.find("\n    id: ") + 1
        if at > 0 or tail.startswith("    id: "):
            m = _ID.match(tail, at)
            if m is None:
                raise _NotLaidOut("id")
            op_id = int(m.group(1))
            tail = tail[:at] + tail[m.end():]
        kinds_key = tuple(kinds)
        if "\n          data: " in rest:
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
                if signature.startswith(("    name: ", "    input: ", "    id: ")) or "\n    name: " in signature \
                        or "\n    input: " in signature or "\n    id: " in signature or _DATA_AT in tail:
                    raise _NotLaidOut("fields out of order")
                template = self.templates[key] = _Template(signature, kinds_key, slot_keys)
        return _Op(name, inputs, op_id, data, template)


def _blocks(text: str, pos: int, end: int, indent: str) -> list[tuple[bool, int, int]]:
    """The fields of a message body ``text[pos:end]`` at ``indent``: (is a message, start, end) per field."""
    out = []
    close = "\n" + indent + "}\n"
    while pos < end:
        nl = text.find("\n", pos, end)
        if nl < 0 or not text.startswith(indent, pos) or text[pos + len(indent)] == " ":
            raise _NotLaidOut("indentation")
        if text[nl - 1] == "{":
            stop = text.find(close, nl - 1, end)
            if stop < 0:
                raise _NotLaidOut("unclosed message")
            out.append((True, pos, stop + len(close)))
            pos = stop + len(close)
        else:
            out.append((False, pos, nl + 1))
            pos = nl + 1
    return out


def read_dump_text(text: str, source: str, progress: Callable[[int, int], None] | None = None) -> ir.Graph | None:
    """The graph :func:`~gebench.io._ge_dump_codec.decode_model` gives for the parsed ``text``, or None when the
    text is not laid out as protobuf's printers lay it out (the caller then parses it whole).

    ``progress(done, total)`` is called with character counts as the text is read (at most about a hundred
    times), the last time with ``done == total`` once the graph is built.

    Cost: O(len(text)) in C for the splitting, plus O(ops) Python steps and one parse per distinct op signature.
    """
    try:
        return _read(text, source, progress)
    except (_NotLaidOut, text_format.ParseError, codec.GeDumpError, UnicodeDecodeError, ValueError) as exc:
        _log.debug("%s: parsed whole (%s: %s)", source, type(exc).__name__, exc)
        return None


def _read(text: str, source: str, progress: Callable[[int, int], None] | None) -> ir.Graph:
    if not text.endswith("\n"):
        raise _NotLaidOut("no final newline")
    reader = _Reader()
    rest: list[str] = []
    shells: list[str] = []
    bodies: list[tuple[list[_Op], Any]] = []
    total = len(text)
    counted = Progress(progress, total)
    for is_message, start, stop in _blocks(text, 0, total, ""):
        if not (is_message and text.startswith("graph {\n", start)):
            rest.append(text[start:stop])
            continue
        shell: list[str] = []
        ops: list[_Op] = []
        # ops among other fields parse as ops listed together, so their order is all that counts
        for sub_message, a, b in _blocks(text, start + len("graph {\n"), stop - 2, "  "):
            if sub_message and text.startswith(_OP_OPEN, a):
                ops.append(reader.op(text[a + len(_OP_OPEN):b - len(_OP_CLOSE) + 1]))
                counted.advance(b - counted.done)
            else:
                shell.append(text[a:b])
        shells.append("".join(shell))
        bodies.append((ops, _decode))
    if not shells:
        raise _NotLaidOut("no graph")
    model = pb.ModelDef()
    text_format.Parse("".join(rest), model)
    if model.graph:
        raise _NotLaidOut("graph outside the layout")
    for shell_text in shells:
        text_format.Parse(shell_text, model.graph.add())
    _log.debug("%s: %d ops, %d distinct op signatures", source, sum(len(ops) for ops, _ in bodies),
               len(reader.templates))
    graph = codec.decode_model(model, source=source, bodies=bodies)
    counted.finish()
    return graph
