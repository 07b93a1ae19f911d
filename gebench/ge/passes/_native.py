"""gebench's stand-in for GE's native pass module (``ge.passes._ge_pass_native``).

Classes: :class:`Pattern`, :class:`MatchResult`, :class:`PassContext`, :class:`PatternMatcherConfig`,
:class:`PatternMatcherConfigBuilder`, :class:`SubgraphInput`, :class:`SubgraphOutput`,
:class:`SubgraphBoundary`, :class:`SubgraphRewriter`. They follow GE's behaviour (spec §2.1.10–§2.1.16):
status ints instead of exceptions where GE returns a ``ge::Status``, borrowed objects that expire, and the
(node, input port) meaning of ``SubgraphInput`` anchors.

Real GE has no Python constructor for ``PassContext``, ``MatchResult`` and ``PatternMatcherConfig``;
gebench adds private factories (``PassContext._create``, ``MatchResult._create``) for tests (spec §5.28).
"""

from __future__ import annotations

import logging
from typing import Any

from . import _session

__all__ = [
    "FAILED",
    "SUCCESS",
    "MatchResult",
    "PassContext",
    "Pattern",
    "PatternMatcherConfig",
    "PatternMatcherConfigBuilder",
    "SubgraphBoundary",
    "SubgraphInput",
    "SubgraphOutput",
    "SubgraphRewriter",
]

_log = logging.getLogger(__name__)

#: ``ge::SUCCESS`` as the bindings return it.
SUCCESS = 0
#: ``ge::FAILED`` (0xFFFFFFFF) as the bindings return it.
FAILED = 4294967295

_CREATE_TOKEN = object()


def _no_constructor(cls_name: str) -> TypeError:
    return TypeError(f"{cls_name}: No constructor defined! (GE creates it; gebench tests may use "
                     f"{cls_name}._create(...))")


def ir_node_of(node: Any, what: str = "node") -> Any:
    """The ``ir.Node`` behind a ``ge.graph.Node`` view.

    Raises:
        TypeError: ``node`` is not a ``ge.graph.Node``.
        RuntimeError: the view has no valid handle.
    """
    from gebench.ge.graph import Node

    if not isinstance(node, Node):
        raise TypeError(f"{what} must be a ge.graph.Node, got {type(node).__name__}")
    ir_node = getattr(node, "_ir_node", None)
    if ir_node is None:
        raise RuntimeError(f"{what}: node handle is invalid")
    return ir_node


def wrap_node(ir_node: Any) -> Any:
    from gebench.ge.graph import Node

    return Node._wrap(ir_node)


# --------------------------------------------------------------------------------------------- Pattern
class Pattern:
    """A pattern graph plus captured tensors. Constructing it consumes the ``Graph`` (spec §2.1.10)."""

    def __init__(self, graph: Any) -> None:
        handle = getattr(graph, "_handle", None)
        if handle is None or not handle:
            raise RuntimeError("Pattern(graph): graph handle is empty; a Graph can make one Pattern only and "
                               "must come from GraphBuilder.build_and_reset()")
        self._ir = graph._ir
        graph._invalidate()
        self._captures: list[tuple[int, int]] = []
        self._released = False
        self._source = _session.caller_location()

    # -- internal helpers ---------------------------------------------------------------------------
    def _check(self) -> None:
        if self._released:
            raise RuntimeError("Pattern handle has been released (the engine took ownership)")

    def _resolve_pattern_node(self, ir_node: Any) -> int:
        if getattr(ir_node, "alive", False) and ir_node.graph is self._ir:
            return ir_node.id
        found = self._ir.find(ir_node.name)
        return -1 if found is None else found.id

    # -- public API ---------------------------------------------------------------------------------
    def capture_tensor(self, source: Any, index: int | None = None) -> Pattern:
        """Capture an output of a pattern node; returns ``self``. Captures keep call order.

        ``source``: a ``NodeIo`` (no ``index``), a ``TensorHolder`` (output ``index or 0`` — never the
        holder's own output index, as in GE), or a ``ge.graph.Node`` (output ``index or 0``).
        """
        self._check()
        if hasattr(source, "node") and hasattr(source, "index") and index is None:
            ir_node = ir_node_of(source.node, "capture_tensor source")
            port = int(source.index)
        elif hasattr(source, "_get_node_snapshot"):
            ir_node = getattr(source, "_ir_node", None)
            if ir_node is None:
                ir_node = ir_node_of(source._get_node_snapshot(), "capture_tensor source")
            port = index or 0
            held = getattr(source, "_output_index", 0)
            if index is None and held:
                session = _session.current()
                if session is not None:
                    session.lint(
                        "capture_output_zero",
                        f"capture_tensor({ir_node.name}) captures output 0 of {ir_node.op_type}, not output "
                        f"{held} that the TensorHolder refers to (GE has no accessor for the holder's output "
                        f"index); pass index={held} explicitly",
                        source=_session.caller_location(),
                        detail={"node": ir_node.name, "holder_output_index": held},
                    )
        else:
            if not hasattr(source, "_ir_node"):
                raise RuntimeError(f"capture_tensor: {type(source).__name__} has no _handle; pass a "
                                   "TensorHolder, a Node or a NodeIo without index")
            ir_node = ir_node_of(source, "capture_tensor source")
            port = index or 0
        if port < 0:
            raise TypeError(f"capture_tensor: index must be >= 0, got {port}")
        self._captures.append((self._resolve_pattern_node(ir_node), int(port)))
        return self

    def get_captured_tensors(self) -> list[Any]:
        """The captures as ``NodeIo`` of pattern nodes (new ``Node`` views each call)."""
        from .pattern import NodeIo

        self._check()
        out = []
        for nid, port in self._captures:
            if nid < 0 or not self._ir.has_node_id(nid):
                raise RuntimeError("captured tensor does not belong to this pattern graph")
            out.append(NodeIo(wrap_node(self._ir.node(nid)), port))
        return out

    def is_valid(self) -> bool:
        return not self._released

    def release(self) -> int:
        """Hand ownership to the engine; the Python object is unusable afterwards. Returns a handle id."""
        self._check()
        self._released = True
        return id(self)

    @property
    def _name(self) -> str:
        return self._ir.name


# --------------------------------------------------------------------------------------------- MatchResult
class MatchResult:
    """One match, borrowed: valid only during the hook call it is passed to (spec §2.1.12)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise _no_constructor("MatchResult")

    @classmethod
    def _create(cls, match: Any, graph: Any) -> MatchResult:
        """gebench factory: wrap a :class:`gebench.fusion.Match` found in ``graph`` (an ``ir.Graph``)."""
        obj = object.__new__(cls)
        obj._match = match
        obj._graph = graph
        obj._valid = True
        return obj

    def _expire(self) -> None:
        self._valid = False

    def _check(self) -> None:
        if not self._valid:
            raise RuntimeError("MatchResult handle has expired: it is valid only inside the meet_requirements/"
                               "replacement call that received it; copy what you need during the call")

    def get_matched_nodes(self) -> list[Any]:
        """Matched target nodes except those bound to pattern Data placeholders, in topological order."""
        self._check()
        return [wrap_node(n) for n in self._match.matched_nodes()]

    def get_captured_tensor(self, capture_index: int) -> Any:
        """The target tensor bound to capture ``capture_index`` as a ``NodeIo``.

        Raises:
            TypeError: a negative or non-int index.
            RuntimeError: out of range, or the capture is unresolved.
        """
        from .pattern import NodeIo

        self._check()
        if isinstance(capture_index, bool) or not isinstance(capture_index, int) or capture_index < 0:
            raise TypeError("get_captured_tensor(): incompatible function arguments; capture_index must be an "
                            f"unsigned int, got {capture_index!r}")
        captures = getattr(self._match.pattern, "captures", [])
        if capture_index >= len(captures):
            raise RuntimeError(f"get_captured_tensor({capture_index}): pattern "
                               f"{self.get_pattern_graph_name()!r} has {len(captures)} captured tensors")
        try:
            node, port = self._match.captured(capture_index)
        except Exception as exc:  # noqa: BLE001 - GE maps any native failure to RuntimeError
            raise RuntimeError(f"get_captured_tensor({capture_index}) failed: {exc}") from exc
        if node is None:
            raise RuntimeError(f"get_captured_tensor({capture_index}): capture is not resolved in this match")
        return NodeIo(wrap_node(node), int(port))

    def get_pattern_graph_name(self) -> str:
        self._check()
        return self._match.pattern.name

    def __str__(self) -> str:
        self._check()
        pairs = []
        for pid, (node, _port) in self._match.bindings.items():
            ptype = self._match.pattern.graph.node(pid).op_type
            pairs.append(f"{{{ptype}:{node.name}}}")
        return f"[PatternName:{self._match.pattern.name}][MatchNodesPair]{''.join(pairs)}"

    __repr__ = __str__


# --------------------------------------------------------------------------------------------- PassContext
class PassContext:
    """The custom-pass context shared by the passes of one stage run (spec §2.1.13)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise _no_constructor("PassContext")

    @classmethod
    def _create(cls, pass_name: str = "", options: dict[str, str] | None = None) -> PassContext:
        """gebench factory (tests, runtime)."""
        obj = object.__new__(cls)
        obj._pass_name = pass_name
        obj._error_message = ""
        obj._options = dict(options or {})
        return obj

    def get_pass_name(self) -> str:
        return self._pass_name

    def set_pass_name(self, name: str) -> None:
        if not isinstance(name, str):
            raise TypeError(f"set_pass_name(): name must be str, got {type(name).__name__}")
        self._pass_name = name

    def get_error_message(self) -> str:
        return self._error_message

    def set_error_message(self, msg: str) -> None:
        if not isinstance(msg, str):
            raise TypeError(f"set_error_message(): msg must be str, got {type(msg).__name__}")
        self._error_message = msg

    def get_option_value(self, key: str) -> str:
        if not isinstance(key, str):
            raise TypeError(f"get_option_value(): key must be str, got {type(key).__name__}")
        if key not in self._options:
            raise RuntimeError(f"get_option_value({key!r}): option is not set in this compile")
        return str(self._options[key])

    def __repr__(self) -> str:
        return f"<PassContext pass_name={self._pass_name!r}>"


# --------------------------------------------------------------------------------------------- config
class PatternMatcherConfig:
    """Matcher switches; built by :class:`PatternMatcherConfigBuilder` (spec §2.1.14)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise _no_constructor("PatternMatcherConfig")

    @classmethod
    def _create(cls, const_value_match: bool, ir_attr_match: bool) -> PatternMatcherConfig:
        obj = object.__new__(cls)
        obj._const_value_match = bool(const_value_match)
        obj._ir_attr_match = bool(ir_attr_match)
        return obj

    def is_enable_const_value_match(self) -> bool:
        return self._const_value_match

    def is_enable_ir_attr_match(self) -> bool:
        return self._ir_attr_match

    def _clone(self) -> PatternMatcherConfig:
        return PatternMatcherConfig._create(self._const_value_match, self._ir_attr_match)

    def __repr__(self) -> str:
        return (f"PatternMatcherConfig(const_value_match={self._const_value_match}, "
                f"ir_attr_match={self._ir_attr_match})")


class PatternMatcherConfigBuilder:
    """Chainable builder of :class:`PatternMatcherConfig`."""

    def __init__(self) -> None:
        self._const_value_match = False
        self._ir_attr_match = False

    def enable_const_value_match(self) -> PatternMatcherConfigBuilder:
        self._const_value_match = True
        return self

    def enable_ir_attr_match(self) -> PatternMatcherConfigBuilder:
        self._ir_attr_match = True
        return self

    def build(self) -> PatternMatcherConfig:
        return PatternMatcherConfig._create(self._const_value_match, self._ir_attr_match)


# --------------------------------------------------------------------------------------------- boundary
class SubgraphInput:
    """One boundary input: consumer anchors ``(node, input port)`` all fed by one producer output.

    GE names the second element ``out_index`` but uses it as the consumer's *input* port (spec §5.2).
    """

    def __init__(self, anchors: Any = None) -> None:
        self._anchors: list[tuple[Any, int]] = []
        if anchors is None:
            return
        for item in anchors:
            if not isinstance(item, tuple) or len(item) != 2:
                raise RuntimeError(f"SubgraphInput: each item must be a (node, index) tuple, got {item!r}")
            node, idx = item
            self._anchors.append((ir_node_of(node, "SubgraphInput node"), int(idx)))

    def add_input(self, node: Any, out_index: int) -> int:
        """Add consumer ``node`` input port ``out_index``; FAILED (no exception) when the port is absent,
        unfed, or fed by another producer than the anchors already added."""
        try:
            ir_node = ir_node_of(node, "SubgraphInput.add_input node")
        except (TypeError, RuntimeError):
            return FAILED
        if not isinstance(out_index, int) or out_index < 0 or out_index >= len(ir_node.inputs):
            return FAILED
        if not ir_node.alive:
            return FAILED
        producer = ir_node.graph.producer(ir_node, out_index)
        if producer is None:
            return FAILED
        if self._anchors:
            first, fport = self._anchors[0]
            if not first.alive or first.graph is not ir_node.graph:
                return FAILED
            other = first.graph.producer(first, fport)
            if other is None or other[0] is not producer[0] or other[1] != producer[1]:
                return FAILED
        self._anchors.append((ir_node, out_index))
        return SUCCESS


class SubgraphOutput:
    """One boundary output: a producer node and its output port."""

    def __init__(self, node: Any = None, out_index: int | None = None) -> None:
        self._anchor: tuple[Any, int] | None = None
        if node is not None:
            if self.set_output(node, 0 if out_index is None else out_index) != SUCCESS:
                raise RuntimeError(f"SubgraphOutput({getattr(node, 'name', node)!r}, {out_index}): no such output")

    def set_output(self, node: Any, out_index: int) -> int:
        if self._anchor is not None:
            return FAILED
        try:
            ir_node = ir_node_of(node, "SubgraphOutput node")
        except (TypeError, RuntimeError):
            return FAILED
        if not isinstance(out_index, int) or out_index < 0 or out_index >= len(ir_node.outputs):
            return FAILED
        self._anchor = (ir_node, out_index)
        return SUCCESS


class SubgraphBoundary:
    """Boundary of a subgraph to replace: inputs and outputs by logical slot index."""

    def __init__(self) -> None:
        self._inputs: dict[int, SubgraphInput] = {}
        self._outputs: dict[int, SubgraphOutput] = {}

    def add_input(self, index: int, input: SubgraphInput) -> int:  # noqa: A002 - GE's parameter name
        if not isinstance(input, SubgraphInput) or not isinstance(index, int) or index < 0 or index in self._inputs:
            return FAILED
        self._inputs[index] = input
        return SUCCESS

    def add_output(self, index: int, output: SubgraphOutput) -> int:
        if not isinstance(output, SubgraphOutput) or not isinstance(index, int) or index < 0 \
                or index in self._outputs or output._anchor is None:
            return FAILED
        self._outputs[index] = output
        return SUCCESS

    def _to_core(self) -> Any:
        """The :class:`gebench.fusion.Boundary` (slots in ascending index order)."""
        from gebench.fusion import Boundary, BoundaryInput

        inputs = [BoundaryInput(list(self._inputs[i]._anchors)) for i in sorted(self._inputs)]
        outputs = [self._outputs[i]._anchor for i in sorted(self._outputs)]
        return Boundary(inputs, outputs)

    def _graph(self) -> Any:
        for out in self._outputs.values():
            node = out._anchor[0]
            if node.alive:
                return node.graph
        for inp in self._inputs.values():
            for node, _ in inp._anchors:
                if node.alive:
                    return node.graph
        return None


def boundary_subgraph_nodes(graph: Any, boundary: Any) -> list[Any]:
    """Nodes a boundary encloses: backward walk from the output nodes, stopping at the input producers.

    Costs O(size of the enclosed region + its in-edges). Nodes are returned in topological order.
    """
    stop: set[int] = set()
    for binput in boundary.inputs:
        for node, port in binput.anchors:
            prod = graph.producer(node, port) if node.alive else None
            if prod is not None:
                stop.add(prod[0].id)
    seen: dict[int, Any] = {}
    stack = [node for node, _ in boundary.outputs if node.alive and node.id not in stop]
    while stack:
        node = stack.pop()
        if node.id in seen:
            continue
        seen[node.id] = node
        for prod in graph.producers(node):
            if prod is not None and prod[0].id not in stop and prod[0].id not in seen:
                stack.append(prod[0])
    return sorted(seen.values(), key=graph.position)


class SubgraphRewriter:
    """Static rewriter entry point (spec §2.1.16)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise _no_constructor("SubgraphRewriter")

    @staticmethod
    def replace(boundary: SubgraphBoundary, replacement: Any, *, context: PassContext | None = None) -> int | None:
        """Replace the subgraph enclosed by ``boundary`` with a copy of ``replacement``.

        Without ``context``: returns ``SUCCESS`` (0) or ``FAILED`` and never raises on a rewrite failure.
        With ``context=``: runs ``can_fuse`` first and ``report_fuse`` after; any failure raises
        ``RuntimeError`` and sets the same text as the context's error message. Returns None then.
        The rewrite is transactional: on failure the graph is exactly as before.
        """
        from gebench.ge.graph import Graph

        from .fuse_inspector import can_fuse

        if not isinstance(boundary, SubgraphBoundary):
            raise TypeError(f"replace(): boundary must be a SubgraphBoundary, got {type(boundary).__name__}")
        if not isinstance(replacement, Graph):
            raise TypeError(f"replace(): replacement must be a ge.graph.Graph, got {type(replacement).__name__}")
        if context is not None and not isinstance(context, PassContext):
            raise TypeError(f"replace(): context must be a PassContext, got {type(context).__name__}")
        session = _session.current()
        source = _session.caller_location()
        pass_name = context.get_pass_name() if context is not None else (session.pass_name if session else "")

        def fail(reason: str, nodes: list[Any], graph: Any) -> int | None:
            if session is not None:
                session.note_rewrite_failure(boundary_nodes=nodes, reason=reason, graph=graph, source=source)
            if context is None:
                _log.info("SubgraphRewriter.replace failed (pass %s): %s", pass_name, reason)
                return FAILED
            msg = f"SubgraphRewriter Replace with context failed, pass_name={pass_name}, status={FAILED}: {reason}"
            context.set_error_message(msg)
            raise RuntimeError(msg)

        graph = boundary._graph()
        if graph is None:
            return fail("boundary has no live node (add inputs/outputs before replacing)", [], None)
        core = boundary._to_core()
        region = boundary_subgraph_nodes(graph, core)
        if context is not None:
            check = can_fuse([wrap_node(n) for n in region])
            if not check.ok:
                return fail(f"can_fuse rejected the boundary nodes: {check.reason}", region, graph)
        replacement_ir = getattr(replacement, "_ir", None)
        if replacement_ir is None:
            return fail("replacement graph handle is invalid (consumed by Pattern?)", region, graph)
        from gebench.fusion import RewriteError, rewrite

        before = [(n.id, n.name, n.op_type) for n in region]
        try:
            result = rewrite(graph, core, replacement_ir, pass_name=pass_name)
        except RewriteError as exc:
            return fail(str(exc), region, graph)
        if session is not None:
            session.note_rewrite(boundary_nodes=before, result=result, graph=graph, source=source,
                                 with_context=context is not None)
        if context is not None:
            added = [graph.node(i) for i in result.added if graph.has_node_id(i)]
            for n in added:
                graph.touch(n)
                n.provenance = pass_name
        return SUCCESS if context is None else None
