"""Inference rules of element-wise ops: numpy-broadcasting binary ops, unary ops, casts and selections.

Value folding: arithmetic and casts on small known tensors (the shape arithmetic of exported models, for example
``Shape → Cast → Mul(scales) → Cast`` before a Resize) are evaluated so later rules see constant shapes.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from gebench.ir import DataType, numpy_dtype

from ._infer import UNKNOWN_SHAPE, InferContext, broadcast_shapes, register_infer

# integer folding of shape arithmetic (sizes are non-negative, so floor division is exact enough for Div)
_ARITH = {
    "Add": np.add, "AddV2": np.add, "Sub": np.subtract, "Mul": np.multiply, "Maximum": np.maximum,
    "Minimum": np.minimum, "Pow": np.power, "RealDiv": np.floor_divide, "Div": np.floor_divide,
}
_COMPARE = {
    "Equal": np.equal, "Less": np.less, "LessEqual": np.less_equal, "Greater": np.greater,
    "GreaterEqual": np.greater_equal, "LogicalAnd": np.logical_and, "LogicalOr": np.logical_or,
}

#: Ops whose output has the shape and dtype of input 0.
UNARY_SAME = (
    "Identity", "TensorMove", "Relu", "Relu6", "Sigmoid", "Tanh", "Gelu", "GeluV2", "FastGelu", "Swish", "Exp", "Log",
    "Sqrt", "Rsqrt", "Erf", "Neg", "Abs", "Reciprocal", "Floor", "Ceil", "Sign", "LeakyRelu", "Elu",
    "HardSigmoid", "Softplus", "Muls", "Adds", "Cumsum", "SoftmaxV2", "LogSoftmaxV2",
)


def _numeric(v: np.ndarray | None) -> bool:
    return v is not None and np.asarray(v).dtype.kind in "iubf"


def _fold_binary(ctx: InferContext, fn: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> None:
    a = ctx.small_value("x1")
    if not _numeric(a):
        return  # x2 is not read: a rule memo then keys on x1 alone (an activation plus a weight replays)
    b = ctx.small_value("x2")
    if not _numeric(b):
        return
    try:
        with np.errstate(all="raise"):
            result = fn(np.asarray(a), np.asarray(b))
    except (ValueError, ArithmeticError):
        return  # e.g. division by zero or a negative integer power: the value stays unknown, shapes still hold
    ctx.set_value(0, result)


@register_infer(*_ARITH)
def _arith(ctx: InferContext) -> None:
    shape = broadcast_shapes(ctx.shape("x1"), ctx.shape("x2"))
    ctx.set_output(0, ctx.dtype("x1"), shape)
    _fold_binary(ctx, _ARITH[ctx.op_type])


@register_infer(*_COMPARE)
def _compare(ctx: InferContext) -> None:
    ctx.set_output(0, DataType.DT_BOOL, broadcast_shapes(ctx.shape("x1"), ctx.shape("x2")))
    _fold_binary(ctx, _COMPARE[ctx.op_type])


@register_infer(*UNARY_SAME)
def _unary(ctx: InferContext) -> None:
    d = ctx.desc(0)
    dtype = d.dtype
    if ctx.op_type == "SoftmaxV2" and ctx.attr("half_to_float", False) and dtype == DataType.DT_FLOAT16:
        dtype = DataType.DT_FLOAT
    if ctx.op_type in ("SoftmaxV2", "LogSoftmaxV2", "Cumsum"):
        _check_axes(ctx, d.shape)
    ctx.set_output(0, dtype, d.shape)
    if ctx.op_type in ("Identity", "TensorMove"):
        ctx.set_value(0, ctx.small_value(0))
    elif ctx.op_type == "Neg" and _numeric(ctx.small_value(0)):
        ctx.set_value(0, -np.asarray(ctx.value(0)))


def _check_axes(ctx: InferContext, shape: tuple[int, ...]) -> None:
    if shape == UNKNOWN_SHAPE:
        return
    rank = len(shape)
    op = ctx.op_type
    axes = ctx.int_values("axis") if op == "Cumsum" else ctx.attr("axes", [-1])
    for a in axes or []:
        if not -max(rank, 1) <= a < max(rank, 1):
            raise ctx.fail(f"axis {a} is out of range for an input of rank {rank}")


@register_infer("LogicalNot")
def _logical_not(ctx: InferContext) -> None:
    ctx.set_output(0, DataType.DT_BOOL, ctx.shape("x"))


@register_infer("PRelu")
def _prelu(ctx: InferContext) -> None:
    x = ctx.shape("x")
    # the slope broadcasts to x (ONNX PRelu is unidirectional): the result keeps x's shape when it can
    out = broadcast_shapes(x, ctx.shape("weight"))
    if len(out) != len(x) and x != UNKNOWN_SHAPE:
        raise ctx.fail(f"weight of shape {list(ctx.shape('weight'))} has a higher rank than x {list(x)}")
    ctx.set_output(0, ctx.dtype("x"), out)


@register_infer("Cast")
def _cast(ctx: InferContext) -> None:
    try:
        dst = DataType(int(ctx.attr("dst_type")))
    except ValueError:
        raise ctx.fail(f"dst_type {ctx.attr('dst_type')!r} is not a GE data type number") from None
    ctx.set_output(0, dst, ctx.shape("x"))
    v = ctx.small_value("x")
    if _numeric(v):
        try:
            np_type = numpy_dtype(dst)
        except ValueError:
            return
        if np_type.kind in "iubf" and dst != DataType.DT_BF16:
            with np.errstate(all="ignore"):
                ctx.set_value(0, np.asarray(v).astype(np_type))


@register_infer("Select")
def _select(ctx: InferContext) -> None:
    cond, x1, x2 = ctx.shape("condition"), ctx.shape("x1"), ctx.shape("x2")
    out = broadcast_shapes(x1, x2)
    # TF Select also accepts a vector condition that picks rows of higher-rank operands
    if not (len(cond) == 1 and len(out) > 1 and cond != UNKNOWN_SHAPE):
        out = broadcast_shapes(cond, out)
    ctx.set_output(0, ctx.dtype("x1"), out)


@register_infer("SelectV2")
def _select_v2(ctx: InferContext) -> None:
    out = broadcast_shapes(ctx.shape("condition"), ctx.shape("then"), ctx.shape("else"))
    ctx.set_output(0, ctx.dtype("then"), out)


@register_infer("ClipByValue")
def _clip(ctx: InferContext) -> None:
    out = broadcast_shapes(ctx.shape("x"), ctx.shape("clip_value_min"), ctx.shape("clip_value_max"))
    ctx.set_output(0, ctx.dtype("x"), out)


@register_infer("AccumulateNV2")
def _accumulate(ctx: InferContext) -> None:
    idx = ctx.indices("x")
    if not idx:
        raise ctx.fail("dynamic input x has no instances")
    shapes = [ctx.shape(i) for i in idx]
    ctx.set_output(0, ctx.dtype(idx[0]), broadcast_shapes(*shapes))
