"""Reference kernels: convolution, pooling, normalisation, softmax, LRN, resize, depth/space shuffles.

Convolutions are computed by im2col (a strided window view copied once) and one batched matrix
product per group, never by Python loops over pixels. Layouts follow the GE attrs: ``data_format``
for activations, the filter desc's format for filters.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .reference import KernelContext, register_kernel

__all__: list[str] = []


# ------------------------------------------------------------------------------------ layout helpers
def _spatial_positions(data_format: str, nd: int) -> tuple[int, list[int]]:
    """(channel position, spatial positions) of a ``data_format`` string such as NCHW or NDHWC."""
    fmt = data_format.upper()
    if len(fmt) != nd + 2 or "C" not in fmt:
        fmt = "NC" + "DHW"[-nd:] if nd <= 3 else "NC" + "X" * nd
    c = fmt.index("C")
    spatial = [i for i, ch in enumerate(fmt) if ch not in "NC"]
    return c, spatial


def _to_channels_first(x: np.ndarray, data_format: str) -> tuple[np.ndarray, list[int] | None]:
    """Transpose ``x`` to N, C, spatial...; returns the inverse permutation (None if already so)."""
    c, spatial = _spatial_positions(data_format, x.ndim - 2)
    perm = [0, c, *spatial]
    if perm == list(range(x.ndim)):
        return x, None
    return np.transpose(x, perm), list(np.argsort(perm))


def _pick_spatial(values: Sequence[int], data_format: str, nd: int, default: int = 1) -> list[int]:
    """Spatial entries of a per-dimension list (strides/dilations/ksize) written in ``data_format`` order."""
    vals = [int(v) for v in values]
    if len(vals) == nd:
        return vals
    if len(vals) == nd + 2:
        _, spatial = _spatial_positions(data_format, nd)
        return [vals[i] for i in spatial]
    if len(vals) == 1:
        return vals * nd
    return [default] * nd


def _pad_pairs(pads: Sequence[int], nd: int) -> list[tuple[int, int]]:
    """GE pads: [begin0, end0, begin1, end1, ...] (Conv2D: [top, bottom, left, right])."""
    p = [int(v) for v in pads]
    if len(p) == 2 * nd:
        return [(p[2 * i], p[2 * i + 1]) for i in range(nd)]
    if len(p) == nd:
        return [(v, v) for v in p]
    return [(0, 0)] * nd


def _auto_pads(mode: str, in_sizes: Sequence[int], kernel: Sequence[int], strides: Sequence[int],
               dilations: Sequence[int]) -> list[tuple[int, int]]:
    """Pads for SAME_UPPER / SAME_LOWER / SAME / VALID."""
    mode = mode.upper()
    if mode == "VALID":
        return [(0, 0)] * len(in_sizes)
    pads = []
    for n, k, s, d in zip(in_sizes, kernel, strides, dilations, strict=True):
        out = -(-n // s)
        total = max((out - 1) * s + (k - 1) * d + 1 - n, 0)
        small = total // 2
        pads.append((total - small, small) if mode == "SAME_LOWER" else (small, total - small))
    return pads


def _pad_spatial(x: np.ndarray, pads: Sequence[tuple[int, int]], value: float = 0.0) -> np.ndarray:
    """Pad (or, for negative pads, crop) the spatial dims of an N, C, spatial... array."""
    crop = (slice(None), slice(None), *(slice(max(-b, 0), x.shape[2 + i] - max(-a, 0)) for i, (b, a) in enumerate(pads)))
    x = x[crop]
    width = [(0, 0), (0, 0), *((max(b, 0), max(a, 0)) for b, a in pads)]
    if all(w == (0, 0) for w in width):
        return x
    return np.pad(x, width, mode="constant", constant_values=np.asarray(value, dtype=x.dtype))


def _windows(xp: np.ndarray, kernel: Sequence[int], strides: Sequence[int], dilations: Sequence[int],
             out_sizes: Sequence[int]) -> np.ndarray:
    """A read-only view N, C, *out, *kernel of the windows of padded ``xp``."""
    nd = len(kernel)
    s = xp.strides
    shape = (*xp.shape[:2], *out_sizes, *kernel)
    strides_ = (s[0], s[1], *(s[2 + i] * strides[i] for i in range(nd)), *(s[2 + i] * dilations[i] for i in range(nd)))
    return as_strided(xp, shape=shape, strides=strides_, writeable=False)


def _filter_to_oihw(w: np.ndarray, fmt: str, data_format: str) -> np.ndarray:
    """Convert a filter to O, I, spatial... from its desc format (HWCN/NHWC/...; ND follows data_format)."""
    nd = w.ndim - 2
    fmt = fmt.upper()
    if fmt in ("HWCN", "DHWCN"):
        return np.transpose(w, (nd + 1, nd, *range(nd)))
    if fmt in ("NHWC", "NDHWC"):
        return np.transpose(w, (0, nd + 1, *range(1, nd + 1)))
    if fmt in ("NCHW", "NCDHW", "NCL"):
        return w
    # ND / unknown: TF-style graphs (NHWC data) carry HWCN filters, ONNX-style ones OIHW
    if data_format.upper() in ("NHWC", "NDHWC"):
        return np.transpose(w, (nd + 1, nd, *range(nd)))
    return w


# ------------------------------------------------------------------------------------ convolution
def conv_nd(x: np.ndarray, w: np.ndarray, bias: np.ndarray | None, strides: Sequence[int],
            pads: Sequence[tuple[int, int]], dilations: Sequence[int], groups: int) -> np.ndarray:
    """N-d grouped convolution of N, C, spatial... input with an O, C/groups, kernel... filter."""
    n, c = x.shape[:2]
    o = w.shape[0]
    kernel = w.shape[2:]
    nd = len(kernel)
    xp = _pad_spatial(x, pads)
    out_sizes = [(xp.shape[2 + i] - (dilations[i] * (kernel[i] - 1) + 1)) // strides[i] + 1 for i in range(nd)]
    if min(out_sizes, default=1) <= 0:
        return np.zeros((n, o, *[max(v, 0) for v in out_sizes]), dtype=x.dtype)
    win = _windows(xp, kernel, strides, dilations, out_sizes)
    cg, og = c // groups, o // groups
    k = int(np.prod(kernel))
    p = int(np.prod(out_sizes))
    # (N, G, Cg, *out, *K) -> (N, G, Cg, *K, *out) -> (N, G, Cg*K, P)
    win = win.reshape(n, groups, cg, *out_sizes, *kernel)
    perm = (0, 1, 2, *range(3 + nd, 3 + 2 * nd), *range(3, 3 + nd))
    cols = np.ascontiguousarray(np.transpose(win, perm)).reshape(n, groups, cg * k, p)
    wmat = w.reshape(groups, og, cg * k).astype(cols.dtype, copy=False)
    y = np.matmul(wmat[None], cols).reshape(n, o, *out_sizes)
    if bias is not None:
        y = y + bias.reshape((1, -1) + (1,) * nd).astype(y.dtype)
    return y.astype(x.dtype, copy=False)


def _conv_kernel(ctx: KernelContext, x: np.ndarray, filt: np.ndarray, bias: np.ndarray | None, nd: int,
                 default_format: str) -> np.ndarray:
    data_format = str(ctx.attr("data_format", default_format))
    xc, inverse = _to_channels_first(x, data_format)
    w = _filter_to_oihw(filt, ctx.input_format(1), data_format)
    strides = _pick_spatial(ctx.attr("strides"), data_format, nd)
    dilations = _pick_spatial(ctx.attr("dilations", [1] * (nd + 2)), data_format, nd)
    groups = int(ctx.attr("groups", 1))
    auto_pad = str(ctx.attr("auto_pad", ctx.attr("padding", "NOTSET"))).upper()
    if auto_pad in ("SAME", "SAME_UPPER", "SAME_LOWER", "VALID"):
        pads = _auto_pads(auto_pad, xc.shape[2:], w.shape[2:], strides, dilations)
    else:
        pads = _pad_pairs(ctx.attr("pads"), nd)
    if xc.shape[1] != w.shape[1] * groups:
        raise ctx.error(f"input has {xc.shape[1]} channels but the filter expects {w.shape[1]} x {groups} groups")
    y = conv_nd(xc, w, bias, strides, pads, dilations, groups)
    return np.transpose(y, inverse) if inverse is not None else y


@register_kernel("Conv2D")
def _conv2d(ctx: KernelContext, x: np.ndarray, filt: np.ndarray, bias: np.ndarray | None = None,
            offset_w: np.ndarray | None = None) -> np.ndarray:
    if x.ndim == 3:  # a 1-D convolution expressed as Conv2D on an unsqueezed input never reaches here
        raise ctx.error(f"Conv2D needs a 4-D input, got shape {list(x.shape)}")
    return _conv_kernel(ctx, x, filt, bias, 2, "NHWC")


@register_kernel("Conv3D")
def _conv3d(ctx: KernelContext, x: np.ndarray, filt: np.ndarray, bias: np.ndarray | None = None,
            offset_w: np.ndarray | None = None) -> np.ndarray:
    return _conv_kernel(ctx, x, filt, bias, 3, "NDHWC")


def conv_transpose_nd(x: np.ndarray, w: np.ndarray, bias: np.ndarray | None, strides: Sequence[int],
                      pads: Sequence[tuple[int, int]], dilations: Sequence[int], groups: int,
                      out_sizes: Sequence[int] | None, output_padding: Sequence[int]) -> np.ndarray:
    """N-d transposed convolution; ``w`` is C_in, C_out/groups, kernel... (ONNX/GE NCHW layout).

    Loops over kernel positions only (each iteration is one batched matrix product).
    """
    n, c = x.shape[:2]
    kernel = w.shape[2:]
    nd = len(kernel)
    og = w.shape[1]
    cg = c // groups
    in_sizes = x.shape[2:]
    full = [(in_sizes[i] - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 + output_padding[i] for i in range(nd)]
    acc_dtype = np.float64 if x.dtype == np.float64 else np.float32
    y = np.zeros((n, groups, og, *full), dtype=acc_dtype)
    xg = x.reshape(n, groups, cg, -1).astype(acc_dtype)
    wg = w.reshape(groups, cg, og, *kernel).astype(acc_dtype)
    for kpos in np.ndindex(*kernel):
        # (N, G, Og, P) = (G, Og, Cg) @ (N, G, Cg, P)
        contrib = np.matmul(np.swapaxes(wg[(slice(None), slice(None), slice(None), *kpos)], 1, 2)[None], xg)
        contrib = contrib.reshape(n, groups, og, *in_sizes)
        index = (slice(None), slice(None), slice(None),
                 *(slice(kpos[i] * dilations[i], kpos[i] * dilations[i] + (in_sizes[i] - 1) * strides[i] + 1, strides[i])
                   for i in range(nd)))
        y[index] += contrib
    y = y.reshape(n, groups * og, *full)
    if out_sizes is None:
        out_sizes = [full[i] - pads[i][0] - pads[i][1] for i in range(nd)]
    result = np.zeros((n, groups * og, *out_sizes), dtype=acc_dtype)
    src = tuple(slice(pads[i][0], min(pads[i][0] + out_sizes[i], full[i])) for i in range(nd))
    dst = tuple(slice(0, min(out_sizes[i], full[i] - pads[i][0])) for i in range(nd))
    result[(slice(None), slice(None), *dst)] = y[(slice(None), slice(None), *src)]
    if bias is not None:
        result += bias.reshape((1, -1) + (1,) * nd)
    return result.astype(x.dtype, copy=False)


@register_kernel(["Conv2DTranspose", "Conv3DTranspose"])
def _conv2d_transpose(ctx: KernelContext, input_size: np.ndarray | None, x: np.ndarray, filt: np.ndarray,
                      bias: np.ndarray | None = None, offset_w: np.ndarray | None = None) -> np.ndarray:
    nd = x.ndim - 2
    data_format = str(ctx.attr("data_format", "NHWC" if nd == 2 else "NDHWC"))
    xc, inverse = _to_channels_first(x, data_format)
    w = filt
    if ctx.input_format(2).upper() in ("HWCN", "DHWCN"):
        # HW, C_out, C_in -> C_in, C_out, HW
        w = np.transpose(filt, (nd + 1, nd, *range(nd)))
    strides = _pick_spatial(ctx.attr("strides"), data_format, nd)
    dilations = _pick_spatial(ctx.attr("dilations", [1] * (nd + 2)), data_format, nd)
    groups = int(ctx.attr("groups", 1))
    output_padding = _pick_spatial(ctx.attr("output_padding", [0] * (nd + 2)), data_format, nd, default=0)
    pads = _pad_pairs(ctx.attr("pads"), nd)
    out_sizes = None
    if input_size is not None and input_size.size == nd + 2:
        _, spatial = _spatial_positions(data_format, nd)
        sizes = [int(v) for v in input_size.reshape(-1)]
        out_sizes = [sizes[i] for i in spatial]
    elif input_size is not None and input_size.size == nd:
        out_sizes = [int(v) for v in input_size.reshape(-1)]
    auto_pad = str(ctx.attr("auto_pad", "NOTSET")).upper()
    if auto_pad in ("SAME_UPPER", "SAME_LOWER") and out_sizes is not None:
        pads = []
        for i in range(nd):
            full = (xc.shape[2 + i] - 1) * strides[i] + (w.shape[2 + i] - 1) * dilations[i] + 1 + output_padding[i]
            total = max(full - out_sizes[i], 0)
            small = total // 2
            pads.append((small, total - small) if auto_pad == "SAME_LOWER" else (total - small, small))
    y = conv_transpose_nd(xc, w, bias, strides, pads, dilations, groups, out_sizes, output_padding)
    return np.transpose(y, inverse) if inverse is not None else y


# ------------------------------------------------------------------------------------ pooling
def _pool_out_size(n: int, k: int, s: int, d: int, pb: int, pe: int, ceil_mode: bool) -> int:
    span = n + pb + pe - ((k - 1) * d + 1)
    if ceil_mode:
        out = -(-span // s) + 1
        # the last window must start inside the input or the begin padding
        if (out - 1) * s >= n + pb:
            out -= 1
        return out
    return span // s + 1


def pool_nd(x: np.ndarray, kernel: Sequence[int], strides: Sequence[int], pads: Sequence[tuple[int, int]],
            *, mode: str, ceil_mode: bool = False, dilations: Sequence[int] | None = None,
            count_include_pad: bool = False, divisor_override: int = 0) -> np.ndarray:
    """Max or average pooling of an N, C, spatial... array."""
    nd = len(kernel)
    dil = list(dilations) if dilations is not None else [1] * nd
    in_sizes = x.shape[2:]
    out_sizes = [_pool_out_size(in_sizes[i], kernel[i], strides[i], dil[i], pads[i][0], pads[i][1], ceil_mode)
                 for i in range(nd)]
    # extra end padding so every (ceil-mode) window lies inside the array
    extra = [max((out_sizes[i] - 1) * strides[i] + (kernel[i] - 1) * dil[i] + 1 - (in_sizes[i] + pads[i][0] + pads[i][1]), 0)
             for i in range(nd)]
    full_pads = [(pads[i][0], pads[i][1] + extra[i]) for i in range(nd)]
    if mode == "max":
        fill = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
        xp = _pad_spatial(x, full_pads, fill)
        win = _windows(xp, kernel, strides, dil, out_sizes)
        return win.max(axis=tuple(range(-nd, 0))).astype(x.dtype, copy=False)
    acc = np.float64 if x.dtype == np.float64 else np.float32
    xp = _pad_spatial(x.astype(acc), full_pads, 0.0)
    win = _windows(xp, kernel, strides, dil, out_sizes)
    total = win.sum(axis=tuple(range(-nd, 0)))
    if divisor_override:
        return (total / divisor_override).astype(x.dtype)
    # count the elements of each window: real ones (exclusive) or real + explicit padding (inclusive)
    ones = np.ones((1, 1, *in_sizes), dtype=acc)
    if count_include_pad:
        ones = _pad_spatial(ones, pads, 1.0)
        ones = _pad_spatial(ones, [(0, e) for e in extra], 0.0)
    else:
        ones = _pad_spatial(ones, full_pads, 0.0)
    counts = _windows(ones, kernel, strides, dil, out_sizes).sum(axis=tuple(range(-nd, 0)))
    with np.errstate(invalid="ignore", divide="ignore"):
        return (total / counts).astype(x.dtype)


def _pool_kernel(ctx: KernelContext, x: np.ndarray, mode: str, *, default_format: str, v2: bool) -> np.ndarray:
    nd = x.ndim - 2
    data_format = str(ctx.attr("data_format", default_format))
    xc, inverse = _to_channels_first(x, data_format)
    if bool(ctx.attr("global_pooling", False)):
        kernel = list(xc.shape[2:])
        strides = [1] * nd
        pads = [(0, 0)] * nd
    else:
        kernel = _pick_spatial(ctx.attr("ksize"), data_format, nd)
        strides = _pick_spatial(ctx.attr("strides"), data_format, nd)
        if v2:
            padding_mode = str(ctx.attr("padding_mode", "CALCULATED")).upper()
            if padding_mode in ("SAME", "VALID"):
                pads = _auto_pads(padding_mode, xc.shape[2:], kernel, strides, [1] * nd)
            else:
                pads = _pad_pairs(ctx.attr("pads", [0] * (2 * nd)), nd)
        else:
            # TF-style ops carry `padding`; AvgPool3D has only `pads`
            padding = str(ctx.attr("padding", "CALCULATED")).upper()
            if padding in ("SAME", "VALID"):
                pads = _auto_pads(padding, xc.shape[2:], kernel, strides, [1] * nd)
            else:
                pads = _pad_pairs(ctx.attr("pads", [0] * (2 * nd)), nd)
    ceil_mode = bool(int(ctx.attr("ceil_mode", False)))
    dilations = None
    if ctx.has_attr("dilation"):
        dilations = _pick_spatial(ctx.attr("dilation"), data_format, nd)
    elif ctx.has_attr("dilations"):
        dilations = _pick_spatial(ctx.attr("dilations"), data_format, nd)
    if mode == "avg":
        if ctx.has_attr("count_include_pad") or ctx.op_type == "AvgPool3D":
            include = bool(int(ctx.attr("count_include_pad", True)))
        else:
            # TF-style AvgPool (no attr) excludes padding; AvgPoolV2 has `exclusive`
            include = not bool(ctx.attr("exclusive", True))
        y = pool_nd(xc, kernel, strides, pads, mode="avg", ceil_mode=ceil_mode, dilations=dilations,
                    count_include_pad=include, divisor_override=int(ctx.attr("divisor_override", 0)))
    else:
        y = pool_nd(xc, kernel, strides, pads, mode="max", ceil_mode=ceil_mode, dilations=dilations)
    return np.transpose(y, inverse) if inverse is not None else y


@register_kernel("MaxPool")
def _max_pool(ctx: KernelContext, x: np.ndarray) -> np.ndarray:
    return _pool_kernel(ctx, x, "max", default_format="NHWC", v2=False)


@register_kernel("MaxPoolV3")
def _max_pool_v3(ctx: KernelContext, x: np.ndarray) -> np.ndarray:
    return _pool_kernel(ctx, x, "max", default_format="NCHW", v2=True)


@register_kernel("MaxPool3D")
def _max_pool_3d(ctx: KernelContext, x: np.ndarray) -> np.ndarray:
    return _pool_kernel(ctx, x, "max", default_format="NDHWC", v2=False)


@register_kernel("AvgPool")
def _avg_pool(ctx: KernelContext, x: np.ndarray) -> np.ndarray:
    return _pool_kernel(ctx, x, "avg", default_format="NHWC", v2=False)


@register_kernel("AvgPoolV2")
def _avg_pool_v2(ctx: KernelContext, x: np.ndarray) -> np.ndarray:
    return _pool_kernel(ctx, x, "avg", default_format="NCHW", v2=True)


@register_kernel("AvgPool3D")
def _avg_pool_3d(ctx: KernelContext, x: np.ndarray) -> np.ndarray:
    return _pool_kernel(ctx, x, "avg", default_format="NDHWC", v2=False)


@register_kernel("GlobalAveragePool")
def _global_average_pool(ctx: KernelContext, x: np.ndarray) -> np.ndarray:
    return np.mean(x, axis=tuple(range(2, x.ndim)), keepdims=True).astype(x.dtype)


@register_kernel("GlobalMaxPool")
def _global_max_pool(ctx: KernelContext, x: np.ndarray) -> np.ndarray:
    return np.max(x, axis=tuple(range(2, x.ndim)), keepdims=True)


@register_kernel("GlobalLpPool")
def _global_lp_pool(ctx: KernelContext, x: np.ndarray) -> np.ndarray:
    p = float(ctx.attr("p", 2))
    return np.power(np.sum(np.power(np.abs(x), p), axis=tuple(range(2, x.ndim)), keepdims=True), 1.0 / p).astype(x.dtype)


# ------------------------------------------------------------------------------------ softmax
def _softmax(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    m = np.max(x, axis=axes, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    e = np.exp(x - m)
    return e / np.sum(e, axis=axes, keepdims=True)


def _axes_attr(ctx: KernelContext, rank: int) -> tuple[int, ...]:
    value = ctx.attr("axes", [-1])
    axes = [int(v) for v in (value if isinstance(value, (list, tuple)) else [value])]
    return tuple(sorted({a + rank if a < 0 else a for a in axes}))


@register_kernel("SoftmaxV2")
def _softmax_v2(ctx: KernelContext, x: np.ndarray) -> np.ndarray:
    out_dtype = np.float32 if bool(ctx.attr("half_to_float", False)) and x.dtype == np.float16 else x.dtype
    return _softmax(x.astype(np.float64 if x.dtype == np.float64 else np.float32), _axes_attr(ctx, x.ndim)).astype(out_dtype)


@register_kernel("LogSoftmaxV2")
def _log_softmax_v2(ctx: KernelContext, x: np.ndarray) -> np.ndarray:
    axes = _axes_attr(ctx, x.ndim)
    xf = x.astype(np.float64 if x.dtype == np.float64 else np.float32)
    m = np.max(xf, axis=axes, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    shifted = xf - m
    return (shifted - np.log(np.sum(np.exp(shifted), axis=axes, keepdims=True))).astype(x.dtype)


@register_kernel("HardMax")
def _hard_max(ctx: KernelContext, x: np.ndarray) -> np.ndarray:
    axis = int(ctx.attr("axis", -1))
    idx = np.expand_dims(np.argmax(x, axis=axis), axis)
    out = np.zeros_like(x)
    np.put_along_axis(out, idx, 1, axis=axis)
    return out


# ------------------------------------------------------------------------------------ normalisation
def _moments(x: np.ndarray, axes: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    mean = np.mean(x, axis=axes, keepdims=True)
    var = np.mean(np.square(x - mean), axis=axes, keepdims=True)
    return mean, var


def _compute_dtype(x: np.ndarray) -> type:
    return np.float64 if x.dtype == np.float64 else np.float32


@register_kernel(["LayerNorm", "LayerNormV3"])
def _layer_norm(ctx: KernelContext, x: np.ndarray, gamma: np.ndarray | None, beta: np.ndarray | None) -> list[np.ndarray]:
    rank = x.ndim
    begin = int(ctx.attr("begin_norm_axis", 0))
    begin = begin + rank if begin < 0 else begin
    eps = float(ctx.attr("epsilon", 1e-7 if ctx.op_type == "LayerNorm" else 1e-5))
    xf = x.astype(_compute_dtype(x))
    axes = tuple(range(begin, rank))
    mean, var = _moments(xf, axes)
    rstd = 1.0 / np.sqrt(var + eps)
    y = (xf - mean) * rstd
    if gamma is not None:
        y = y * gamma.astype(xf.dtype)
    if beta is not None:
        y = y + beta.astype(xf.dtype)
    second = var if ctx.op_type == "LayerNorm" else rstd
    stat_dtype = ctx.output_dtype(1, np.float32)
    return [y.astype(x.dtype), mean.astype(stat_dtype), second.astype(stat_dtype)]


@register_kernel("LayerNormV4")
def _layer_norm_v4(ctx: KernelContext, x: np.ndarray, normalized_shape: np.ndarray, gamma: np.ndarray | None = None,
                   beta: np.ndarray | None = None) -> list[np.ndarray]:
    k = int(np.asarray(normalized_shape).size)
    eps = float(ctx.attr("epsilon", 1e-5))
    xf = x.astype(_compute_dtype(x))
    axes = tuple(range(x.ndim - k, x.ndim))
    mean, var = _moments(xf, axes)
    rstd = 1.0 / np.sqrt(var + eps)
    y = (xf - mean) * rstd
    if gamma is not None:
        y = y * gamma
    if beta is not None:
        y = y + beta
    return [y.astype(x.dtype), mean.astype(np.float32), rstd.astype(np.float32)]


@register_kernel("BatchNorm")
def _batch_norm(ctx: KernelContext, x: np.ndarray, scale: np.ndarray, offset: np.ndarray,
                mean: np.ndarray | None = None, variance: np.ndarray | None = None) -> list[np.ndarray]:
    data_format = str(ctx.attr("data_format", "NHWC"))
    eps = float(ctx.attr("epsilon", 1e-4))
    training = bool(ctx.attr("is_training", True))
    xf = x.astype(_compute_dtype(x))
    if x.ndim <= 2 or data_format.upper() not in ("NHWC", "NDHWC"):
        c_axis = 1 if x.ndim >= 2 else 0
    else:
        c_axis = x.ndim - 1
    red = tuple(i for i in range(x.ndim) if i != c_axis)
    shape = [1] * x.ndim
    shape[c_axis] = -1
    if training or mean is None or variance is None:
        m = np.mean(xf, axis=red)
        v = np.mean(np.square(xf - m.reshape(shape)), axis=red)
        count = max(int(np.prod([x.shape[i] for i in red])), 1)
        unbiased = v * count / max(count - 1, 1)
        factor = float(ctx.attr("exponential_avg_factor", 1.0))
        if mean is not None and variance is not None and factor != 1.0:
            run_mean = (1 - factor) * mean + factor * m
            run_var = (1 - factor) * variance + factor * unbiased
        else:
            run_mean, run_var = m, unbiased
        used_m, used_v = m, v
        extra = [run_mean, run_var, m, 1.0 / np.sqrt(v + eps), v]
    else:
        used_m, used_v = mean.astype(xf.dtype), variance.astype(xf.dtype)
        extra = [mean, variance, mean, variance, variance]
    y = (xf - used_m.reshape(shape)) / np.sqrt(used_v.reshape(shape) + eps) * scale.reshape(shape) + offset.reshape(shape)
    outs = [y.astype(x.dtype)] + [np.asarray(e, dtype=np.float32 if x.dtype != np.float64 else np.float64) for e in extra]
    return outs[: max(ctx.num_outputs, 1)] + [outs[0]] * max(ctx.num_outputs - len(outs), 0)


@register_kernel("BNInference")
def _bn_inference(ctx: KernelContext, x: np.ndarray, mean: np.ndarray, variance: np.ndarray,
                  scale: np.ndarray | None = None, offset: np.ndarray | None = None) -> np.ndarray:
    eps = float(ctx.attr("epsilon", 1e-5))
    shape = (1, -1) + (1,) * (x.ndim - 2)
    y = (x - mean.reshape(shape)) / np.sqrt(variance.reshape(shape) + eps)
    if scale is not None:
        y = y * scale.reshape(shape)
    if offset is not None:
        y = y + offset.reshape(shape)
    return y.astype(x.dtype)


@register_kernel("InstanceNorm")
def _instance_norm(ctx: KernelContext, x: np.ndarray, gamma: np.ndarray, beta: np.ndarray) -> list[np.ndarray]:
    data_format = str(ctx.attr("data_format", "NDHWC")).upper()
    eps = float(ctx.attr("epsilon", 1e-6))
    xf = x.astype(_compute_dtype(x))
    channels_last = data_format.startswith("N") and data_format.endswith("C") and data_format != "NC"
    c_axis = x.ndim - 1 if channels_last else 1
    axes = tuple(i for i in range(1, x.ndim) if i != c_axis)
    mean, var = _moments(xf, axes)
    shape = [1] * x.ndim
    shape[c_axis] = -1
    g = gamma.reshape(shape) if gamma.size == x.shape[c_axis] else gamma
    b = beta.reshape(shape) if beta.size == x.shape[c_axis] else beta
    y = (xf - mean) / np.sqrt(var + eps) * g + b
    return [y.astype(x.dtype), mean.astype(np.float32), var.astype(np.float32)]


@register_kernel("GroupNorm")
def _group_norm(ctx: KernelContext, x: np.ndarray, gamma: np.ndarray, beta: np.ndarray) -> list[np.ndarray]:
    groups = int(ctx.attr("num_groups"))
    eps = float(ctx.attr("eps", 1e-4))
    data_format = str(ctx.attr("data_format", "NCHW")).upper()
    xc, inverse = (x, None)
    if data_format in ("NHWC", "NDHWC") and x.ndim > 2:
        xc, inverse = _to_channels_first(x, data_format)
    xf = xc.astype(_compute_dtype(x))
    n, c = xf.shape[:2]
    grouped = xf.reshape(n, groups, -1)
    mean, var = _moments(grouped, (2,))
    y = ((grouped - mean) / np.sqrt(var + eps)).reshape(xf.shape)
    shape = (1, -1) + (1,) * (xf.ndim - 2)
    y = y * gamma.reshape(shape) + beta.reshape(shape)
    if inverse is not None:
        y = np.transpose(y, inverse)
    return [y.astype(x.dtype), mean.reshape(n, groups).astype(np.float32), var.reshape(n, groups).astype(np.float32)]


@register_kernel("RmsNorm")
def _rms_norm(ctx: KernelContext, x: np.ndarray, gamma: np.ndarray) -> list[np.ndarray]:
    eps = float(ctx.attr("epsilon", 1e-6))
    xf = x.astype(_compute_dtype(x))
    axes = tuple(range(x.ndim - gamma.ndim, x.ndim))
    rstd = 1.0 / np.sqrt(np.mean(np.square(xf), axis=axes, keepdims=True) + eps)
    return [(xf * rstd * gamma).astype(x.dtype), rstd.astype(np.float32)]


@register_kernel("AddRmsNorm")
def _add_rms_norm(ctx: KernelContext, x1: np.ndarray, x2: np.ndarray, gamma: np.ndarray) -> list[np.ndarray]:
    total = (x1 + x2).astype(x1.dtype)
    y, rstd = _rms_norm(ctx, total, gamma)
    return [y, rstd, total]


@register_kernel("LRN")
def _lrn(ctx: KernelContext, x: np.ndarray) -> np.ndarray:
    """Cross-channel LRN: y = x / (bias + alpha' * sum over the window of x^2) ^ beta.

    With an ONNX-style ``size`` attr the window is ``size`` channels and alpha' = alpha / size; with
    GE/TF's ``depth_radius`` it is 2 * depth_radius + 1 channels and alpha' = alpha.
    """
    bias = float(ctx.attr("bias", 1.0))
    alpha = float(ctx.attr("alpha", 1.0))
    beta = float(ctx.attr("beta", 0.5))
    if ctx.has_attr("size"):
        size = int(ctx.attr("size"))
        lo, hi = (size - 1) // 2, size - 1 - (size - 1) // 2
        coef = alpha / size
    else:
        radius = int(ctx.attr("depth_radius", 5))
        lo = hi = radius
        coef = alpha
    xf = x.astype(_compute_dtype(x))
    sq = np.square(xf)
    padded = np.pad(sq, [(0, 0), (lo, hi)] + [(0, 0)] * (x.ndim - 2))
    csum = np.concatenate([np.zeros_like(padded[:, :1]), np.cumsum(padded, axis=1)], axis=1)
    c = x.shape[1]
    window = csum[:, lo + hi + 1: lo + hi + 1 + c] - csum[:, :c]
    return (xf / np.power(bias + coef * window, beta)).astype(x.dtype)


@register_kernel("DepthToSpace")
def _depth_to_space(ctx: KernelContext, x: np.ndarray) -> np.ndarray:
    b = int(ctx.attr("block_size"))
    mode = str(ctx.attr("mode", "DCR")).upper()
    data_format = str(ctx.attr("data_format", "NHWC")).upper()
    xc, inverse = _to_channels_first(x, data_format) if data_format == "NHWC" else (x, None)
    n, c, h, w = xc.shape
    if mode == "DCR":
        y = xc.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
    else:
        y = xc.reshape(n, c // (b * b), b, b, h, w).transpose(0, 1, 4, 2, 5, 3)
    y = y.reshape(n, c // (b * b), h * b, w * b)
    return np.transpose(y, inverse) if inverse is not None else y


@register_kernel("SpaceToDepth")
def _space_to_depth(ctx: KernelContext, x: np.ndarray) -> np.ndarray:
    b = int(ctx.attr("block_size"))
    data_format = str(ctx.attr("data_format", "NHWC")).upper()
    xc, inverse = _to_channels_first(x, data_format) if data_format == "NHWC" else (x, None)
    n, c, h, w = xc.shape
    y = xc.reshape(n, c, h // b, b, w // b, b).transpose(0, 3, 5, 1, 2, 4).reshape(n, c * b * b, h // b, w // b)
    return np.transpose(y, inverse) if inverse is not None else y


# ------------------------------------------------------------------------------------ resize
def _source_coords(mode: str, out_size: int, in_size: int, scale: float, roi: tuple[float, float] | None) -> np.ndarray:
    """Input coordinate of every output index for ONNX's coordinate_transformation_mode."""
    o = np.arange(out_size, dtype=np.float64)
    if mode == "half_pixel":
        return (o + 0.5) / scale - 0.5
    if mode == "pytorch_half_pixel":
        return (o + 0.5) / scale - 0.5 if out_size > 1 else np.zeros_like(o)
    if mode == "align_corners":
        # ONNX divides by the unrounded resized length in_size * scale
        length = in_size * scale
        return o * (in_size - 1) / (length - 1) if length > 1 else np.zeros_like(o)
    if mode == "asymmetric":
        return o / scale
    if mode == "tf_half_pixel_for_nn":
        return (o + 0.5) / scale
    if mode == "half_pixel_symmetric":
        adj = out_size / (scale * in_size)
        center = in_size / 2
        offset = center * (1 - adj)
        return offset + (o + 0.5) / scale - 0.5
    if mode == "tf_crop_and_resize":
        start, end = roi if roi is not None else (0.0, 1.0)
        if out_size > 1:
            return start * (in_size - 1) + o * (end - start) * (in_size - 1) / (out_size - 1)
        return np.full_like(o, 0.5 * (start + end) * (in_size - 1))
    raise ValueError(f"unknown coordinate_transformation_mode {mode!r}")


def _nearest_index(coords: np.ndarray, nearest_mode: str, in_size: int, scale: float) -> np.ndarray:
    if nearest_mode == "round_prefer_ceil":
        idx = np.floor(coords + 0.5)
    elif nearest_mode == "floor":
        idx = np.floor(coords)
    elif nearest_mode == "ceil":
        idx = np.ceil(coords)
    else:  # round_prefer_floor
        idx = np.ceil(coords - 0.5)
    return np.clip(idx, 0, in_size - 1).astype(np.int64)


def _cubic_weights(t: np.ndarray, a: float) -> np.ndarray:
    """Keys cubic weights for offsets (t+1, t, 1-t, 2-t)."""
    def w(d: np.ndarray) -> np.ndarray:
        d = np.abs(d)
        return np.where(d <= 1, ((a + 2) * d - (a + 3)) * d * d + 1,
                        np.where(d < 2, ((a * d - 5 * a) * d + 8 * a) * d - 4 * a, 0.0))
    return np.stack([w(t + 1), w(t), w(1 - t), w(2 - t)], axis=-1)


def _resize_matrix(in_size: int, out_size: int, scale: float, *, mode: str, coord_mode: str, nearest_mode: str,
                   cubic_a: float, exclude_outside: bool, roi: tuple[float, float] | None,
                   ) -> tuple[np.ndarray, np.ndarray]:
    """(out x in interpolation matrix, mask of output positions outside the input for tf_crop_and_resize)."""
    coords = _source_coords(coord_mode, out_size, in_size, scale, roi)
    outside = (coords < 0) | (coords > in_size - 1) if coord_mode == "tf_crop_and_resize" else np.zeros(out_size, bool)
    mat = np.zeros((out_size, in_size), dtype=np.float64)
    rows = np.arange(out_size)
    if mode == "nearest":
        mat[rows, _nearest_index(coords, nearest_mode, in_size, scale)] = 1.0
        return mat, outside
    if mode == "linear":
        c = np.clip(coords, 0, in_size - 1)
        lo = np.floor(c).astype(np.int64)
        hi = np.minimum(lo + 1, in_size - 1)
        frac = c - lo
        np.add.at(mat, (rows, lo), 1 - frac)
        np.add.at(mat, (rows, hi), frac)
        return mat, outside
    if mode == "cubic":
        base = np.floor(coords).astype(np.int64)
        weights = _cubic_weights(coords - base, cubic_a)
        taps = base[:, None] + np.arange(-1, 3)[None, :]
        valid = (taps >= 0) & (taps < in_size)
        if exclude_outside:
            weights = np.where(valid, weights, 0.0)
            weights = weights / np.maximum(weights.sum(axis=1, keepdims=True), 1e-12)
        taps = np.clip(taps, 0, in_size - 1)
        np.add.at(mat, (np.repeat(rows, 4), taps.ravel()), weights.ravel())
        return mat, outside
    raise ValueError(f"unknown resize mode {mode!r}")


def resize_nd(x: np.ndarray, out_shape: Sequence[int], scales: Sequence[float], *, mode: str, coord_mode: str,
              nearest_mode: str = "round_prefer_floor", cubic_a: float = -0.75, exclude_outside: bool = False,
              extrapolation_value: float = 0.0, roi: Sequence[float] | None = None) -> np.ndarray:
    """Separable resize of every axis whose size changes (or that has a roi), by per-axis matrices."""
    acc = np.float64 if x.dtype == np.float64 else np.float32
    y = x.astype(np.float64)
    outside_total = np.zeros(tuple(out_shape), dtype=bool) if coord_mode == "tf_crop_and_resize" else None
    rank = x.ndim
    for axis in range(rank):
        axis_roi = (float(roi[axis]), float(roi[axis + rank])) if roi is not None and len(roi) == 2 * rank else None
        if out_shape[axis] == x.shape[axis] and scales[axis] == 1.0 and coord_mode != "tf_crop_and_resize":
            continue
        mat, outside = _resize_matrix(x.shape[axis], int(out_shape[axis]), float(scales[axis]), mode=mode,
                                      coord_mode=coord_mode, nearest_mode=nearest_mode, cubic_a=cubic_a,
                                      exclude_outside=exclude_outside, roi=axis_roi)
        y = np.moveaxis(np.tensordot(mat, y, axes=([1], [axis])), 0, axis)
        if outside_total is not None and outside.any():
            shape = [1] * rank
            shape[axis] = -1
            outside_total |= outside.reshape(shape)
    if outside_total is not None:
        y = np.where(outside_total, extrapolation_value, y)
    if x.dtype.kind in "iu":
        return np.rint(y).astype(x.dtype)
    return y.astype(acc).astype(x.dtype)


@register_kernel("Resize")
def _resize(ctx: KernelContext, x: np.ndarray, roi: np.ndarray | None = None, scales: np.ndarray | None = None,
            sizes: np.ndarray | None = None) -> np.ndarray:
    rank = x.ndim
    if sizes is not None and sizes.size:
        out_shape = [int(v) for v in sizes.reshape(-1)]
        sc = [out_shape[i] / x.shape[i] if x.shape[i] else 1.0 for i in range(rank)]
    elif scales is not None and scales.size:
        sc = [float(v) for v in scales.reshape(-1)]
        out_shape = [int(math.floor(x.shape[i] * sc[i])) for i in range(rank)]
    else:
        raise ctx.error("Resize needs scales or sizes")
    roi_list = [float(v) for v in roi.reshape(-1)] if roi is not None and roi.size else None
    return resize_nd(x, out_shape, sc, mode=str(ctx.attr("mode", "nearest")),
                     coord_mode=str(ctx.attr("coordinate_transformation_mode", "half_pixel")),
                     nearest_mode=str(ctx.attr("nearest_mode", "round_prefer_floor")),
                     cubic_a=float(ctx.attr("cubic_coeff_a", -0.75)),
                     exclude_outside=bool(int(ctx.attr("exclude_outside", 0))),
                     extrapolation_value=float(ctx.attr("extrapolation_value", 0.0)), roi=roi_list)


@register_kernel(["ResizeNearestNeighborV2", "ResizeBilinearV2"])
def _resize_tf(ctx: KernelContext, x: np.ndarray, size: np.ndarray) -> np.ndarray:
    """TF-style 2-D resize of the spatial axes (NHWC when the x desc says so, else NCHW)."""
    new_hw = [int(v) for v in size.reshape(-1)][-2:]
    nhwc = ctx.input_format(0).upper() == "NHWC"
    h_axis = 1 if nhwc else 2
    out_shape = list(x.shape)
    out_shape[h_axis], out_shape[h_axis + 1] = new_hw
    align = bool(ctx.attr("align_corners", False))
    half = bool(ctx.attr("half_pixel_centers", False))
    y = x
    for axis in (h_axis, h_axis + 1):
        n_in, n_out = x.shape[axis], out_shape[axis]
        scale = (n_in - 1) / (n_out - 1) if align and n_out > 1 else n_in / n_out
        o = np.arange(n_out, dtype=np.float64)
        if ctx.op_type == "ResizeNearestNeighborV2":
            src = (o + 0.5) * scale if half else o * scale
            idx = np.round(src) if align else np.floor(src)
            idx = np.clip(idx, 0, n_in - 1).astype(np.int64)
            y = np.take(y, idx, axis=axis)
        else:
            src = (o + 0.5) * scale - 0.5 if half else o * scale
            src = np.clip(src, 0, n_in - 1)
            lo = np.floor(src).astype(np.int64)
            hi = np.minimum(lo + 1, n_in - 1)
            frac = (src - lo).reshape([-1 if i == axis else 1 for i in range(x.ndim)])
            y = np.take(y, lo, axis=axis) * (1 - frac) + np.take(y, hi, axis=axis) * frac
    return np.asarray(y).astype(x.dtype)
