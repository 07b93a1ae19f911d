"""Reference kernels: shape and layout ops, concat/split, slicing, gathers and scatters, padding,
reductions, arg/top-k, and tensor creation."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from gebench import ir

from .reference import KernelContext, register_kernel

__all__: list[str] = []


def _ints(value: object) -> list[int]:
    """A list of Python ints from an attr value or a (0-d or 1-d) array."""
    if value is None:
        return []
    if isinstance(value, np.ndarray):
        return [int(v) for v in value.reshape(-1)]
    if isinstance(value, (list, tuple)):
        return [int(v) for v in value]
    return [int(value)]


def _axis(axis: int, rank: int) -> int:
    return axis + rank if axis < 0 else axis


# ------------------------------------------------------------------------------------ reshape family
@register_kernel("Reshape")
def _reshape(ctx: KernelContext, x: np.ndarray, shape: np.ndarray) -> np.ndarray:
    dims = _ints(shape)
    axis = int(ctx.attr("axis", 0))
    num_axes = int(ctx.attr("num_axes", -1))
    if axis != 0 or num_axes != -1:
        # reshape only x.shape[axis : axis + num_axes]
        a = _axis(axis, x.ndim + 1) if axis < 0 else axis
        end = x.ndim if num_axes == -1 else a + num_axes
        head, tail = list(x.shape[:a]), list(x.shape[end:])
        middle = [x.shape[a + i] if d == 0 and not int(ctx.attr("allowzero", 0)) else d for i, d in enumerate(dims)]
        return x.reshape(head + middle + tail)
    if not int(ctx.attr("allowzero", 0)):
        dims = [x.shape[i] if d == 0 and i < x.ndim else d for i, d in enumerate(dims)]
    return x.reshape(dims)


@register_kernel("Flatten")
def _flatten(ctx: KernelContext, x: np.ndarray) -> np.ndarray:
    axis = _axis(int(ctx.attr("axis", 1)), x.ndim)
    lead = int(np.prod(x.shape[:axis], dtype=np.int64))
    return x.reshape(lead, -1) if x.size else x.reshape(lead, int(np.prod(x.shape[axis:], dtype=np.int64)))


def _squeeze(x: np.ndarray, axes: list[int]) -> np.ndarray:
    if not axes:
        return x.reshape([d for d in x.shape if d != 1])
    return np.squeeze(x, axis=tuple(_axis(a, x.ndim) for a in axes))


@register_kernel("Squeeze")
def _squeeze_v1(ctx: KernelContext, x: np.ndarray) -> np.ndarray:
    return _squeeze(x, _ints(ctx.attr("axis", [])))


@register_kernel("SqueezeV3")
def _squeeze_v3(ctx: KernelContext, x: np.ndarray, axes: np.ndarray | None = None) -> np.ndarray:
    return _squeeze(x, _ints(axes))


def _unsqueeze(x: np.ndarray, axes: list[int]) -> np.ndarray:
    out_rank = x.ndim + len(axes)
    return np.expand_dims(x, tuple(sorted(_axis(a, out_rank) for a in axes)))


@register_kernel("Unsqueeze")
def _unsqueeze_v1(ctx: KernelContext, x: np.ndarray) -> np.ndarray:
    return _unsqueeze(x, _ints(ctx.attr("axes", [])))


@register_kernel("UnsqueezeV3")
def _unsqueeze_v3(ctx: KernelContext, x: np.ndarray, axes: np.ndarray) -> np.ndarray:
    return _unsqueeze(x, _ints(axes))


@register_kernel("ExpandDims")
def _expand_dims(ctx: KernelContext, x: np.ndarray, axis: np.ndarray) -> np.ndarray:
    return _unsqueeze(x, _ints(axis))


@register_kernel("Transpose")
def _transpose(ctx: KernelContext, x: np.ndarray, perm: np.ndarray) -> np.ndarray:
    p = _ints(perm)
    return np.transpose(x, p if p else None)


@register_kernel("TransposeD")
def _transpose_d(ctx: KernelContext, x: np.ndarray) -> np.ndarray:
    return np.transpose(x, _ints(ctx.attr("perm")))


@register_kernel("Shape")
def _shape(ctx: KernelContext, x: np.ndarray) -> np.ndarray:
    dtype = ir.numpy_dtype(ir.DataType(int(ctx.attr("dtype", int(ir.DataType.DT_INT32)))))
    return np.asarray(x.shape, dtype=dtype)


@register_kernel("Size")
def _size(ctx: KernelContext, x: np.ndarray) -> np.ndarray:
    return np.asarray(x.size, dtype=ctx.output_dtype(0, np.int64))


@register_kernel(["Expand", "BroadcastTo"])
def _expand(ctx: KernelContext, x: np.ndarray, shape: np.ndarray) -> np.ndarray:
    dims = _ints(shape)
    return np.array(np.broadcast_to(x, np.broadcast_shapes(x.shape, tuple(dims))))


@register_kernel("Tile")
def _tile(ctx: KernelContext, x: np.ndarray, multiples: np.ndarray) -> np.ndarray:
    return np.tile(x, _ints(multiples))


@register_kernel("TileD")
def _tile_d(ctx: KernelContext, x: np.ndarray) -> np.ndarray:
    return np.tile(x, _ints(ctx.attr("multiples")))


@register_kernel("Fill")
def _fill(ctx: KernelContext, dims: np.ndarray, value: np.ndarray) -> np.ndarray:
    return np.full(_ints(dims), np.asarray(value).reshape(-1)[0], dtype=value.dtype)


@register_kernel("Range")
def _range(ctx: KernelContext, start: np.ndarray, limit: np.ndarray, delta: np.ndarray) -> np.ndarray:
    s, lim, d = (np.asarray(v).reshape(()) for v in (start, limit, delta))
    dtype = np.result_type(s.dtype, lim.dtype, d.dtype)
    if bool(ctx.attr("is_closed", False)):
        count = max(int(math.floor((float(lim) - float(s)) / float(d))) + 1, 0)
    else:
        count = max(int(math.ceil((float(lim) - float(s)) / float(d))), 0)
    return (s.astype(dtype) + np.arange(count, dtype=dtype) * d.astype(dtype)).astype(dtype)


# ------------------------------------------------------------------------------------ concat / split
def _concat(xs: Sequence[np.ndarray], axis: int) -> np.ndarray:
    rank = max(x.ndim for x in xs)
    return np.concatenate(list(xs), axis=_axis(axis, rank))


@register_kernel("Concat")
def _concat_v1(ctx: KernelContext, concat_dim: np.ndarray, *xs: np.ndarray) -> np.ndarray:
    return _concat(xs, _ints(concat_dim)[0])


@register_kernel("ConcatV2")
def _concat_v2(ctx: KernelContext, *args: np.ndarray) -> np.ndarray:
    return _concat(args[:-1], _ints(args[-1])[0])


@register_kernel(["ConcatD", "ConcatV2D"])
def _concat_d(ctx: KernelContext, *xs: np.ndarray) -> np.ndarray:
    return _concat(xs, int(ctx.attr("concat_dim")))


def _split_equal(ctx: KernelContext, x: np.ndarray, axis: int) -> list[np.ndarray]:
    n = int(ctx.attr("num_split", ctx.num_outputs))
    return np.split(x, n, axis=_axis(axis, x.ndim))


@register_kernel("Split")
def _split(ctx: KernelContext, split_dim: np.ndarray, x: np.ndarray) -> list[np.ndarray]:
    return _split_equal(ctx, x, _ints(split_dim)[0])


@register_kernel("SplitD")
def _split_d(ctx: KernelContext, x: np.ndarray) -> list[np.ndarray]:
    return _split_equal(ctx, x, int(ctx.attr("split_dim")))


@register_kernel("SplitV")
def _split_v(ctx: KernelContext, x: np.ndarray, size_splits: np.ndarray, split_dim: np.ndarray) -> list[np.ndarray]:
    axis = _axis(_ints(split_dim)[0], x.ndim)
    sizes = _ints(size_splits)
    if -1 in sizes:
        known = sum(s for s in sizes if s != -1)
        sizes[sizes.index(-1)] = x.shape[axis] - known
    cuts = np.cumsum(sizes)[:-1]
    return np.split(x, cuts, axis=axis)


# ------------------------------------------------------------------------------------ slicing
@register_kernel("Slice")
def _slice(ctx: KernelContext, x: np.ndarray, offsets: np.ndarray, size: np.ndarray) -> np.ndarray:
    return _slice_by(x, _ints(offsets), _ints(size))


@register_kernel("SliceD")
def _slice_d(ctx: KernelContext, x: np.ndarray) -> np.ndarray:
    return _slice_by(x, _ints(ctx.attr("offsets")), _ints(ctx.attr("size")))


def _slice_by(x: np.ndarray, offsets: list[int], size: list[int]) -> np.ndarray:
    index = tuple(slice(o, None if s == -1 else o + s) for o, s in zip(offsets, size, strict=True))
    return x[index]


def _strided_slice(ctx: KernelContext, x: np.ndarray, begin: list[int], end: list[int], strides: list[int],
                   axes: list[int] | None = None) -> np.ndarray:
    """TF/GE strided-slice semantics (masks index positions in ``begin``); ``axes`` (StridedSliceV2)
    names the dimension each ``begin`` entry applies to."""
    begin_mask = int(ctx.attr("begin_mask", 0))
    end_mask = int(ctx.attr("end_mask", 0))
    ellipsis_mask = int(ctx.attr("ellipsis_mask", 0))
    new_axis_mask = int(ctx.attr("new_axis_mask", 0))
    shrink_mask = int(ctx.attr("shrink_axis_mask", 0))
    if axes is not None:
        index: list[object] = [slice(None)] * x.ndim
        for i, ax in enumerate(axes):
            a = _axis(ax, x.ndim)
            if (shrink_mask >> i) & 1:
                index[a] = begin[i]
                continue
            b = None if (begin_mask >> i) & 1 else begin[i]
            e = None if (end_mask >> i) & 1 else end[i]
            index[a] = slice(b, e, strides[i])
        return x[tuple(index)]
    consumed = sum(1 for i in range(len(begin)) if not (new_axis_mask >> i) & 1 and not (ellipsis_mask >> i) & 1)
    index = []
    for i in range(len(begin)):
        if (ellipsis_mask >> i) & 1:
            index.extend([slice(None)] * (x.ndim - consumed))
        elif (new_axis_mask >> i) & 1:
            index.append(np.newaxis)
        elif (shrink_mask >> i) & 1:
            index.append(begin[i])
        else:
            b = None if (begin_mask >> i) & 1 else begin[i]
            e = None if (end_mask >> i) & 1 else end[i]
            index.append(slice(b, e, strides[i]))
    return x[tuple(index)]


@register_kernel("StridedSlice")
def _strided_slice_v1(ctx: KernelContext, x: np.ndarray, begin: np.ndarray, end: np.ndarray,
                      strides: np.ndarray) -> np.ndarray:
    return _strided_slice(ctx, x, _ints(begin), _ints(end), _ints(strides))


@register_kernel("StridedSliceD")
def _strided_slice_d(ctx: KernelContext, x: np.ndarray) -> np.ndarray:
    return _strided_slice(ctx, x, _ints(ctx.attr("begin")), _ints(ctx.attr("end")), _ints(ctx.attr("strides")))


@register_kernel("StridedSliceV2")
def _strided_slice_v2(ctx: KernelContext, x: np.ndarray, begin: np.ndarray, end: np.ndarray,
                      axes: np.ndarray | None = None, strides: np.ndarray | None = None) -> np.ndarray:
    b = _ints(begin)
    ax = _ints(axes) if axes is not None else list(range(len(b)))
    st = _ints(strides) if strides is not None else [1] * len(b)
    return _strided_slice(ctx, x, b, _ints(end), st, axes=ax)


# ------------------------------------------------------------------------------------ gather / scatter
def _gather(x: np.ndarray, indices: np.ndarray, axis: int, batch_dims: int) -> np.ndarray:
    axis = _axis(axis, x.ndim)
    idx = indices.astype(np.int64)
    idx = np.where(idx < 0, idx + x.shape[axis], idx)
    if batch_dims == 0:
        return np.take(x, idx, axis=axis)
    batch_dims = _axis(batch_dims, idx.ndim)
    # loop over the (usually small) product of the batch dimensions
    bshape = x.shape[:batch_dims]
    xs = x.reshape((-1,) + x.shape[batch_dims:])
    ids = idx.reshape((-1,) + idx.shape[batch_dims:])
    parts = [np.take(xs[b], ids[b], axis=axis - batch_dims) for b in range(xs.shape[0])]
    return np.stack(parts).reshape(bshape + parts[0].shape)


@register_kernel("Gather")
def _gather_v1(ctx: KernelContext, x: np.ndarray, indices: np.ndarray) -> np.ndarray:
    return _gather(x, indices, int(ctx.attr("batch_dims", 0)), int(ctx.attr("batch_dims", 0)))


@register_kernel("GatherV2")
def _gather_v2(ctx: KernelContext, x: np.ndarray, indices: np.ndarray, axis: np.ndarray) -> np.ndarray:
    return _gather(x, indices, _ints(axis)[0], int(ctx.attr("batch_dims", 0)))


@register_kernel("GatherElements")
def _gather_elements(ctx: KernelContext, x: np.ndarray, index: np.ndarray) -> np.ndarray:
    axis = _axis(int(ctx.attr("dim", 0)), x.ndim)
    idx = index.astype(np.int64)
    idx = np.where(idx < 0, idx + x.shape[axis], idx)
    return np.take_along_axis(x, idx, axis=axis)


@register_kernel("GatherNd")
def _gather_nd(ctx: KernelContext, x: np.ndarray, indices: np.ndarray) -> np.ndarray:
    batch_dims = int(ctx.attr("batch_dims", 0))
    idx = indices.astype(np.int64)
    if batch_dims == 0:
        return _gather_nd_plain(x, idx)
    bshape = idx.shape[:batch_dims]
    xs = x.reshape((-1,) + x.shape[batch_dims:])
    ids = idx.reshape((-1,) + idx.shape[batch_dims:])
    parts = [_gather_nd_plain(xs[b], ids[b]) for b in range(xs.shape[0])]
    return np.stack(parts).reshape(bshape + parts[0].shape)


def _gather_nd_plain(x: np.ndarray, idx: np.ndarray) -> np.ndarray:
    k = idx.shape[-1]
    dims = np.asarray(x.shape[:k], dtype=np.int64)
    idx = np.where(idx < 0, idx + dims, idx)
    flat = idx.reshape(-1, k)
    gathered = x[tuple(flat[:, i] for i in range(k))]
    return gathered.reshape(idx.shape[:-1] + x.shape[k:])


_REDUCERS = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}


@register_kernel("ScatterElements")
def _scatter_elements(ctx: KernelContext, data: np.ndarray, indices: np.ndarray, updates: np.ndarray) -> np.ndarray:
    axis = _axis(int(ctx.attr("axis", 0)), data.ndim)
    reduction = str(ctx.attr("reduction", "none"))
    idx = indices.astype(np.int64)
    idx = np.where(idx < 0, idx + data.shape[axis], idx)
    out = data.copy()
    grids = list(np.indices(idx.shape, sparse=True))
    grids[axis] = idx
    where = tuple(grids)
    if reduction == "none":
        out[where] = updates
    else:
        _REDUCERS[reduction].at(out, where, updates)
    return out


def _scatter_nd(data: np.ndarray, indices: np.ndarray, updates: np.ndarray, reduction: str) -> np.ndarray:
    out = data.copy()
    idx = indices.astype(np.int64)
    k = idx.shape[-1]
    flat = idx.reshape(-1, k)
    upd = updates.reshape((flat.shape[0],) + data.shape[k:])
    where = tuple(flat[:, i] for i in range(k))
    if reduction == "none":
        out[where] = upd
    else:
        _REDUCERS[reduction].at(out, where, upd)
    return out


@register_kernel(["TensorScatterUpdate", "ScatterNdUpdate"])
def _tensor_scatter_update(ctx: KernelContext, x: np.ndarray, indices: np.ndarray, updates: np.ndarray) -> np.ndarray:
    return _scatter_nd(x, indices, updates, str(ctx.attr("reduction", "none")))


@register_kernel("ScatterNdAdd")
def _scatter_nd_add(ctx: KernelContext, x: np.ndarray, indices: np.ndarray, updates: np.ndarray) -> np.ndarray:
    return _scatter_nd(x, indices, updates, "add")


@register_kernel("ScatterNdMax")
def _scatter_nd_max(ctx: KernelContext, x: np.ndarray, indices: np.ndarray, updates: np.ndarray) -> np.ndarray:
    return _scatter_nd(x, indices, updates, "max")


@register_kernel("ScatterNdMin")
def _scatter_nd_min(ctx: KernelContext, x: np.ndarray, indices: np.ndarray, updates: np.ndarray) -> np.ndarray:
    return _scatter_nd(x, indices, updates, "min")


@register_kernel("ScatterNdMul")
def _scatter_nd_mul(ctx: KernelContext, x: np.ndarray, indices: np.ndarray, updates: np.ndarray) -> np.ndarray:
    return _scatter_nd(x, indices, updates, "mul")


@register_kernel("OneHot")
def _one_hot(ctx: KernelContext, x: np.ndarray, depth: np.ndarray, on_value: np.ndarray,
             off_value: np.ndarray) -> np.ndarray:
    d = int(np.asarray(depth).reshape(-1)[0])
    axis = int(ctx.attr("axis", -1))
    idx = x.astype(np.int64)
    idx = np.where(idx < 0, idx + d, idx)
    hot = idx[..., None] == np.arange(d)
    axis = _axis(axis, x.ndim + 1)
    hot = np.moveaxis(hot, -1, axis)
    on = np.asarray(on_value).reshape(-1)[0]
    off = np.asarray(off_value).reshape(-1)[0]
    return np.where(hot, on, off).astype(np.asarray(on_value).dtype)


@register_kernel("Where")
def _where(ctx: KernelContext, x: np.ndarray) -> np.ndarray:
    return np.argwhere(x).astype(ctx.output_dtype(0, np.int64))


@register_kernel("NonZero")
def _non_zero(ctx: KernelContext, x: np.ndarray) -> np.ndarray:
    return np.asarray(np.nonzero(x), dtype=np.int64).reshape(x.ndim, -1)


# ------------------------------------------------------------------------------------ padding
def _pad_pairs(paddings: np.ndarray, rank: int, contiguous: bool) -> list[tuple[int, int]]:
    flat = _ints(paddings)
    if contiguous:
        pairs = [(flat[2 * i], flat[2 * i + 1]) for i in range(len(flat) // 2)]
    else:
        n = len(flat) // 2
        pairs = list(zip(flat[:n], flat[n:], strict=True))
    return pairs + [(0, 0)] * (rank - len(pairs))


def _pad(x: np.ndarray, pairs: list[tuple[int, int]], mode: str, value: object = 0) -> np.ndarray:
    # negative pads crop
    crop = tuple(slice(max(-b, 0), x.shape[i] - max(-a, 0)) for i, (b, a) in enumerate(pairs))
    x = x[crop]
    width = [(max(b, 0), max(a, 0)) for b, a in pairs]
    mode = mode.lower()
    if mode == "constant":
        return np.pad(x, width, mode="constant", constant_values=np.asarray(value).astype(x.dtype))
    if mode in ("reflect", "symmetric", "edge", "wrap"):
        return np.pad(x, width, mode=mode)
    raise ValueError(f"unsupported pad mode {mode!r}")


@register_kernel("Pad")
def _pad_v1(ctx: KernelContext, x: np.ndarray, paddings: np.ndarray) -> np.ndarray:
    return _pad(x, _pad_pairs(paddings, x.ndim, True), "constant")


@register_kernel("PadV2")
def _pad_v2(ctx: KernelContext, x: np.ndarray, paddings: np.ndarray, constant_values: np.ndarray) -> np.ndarray:
    return _pad(x, _pad_pairs(paddings, x.ndim, True), "constant", np.asarray(constant_values).reshape(-1)[0])


@register_kernel("PadV3")
def _pad_v3(ctx: KernelContext, x: np.ndarray, paddings: np.ndarray, constant_values: np.ndarray | None = None,
            axes: np.ndarray | None = None) -> np.ndarray:
    contiguous = bool(ctx.attr("paddings_contiguous", True))
    value = 0 if constant_values is None or constant_values.size == 0 else np.asarray(constant_values).reshape(-1)[0]
    if axes is not None:
        ax = [_axis(a, x.ndim) for a in _ints(axes)]
        given = _pad_pairs(paddings, len(ax), contiguous)
        pairs = [(0, 0)] * x.ndim
        for a, p in zip(ax, given, strict=True):
            pairs[a] = p
    else:
        pairs = _pad_pairs(paddings, x.ndim, contiguous)
    return _pad(x, pairs, str(ctx.attr("mode", "constant")), value)


@register_kernel("MirrorPad")
def _mirror_pad(ctx: KernelContext, x: np.ndarray, paddings: np.ndarray) -> np.ndarray:
    mode = str(ctx.attr("mode")).lower()
    return _pad(x, _pad_pairs(paddings, x.ndim, True), "reflect" if mode == "reflect" else "symmetric")


# ------------------------------------------------------------------------------------ reductions
def _reduce_axes(ctx: KernelContext, x: np.ndarray, axes: list[int]) -> tuple[int, ...] | None:
    """None means "return x unchanged" (empty axes with noop_with_empty_axes)."""
    if not axes:
        if bool(ctx.attr("noop_with_empty_axes", True)):
            return None
        return tuple(range(x.ndim))
    return tuple(sorted({_axis(a, x.ndim) for a in axes}))


def _reduction(fn):  # noqa: ANN001, ANN202 - tiny factory
    def kernel(ctx: KernelContext, x: np.ndarray, axes: np.ndarray | None = None) -> np.ndarray:
        ax = _reduce_axes(ctx, x, _ints(axes) if axes is not None else _ints(ctx.attr("axes", [])))
        if ax is None:
            return x
        keep = bool(ctx.attr("keep_dims", False))
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            out = fn(x, ax, keep)
        return np.asarray(out).astype(x.dtype, copy=False)

    return kernel


def _reduce_max(x: np.ndarray, ax: tuple[int, ...], keep: bool) -> np.ndarray:
    if x.size == 0:
        shape = [1 if i in ax else d for i, d in enumerate(x.shape)] if keep else [d for i, d in enumerate(x.shape) if i not in ax]
        return np.full(shape, -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min, dtype=x.dtype)
    return np.max(x, axis=ax, keepdims=keep)


def _reduce_min(x: np.ndarray, ax: tuple[int, ...], keep: bool) -> np.ndarray:
    if x.size == 0:
        shape = [1 if i in ax else d for i, d in enumerate(x.shape)] if keep else [d for i, d in enumerate(x.shape) if i not in ax]
        return np.full(shape, np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).max, dtype=x.dtype)
    return np.min(x, axis=ax, keepdims=keep)


for _name, _fn in {
    "ReduceSum": lambda x, a, k: np.sum(x, axis=a, keepdims=k),
    "ReduceSumD": lambda x, a, k: np.sum(x, axis=a, keepdims=k),
    "ReduceMean": lambda x, a, k: np.mean(x, axis=a, keepdims=k, dtype=np.float64 if x.dtype.kind != "f" else None),
    "ReduceMeanD": lambda x, a, k: np.mean(x, axis=a, keepdims=k),
    "ReduceMax": _reduce_max,
    "ReduceMaxD": _reduce_max,
    "ReduceMin": _reduce_min,
    "ReduceMinD": _reduce_min,
    "ReduceProd": lambda x, a, k: np.prod(x, axis=a, keepdims=k),
    "ReduceProdD": lambda x, a, k: np.prod(x, axis=a, keepdims=k),
    "ReduceLogSum": lambda x, a, k: np.log(np.sum(x, axis=a, keepdims=k)),
    "ReduceLogSumExp": lambda x, a, k: _logsumexp(x, a, k),
    "SquareSumV1": lambda x, a, k: np.sum(np.square(x), axis=a, keepdims=k),
    "ReduceL1": lambda x, a, k: np.sum(np.abs(x), axis=a, keepdims=k),
    "ReduceL2": lambda x, a, k: np.sqrt(np.sum(np.square(x), axis=a, keepdims=k)),
    "ReduceAll": lambda x, a, k: np.all(x, axis=a, keepdims=k),
    "ReduceAny": lambda x, a, k: np.any(x, axis=a, keepdims=k),
}.items():
    register_kernel(_name)(_reduction(_fn))


def _logsumexp(x: np.ndarray, ax: tuple[int, ...], keep: bool) -> np.ndarray:
    m = np.max(x, axis=ax, keepdims=True) if x.size else np.zeros([1] * x.ndim, x.dtype)
    m = np.where(np.isfinite(m), m, 0)
    out = np.log(np.sum(np.exp(x - m), axis=ax, keepdims=True)) + m
    return out if keep else np.squeeze(out, axis=ax)


@register_kernel(["ArgMaxV2", "ArgMinV2", "ArgMax", "ArgMin"])
def _arg_max(ctx: KernelContext, x: np.ndarray, dimension: np.ndarray | None = None) -> np.ndarray:
    axis = _axis(_ints(dimension)[0] if dimension is not None else int(ctx.attr("dimension", 0)), x.ndim)
    dtype = ir.numpy_dtype(ir.DataType(int(ctx.attr("dtype", int(ir.DataType.DT_INT64)))))
    fn = np.argmin if "Min" in ctx.op_type else np.argmax
    if bool(ctx.attr("select_last_index", False)):
        flipped = np.flip(x, axis=axis)
        return (x.shape[axis] - 1 - fn(flipped, axis=axis)).astype(dtype)
    return fn(x, axis=axis).astype(dtype)


@register_kernel("TopK")
def _top_k(ctx: KernelContext, x: np.ndarray, k: np.ndarray) -> list[np.ndarray]:
    kk = _ints(k)[0]
    axis = _axis(int(ctx.attr("dim", -1)), x.ndim)
    largest = bool(ctx.attr("largest", True))
    keys = x.astype(np.float64) if x.dtype.kind in "iub" else x
    # stable sort keeps the lower index first among equal values
    order = np.argsort(-keys if largest else keys, axis=axis, kind="stable")
    idx = np.take(order, np.arange(kk), axis=axis)
    values = np.take_along_axis(x, idx, axis=axis)
    return [values, idx.astype(ctx.output_dtype(1, np.int32))]


@register_kernel("Cumsum")
def _cumsum(ctx: KernelContext, x: np.ndarray, axis: np.ndarray) -> np.ndarray:
    a = _axis(_ints(axis)[0], x.ndim)
    exclusive = bool(ctx.attr("exclusive", False))
    reverse = bool(ctx.attr("reverse", False))
    y = np.flip(x, axis=a) if reverse else x
    out = np.cumsum(y, axis=a, dtype=x.dtype)
    if exclusive:
        out = np.concatenate([np.zeros_like(np.take(out, [0], axis=a)), np.delete(out, -1, axis=a)], axis=a) \
            if out.shape[a] else out
    return np.flip(out, axis=a) if reverse else out


@register_kernel("Trilu")
def _trilu(ctx: KernelContext, x: np.ndarray, k: np.ndarray | None = None) -> np.ndarray:
    kk = _ints(k)[0] if k is not None else 0
    return np.triu(x, kk) if int(ctx.attr("upper", 1)) else np.tril(x, kk)


@register_kernel("Triu")
def _triu(ctx: KernelContext, x: np.ndarray) -> np.ndarray:
    return np.triu(x, int(ctx.attr("diagonal", 0)))


@register_kernel("Tril")
def _tril(ctx: KernelContext, x: np.ndarray) -> np.ndarray:
    return np.tril(x, int(ctx.attr("diagonal", 0)))
