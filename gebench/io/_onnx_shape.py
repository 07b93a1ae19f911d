"""ONNX -> GE converters: shape/layout, slicing, indexing, reductions and top-k (spec ge-ops.md §3.3, §3.4)."""

from __future__ import annotations

import numpy as np

from gebench import ir

from ._onnx_common import (
    NodeNotConvertible,
    OpContext,
    bool_attr,
    converter,
    int_list_value,
    scalar_value,
    tensor_value_from_proto,
)

__all__: list[str] = []

I32 = ir.DataType.DT_INT32
I64 = ir.DataType.DT_INT64


@converter("Concat", expands=True, ge_types=["ConcatD", "Identity"])
def _concat(ctx: OpContext) -> None:
    if "axis" not in ctx.attrs:
        raise NodeNotConvertible("attribute 'axis' is required by GE's Concat plugin")
    ins = ctx.inputs()
    if len(ins) == 1:
        ctx.emit("Identity", ins, ctx.outputs())
        return
    ctx.emit("ConcatD", ins, ctx.outputs(), attrs={"concat_dim": int(ctx.attrs["axis"]), "N": len(ins)},
             dynamic_inputs={"x": len(ins)})


@converter("Split", expands=True, ge_types=["Split", "SplitV", "Const"])
def _split(ctx: OpContext) -> None:
    axis = int(ctx.attr("axis", 0))
    outs = ctx.outputs()
    n = len(outs)
    x = ctx.input(0)
    sizes: list[int] | None = None
    sizes_tensor: str | None = None
    if ctx.opset <= 12 and ctx.attr("split"):
        sizes = [int(s) for s in ctx.attr("split")]
    elif ctx.opset >= 13 and ctx.input(1) is not None:
        sizes_tensor = ctx.input(1)
    elif ctx.opset >= 18 and ctx.attr("num_outputs") is not None:
        shape = ctx.shape(x)
        if shape is None or shape[axis] < 0:
            raise NodeNotConvertible("num_outputs needs a static size on the split axis")
        total, parts = shape[axis], int(ctx.attr("num_outputs"))
        chunk = -(-total // parts)
        sizes = [min(chunk, total - i * chunk) for i in range(parts)]
    dim = ctx.const("split_dim", scalar_value(axis, I32))
    if sizes is None and sizes_tensor is None:
        ctx.emit("Split", [dim, x], outs, attrs={"num_split": n}, dynamic_outputs={"y": n})
        return
    if sizes_tensor is None:
        sizes_tensor = ctx.const("size_splits", int_list_value(sizes or [], I64))
    ctx.emit("SplitV", [x, sizes_tensor, dim], outs, attrs={"num_split": n}, dynamic_outputs={"y": n})


@converter("Reshape", ge_types=["Reshape"])
def _reshape(ctx: OpContext) -> None:
    if ctx.num_inputs < 2:
        raise NodeNotConvertible("Reshape needs its shape input (opset >= 5 form)")
    attrs = {"allowzero": int(ctx.attr("allowzero", 0))} if "allowzero" in ctx.attrs else {}
    ctx.emit("Reshape", ctx.inputs()[:2], ctx.outputs(), attrs=attrs)


@converter("Flatten", ge_types=["Flatten"])
def _flatten(ctx: OpContext) -> None:
    ctx.emit("Flatten", ctx.inputs(), ctx.outputs(), attrs={"axis": int(ctx.attr("axis", 1))})


@converter("Transpose", expands=True, ge_types=["Transpose", "Const"])
def _transpose(ctx: OpContext) -> None:
    perm = ctx.attr("perm")
    if perm is None:
        raise NodeNotConvertible("attribute 'perm' is mandatory for GE (the default reverse permutation is rejected)")
    perm_t = ctx.const("perm", int_list_value([int(p) for p in perm], I32))
    ctx.emit("Transpose", [ctx.input(0), perm_t], ctx.outputs())


@converter("Squeeze", (8, 12), ge_types=["Squeeze"])
def _squeeze_v1(ctx: OpContext) -> None:
    ctx.emit("Squeeze", ctx.inputs()[:1], ctx.outputs(), attrs={"axis": [int(a) for a in ctx.attr("axes", [])]})


@converter("Squeeze", (13, 18), ge_types=["SqueezeV3"])
def _squeeze_v13(ctx: OpContext) -> None:
    ctx.emit("SqueezeV3", ctx.inputs(), ctx.outputs())


@converter("Unsqueeze", (8, 12), ge_types=["Unsqueeze"])
def _unsqueeze_v1(ctx: OpContext) -> None:
    axes = [int(a) for a in ctx.attr("axes", [])]
    if not axes:
        raise NodeNotConvertible("attribute 'axes' must be non-empty")
    ctx.emit("Unsqueeze", ctx.inputs()[:1], ctx.outputs(), attrs={"axes": axes})


@converter("Unsqueeze", (13, 18), ge_types=["UnsqueezeV3"])
def _unsqueeze_v13(ctx: OpContext) -> None:
    ctx.emit("UnsqueezeV3", ctx.inputs(), ctx.outputs())


@converter("Pad", (8, 10), expands=True, ge_types=["PadV3", "MirrorPad", "Const"])
def _pad_v2(ctx: OpContext) -> None:
    pads = [int(p) for p in ctx.attr("pads", [])]
    mode = str(ctx.attr("mode", "constant"))
    x = ctx.input(0)
    if mode == "reflect":
        rank = len(pads) // 2
        pairs = [[pads[i], pads[i + rank]] for i in range(rank)]
        paddings = ctx.const("paddings", ir.TensorValue(I64, np.asarray(pairs, np.int64).reshape(rank, 2)))
        ctx.emit("MirrorPad", [x, paddings], ctx.outputs(), attrs={"mode": "REFLECT"})
        return
    paddings = ctx.const("paddings", int_list_value(pads, I64))
    dtype = ctx.elem_dtype(x)
    if dtype is None or dtype == ir.DataType.DT_UNDEFINED:
        dtype = ir.DataType.DT_FLOAT
    value = ctx.const("constant_values", scalar_value(float(ctx.attr("value", 0.0)), dtype))
    ctx.emit("PadV3", [x, paddings, value], ctx.outputs(), attrs={"mode": mode, "paddings_contiguous": False})


@converter("Pad", (11, 18), ge_types=["PadV3"])
def _pad_v11(ctx: OpContext) -> None:
    if ctx.input(3) is not None:
        raise NodeNotConvertible("the 'axes' input of Pad-18 has no place on GE's PadV3")
    ctx.emit("PadV3", ctx.inputs()[:3], ctx.outputs(),
             attrs={"mode": str(ctx.attr("mode", "constant")), "paddings_contiguous": False})


@converter("Slice", (8, 9), expands=True, ge_types=["StridedSliceV2", "Const"])
def _slice_v1(ctx: OpContext) -> None:
    begin = ctx.const("begin", int_list_value([int(v) for v in ctx.attr("starts", [])], I64))
    end = ctx.const("end", int_list_value([int(v) for v in ctx.attr("ends", [])], I64))
    axes = ctx.const("axes", int_list_value([int(v) for v in ctx.attr("axes")], I64)) if ctx.attr("axes") else None
    ctx.emit("StridedSliceV2", [ctx.input(0), begin, end, axes], ctx.outputs())


@converter("Slice", (10, 18), ge_types=["StridedSliceV2"])
def _slice_v10(ctx: OpContext) -> None:
    ctx.emit("StridedSliceV2", ctx.inputs(), ctx.outputs())


@converter("Gather", expands=True, ge_types=["GatherV2", "Const"])
def _gather(ctx: OpContext) -> None:
    axis = ctx.const("axis", scalar_value(int(ctx.attr("axis", 0)), I32))
    ctx.emit("GatherV2", [ctx.input(0), ctx.input(1), axis], ctx.outputs(), attrs={"negative_index_support": True})


@converter("GatherElements", ge_types=["GatherElements"])
def _gather_elements(ctx: OpContext) -> None:
    ctx.emit("GatherElements", ctx.inputs(), ctx.outputs(), attrs={"dim": int(ctx.attr("axis", 0))})


@converter("GatherND", ge_types=["GatherNd"])
def _gather_nd(ctx: OpContext) -> None:
    ctx.emit("GatherNd", ctx.inputs(), ctx.outputs(), attrs={"batch_dims": int(ctx.attr("batch_dims", 0))})


def _scatter_elements(ctx: OpContext) -> None:
    ctx.emit("ScatterElements", ctx.inputs(), ctx.outputs(),
             attrs={"axis": int(ctx.attr("axis", 0)), "reduction": str(ctx.attr("reduction", "none"))})


converter("ScatterElements", (11, 18), ge_types=["ScatterElements"])(_scatter_elements)
converter("Scatter", (9, 11), ge_types=["ScatterElements"])(_scatter_elements)


@converter("ConstantOfShape", expands=True, ge_types=["Fill", "Const"])
def _constant_of_shape(ctx: OpContext) -> None:
    proto = next((a.t for a in ctx.onnx_node.attribute if a.name == "value" and a.HasField("t")), None)
    if proto is None:
        value = scalar_value(0.0, ir.DataType.DT_FLOAT)
    else:
        tv = tensor_value_from_proto(proto, where=f"ConstantOfShape {ctx.name!r}")
        value = ir.TensorValue(tv.dtype, tv.array.reshape(()) if tv.array.size == 1 else tv.array)
    value_t = ctx.const("value", value)
    ctx.emit("Fill", [ctx.input(0), value_t], ctx.outputs())


# --------------------------------------------------------------------------- reductions
_REDUCE = ("ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd")


def _reduce_v1(ctx: OpContext) -> None:
    axes = ctx.const("axes", int_list_value([int(a) for a in ctx.attr("axes", [])], I32))
    ctx.emit(ctx.op_type, [ctx.input(0), axes], ctx.outputs(),
             attrs={"keep_dims": bool_attr(ctx.attr("keepdims", 1)), "noop_with_empty_axes": False})


def _reduce_v13(ctx: OpContext) -> None:
    axes = ctx.input(1)
    if axes is None:
        axes = ctx.const("axes", int_list_value([int(a) for a in ctx.attr("axes", [])], I32))
    ctx.emit(ctx.op_type, [ctx.input(0), axes], ctx.outputs(),
             attrs={"keep_dims": bool_attr(ctx.attr("keepdims", 1)),
                    "noop_with_empty_axes": bool_attr(ctx.attr("noop_with_empty_axes", 0))})


for _op in _REDUCE:
    converter(_op, (8, 12), expands=True, ge_types=[_op, "Const"])(_reduce_v1)
    converter(_op, (13, 18), expands=True, ge_types=[_op, "Const"])(_reduce_v13)


@converter("ReduceSumSquare", (13, 18), ge_types=["SquareSumV1"])
def _reduce_sum_square(ctx: OpContext) -> None:
    axes = ctx.attr("axes")
    if ctx.input(1) is not None:
        value = ctx.static_value(ctx.input(1))
        if value is None:
            raise NodeNotConvertible("SquareSumV1 needs constant axes")
        axes = value.reshape(-1).tolist()
    ctx.emit("SquareSumV1", ctx.inputs()[:1], ctx.outputs(),
             attrs={"axis": [int(a) for a in (axes or [])], "keep_dims": bool_attr(ctx.attr("keepdims", 1))})


@converter("TopK", (8, 9), expands=True, ge_types=["TopK", "Const"])
def _topk_v1(ctx: OpContext) -> None:
    k = ctx.const("k", scalar_value(int(ctx.attr("k", 1)), I32))
    ctx.emit("TopK", [ctx.input(0), k], ctx.outputs(), attrs={"dim": int(ctx.attr("axis", -1))})


@converter("TopK", (10, 18), ge_types=["TopK"])
def _topk_v10(ctx: OpContext) -> None:
    ctx.emit("TopK", ctx.inputs(), ctx.outputs(),
             attrs={"dim": int(ctx.attr("axis", -1)), "largest": bool_attr(ctx.attr("largest", 1)),
                    "sorted": bool_attr(ctx.attr("sorted", 1))})


@converter("ArgMax", expands=True, ge_types=["ArgMaxV2", "ExpandDims", "Const"])
def _argmax(ctx: OpContext) -> None:
    if int(ctx.attr("select_last_index", 0)):
        raise NodeNotConvertible("select_last_index=1 is not supported by GE's ArgMax plugin")
    axis = int(ctx.attr("axis", 0))
    dim = ctx.const("dimension", scalar_value(axis, I32))
    if not bool_attr(ctx.attr("keepdims", 1)):
        ctx.emit("ArgMaxV2", [ctx.input(0), dim], ctx.outputs(), attrs={"dtype": ir.DataType.DT_INT64})
        return
    reduced = ctx.temp("ArgMaxV2")
    ctx.emit("ArgMaxV2", [ctx.input(0), dim], [reduced], attrs={"dtype": ir.DataType.DT_INT64})
    expand_axis = ctx.const("axis", scalar_value(axis, I32))
    ctx.emit("ExpandDims", [reduced, expand_axis], ctx.outputs())
