"""ONNX -> GE converters: element-wise, activation, cast and n-ary math ops (spec ge-ops.md §3.3)."""

from __future__ import annotations

import numpy as np

from gebench import ir

from ._onnx_common import (
    Converter,
    Direct,
    NodeNotConvertible,
    OpContext,
    bool_attr,
    cast_target_dtype,
    converter,
    direct_converter,
    scalar_value,
)

__all__: list[str] = []

# ONNX op -> (GE type, first opset, last opset): GE's bulk one-to-one plugin table. Inputs and outputs are
# positional and ONNX attributes are ignored (its ParseParams function does nothing).
_ONE_TO_ONE: dict[str, tuple[str, int, int]] = {
    "Abs": ("Abs", 8, 18), "Acos": ("Acos", 8, 18), "Acosh": ("Acosh", 8, 18), "Add": ("Add", 8, 18),
    "And": ("LogicalAnd", 8, 18), "Asin": ("Asin", 8, 18), "Asinh": ("Asinh", 8, 18), "Atan": ("Atan", 8, 18),
    "Atanh": ("Atanh", 8, 18), "BitwiseAnd": ("BitwiseAnd", 18, 18), "BitwiseNot": ("Invert", 18, 18),
    "BitwiseOr": ("BitwiseOr", 18, 18), "BitwiseXor": ("BitwiseXor", 18, 18), "CastLike": ("CastLike", 15, 18),
    "Ceil": ("Ceil", 8, 18), "Cos": ("Cos", 8, 18), "Cosh": ("Cosh", 8, 18), "Det": ("MatrixDeterminant", 8, 18),
    "Div": ("RealDiv", 8, 18), "Dropout": ("Dropout", 8, 18), "Equal": ("Equal", 8, 18), "Erf": ("Erf", 8, 18),
    "Exp": ("Exp", 8, 18), "Expand": ("Expand", 8, 18), "Floor": ("Floor", 8, 18),
    "GlobalAveragePool": ("GlobalAveragePool", 8, 18), "Greater": ("Greater", 8, 18),
    "HardSwish": ("HardSwish", 14, 18), "Identity": ("Identity", 8, 18), "IsNaN": ("IsNan", 9, 18),
    "Less": ("Less", 8, 18), "LessOrEqual": ("LessEqual", 8, 18), "Log": ("Log", 8, 18), "Mul": ("Mul", 8, 18),
    "Neg": ("Neg", 8, 18), "Not": ("LogicalNot", 8, 18), "Or": ("LogicalOr", 8, 18), "PRelu": ("PRelu", 8, 18),
    "Pow": ("Pow", 8, 18), "Range": ("Range", 8, 18), "Reciprocal": ("Reciprocal", 8, 18), "Relu": ("Relu", 8, 18),
    "Round": ("Round", 8, 18), "ScatterND": ("TensorScatterUpdate", 8, 18), "Sigmoid": ("Sigmoid", 8, 18),
    "Sign": ("Sign", 8, 18), "Sin": ("Sin", 8, 18), "Sinh": ("Sinh", 8, 18), "Softplus": ("Softplus", 8, 18),
    "Softsign": ("Softsign", 8, 18), "Sqrt": ("Sqrt", 8, 18), "Sub": ("Sub", 8, 18), "Tan": ("Tan", 8, 18),
    "Tanh": ("Tanh", 8, 18), "Tile": ("Tile", 8, 18), "Triu": ("Triu", 13, 16), "Where": ("SelectV2", 8, 18),
}


def _one_to_one(op_types: str | list[str], opsets: tuple[int, int], ge_type: str) -> None:
    """Register the one-to-one conversion of ``op_types`` to ``ge_type`` at ``opsets`` (a :class:`Direct` one)."""
    direct = Direct(ge_type)
    converter(op_types, opsets, ge_types=[ge_type], direct=direct)(direct_converter(direct))


@converter("Dropout", _ONE_TO_ONE["Dropout"][1:], ge_types=["Dropout"])
def _dropout(ctx: OpContext) -> None:
    outs = ctx.outputs()
    if len(outs) > 1 and ctx.is_used(outs[1]):
        raise NodeNotConvertible("the mask output of Dropout is not produced by GE's Dropout")
    ctx.emit("Dropout", ctx.inputs(), outs[:1])


for _op, (_ge, _lo, _hi) in _ONE_TO_ONE.items():
    if _op != "Dropout":
        _one_to_one(_op, (_lo, _hi), _ge)
# GreaterOrEqual is registered for opset 8 and 12-18 only (9-11 are missing in GE).
_one_to_one("GreaterOrEqual", (8, 8), "GreaterEqual")
_one_to_one("GreaterOrEqual", (12, 18), "GreaterEqual")


@converter("LeakyRelu", ge_types=["LeakyRelu"])
def _leaky_relu(ctx: OpContext) -> None:
    ctx.emit("LeakyRelu", ctx.inputs(), ctx.outputs(), attrs={"negative_slope": float(ctx.attr("alpha", 0.01))})


@converter("Elu", ge_types=["Elu"])
def _elu(ctx: OpContext) -> None:
    ctx.emit("Elu", ctx.inputs(), ctx.outputs(), attrs={"alpha": float(ctx.attr("alpha", 1.0))})


@converter("HardSigmoid", (1, 18), ge_types=["HardSigmoid"])
def _hard_sigmoid(ctx: OpContext) -> None:
    ctx.emit("HardSigmoid", ctx.inputs(), ctx.outputs(),
             attrs={"alpha": float(ctx.attr("alpha", 0.2)), "beta": float(ctx.attr("beta", 0.5))})


@converter("Softmax", (8, 12), ge_types=["SoftmaxV2"])
def _softmax_v1(ctx: OpContext) -> None:
    ctx.emit("SoftmaxV2", ctx.inputs(), ctx.outputs(), attrs={"axes": [int(ctx.attr("axis", 1))], "need_fusion": 1})


@converter("Softmax", (13, 18), ge_types=["SoftmaxV2"])
def _softmax_v13(ctx: OpContext) -> None:
    ctx.emit("SoftmaxV2", ctx.inputs(), ctx.outputs(), attrs={"axes": [int(ctx.attr("axis", -1))]})


@converter("LogSoftmax", ge_types=["LogSoftmaxV2"])
def _log_softmax(ctx: OpContext) -> None:
    ctx.emit("LogSoftmaxV2", ctx.inputs(), ctx.outputs(), attrs={"axes": [int(ctx.attr("axis", -1))]})


@converter("Cast", ge_types=["Cast"])
def _cast(ctx: OpContext) -> None:
    ctx.emit("Cast", ctx.inputs(), ctx.outputs(), attrs={"dst_type": int(cast_target_dtype(int(ctx.attr("to", 1))))})


@converter("Shape", ge_types=["Shape"])
def _shape(ctx: OpContext) -> None:
    ctx.emit("Shape", ctx.inputs()[:1], ctx.outputs(), attrs={"dtype": int(ir.DataType.DT_INT64)})


@converter("Sum", ge_types=["AccumulateNV2"])
def _sum(ctx: OpContext) -> None:
    n = ctx.num_inputs
    ctx.emit("AccumulateNV2", ctx.inputs(), ctx.outputs(), attrs={"N": n}, dynamic_inputs={"x": n})


@converter("Mean", expands=True, ge_types=["AccumulateNV2", "Muls"])
def _mean(ctx: OpContext) -> None:
    n = ctx.num_inputs
    acc = ctx.temp("AccumulateNV2")
    ctx.emit("AccumulateNV2", ctx.inputs(), [acc], attrs={"N": n}, dynamic_inputs={"x": n})
    ctx.emit("Muls", [acc], ctx.outputs(), attrs={"value": 1.0 / n})


def _chain(ge_type: str) -> Converter:
    def convert(ctx: OpContext) -> None:
        ins = ctx.inputs()
        if len(ins) == 1:
            ctx.emit("Identity", ins, ctx.outputs())
            return
        current = ins[0]
        for i, other in enumerate(ins[1:], start=1):
            out = ctx.output(0) if i == len(ins) - 1 else ctx.temp(ge_type)
            ctx.emit(ge_type, [current, other], [out])
            current = out

    return convert


converter("Min", expands=True, ge_types=["Minimum", "Identity"])(_chain("Minimum"))
converter("Max", expands=True, ge_types=["Maximum", "Identity"])(_chain("Maximum"))


@converter("Clip", (8, 10), expands=True, ge_types=["Cast", "ClipByValue"])
def _clip_v8(ctx: OpContext) -> None:
    lo = float(ctx.attr("min", -np.finfo(np.float32).max))
    hi = float(ctx.attr("max", np.finfo(np.float32).max))
    cast = ctx.temp("Cast")
    ctx.emit("Cast", [ctx.input(0)], [cast], attrs={"dst_type": int(ir.DataType.DT_FLOAT)})
    lo_t = ctx.const("clip_value_min", scalar_value(lo, ir.DataType.DT_FLOAT))
    hi_t = ctx.const("clip_value_max", scalar_value(hi, ir.DataType.DT_FLOAT))
    ctx.emit("ClipByValue", [cast, lo_t, hi_t], ctx.outputs())


@converter("Clip", (11, 18), expands=True, ge_types=["ClipByValue", "Minimum", "Maximum"])
def _clip_v11(ctx: OpContext) -> None:
    x, lo, hi = ctx.input(0), ctx.input(1), ctx.input(2)
    if lo is not None and hi is not None:
        ctx.emit("ClipByValue", [x, lo, hi], ctx.outputs())
    elif hi is not None:
        ctx.emit("Minimum", [x, hi], ctx.outputs())
    elif lo is not None:
        ctx.emit("Maximum", [x, lo], ctx.outputs())
    else:
        ctx.emit("Identity", [x], ctx.outputs())


@converter("Einsum", ge_types=["Einsum"])
def _einsum(ctx: OpContext) -> None:
    n = ctx.num_inputs
    ctx.emit("Einsum", ctx.inputs(), ctx.outputs(), attrs={"equation": str(ctx.attr("equation", "")), "N": n},
             dynamic_inputs={"x": n})


@converter("CumSum", ge_types=["Cumsum"])
def _cumsum(ctx: OpContext) -> None:
    ctx.emit("Cumsum", ctx.inputs(), ctx.outputs(),
             attrs={"exclusive": bool_attr(ctx.attr("exclusive", 0)), "reverse": bool_attr(ctx.attr("reverse", 0))})


# Huawei NPU export ops (``npu::1::<Op>``, most also ``ai.onnx::11..18::<Op>``) that map one-to-one onto a
# catalogue op: inputs are positional and ONNX attributes whose names the GE op declares are copied.
_NPU_ONE_TO_ONE = {"NPUFastGelu": "FastGelu", "NPUGeluV2": "GeluV2", "NPURmsNorm": "RmsNorm",
                   "NPUAddRmsNorm": "AddRmsNorm", "NPUFormatCast": "Identity"}


def _npu_one_to_one(ge_type: str) -> Converter:
    def convert(ctx: OpContext) -> None:
        from gebench import ops

        schema = ops.get_schema(ge_type)
        declared = {a.name: a.type for a in schema.attrs} if schema is not None else {}
        attrs = {}
        for key, value in ctx.attrs.items():
            if key in declared:
                kind = declared[key]
                attrs[key] = float(value) if kind == "Float" else bool(value) if kind == "Bool" else value
        ctx.emit(ge_type, ctx.inputs(), ctx.outputs(), attrs=attrs)

    return convert


for _op, _ge in _NPU_ONE_TO_ONE.items():
    if _op != "NPUGeluV2":  # GE registers NPUGeluV2 only in the npu domain
        converter(_op, (11, 18), ge_types=[_ge])(_npu_one_to_one(_ge))
    converter(_op, (1, 1), ge_types=[_ge], domain="npu")(_npu_one_to_one(_ge))
