"""Creating IR nodes whose anchors follow an op schema."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gebench.ir import Graph, Node, TensorDesc
from gebench.ir._tensor import _default_desc, _placeholder_desc

from ._catalogue import is_builtin_schema, require_schema
from ._schema import OpSchema

__all__ = ["make_node", "with_defaults", "missing_required_attrs", "anchor_names"]


def anchor_names(schema: OpSchema, dynamic_inputs: Mapping[str, int] | None = None,
                 dynamic_outputs: Mapping[str, int] | None = None) -> tuple[list[str], list[str]]:
    """Input and output anchor names of a node of ``schema`` with the given dynamic instance counts.

    A dynamic input ``x`` with 3 instances gives ``x0, x1, x2``; absent counts mean 0 instances.

    Raises:
        ValueError: a count names an entry that is not dynamic (or does not exist), or is negative.
    """
    return (_expand(schema, schema.inputs, dynamic_inputs or {}, "input"),
            _expand(schema, schema.outputs, dynamic_outputs or {}, "output"))


def _expand(schema: OpSchema, defs: tuple[Any, ...], counts: Mapping[str, int], what: str) -> list[str]:
    dynamic = {d.name for d in defs if d.kind == "dynamic"}
    for key, n in counts.items():
        if key not in dynamic:
            raise ValueError(f"op {schema.op_type!r} has no dynamic {what} {key!r} "
                             f"(dynamic {what}s: {sorted(dynamic) or 'none'})")
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise ValueError(f"op {schema.op_type!r}: instance count of dynamic {what} {key!r} must be an int >= 0, "
                             f"got {n!r}")
    names: list[str] = []
    for d in defs:
        if d.kind == "dynamic":
            names.extend(f"{d.name}{i}" for i in range(counts.get(d.name, 0)))
        else:
            names.append(d.name)
    return names


#: (op type, dynamic input counts, dynamic output counts) -> (schema, input names, optional-input flags,
#: output names). An entry is used only while the catalogue still returns the same schema object, which for a
#: catalogue op is always (those go to ``_FIXED_LAYOUTS`` and are used without asking the catalogue again).
#: The name lists are handed to every node made with that layout (``Node`` never changes its anchor-name lists
#: in place; see its docstring), so callers must not change them either.
_Layout = tuple[OpSchema, list[str], tuple[bool, ...], list[str]]
_LAYOUTS: dict[Any, _Layout] = {}
_FIXED_LAYOUTS: dict[Any, _Layout] = {}
_LAYOUTS_MAX = 4096


def _layout(op_type: str, dynamic_inputs: Mapping[str, int] | None,
            dynamic_outputs: Mapping[str, int] | None) -> _Layout:
    key: Any
    if not dynamic_inputs and not dynamic_outputs:
        key = op_type
        fixed = _FIXED_LAYOUTS.get(key)
    else:
        try:
            key = (op_type, tuple(dynamic_inputs.items()) if dynamic_inputs else (),
                   tuple(dynamic_outputs.items()) if dynamic_outputs else ())
            fixed = _FIXED_LAYOUTS.get(key)
        except TypeError:  # an unhashable count: the checks below report it
            key, fixed = (), None
    if fixed is not None:
        return fixed
    schema = require_schema(op_type)
    cached = _LAYOUTS.get(key) if key else None
    if cached is not None and cached[0] is schema:
        return cached
    in_names, out_names = anchor_names(schema, dynamic_inputs, dynamic_outputs)
    kinds = {d.name: d.kind for d in schema.inputs}
    entry = (schema, in_names, tuple(kinds.get(n) == "optional" for n in in_names), out_names)
    if key:
        table = _FIXED_LAYOUTS if is_builtin_schema(schema) else _LAYOUTS
        if len(table) >= _LAYOUTS_MAX:
            table.clear()
        table[key] = entry
    return entry


def make_node(graph: Graph, op_type: str, *, name: str | None = None,
              dynamic_inputs: Mapping[str, int] | None = None, dynamic_outputs: Mapping[str, int] | None = None,
              attrs: Mapping[str, Any] | None = None) -> Node:
    """Add an unconnected node of ``op_type`` whose anchors follow its schema. O(anchors + attrs).

    One input anchor per required/optional input, in IR order (optional ones hold
    :meth:`TensorDesc.placeholder` until fed; required ones a default desc); a dynamic input ``x`` with ``n``
    instances gives anchors ``x0..x{n-1}``. Outputs likewise. Only the given ``attrs`` are set: IR defaults are
    not added (use :func:`with_defaults`), matching what GE stores for attrs nobody set. The anchor layout of
    each (op type, dynamic counts) is worked out once and reused while the op's schema stays the same.

    Raises:
        UnknownOpError: ``op_type`` is neither a catalogue op nor a declared custom op.
        ValueError: a dynamic count names a non-dynamic entry or is negative.
        GraphError: ``name`` is taken.
    """
    _, in_names, optional, out_names = _layout(op_type, dynamic_inputs, dynamic_outputs)
    # plain loops: a comprehension costs a function call on Python 3.11, and nodes are made per rewrite
    in_descs = []
    for opt in optional:
        in_descs.append(_placeholder_desc() if opt else _default_desc())
    out_descs = []
    for _ in out_names:
        out_descs.append(_default_desc())
    return graph.add_node_trusted(op_type, name, dict(attrs) if attrs else {}, in_descs, out_descs,
                                 in_names, out_names)


def _make_node_fed(graph: Graph, op_type: str, name: str | None, attrs: dict[str, Any] | None,
                   feeds: list[Any], dynamic_inputs: Mapping[str, int] | None = None) -> Node:
    """:func:`make_node` (without dynamic outputs) for builders that feed the inputs right away: input ``i``
    starts with ``feeds[i]`` (a fresh TensorDesc, taken as it is) instead of a default desc that would be
    overwritten; ``None`` entries get the usual default/placeholder desc. ``attrs`` is a fresh dict the node
    takes as it is. Edges are the caller's job. O(anchors).

    Raises:
        UnknownOpError: unknown ``op_type``. ValueError: ``feeds`` does not have one entry per input anchor, or a
        dynamic count is bad. GraphError: ``name`` is taken.
    """
    in_descs, out_descs, in_names, out_names = fed_anchors(op_type, feeds, dynamic_inputs)
    return graph.add_node_trusted(op_type, name, attrs if attrs is not None else {}, in_descs, out_descs,
                                 in_names, out_names)


def fed_anchors(op_type: str, feeds: list[Any], dynamic_inputs: Mapping[str, int] | None = None
                ) -> tuple[list[TensorDesc], list[TensorDesc], list[str], list[str]]:
    """The anchors :func:`_make_node_fed` gives a node of ``op_type``: (input descs, output descs, input names,
    output names); input ``i`` takes ``feeds[i]`` as it is, or the default/placeholder desc when it is None. The
    name lists are shared (never change them in place). O(anchors).

    Raises:
        UnknownOpError: unknown ``op_type``. ValueError: ``feeds`` does not have one entry per input anchor.
    """
    _, in_names, optional, out_names = _layout(op_type, dynamic_inputs, None)
    if len(feeds) != len(optional):
        raise ValueError(f"op {op_type!r} has {len(optional)} input anchors, got {len(feeds)} feeds")
    in_descs = []
    for opt, fed in zip(optional, feeds):
        in_descs.append(fed if fed is not None else _placeholder_desc() if opt else _default_desc())
    out_descs = []
    for _ in out_names:
        out_descs.append(_default_desc())
    return in_descs, out_descs, in_names, out_names


def with_defaults(schema: OpSchema, attrs: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A new dict: a private copy of every optional attr's IR default, overlaid with ``attrs``.

    Required attrs missing from ``attrs`` stay missing (see :func:`missing_required_attrs`); attrs the schema does
    not declare are kept. O(attrs).
    """
    out = {a.name: a.default_copy() for a in schema.attrs if not a.required}
    if attrs:
        out.update(attrs)
    return out


def missing_required_attrs(schema: OpSchema, attrs: Mapping[str, Any]) -> list[str]:
    """Names of the schema's required attrs absent from ``attrs``, in IR order."""
    return [a.name for a in schema.attrs if a.required and a.name not in attrs]
