"""Pass base classes, :class:`PassStage` and :func:`infer_shape` (spec §2.1.1–§2.1.5, §2.1.17).

Class creation follows GE's ``__init_subclass__`` rules: a ``run`` override in a ``PatternFusionPass`` or
``DecomposePass`` body is a ``TypeError``; user hooks are checked for their parameter lists and adapted to
the uniform engine signature ``hook(self, value, context=None)``; ``@pattern`` methods produce a generated
``patterns()``; an expression-style ``replacement(self, inputs, ...)`` is wrapped so that it returns a Graph.
"""

from __future__ import annotations

import enum
import functools
import inspect
from collections.abc import Callable
from typing import Any, Union

from . import _session
from ._native import (
    MatchResult,
    PassContext,
    Pattern,
    PatternMatcherConfig,
    PatternMatcherConfigBuilder,
    SubgraphBoundary,
    SubgraphInput,
    SubgraphOutput,
    SubgraphRewriter,
    ir_node_of,
)
from .pattern import PATTERN_MARKER, PatternInputs, create_pattern

__all__ = [
    "DecomposePass",
    "FusionBasePass",
    "MatchResult",
    "PassContext",
    "PassStage",
    "Pattern",
    "PatternFusionPass",
    "PatternMatcherConfig",
    "PatternMatcherConfigBuilder",
    "PatternOrGraph",
    "StatusLike",
    "SubgraphBoundary",
    "SubgraphInput",
    "SubgraphOutput",
    "SubgraphRewriter",
    "infer_shape",
]

PatternOrGraph = Any
StatusLike = Union[None, bool, int]

#: Attribute set on adapted hooks: the user's function and its dispatch style.
HOOK_INFO = "__ge_hook_info__"


class PassStage(str, enum.Enum):
    """Where a custom pass runs in graph compilation; the value is the string GE's C++ side parses."""

    BEFORE_INFER_SHAPE = "BeforeInferShape"
    AFTER_INFER_SHAPE = "AfterInferShape"
    AFTER_BUILTIN_FUSION_PASS = "AfterBuiltinFusionPass"
    AFTER_ORIGIN_GRAPH_OPTIMIZE = "AfterOriginGraphOptimize"


class FusionBasePass:
    """A pass that edits the live graph in :meth:`run`; must be constructible with no arguments."""

    def run(self, graph: Any, context: PassContext) -> StatusLike:
        """Edit ``graph``; return None/True for success, False or a non-zero int for failure."""
        raise NotImplementedError(f"FusionBasePass.run must be implemented (in {type(self).__name__})")


def _positional(fn: Any) -> tuple[list[inspect.Parameter], bool]:
    """Positional parameters of ``fn`` and whether it has a required keyword-only parameter."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return [], False
    pos = [p for p in sig.parameters.values()
           if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    req_kw = any(p.kind is inspect.Parameter.KEYWORD_ONLY and p.default is inspect.Parameter.empty
                 for p in sig.parameters.values())
    return pos, req_kw


def _mark(adapter: Callable[..., Any], fn: Any, style: str) -> Callable[..., Any]:
    functools.update_wrapper(adapter, fn)
    setattr(adapter, HOOK_INFO, {"style": style, "function": fn})
    return adapter


def _adapt_value_hook(cls_name: str, hook_name: str, fn: Any) -> Callable[..., Any]:
    """Adapt ``(self, value)`` / ``(self, value, ctx)`` to ``(self, value, context=None)``."""
    pos, req_kw = _positional(fn)
    if len(pos) not in (2, 3) or req_kw:
        raise TypeError(
            f"{cls_name}.{hook_name} must take (self, value) or (self, value, context) positional "
            f"parameters and no required keyword-only parameters; got {len(pos)} positional"
        )
    if len(pos) == 2:
        def adapter2(self: Any, value: Any, context: Any = None) -> Any:
            return fn(self, value)
        return _mark(adapter2, fn, "value")

    def adapter3(self: Any, value: Any, context: Any = None) -> Any:
        return fn(self, value, context)
    return _mark(adapter3, fn, "value_context")


_FACADE_TYPES: tuple[Any, Any, Any] | None = None


def _facade_types() -> tuple[Any, Any, Any]:
    """(TensorHolder, GraphBuilder, ge.graph.Graph), imported on first use (replacements call this per match)."""
    global _FACADE_TYPES
    if _FACADE_TYPES is None:
        from gebench.ge.es import TensorHolder
        from gebench.ge.es.graph_builder import GraphBuilder
        from gebench.ge.graph import Graph

        _FACADE_TYPES = (TensorHolder, GraphBuilder, Graph)
    return _FACADE_TYPES


def _expression_result_to_graph(cls_name: str, result: Any, builder: Any) -> Any:
    TensorHolder, _, Graph = _facade_types()  # noqa: N806 - classes

    if isinstance(result, Graph):
        return result
    if isinstance(result, TensorHolder):
        return builder.build_and_reset([result])
    if isinstance(result, (list, tuple)) and result and all(isinstance(r, TensorHolder) for r in result):
        return builder.build_and_reset(list(result))
    raise TypeError(
        "Expression-style replacement must return a TensorHolder or a non-empty list/tuple of TensorHolder "
        f"({cls_name}.replacement returned a {type(result).__name__}; a Graph is accepted too)"
    )


def _adapt_expression_replacement(cls_name: str, fn: Any, pos: list[inspect.Parameter]) -> Callable[..., Any]:
    n = len(pos)
    if n == 2:
        def call(self: Any, inputs: Any, mr: Any, ctx: Any) -> Any:
            return fn(self, inputs)
    elif n == 3:
        if pos[2].name == "context":
            def call(self: Any, inputs: Any, mr: Any, ctx: Any) -> Any:
                return fn(self, inputs, ctx)
        else:
            def call(self: Any, inputs: Any, mr: Any, ctx: Any) -> Any:
                return fn(self, inputs, mr)
    elif n == 4:
        if pos[3].name != "context":
            raise TypeError(
                "Expression-style replacement with four arguments must use replacement(self, inputs, match_result, "
                f"context) ({cls_name}.replacement names its 4th parameter {pos[3].name!r})"
            )

        def call(self: Any, inputs: Any, mr: Any, ctx: Any) -> Any:
            return fn(self, inputs, mr, ctx)
    else:
        raise TypeError(f"{cls_name}.replacement(self, inputs, ...) takes 2 to 4 positional parameters, got {n}")

    builder_name = f"{cls_name}_replacement"  # one string for every match (records keep the graph's name)

    def expression_replacement(self: Any, match_result: Any, context: Any = None) -> Any:
        GraphBuilder = _facade_types()[1]  # noqa: N806 - a class

        builder = GraphBuilder(builder_name)
        session = _session.current()
        # the runtime asks for a record when it calls this pass's hook itself and gives the result to nobody else;
        # a call made from pass code (the request is cleared here) gets a Graph, as always
        recording = session is not None and getattr(session, "record_replacement", None) is self
        if recording:
            session.record_replacement = None
            builder._start_recording()
        inputs = PatternInputs(builder)
        result = call(self, inputs, match_result, context)
        if recording:
            recorded = builder._take_record(result, inputs.count())
            if recorded is not None:
                session.note_expression_inputs(inputs.count(), None)
                return recorded
        graph = _expression_result_to_graph(cls_name, result, builder)
        if session is not None and hasattr(session, "note_expression_inputs"):
            # a graph built here was never handed to pass code: the runtime may move its nodes into the target
            session.note_expression_inputs(inputs.count(), None if graph is result else graph)
        return graph

    return _mark(expression_replacement, fn, f"expression{n}")


def _adapt_pattern_replacement(cls_name: str, fn: Any) -> Callable[..., Any]:
    pos, req_kw = _positional(fn)
    if len(pos) >= 2 and pos[1].name == "inputs":
        if req_kw:
            raise TypeError(f"{cls_name}.replacement must not have required keyword-only parameters")
        return _adapt_expression_replacement(cls_name, fn, pos)
    return _adapt_value_hook(cls_name, "replacement", fn)


def _make_generated_patterns(cls_name: str, methods: list[tuple[str, Any]]) -> Callable[..., Any]:
    def patterns(self: Any) -> list[Any]:
        from gebench.ge.es import TensorHolder
        from gebench.ge.es.graph_builder import GraphBuilder
        from gebench.ge.graph import Graph

        out: list[Any] = []
        for method_name, fn in methods:
            builder = GraphBuilder(f"{cls_name}_{method_name}_pattern")
            inputs = PatternInputs(builder)
            result = fn(self, inputs)
            if isinstance(result, (Pattern, Graph)):
                if isinstance(result, Graph):
                    try:
                        result._gebench_source = _session.function_location(fn)
                    except AttributeError:  # a Graph type without a __dict__: the source stays unknown
                        pass
                out.append(result)
                continue
            if isinstance(result, (list, tuple)) and result and all(isinstance(r, (Pattern, Graph)) for r in result):
                raise TypeError("A @pattern method supports a single pattern only. For multiple patterns, declare "
                                "several @pattern methods or use legacy patterns(self). "
                                f"({cls_name}.{method_name} returned {len(result)}; TensorHolders are the outputs "
                                "of one pattern)")
            if isinstance(result, TensorHolder):
                outputs = [result]
            elif isinstance(result, (list, tuple)) and result and all(isinstance(r, TensorHolder) for r in result):
                outputs = list(result)
            else:
                raise TypeError("Expression-style pattern must return a TensorHolder or a non-empty list/tuple of "
                                f"TensorHolder ({cls_name}.{method_name} returned a {type(result).__name__}; a "
                                "Pattern or a Graph is accepted too)")
            graph = builder.build_and_reset(outputs)
            pat = create_pattern(graph)
            pat._source = _session.function_location(fn)
            for th in inputs.created():
                pat.capture_tensor(th)
            for th in outputs:
                pat.capture_tensor(th)
            out.append(pat)
        return out

    patterns.__qualname__ = f"{cls_name}.patterns"
    setattr(patterns, HOOK_INFO, {"style": "generated", "methods": [fn for _, fn in methods]})
    return patterns


def _reject_run(cls: type, base: str) -> None:
    if "run" in cls.__dict__:
        hooks = "patterns()/replacement()" if base == "PatternFusionPass" else "meet_requirements()/replacement()"
        raise TypeError(f"{cls.__name__} overrides run(), which is never invoked by the {base} execution path. "
                        f"Implement {hooks} instead. (Or derive from FusionBasePass to write run().)")


class PatternFusionPass(FusionBasePass):
    """Match patterns, check them with :meth:`meet_requirements`, rewrite with :meth:`replacement`."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _reject_run(cls, "PatternFusionPass")
        body = cls.__dict__
        methods = [(name, fn) for name, fn in body.items()
                   if callable(fn) and getattr(fn, PATTERN_MARKER, False)]
        if methods:
            if "patterns" in body:
                raise TypeError(f"{cls.__name__} cannot combine @pattern methods with patterns(). Use one style for "
                                "declaring patterns.")
            for name, fn in methods:
                pos, req_kw = _positional(fn)
                if len(pos) != 2 or req_kw:
                    raise TypeError(f"{cls.__qualname__}.{name}: a @pattern method must be exactly "
                                    f"(self, inputs); got {len(pos)} positional parameters")
            cls.patterns = _make_generated_patterns(cls.__name__, methods)  # type: ignore[method-assign]
        if "meet_requirements" in body:
            cls.meet_requirements = _adapt_value_hook(  # type: ignore[method-assign]
                cls.__qualname__, "meet_requirements", body["meet_requirements"])
        if "replacement" in body:
            cls.replacement = _adapt_pattern_replacement(  # type: ignore[method-assign]
                cls.__name__, body["replacement"])

    def __init__(self, matcher_config: PatternMatcherConfig | None = None) -> None:
        self._matcher_config = matcher_config

    @property
    def matcher_config(self) -> PatternMatcherConfig | None:
        return self._matcher_config

    def patterns(self) -> Any:
        raise NotImplementedError(f"PatternFusionPass.patterns must be implemented (define patterns() or @pattern "
                                  f"methods in {type(self).__name__})")

    def meet_requirements(self, match_result: MatchResult, context: PassContext | None = None) -> bool:
        return True

    def replacement(self, match_result: MatchResult, context: PassContext | None = None) -> Any:
        raise NotImplementedError(f"PatternFusionPass.replacement must be implemented (in {type(self).__name__})")


class DecomposePass(FusionBasePass):
    """Replace each node of ``op_types`` that passes :meth:`meet_requirements` by :meth:`replacement`."""

    op_types: list[str] | None = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _reject_run(cls, "DecomposePass")
        body = cls.__dict__
        for hook in ("meet_requirements", "replacement"):
            if hook in body:
                setattr(cls, hook, _adapt_value_hook(cls.__qualname__, hook, body[hook]))

    def meet_requirements(self, node: Any, context: PassContext | None = None) -> bool:
        return True

    def replacement(self, node: Any, context: PassContext | None = None) -> Any:
        raise NotImplementedError(f"DecomposePass.replacement must be implemented (in {type(self).__name__})")


def infer_shape(replacement: Any, source: Any) -> None:
    """Infer the descs of ``replacement`` as if it replaced the region ``source`` describes (spec §2.1.17).

    Each replacement Data (``index`` i) gets the desc of boundary producer i (dtype, shape, format and their
    origins); then shapes and dtypes are inferred node by node. Works at any stage. Cost: O(replacement).

    Raises:
        TypeError: ``replacement`` is not a Graph or ``source`` is not a MatchResult/Node/SubgraphBoundary.
        RuntimeError: the replacement is empty, a Data index has no boundary input, or inference fails
            (the message names the replacement graph and the source).
    """
    from gebench import ops
    from gebench.fusion import decompose_boundary
    from gebench.ge.graph import Graph, Node

    if not isinstance(replacement, Graph):
        raise TypeError(f"replacement must be a ge.graph.Graph (infer_shape got {type(replacement).__name__})")
    if isinstance(source, MatchResult):
        source._check()
        graph, boundary, src_name = source._graph, source._match.boundary, source._match.pattern.name
    elif isinstance(source, Node):
        ir_node = ir_node_of(source, "infer_shape source")
        graph = ir_node.graph
        boundary, src_name = decompose_boundary(graph, ir_node), ir_node.name
    elif isinstance(source, SubgraphBoundary):
        graph, boundary, src_name = source._graph(), source._to_core(), ""
    else:
        raise TypeError("source must be MatchResult, Node, or SubgraphBoundary (infer_shape got "
                        f"{type(source).__name__})")
    rir = getattr(replacement, "_ir", None)
    if rir is None:
        raise RuntimeError("infer_shape(): replacement graph handle is invalid")
    if len(rir) == 0:
        raise RuntimeError("replacement graph is empty")
    where = f"replacement graph {rir.name!r}, source {type(source).__name__}" + (f" {src_name!r}" if src_name else "")
    values: dict[tuple[int, int], Any] = {}
    try:
        producers = [b.producer(graph) for b in boundary.inputs]
        for node in rir.nodes():
            if node.op_type not in _DATA_TYPES:
                continue
            idx = node.attrs.get("index")
            if not isinstance(idx, int) or idx < 0 or idx >= len(producers):
                raise RuntimeError(f"Data node {node.name!r} has index {idx!r} but the boundary has "
                                   f"{len(producers)} inputs")
            pnode, pport = producers[idx]
            desc = pnode.outputs[pport]
            for anchor in (*node.inputs, *node.outputs):
                anchor.dtype, anchor.shape, anchor.format = desc.dtype, desc.shape, desc.format
                anchor.origin_dtype, anchor.origin_shape = desc.origin_dtype, desc.origin_shape
                anchor.origin_format = desc.origin_format
            value = pnode.attrs.get("value") if pnode.op_type in ("Const", "Constant") else None
            if value is not None and node.outputs:
                # value-dependent inference (perm, axes, shape inputs) sees the constant behind the Data
                values[(node.id, 0)] = value.array
        inferable = set(ops.inferable_op_types())
        no_rule = []
        for node in rir.nodes():
            if node.op_type in _DATA_TYPES:
                continue
            if node.op_type not in inferable:
                no_rule.append(node)  # e.g. a custom op: keep the descs its builder gave it
                continue
            ops.infer_node(rir, node, values=values)
    except RuntimeError as exc:
        raise RuntimeError(f"infer_shape failed for {where}: {exc}") from exc
    except Exception as exc:  # noqa: BLE001 - GE reports any native failure as RuntimeError
        raise RuntimeError(f"infer_shape failed for {where}: {type(exc).__name__}: {exc}") from exc
    session = _session.current()
    if session is not None:
        session.note_infer_shape(rir)
        if no_rule:
            session.lint("no_inference_rule",
                         f"infer_shape({rir.name!r}): gebench has no inference for "
                         f"{', '.join(sorted({n.op_type for n in no_rule}))}; those nodes keep their descs",
                         source=_session.caller_location(), detail={"nodes": [n.name for n in no_rule]})


_DATA_TYPES = frozenset({"Data", "RefData", "AippData", "AnyData"})
