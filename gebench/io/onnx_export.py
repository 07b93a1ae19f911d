"""IR -> ONNX export for GE ops that have an ONNX equivalent (default domain, opset 18).

The export inverts GE's ONNX mapping: ``BatchMatMulV2`` -> ``MatMul``, ``Conv2D`` -> ``Conv`` (GE's
``[1,1,h,w]`` layouts folded back), ``Transpose`` + Const perm -> ``Transpose(perm=...)``, ``ConcatD`` ->
``Concat`` and so on. Const nodes become initializers only where a real tensor input reads them (a Const that
only fed an attribute, like a Transpose perm, disappears), so import -> export -> import gives the same op types.

Tensor names: output ``p`` of node ``n`` is ``n`` for ``p == 0`` and ``n:p`` otherwise; graph inputs keep the
Data node names. Graph outputs are the inputs of the ``NetOutput`` node (or ``graph.attrs["outputs"]``).
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from gebench import ir

from ._onnx_common import ge_to_onnx_dtype

__all__ = ["OnnxExportError", "to_onnx", "save_onnx", "exportable_op_types", "EXPORT_OPSET"]

_log = logging.getLogger(__name__)

#: Opset of exported models (the newest GE's ONNX parser accepts).
EXPORT_OPSET = 18
_IR_VERSION = 8


class OnnxExportError(ValueError):
    """The graph holds nodes that have no ONNX equivalent; ``nodes`` lists (name, op type, reason) for each."""

    def __init__(self, graph_name: str, nodes: Sequence[tuple[str, str, str]]) -> None:
        self.nodes = list(nodes)
        lines = "\n".join(f"  - {n!r} ({t}): {r}" for n, t, r in self.nodes)
        super().__init__(
            f"graph {graph_name!r}: {len(self.nodes)} node(s) have no ONNX equivalent:\n{lines}\n"
            "Fix: export a snapshot taken before the pass that introduced them, or dump the graph as ge_proto instead."
        )


class _NotExportable(Exception):
    pass


def save_onnx(graph: ir.Graph | Any, path: str | os.PathLike[str], *, check: bool = True) -> None:
    """Write ``graph`` (an ``ir.Graph`` or a ``ge.graph.Graph``) as an ONNX file (see :func:`to_onnx`).

    Raises:
        OnnxExportError: some nodes have no ONNX equivalent (all are listed); nothing is written.
    """
    model = to_onnx(graph, check=check)
    onnx.save(model, os.fspath(path))


def to_onnx(graph: ir.Graph | Any, *, check: bool = True) -> onnx.ModelProto:
    """Convert ``graph`` to an ONNX ModelProto at opset 18. O(nodes + constant bytes).

    Args:
        graph: the IR graph or a ``ge.graph.Graph`` (its ``.ir``); root graph only (subgraph-carrying nodes are
            not exportable).
        check: run ``onnx.checker.check_model`` on the result.

    Raises:
        OnnxExportError: nodes without an ONNX equivalent, listed all at once, or graph outputs that cannot be found.
        TypeError: ``graph`` is neither.
    """
    return _Exporter(ir.as_graph(graph)).run(check=check)


# --------------------------------------------------------------------------- exporter
@dataclasses.dataclass
class _Ctx:
    exporter: _Exporter
    node: ir.Node
    made: list[onnx.NodeProto] = dataclasses.field(default_factory=list)

    def inp(self, port: int) -> str:
        """Tensor name feeding input ``port`` ("" when unfed)."""
        return self.exporter.tensor_in(self.node, port)

    def fed(self, port: int) -> bool:
        return port < len(self.node.inputs) and self.exporter.graph.producer(self.node, port) is not None

    def value(self, port: int) -> np.ndarray | None:
        """The constant value feeding input ``port`` (None if not a Const)."""
        prod = self.exporter.graph.producer(self.node, port) if port < len(self.node.inputs) else None
        if prod is None or prod[0].op_type not in ("Const", "Constant"):
            return None
        value = prod[0].attrs.get("value")
        return value.array if isinstance(value, ir.TensorValue) else None

    def require_value(self, port: int, what: str) -> np.ndarray:
        v = self.value(port)
        if v is None:
            raise _NotExportable(f"input {port} ({what}) must be a Const")
        return v

    def out(self, port: int = 0) -> str:
        return _tensor_name(self.node, port)

    def outs(self) -> list[str]:
        return [self.out(p) for p in range(len(self.node.outputs))]

    def init(self, suffix: str, array: np.ndarray) -> str:
        return self.exporter.add_initializer(f"{self.node.name}/{suffix}", array)

    def emit(self, op_type: str, inputs: Sequence[str], outputs: Sequence[str], *, suffix: str = "",
             **attrs: Any) -> str:
        name = self.node.name if not suffix else f"{self.node.name}/{suffix}"
        ins = list(inputs)
        while ins and not ins[-1]:
            ins.pop()
        self.made.append(helper.make_node(op_type, ins, list(outputs), name=name, **attrs))
        return outputs[0] if outputs else ""

    def attr(self, key: str, default: Any = None) -> Any:
        return self.node.attrs.get(key, default)

    def in_rank(self, port: int) -> int | None:
        shape = self.node.inputs[port].shape
        return None if shape == (ir.UNKNOWN_RANK,) else len(shape)


_Exp = Callable[[_Ctx], None]
_EXPORTERS: dict[str, _Exp] = {}


def _exports(*op_types: str) -> Callable[[_Exp], _Exp]:
    def deco(fn: _Exp) -> _Exp:
        for t in op_types:
            _EXPORTERS[t] = fn
        return fn

    return deco


def _tensor_name(node: ir.Node, port: int) -> str:
    return node.name if port == 0 else f"{node.name}:{port}"


class _Exporter:
    def __init__(self, graph: ir.Graph) -> None:
        self.graph = graph
        self.initializers: dict[str, TensorProto] = {}
        self.const_tensors: dict[int, str] = {}

    def add_initializer(self, name: str, array: np.ndarray) -> str:
        base, k = name, 0
        while name in self.initializers:
            k += 1
            name = f"{base}_{k}"
        self.initializers[name] = numpy_helper.from_array(np.asarray(array), name=name)
        return name

    def tensor_in(self, node: ir.Node, port: int) -> str:
        if port >= len(node.inputs):
            return ""
        prod = self.graph.producer(node, port)
        if prod is None:
            return ""
        src, sp = prod
        if src.op_type in ("Const", "Constant"):
            return self._const_tensor(src)
        if self.is_expansion_alias(src):
            return self.tensor_in(src, 0)
        return _tensor_name(src, sp)

    def is_expansion_alias(self, node: ir.Node) -> bool:
        """True for an Identity that GE's importer added inside an expansion (e.g. LayerNormalization's gamma):
        it and all its consumers come from the same ONNX node, so the ONNX op absorbs it again."""
        if node.op_type != "Identity":
            return False
        origin = node.attrs.get("_datadump_original_op_names")
        if not origin:
            return False
        uses = self.graph.uses(node, 0)
        return bool(uses) and all(dst.attrs.get("_datadump_original_op_names") == origin for dst, _ in uses)

    def const_as_i64(self, node: ir.Node) -> str:
        """An int64 initializer with the value of Const ``node`` (shared by every consumer)."""
        key = -1 - node.id
        if key not in self.const_tensors:
            value = node.attrs.get("value")
            if not isinstance(value, ir.TensorValue):
                raise _NotExportable(f"Const {node.name!r} has no tensor value")
            if value.dtype == ir.DataType.DT_INT64:
                self.const_tensors[key] = self._const_tensor(node)
            else:
                self.const_tensors[key] = self.add_initializer(f"{node.name}_int64", value.array.astype(np.int64))
        return self.const_tensors[key]

    def _const_tensor(self, node: ir.Node) -> str:
        if node.id not in self.const_tensors:
            value = node.attrs.get("value")
            if not isinstance(value, ir.TensorValue):
                raise _NotExportable(f"Const {node.name!r} has no tensor value")
            if value.dtype == ir.DataType.DT_BF16:
                proto = helper.make_tensor(node.name, TensorProto.BFLOAT16, value.shape,
                                           value.array.reshape(-1).tolist(), raw=False)
                self.initializers[node.name] = proto
                self.const_tensors[node.id] = node.name
            else:
                self.const_tensors[node.id] = self.add_initializer(node.name, value.array)
        return self.const_tensors[node.id]

    def run(self, *, check: bool) -> onnx.ModelProto:
        g = self.graph
        problems: list[tuple[str, str, str]] = []
        made: list[onnx.NodeProto] = []
        datas = sorted(g.nodes_of_type("Data"), key=lambda n: int(n.attrs.get("index", 0)))
        inputs = [self._value_info(n.name, n.outputs[0] if n.outputs else ir.TensorDesc()) for n in datas]
        outputs_src = self._graph_outputs(problems)
        for node in g.nodes():
            if node.op_type in ("Const", "Constant") and g.num_uses(node) == 0:
                try:
                    self._const_tensor(node)  # unused weights survive a round trip
                except _NotExportable as exc:
                    problems.append((node.name, node.op_type, str(exc)))
                continue
            if node.op_type in ("Data", "Const", "Constant", "NetOutput") or self.is_expansion_alias(node):
                continue
            fn = _EXPORTERS.get(node.op_type)
            if fn is None:
                problems.append((node.name, node.op_type, "no ONNX equivalent"))
                continue
            if node.subgraph_names:
                problems.append((node.name, node.op_type, "nodes with subgraphs are not exported"))
                continue
            ctx = _Ctx(self, node)
            try:
                fn(ctx)
            except _NotExportable as exc:
                problems.append((node.name, node.op_type, str(exc)))
                continue
            made.extend(ctx.made)
        outputs = []
        for i, (src, sp) in enumerate(outputs_src):
            if src.op_type in ("Const", "Constant"):
                value = src.attrs.get("value")
                name = f"output_{i}_{src.name}"
                made.append(helper.make_node("Constant", [], [name], name=name,
                                             value=numpy_helper.from_array(value.array, name=name)))
                outputs.append(self._value_info(name, src.outputs[sp]))
            else:
                outputs.append(self._value_info(_tensor_name(src, sp), src.outputs[sp]))
        if problems:
            raise OnnxExportError(g.name, problems)
        gproto = helper.make_graph(made, g.name, inputs, outputs, initializer=list(self.initializers.values()))
        model = helper.make_model(gproto, producer_name="gebench",
                                  opset_imports=[helper.make_operatorsetid("", EXPORT_OPSET)])
        model.ir_version = _IR_VERSION
        if check:
            try:
                onnx.checker.check_model(model)
            except onnx.checker.ValidationError as exc:
                raise OnnxExportError(g.name, [("<model>", "-", f"onnx.checker rejects the export: {exc}")]) from exc
        return model

    def _graph_outputs(self, problems: list[tuple[str, str, str]]) -> list[tuple[ir.Node, int]]:
        g = self.graph
        nets = g.nodes_of_type("NetOutput")
        if len(nets) == 1:
            result = []
            for port, prod in enumerate(g.producers(nets[0])):
                if prod is None:
                    problems.append((nets[0].name, "NetOutput", f"input {port} is not connected"))
                else:
                    result.append(prod)
            return result
        if len(nets) > 1:
            problems.append((nets[1].name, "NetOutput", "a graph may have one NetOutput"))
            return []
        refs = g.attrs.get("outputs")
        if not refs:
            problems.append(("<graph>", "-", "no NetOutput node and no graph.attrs['outputs']: outputs unknown"))
            return []
        result = []
        for ref in refs:
            name, _, port = str(ref).rpartition(":")
            node = g.find(name)
            if node is None:
                problems.append((name, "-", f"graph output {ref!r} names a missing node"))
            else:
                result.append((node, int(port)))
        return result

    @staticmethod
    def _value_info(name: str, desc: ir.TensorDesc) -> onnx.ValueInfoProto:
        elem = ge_to_onnx_dtype(desc.dtype) or TensorProto.UNDEFINED
        if desc.shape == (ir.UNKNOWN_RANK,):
            return helper.make_tensor_value_info(name, elem, None)
        dims = [d if d >= 0 else None for d in desc.shape]
        return helper.make_tensor_value_info(name, elem, dims)


# --------------------------------------------------------------------------- op exporters
_SIMPLE = {
    "Add": "Add", "AddV2": "Add", "Sub": "Sub", "Mul": "Mul", "RealDiv": "Div", "Div": "Div", "Pow": "Pow",
    "Maximum": "Max", "Minimum": "Min", "Equal": "Equal", "Less": "Less", "LessEqual": "LessOrEqual",
    "Greater": "Greater", "GreaterEqual": "GreaterOrEqual", "LogicalAnd": "And", "LogicalOr": "Or",
    "LogicalNot": "Not", "PRelu": "PRelu", "Relu": "Relu", "Sigmoid": "Sigmoid", "Tanh": "Tanh", "Exp": "Exp",
    "Log": "Log", "Sqrt": "Sqrt", "Erf": "Erf", "Neg": "Neg", "Abs": "Abs", "Reciprocal": "Reciprocal",
    "Floor": "Floor", "Ceil": "Ceil", "Sign": "Sign", "Softplus": "Softplus", "Softsign": "Softsign",
    "Identity": "Identity", "GlobalAveragePool": "GlobalAveragePool", "IsNan": "IsNaN", "Round": "Round",
    "Sin": "Sin", "Cos": "Cos", "Tan": "Tan", "HardSwish": "HardSwish", "SelectV2": "Where",
    "Expand": "Expand", "BroadcastTo": "Expand", "Tile": "Tile", "Range": "Range", "TensorScatterUpdate": "ScatterND",
    "Dropout": "Dropout", "GatherNd": "GatherND", "Acos": "Acos", "Asin": "Asin", "Atan": "Atan", "Cosh": "Cosh",
    "Sinh": "Sinh", "Acosh": "Acosh", "Asinh": "Asinh", "Atanh": "Atanh", "BitwiseAnd": "BitwiseAnd",
    "BitwiseOr": "BitwiseOr", "BitwiseXor": "BitwiseXor", "Invert": "BitwiseNot", "CastLike": "CastLike",
    "MatrixDeterminant": "Det",
}


def _simple(onnx_op: str) -> _Exp:
    def fn(ctx: _Ctx) -> None:
        ctx.emit(onnx_op, [ctx.inp(p) for p in range(len(ctx.node.inputs))], ctx.outs()[:1])

    return fn


for _ge, _ox in _SIMPLE.items():
    _EXPORTERS[_ge] = _simple(_ox)


def _i64(values: Any) -> np.ndarray:
    return np.asarray(values, dtype=np.int64).reshape(-1)


def _as_i64_input(ctx: _Ctx, port: int, suffix: str) -> str:
    """An int64 version of input ``port`` (ONNX wants int64 where GE allows int32)."""
    prod = ctx.exporter.graph.producer(ctx.node, port)
    if prod is not None and prod[0].op_type in ("Const", "Constant"):
        return ctx.exporter.const_as_i64(prod[0])
    if ctx.node.inputs[port].dtype == ir.DataType.DT_INT64:
        return ctx.inp(port)
    return ctx.emit("Cast", [ctx.inp(port)], [f"{ctx.node.name}/{suffix}"], suffix=f"Cast_{suffix}", to=TensorProto.INT64)


def _check_unfed(ctx: _Ctx, *ports: int) -> None:
    for p in ports:
        if ctx.fed(p):
            raise _NotExportable(f"input {p} ({ctx.node.input_names[p]}) is connected; ONNX has no place for it")


def _transposed_last2(ctx: _Ctx, port: int, suffix: str) -> str:
    rank = ctx.in_rank(port)
    if rank is None or rank < 2:
        raise _NotExportable(f"a transposed operand needs a known rank >= 2 (input {port})")
    perm = list(range(rank - 2)) + [rank - 1, rank - 2]
    return ctx.emit("Transpose", [ctx.inp(port)], [f"{ctx.node.name}/{suffix}"], suffix=suffix, perm=perm)


@_exports("BatchMatMulV2", "BatchMatMulV3", "BatchMatMul")
def _batch_matmul(ctx: _Ctx) -> None:
    _check_unfed(ctx, *range(3, len(ctx.node.inputs)))
    ta = bool(ctx.attr("adj_x1", False))
    tb = bool(ctx.attr("adj_x2", False))
    a = _transposed_last2(ctx, 0, "x1_T") if ta else ctx.inp(0)
    b = _transposed_last2(ctx, 1, "x2_T") if tb else ctx.inp(1)
    if ctx.fed(2):
        mm = ctx.emit("MatMul", [a, b], [f"{ctx.node.name}/MatMul"], suffix="MatMul")
        ctx.emit("Add", [mm, ctx.inp(2)], [ctx.out()], suffix="bias")
    else:
        ctx.emit("MatMul", [a, b], [ctx.out()])


@_exports("MatMulV2", "MatMulV3", "MatMul")
def _matmul(ctx: _Ctx) -> None:
    _check_unfed(ctx, *range(3, len(ctx.node.inputs)))
    ta = bool(ctx.attr("transpose_x1", False))
    tb = bool(ctx.attr("transpose_x2", False))
    ranks = (ctx.in_rank(0), ctx.in_rank(1))
    if ranks == (2, 2):
        ctx.emit("Gemm", [ctx.inp(0), ctx.inp(1), ctx.inp(2)], [ctx.out()], transA=int(ta), transB=int(tb))
        return
    if ta or tb:
        raise _NotExportable("transposed operands need rank-2 inputs with known shapes")
    if ctx.fed(2):
        mm = ctx.emit("MatMul", [ctx.inp(0), ctx.inp(1)], [f"{ctx.node.name}/MatMul"], suffix="MatMul")
        ctx.emit("Add", [mm, ctx.inp(2)], [ctx.out()], suffix="bias")
    else:
        ctx.emit("MatMul", [ctx.inp(0), ctx.inp(1)], [ctx.out()])


@_exports("GEMM")
def _gemm(ctx: _Ctx) -> None:
    alpha = ctx.require_value(3, "alpha")
    beta = ctx.require_value(4, "beta")
    ctx.emit("Gemm", [ctx.inp(0), ctx.inp(1), ctx.inp(2)], [ctx.out()], alpha=float(alpha.reshape(-1)[0]),
             beta=float(beta.reshape(-1)[0]), transA=int(bool(ctx.attr("transpose_a", False))),
             transB=int(bool(ctx.attr("transpose_b", False))))


@_exports("Muls", "Adds")
def _scalar_op(ctx: _Ctx) -> None:
    dtype = ctx.node.inputs[0].dtype
    npdt = ir.numpy_dtype(dtype) if dtype in (ir.DataType.DT_FLOAT16, ir.DataType.DT_DOUBLE) else np.float32
    scalar = ctx.init("value", np.asarray(float(ctx.attr("value", 0.0)), dtype=npdt))
    ctx.emit("Mul" if ctx.node.op_type == "Muls" else "Add", [ctx.inp(0), scalar], [ctx.out()])


@_exports("Rsqrt")
def _rsqrt(ctx: _Ctx) -> None:
    root = ctx.emit("Sqrt", [ctx.inp(0)], [f"{ctx.node.name}/Sqrt"], suffix="Sqrt")
    ctx.emit("Reciprocal", [root], [ctx.out()])


@_exports("Relu6")
def _relu6(ctx: _Ctx) -> None:
    lo = ctx.init("min", np.asarray(0.0, np.float32))
    hi = ctx.init("max", np.asarray(6.0, np.float32))
    ctx.emit("Clip", [ctx.inp(0), lo, hi], [ctx.out()])


def _nchw_only(ctx: _Ctx, expected: str) -> None:
    fmt = str(ctx.attr("data_format", expected))
    if fmt != expected:
        raise _NotExportable(f"data_format {fmt!r} has no ONNX form (ONNX convolutions are {expected})")


def _onnx_pads(ge_pads: Sequence[int], rank: int) -> list[int]:
    pads = [int(p) for p in ge_pads]
    return [pads[2 * i] for i in range(rank)] + [pads[2 * i + 1] for i in range(rank)]


@_exports("Conv2D", "Conv3D")
def _conv(ctx: _Ctx) -> None:
    rank = 2 if ctx.node.op_type == "Conv2D" else 3
    _nchw_only(ctx, "NCHW" if rank == 2 else "NCDHW")
    _check_unfed(ctx, 3)
    attrs: dict[str, Any] = {
        "strides": [int(s) for s in ctx.attr("strides")][2:],
        "dilations": [int(d) for d in ctx.attr("dilations", [1] * (rank + 2))][2:],
        "pads": _onnx_pads(ctx.attr("pads"), rank),
        "group": int(ctx.attr("groups", 1)),
    }
    fshape = ctx.node.inputs[1].shape
    if len(fshape) == rank + 2 and all(d > 0 for d in fshape[2:]):
        attrs["kernel_shape"] = list(fshape[2:])
    auto_pad = ctx.attr("auto_pad")
    if auto_pad and auto_pad != "NOTSET":
        attrs["auto_pad"] = str(auto_pad)
        del attrs["pads"]
    ctx.emit("Conv", [ctx.inp(0), ctx.inp(1), ctx.inp(2)], [ctx.out()], **attrs)


@_exports("Conv2DTranspose", "Conv3DTranspose")
def _conv_transpose(ctx: _Ctx) -> None:
    rank = 2 if ctx.node.op_type == "Conv2DTranspose" else 3
    _nchw_only(ctx, "NCHW" if rank == 2 else "NCDHW")
    _check_unfed(ctx, 4)
    size = ctx.value(0)
    attrs: dict[str, Any] = {
        "strides": [int(s) for s in ctx.attr("strides")][2:],
        "dilations": [int(d) for d in ctx.attr("dilations", [1] * (rank + 2))][2:],
        "pads": _onnx_pads(ctx.attr("pads"), rank),
        "group": int(ctx.attr("groups", 1)),
        "output_padding": [int(p) for p in ctx.attr("output_padding", [0] * (rank + 2))][2:],
    }
    if size is not None and all(int(v) > 0 for v in size.reshape(-1)[2:]):
        attrs["output_shape"] = [int(v) for v in size.reshape(-1)[2:]]
        del attrs["pads"]
    ctx.emit("ConvTranspose", [ctx.inp(1), ctx.inp(2), ctx.inp(3)], [ctx.out()], **attrs)


_AUTO_PAD = {"CALCULATED": "NOTSET", "SAME": "SAME_UPPER", "VALID": "VALID"}


@_exports("MaxPoolV3", "AvgPoolV2")
def _pool(ctx: _Ctx) -> None:
    _nchw_only(ctx, "NCHW")
    is_max = ctx.node.op_type == "MaxPoolV3"
    if bool(ctx.attr("global_pooling", False)):
        ctx.emit("GlobalMaxPool" if is_max else "GlobalAveragePool", [ctx.inp(0)], [ctx.out()])
        return
    attrs: dict[str, Any] = {
        "kernel_shape": [int(k) for k in ctx.attr("ksize")][2:],
        "strides": [int(s) for s in ctx.attr("strides")][2:],
        "ceil_mode": int(bool(ctx.attr("ceil_mode", False))),
    }
    mode = str(ctx.attr("padding_mode", "CALCULATED"))
    if mode == "CALCULATED":
        attrs["pads"] = _onnx_pads(ctx.attr("pads", [0, 0, 0, 0]), 2)
    else:
        attrs["auto_pad"] = _AUTO_PAD.get(mode, "NOTSET")
    if not is_max:
        attrs["count_include_pad"] = int(not bool(ctx.attr("exclusive", True)))
    ctx.emit("MaxPool" if is_max else "AveragePool", [ctx.inp(0)], [ctx.out()], **attrs)


def _only_output0(ctx: _Ctx) -> None:
    for port in range(1, len(ctx.node.outputs)):
        if ctx.exporter.graph.num_uses(ctx.node, port):
            raise _NotExportable(f"output {port} ({ctx.node.output_names[port]}) is used; ONNX's op does not produce it")


@_exports("BatchNorm")
def _batch_norm(ctx: _Ctx) -> None:
    _nchw_only(ctx, "NCHW")
    if bool(ctx.attr("is_training", False)):
        raise _NotExportable("is_training=true has no inference-mode ONNX form")
    _only_output0(ctx)
    if not (ctx.fed(3) and ctx.fed(4)):
        raise _NotExportable("ONNX BatchNormalization needs the mean and variance inputs")
    ctx.emit("BatchNormalization", [ctx.inp(p) for p in range(5)], [ctx.out()],
             epsilon=float(ctx.attr("epsilon", 1e-4)))


@_exports("InstanceNorm")
def _instance_norm(ctx: _Ctx) -> None:
    _nchw_only(ctx, "NCHW")
    _only_output0(ctx)
    ctx.emit("InstanceNormalization", [ctx.inp(p) for p in range(3)], [ctx.out()],
             epsilon=float(ctx.attr("epsilon", 1e-6)))


@_exports("LayerNorm", "LayerNormV3")
def _layer_norm(ctx: _Ctx) -> None:
    axis = int(ctx.attr("begin_norm_axis", 0))
    if int(ctx.attr("begin_params_axis", axis)) != axis:
        raise _NotExportable("begin_params_axis != begin_norm_axis has no ONNX form")
    _only_output0(ctx)
    ctx.emit("LayerNormalization", [ctx.inp(p) for p in range(3)], [ctx.out()], axis=axis,
             epsilon=float(ctx.attr("epsilon", 1e-7)))


@_exports("Transpose")
def _transpose(ctx: _Ctx) -> None:
    perm = ctx.require_value(1, "perm")
    ctx.emit("Transpose", [ctx.inp(0)], [ctx.out()], perm=[int(p) for p in perm.reshape(-1)])


@_exports("TransposeD")
def _transpose_d(ctx: _Ctx) -> None:
    ctx.emit("Transpose", [ctx.inp(0)], [ctx.out()], perm=[int(p) for p in ctx.attr("perm")])


@_exports("ConcatD", "ConcatV2D")
def _concat_d(ctx: _Ctx) -> None:
    ctx.emit("Concat", [ctx.inp(p) for p in range(len(ctx.node.inputs))], [ctx.out()],
             axis=int(ctx.attr("concat_dim")))


@_exports("ConcatV2")
def _concat_v2(ctx: _Ctx) -> None:
    n = len(ctx.node.inputs) - 1
    axis = ctx.require_value(n, "concat_dim")
    ctx.emit("Concat", [ctx.inp(p) for p in range(n)], [ctx.out()], axis=int(axis.reshape(-1)[0]))


@_exports("Concat")
def _concat(ctx: _Ctx) -> None:
    axis = ctx.require_value(0, "concat_dim")
    ctx.emit("Concat", [ctx.inp(p) for p in range(1, len(ctx.node.inputs))], [ctx.out()],
             axis=int(axis.reshape(-1)[0]))


@_exports("AccumulateNV2")
def _accumulate(ctx: _Ctx) -> None:
    ctx.emit("Sum", [ctx.inp(p) for p in range(len(ctx.node.inputs))], [ctx.out()])


@_exports("Reshape")
def _reshape(ctx: _Ctx) -> None:
    extra = {"allowzero": int(ctx.attr("allowzero"))} if "allowzero" in ctx.node.attrs else {}
    ctx.emit("Reshape", [ctx.inp(0), _as_i64_input(ctx, 1, "shape")], [ctx.out()], **extra)


@_exports("Flatten")
def _flatten(ctx: _Ctx) -> None:
    ctx.emit("Flatten", [ctx.inp(0)], [ctx.out()], axis=int(ctx.attr("axis", 1)))


def _single_axis(ctx: _Ctx) -> int:
    axes = list(ctx.attr("axes", [-1]))
    if len(axes) != 1:
        raise _NotExportable(f"axes {axes}: ONNX softmax takes a single axis")
    return int(axes[0])


@_exports("SoftmaxV2")
def _softmax(ctx: _Ctx) -> None:
    ctx.emit("Softmax", [ctx.inp(0)], [ctx.out()], axis=_single_axis(ctx))


@_exports("LogSoftmaxV2")
def _log_softmax(ctx: _Ctx) -> None:
    ctx.emit("LogSoftmax", [ctx.inp(0)], [ctx.out()], axis=_single_axis(ctx))


@_exports("Cast")
def _cast(ctx: _Ctx) -> None:
    to = ge_to_onnx_dtype(ir.DataType(int(ctx.attr("dst_type"))))
    if to is None:
        raise _NotExportable(f"dst_type {ctx.attr('dst_type')} has no ONNX elem type")
    ctx.emit("Cast", [ctx.inp(0)], [ctx.out()], to=to)


@_exports("Shape")
def _shape(ctx: _Ctx) -> None:
    dtype = int(ctx.attr("dtype", int(ir.DataType.DT_INT32)))
    if dtype == int(ir.DataType.DT_INT64):
        ctx.emit("Shape", [ctx.inp(0)], [ctx.out()])
        return
    raw = ctx.emit("Shape", [ctx.inp(0)], [f"{ctx.node.name}/Shape"], suffix="Shape")
    ctx.emit("Cast", [raw], [ctx.out()], to=ge_to_onnx_dtype(ir.DataType(dtype)) or TensorProto.INT32)


@_exports("SqueezeV3")
def _squeeze_v3(ctx: _Ctx) -> None:
    axes = _as_i64_input(ctx, 1, "axes") if ctx.fed(1) else ""
    ctx.emit("Squeeze", [ctx.inp(0), axes], [ctx.out()])


@_exports("Squeeze")
def _squeeze(ctx: _Ctx) -> None:
    axes = list(ctx.attr("axis", []))
    ctx.emit("Squeeze", [ctx.inp(0), ctx.init("axes", _i64(axes)) if axes else ""], [ctx.out()])


@_exports("UnsqueezeV3", "ExpandDims")
def _unsqueeze_v3(ctx: _Ctx) -> None:
    ctx.emit("Unsqueeze", [ctx.inp(0), _as_i64_input(ctx, 1, "axes")], [ctx.out()])


@_exports("Unsqueeze")
def _unsqueeze(ctx: _Ctx) -> None:
    ctx.emit("Unsqueeze", [ctx.inp(0), ctx.init("axes", _i64(list(ctx.attr("axes", []))))], [ctx.out()])


@_exports("GatherV2")
def _gather_v2(ctx: _Ctx) -> None:
    if int(ctx.attr("batch_dims", 0)):
        raise _NotExportable("batch_dims != 0 has no ONNX Gather form")
    axis = ctx.require_value(2, "axis")
    ctx.emit("Gather", [ctx.inp(0), ctx.inp(1)], [ctx.out()], axis=int(axis.reshape(-1)[0]))


@_exports("GatherElements")
def _gather_elements(ctx: _Ctx) -> None:
    ctx.emit("GatherElements", [ctx.inp(0), ctx.inp(1)], [ctx.out()], axis=int(ctx.attr("dim", 0)))


@_exports("ScatterElements")
def _scatter_elements(ctx: _Ctx) -> None:
    ctx.emit("ScatterElements", [ctx.inp(p) for p in range(3)], [ctx.out()], axis=int(ctx.attr("axis", 0)),
             reduction=str(ctx.attr("reduction", "none")))


@_exports("ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd")
def _reduce(ctx: _Ctx) -> None:
    ctx.emit(ctx.node.op_type, [ctx.inp(0), _as_i64_input(ctx, 1, "axes")], [ctx.out()],
             keepdims=int(bool(ctx.attr("keep_dims", False))),
             noop_with_empty_axes=int(bool(ctx.attr("noop_with_empty_axes", True))))


@_exports("ReduceSumD")
def _reduce_sum_d(ctx: _Ctx) -> None:
    ctx.emit("ReduceSum", [ctx.inp(0), ctx.init("axes", _i64(list(ctx.attr("axes"))))], [ctx.out()],
             keepdims=int(bool(ctx.attr("keep_dims", False))))


@_exports("LeakyRelu")
def _leaky_relu(ctx: _Ctx) -> None:
    ctx.emit("LeakyRelu", [ctx.inp(0)], [ctx.out()], alpha=float(ctx.attr("negative_slope", 0.0)))


@_exports("Elu")
def _elu(ctx: _Ctx) -> None:
    if float(ctx.attr("scale", 1.0)) != 1.0 or float(ctx.attr("input_scale", 1.0)) != 1.0:
        raise _NotExportable("scale/input_scale != 1 have no ONNX Elu form")
    ctx.emit("Elu", [ctx.inp(0)], [ctx.out()], alpha=float(ctx.attr("alpha", 1.0)))


@_exports("HardSigmoid")
def _hard_sigmoid(ctx: _Ctx) -> None:
    ctx.emit("HardSigmoid", [ctx.inp(0)], [ctx.out()], alpha=float(ctx.attr("alpha", 0.16666666)),
             beta=float(ctx.attr("beta", 0.5)))


@_exports("ClipByValue")
def _clip(ctx: _Ctx) -> None:
    ctx.emit("Clip", [ctx.inp(0), ctx.inp(1), ctx.inp(2)], [ctx.out()])


@_exports("StridedSliceV2")
def _strided_slice(ctx: _Ctx) -> None:
    for mask in ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask"):
        if int(ctx.attr(mask, 0)):
            raise _NotExportable(f"{mask} != 0 has no ONNX Slice form")
    ins = [ctx.inp(0), _as_i64_input(ctx, 1, "begin"), _as_i64_input(ctx, 2, "end")]
    ins.append(_as_i64_input(ctx, 3, "axes") if ctx.fed(3) else "")
    ins.append(_as_i64_input(ctx, 4, "strides") if ctx.fed(4) else "")
    ctx.emit("Slice", ins, [ctx.out()])


@_exports("PadV3")
def _pad(ctx: _Ctx) -> None:
    if bool(ctx.attr("paddings_contiguous", True)):
        pads = ctx.require_value(1, "paddings").reshape(-1, 2)
        paddings = ctx.init("pads", np.concatenate([pads[:, 0], pads[:, 1]]).astype(np.int64))
    else:
        paddings = _as_i64_input(ctx, 1, "pads")
    ctx.emit("Pad", [ctx.inp(0), paddings, ctx.inp(2)], [ctx.out()], mode=str(ctx.attr("mode", "constant")))


@_exports("SplitV")
def _split_v(ctx: _Ctx) -> None:
    axis = ctx.require_value(2, "split_dim")
    ctx.emit("Split", [ctx.inp(0), _as_i64_input(ctx, 1, "split")], ctx.outs(), axis=int(axis.reshape(-1)[0]))


@_exports("Split")
def _split(ctx: _Ctx) -> None:
    axis = ctx.require_value(0, "split_dim")
    n = len(ctx.node.outputs)
    ctx.emit("Split", [ctx.inp(1)], ctx.outs(), axis=int(axis.reshape(-1)[0]), num_outputs=n)


@_exports("SplitD")
def _split_d(ctx: _Ctx) -> None:
    ctx.emit("Split", [ctx.inp(0)], ctx.outs(), axis=int(ctx.attr("split_dim")), num_outputs=len(ctx.node.outputs))


@_exports("TopK")
def _topk(ctx: _Ctx) -> None:
    k = ctx.value(1)
    k_in = ctx.init("k", _i64([int(k.reshape(-1)[0])])) if k is not None else _as_i64_input(ctx, 1, "k")
    ctx.emit("TopK", [ctx.inp(0), k_in], ctx.outs(), axis=int(ctx.attr("dim", -1)),
             largest=int(bool(ctx.attr("largest", True))), sorted=int(bool(ctx.attr("sorted", True))))


@_exports("ArgMaxV2")
def _argmax(ctx: _Ctx) -> None:
    dim = ctx.require_value(1, "dimension")
    out_dtype = ctx.attr("dtype", ir.DataType.DT_INT64)
    if int(out_dtype) != int(ir.DataType.DT_INT64):
        raw = ctx.emit("ArgMax", [ctx.inp(0)], [f"{ctx.node.name}/ArgMax"], suffix="ArgMax",
                       axis=int(dim.reshape(-1)[0]), keepdims=0)
        ctx.emit("Cast", [raw], [ctx.out()], to=ge_to_onnx_dtype(ir.DataType(int(out_dtype))) or TensorProto.INT32)
        return
    ctx.emit("ArgMax", [ctx.inp(0)], [ctx.out()], axis=int(dim.reshape(-1)[0]), keepdims=0)


@_exports("Fill")
def _fill(ctx: _Ctx) -> None:
    value = ctx.require_value(1, "value")
    ctx.emit("ConstantOfShape", [_as_i64_input(ctx, 0, "dims")], [ctx.out()],
             value=numpy_helper.from_array(np.asarray(value).reshape(1), name="value"))


@_exports("Cumsum")
def _cumsum(ctx: _Ctx) -> None:
    ctx.emit("CumSum", [ctx.inp(0), ctx.inp(1)], [ctx.out()], exclusive=int(bool(ctx.attr("exclusive", False))),
             reverse=int(bool(ctx.attr("reverse", False))))


@_exports("Einsum")
def _einsum(ctx: _Ctx) -> None:
    ctx.emit("Einsum", [ctx.inp(p) for p in range(len(ctx.node.inputs))], [ctx.out()],
             equation=str(ctx.attr("equation")))


@_exports("LRN")
def _lrn(ctx: _Ctx) -> None:
    radius = int(ctx.attr("depth_radius", 5))
    size = 2 * radius + 1
    ctx.emit("LRN", [ctx.inp(0)], [ctx.out()], size=size, alpha=float(ctx.attr("alpha", 1.0)) * size,
             beta=float(ctx.attr("beta", 0.5)), bias=float(ctx.attr("bias", 1.0)))


@_exports("MirrorPad")
def _mirror_pad(ctx: _Ctx) -> None:
    mode = str(ctx.attr("mode", "REFLECT")).upper()
    if mode != "REFLECT":
        raise _NotExportable(f"MirrorPad mode {mode!r} has no ONNX Pad form (only REFLECT)")
    pads = ctx.require_value(1, "paddings").reshape(-1, 2)
    paddings = ctx.init("pads", np.concatenate([pads[:, 0], pads[:, 1]]).astype(np.int64))
    ctx.emit("Pad", [ctx.inp(0), paddings], [ctx.out()], mode="reflect")


@_exports("SquareSumV1")
def _square_sum(ctx: _Ctx) -> None:
    axes = list(ctx.attr("axis", []))
    ctx.emit("ReduceSumSquare", [ctx.inp(0), ctx.init("axes", _i64(axes)) if axes else ""], [ctx.out()],
             keepdims=int(bool(ctx.attr("keep_dims", True))))


@_exports("MaxPool3D", "AvgPool3D")
def _pool3d(ctx: _Ctx) -> None:
    _nchw_only(ctx, "NCDHW")
    is_max = ctx.node.op_type == "MaxPool3D"
    attrs: dict[str, Any] = {
        "kernel_shape": [int(k) for k in ctx.attr("ksize")][2:],
        "strides": [int(s) for s in ctx.attr("strides")][2:],
        "pads": _onnx_pads(ctx.attr("pads", [0] * 6), 3),
        "ceil_mode": int(bool(ctx.attr("ceil_mode", 0))),
    }
    if is_max:
        if str(ctx.attr("padding", "CALCULATED")) == "SAME":
            attrs["auto_pad"] = "SAME_UPPER"
            del attrs["pads"]
    else:
        attrs["count_include_pad"] = int(bool(ctx.attr("count_include_pad", False)))
    ctx.emit("MaxPool" if is_max else "AveragePool", [ctx.inp(0)], [ctx.out()], **attrs)


@_exports("ResizeNearestNeighborV2")
def _resize_nearest(ctx: _Ctx) -> None:
    size = ctx.require_value(1, "size").reshape(-1)
    shape = ctx.node.inputs[0].shape
    if len(shape) != 4 or any(d < 0 for d in shape[:2]):
        raise _NotExportable("needs a static NCHW input shape to build ONNX Resize sizes")
    align = bool(ctx.attr("align_corners", False))
    half = bool(ctx.attr("half_pixel_centers", False))
    ctm = "align_corners" if align else "half_pixel" if half else "asymmetric"
    sizes = ctx.init("sizes", _i64([shape[0], shape[1], int(size[0]), int(size[1])]))
    ctx.emit("Resize", [ctx.inp(0), "", "", sizes], [ctx.out()], mode="nearest", coordinate_transformation_mode=ctm,
             nearest_mode="round_prefer_ceil" if half else "floor")


@_exports("Resize")
def _resize(ctx: _Ctx) -> None:
    attrs = {k: ctx.attr(k) for k in ("coordinate_transformation_mode", "cubic_coeff_a", "exclude_outside",
                                      "extrapolation_value", "mode", "nearest_mode") if k in ctx.node.attrs}
    sizes = _as_i64_input(ctx, 3, "sizes") if ctx.fed(3) else ""
    ctx.emit("Resize", [ctx.inp(0), ctx.inp(1), ctx.inp(2), sizes], [ctx.out()], **attrs)


def _recurrent(onnx_op: str) -> _Exp:
    def fn(ctx: _Ctx) -> None:
        attrs = {k: v for k, v in ctx.node.attrs.items() if not k.startswith("_")}
        outs = [ctx.out(p) if ctx.exporter.graph.num_uses(ctx.node, p) or p == 0 else ""
                for p in range(len(ctx.node.outputs))]
        while outs and not outs[-1]:
            outs.pop()
        ctx.emit(onnx_op, [ctx.inp(p) for p in range(len(ctx.node.inputs))], outs, **attrs)

    return fn


_EXPORTERS["CommonLSTM"] = _recurrent("LSTM")
_EXPORTERS["CommonGRU"] = _recurrent("GRU")


def exportable_op_types() -> list[str]:
    """GE op types :func:`to_onnx` can write (besides Data, Const and NetOutput), sorted."""
    return sorted(_EXPORTERS)
