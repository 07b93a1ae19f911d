"""Inference rules of NN ops: matrix products, convolutions, pooling and normalisations."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from gebench.ir import UNKNOWN_DIM, DataType, Format

from ._infer import (
    UNKNOWN_SHAPE,
    InferContext,
    broadcast_shapes,
    conv_out,
    normalize_axis,
    register_infer,
    same_out,
)

_INT8_TO_INT32 = {DataType.DT_INT8: DataType.DT_INT32}


def _same_dim(ctx: InferContext, a: int, b: int, what: Callable[[], str]) -> int:
    """The dim two known-or-unknown dims agree on. ``what`` names them; it is called only when they differ (rules
    run per node, so the message is not formatted on the way that succeeds)."""
    if a >= 0 and b >= 0 and a != b:
        raise ctx.fail(f"{what()} differ: {a} vs {b}")
    return a if a >= 0 else b


# ---------------------------------------------------------------------------------------------- matmul
def _matmul_shape(ctx: InferContext, a: tuple[int, ...], b: tuple[int, ...], ta: bool, tb: bool) -> tuple[int, ...]:
    """numpy.matmul shape rule with optional transposes of the last two dims (1-D operands promoted)."""
    if a == UNKNOWN_SHAPE or b == UNKNOWN_SHAPE:
        return UNKNOWN_SHAPE
    if not a or not b:
        raise ctx.fail("matrix product of a scalar")
    a_vec, b_vec = len(a) == 1, len(b) == 1
    a2 = (1, a[0]) if a_vec else a
    b2 = (b[0], 1) if b_vec else b
    m, k1 = (a2[-1], a2[-2]) if ta and not a_vec else (a2[-2], a2[-1])
    k2, n = (b2[-1], b2[-2]) if tb and not b_vec else (b2[-2], b2[-1])
    _same_dim(ctx, k1, k2, lambda: f"contraction dims of x1 {list(a)} and x2 {list(b)}")
    try:
        batch = broadcast_shapes(a2[:-2], b2[:-2])
    except ValueError as exc:
        raise ctx.fail(f"batch dims do not broadcast: {exc}") from None
    out = list(batch)
    if not a_vec:
        out.append(m)
    if not b_vec:
        out.append(n)
    return tuple(out)


def _out_dtype(dtype: DataType) -> DataType:
    return _INT8_TO_INT32.get(dtype, dtype)


@register_infer("MatMul", "MatMulV2", "MatMulV3")
def _matmul(ctx: InferContext) -> None:
    a, b = ctx.shape("x1"), ctx.shape("x2")
    out = _matmul_shape(ctx, a, b, bool(ctx.attr("transpose_x1")), bool(ctx.attr("transpose_x2")))
    if ctx.has("bias") and out != UNKNOWN_SHAPE:
        try:
            broadcast_shapes(out, ctx.shape("bias"))
        except ValueError as exc:
            raise ctx.fail(f"bias does not broadcast to the product: {exc}") from None
    ctx.set_output(0, _out_dtype(ctx.dtype("x1")), out)


@register_infer("BatchMatMul", "BatchMatMulV2", "BatchMatMulV3")
def _batch_matmul(ctx: InferContext) -> None:
    a, b = ctx.shape("x1"), ctx.shape("x2")
    out = _matmul_shape(ctx, a, b, bool(ctx.attr("adj_x1")), bool(ctx.attr("adj_x2")))
    if ctx.schema is not None and ctx.schema.input("bias") is not None and ctx.has("bias") and out != UNKNOWN_SHAPE:
        try:
            broadcast_shapes(out, ctx.shape("bias"))
        except ValueError as exc:
            raise ctx.fail(f"bias does not broadcast to the product: {exc}") from None
    ctx.set_output(0, _out_dtype(ctx.dtype("x1")), out)


@register_infer("GEMM")
def _gemm(ctx: InferContext) -> None:
    a, b = ctx.shape("a"), ctx.shape("b")
    for name, s in (("a", a), ("b", b)):
        if s != UNKNOWN_SHAPE and len(s) != 2:
            raise ctx.fail(f"input {name} must be 2-D, got shape {list(s)}")
    out = _matmul_shape(ctx, a, b, bool(ctx.attr("transpose_a")), bool(ctx.attr("transpose_b")))
    c = ctx.shape("c")
    if out != UNKNOWN_SHAPE and c != UNKNOWN_SHAPE:
        if len(c) > 2:
            raise ctx.fail(f"c of shape {list(c)} has more than 2 dims")
        try:
            # c broadcasts to (m, n); where m or n is unknown, a full-size dim of c tells it
            out = broadcast_shapes(out, c)
        except ValueError as exc:
            raise ctx.fail(f"c does not broadcast to the product: {exc}") from None
    dtype = ctx.dtype("a")
    ctx.set_output(0, ctx.dtype("c") if dtype == DataType.DT_INT8 else dtype, out)


# ---------------------------------------------------------------------------------------------- convolution
_SPATIAL = {
    "NCHW": (0, 1, (2, 3)), "NHWC": (0, 3, (1, 2)),
    "NCDHW": (0, 1, (2, 3, 4)), "NDHWC": (0, 4, (1, 2, 3)),
}
# filter layouts: (out-channel axis, in-channel axis, spatial axes)
_FILTER = {
    Format.FORMAT_NCHW: (0, 1, (2, 3)), Format.FORMAT_NHWC: (0, 3, (1, 2)), Format.FORMAT_HWCN: (3, 2, (0, 1)),
    Format.FORMAT_NCDHW: (0, 1, (2, 3, 4)), Format.FORMAT_NDHWC: (0, 4, (1, 2, 3)),
    Format.FORMAT_DHWCN: (4, 3, (0, 1, 2)),
}


def _layout(ctx: InferContext, nspatial: int) -> tuple[str, tuple[int, int, tuple[int, ...]]]:
    fmt = str(ctx.attr("data_format"))
    layout = _SPATIAL.get(fmt)
    if layout is None or len(layout[2]) != nspatial:
        raise ctx.fail(f"data_format {fmt!r} is not a {nspatial + 2}-D layout this rule knows")
    return fmt, layout


def _filter_layout(ctx: InferContext, data_format: str) -> tuple[int, int, tuple[int, ...]]:
    d = ctx.desc("filter")
    for fmt in (d.origin_format, d.format):
        if fmt in _FILTER and len(_FILTER[fmt][2]) == len(_SPATIAL[data_format][2]):
            return _FILTER[fmt]
    # no usable filter format: ONNX graphs use NCHW/NCDHW filters, TF graphs HWCN/DHWCN
    default = {"NCHW": Format.FORMAT_NCHW, "NHWC": Format.FORMAT_HWCN,
               "NCDHW": Format.FORMAT_NCDHW, "NDHWC": Format.FORMAT_DHWCN}[data_format]
    return _FILTER[default]


def _spatial_attr(ctx: InferContext, name: str, sp_axes: tuple[int, ...], rank: int,
                  default: Sequence[int] | None = None) -> list[int]:
    """Per-spatial-dim values of a list attr given for every dim (``rank`` values, in data_format order) or for
    the spatial dims only."""
    values = [int(v) for v in (ctx.attr(name) if default is None else ctx.attr(name, list(default)))]
    if len(values) == rank:
        return [values[a] for a in sp_axes]
    if len(values) == len(sp_axes):
        return values
    raise ctx.fail(f"attr {name} has {len(values)} values, expected {rank} or {len(sp_axes)}")


def _conv(ctx: InferContext, nspatial: int) -> None:
    x = ctx.shape("x")
    w = ctx.shape("filter")
    fmt, (n_ax, c_ax, sp_ax) = _layout(ctx, nspatial)
    rank = nspatial + 2
    dtype = _INT8_TO_INT32.get(ctx.dtype("x"), ctx.dtype("x"))
    if x == UNKNOWN_SHAPE:
        ctx.set_output(0, dtype, (UNKNOWN_DIM,) * rank)
        return
    if len(x) != rank:
        raise ctx.fail(f"x must be {rank}-D for data_format {fmt}, got shape {list(x)}")
    wo, wi, wsp = _filter_layout(ctx, fmt)
    if w != UNKNOWN_SHAPE and len(w) != rank:
        raise ctx.fail(f"filter must be {rank}-D, got shape {list(w)}")
    strides = _spatial_attr(ctx, "strides", sp_ax, rank)
    dil = _spatial_attr(ctx, "dilations", sp_ax, rank)
    pads = [int(v) for v in ctx.attr("pads")]
    if len(pads) != 2 * nspatial:
        raise ctx.fail(f"attr pads has {len(pads)} values, expected {2 * nspatial}")
    groups = int(ctx.attr("groups"))
    known_w = w != UNKNOWN_SHAPE
    if known_w and x[c_ax] >= 0 and w[wi] >= 0 and x[c_ax] != w[wi] * groups:
        raise ctx.fail(f"x has {x[c_ax]} channels but filter {list(w)} with groups={groups} expects "
                       f"{w[wi] * groups}")
    padding = str(ctx.node.attrs.get("padding", ctx.node.attrs.get("auto_pad", ""))).upper()
    out = [0] * rank
    out[n_ax] = x[n_ax]
    out[c_ax] = w[wo] if known_w else UNKNOWN_DIM
    for i, ax in enumerate(sp_ax):
        k = w[wsp[i]] if known_w else UNKNOWN_DIM
        if padding.startswith("SAME"):
            out[ax] = same_out(x[ax], strides[i])
        elif padding == "VALID":
            out[ax] = conv_out(x[ax], k, strides[i], 0, 0, dil[i]) if k >= 0 else UNKNOWN_DIM
        elif k < 0:
            out[ax] = UNKNOWN_DIM
        else:
            out[ax] = conv_out(x[ax], k, strides[i], pads[2 * i], pads[2 * i + 1], dil[i])
    ctx.set_output(0, dtype, out)


@register_infer("Conv2D")
def _conv2d(ctx: InferContext) -> None:
    _conv(ctx, 2)


@register_infer("Conv3D")
def _conv3d(ctx: InferContext) -> None:
    _conv(ctx, 3)


@register_infer("Conv2DTranspose")
def _conv2d_transpose(ctx: InferContext) -> None:
    dtype = _INT8_TO_INT32.get(ctx.dtype("x"), ctx.dtype("x"))
    size = ctx.int_values("input_size")
    if size is not None:
        if len(size) != 4:
            raise ctx.fail(f"input_size holds {len(size)} values, expected 4")
        ctx.set_output(0, dtype, size)
        return
    x, w = ctx.shape("x"), ctx.shape("filter")
    fmt, (n_ax, c_ax, sp_ax) = _layout(ctx, 2)
    if x == UNKNOWN_SHAPE or w == UNKNOWN_SHAPE:
        ctx.set_output(0, dtype, (UNKNOWN_DIM,) * 4)
        return
    # transposed-conv filters hold (in channels, out channels / groups, kh, kw) in their layout's N/C slots
    wo, wi, wsp = _filter_layout(ctx, fmt)
    strides = _spatial_attr(ctx, "strides", sp_ax, 4)
    dil = _spatial_attr(ctx, "dilations", sp_ax, 4)
    opad = _spatial_attr(ctx, "output_padding", sp_ax, 4)
    pads = [int(v) for v in ctx.attr("pads")]
    groups = int(ctx.attr("groups"))
    out = [0] * 4
    out[n_ax] = x[n_ax]
    out[c_ax] = w[wi] * groups if w[wi] >= 0 else UNKNOWN_DIM
    for i, ax in enumerate(sp_ax):
        h, k = x[ax], w[wsp[i]]
        out[ax] = (UNKNOWN_DIM if h < 0 or k < 0 else
                   (h - 1) * strides[i] - pads[2 * i] - pads[2 * i + 1] + dil[i] * (k - 1) + opad[i] + 1)
    ctx.set_output(0, dtype, out)


# ---------------------------------------------------------------------------------------------- pooling
def _pool(ctx: InferContext, nspatial: int, *, mode_attr: str | None, default_fmt: str) -> None:
    """Pooling over ``nspatial`` dims; ``mode_attr`` names the padding-mode attr (None: explicit pads only)."""
    x = ctx.shape("x")
    fmt = str(ctx.attr("data_format", default_fmt))
    layout = _SPATIAL.get(fmt)
    if layout is None or len(layout[2]) != nspatial:
        raise ctx.fail(f"data_format {fmt!r} is not a {nspatial + 2}-D layout")
    _, _, sp_ax = layout
    rank = nspatial + 2
    if x == UNKNOWN_SHAPE:
        ctx.set_output(0, ctx.dtype("x"), (UNKNOWN_DIM,) * rank)
        return
    if len(x) != rank:
        raise ctx.fail(f"x must be {rank}-D for data_format {fmt}, got shape {list(x)}")
    ksize = _spatial_attr(ctx, "ksize", sp_ax, rank)
    strides = _spatial_attr(ctx, "strides", sp_ax, rank)
    out = list(x)
    if ctx.attr("global_pooling", False):
        for ax in sp_ax:
            out[ax] = 1
        ctx.set_output(0, ctx.dtype("x"), out)
        return
    mode = str(ctx.attr(mode_attr)).upper() if mode_attr else "CALCULATED"
    pads = [int(v) for v in ctx.attr("pads", [0] * (2 * nspatial))]
    if len(pads) != 2 * nspatial:
        raise ctx.fail(f"attr pads has {len(pads)} values, expected {2 * nspatial}")
    ceil_mode = bool(ctx.attr("ceil_mode", False))
    dil = (_spatial_attr(ctx, "dilation", sp_ax, rank, [1] * rank) if ctx.op_type == "MaxPool3D"
           else [1] * nspatial)
    for i, ax in enumerate(sp_ax):
        if mode == "SAME":
            out[ax] = same_out(x[ax], strides[i])
        elif mode == "VALID":
            out[ax] = conv_out(x[ax], ksize[i], strides[i], 0, 0, dil[i], ceil_mode=ceil_mode)
        else:  # CALCULATED or explicit pads
            out[ax] = conv_out(x[ax], ksize[i], strides[i], pads[2 * i], pads[2 * i + 1], dil[i], ceil_mode=ceil_mode)
    ctx.set_output(0, ctx.dtype("x"), out)


@register_infer("MaxPool", "AvgPool")
def _pool_tf(ctx: InferContext) -> None:
    _pool(ctx, 2, mode_attr="padding", default_fmt="NHWC")


@register_infer("MaxPoolV3", "AvgPoolV2")
def _pool_v(ctx: InferContext) -> None:
    _pool(ctx, 2, mode_attr="padding_mode", default_fmt="NCHW")


@register_infer("MaxPool3D")
def _maxpool3d(ctx: InferContext) -> None:
    _pool(ctx, 3, mode_attr="padding", default_fmt="NDHWC")


@register_infer("AvgPool3D")
def _avgpool3d(ctx: InferContext) -> None:
    # AvgPool3D has explicit pads and no padding mode
    _pool(ctx, 3, mode_attr=None, default_fmt="NDHWC")


@register_infer("GlobalAveragePool")
def _global_avg_pool(ctx: InferContext) -> None:
    x = ctx.shape("x")
    if x == UNKNOWN_SHAPE:
        ctx.set_output(0, ctx.dtype("x"), x)
        return
    if len(x) < 3:
        raise ctx.fail(f"x must have batch, channel and spatial dims, got shape {list(x)}")
    ctx.set_output(0, ctx.dtype("x"), tuple(x[:2]) + (1,) * (len(x) - 2))


# ---------------------------------------------------------------------------------------------- normalisation
def _channel_axis(fmt: str, rank: int) -> int:
    return rank - 1 if fmt.endswith("C") and fmt.startswith("N") and fmt not in ("NC",) else 1


@register_infer("BatchNorm")
def _batch_norm(ctx: InferContext) -> None:
    x = ctx.shape("x")
    scale = ctx.shape("scale")
    fmt = str(ctx.attr("data_format"))
    if x != UNKNOWN_SHAPE and scale != UNKNOWN_SHAPE and len(scale) == 1 and len(x) >= 2:
        c = x[_channel_axis(fmt, len(x))]
        _same_dim(ctx, c, scale[0], lambda: f"channels of x ({fmt}) and scale")
        cshape: tuple[int, ...] = (c if c >= 0 else scale[0],)
    else:
        cshape = scale
    ctx.set_output("y", ctx.dtype("x"), x)
    stat = ctx.dtype("scale")
    for name in ("batch_mean", "batch_variance", "reserve_space_1", "reserve_space_2", "reserve_space_3"):
        ctx.set_output(name, stat, cshape)


@register_infer("InstanceNorm")
def _instance_norm(ctx: InferContext) -> None:
    x = ctx.shape("x")
    fmt = str(ctx.attr("data_format"))
    ctx.set_output("y", ctx.dtype("x"), x)
    if x == UNKNOWN_SHAPE:
        stats: tuple[int, ...] = x
    else:
        c = _channel_axis(fmt, len(x))
        stats = tuple(d if i in (0, c) else 1 for i, d in enumerate(x))
    ctx.set_output("mean", ctx.dtype("gamma"), stats)
    ctx.set_output("variance", ctx.dtype("gamma"), stats)


@register_infer("GroupNorm")
def _group_norm(ctx: InferContext) -> None:
    x = ctx.shape("x")
    groups = int(ctx.attr("num_groups"))
    fmt = str(ctx.attr("data_format"))
    if x != UNKNOWN_SHAPE and len(x) >= 2:
        c = x[_channel_axis(fmt, len(x))]
        if c >= 0 and groups > 0 and c % groups:
            raise ctx.fail(f"{c} channels do not split into num_groups={groups}")
    ctx.set_output("y", ctx.dtype("x"), x)
    n = x[0] if x != UNKNOWN_SHAPE and x else UNKNOWN_DIM
    ctx.set_output("mean", ctx.dtype("x"), (n, groups))
    ctx.set_output("variance", ctx.dtype("x"), (n, groups))


def _stat_shape(x: tuple[int, ...], axis: int) -> tuple[int, ...]:
    return tuple(x[:axis]) + (1,) * (len(x) - axis)


@register_infer("LayerNorm", "LayerNormV3")
def _layer_norm(ctx: InferContext) -> None:
    x = ctx.shape("x")
    ctx.set_output("y", ctx.dtype("x"), x)
    if x == UNKNOWN_SHAPE:
        stats = x
    else:
        axis = normalize_axis(int(ctx.attr("begin_norm_axis")), max(len(x), 1), "begin_norm_axis")
        stats = _stat_shape(x, axis)
    stat_dtype = DataType.DT_FLOAT if ctx.op_type == "LayerNormV3" else ctx.dtype("x")
    for name in ctx.schema.outputs[1:] if ctx.schema else ():
        ctx.set_output(name.name, stat_dtype, stats)


@register_infer("LayerNormV4")
def _layer_norm_v4(ctx: InferContext) -> None:
    x = ctx.shape("x")
    ctx.set_output("y", ctx.dtype("x"), x)
    norm = ctx.int_values("normalized_shape")
    n_norm = len(norm) if norm is not None else None
    if n_norm is None:
        ns = ctx.shape("normalized_shape")
        n_norm = ns[0] if len(ns) == 1 and ns[0] >= 0 else None
    if n_norm is None and ctx.has("gamma") and ctx.shape("gamma") != UNKNOWN_SHAPE:
        n_norm = len(ctx.shape("gamma"))
    if x == UNKNOWN_SHAPE or n_norm is None:
        stats: tuple[int, ...] = UNKNOWN_SHAPE if x == UNKNOWN_SHAPE else (UNKNOWN_DIM,) * len(x)
    else:
        if n_norm > len(x):
            raise ctx.fail(f"normalized_shape has {n_norm} dims but x has rank {len(x)}")
        stats = _stat_shape(x, len(x) - n_norm)
    ctx.set_output("mean", DataType.DT_FLOAT, stats)
    ctx.set_output("rstd", DataType.DT_FLOAT, stats)


def _rms_stats(ctx: InferContext, x: tuple[int, ...]) -> tuple[int, ...]:
    g = ctx.shape("gamma")
    if x == UNKNOWN_SHAPE or g == UNKNOWN_SHAPE:
        return UNKNOWN_SHAPE
    if len(g) > len(x):
        raise ctx.fail(f"gamma {list(g)} has a higher rank than x {list(x)}")
    return _stat_shape(x, len(x) - len(g))


@register_infer("RmsNorm")
def _rms_norm(ctx: InferContext) -> None:
    x = ctx.shape("x")
    ctx.set_output("y", ctx.dtype("x"), x)
    ctx.set_output("rstd", DataType.DT_FLOAT, _rms_stats(ctx, x))


@register_infer("AddRmsNorm")
def _add_rms_norm(ctx: InferContext) -> None:
    x = broadcast_shapes(ctx.shape("x1"), ctx.shape("x2"))
    ctx.set_output("y", ctx.dtype("x1"), x)
    ctx.set_output("rstd", DataType.DT_FLOAT, _rms_stats(ctx, x))
    ctx.set_output("x", ctx.dtype("x1"), x)
