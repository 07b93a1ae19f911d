"""ONNX -> GE converters: matmul, convolution, pooling, normalisation and resize (spec ge-ops.md §3.3, §3.5)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from gebench import ir

from ._onnx_common import (
    Direct,
    NodeNotConvertible,
    OpContext,
    bool_attr,
    converter,
    int_list_value,
    scalar_value,
)

__all__: list[str] = []

NCHW = ir.Format.FORMAT_NCHW
NCDHW = ir.Format.FORMAT_NCDHW


#: MatMul without attributes (as the ONNX schema has it): what :func:`_matmul` gives then, as data
_MATMUL = Direct("BatchMatMulV2", (("adj_x1", False), ("adj_x2", False), ("enable_uncache", 0),
                                   ("fixed_shift_value", 42)), inputs=2, output_formats={0: NCHW})


@converter("MatMul", ge_types=["BatchMatMulV2"], direct=_MATMUL)
def _matmul(ctx: OpContext) -> None:
    attrs = {
        "adj_x1": bool_attr(ctx.attr("transA", 0)),
        "adj_x2": bool_attr(ctx.attr("transB", 0)),
        "enable_uncache": 0,
        "fixed_shift_value": 42,
    }
    ctx.emit("BatchMatMulV2", ctx.inputs()[:2], ctx.outputs(), attrs=attrs, output_formats={0: NCHW})


@converter("Gemm", expands=True, ge_types=["MatMulV2", "Add", "Muls"])
def _gemm(ctx: OpContext) -> None:
    alpha = float(ctx.attr("alpha", 1.0))
    beta = float(ctx.attr("beta", 1.0))
    a, b, c = ctx.input(0), ctx.input(1), ctx.input(2)
    mm_attrs = {"transpose_x1": bool_attr(ctx.attr("transA", 0)), "transpose_x2": bool_attr(ctx.attr("transB", 0))}
    scaled = alpha != 1.0 or (c is not None and beta != 1.0)
    if c is None and not scaled:
        ctx.emit("MatMulV2", [a, b], ctx.outputs(), attrs=mm_attrs)
        return
    mm_out = ctx.temp("MatMulV2")
    ctx.emit("MatMulV2", [a, b], [mm_out], attrs=mm_attrs)
    if scaled:
        product = ctx.temp("Muls_alpha") if c is not None else ctx.output(0)
        ctx.emit("Muls", [mm_out], [product], suffix="Muls_alpha", attrs={"value": alpha})
        if c is None:
            return
        c_scaled = ctx.temp("Muls_beta")
        ctx.emit("Muls", [c], [c_scaled], suffix="Muls_beta", attrs={"value": beta})
        ctx.emit("Add", [product, c_scaled], ctx.outputs(), suffix="add")
    else:
        ctx.emit("Add", [mm_out, c], ctx.outputs(), suffix="add")


# --------------------------------------------------------------------------- conv helpers
def _spatial_rank(ctx: OpContext, weight: str | None) -> int:
    kernel = ctx.attr("kernel_shape")
    if kernel:
        return len(kernel)
    for tensor in (weight, ctx.input(0)):
        shape = ctx.shape(tensor)
        if shape is not None and len(shape) >= 3:
            return len(shape) - 2
    raise NodeNotConvertible("cannot tell 1-D/2-D/3-D: no kernel_shape and no static input rank")


def _onnx_pads(ctx: OpContext, rank: int) -> list[int]:
    pads = [int(p) for p in ctx.attr("pads", [0] * (2 * rank))]
    if len(pads) != 2 * rank:
        raise NodeNotConvertible(f"pads has {len(pads)} values, expected {2 * rank}")
    return pads


def _ge_pads(pads: Sequence[int], rank: int) -> list[int]:
    """ONNX [b1, b2, ..., e1, e2, ...] -> GE [b1, e1, b2, e2, ...] (for 2-D: [top, bottom, left, right])."""
    out: list[int] = []
    for i in range(rank):
        out += [int(pads[i]), int(pads[i + rank])]
    return out


def _per_dim(ctx: OpContext, key: str, rank: int, default: int = 1) -> list[int]:
    values = [int(v) for v in ctx.attr(key, [default] * rank)]
    if len(values) != rank:
        raise NodeNotConvertible(f"{key} has {len(values)} values, expected {rank}")
    return values


@converter("Conv", expands=True, ge_types=["Conv2D", "Conv3D", "Unsqueeze", "Squeeze"])
def _conv(ctx: OpContext) -> None:
    x, w, bias = ctx.input(0), ctx.input(1), ctx.input(2)
    rank = _spatial_rank(ctx, w)
    strides = _per_dim(ctx, "strides", rank)
    dilations = _per_dim(ctx, "dilations", rank)
    pads = _onnx_pads(ctx, rank)
    extra = {"auto_pad": str(ctx.attr("auto_pad"))} if ctx.attr("auto_pad") is not None else {}
    group = int(ctx.attr("group", 1))
    if rank == 2:
        attrs = {"strides": [1, 1, *strides], "pads": _ge_pads(pads, 2), "dilations": [1, 1, *dilations],
                 "groups": group, "data_format": "NCHW", **extra}
        ctx.emit("Conv2D", [x, w, bias], ctx.outputs(), attrs=attrs,
                 input_formats={0: NCHW, 1: NCHW}, output_formats={0: NCHW})
    elif rank == 3:
        attrs = {"strides": [1, 1, *strides], "pads": _ge_pads(pads, 3), "dilations": [1, 1, *dilations],
                 "groups": group, "data_format": "NCDHW", **extra}
        ctx.emit("Conv3D", [x, w, bias], ctx.outputs(), attrs=attrs,
                 input_formats={0: NCDHW, 1: NCDHW}, output_formats={0: NCDHW})
    elif rank == 1:
        x4 = ctx.temp("Unsqueeze_x")
        w4 = ctx.temp("Unsqueeze_filter")
        ctx.emit("Unsqueeze", [x], [x4], suffix="Unsqueeze_x", attrs={"axes": [2]})
        ctx.emit("Unsqueeze", [w], [w4], suffix="Unsqueeze_filter", attrs={"axes": [2]})
        y4 = ctx.temp("Conv2D")
        attrs = {"strides": [1, 1, 1, strides[0]], "pads": [0, 0, pads[0], pads[1]],
                 "dilations": [1, 1, 1, dilations[0]], "groups": group, "data_format": "NCHW", **extra}
        ctx.emit("Conv2D", [x4, w4, bias], [y4], attrs=attrs, input_formats={0: NCHW, 1: NCHW},
                 output_formats={0: NCHW})
        ctx.emit("Squeeze", [y4], ctx.outputs(), attrs={"axis": [2]})
    else:
        raise NodeNotConvertible(f"{rank}-D convolution is not supported by GE's Conv plugin (1-D, 2-D, 3-D only)")


@converter("ConvTranspose", expands=True, ge_types=["Conv2DTranspose", "Conv3DTranspose"])
def _conv_transpose(ctx: OpContext) -> None:
    x, w, bias = ctx.input(0), ctx.input(1), ctx.input(2)
    rank = _spatial_rank(ctx, w)
    if rank not in (2, 3):
        raise NodeNotConvertible(f"{rank}-D ConvTranspose is not supported here (2-D and 3-D only)")
    strides = _per_dim(ctx, "strides", rank)
    dilations = _per_dim(ctx, "dilations", rank)
    out_pad = _per_dim(ctx, "output_padding", rank, 0)
    pads = _onnx_pads(ctx, rank)
    group = int(ctx.attr("group", 1))
    xs, ws = ctx.shape(x), ctx.shape(w)
    output_shape = ctx.attr("output_shape")
    auto_pad = str(ctx.attr("auto_pad", "NOTSET"))
    if auto_pad == "VALID":
        pads = [0] * (2 * rank)
    elif auto_pad in ("SAME_UPPER", "SAME_LOWER") and not output_shape:
        # ONNX: the output is input * stride; the total padding that gives it is split, the odd pixel at the end
        # (SAME_UPPER) or at the start (SAME_LOWER). GE's Conv2DTranspose takes explicit pads, so work them out
        if xs is None or ws is None or len(xs) != rank + 2 or any(d < 0 for d in (*xs[2:], *ws[2:])):
            raise NodeNotConvertible(f"ConvTranspose auto_pad={auto_pad} needs known input and weight spatial "
                                     "shapes to work out the pads; give the graph input static shapes")
        pads = [0] * (2 * rank)
        for i in range(rank):
            k = (ws[2 + i] - 1) * dilations[i] + 1
            total = max(0, strides[i] * (xs[2 + i] - 1) + out_pad[i] + k - xs[2 + i] * strides[i])
            small, big = total // 2, total - total // 2
            pads[i], pads[i + rank] = (small, big) if auto_pad == "SAME_UPPER" else (big, small)
    if xs is None or ws is None or len(xs) != rank + 2 or any(d < 0 for d in ws):
        size = [-1] * (rank + 2)
    else:
        size = [xs[0], ws[1] * group]
        for i in range(rank):
            if output_shape:
                size.append(int(output_shape[-rank + i]))
            elif xs[2 + i] < 0:
                size.append(-1)
            else:
                k = (ws[2 + i] - 1) * dilations[i] + 1
                size.append(strides[i] * (xs[2 + i] - 1) + out_pad[i] + k - pads[i] - pads[i + rank])
    input_size = ctx.const("input_size", int_list_value(size, ir.DataType.DT_INT32))
    fmt = NCHW if rank == 2 else NCDHW
    attrs = {"strides": [1, 1, *strides], "pads": _ge_pads(pads, rank), "dilations": [1, 1, *dilations],
             "groups": group, "data_format": "NCHW" if rank == 2 else "NCDHW", "output_padding": [0, 0, *out_pad]}
    op = "Conv2DTranspose" if rank == 2 else "Conv3DTranspose"
    ctx.emit(op, [input_size, x, w, bias], ctx.outputs(), attrs=attrs, input_formats={1: fmt, 2: fmt},
             output_formats={0: fmt})


# --------------------------------------------------------------------------- pooling
_PADDING_MODE = {"NOTSET": "CALCULATED", "SAME_UPPER": "SAME", "SAME_LOWER": "SAME", "VALID": "VALID"}


def _pool_attrs(ctx: OpContext, rank: int) -> dict:
    kernel = [int(k) for k in ctx.attr("kernel_shape", [])]
    if len(kernel) != rank:
        raise NodeNotConvertible(f"kernel_shape {kernel} does not have {rank} values")
    strides = _per_dim(ctx, "strides", rank)
    pads = _onnx_pads(ctx, rank)
    if int(ctx.attr("storage_order", 0)) != 0:
        raise NodeNotConvertible("storage_order=1 is not supported by GE's pooling plugins")
    if any(d != 1 for d in ctx.attr("dilations", [1] * rank)):
        raise NodeNotConvertible("dilated pooling is not supported by GE's pooling plugins")
    auto_pad = str(ctx.attr("auto_pad", "NOTSET"))
    return {"kernel": kernel, "strides": strides, "pads": pads, "padding_mode": _PADDING_MODE.get(auto_pad, "CALCULATED"),
            "ceil_mode": bool_attr(ctx.attr("ceil_mode", 0))}


def _pool(ctx: OpContext, kind: str) -> None:
    if len(ctx.onnx_node.output) > 1 and ctx.output(1):
        raise NodeNotConvertible("the Indices output of MaxPool is not produced by GE's plugin")
    kernel = ctx.attr("kernel_shape")
    if not kernel:
        raise NodeNotConvertible("kernel_shape is required")
    rank = len(kernel)
    p = _pool_attrs(ctx, rank)
    extra_v2 = {"exclusive": int(ctx.attr("count_include_pad", 0)) == 0} if kind == "avg" else {}
    op2d = "MaxPoolV3" if kind == "max" else "AvgPoolV2"
    if rank == 2:
        attrs = {"ksize": [1, 1, *p["kernel"]], "strides": [1, 1, *p["strides"]], "padding_mode": p["padding_mode"],
                 "pads": _ge_pads(p["pads"], 2), "data_format": "NCHW", "global_pooling": False,
                 "ceil_mode": p["ceil_mode"], **extra_v2}
        ctx.emit(op2d, [ctx.input(0)], ctx.outputs()[:1], attrs=attrs, input_formats={0: NCHW},
                 output_formats={0: NCHW})
    elif rank == 1:
        x4, y4 = ctx.temp("Unsqueeze"), ctx.temp(op2d)
        ctx.emit("Unsqueeze", [ctx.input(0)], [x4], attrs={"axes": [2]})
        attrs = {"ksize": [1, 1, 1, p["kernel"][0]], "strides": [1, 1, 1, p["strides"][0]],
                 "padding_mode": p["padding_mode"], "pads": [0, 0, p["pads"][0], p["pads"][1]], "data_format": "NCHW",
                 "global_pooling": False, "ceil_mode": p["ceil_mode"], **extra_v2}
        ctx.emit(op2d, [x4], [y4], attrs=attrs, input_formats={0: NCHW}, output_formats={0: NCHW})
        ctx.emit("Squeeze", [y4], ctx.outputs()[:1], attrs={"axis": [2]})
    elif rank == 3:
        common = {"ksize": [1, 1, *p["kernel"]], "strides": [1, 1, *p["strides"]], "pads": _ge_pads(p["pads"], 3),
                  "data_format": "NCDHW"}
        if kind == "max":
            attrs = {**common, "padding": "SAME" if p["padding_mode"] == "SAME" else "CALCULATED",
                     "ceil_mode": int(p["ceil_mode"])}
            ctx.emit("MaxPool3D", [ctx.input(0)], ctx.outputs()[:1], attrs=attrs, input_formats={0: NCDHW},
                     output_formats={0: NCDHW})
        else:
            attrs = {**common, "ceil_mode": p["ceil_mode"],
                     "count_include_pad": bool_attr(ctx.attr("count_include_pad", 0))}
            ctx.emit("AvgPool3D", [ctx.input(0)], ctx.outputs()[:1], attrs=attrs, input_formats={0: NCDHW},
                     output_formats={0: NCDHW})
    else:
        raise NodeNotConvertible(f"{rank}-D pooling is not supported (1-D, 2-D and 3-D only)")


@converter("MaxPool", expands=True, ge_types=["MaxPoolV3", "MaxPool3D"])
def _max_pool(ctx: OpContext) -> None:
    _pool(ctx, "max")


@converter("AveragePool", expands=True, ge_types=["AvgPoolV2", "AvgPool3D"])
def _avg_pool(ctx: OpContext) -> None:
    _pool(ctx, "avg")


@converter("GlobalMaxPool", expands=True, ge_types=["ReduceMax"])
def _global_max_pool(ctx: OpContext) -> None:
    shape = ctx.shape(ctx.input(0))
    rank = len(shape) if shape is not None else 4
    axes = ctx.const("axes", int_list_value(list(range(2, rank)), ir.DataType.DT_INT32))
    ctx.emit("ReduceMax", [ctx.input(0), axes], ctx.outputs(), attrs={"keep_dims": True})


# --------------------------------------------------------------------------- normalisation
@converter("BatchNormalization", ge_types=["BatchNorm"])
def _batch_norm(ctx: OpContext) -> None:
    attrs = {"epsilon": float(ctx.attr("epsilon", 1e-5)), "is_training": int(ctx.attr("training_mode", 0)) == 1,
             "data_format": "NCHW", "onnx": "onnx"}
    ctx.emit("BatchNorm", ctx.inputs(), ctx.outputs(), attrs=attrs)


@converter("InstanceNormalization", ge_types=["InstanceNorm"])
def _instance_norm(ctx: OpContext) -> None:
    ctx.emit("InstanceNorm", ctx.inputs(), ctx.outputs(),
             attrs={"epsilon": float(ctx.attr("epsilon", 1e-5)), "data_format": "NCHW"})


@converter("LayerNormalization", (17, 18), expands=True,
           ge_types=["LayerNorm", "Identity", "Shape", "BroadcastTo", "Adds", "Rsqrt", "Cast", "Const"])
def _layer_norm(ctx: OpContext) -> None:
    x, scale, bias = ctx.input(0), ctx.input(1), ctx.input(2)
    axis = int(ctx.attr("axis", -1))
    eps = float(ctx.attr("epsilon", 1e-5))
    stash = int(ctx.attr("stash_type", 1))
    gamma = ctx.temp("gamma")
    ctx.emit("Identity", [scale], [gamma], suffix="Identity_gamma")
    beta = ctx.temp("beta")
    if bias is not None:
        ctx.emit("Identity", [bias], [beta], suffix="Identity_beta")
    else:
        dtype = ctx.elem_dtype(scale)
        if dtype is None or dtype == ir.DataType.DT_UNDEFINED:
            dtype = ir.DataType.DT_FLOAT
        zero = ctx.const("beta_zero", scalar_value(0.0, dtype))
        shape = ctx.temp("Shape")
        ctx.emit("Shape", [scale], [shape], suffix="Shape_gamma", attrs={"dtype": int(ir.DataType.DT_INT64)})
        ctx.emit("BroadcastTo", [zero, shape], [beta], suffix="BroadcastTo_beta")
    want_mean, want_inv = ctx.output(1) is not None, ctx.output(2) is not None
    mean = ctx.temp("mean") if want_mean else None
    var = ctx.temp("variance") if want_inv else None
    ctx.emit("LayerNorm", [x, gamma, beta], [ctx.output(0), mean, var],
             attrs={"begin_norm_axis": axis, "begin_params_axis": axis, "epsilon": eps})
    stats_op = "Cast" if stash == 1 else "Identity"
    stats_attrs = {"dst_type": int(ir.DataType.DT_FLOAT)} if stash == 1 else {}
    if want_mean:
        ctx.emit(stats_op, [mean], [ctx.output(1)], suffix=f"{stats_op}_mean", attrs=stats_attrs)
    if want_inv:
        shifted, inv = ctx.temp("Adds"), ctx.temp("Rsqrt")
        ctx.emit("Adds", [var], [shifted], attrs={"value": eps})
        ctx.emit("Rsqrt", [shifted], [inv])
        ctx.emit(stats_op, [inv], [ctx.output(2)], suffix=f"{stats_op}_invstddev", attrs=stats_attrs)


@converter("LRN", ge_types=["LRN"])
def _lrn(ctx: OpContext) -> None:
    # GE's LRN takes the TensorFlow parameterisation: a half-width and a per-element alpha.
    size = int(ctx.attr("size", 1))
    attrs = {"depth_radius": (size - 1) // 2, "bias": float(ctx.attr("bias", 1.0)),
             "alpha": float(ctx.attr("alpha", 1e-4)) / size, "beta": float(ctx.attr("beta", 0.75)),
             "norm_region": "ACROSS_CHANNELS"}
    ctx.emit("LRN", ctx.inputs(), ctx.outputs(), attrs=attrs)


# --------------------------------------------------------------------------- resize
@converter("Resize", (10, 18), expands=True, ge_types=["ResizeNearestNeighborV2", "Resize"])
def _resize(ctx: OpContext) -> None:
    mode = str(ctx.attr("mode", "nearest"))
    x = ctx.input(0)
    if ctx.opset == 10:
        roi, scales, sizes = None, ctx.input(1), None
    else:
        roi, scales, sizes = ctx.input(1), ctx.input(2), ctx.input(3)
    ctm = str(ctx.attr("coordinate_transformation_mode", "half_pixel" if ctx.opset > 10 else "asymmetric"))
    if mode == "nearest":
        size = _static_hw(ctx, x, scales, sizes)
        size_t = ctx.const("size", int_list_value(size, ir.DataType.DT_INT32))
        attrs = {"align_corners": ctm == "align_corners",
                 "half_pixel_centers": ctm in ("half_pixel", "pytorch_half_pixel")}
        ctx.emit("ResizeNearestNeighborV2", [x, size_t], ctx.outputs(), attrs=attrs, input_formats={0: NCHW},
                 output_formats={0: NCHW})
        return
    attrs = {"coordinate_transformation_mode": ctm, "cubic_coeff_a": float(ctx.attr("cubic_coeff_a", -0.75)),
             "exclude_outside": int(ctx.attr("exclude_outside", 0)),
             "extrapolation_value": float(ctx.attr("extrapolation_value", 0.0)), "mode": mode,
             "nearest_mode": str(ctx.attr("nearest_mode", "round_prefer_floor"))}
    ctx.emit("Resize", [x, roi, scales, sizes], ctx.outputs(), attrs=attrs, input_formats={0: NCHW},
             output_formats={0: NCHW})


def _static_hw(ctx: OpContext, x: str | None, scales: str | None, sizes: str | None) -> list[int]:
    size_v = ctx.static_value(sizes)
    if size_v is not None and size_v.size >= 2:
        return [int(v) for v in size_v.reshape(-1)[-2:]]
    scale_v = ctx.static_value(scales)
    shape = ctx.shape(x)
    if scale_v is not None and scale_v.size >= 2 and shape is not None and all(d >= 0 for d in shape[-2:]):
        sv = scale_v.reshape(-1)[-2:]
        return [int(np.floor(shape[-2 + i] * float(sv[i]))) for i in range(2)]
    raise NodeNotConvertible("nearest Resize needs static sizes, or static scales and a static input shape")
