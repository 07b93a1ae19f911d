"""Inference rules of shape and layout ops: reshape, (un)squeeze, transpose, concat, split, tile, broadcast,
shape, fill, pad, reductions, arg/top-k, range and one-hot."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from gebench.ir import UNKNOWN_DIM, DataType

from ._infer import (
    UNKNOWN_SHAPE,
    InferContext,
    broadcast_shapes,
    known,
    normalize_axis,
    prod,
    register_infer,
)


def _set_reshaped(ctx: InferContext, dtype: DataType, out: Sequence[int]) -> None:
    """Set output 0 to ``out`` and, when ``x``'s value is known and ``out`` is fully known, carry the value
    forward reshaped (these ops only reinterpret the shape)."""
    ctx.set_output(0, dtype, out)
    v = ctx.small_value("x")
    if v is not None and known(out):
        ctx.set_value(0, np.asarray(v).reshape(out))


def _axis(ctx: InferContext, axis: int, rank: int, what: str = "axis") -> int:
    try:
        return normalize_axis(axis, rank, what)
    except ValueError as exc:
        raise ctx.fail(str(exc)) from None


# ---------------------------------------------------------------------------------------------- reshape family
def reshape_target(ctx: InferContext, x: tuple[int, ...], target: Sequence[int], *, allowzero: bool) -> tuple[int, ...]:
    """Resolve a Reshape target: ``0`` copies the input dim (unless ``allowzero``), one ``-1`` is inferred."""
    target = [int(t) for t in target]
    if target.count(-1) > 1:
        raise ctx.fail(f"shape {target} has more than one -1")
    if any(t < -1 for t in target):
        raise ctx.fail(f"shape {target} has a negative dim other than -1")
    out: list[int] = []
    for i, t in enumerate(target):
        if t == 0 and not allowzero:
            if x == UNKNOWN_SHAPE:
                out.append(UNKNOWN_DIM)
            elif i < len(x):
                out.append(x[i])
            else:
                raise ctx.fail(f"shape value 0 at position {i} copies a dim x {list(x)} does not have")
        else:
            out.append(t)
    total = prod(x) if x != UNKNOWN_SHAPE else UNKNOWN_DIM
    if -1 in target and x != UNKNOWN_SHAPE:
        pos = target.index(-1)
        # dims copied by 0 appear on both sides and cancel, so an unknown batch dim copied through does not
        # stop the -1 from being resolved
        copied = {i for i, t in enumerate(target) if t == 0 and not allowzero}
        have = prod(d for i, d in enumerate(x) if i not in copied)
        rest = prod(d for i, d in enumerate(out) if i != pos and i not in copied)
        if have >= 0 and rest >= 0:
            if rest == 0 or have % rest:
                raise ctx.fail(f"cannot reshape {list(x)} into {target}")
            out[pos] = have // rest
    elif total >= 0 and known(out) and total != prod(out):
        raise ctx.fail(f"cannot reshape {list(x)} ({total} elements) into {out} ({prod(out)} elements)")
    return tuple(out)


@register_infer("Reshape")
def _reshape(ctx: InferContext) -> None:
    x = ctx.shape("x")
    target = ctx.int_values("shape")
    dtype = ctx.dtype("x")
    axis, num_axes = int(ctx.attr("axis")), int(ctx.attr("num_axes"))
    if target is None:
        s = ctx.shape("shape")
        n = s[0] if len(s) == 1 and s[0] >= 0 else None
        if n is not None and axis == 0 and num_axes == -1:
            ctx.set_output(0, dtype, (UNKNOWN_DIM,) * n)
        else:
            ctx.set_output(0, dtype, UNKNOWN_SHAPE)
        return
    allowzero = bool(ctx.node.attrs.get("allowzero", 0))
    if axis == 0 and num_axes == -1:
        out = reshape_target(ctx, x, target, allowzero=allowzero)
    else:
        # Caffe-style partial reshape: only dims [axis, axis + num_axes) are replaced
        if x == UNKNOWN_SHAPE:
            ctx.set_output(0, dtype, UNKNOWN_SHAPE)
            return
        start = axis if axis >= 0 else axis + len(x) + 1
        end = len(x) if num_axes == -1 else start + num_axes
        mid = reshape_target(ctx, tuple(x[start:end]), target, allowzero=allowzero)
        out = tuple(x[:start]) + mid + tuple(x[end:])
    _set_reshaped(ctx, dtype, out)


@register_infer("Flatten")
def _flatten(ctx: InferContext) -> None:
    x = ctx.shape("x")
    if x == UNKNOWN_SHAPE:
        ctx.set_output(0, ctx.dtype("x"), (UNKNOWN_DIM, UNKNOWN_DIM))
        return
    axis = int(ctx.attr("axis"))
    axis = axis + len(x) if axis < 0 else axis
    if not 0 <= axis <= len(x):
        raise ctx.fail(f"axis {ctx.attr('axis')} is out of range for rank {len(x)}")
    ctx.set_output(0, ctx.dtype("x"), (prod(x[:axis]), prod(x[axis:])))


def _squeeze(ctx: InferContext, axes: list[int] | None) -> None:
    x = ctx.shape("x")
    dtype = ctx.dtype("x")
    if x == UNKNOWN_SHAPE or axes is None:
        ctx.set_output(0, dtype, UNKNOWN_SHAPE)
        return
    if not axes:
        if any(d < 0 for d in x):
            ctx.set_output(0, dtype, UNKNOWN_SHAPE)  # which unknown dims are 1 cannot be told
            return
        out = tuple(d for d in x if d != 1)
    else:
        drop = {_axis(ctx, a, len(x)) for a in axes}
        for a in drop:
            if x[a] not in (1, UNKNOWN_DIM):
                raise ctx.fail(f"cannot squeeze axis {a} of shape {list(x)}: its size is {x[a]}, not 1")
        out = tuple(d for i, d in enumerate(x) if i not in drop)
    _set_reshaped(ctx, dtype, out)


@register_infer("Squeeze")
def _squeeze_attr(ctx: InferContext) -> None:
    _squeeze(ctx, [int(a) for a in ctx.attr("axis")])


@register_infer("SqueezeV3")
def _squeeze_v3(ctx: InferContext) -> None:
    _squeeze(ctx, ctx.int_values("axes") if ctx.has("axes") else [])


def _unsqueeze(ctx: InferContext, axes: list[int] | None) -> None:
    x = ctx.shape("x")
    dtype = ctx.dtype("x")
    if x == UNKNOWN_SHAPE:
        ctx.set_output(0, dtype, UNKNOWN_SHAPE)
        return
    if axes is None:
        n = ctx.shape("axes")
        if len(n) == 1 and n[0] >= 0:
            ctx.set_output(0, dtype, (UNKNOWN_DIM,) * (len(x) + n[0]))
        else:
            ctx.set_output(0, dtype, UNKNOWN_SHAPE)
        return
    rank = len(x) + len(axes)
    pos = sorted(_axis(ctx, a, rank) for a in axes)
    if len(set(pos)) != len(pos):
        raise ctx.fail(f"axes {axes} repeat an axis")
    out: list[int] = []
    it = iter(x)
    for i in range(rank):
        out.append(1 if i in pos else next(it))
    _set_reshaped(ctx, dtype, out)


@register_infer("Unsqueeze")
def _unsqueeze_attr(ctx: InferContext) -> None:
    _unsqueeze(ctx, [int(a) for a in ctx.attr("axes")])


@register_infer("UnsqueezeV3")
def _unsqueeze_v3(ctx: InferContext) -> None:
    _unsqueeze(ctx, ctx.int_values("axes"))


@register_infer("ExpandDims")
def _expand_dims(ctx: InferContext) -> None:
    axis = ctx.int_values("axis")
    if axis is not None and len(axis) != 1:
        raise ctx.fail(f"axis must hold one value, got {axis}")
    _unsqueeze(ctx, axis)


def _transpose(ctx: InferContext, perm: list[int] | None) -> None:
    x = ctx.shape("x")
    dtype = ctx.dtype("x")
    if x == UNKNOWN_SHAPE:
        ctx.set_output(0, dtype, UNKNOWN_SHAPE)
        return
    if perm is None:
        ctx.set_output(0, dtype, (UNKNOWN_DIM,) * len(x))
        return
    if not perm:
        perm = list(range(len(x) - 1, -1, -1))
    if sorted(_axis(ctx, p, len(x), "perm entry") for p in perm) != list(range(len(x))):
        raise ctx.fail(f"perm {perm} is not a permutation of the {len(x)} dims of {list(x)}")
    out = [x[p] for p in perm]
    ctx.set_output(0, dtype, out)
    v = ctx.small_value("x")
    if v is not None:
        ctx.set_value(0, np.transpose(np.asarray(v), [p % len(x) for p in perm]))


@register_infer("Transpose")
def _transpose_input(ctx: InferContext) -> None:
    _transpose(ctx, ctx.int_values("perm"))


@register_infer("TransposeD")
def _transpose_attr(ctx: InferContext) -> None:
    _transpose(ctx, [int(p) for p in ctx.attr("perm")])


# ---------------------------------------------------------------------------------------------- concat / split
def _concat(ctx: InferContext, axis: int | None) -> None:
    idx = ctx.indices("x")
    if not idx:
        raise ctx.fail("dynamic input x has no instances")
    shapes = [ctx.shape(i) for i in idx]
    dtype = ctx.dtype(idx[0])
    ranked = [s for s in shapes if s != UNKNOWN_SHAPE]
    if not ranked:
        ctx.set_output(0, dtype, UNKNOWN_SHAPE)
        return
    rank = len(ranked[0])
    if any(len(s) != rank for s in ranked):
        raise ctx.fail(f"inputs have different ranks: {[list(s) for s in shapes]}")
    if axis is None:
        ctx.set_output(0, dtype, (UNKNOWN_DIM,) * rank)
        return
    if rank == 0:
        raise ctx.fail("cannot concatenate scalars")
    ax = _axis(ctx, axis, rank, "concat_dim")
    out: list[int] = []
    for d in range(rank):
        col = [s[d] for s in ranked]
        if d == ax:
            out.append(UNKNOWN_DIM if len(ranked) < len(shapes) or any(c < 0 for c in col) else sum(col))
        else:
            fixed = {c for c in col if c >= 0}
            if len(fixed) > 1:
                raise ctx.fail(f"inputs differ in dim {d} (not the concat dim {ax}): {[list(s) for s in shapes]}")
            out.append(fixed.pop() if fixed else UNKNOWN_DIM)
    ctx.set_output(0, dtype, out)
    vals = [ctx.small_value(i) for i in idx]
    if all(v is not None for v in vals):
        ctx.set_value(0, np.concatenate([np.asarray(v) for v in vals], axis=ax))


def _scalar(ctx: InferContext, name: str) -> int | None:
    v = ctx.int_values(name)
    if v is None:
        return None
    if len(v) != 1:
        raise ctx.fail(f"input {name} must hold one value, got {v}")
    return v[0]


@register_infer("Concat", "ConcatV2")
def _concat_input(ctx: InferContext) -> None:
    _concat(ctx, _scalar(ctx, "concat_dim"))


@register_infer("ConcatD", "ConcatV2D")
def _concat_attr(ctx: InferContext) -> None:
    _concat(ctx, int(ctx.attr("concat_dim")))


def _split(ctx: InferContext, axis: int | None, sizes: list[int] | None) -> None:
    x = ctx.shape("x")
    dtype = ctx.dtype("x")
    n = ctx.num_outputs
    if x == UNKNOWN_SHAPE:
        for i in range(n):
            ctx.set_output(i, dtype, UNKNOWN_SHAPE)
        return
    if axis is None:
        for i in range(n):
            ctx.set_output(i, dtype, (UNKNOWN_DIM,) * len(x))
        return
    ax = _axis(ctx, axis, len(x), "split_dim")
    dim = x[ax]
    if sizes is None:
        num = int(ctx.attr("num_split"))
        if num != n:
            raise ctx.fail(f"num_split={num} but the node has {n} outputs")
        if dim >= 0 and (num <= 0 or dim % num):
            raise ctx.fail(f"dim {ax} of size {dim} does not split into {num} equal parts")
        sizes = [dim // num if dim >= 0 else UNKNOWN_DIM] * num
    else:
        if len(sizes) != n:
            raise ctx.fail(f"size_splits has {len(sizes)} values but the node has {n} outputs")
        if sizes.count(-1) > 1:
            raise ctx.fail(f"size_splits {sizes} has more than one -1")
        if -1 in sizes and dim >= 0:
            sizes = list(sizes)
            sizes[sizes.index(-1)] = dim - sum(s for s in sizes if s != -1)
        if dim >= 0 and -1 not in sizes and sum(sizes) != dim:
            raise ctx.fail(f"size_splits {sizes} do not add up to dim {ax} of size {dim}")
    for i, size in enumerate(sizes):
        out = list(x)
        out[ax] = size
        ctx.set_output(i, dtype, out)


@register_infer("Split")
def _split_input(ctx: InferContext) -> None:
    _split(ctx, _scalar(ctx, "split_dim"), None)


@register_infer("SplitD")
def _split_attr(ctx: InferContext) -> None:
    _split(ctx, int(ctx.attr("split_dim")), None)


@register_infer("SplitV")
def _split_v(ctx: InferContext) -> None:
    sizes = ctx.int_values("size_splits")
    axis = _scalar(ctx, "split_dim")
    if sizes is None and axis is not None:
        x = ctx.shape("x")
        for i in range(ctx.num_outputs):
            out = list(x)
            if x != UNKNOWN_SHAPE:
                out[_axis(ctx, axis, len(x), "split_dim")] = UNKNOWN_DIM
            ctx.set_output(i, ctx.dtype("x"), out)
        return
    _split(ctx, axis, sizes)


# ---------------------------------------------------------------------------------------------- tile / broadcast
def _tile(ctx: InferContext, multiples: list[int] | None) -> None:
    x = ctx.shape("x")
    dtype = ctx.dtype("x")
    if multiples is None:
        m = ctx.shape("multiples")
        rank = m[0] if len(m) == 1 and m[0] >= 0 else (len(x) if x != UNKNOWN_SHAPE else None)
        ctx.set_output(0, dtype, UNKNOWN_SHAPE if rank is None else (UNKNOWN_DIM,) * rank)
        return
    if x == UNKNOWN_SHAPE:
        ctx.set_output(0, dtype, (UNKNOWN_DIM,) * len(multiples))
        return
    if len(multiples) < len(x):
        raise ctx.fail(f"multiples {multiples} has fewer entries than x has dims {list(x)}")
    full = (1,) * (len(multiples) - len(x)) + tuple(x)
    ctx.set_output(0, dtype, [d * m if d >= 0 else UNKNOWN_DIM for d, m in zip(full, multiples, strict=True)])


@register_infer("Tile")
def _tile_input(ctx: InferContext) -> None:
    _tile(ctx, ctx.int_values("multiples"))


@register_infer("TileD")
def _tile_attr(ctx: InferContext) -> None:
    _tile(ctx, [int(m) for m in ctx.attr("multiples")])


@register_infer("Expand", "BroadcastTo")
def _expand(ctx: InferContext) -> None:
    x = ctx.shape("x")
    dtype = ctx.dtype("x")
    target = ctx.int_values("shape")
    if target is None:
        s = ctx.shape("shape")
        if len(s) == 1 and s[0] >= 0 and x != UNKNOWN_SHAPE:
            rank = max(s[0], len(x))
            ctx.set_output(0, dtype, (UNKNOWN_DIM,) * rank)
        else:
            ctx.set_output(0, dtype, UNKNOWN_SHAPE)
        return
    # ONNX Expand: a target dim of 1 keeps the input dim (bidirectional broadcast)
    try:
        ctx.set_output(0, dtype, broadcast_shapes(x, target))
    except ValueError as exc:
        raise ctx.fail(str(exc)) from None


@register_infer("Shape")
def _shape(ctx: InferContext) -> None:
    x = ctx.shape("x")
    dtype = DataType(int(ctx.attr("dtype")))
    if dtype not in (DataType.DT_INT32, DataType.DT_INT64):
        raise ctx.fail(f"dtype must be DT_INT32 or DT_INT64, got {dtype.name}")
    if x == UNKNOWN_SHAPE:
        ctx.set_output(0, dtype, (UNKNOWN_DIM,))
        return
    ctx.set_output(0, dtype, (len(x),))
    if known(x):
        ctx.set_value(0, np.asarray(x, dtype=np.int32 if dtype == DataType.DT_INT32 else np.int64))


@register_infer("Fill")
def _fill(ctx: InferContext) -> None:
    dims = ctx.int_values("dims")
    dtype = ctx.dtype("value")
    if dims is None:
        s = ctx.shape("dims")
        ctx.set_output(0, dtype, (UNKNOWN_DIM,) * s[0] if len(s) == 1 and s[0] >= 0 else UNKNOWN_SHAPE)
        return
    ctx.set_output(0, dtype, dims)
    v = ctx.value("value")
    if v is not None and np.asarray(v).size == 1 and math.prod(dims) <= 4096:
        ctx.set_value(0, np.full(dims, np.asarray(v).ravel()[0]))


# ---------------------------------------------------------------------------------------------- pad
def _pad_pairs(ctx: InferContext, pads: list[int], rank: int, *, contiguous: bool) -> list[tuple[int, int]]:
    if len(pads) % 2:
        raise ctx.fail(f"paddings {pads} has an odd number of values")
    k = len(pads) // 2
    if k > rank:
        raise ctx.fail(f"paddings {pads} pads {k} dims but x has rank {rank}")
    if contiguous:
        pairs = [(pads[2 * i], pads[2 * i + 1]) for i in range(k)]
        if k < rank:
            # short contiguous paddings pad the trailing dims, last dim first (torch.nn.functional.pad order)
            pairs = [(0, 0)] * (rank - k) + pairs[::-1]
    else:
        pairs = [(pads[i], pads[k + i]) for i in range(k)]
        pairs = [(0, 0)] * (rank - k) + pairs
    return pairs


def _pad(ctx: InferContext, *, contiguous: bool) -> None:
    x = ctx.shape("x")
    dtype = ctx.dtype("x")
    pads = ctx.int_values("paddings")
    if x == UNKNOWN_SHAPE:
        ctx.set_output(0, dtype, UNKNOWN_SHAPE)
        return
    if pads is None:
        ctx.set_output(0, dtype, (UNKNOWN_DIM,) * len(x))
        return
    pairs = _pad_pairs(ctx, pads, len(x), contiguous=contiguous)
    out = [d + b + a if d >= 0 else UNKNOWN_DIM for d, (b, a) in zip(x, pairs, strict=True)]
    if any(d < -1 for d in out):
        raise ctx.fail(f"paddings {pads} crop more than x {list(x)} holds")
    ctx.set_output(0, dtype, out)


@register_infer("Pad", "PadV2", "MirrorPad")
def _pad_tf(ctx: InferContext) -> None:
    _pad(ctx, contiguous=True)


@register_infer("PadV3")
def _pad_v3(ctx: InferContext) -> None:
    _pad(ctx, contiguous=bool(ctx.attr("paddings_contiguous")))


# ---------------------------------------------------------------------------------------------- reductions
def _reduce(ctx: InferContext, axes: list[int] | None, keep: bool, noop_empty: bool) -> None:
    x = ctx.shape("x")
    dtype = ctx.dtype("x")
    if x == UNKNOWN_SHAPE:
        ctx.set_output(0, dtype, UNKNOWN_SHAPE)
        return
    if axes is None:
        if keep:
            ctx.set_output(0, dtype, (UNKNOWN_DIM,) * len(x))
        else:
            n = ctx.shape("axes")
            known_n = len(n) == 1 and n[0] >= 0
            ctx.set_output(0, dtype, (UNKNOWN_DIM,) * (len(x) - n[0]) if known_n else UNKNOWN_SHAPE)
        return
    if not axes:
        if noop_empty:
            ctx.set_output(0, dtype, x)
            return
        axes = list(range(len(x)))
    red = {_axis(ctx, a, max(len(x), 1)) for a in axes} if x else set()
    out = [1 if i in red else d for i, d in enumerate(x)] if keep else [d for i, d in enumerate(x) if i not in red]
    ctx.set_output(0, dtype, out)


@register_infer("ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd")
def _reduce_input(ctx: InferContext) -> None:
    _reduce(ctx, ctx.int_values("axes"), bool(ctx.attr("keep_dims")), bool(ctx.attr("noop_with_empty_axes")))


@register_infer("ReduceSumD")
def _reduce_attr(ctx: InferContext) -> None:
    # the legacy D form reduces every dim when axes is empty
    _reduce(ctx, [int(a) for a in ctx.attr("axes")], bool(ctx.attr("keep_dims")), False)


@register_infer("ArgMaxV2")
def _argmax(ctx: InferContext) -> None:
    x = ctx.shape("x")
    dtype = DataType(ctx.attr("dtype"))
    dim = _scalar(ctx, "dimension")
    if x == UNKNOWN_SHAPE:
        ctx.set_output(0, dtype, UNKNOWN_SHAPE)
        return
    if dim is None:
        ctx.set_output(0, dtype, (UNKNOWN_DIM,) * max(len(x) - 1, 0))
        return
    ax = _axis(ctx, dim, len(x), "dimension")
    ctx.set_output(0, dtype, [d for i, d in enumerate(x) if i != ax])


@register_infer("TopK")
def _topk(ctx: InferContext) -> None:
    x = ctx.shape("x")
    k = _scalar(ctx, "k")
    if x == UNKNOWN_SHAPE:
        out: tuple[int, ...] | list[int] = UNKNOWN_SHAPE
    else:
        ax = _axis(ctx, int(ctx.attr("dim")), len(x), "dim")
        if k is not None and x[ax] >= 0 and k > x[ax]:
            raise ctx.fail(f"k={k} exceeds dim {ax} of size {x[ax]}")
        out = list(x)
        out[ax] = k if k is not None else UNKNOWN_DIM
    ctx.set_output("values", ctx.dtype("x"), out)
    ctx.set_output("indices", DataType.DT_INT32, out)


@register_infer("Range")
def _range(ctx: InferContext) -> None:
    start, limit, delta = (ctx.value(n) for n in ("start", "limit", "delta"))
    dtype = ctx.dtype("start")
    if start is None or limit is None or delta is None:
        ctx.set_output(0, dtype, (UNKNOWN_DIM,))
        return
    s, lim, d = (np.asarray(v).ravel()[0].item() for v in (start, limit, delta))
    if d == 0:
        raise ctx.fail("delta is 0")
    if ctx.attr("is_closed", False):
        n = max(int(math.floor((lim - s) / d)) + 1, 0)
    else:
        n = max(int(math.ceil((lim - s) / d)), 0)
    ctx.set_output(0, dtype, (n,))
    if n <= 4096 and np.asarray(start).dtype.kind in "iu":
        ctx.set_value(0, np.asarray(s + d * np.arange(n), dtype=np.asarray(start).dtype))


@register_infer("OneHot")
def _one_hot(ctx: InferContext) -> None:
    x = ctx.shape("x")
    depth = _scalar(ctx, "depth")
    dtype = ctx.dtype("on_value")
    if x == UNKNOWN_SHAPE:
        ctx.set_output(0, dtype, UNKNOWN_SHAPE)
        return
    ax = _axis(ctx, int(ctx.attr("axis")), len(x) + 1)
    out = list(x)
    out.insert(ax, depth if depth is not None else UNKNOWN_DIM)
    ctx.set_output(0, dtype, out)
