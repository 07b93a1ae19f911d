"""Shape and dtype inference: the rule registry, the per-node context and the graph driver.

Each op family lives in its own module (``_infer_elementwise``, ``_infer_nn``, ``_infer_shape_ops``,
``_infer_index``) and registers small rules with :func:`register_infer`. A rule reads input descs and constant
input values through an :class:`InferContext` and writes output descs with :meth:`InferContext.set_output`.

Conventions (GE's): a dim of ``-1`` is unknown, a shape ``(-2,)`` has unknown rank. When a value a rule needs
(a shape, perm or axes input) is not constant, the rule produces ``-1`` dims (or unknown rank) instead of failing.
Inconsistent inputs (mismatched broadcast dims, a contraction dim that differs) raise :class:`InferenceError`.

Small integer tensors computed along the way (``Shape`` of a static tensor, ``Gather``/``Concat``/``Cast``/... of
known values) are remembered for the rest of an :func:`infer_graph` run, so the ``Shape → Gather → Concat →
Reshape`` chains of exported transformer models infer static shapes.
"""

from __future__ import annotations

import heapq
import logging
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from gebench.ir import UNKNOWN_DIM, UNKNOWN_RANK, DataType, Format, Graph, Node, TensorDesc, TensorValue

from ._catalogue import catalogue_generation, get_schema
from ._schema import OpSchema
from .errors import InferenceError

__all__ = [
    "InferContext",
    "InferRule",
    "register_infer",
    "infer_node",
    "infer_graph",
    "inferable_op_types",
    "UNKNOWN_SHAPE",
    "broadcast_shapes",
    "known",
    "normalize_axis",
]

_log = logging.getLogger(__name__)

#: The shape of a tensor whose rank is unknown.
UNKNOWN_SHAPE: tuple[int, ...] = (UNKNOWN_RANK,)

#: Largest tensor (element count) whose value inference keeps for later rules.
MAX_FOLDED_ELEMENTS = 4096

InferRule = Callable[["InferContext"], None]
_RULES: dict[str, InferRule] = {}
_MISSING = object()


def register_infer(*op_types: str, replace: bool = False) -> Callable[[InferRule], InferRule]:
    """Decorator registering a rule ``fn(ctx: InferContext) -> None`` as the inference rule of ``op_types``.

    Use it for custom ops too: ``@register_infer("AddCustom")``. ``replace=True`` swaps an existing rule (for
    code that is reloaded).

    Raises:
        ValueError: an op type already has a different rule and ``replace`` is False.
    """

    def deco(rule: InferRule) -> InferRule:
        for op in op_types:
            old = _RULES.get(op)
            if old is not None and old is not rule and not replace:
                raise ValueError(f"op {op!r} already has inference rule {old.__module__}.{old.__qualname__}; "
                                 "pass replace=True to swap it")
            _RULES[op] = rule
        _rules_generation[0] += 1
        return rule

    return deco


def inferable_op_types() -> list[str]:
    """Op types that have an inference rule, sorted."""
    _load_rules()
    return sorted(_RULES)


def _load_rules() -> None:
    # The family modules register themselves on import; importing here avoids an import cycle with this module.
    if _rules_loaded:
        return
    from . import _infer_elementwise, _infer_index, _infer_nn, _infer_shape_ops  # noqa: F401

    _MEMO_SAFE.update(rule for rule in _RULES.values() if rule.__module__.startswith(__name__))
    _rules_loaded.append(True)


_rules_loaded: list[bool] = []
#: The built-in rules: deterministic functions of what they read through an InferContext, so their results may be
#: reused (:class:`RuleMemo`); a rule registered later by the user is not in it and always runs.
_MEMO_SAFE: set[InferRule] = set()

#: (id of a schema, input anchors, output anchors) -> (the schema, its input layout, its output layout); the schema
#: is kept so that its id is not reused. Few entries: one per op layout in use. The layouts are read, never changed.
_LAYOUTS: dict[tuple[int, int, int], tuple[OpSchema, dict[str, list[int]], dict[str, list[int]]]] = {}


def _layouts(schema: OpSchema, n_in: int, n_out: int) -> tuple[dict[str, list[int]], dict[str, list[int]]]:
    """``schema``'s input and output layouts for a node with these anchor counts, worked out once. O(1) after."""
    key = (id(schema), n_in, n_out)
    entry = _LAYOUTS.get(key)
    if entry is None or entry[0] is not schema:
        entry = _LAYOUTS[key] = (schema, schema.input_layout(n_in), schema.output_layout(n_out))
    return entry[1], entry[2]


# ---------------------------------------------------------------------------------------------- shape helpers
def known(shape: Sequence[int]) -> bool:
    """True when ``shape`` has a known rank and no unknown dim."""
    return all(d >= 0 for d in shape)


def is_unknown_rank(shape: Sequence[int]) -> bool:
    return tuple(shape) == UNKNOWN_SHAPE


def normalize_axis(axis: int, rank: int, what: str = "axis") -> int:
    """Map a possibly negative axis into ``[0, rank)``.

    Raises:
        ValueError: the axis is out of range (the caller turns it into an InferenceError).
    """
    a = int(axis)
    if a < 0:
        a += rank
    if not 0 <= a < rank:
        raise ValueError(f"{what} {axis} is out of range for rank {rank}")
    return a


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """Numpy broadcasting of shapes that may hold unknown dims.

    Per aligned dim: known dims other than 1 must agree; a ``-1`` next to a known ``n > 1`` gives ``n``; ``-1``
    next to only 1s or ``-1`` gives ``-1``. Any unknown-rank operand gives unknown rank.

    Raises:
        ValueError: two known dims differ and neither is 1.
    """
    if len(shapes) == 2:  # the usual call: one shape ends with the other (equal shapes, a scalar, a bias)
        a, b = shapes
        if type(a) is tuple and type(b) is tuple:
            la, lb = len(a), len(b)
            if la >= lb:
                if (not lb or a[la - lb:] == b) and (not la or min(a) >= UNKNOWN_DIM):
                    return a
            elif (not la or b[lb - la:] == a) and min(b) >= UNKNOWN_DIM:
                return b
    if any(is_unknown_rank(s) for s in shapes):
        return UNKNOWN_SHAPE
    rank = max((len(s) for s in shapes), default=0)
    out: list[int] = []
    for i in range(rank):
        dims = [s[len(s) - rank + i] for s in shapes if len(s) - rank + i >= 0]
        fixed = {d for d in dims if d >= 0 and d != 1}
        if len(fixed) > 1:
            raise ValueError(f"shapes {[list(s) for s in shapes]} do not broadcast (dim {i - rank}: {sorted(fixed)})")
        if fixed:
            out.append(fixed.pop())
        elif UNKNOWN_DIM in dims or any(d < 0 for d in dims):
            out.append(UNKNOWN_DIM)
        else:
            out.append(1)
    return tuple(out)


def prod(dims: Iterable[int]) -> int:
    """Product of dims, ``-1`` if any is unknown."""
    total = 1
    for d in dims:
        if d < 0:
            return UNKNOWN_DIM
        total *= d
    return total


def conv_out(size: int, kernel: int, stride: int, pad_before: int, pad_after: int, dilation: int = 1,
             *, ceil_mode: bool = False) -> int:
    """Output length of a convolution/pooling window sweep; ``-1`` when ``size`` is unknown."""
    if size < 0 or kernel < 0:
        return UNKNOWN_DIM
    eff = dilation * (kernel - 1) + 1
    span = size + pad_before + pad_after - eff
    if span < 0:
        raise ValueError(f"window {eff} (kernel {kernel}, dilation {dilation}) exceeds padded size "
                         f"{size + pad_before + pad_after}")
    if ceil_mode:
        out = -(-span // stride) + 1
        # the last window must start inside the input or the leading padding (PyTorch/ONNX rule)
        if (out - 1) * stride >= size + pad_before:
            out -= 1
        return out
    return span // stride + 1


def same_out(size: int, stride: int) -> int:
    """Output length with SAME padding."""
    return UNKNOWN_DIM if size < 0 else -(-size // stride)


# ---------------------------------------------------------------------------------------------- context
class InferContext:
    """What one rule sees of one node: input descs and values by IR name, attrs with IR defaults, outputs.

    ``values`` maps ``(producer node id, output port)`` to arrays known in this run (beyond Const values).
    ``op_type`` is the node's op type. A rule that reads only through the methods and ``op_type``, ``schema``,
    ``num_outputs`` and ``allow_unknown_ops`` (not ``node``, ``graph`` or ``values``) can have its result reused
    for the next node that gives it the same answers (see :class:`_Recording`); the built-in rules do so where
    they can.
    """

    def __init__(self, graph: Graph, node: Node, schema: OpSchema | None,
                 values: dict[tuple[int, int], np.ndarray] | None = None, *, allow_unknown_ops: bool = False) -> None:
        self._graph = graph
        self._node = node
        self.op_type = node._op_type
        self.schema = schema
        self._values = values if values is not None else {}
        #: passed on when a rule infers a subgraph (If, PartitionedCall)
        self.allow_unknown_ops = allow_unknown_ops
        if schema is not None:
            self._in, self._out = _layouts(schema, len(node.inputs), len(node.outputs))
        else:
            self._in = {}
            self._out = {}

    @property
    def graph(self) -> Graph:
        """The graph the node is in."""
        return self._graph

    @property
    def node(self) -> Node:
        """The node being inferred."""
        return self._node

    @property
    def values(self) -> dict[tuple[int, int], np.ndarray]:
        """Values known in this run, by ``(producer node id, output port)``."""
        return self._values

    # -- errors
    def fail(self, reason: str) -> InferenceError:
        """An InferenceError naming this node; ``raise ctx.fail(...)``."""
        node = self._node
        return InferenceError(f"cannot infer {node._op_type} node {node._name!r}: {reason}",
                              node_name=node._name, op_type=node._op_type)

    # -- inputs
    def _index(self, which: str | int) -> int | None:
        try:
            return _input_anchor(self._in, len(self._node.inputs), which)
        except KeyError:
            raise self.fail(f"rule asked for input {which!r}, which the schema does not declare") from None

    def indices(self, name: str) -> list[int]:
        """Anchor indices of IR input ``name`` (several for a dynamic input)."""
        return list(self._in.get(name, []))

    def output_indices(self, name: str) -> list[int]:
        return list(self._out.get(name, []))

    def has(self, which: str | int) -> bool:
        """True when the input anchor exists and is fed (or at least is not an unfed placeholder)."""
        i = self._index(which)
        if i is None:
            return False
        return self._graph.input_sources(self._node)[i] is not None or not self._node.inputs[i].is_placeholder

    def desc(self, which: str | int) -> TensorDesc:
        """The desc of an input (raises when it is absent)."""
        i = self._index(which)
        if i is not None:
            node = self._node
            d = node.inputs[i]  # what has(i) checks, inlined: this runs for every input of every node
            if self._graph.input_sources(node)[i] is not None or not d.is_placeholder:
                return d
        raise self.fail(f"input {which!r} is not connected")

    def shape(self, which: str | int) -> tuple[int, ...]:
        return self.desc(which).shape

    def dtype(self, which: str | int) -> DataType:
        return self.desc(which).dtype

    def value(self, which: str | int) -> np.ndarray | None:
        """The constant value feeding an input (a Const producer or a value known in this run), or None."""
        i = self._index(which)
        if i is None:
            return None
        return _input_value(self._graph, self._node, i, self._values)

    def small_value(self, which: str | int) -> np.ndarray | None:
        """Like :meth:`value` but None for tensors too big to fold (more than ``MAX_FOLDED_ELEMENTS``)."""
        v = self.value(which)
        if v is None or (v.size if type(v) is np.ndarray else np.asarray(v).size) > MAX_FOLDED_ELEMENTS:
            return None
        return v

    def int_values(self, which: str | int) -> list[int] | None:
        """A constant input as a flat list of ints, or None when not constant."""
        v = self.value(which)
        if v is None:
            return None
        return [int(x) for x in np.asarray(v).ravel()]

    # -- attrs
    def attr(self, name: str, default: Any = _MISSING) -> Any:
        """The node's attr, else the schema's IR default, else ``default``.

        Raises:
            InferenceError: a required attr is missing and no ``default`` was given.
        """
        attrs = self._node.attrs
        if name in attrs:
            return attrs[name]
        if self.schema is not None:
            a = self.schema.attr(name)
            if a is not None and not a.required:
                return a.default_copy()
        if default is _MISSING:
            raise self.fail(f"required attr {name!r} is not set")
        return default

    # -- outputs
    @property
    def num_outputs(self) -> int:
        return len(self._node.outputs)

    def _targets(self, which: str | int) -> list[int] | None:
        """The output anchors ``which`` names (None: an optional output the node does not carry)."""
        if isinstance(which, str):
            return self._out.get(which) or None
        return [which]

    def set_output(self, which: str | int, dtype: DataType | int, shape: Sequence[int]) -> None:
        """Write dtype, shape and origin shape of an output (all anchors of a dynamic output given by name);
        formats are left as they are. An output name the node has no anchor for is ignored."""
        targets = self._targets(which)
        if targets is None:
            return  # the node does not carry that (optional) output anchor
        n = len(self._node.outputs)
        for i in targets:
            if i >= n:
                raise self.fail(f"output {i} does not exist (node has {n} outputs)")
        self._write(targets, *_normal_output(dtype, shape))

    def _write(self, targets: list[int], dtype: DataType, shape: tuple[int, ...]) -> None:
        """What :meth:`set_output` writes, its arguments checked and normalised."""
        _write_outputs(self._graph, self._node, targets, dtype, shape)

    def set_value(self, index: int, array: np.ndarray | None) -> None:
        """Remember the value of output ``index`` for later rules (only small tensors are kept)."""
        if array is not None and np.asarray(array).size <= MAX_FOLDED_ELEMENTS:
            self._values[(self._node.id, index)] = np.asarray(array)


def _input_anchor(layout: dict[str, list[int]], n_inputs: int, which: str | int) -> int | None:
    """The input anchor ``which`` (an index, or an IR input name looked up in ``layout``) names on a node with
    ``n_inputs`` input anchors; None when there is no such anchor (an optional input the node does not carry).

    Raises:
        KeyError: ``which`` is a name ``layout`` does not declare.
    """
    if isinstance(which, int):
        return which if 0 <= which < n_inputs else None
    idx = layout[which]
    return idx[0] if idx else None


def _input_value(graph: Graph, node: Node, index: int, values: dict[tuple[int, int], np.ndarray]) -> Any:
    """:meth:`InferContext.value` of input anchor ``index``."""
    prod = graph.input_sources(node)[index]
    if prod is None:
        return None
    src = graph.node(prod[0])
    if src._op_type in _CONST_TYPES:
        val = src.attrs.get("value")
        if isinstance(val, TensorValue):
            return val.array
    return values.get(prod)


def _normal_output(dtype: DataType | int, shape: Sequence[int]) -> tuple[DataType, tuple[int, ...]]:
    """``dtype`` as a DataType and ``shape`` as a tuple of ints."""
    new_dtype = dtype if type(dtype) is DataType else DataType(dtype)
    if type(shape) is tuple:
        for x in shape:  # a plain loop: no generator for all() on Python 3.11
            if type(x) is not int:
                return new_dtype, tuple(map(int, shape))
        return new_dtype, shape
    return new_dtype, tuple(map(int, shape))


def _write_outputs(graph: Graph, node: Node, targets: Sequence[int], dtype: DataType, shape: tuple[int, ...]) -> None:
    """Set dtype, shape and origin shape of the output anchors ``targets`` (all exist); only a real change touches
    the desc (which may copy it)."""
    outputs = node.outputs
    for i in targets:
        d = outputs[i]
        if d.dtype != dtype or d.shape != shape or d.origin_shape != shape:
            d = graph.touch_desc(node, True, i)
            d.dtype = dtype
            d.shape = shape
            d.origin_shape = shape


# ---------------------------------------------------------------------------------------------- rule memo
#: the key part for an attr the node does not set, an input name or index that reaches no anchor, an unfed placeholder
_ABSENT = object()


class _Recording(InferContext):
    """An :class:`InferContext` that records what the rule reads (``reads``: ``("a", attr name)``, ``("d",
    input)`` for a desc, ``("h", input)`` for :meth:`has`, ``("v", input)`` for a value) and writes (``writes``:
    the output anchors, dtype and shape of each :meth:`set_output`), and notes (``opaque``) when the result may
    depend on more than that: the rule read ``node``, ``graph`` or ``values``, found a value known, or set one.
    """

    def __init__(self, graph: Graph, node: Node, schema: OpSchema | None,
                 values: dict[tuple[int, int], np.ndarray] | None, allow_unknown_ops: bool) -> None:
        super().__init__(graph, node, schema, values, allow_unknown_ops=allow_unknown_ops)
        self.reads: list[tuple[str, str | int]] = []
        self.writes: list[tuple[list[int], DataType, tuple[int, ...]]] = []
        self.opaque = False

    @property
    def graph(self) -> Graph:
        self.opaque = True
        return self._graph

    @property
    def node(self) -> Node:
        self.opaque = True
        return self._node

    @property
    def values(self) -> dict[tuple[int, int], np.ndarray]:
        self.opaque = True
        return self._values

    def has(self, which: str | int) -> bool:
        self.reads.append(("h", which))
        return super().has(which)

    def desc(self, which: str | int) -> TensorDesc:
        self.reads.append(("d", which))
        d = super().desc(which)
        if d.has_attrs:
            self.opaque = True  # the rule may read the desc's attrs, which the key leaves out
        return d

    def value(self, which: str | int) -> np.ndarray | None:
        self.reads.append(("v", which))
        v = super().value(which)
        if v is not None:
            self.opaque = True
        return v

    def attr(self, name: str, default: Any = _MISSING) -> Any:
        self.reads.append(("a", name))
        return super().attr(name, default)

    def _write(self, targets: list[int], dtype: DataType, shape: tuple[int, ...]) -> None:
        self.writes.append((list(targets), dtype, shape))
        super()._write(targets, dtype, shape)

    def set_value(self, index: int, array: np.ndarray | None) -> None:
        self.opaque = True
        super().set_value(index, array)


class RuleMemo:
    """The results of one op type's rule in one inference run, keyed by what the rule read.

    A rule is a deterministic function of what it reads through :class:`InferContext`'s methods. ``items`` is
    the union of what its recorded runs read (in first-read order); a run that read nothing else than those, with
    the same answers, takes the same steps and writes the same outputs. So a node whose answers to ``items`` equal
    a recorded run's gets that run's writes replayed instead of running the rule: one rule run per distinct
    combination (a transformer's layers repeat a handful). Runs that were ``opaque`` (see :class:`_Recording`)
    are not kept; after many of them and few replays the memo turns itself off for the rest of the run.

    Used only for the built-in rules (:data:`_MEMO_SAFE`): a rule registered by the user always runs.
    """

    __slots__ = ("items", "seen", "table", "opaque_runs", "hits", "off", "_resolved")

    def __init__(self) -> None:
        self.items: list[tuple[str, str | int]] = []
        self.seen: set[tuple[str, str | int]] = set()
        self.table: dict[tuple[Any, ...], list[tuple[list[int], DataType, tuple[int, ...]]]] = {}
        self.opaque_runs = 0
        self.hits = 0
        self.off = False
        #: (input anchors, output anchors) -> ``items`` with input names resolved to anchor indices (None: absent)
        self._resolved: dict[tuple[int, int], list[tuple[str, Any]]] = {}

    def _resolve(self, schema: OpSchema | None, n_in: int, n_out: int) -> list[tuple[str, Any]]:
        """``items`` for a node with these anchor counts: input names as :meth:`InferContext._index` maps them."""
        layout = _layouts(schema, n_in, n_out)[0] if schema is not None else {}
        resolved: list[tuple[str, Any]] = []
        for kind, which in self.items:
            if kind != "a":
                try:
                    which = _input_anchor(layout, n_in, which)
                except KeyError:  # a name the schema does not declare: the rule raised for it
                    which = None
            resolved.append((kind, which))
        self._resolved[(n_in, n_out)] = resolved
        return resolved

    def key(self, graph: Graph, node: Node, schema: OpSchema | None,
            values: dict[tuple[int, int], np.ndarray]) -> tuple[Any, ...] | None:
        """The answers ``node`` gives to ``items`` (None when a desc carries attrs, which a key leaves out). O(items)."""
        inputs = node.inputs
        n_in = len(inputs)
        n_out = len(node.outputs)
        resolved = self._resolved.get((n_in, n_out))
        if resolved is None:
            resolved = self._resolve(schema, n_in, n_out)
        key: list[Any] = [n_in, n_out]
        sources = graph.input_sources(node)
        attrs = node.attrs
        for kind, i in resolved:
            if kind == "a":
                v = attrs.get(i, _ABSENT)
                t = v.__class__
                if t is list:
                    v = (tuple(v), tuple(map(type, v)))
                key.append(t)
                key.append(v)
            elif i is None:
                key.append(_ABSENT)
            elif kind == "d":
                d = inputs[i]
                if d._attrs:
                    return None
                if sources[i] is None and d.is_placeholder:
                    key.append(_ABSENT)
                else:
                    key.append((d.dtype, d.shape, d.format, d.origin_format, d.origin_shape, d.origin_dtype))
            elif kind == "v":
                key.append(_input_value(graph, node, i, values) is None)
            else:  # "h"
                key.append(sources[i] is not None or not inputs[i].is_placeholder)
        return tuple(key)  # may hold an attr value that is not hashable (a dict, an array): callers catch TypeError

    def learn(self, recording: _Recording, graph: Graph, node: Node, schema: OpSchema | None,
              values: dict[tuple[int, int], np.ndarray], key: tuple[Any, ...] | None) -> None:
        """Keep what ``recording`` wrote under ``node``'s key (``key``: the one worked out before the run, if any)."""
        if recording.opaque:
            self.opaque_runs += 1
            if self.opaque_runs >= 16 and self.opaque_runs > 4 * self.hits:
                self.off = True
                self.table.clear()
            return
        grew = False
        for item in recording.reads:
            if item not in self.seen:
                self.seen.add(item)
                self.items.append(item)
                grew = True
        if grew:
            self.table.clear()  # keys made of fewer items would say too little
            self._resolved.clear()
            key = self.key(graph, node, schema, values)
        elif key is None:
            return
        if key is not None:
            try:
                self.table[key] = recording.writes
            except TypeError:  # an attr value that cannot be part of a key
                pass


# ---------------------------------------------------------------------------------------------- driver
def _sync_inputs(graph: Graph, node: Node) -> None:
    """Copy dtype and shape of each producer's output desc onto the connected input desc, as GE does before
    inferring a node. A format the input desc states (an importer may set NCHW) is kept; an unset one (ND or
    RESERVED) takes the producer's."""
    node_of = graph.node
    port = -1
    for prod in graph.input_sources(node):
        port += 1
        if prod is None:
            continue
        out = node_of(prod[0]).outputs[prod[1]]
        d = node.inputs[port]
        unset = d.format in _UNSET_FORMATS
        if (d.dtype != out.dtype or d.shape != out.shape or d.origin_shape != out.origin_shape
                or d.origin_dtype != out.origin_dtype
                or (unset and (d.format != out.format or d.origin_format != out.origin_format))):
            d = graph.touch_desc(node, False, port)  # only a real change touches (it may copy the desc)
            d.dtype, d.shape = out.dtype, out.shape
            d.origin_shape, d.origin_dtype = out.origin_shape, out.origin_dtype
            if unset:
                d.format, d.origin_format = out.format, out.origin_format


_UNSET_FORMATS = frozenset({Format.FORMAT_ND, Format.FORMAT_RESERVED})
_CONST_TYPES = frozenset({"Const", "Constant"})


def infer_node(graph: Graph, node: Node, *, values: dict[tuple[int, int], np.ndarray] | None = None,
               allow_unknown_ops: bool = False) -> None:
    """Infer the output dtypes and shapes of ``node``. O(rank) for most ops.

    Input descs are first refreshed from their producers' output descs. Const inputs are read from the
    producers' ``value`` attrs; ``values`` maps ``(node id, output port)`` to tensors known in the same run
    (pass one dict to successive calls to let ``Shape → ... → Reshape`` chains fold; :func:`infer_graph` does).
    ``allow_unknown_ops`` applies to the subgraphs of If/PartitionedCall nodes (see :func:`infer_graph`).

    Raises:
        InferenceError: the op has no rule, or its inputs are inconsistent (message names node and reason).
    """
    _load_rules()
    _sync_inputs(graph, node)
    rule = _RULES.get(node.op_type)
    if rule is None:
        raise _no_rule(node)
    _apply_rule(graph, node, rule, get_schema(node.op_type), values, allow_unknown_ops)


def _no_rule(node: Node) -> InferenceError:
    return InferenceError(
        f"cannot infer {node.op_type} node {node.name!r}: no inference rule for op type {node.op_type!r}; "
        "register one with gebench.ops.register_infer",
        node_name=node.name, op_type=node.op_type)


def _apply_rule(graph: Graph, node: Node, rule: InferRule, schema: OpSchema | None,
                values: dict[tuple[int, int], np.ndarray] | None, allow_unknown_ops: bool,
                memo: RuleMemo | None = None) -> None:
    """Run ``rule`` on ``node`` (its inputs synced); a rule's plain error becomes an InferenceError naming it.

    With a ``memo`` (the op type's, for a built-in rule): the writes of an earlier run that read the same are
    replayed instead when there is one, else the run is recorded for the nodes after it."""
    if memo is None or memo.off:
        ctx = InferContext(graph, node, schema, values, allow_unknown_ops=allow_unknown_ops)
    else:
        known = values if values is not None else {}
        key = memo.key(graph, node, schema, known)
        try:
            writes = memo.table.get(key) if key is not None else None
        except TypeError:  # an attr value that cannot be part of a key: run the rule
            writes = key = None
        if writes is not None:
            memo.hits += 1
            for targets, dtype, shape in writes:
                _write_outputs(graph, node, targets, dtype, shape)
            return
        ctx = _Recording(graph, node, schema, known, allow_unknown_ops)
    try:
        rule(ctx)
    except InferenceError:
        raise
    except (ValueError, IndexError, KeyError, TypeError, OverflowError, ZeroDivisionError) as exc:
        raise ctx.fail(str(exc)) from exc
    if type(ctx) is _Recording:
        memo.learn(ctx, graph, node, schema, ctx._values, key)  # type: ignore[union-attr]


class InferenceState:
    """What a whole-graph inference leaves on the graph (``Graph._inference``), so that the next one can redo
    only what changed: the ids of nodes changed since (the graph adds them: new nodes, nodes whose inputs were
    rewired, nodes touched for an in-place change), the values folded per ``(node id, output port)``, the
    ``allow_unknown_ops`` it ran with and the rule/catalogue generation it saw."""

    __slots__ = ("dirty", "values", "allow_unknown_ops", "key")

    def __init__(self, values: dict[tuple[int, int], np.ndarray], allow_unknown_ops: bool,
                 key: tuple[int, int]) -> None:
        self.dirty: set[int] = set()
        self.values = values
        self.allow_unknown_ops = allow_unknown_ops
        self.key = key

    def copy(self) -> InferenceState:
        """An independent state for a copy of the graph (the folded arrays are shared: nothing writes them)."""
        clone = InferenceState(dict(self.values), self.allow_unknown_ops, self.key)
        clone.dirty = set(self.dirty)
        return clone


def _state_key() -> tuple[int, int]:
    """Changes when an inference rule or a custom-op declaration changes (results may then differ)."""
    return _rules_generation[0], catalogue_generation()


_rules_generation = [0]

#: the largest share of a graph's nodes changed since its last inference that :func:`infer_graph` re-infers
#: incrementally; above it a whole inference (same result) costs about as much or less: it needs no ordering of
#: its own, and the nodes reached from that many changed ones are usually most of the graph
_INCREMENTAL_UP_TO = 1 / 3


def infer_graph(graph: Graph, *, allow_unknown_ops: bool = False) -> None:
    """Infer every node of ``graph`` in topological order (then its subgraphs).

    The result is always that of inferring every node. Cost: O(nodes · rank) the first time; after that, when
    the graph has no subgraphs and the rules and custom ops are the same, only the nodes changed since the last
    call and the nodes downstream whose inputs changed as a result are inferred again, O(changed · log changed)
    (the graph records what changed: :class:`InferenceState`), unless more than a third of the nodes changed:
    then the whole graph is, which costs about as much or less (what changed usually reaches most of the rest).

    Args:
        allow_unknown_ops: keep the output descs of nodes whose op has no inference rule instead of raising.

    Raises:
        InferenceError: a node cannot be inferred; the message names the node and the reason. The next call
            then infers the whole graph.
    """
    _load_rules()
    key = _state_key()
    state = graph._inference
    if (state is not None and state.key == key and state.allow_unknown_ops == allow_unknown_ops
            and not graph.subgraphs and graph.parent_graph is None
            and len(state.dirty) <= _INCREMENTAL_UP_TO * len(graph._nodes)):
        _infer_changed(graph, state)
        return
    graph._inference = None
    values: dict[tuple[int, int], np.ndarray] = {}
    _infer_all(graph, graph.nodes(), values, allow_unknown_ops)
    for sub in graph.subgraphs.values():
        infer_graph(sub, allow_unknown_ops=allow_unknown_ops)
    graph._inference = InferenceState(values, allow_unknown_ops, key)


#: what _infer_all looks up once per op type: its rule, its schema and its rule memo (None where there is none)
_TypeEntry = tuple[InferRule | None, OpSchema | None, RuleMemo | None]


def _infer_all(graph: Graph, nodes: Iterable[Node], values: dict[tuple[int, int], np.ndarray],
               allow_unknown_ops: bool, memos: dict[str, RuleMemo] | None = None,
               by_type: dict[str, _TypeEntry] | None = None) -> None:
    """Infer each of ``nodes`` in turn (topological order) as :func:`infer_node` does, except that a Const whose
    desc already states its value is left alone while the built-in Const rule is the registered one
    (:func:`_const_unchanged`), and that with ``allow_unknown_ops`` a node whose op has no rule only has its inputs
    synced. What is the same for every node of one op type (its rule, its schema) is looked up once per call.

    ``memos``: op type -> :class:`RuleMemo` of the built-in rules, for this call and others of the same run
    (made here when not given). ``by_type``: op type -> (rule, schema, memo) as looked up here, for callers that
    infer one node per call (made here when not given; it must come with the same ``memos``)."""
    rules = _RULES
    const_shortcut = rules.get("Const") is _const
    if memos is None:
        memos = {}
    if by_type is None:
        by_type = {}
    for node in nodes:
        op_type = node._op_type
        if op_type == "Const" and const_shortcut and _const_unchanged(node):
            continue
        entry = by_type.get(op_type)
        if entry is None:
            rule = rules.get(op_type)
            memo = None
            if rule is not None and rule in _MEMO_SAFE:
                memo = memos.get(op_type)
                if memo is None:
                    memo = memos[op_type] = RuleMemo()
            entry = by_type[op_type] = (rule, get_schema(op_type) if rule is not None else None, memo)
        rule, schema, memo = entry
        _sync_inputs(graph, node)
        if rule is None:
            if not allow_unknown_ops:
                raise _no_rule(node)
            _log.debug("no inference rule for %s node %s; outputs kept", op_type, node.name)
            continue
        _apply_rule(graph, node, rule, schema, values, allow_unknown_ops, memo)


def _outputs_state(node: Node) -> list[tuple[Any, ...]]:
    return [(d.dtype, d.shape, d.format, d.origin_format, d.origin_shape, d.origin_dtype) for d in node.outputs]


def _same_value(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    if a is None or b is None:
        return a is b
    return a.dtype == b.dtype and a.shape == b.shape and bool(np.array_equal(a, b))


def _infer_changed(graph: Graph, state: InferenceState) -> None:
    """Infer the nodes ``state`` marks as changed, in topological order, then the consumers of each of them
    (a changed node's outputs may differ from what its consumers last saw, even when inferring it gives what
    is on it now: an output desc set by hand), and further down every consumer of a node whose outputs (descs
    or folded values) came out different. A node whose inputs are as they were gives what it gave before, so
    the graph ends as a whole inference would leave it.

    The changed nodes are sorted once by position; only the nodes reached from them that are not changed
    themselves go through a heap, merged with that order. Cost: O(k log k) for the k nodes inferred, plus
    their rules."""
    graph._inference = None  # nothing to record while inferring; stays None if a rule fails
    nodes, pos, uses = graph._nodes, graph._pos, graph._uses
    changed = {nid for nid in state.dirty if nid in nodes}
    order = sorted(changed, key=pos.__getitem__)
    reached: list[tuple[float, int]] = []  # (position, id) of queued nodes that are not in ``changed``
    queued = set(changed)
    values = state.values
    allow_unknown_ops = state.allow_unknown_ops
    memos: dict[str, RuleMemo] = {}
    by_type: dict[str, _TypeEntry] = {}
    push, pop = heapq.heappush, heapq.heappop
    const_shortcut = _RULES.get("Const") is _const
    i, n_changed = 0, len(order)
    while i < n_changed or reached:
        if reached and (i == n_changed or reached[0][0] < pos[order[i]]):
            nid = pop(reached)[1]
            node = nodes[nid]
            before = _outputs_state(node)
            old = [values.pop((nid, port), None) for port in range(len(node.outputs))]
            _infer_all(graph, (node,), values, allow_unknown_ops, memos, by_type)
            if _outputs_state(node) == before and all(
                    _same_value(v, values.get((nid, port))) for port, v in enumerate(old)):
                continue
        else:  # a changed node: its consumers are queued whatever its outputs come out as
            nid = order[i]
            i += 1
            node = nodes[nid]
            for port in range(len(node.outputs)):
                values.pop((nid, port), None)
            if not (const_shortcut and node._op_type == "Const" and _const_unchanged(node)):  # as _infer_all
                _infer_all(graph, (node,), values, allow_unknown_ops, memos, by_type)
        for port_uses in uses[nid]:
            for dst, _ in port_uses:
                if dst not in queued:
                    queued.add(dst)
                    push(reached, (pos[dst], dst))
    state.dirty = set()
    graph._inference = state
    _log.debug("graph %s: inferred %d changed or affected nodes of %d", graph.name, len(queued), len(nodes))


# ---------------------------------------------------------------------------------------------- structure ops
@register_infer("Data")
def _data(ctx: InferContext) -> None:
    # A Data node's output desc is its own (set by whoever built the graph); nothing to derive.
    return


def _const_unchanged(node: Node) -> bool:
    """What the ``Const`` rule (:func:`_const`) does, without its context, for the usual Const: one output
    whose desc already states the value's dtype and shape, an ND value, no input. Returns False (nothing done)
    for any other Const, which then takes the rule. O(1) plus the value's rank. Callers use it only while the
    built-in rule is the registered one (a rule swapped in with :func:`register_infer` always runs)."""
    val = node.attrs.get("value")
    if type(val) is not TensorValue or val.format != Format.FORMAT_ND or node.inputs or len(node.outputs) != 1:
        return False
    out = node.outputs[0]
    arr = val.array
    shape = arr.shape
    return out.dtype == val.dtype and out.shape == shape and out.origin_shape == shape


@register_infer("Const", "Constant")
def _const(ctx: InferContext) -> None:
    val = ctx.node.attrs.get("value")
    if not isinstance(val, TensorValue):
        raise ctx.fail("attr 'value' is not set to a tensor")
    ctx.set_output(0, val.dtype, val.shape)
    if val.format != Format.FORMAT_ND:
        # a tensor that states its layout gives it to the output; an ND tensor keeps the desc's format
        out = ctx.graph.touch_desc(ctx.node, True, 0)
        out.format = val.format
        out.origin_format = val.origin_format if val.origin_format is not None else val.format
    # no set_value: a consumer reads a Const's value from its ``value`` attr (InferContext.value)


@register_infer("NetOutput")
def _net_output(ctx: InferContext) -> None:
    # inputs were refreshed from producers; GE mirrors them onto NetOutput's output descs when present
    for i in range(min(len(ctx.node.inputs), ctx.num_outputs)):
        d = ctx.node.inputs[i]
        ctx.set_output(i, d.dtype, d.shape)

