"""ONNX -> IR import with GE's ONNX parser mapping (spec ge-ops.md §3).

The result is the graph GE shows at ``PreRunBegin`` for the model: GE op types with their IR anchors,
plugin expansions spliced in and named as GE names them, initializers as ``Const``, graph inputs as
``Data`` with ``index``, tensor descs from ONNX shape inference (and gebench's op inference for tensors
ONNX says nothing about). By default a ``NetOutput`` called ``Node_Output`` collects the graph outputs, as
GE adds it in graph preparation; ``net_output=False`` leaves it out (the outputs are then listed in
``graph.attrs["outputs"]`` as ``"<node>:<port>"`` strings, as in a ``GraphDef.output``).
"""

from __future__ import annotations

import dataclasses
import logging
import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from google.protobuf.message import DecodeError

from gebench import ir, ops

from . import _onnx_control, _onnx_elementwise, _onnx_nn, _onnx_shape  # noqa: F401  (register converters)
from ._onnx_common import (
    MAX_OPSET,
    MIN_OPSET,
    ConverterEntry,
    Direct,
    Emitted,
    NodeNotConvertible,
    OnnxImportError,
    OpContext,
    UnsupportedNode,
    UnsupportedOnnxOpError,
    attributes,
    find_converter,
    onnx_to_ge_dtype,
    registered_opsets,
    tensor_value_from_proto,
)
from ._onnx_fallback_anchors import fallback_anchor_names
from ._onnx_source import ModelFile, read_model_file
from ._progress import Progress

__all__ = ["load_onnx", "OnnxImportError", "UnsupportedOnnxOpError", "UnsupportedNode", "supported_onnx_ops",
           "produced_ge_types"]

_log = logging.getLogger(__name__)

_DEFAULT_DOMAINS = ("", "ai.onnx")


def supported_onnx_ops() -> dict[str, list[tuple[int, int]]]:
    """ONNX op types (default domain) the importer maps, with their opset ranges."""
    from ._onnx_common import CONVERTERS

    return {op: registered_opsets(dom, op) for dom, op in sorted(CONVERTERS) if dom == ""}


def produced_ge_types() -> list[str]:
    """Every GE op type an ONNX import can produce (Data, Const and NetOutput included), sorted."""
    from ._onnx_common import CONVERTERS

    types = {"Data", "Const", "NetOutput"}
    for entries in CONVERTERS.values():
        for entry in entries:
            types.update(entry.ge_types)
    return sorted(types)


def load_onnx(
    model: str | os.PathLike[str] | onnx.ModelProto,
    *,
    input_format: str = "NCHW",
    net_output: bool = True,
    base_dir: str | os.PathLike[str] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> ir.Graph:
    """Import an ONNX model as GE's ONNX parser would.

    Args:
        model: a path to a ``.onnx`` file (external data is read relative to its folder) or a ModelProto.
        input_format: format of the Data nodes, like ATC's ``--input_format`` (``"NCHW"`` or ``"ND"``).
        net_output: add GE's ``Node_Output`` NetOutput for the graph outputs.
        base_dir: folder of external-data files when ``model`` is a ModelProto.
        progress: called as ``progress(done, total)`` while the main graph's initializers and nodes are
            converted (``total`` is their count; at most about a hundred calls, the last with ``done ==
            total``). Checking and ONNX shape inference come first and report nothing.

    Returns:
        A new ``ir.Graph``, built only through the Graph API (so ``verify()`` holds). From a file, the
        initializers' Const values are read-only numpy views of the file's bytes (of a memory map of an
        external-data file): nothing is copied, and those bytes (mappings) stay alive with the values. External
        data files must not be truncated or rewritten in place while the graph lives. From a ModelProto, nothing
        is shared with it.

    Raises:
        OnnxImportError: the file is missing or not ONNX, ``onnx.checker`` rejects the model (two writers of one
            tensor, a negative dimension, a bad attribute ...; see :func:`_check_model` for the things
            accepted as GE's parser accepts them), a node is malformed or reads a tensor nothing produces, or the
            opset is below 8 or above 18 and cannot be converted to 18.
        UnsupportedOnnxOpError: some nodes have no GE mapping; the message lists all of them.

    Cost: O(nodes + initializer bytes), plus ONNX shape inference.
    """
    # Building tens of thousands of small objects triggers many full cyclic-GC passes that find nothing
    # (the graph holds no garbage cycles yet); pausing the collector roughly halves the import time.
    start = time.perf_counter()
    with ir.collector_paused():
        graph = _load(model, input_format=input_format, net_output=net_output, base_dir=base_dir,
                      progress=progress)
    elapsed = time.perf_counter() - start
    if elapsed > 1.0:
        _log.info("imported %s: %d nodes in %.1f s", graph.name, len(graph), elapsed)
    return graph


def _load(model: Any, *, input_format: str, net_output: bool, base_dir: Any,
          progress: Callable[[int, int], None] | None) -> ir.Graph:
    fast = None
    if isinstance(model, (str, os.PathLike)) and Path(model).is_file():
        # the file's weights become views of its bytes; None: the general path below reads it
        fast = read_model_file(Path(model), str(Path(model)), _check_model)
    if fast is not None:
        source = str(Path(model))
        fmt = _parse_format(input_format)
        inferred = fast.proto
    else:
        source, proto = _read_model(model, base_dir)
        fmt = _parse_format(input_format)
        _check_model(proto, source)
        proto = _normalise_opset(proto, source)
        try:
            inferred = onnx.shape_inference.infer_shapes(proto)
        except Exception as exc:  # inference is best effort; GE does not need it
            _log.info("%s: ONNX shape inference failed (%s); descs come from gebench's inference", source, exc)
            inferred = proto
        del proto
    # Structural faults the checker lets through (dangling tensor names, bad attributes) are still reported,
    # naming the node.
    opsets = {("" if imp.domain in _DEFAULT_DOMAINS else imp.domain): int(imp.version) for imp in inferred.opset_import}
    shared = _Shared(source, fmt, opsets)
    parts = _FileParts(fast) if fast is not None else _Parts(inferred.graph)
    shared.progress = Progress(progress, parts.initializer_count + parts.node_count)
    del fast
    name = inferred.graph.name or Path(source).stem or "graph"
    return _Importer(parts, shared, name).run_root(net_output=net_output)


# --------------------------------------------------------------------------- reading
def _read_model(model: Any, base_dir: Any) -> tuple[str, onnx.ModelProto]:
    if isinstance(model, onnx.ModelProto):
        proto = onnx.ModelProto()
        proto.CopyFrom(model)
        source = f"ModelProto {proto.graph.name!r}"
        if base_dir is not None:
            try:
                onnx.external_data_helper.load_external_data_for_model(proto, os.fspath(base_dir))
            except Exception as exc:
                raise OnnxImportError(f"{source}: cannot load external data from {base_dir}: {exc}") from exc
        elif any(t.data_location == onnx.TensorProto.EXTERNAL for t in proto.graph.initializer):
            raise OnnxImportError(f"{source}: initializers use external data; pass base_dir= with their folder")
    elif isinstance(model, (str, os.PathLike)):
        path = Path(model)
        source = str(path)
        if not path.is_file():
            raise OnnxImportError(f"{source}: no such ONNX file")
        try:
            proto = onnx.load(str(path), load_external_data=True)
        except (DecodeError, onnx.checker.ValidationError) as exc:
            raise OnnxImportError(f"{source}: not an ONNX model (protobuf decode failed: {exc})") from exc
        except FileNotFoundError as exc:
            raise OnnxImportError(f"{source}: external data file missing: {exc}") from exc
        except Exception as exc:
            raise OnnxImportError(f"{source}: cannot read the ONNX file: {type(exc).__name__}: {exc}") from exc
    else:
        raise TypeError(f"load_onnx expects a path or an onnx.ModelProto, got {type(model).__name__}")
    if proto.ir_version <= 0 or not proto.HasField("graph"):
        raise OnnxImportError(f"{source}: not an ONNX model (no ir_version or no graph)")
    return source, proto


def _parse_format(name: str) -> ir.Format:
    try:
        return ir.Format["FORMAT_" + name.upper()]
    except KeyError:
        raise OnnxImportError(f"input_format {name!r} is not a GE format; use 'NCHW', 'NHWC' or 'ND'") from None


def _default_opset(proto: onnx.ModelProto) -> int:
    for imp in proto.opset_import:
        if imp.domain in _DEFAULT_DOMAINS:
            return int(imp.version)
    return 1 if proto.ir_version < 3 else 0


def _normalise_opset(proto: onnx.ModelProto, source: str) -> onnx.ModelProto:
    version = _default_opset(proto)
    if version > MAX_OPSET:
        try:
            converted = onnx.version_converter.convert_version(proto, MAX_OPSET)
        except Exception as exc:
            raise OnnxImportError(
                f"{source}: opset {version} is newer than GE's ONNX parser accepts (8-{MAX_OPSET}) and onnx's version "
                f"converter cannot bring it down to {MAX_OPSET}: {str(exc).strip().splitlines()[0] if str(exc) else exc}. "
                f"Fix: export the model with opset <= {MAX_OPSET}."
            ) from exc
        _log.info("%s: converted opset %d -> %d", source, version, MAX_OPSET)
        return converted
    if version == 0:
        return proto  # no ai.onnx import: only other domains, each node is looked up on its own
    if version < MIN_OPSET:
        raise OnnxImportError(
            f"{source}: opset {version} is older than GE's ONNX parser accepts ({MIN_OPSET}-{MAX_OPSET}). "
            f"Fix: convert it first, e.g. onnx.version_converter.convert_version(model, {MIN_OPSET + 3})."
        )
    return proto


# --------------------------------------------------------------------------- the importer
class _Shared:
    """State shared by the root import and its subgraph imports."""

    def __init__(self, source: str, data_format: ir.Format, opsets: dict[str, int]) -> None:
        self.source = source
        #: counts the main graph's initializers and nodes as they are converted
        self.progress = Progress(None, 0)
        self.data_format = data_format
        self.opsets = opsets
        self.partition_counter = 0
        self.unsupported: list[UnsupportedNode] = []
        self.subgraphs: list[tuple[ir.Node, ir.Graph]] = []
        self.custom = set(ops.custom_op_types())
        self._templates: dict[tuple, _Template] = {}
        self._converters: dict[tuple[str, str], tuple[Any, int]] = {}
        self._direct: dict[tuple[int, int, int], _DirectLayout] = {}

    def direct_layout(self, direct: Direct, n_inputs: int, n_outputs: int) -> _DirectLayout:
        """How ``direct`` lays out a node fed by ``n_inputs`` ONNX inputs and producing ``n_outputs`` outputs,
        worked out once per import."""
        key = (id(direct), n_inputs, n_outputs)  # Directs are module constants: their ids stay theirs
        layout = self._direct.get(key)
        if layout is None:
            tmpl = self.template(direct.ge_type, None, None, n_inputs, n_outputs)
            attrs = _node_attrs(tmpl, dict(direct.attrs))
            shared_attrs = None if any(_fresh(v) is not v for v in attrs.values()) else attrs
            formats = tuple(direct.output_formats.get(port, _FORMAT_ND) for port in range(len(tmpl.out_names)))
            layout = self._direct[key] = _DirectLayout(tmpl, len(tmpl.in_names), len(tmpl.out_names),
                                                       frozenset(tmpl.optional_inputs), formats, shared_attrs)
        return layout

    def template(self, op_type: str, dynamic_inputs: dict[str, int] | None, dynamic_outputs: dict[str, int] | None,
                 n_inputs: int, n_outputs: int) -> _Template:
        """Anchor layout of ``op_type`` for these dynamic counts, computed once per import."""
        if dynamic_inputs or dynamic_outputs:
            key: tuple = (op_type, n_inputs, n_outputs, tuple(sorted((dynamic_inputs or {}).items())),
                          tuple(sorted((dynamic_outputs or {}).items())))
        else:
            key = (op_type, n_inputs, n_outputs)
        tmpl = self._templates.get(key)
        if tmpl is None:
            schema = ops.get_schema(op_type)
            if schema is not None:
                in_names, out_names = ops.anchor_names(schema, dynamic_inputs, dynamic_outputs)
                kinds = {d.name: d.kind for d in schema.inputs}
                optional = tuple(i for i, n in enumerate(in_names) if kinds.get(n) == "optional")
            else:
                in_names, out_names = fallback_anchor_names(op_type, n_inputs, n_outputs, dynamic_inputs,
                                                            dynamic_outputs)
                optional = tuple(range(len(in_names)))
            defaults = ops.with_defaults(schema) if schema is not None else {}
            mutable = tuple(k for k, v in defaults.items() if _fresh(v) is not v)
            tmpl = _Template(schema, list(in_names), list(out_names), optional, defaults, mutable)
            self._templates[key] = tmpl
        return tmpl

    def converter(self, domain: str, op_type: str) -> tuple[Any, int]:
        """(converter entry or None, opset) for an op type of ``domain``, looked up once per import."""
        key = (domain, op_type)
        found = self._converters.get(key)
        if found is None:
            opset = self.opsets.get(domain, 1)
            found = self._converters[key] = (find_converter(domain, op_type, opset), opset)
        return found


class _Parts:
    """A graph's parts as the importer reads them, from a GraphProto (subgraph bodies, and every graph of a model
    read by the general path). :class:`_FileParts` gives those of a file's main graph, a chunk at a time."""

    def __init__(self, graph: onnx.GraphProto) -> None:
        self._graph: onnx.GraphProto | None = graph
        self.input = graph.input
        self.output = graph.output
        self.value_info: Any = graph.value_info
        self.node_count = len(graph.node)
        self.initializer_count = len(graph.initializer)

    def nodes(self) -> Iterable[onnx.NodeProto]:
        return self._graph.node  # type: ignore[union-attr]

    def initializers(self) -> Iterable[onnx.TensorProto]:
        return self._graph.initializer  # type: ignore[union-attr]

    def drop_value_info(self) -> None:
        """Called once the value infos are read."""

    def view(self, index: int, data_type: int, dims: tuple[int, ...]) -> ir.TensorValue | None:
        """A value needing no conversion (see :meth:`ModelFile.view`); none here."""
        return None

    def value(self, index: int, tensor: onnx.TensorProto, source: str) -> ir.TensorValue:
        """The value of initializer ``index``.

        Raises:
            OnnxImportError: the tensor's type or data cannot be read.
        """
        return tensor_value_from_proto(tensor, where=source)


class _FileParts(_Parts):
    """The main graph of a file read by :func:`~gebench.io._onnx_source.read_model_file`: its nodes and
    initializers are parsed a chunk at a time, its value infos are freed once read, its weights are views."""

    def __init__(self, model: ModelFile) -> None:
        graph = model.proto.graph
        self._model = model
        self._graph = None
        self.input = graph.input
        self.output = graph.output
        self.value_info = model.value_info.value_info if model.value_info is not None else ()
        self.node_count = model.node_count
        self.initializer_count = model.initializer_count

    def nodes(self) -> Iterable[onnx.NodeProto]:
        return self._model.nodes()

    def initializers(self) -> Iterable[onnx.TensorProto]:
        return self._model.initializers()

    def drop_value_info(self) -> None:
        self.value_info = ()
        self._model.value_info = None

    def view(self, index: int, data_type: int, dims: tuple[int, ...]) -> ir.TensorValue | None:
        return self._model.view(index, data_type, dims)

    def value(self, index: int, tensor: onnx.TensorProto, source: str) -> ir.TensorValue:
        return self._model.value(index, tensor)


class _NodeNames:
    """Names of ONNX nodes as GE's parser gives them: the node's own, or ``<op type>_<k>`` with the first ``k``
    no node is named (counted per op type, in node order). :meth:`name` is asked for each node in order; the
    names of all nodes are read (one more pass over ``nodes()``) only when a node without a name comes."""

    def __init__(self, nodes: Callable[[], Iterable[onnx.NodeProto]]) -> None:
        self._nodes = nodes
        self._taken: set[str] | None = None
        self._counters: dict[str, int] = {}

    def name(self, node: onnx.NodeProto) -> str:
        name = node.name
        if name:
            return name
        taken = self._taken
        if taken is None:  # the first node without a name: no name was made before it
            taken = self._taken = {n.name for n in self._nodes() if n.name}
        op_type = node.op_type
        k = self._counters.get(op_type, 0)
        while f"{op_type}_{k}" in taken:
            k += 1
        self._counters[op_type] = k + 1
        name = f"{op_type}_{k}"
        taken.add(name)
        return name


def _first(item: tuple[str, int, Any]) -> str:
    return item[0]


@dataclasses.dataclass(frozen=True)
class _Template:
    schema: Any
    in_names: list[str]
    out_names: list[str]
    optional_inputs: tuple[int, ...]
    defaults: dict[str, Any]
    #: defaults whose values are mutable (each node gets a copy); the others are shared
    mutable_defaults: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class _DirectLayout:
    """A :class:`Direct` conversion for given ONNX input and output counts (see :meth:`_Shared.direct_layout`):
    the template, its anchor counts, its optional inputs, the format of each output, and the node attrs when no
    value is mutable (each node gets a copy of the dict), else None (each node gets :func:`_node_attrs`)."""

    tmpl: _Template
    n_in: int
    n_out: int
    optional: frozenset[int]
    formats: tuple[ir.Format, ...]
    attrs: dict[str, Any] | None


def _node_attrs(tmpl: _Template, attrs: dict[str, Any]) -> dict[str, Any]:
    """A new node's attrs: every optional IR attr of ``tmpl`` at its default (a private copy of a mutable one),
    overlaid by ``attrs``."""
    defaults = tmpl.defaults
    if not defaults:
        return dict(attrs)
    if attrs and not defaults.keys().isdisjoint(attrs):
        full = {k: _fresh(v) for k, v in defaults.items() if k not in attrs}  # overridden ones go last
        full.update(attrs)
        return full
    full = defaults.copy()
    for k in tmpl.mutable_defaults:
        full[k] = _fresh(full[k])
    full.update(attrs)
    return full


def _fresh(value: Any) -> Any:
    """A private copy of an attr default (lists and tensors are mutable; scalars are shared)."""
    if isinstance(value, list):
        return [_fresh(v) for v in value]
    if isinstance(value, (ir.TensorValue, ir.TensorDesc)):
        return value.copy()
    return value


_PLACEHOLDER = ir.TensorDesc.placeholder()
_DT_FLOAT, _DT_UNDEFINED = ir.DataType.DT_FLOAT, ir.DataType.DT_UNDEFINED
_FORMAT_ND, _FORMAT_RESERVED = ir.Format.FORMAT_ND, ir.Format.FORMAT_RESERVED


def _default_desc() -> ir.TensorDesc:
    """``TensorDesc()`` (DT_FLOAT, scalar, ND) without the constructor's normalisation."""
    return ir.trusted_desc(_DT_FLOAT, (), _FORMAT_ND, _FORMAT_ND, ())


def _placeholder_desc() -> ir.TensorDesc:
    """``TensorDesc.placeholder()`` (an unfed optional input) without the constructor's normalisation."""
    return ir.trusted_desc(_DT_UNDEFINED, (), _FORMAT_RESERVED, _FORMAT_RESERVED, ())


def _set_desc(dst: ir.TensorDesc, src: ir.TensorDesc) -> None:
    """Make ``dst`` equal to ``src`` in place (cheaper than building a new desc; shapes are immutable tuples)."""
    dst.dtype = src.dtype
    dst.shape = src.shape
    dst.format = src.format
    dst.origin_format = src.origin_format
    dst.origin_shape = src.origin_shape
    dst.origin_dtype = src.origin_dtype
    if src.has_attrs:
        dst.attrs = _anchor_attrs_copy(src)
    elif dst.has_attrs:
        dst.attrs = {}


def _anchor_attrs_copy(src: ir.TensorDesc) -> dict[str, Any]:
    """A copy of ``src``'s anchor attrs (list values copied too)."""
    return {k: (list(v) if isinstance(v, list) else v) for k, v in src.attr_items()}


def _desc_copy(src: ir.TensorDesc) -> ir.TensorDesc:
    """A new desc equal to what :func:`_set_desc` makes of any desc from ``src``."""
    desc = ir.trusted_desc(src.dtype, src.shape, src.format, src.origin_format, src.origin_shape, src.origin_dtype)
    if src.has_attrs:
        desc.attrs = _anchor_attrs_copy(src)
    return desc


def _set_plain(dst: ir.TensorDesc, dtype: ir.DataType, shape: tuple[int, ...]) -> None:
    """Make ``dst`` an ND desc of ``dtype``/``shape`` (origin equal) in place."""
    dst.dtype = dtype
    dst.shape = shape
    dst.format = ir.Format.FORMAT_ND
    dst.origin_format = ir.Format.FORMAT_ND
    dst.origin_shape = shape
    dst.origin_dtype = None
    if dst.attrs:
        dst.attrs = {}


class _Importer:
    """Imports one ONNX GraphProto. All state is local; a failure leaves nothing behind."""

    def __init__(self, graph: onnx.GraphProto | _Parts, shared: _Shared, name: str, *,
                 parent: _Importer | None = None, outer: list[str] | None = None) -> None:
        self.parts = graph if isinstance(graph, _Parts) else _Parts(graph)
        self.shared = shared
        self.source = shared.source
        self.parent = parent
        self.outer = outer or []
        self.graph = ir.Graph(name)
        self._tmp_counter = 0
        self._node_counter = 0
        self.static: dict[str, np.ndarray] = {}
        self.info: dict[str, tuple[ir.DataType, tuple[int, ...] | None]] = {}
        self.producers: dict[str, tuple[ir.Node, int]] = {}
        self.pending: list[Emitted] = []
        #: while True, each converted node is wired and filled at once (its inputs are all produced already);
        #: after the first forward reference nodes wait in ``pending`` for :meth:`_wire` and :meth:`_fill_descs`.
        #: Only the main graph streams: it is in single static assignment form (``_check_model`` or the checker
        #: refused it otherwise), so a producer seen once is final; a subgraph body may shadow an outer name.
        self.streaming = parent is None
        self._used: set[str] | None = None
        self._values: dict[tuple[int, int], np.ndarray] = {}  # values folded by op inference, shared across nodes

    # ---- services for converters
    def temp_tensor(self, prefix: str) -> str:
        self._tmp_counter += 1
        return f"\x00{prefix}#{self._tmp_counter}"

    def is_used(self, tensor: str) -> bool:
        if self._used is None:
            self._used = {o.name for o in self.parts.output}
            for node in self.parts.nodes():
                self._used.update(node.input)
                for body in _node_bodies(node):
                    self._used.update(_free_tensors(body))
        return tensor in self._used or (self.parent is not None and self.parent.is_used(tensor))

    def static_value(self, tensor: str) -> np.ndarray | None:
        if tensor in self.static:
            return self.static[tensor]
        return self.parent.static_value(tensor) if self.parent is not None else None

    def _info(self, tensor: str) -> tuple[ir.DataType, tuple[int, ...] | None] | None:
        if tensor in self.info:
            return self.info[tensor]
        return self.parent._info(tensor) if self.parent is not None else None

    def tensor_shape(self, tensor: str) -> tuple[int, ...] | None:
        entry = self._info(tensor)
        return None if entry is None else entry[1]

    def tensor_dtype(self, tensor: str) -> ir.DataType | None:
        entry = self._info(tensor)
        return None if entry is None else entry[0]

    def record_const(self, tensor: str, value: ir.TensorValue) -> None:
        self.static[tensor] = value.array
        self.info[tensor] = (value.dtype, value.shape)

    def make_node(self, op_type: str, attrs: dict[str, Any], dynamic_inputs: dict[str, int] | None,
                  dynamic_outputs: dict[str, int] | None, *, n_inputs: int = 0, n_outputs: int = 0,
                  name: str | None = None) -> ir.Node:
        """A node whose anchors follow the op's schema (as ``ops.make_node`` lays them out), with every optional
        IR attr at its default (GE's operator factory sets them before the plugin runs), overlaid by ``attrs``.
        Ops missing from the catalogue get the anchors of :func:`fallback_anchor_names`."""
        if name is None:
            self._node_counter += 1
            name = f"\x00node#{self._node_counter}"
        tmpl = self.shared.template(op_type, dynamic_inputs, dynamic_outputs, n_inputs, n_outputs)
        full = _node_attrs(tmpl, attrs)
        optional = tmpl.optional_inputs
        if optional:  # an unfed optional input gets a placeholder desc, the others a default one
            inputs = []
            for i in range(len(tmpl.in_names)):
                inputs.append(_placeholder_desc() if i in optional else _default_desc())
        else:
            inputs = [_default_desc() for _ in tmpl.in_names]
        # the template's anchor-name lists are shared by every node of this layout (never changed in place)
        return self.graph.add_node_trusted(op_type, name, full, inputs, [_default_desc() for _ in tmpl.out_names],
                                           tmpl.in_names, tmpl.out_names)

    def outer_scope_inputs(self, bodies: Iterable[onnx.GraphProto]) -> list[str]:
        found: dict[str, None] = {}
        for body in bodies:
            for name in _free_tensors(body):
                found.setdefault(name, None)
        return list(found)

    def import_subgraph(self, node: ir.Node, name: str, body: onnx.GraphProto, outer: list[str]) -> None:
        sub = _Importer(body, self.shared, name, parent=self, outer=outer)
        graph = sub.build(net_output=True)
        if graph is not None:
            self.shared.subgraphs.append((node, graph))

    # ---- main
    def run_root(self, *, net_output: bool) -> ir.Graph:
        graph = self.build(net_output=net_output)
        if self.shared.unsupported or graph is None:
            raise UnsupportedOnnxOpError(self.source, self.shared.unsupported)
        for node, sub in self.shared.subgraphs:
            graph.add_subgraph(sub, parent_node=node)
        self.shared.progress.finish()
        return graph

    def build(self, *, net_output: bool) -> ir.Graph | None:
        """Build this graph; None when unsupported nodes were found (they are in ``shared.unsupported``)."""
        parts = self.parts
        initializers = self._collect_info(parts)
        init_names = {name for name, _, _ in initializers}
        if self.parent is None:
            self._add_data_nodes([i for i in parts.input if i.name not in init_names])
        else:
            self._add_outer_data_nodes()
        self._add_initializers(initializers)
        del initializers, init_names
        names = _NodeNames(parts.nodes)
        failed = False
        advance = self.shared.progress.advance if self.parent is None and self.shared.progress.reporting else None
        for onnx_node in parts.nodes():
            name = names.name(onnx_node)
            if advance is not None:
                advance()
            if onnx_node.op_type == "Constant" and onnx_node.domain in _DEFAULT_DOMAINS:
                self._add_constant(onnx_node, name)
                continue
            problem = self._convert(onnx_node, name)
            if problem is not None:
                self.shared.unsupported.append(problem)
                failed = True
        if failed or self.shared.unsupported:
            return None
        self._wire()
        self._fill_descs()
        outputs = [o.name for o in parts.output]
        if self.parent is not None:
            self._add_net_output(outputs, f"{self.graph.name}_Node_Output", parent_index=True)
            prefix = self.graph.name + "/"
            for node in self.graph.nodes():
                if node.op_type != "NetOutput":
                    self.graph.rename(node, prefix + node.name)
        elif net_output:
            self._add_net_output(outputs, "Node_Output", parent_index=False)
        else:
            self.graph.attrs["outputs"] = [self._output_ref(t) for t in outputs]
        return self.graph

    # ---- value info
    def _collect_info(self, parts: _Parts) -> list[tuple[str, int, Any]]:
        """dtype and shape of every tensor ONNX (after its inference) knows. Types repeat: each distinct
        serialized TypeProto is parsed once, and equal types share one (dtype, shape) tuple.

        Returns the initializers as (name, index, value or TensorProto) in file order: the value when it is a view
        of the file's bytes (made here, while the initializer's chunk is parsed: it cannot fail), else the
        TensorProto, converted later in name order (where errors are raised)."""
        info = self.info
        parsed_types: dict[bytes, tuple[ir.DataType, tuple[int, ...] | None] | None] = {}
        for infos in (parts.input, parts.value_info, parts.output):
            for vi in infos:
                key = vi.type.SerializeToString()
                try:
                    parsed = parsed_types[key]
                except KeyError:
                    parsed = parsed_types[key] = _value_info(vi)
                if parsed is not None:
                    info[vi.name] = parsed
        parts.drop_value_info()  # read once: free it now (the conversion holds much else)
        initializers: list[tuple[str, int, Any]] = []
        view = parts.view
        for index, t in enumerate(parts.initializers()):
            name = t.name
            data_type = t.data_type
            dims = tuple(t.dims)
            info[name] = (onnx_to_ge_dtype(data_type), dims)
            value = view(index, data_type, dims)
            initializers.append((name, index, t if value is None else value))
        return initializers

    # ---- graph inputs and constants
    def _add_data_nodes(self, inputs: Iterable[onnx.ValueInfoProto]) -> None:
        fmt = self.shared.data_format
        for index, vi in enumerate(inputs):
            dtype, shape = self.info.get(vi.name, (ir.DataType.DT_UNDEFINED, None))
            if not vi.type.HasField("tensor_type"):
                raise OnnxImportError(f"{self.source}: graph input {vi.name!r} is not a tensor; GE accepts only tensors")
            if dtype == ir.DataType.DT_UNDEFINED:
                raise OnnxImportError(
                    f"{self.source}: graph input {vi.name!r} has ONNX elem type {vi.type.tensor_type.elem_type}, "
                    "which GE's parser cannot map (GE fails to parse such a Data input)")
            shape = (ir.UNKNOWN_RANK,) if shape is None else shape
            desc = ir.TensorDesc(dtype=dtype, shape=shape, format=fmt, origin_format=fmt, origin_shape=shape)
            node = self.make_node("Data", {"index": index, "data_type": int(dtype)}, None, None, name=vi.name)
            _set_desc(node.inputs[0], desc)
            _set_desc(node.outputs[0], desc)
            self.producers[vi.name] = (node, 0)

    def _add_outer_data_nodes(self) -> None:
        for index, tensor in enumerate(self.outer):
            found = self.tensor_dtype(tensor)
            dtype = ir.DataType.DT_UNDEFINED if found is None else found
            shape = self.tensor_shape(tensor)
            shape = (ir.UNKNOWN_RANK,) if shape is None else shape
            desc = ir.TensorDesc(dtype=dtype, shape=shape, origin_shape=shape)
            node = self.make_node("Data", {"index": index, "data_type": int(dtype), "_parent_node_index": index + 1},
                                  None, None, name=tensor)
            _set_desc(node.inputs[0], desc)
            _set_desc(node.outputs[0], desc)
            self.producers[tensor] = (node, 0)

    def _add_initializers(self, initializers: list[tuple[str, int, Any]]) -> None:
        """A Const per initializer, in name order (``initializers`` as :meth:`_collect_info` gives them)."""
        parts = self.parts
        advance = self.shared.progress.advance if self.parent is None and self.shared.progress.reporting else None
        for k, (name, index, value) in enumerate(sorted(initializers, key=_first)):
            if advance is not None:
                advance()
            if not isinstance(value, ir.TensorValue):
                value = parts.value(index, value, self.source)
            node = self._const_node(f"{name}_Initializer_{k}", value)
            self.producers[name] = (node, 0)
            self.static[name] = value.array

    def _const_node(self, name: str, value: ir.TensorValue) -> ir.Node:
        graph = self.graph
        if graph.find(name) is not None:
            name = graph.fresh_name(name)
        tmpl = self.shared.template("Const", None, None, 0, 0)
        if tmpl.in_names or len(tmpl.out_names) != 1 or tmpl.defaults.keys() - {"value"}:
            node = self.make_node("Const", {"value": value}, None, None, name=name)
            _set_plain(node.outputs[0], value.dtype, value.shape)
            return node
        # what make_node and _set_plain give, made directly (a Const of every initializer)
        shape = value.shape
        return graph.add_node_trusted("Const", name, {"value": value}, ir.NO_INPUTS,
                                      [ir.trusted_desc(value.dtype, shape, _FORMAT_ND, _FORMAT_ND, shape)],
                                      tmpl.in_names, tmpl.out_names)

    def _add_constant(self, onnx_node: onnx.NodeProto, name: str) -> None:
        where = f"{self.source}: Constant node {name!r}"
        tensor_attr = next((a for a in onnx_node.attribute if a.name == "value" and a.HasField("t")), None)
        if tensor_attr is not None:
            value = tensor_value_from_proto(tensor_attr.t, where=where)
        else:
            value = _constant_from_attrs(attributes(onnx_node), where)
        node = self._const_node(name, value)
        out = onnx_node.output[0]
        self.producers[out] = (node, 0)
        self.record_const(out, value)

    # ---- nodes
    def _convert(self, onnx_node: onnx.NodeProto, name: str) -> UnsupportedNode | None:
        domain = "" if onnx_node.domain in _DEFAULT_DOMAINS else onnx_node.domain
        entry, opset = self.shared.converter(domain, onnx_node.op_type)
        if entry is not None and entry.direct is not None and self.streaming and not onnx_node.attribute \
                and self._convert_direct(onnx_node, name, entry):
            return None
        ctx = OpContext(self, onnx_node, name, opset)
        if entry is None:
            if onnx_node.op_type in self.shared.custom:
                self._convert_custom(ctx)
                self._finish(ctx, expands=False)
                return None
            ranges = registered_opsets(domain, onnx_node.op_type)
            reason = ("GE registers it only for opsets " + ", ".join(f"{lo}-{hi}" for lo, hi in ranges)) if ranges \
                else "not in the GE ONNX mapping and not declared as a custom op"
            return UnsupportedNode(name, onnx_node.op_type, onnx_node.domain, opset, reason)
        try:
            entry.fn(ctx)
        except NodeNotConvertible as exc:
            for em in ctx.emitted:
                self.graph.remove_node(em.node)
            return UnsupportedNode(name, onnx_node.op_type, onnx_node.domain, opset, str(exc))
        except OnnxImportError:
            raise
        except Exception as exc:  # a converter tripping over malformed attributes or inputs
            raise OnnxImportError(
                f"{self.source}: node {name!r} ({onnx_node.op_type}, opset {opset}) is malformed: "
                f"{type(exc).__name__}: {exc}") from exc
        self._finish(ctx, expands=entry.expands)
        return None

    def _convert_direct(self, onnx_node: onnx.NodeProto, name: str, entry: ConverterEntry) -> bool:
        """:meth:`_convert` of an ONNX node without attributes whose converter states its conversion as
        ``entry.direct`` (:class:`Direct`), while streaming: the node the converter would emit and
        :meth:`_finish_one` would finish (named, wired, its input descs those of its producers, its output descs
        ONNX's inferred ones), made here in one step with its final descs. False (nothing done) when the converter
        must run: the ONNX node has more inputs or outputs than the GE op has anchors (the converter reports it),
        reads a tensor not produced yet (which ends streaming), or has an output ONNX inference left unknown
        (gebench's inference then fills it)."""
        direct = entry.direct
        assert direct is not None
        ins: list[str | None] = list(onnx_node.input)
        if "" in ins:  # read as OpContext reads them: an empty name is an absent input, trailing ones dropped
            ins = [tensor or None for tensor in ins]
            while ins and ins[-1] is None:
                ins.pop()
        if direct.inputs is not None:
            del ins[direct.inputs:]
        outs: list[str | None] = list(onnx_node.output)
        if "" in outs:
            outs = [tensor or None for tensor in outs]
        layout = self.shared.direct_layout(direct, len(ins), len(outs))
        n_in, n_out = layout.n_in, layout.n_out
        if len(ins) > n_in or len(outs) > n_out:
            return False
        producers = self.producers
        sources: list[tuple[ir.Node, int] | None] = []
        for tensor in ins:
            if tensor is None:
                sources.append(None)
                continue
            src = producers.get(tensor)
            if src is None:
                return False
            sources.append(src)
        info = self.info
        out_descs = []
        formats = layout.formats
        port = 0
        for tensor in outs:
            known = None if tensor is None else info.get(tensor)
            if known is None or known[1] is None or known[0] == _DT_UNDEFINED:
                return False
            fmt = formats[port]
            out_descs.append(ir.trusted_desc(known[0], known[1], fmt, fmt, known[1]))
            port += 1
        if port < n_out:
            return False  # an output anchor no ONNX output names: gebench's inference fills it
        in_descs = []
        for src in sources:
            in_descs.append(_default_desc() if src is None else _desc_copy(src[0].outputs[src[1]]))
        optional = layout.optional
        for port, src in enumerate(sources):
            if src is None and port in optional:
                in_descs[port] = _placeholder_desc()
        for port in range(len(sources), n_in):
            in_descs.append(_placeholder_desc() if port in optional else _default_desc())
        attrs = _node_attrs(layout.tmpl, dict(direct.attrs)) if layout.attrs is None else layout.attrs.copy()
        graph = self.graph
        if graph.find(name) is not None:
            name_given = graph.fresh_name(name)
        else:
            name_given = name
        if entry.expands:
            attrs["_datadump_original_op_names"] = [name]
        node = graph.add_node_trusted(direct.ge_type, name_given, attrs, in_descs, out_descs, layout.tmpl.in_names,
                                      layout.tmpl.out_names)
        port = 0
        for tensor in outs:
            if tensor is not None:
                producers[tensor] = (node, port)
            port += 1
        port = 0
        for src in sources:
            if src is not None:
                graph.add_edge_trusted(src[0], src[1], node, port)
            port += 1
        return True

    def _convert_custom(self, ctx: OpContext) -> None:
        schema = ops.require_schema(ctx.op_type)
        attrs = {k: _coerce_attr(v, _attr_type(schema, k)) for k, v in ctx.attrs.items()}
        n_fixed_in = sum(1 for d in schema.inputs if d.kind != "dynamic")
        n_fixed_out = sum(1 for d in schema.outputs if d.kind != "dynamic")
        dyn_in = {d.name: max(0, ctx.num_inputs - n_fixed_in) for d in schema.inputs if d.kind == "dynamic"}
        dyn_out = {d.name: max(0, len(ctx.onnx_node.output) - n_fixed_out)
                   for d in schema.outputs if d.kind == "dynamic"}
        ctx.emit(ctx.op_type, ctx.inputs(), ctx.outputs(), attrs=attrs, dynamic_inputs=dyn_in or None,
                 dynamic_outputs=dyn_out or None)

    def _finish(self, ctx: OpContext, *, expands: bool) -> None:
        emitted = ctx.emitted
        if not emitted:
            raise RuntimeError(f"converter for {ctx.op_type} emitted no node for {ctx.name!r}")
        if len(emitted) == 1 and self.streaming:
            self._finish_one(ctx.name, emitted[0], expands)
            return
        if len(emitted) == 1:
            final = [ctx.name]
        else:
            final = []
            for em in emitted:
                final.append(f"PartitionedCall_{ctx.name}_{em.suffix}_{self.shared.partition_counter}")
                self.shared.partition_counter += 1
        graph = self.graph
        producers = self.producers
        for em, new_name in zip(emitted, final, strict=True):
            if em.node._name == new_name:
                pass  # named so by emit (see OpContext.emit)
            else:
                if graph.find(new_name) is not None:
                    new_name = graph.fresh_name(new_name)
                graph.rename(em.node, new_name)
            if expands:
                em.node.attrs["_datadump_original_op_names"] = [ctx.name]
            port = 0
            for tensor in em.outputs:
                if tensor is not None:
                    producers[tensor] = (em.node, port)
                port += 1
        if self.streaming:
            for em in emitted:
                for tensor in em.inputs:
                    if tensor is not None and tensor not in producers:
                        self.streaming = False  # a forward reference: the rest goes through _wire/_fill_descs
                        break
                else:
                    continue
                break
        if not self.streaming:
            self.pending.extend(emitted)
            return
        # Every input is produced already: wire and fill now (the same edges in the same order as _wire, and
        # the nodes filled in a topological order, as _fill_descs does), and keep nothing for later.
        for em in emitted:
            node = em.node
            port = 0
            for tensor in em.inputs:
                if tensor is not None:
                    src, src_port = producers[tensor]
                    graph.add_edge_trusted(src, src_port, node, port)
                port += 1
        if len(emitted) > 1:
            emitted = sorted(emitted, key=lambda e: graph.position(e.node))
        for em in emitted:
            self._fill_node(em.node, em)

    def _finish_one(self, onnx_name: str, em: Emitted, expands: bool) -> None:
        """:meth:`_finish` of a converter that emitted one node for the ONNX node named ``onnx_name``, while
        streaming: the same steps in one pass."""
        graph = self.graph
        producers = self.producers
        node = em.node
        name = onnx_name
        if node._name != name:
            if graph.find(name) is not None:
                name = graph.fresh_name(name)
            graph.rename(node, name)
        if expands:
            node.attrs["_datadump_original_op_names"] = [onnx_name]
        port = 0
        for tensor in em.outputs:
            if tensor is not None:
                producers[tensor] = (node, port)
            port += 1
        sources = []
        for tensor in em.inputs:
            if tensor is None:
                sources.append(None)
                continue
            src = producers.get(tensor)
            if src is None:
                self.streaming = False  # a forward reference: the rest goes through _wire/_fill_descs
                self.pending.append(em)
                return
            sources.append(src)
        inputs = node.inputs
        port = 0
        for src in sources:
            if src is not None:
                graph.add_edge_trusted(src[0], src[1], node, port)
                _set_desc(inputs[port], src[0].outputs[src[1]])
            port += 1
        self._fill_outputs(node, em)

    # ---- edges and descs
    def _wire(self) -> None:
        """Add the edges of the nodes left in ``pending`` (the whole graph after a forward reference), in
        emission order, so every output's uses come out in that order.

        Raises:
            OnnxImportError: a node reads a tensor nothing produces.
        """
        for em in self.pending:
            for port, tensor in enumerate(em.inputs):
                if tensor is None:
                    continue
                src = self.producers.get(tensor)
                if src is None:
                    raise OnnxImportError(
                        f"{self.source}: node {em.node.name!r} reads tensor {tensor!r}, which no node, "
                        "graph input or initializer produces")
                self.graph.add_edge(src[0], src[1], em.node, port)

    def _fill_descs(self) -> None:
        """Fill the descs of the nodes left in ``pending``, in topological order (producers first)."""
        if not self.pending:
            return
        by_node = {em.node.id: em for em in self.pending}
        for node in self.graph.nodes():
            em = by_node.get(node.id)
            if em is not None:  # Data / Const and streamed nodes: already set
                self._fill_node(node, em)

    def _fill_node(self, node: ir.Node, em: Emitted) -> None:
        """Input descs from the producers (their outputs are final), then the output descs from ONNX inference, or
        gebench's op inference where ONNX says nothing."""
        port = 0
        for prod in self.graph.producers(node):
            if prod is not None:
                _set_desc(node.inputs[port], prod[0].outputs[prod[1]])
            port += 1
        self._fill_outputs(node, em)

    def _fill_outputs(self, node: ir.Node, em: Emitted) -> None:
        """:meth:`_fill_node` after the input descs: input formats, then the output descs and formats."""
        for port, fmt in em.input_formats.items():
            if port < len(node.inputs) and not node.inputs[port].is_placeholder:
                node.inputs[port].format = fmt
                node.inputs[port].origin_format = fmt
        if node._op_type != "Const":
            known: dict[int, tuple[ir.DataType, tuple[int, ...]]] = {}
            info = self.info
            port = 0
            for tensor in em.outputs:
                entry = None if tensor is None else info.get(tensor)
                if entry is not None and entry[1] is not None and entry[0] != _DT_UNDEFINED:
                    known[port] = entry  # type: ignore[assignment]
                port += 1
            if len(known) < len(node.outputs):
                self._infer(node)
            for port, (dtype, shape) in known.items():
                _set_plain(node.outputs[port], dtype, shape)
        for port, fmt in em.output_formats.items():
            node.outputs[port].format = fmt
            node.outputs[port].origin_format = fmt

    def _infer(self, node: ir.Node) -> None:
        before = [d.copy() for d in node.outputs]
        try:
            if ops.get_schema(node.op_type) is None:
                raise LookupError("no schema")
            ops.infer_node(self.graph, node, values=self._values)
        except Exception as exc:  # inference is best effort on import; unknown shapes stay unknown
            _log.debug("%s: no shape inference for %s (%s): %s", self.source, node.name, node.op_type, exc)
            node.outputs = before
            for i, desc in enumerate(node.outputs):
                if desc.shape == ():
                    node.outputs[i] = ir.TensorDesc(dtype=ir.DataType.DT_UNDEFINED, shape=(ir.UNKNOWN_RANK,),
                                                    origin_shape=(ir.UNKNOWN_RANK,))

    def _output_ref(self, tensor: str) -> str:
        src = self.producers.get(tensor)
        if src is None:
            raise OnnxImportError(f"{self.source}: graph output {tensor!r} is not produced by any node")
        return f"{src[0].name}:{src[1]}"

    def _add_net_output(self, outputs: list[str], name: str, *, parent_index: bool) -> None:
        sources = []
        for tensor in outputs:
            src = self.producers.get(tensor)
            if src is None:
                raise OnnxImportError(f"{self.source}: graph output {tensor!r} is not produced by any node")
            sources.append(src)
        if self.graph.find(name) is not None:
            name = self.graph.fresh_name(name)
        net = self.make_node("NetOutput", {}, {"x": len(sources)}, None, name=name)
        for port, (src, sp) in enumerate(sources):
            self.graph.add_edge(src, sp, net, port)
            _set_desc(net.inputs[port], src.outputs[sp])
            if parent_index:
                net.inputs[port].attrs["_parent_node_index"] = port


def _node_bodies(node: onnx.NodeProto) -> list[onnx.GraphProto]:
    """Subgraph bodies held by the attributes of ``node``."""
    return [sub for attr in node.attribute for sub in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs)]


def _free_tensors(body: onnx.GraphProto) -> list[str]:
    """Names a graph body reads but does not define (outer-scope values), in first-use order."""
    defined = {i.name for i in body.input} | {t.name for t in body.initializer}
    free: dict[str, None] = {}
    for node in body.node:
        for name in node.input:
            if name and name not in defined:
                free.setdefault(name, None)
        for attr in node.attribute:
            for sub in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
                for name in _free_tensors(sub):
                    if name not in defined:
                        free.setdefault(name, None)
        defined.update(o for o in node.output if o)
    for out in body.output:
        if out.name not in defined:
            free.setdefault(out.name, None)
    return list(free)


# --------------------------------------------------------------------------- helpers
def _value_info(vi: onnx.ValueInfoProto) -> tuple[ir.DataType, tuple[int, ...] | None] | None:
    if not vi.type.HasField("tensor_type"):
        return None
    tt = vi.type.tensor_type
    dtype = onnx_to_ge_dtype(tt.elem_type) if tt.elem_type else ir.DataType.DT_UNDEFINED
    if not tt.HasField("shape"):
        return dtype, None
    dims = tuple(int(d.dim_value) if d.HasField("dim_value") else ir.UNKNOWN_DIM for d in tt.shape.dim)
    return dtype, dims


def _constant_from_attrs(attrs: dict[str, Any], where: str) -> ir.TensorValue:
    if "value_float" in attrs:
        return ir.TensorValue(ir.DataType.DT_FLOAT, np.asarray(attrs["value_float"], np.float32))
    if "value_floats" in attrs:
        return ir.TensorValue(ir.DataType.DT_FLOAT, np.asarray(attrs["value_floats"], np.float32).reshape(-1))
    if "value_int" in attrs:
        return ir.TensorValue(ir.DataType.DT_INT64, np.asarray(attrs["value_int"], np.int64))
    if "value_ints" in attrs:
        return ir.TensorValue(ir.DataType.DT_INT64, np.asarray(attrs["value_ints"], np.int64).reshape(-1))
    if "value" in attrs and isinstance(attrs["value"], np.ndarray):
        arr = attrs["value"]
        return ir.TensorValue(ir.data_type_from_numpy(arr.dtype), arr)
    raise OnnxImportError(f"{where}: unsupported Constant form (attributes {sorted(attrs)}); GE reads value tensors")


def _attr_type(schema: Any, name: str) -> str | None:
    for adef in schema.attrs:
        if adef.name == name:
            return adef.type
    return None


def _coerce_attr(value: Any, attr_type: str | None) -> Any:
    if isinstance(value, np.ndarray):
        return ir.TensorValue(ir.data_type_from_numpy(value.dtype), value)
    if attr_type == "Bool":
        return bool(value)
    if attr_type == "Float" and isinstance(value, int):
        return float(value)
    if attr_type == "ListFloat" and isinstance(value, list):
        return [float(v) for v in value]
    if attr_type == "ListBool" and isinstance(value, list):
        return [bool(v) for v in value]
    if isinstance(value, tuple):
        return list(value)
    return value


#: Checker reasons about op support, which the op mapping decides instead (``UnsupportedOnnxOpError``).
_SUPPORT_REASONS = ("No Op registered for ", "No opset import for domain")


def _check_model(proto: onnx.ModelProto, source: str) -> None:
    """``onnx.checker.check_model``: a model it rejects is refused with its reason.

    Three differences, where GE's parser accepts what the checker does not: a graph input, output or value_info
    that leaves out its type, element type or shape (GE's parser and gebench infer them), an initializer that an
    IR version 3 model does not also list as a graph input (a formality of that version; GE reads initializers
    as such) -- the checker sees a copy where these are filled in -- and an op type the checker does not know
    (the op mapping decides, as in GE).

    Raises:
        OnnxImportError: the checker's reason, after the file name.
    """
    checked = proto
    old_ir = proto.ir_version < 4
    if any(_is_partial(vi) for g in _graphs(proto.graph) for vi in (*g.input, *g.output, *g.value_info)) or (
            old_ir and any(_unlisted_initializers(g) for g in _graphs(proto.graph))):
        checked = onnx.ModelProto()
        checked.CopyFrom(proto)
        for g in _graphs(checked.graph):
            for vi in (*g.input, *g.output, *g.value_info):
                if _is_partial(vi):
                    _complete(vi)
            if old_ir:
                for t in _unlisted_initializers(g):
                    g.input.append(onnx.helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)))
    for g in _graphs(proto.graph):
        _check_single_assignment(g, source)
        for vi in (*g.input, *g.output, *g.value_info):
            if vi.type.HasField("tensor_type"):
                for axis, dim in enumerate(vi.type.tensor_type.shape.dim):
                    if dim.HasField("dim_value") and dim.dim_value < -1:
                        raise OnnxImportError(
                            f"{source}: invalid ONNX model: dimension {axis} of tensor {vi.name!r} (graph "
                            f"{g.name!r}) is {dim.dim_value}; a dimension is >= 0 (or -1, or a name, when "
                            "unknown): fix the model or re-export it")
    try:
        onnx.checker.check_model(checked)
    except onnx.checker.ValidationError as exc:
        reason = " ".join(line.strip() for line in str(exc).strip().splitlines()[:1]) or type(exc).__name__
        if reason.startswith(_SUPPORT_REASONS):
            # which op types exist is GE's parser's call (it maps NPU ops in the default domain, for one); the
            # importer reports every op it cannot map
            _log.debug("%s: onnx.checker: %s (left to the op mapping)", source, reason)
            return
        raise OnnxImportError(f"{source}: invalid ONNX model (onnx.checker): {reason}; fix the model or re-export "
                              "it") from None
    except ValueError as exc:  # a model above protobuf's 2 GB limit can only be checked from its file
        _log.info("%s: not checked by onnx.checker: %s", source, exc)


def _check_single_assignment(graph: onnx.GraphProto, source: str) -> None:
    """Every tensor of ``graph`` has one producer: a graph input, an initializer or one node output (the checker's
    SSA rule, with the nodes named)."""
    producer = {name: "a graph input" for name in (vi.name for vi in graph.input)}
    producer.update({t.name: "an initializer" for t in graph.initializer if t.name not in producer})
    for i, node in enumerate(graph.node):
        label = f"node {node.name or f'#{i}'!r} ({node.op_type})"
        for out in node.output:
            if not out:
                continue
            if out in producer:
                raise OnnxImportError(
                    f"{source}: invalid ONNX model: tensor {out!r} of graph {graph.name!r} is written by {label} and "
                    f"by {producer[out]}; ONNX graphs are in single static assignment form (each tensor has one "
                    "producer): rename one of them")
            producer[out] = label


def _graphs(graph: onnx.GraphProto) -> Iterable[onnx.GraphProto]:
    yield graph
    for node in graph.node:
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                yield from _graphs(attr.g)
            elif attr.type == onnx.AttributeProto.GRAPHS:
                for g in attr.graphs:
                    yield from _graphs(g)


def _unlisted_initializers(graph: onnx.GraphProto) -> list[onnx.TensorProto]:
    listed = {vi.name for vi in graph.input}
    return [t for t in graph.initializer if t.name not in listed]


def _is_partial(vi: onnx.ValueInfoProto) -> bool:
    if not vi.HasField("type"):
        return True
    if vi.type.HasField("tensor_type"):
        tt = vi.type.tensor_type
        return tt.elem_type == onnx.TensorProto.UNDEFINED or not tt.HasField("shape")
    return False


def _complete(vi: onnx.ValueInfoProto) -> None:
    tt = vi.type.tensor_type
    if tt.elem_type == onnx.TensorProto.UNDEFINED:
        tt.elem_type = onnx.TensorProto.FLOAT
    if not tt.HasField("shape"):
        tt.shape.SetInParent()
