"""Inference rules of indexing ops: gathers, slices, scatters, where, einsum and resize, plus the
control-flow wrappers (If, PartitionedCall) whose outputs come from their subgraphs."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from gebench.ir import UNKNOWN_DIM, DataType, Format

from ._infer import UNKNOWN_SHAPE, InferContext, normalize_axis, register_infer


def _axis(ctx: InferContext, axis: int, rank: int, what: str = "axis") -> int:
    try:
        return normalize_axis(axis, rank, what)
    except ValueError as exc:
        raise ctx.fail(str(exc)) from None


# ---------------------------------------------------------------------------------------------- gathers
def _gather(ctx: InferContext, axis: int | None) -> None:
    x, ind = ctx.shape("x"), ctx.shape("indices")
    dtype = ctx.dtype("x")
    bd = int(ctx.attr("batch_dims"))
    if x == UNKNOWN_SHAPE or ind == UNKNOWN_SHAPE:
        ctx.set_output(0, dtype, UNKNOWN_SHAPE)
        return
    if axis is None:
        ctx.set_output(0, dtype, (UNKNOWN_DIM,) * (len(x) + len(ind) - 1 - max(bd, 0)))
        return
    ax = _axis(ctx, axis, len(x))
    if bd < 0:
        bd += len(ind)
    if bd > ax:
        raise ctx.fail(f"batch_dims {bd} exceeds axis {ax}")
    out = tuple(x[:ax]) + tuple(ind[bd:]) + tuple(x[ax + 1:])
    ctx.set_output(0, dtype, out)
    xv, iv = ctx.small_value("x"), ctx.small_value("indices")
    if xv is not None and iv is not None and bd == 0:
        ctx.set_value(0, np.take(np.asarray(xv), np.asarray(iv).astype(np.int64), axis=ax))


@register_infer("Gather")
def _gather_v1(ctx: InferContext) -> None:
    _gather(ctx, int(ctx.attr("batch_dims")))


@register_infer("GatherV2")
def _gather_v2(ctx: InferContext) -> None:
    axis = ctx.int_values("axis")
    if axis is not None and len(axis) != 1:
        raise ctx.fail(f"axis must hold one value, got {axis}")
    _gather(ctx, axis[0] if axis is not None else None)


@register_infer("GatherElements")
def _gather_elements(ctx: InferContext) -> None:
    x, ind = ctx.shape("x"), ctx.shape("index")
    if x != UNKNOWN_SHAPE and ind != UNKNOWN_SHAPE and len(x) != len(ind):
        raise ctx.fail(f"index rank {len(ind)} differs from x rank {len(x)}")
    ctx.set_output(0, ctx.dtype("x"), ind)


@register_infer("GatherNd")
def _gather_nd(ctx: InferContext) -> None:
    x, ind = ctx.shape("x"), ctx.shape("indices")
    if x == UNKNOWN_SHAPE or ind == UNKNOWN_SHAPE or not ind or ind[-1] < 0:
        ctx.set_output(0, ctx.dtype("x"), UNKNOWN_SHAPE)
        return
    if ind[-1] > len(x):
        raise ctx.fail(f"indices address {ind[-1]} dims but x has rank {len(x)}")
    ctx.set_output(0, ctx.dtype("x"), tuple(ind[:-1]) + tuple(x[ind[-1]:]))


@register_infer("ScatterElements", "TensorScatterUpdate")
def _scatter(ctx: InferContext) -> None:
    d = ctx.desc(0)
    ctx.set_output(0, d.dtype, d.shape)


@register_infer("Where")
def _where(ctx: InferContext) -> None:
    x = ctx.shape("x")
    ctx.set_output(0, DataType.DT_INT64, UNKNOWN_SHAPE if x == UNKNOWN_SHAPE else (UNKNOWN_DIM, len(x)))


# ---------------------------------------------------------------------------------------------- slices
def _slice_len(dim: int, begin: int | None, end: int | None, stride: int) -> int:
    if dim < 0:
        return UNKNOWN_DIM
    return len(range(*slice(begin, end, stride).indices(dim)))


def _bit(mask: int, i: int) -> bool:
    return bool((mask >> i) & 1)


def strided_slice_shape(ctx: InferContext, x: tuple[int, ...], begin: Sequence[int], end: Sequence[int],
                        strides: Sequence[int], masks: dict[str, int]) -> list[int]:
    """TF StridedSlice output shape (begin/end/ellipsis/new-axis/shrink-axis masks)."""
    n = len(begin)
    if not len(end) == len(strides) == n:
        raise ctx.fail(f"begin {list(begin)}, end {list(end)} and strides {list(strides)} differ in length")
    if any(s == 0 for s in strides):
        raise ctx.fail(f"strides {list(strides)} contain 0")
    bm, em, elm, nam, sam = (masks[k] for k in ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask",
                                                "shrink_axis_mask"))
    has_ellipsis = elm != 0
    real = sum(1 for i in range(n) if not _bit(nam, i) and not _bit(elm, i))
    out: list[int] = []
    dim = 0
    seen_ellipsis = False
    for i in range(n + (0 if has_ellipsis else 1)):
        if i == n or (_bit(elm, i) and not seen_ellipsis):
            # an explicit ellipsis covers the dims no other entry addresses; the implicit one at the end covers
            # whatever is left
            seen_ellipsis = True
            cover = len(x) - real if i < n else len(x) - dim
            out.extend(x[dim:dim + cover])
            dim += cover
        elif _bit(elm, i):
            continue  # only the first ellipsis counts
        elif _bit(nam, i):
            out.append(1)
        else:
            if dim >= len(x):
                raise ctx.fail(f"slice spec {list(begin)} addresses more dims than x {list(x)} has")
            d = x[dim]
            if _bit(sam, i):
                if d >= 0 and not -d <= begin[i] < d:
                    raise ctx.fail(f"shrink index {begin[i]} is out of range for dim {dim} of size {d}")
            else:
                b = None if _bit(bm, i) else begin[i]
                e = None if _bit(em, i) else end[i]
                out.append(_slice_len(d, b, e, strides[i]))
            dim += 1
    return out


def _masks(ctx: InferContext) -> dict[str, int]:
    return {k: int(ctx.attr(k)) for k in ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask",
                                           "shrink_axis_mask")}


def _strided(ctx: InferContext, begin: list[int] | None, end: list[int] | None, strides: list[int] | None) -> None:
    x = ctx.shape("x")
    dtype = ctx.dtype("x")
    masks = _masks(ctx)
    if x == UNKNOWN_SHAPE:
        ctx.set_output(0, dtype, UNKNOWN_SHAPE)
        return
    if begin is None or end is None or strides is None:
        simple = masks["new_axis_mask"] == 0 and masks["shrink_axis_mask"] == 0 and masks["ellipsis_mask"] == 0
        ctx.set_output(0, dtype, (UNKNOWN_DIM,) * len(x) if simple else UNKNOWN_SHAPE)
        return
    out = strided_slice_shape(ctx, x, begin, end, strides, masks)
    ctx.set_output(0, dtype, out)
    v = ctx.small_value("x")
    if v is not None and not any(masks.values()) and len(begin) <= len(x):
        idx = tuple(slice(b, e, s) for b, e, s in zip(begin, end, strides, strict=True))
        ctx.set_value(0, np.asarray(v)[idx])


@register_infer("StridedSlice")
def _strided_slice(ctx: InferContext) -> None:
    _strided(ctx, ctx.int_values("begin"), ctx.int_values("end"), ctx.int_values("strides"))


@register_infer("StridedSliceD")
def _strided_slice_d(ctx: InferContext) -> None:
    _strided(ctx, [int(v) for v in ctx.attr("begin")], [int(v) for v in ctx.attr("end")],
             [int(v) for v in ctx.attr("strides")])


@register_infer("StridedSliceV2")
def _strided_slice_v2(ctx: InferContext) -> None:
    x = ctx.shape("x")
    dtype = ctx.dtype("x")
    begin, end = ctx.int_values("begin"), ctx.int_values("end")
    has_axes, has_strides = ctx.has("axes"), ctx.has("strides")
    axes = ctx.int_values("axes") if has_axes else None
    strides = ctx.int_values("strides") if has_strides else None
    if not has_axes:
        if begin is not None and strides is None and not has_strides:
            strides = [1] * len(begin)
        _strided(ctx, begin, end, strides)
        return
    # ONNX Slice semantics: (begin, end, stride) apply to the listed axes, other dims are kept
    if x == UNKNOWN_SHAPE:
        ctx.set_output(0, dtype, UNKNOWN_SHAPE)
        return
    if axes is None:
        ctx.set_output(0, dtype, (UNKNOWN_DIM,) * len(x))
        return
    norm_axes = [_axis(ctx, a, len(x)) for a in axes]
    out = list(x)
    if begin is None or end is None or (has_strides and strides is None):
        for a in norm_axes:
            out[a] = UNKNOWN_DIM
        ctx.set_output(0, dtype, out)
        return
    strides = strides if strides is not None else [1] * len(axes)
    if not len(begin) == len(end) == len(strides) == len(axes):
        raise ctx.fail(f"begin {begin}, end {end}, axes {axes} and strides {strides} differ in length")
    index: list[slice] = [slice(None)] * len(x)
    for a, b, e, s in zip(norm_axes, begin, end, strides, strict=True):
        if s == 0:
            raise ctx.fail("a stride is 0")
        out[a] = _slice_len(x[a], b, e, s)
        index[a] = slice(b, e, s)
    ctx.set_output(0, dtype, out)
    v = ctx.small_value("x")
    if v is not None:
        ctx.set_value(0, np.asarray(v)[tuple(index)])


def _slice(ctx: InferContext, offsets: list[int] | None, size: list[int] | None) -> None:
    x = ctx.shape("x")
    dtype = ctx.dtype("x")
    if x == UNKNOWN_SHAPE:
        ctx.set_output(0, dtype, UNKNOWN_SHAPE if size is None else [s if s >= 0 else UNKNOWN_DIM for s in size])
        return
    if size is None:
        ctx.set_output(0, dtype, (UNKNOWN_DIM,) * len(x))
        return
    if len(size) != len(x) or (offsets is not None and len(offsets) != len(x)):
        raise ctx.fail(f"offsets {offsets} / size {size} do not have one entry per dim of {list(x)}")
    out = []
    for i, (d, s) in enumerate(zip(x, size, strict=True)):
        off = offsets[i] if offsets is not None else None
        if s == -1:
            out.append(d - off if d >= 0 and off is not None else UNKNOWN_DIM)
        else:
            if d >= 0 and off is not None and off + s > d:
                raise ctx.fail(f"slice [{off}, {off + s}) exceeds dim {i} of size {d}")
            out.append(s)
    ctx.set_output(0, dtype, out)
    v = ctx.small_value("x")
    if v is not None and offsets is not None:
        ctx.set_value(0, np.asarray(v)[tuple(slice(o, o + n) for o, n in zip(offsets, out, strict=True))])


@register_infer("Slice")
def _slice_input(ctx: InferContext) -> None:
    _slice(ctx, ctx.int_values("offsets"), ctx.int_values("size"))


@register_infer("SliceD")
def _slice_attr(ctx: InferContext) -> None:
    _slice(ctx, [int(v) for v in ctx.attr("offsets")], [int(v) for v in ctx.attr("size")])


# ---------------------------------------------------------------------------------------------- einsum
@register_infer("Einsum")
def _einsum(ctx: InferContext) -> None:
    eq = str(ctx.attr("equation")).replace(" ", "")
    idx = ctx.indices("x")
    shapes = [ctx.shape(i) for i in idx]
    dtype = ctx.dtype(idx[0]) if idx else DataType.DT_FLOAT
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise ctx.fail(f"equation {eq!r} has {len(terms)} operands but the node has {len(shapes)} inputs")
    if not re.fullmatch(r"[A-Za-z.,]*(->[A-Za-z.]*)?", eq):
        raise ctx.fail(f"equation {eq!r} is not an einsum equation")
    if any(s == UNKNOWN_SHAPE for s in shapes):
        ctx.set_output(0, dtype, UNKNOWN_SHAPE)
        return
    sizes: dict[str, int] = {}
    ell: list[tuple[int, ...]] = []
    for term, shape in zip(terms, shapes, strict=True):
        letters = term.replace("...", "")
        n_ell = len(shape) - len(letters)
        if ("..." in term and n_ell < 0) or ("..." not in term and n_ell != 0):
            raise ctx.fail(f"operand {term!r} does not fit shape {list(shape)}")
        pos = term.find("...")
        dims = list(shape)
        if pos >= 0:
            ell.append(tuple(dims[pos:pos + n_ell]))
            dims = dims[:pos] + dims[pos + n_ell:]
        for ch, d in zip(letters, dims, strict=True):
            prev = sizes.get(ch)
            if prev is not None and prev >= 0 and d >= 0 and prev != d and 1 not in (prev, d):
                raise ctx.fail(f"label {ch!r} has sizes {prev} and {d}")
            if prev is None or prev in (1, UNKNOWN_DIM):
                sizes[ch] = d
    from ._infer import broadcast_shapes

    ell_shape = broadcast_shapes(*ell) if ell else ()
    if not arrow:
        counts = {ch: lhs.count(ch) for ch in sizes}
        rhs = ("..." if ell else "") + "".join(sorted(ch for ch, c in counts.items() if c == 1))
    out: list[int] = []
    i = 0
    while i < len(rhs):
        if rhs.startswith("...", i):
            out.extend(ell_shape)
            i += 3
            continue
        if rhs[i] not in sizes:
            raise ctx.fail(f"output label {rhs[i]!r} does not appear in the operands")
        out.append(sizes[rhs[i]])
        i += 1
    ctx.set_output(0, dtype, out)


# ---------------------------------------------------------------------------------------------- resize
@register_infer("Resize")
def _resize(ctx: InferContext) -> None:
    x = ctx.shape("x")
    dtype = ctx.dtype("x")
    sizes = ctx.int_values("sizes") if ctx.has("sizes") else None
    scales = ctx.value("scales") if ctx.has("scales") else None
    if sizes:
        ctx.set_output(0, dtype, sizes)
        return
    if x == UNKNOWN_SHAPE:
        ctx.set_output(0, dtype, UNKNOWN_SHAPE)
        return
    if scales is not None and np.asarray(scales).size:
        sc = [float(s) for s in np.asarray(scales).ravel()]
        if len(sc) != len(x):
            raise ctx.fail(f"scales {sc} do not have one entry per dim of {list(x)}")
        ctx.set_output(0, dtype, [int(np.floor(d * s)) if d >= 0 else UNKNOWN_DIM for d, s in zip(x, sc, strict=True)])
        return
    ctx.set_output(0, dtype, (UNKNOWN_DIM,) * len(x))


@register_infer("ResizeNearestNeighborV2")
def _resize_nn_v2(ctx: InferContext) -> None:
    d = ctx.desc("x")
    x = d.shape
    if x == UNKNOWN_SHAPE:
        ctx.set_output(0, d.dtype, (UNKNOWN_DIM,) * 4)
        return
    if len(x) != 4:
        raise ctx.fail(f"x must be 4-D, got shape {list(x)}")
    # the spatial dims are H, W of x's layout: NCHW when the desc says so, otherwise TF's NHWC
    nchw = Format.FORMAT_NCHW in (d.origin_format, d.format)
    hw = (2, 3) if nchw else (1, 2)
    size = ctx.int_values("size")
    out = list(x)
    if size is not None and len(size) != 2:
        raise ctx.fail(f"size must hold 2 values (new height, width), got {size}")
    for i, ax in enumerate(hw):
        out[ax] = size[i] if size is not None else UNKNOWN_DIM
    ctx.set_output(0, d.dtype, out)


# ---------------------------------------------------------------------------------------------- control flow
def _subgraph_outputs(ctx: InferContext, sub_name: str, first_data_input: int) -> list[tuple[DataType, tuple]] | None:
    root = ctx.graph
    while root.parent_graph is not None:
        root = root.parent_graph
    sub = root.subgraphs.get(sub_name)
    if sub is None:
        return None
    from ._infer import infer_graph

    for data in sub.nodes_of_type("Data"):
        # _parent_node_index names the parent's input anchor; without it, Data index i is the i-th data input
        if "_parent_node_index" in data.attrs:
            port: int | None = int(data.attrs["_parent_node_index"])
        elif "index" in data.attrs:
            port = first_data_input + int(data.attrs["index"])
        else:
            port = None
        if port is not None and port < len(ctx.node.inputs):
            src = ctx.node.inputs[port]
            sub.touch(data)
            for desc in (data.outputs[0], *data.inputs[:1]):
                desc.dtype, desc.shape, desc.origin_shape = src.dtype, src.shape, src.shape
    infer_graph(sub, allow_unknown_ops=ctx.allow_unknown_ops)
    outs = sub.nodes_of_type("NetOutput")
    if not outs:
        return None
    return [(d.dtype, d.shape) for d in outs[0].inputs]


@register_infer("PartitionedCall")
def _partitioned_call(ctx: InferContext) -> None:
    if not ctx.node.subgraph_names:
        raise ctx.fail("it has no subgraph to infer from")
    outs = _subgraph_outputs(ctx, ctx.node.subgraph_names[0], 0)
    if outs is None:
        raise ctx.fail(f"subgraph {ctx.node.subgraph_names[0]!r} is missing or has no NetOutput")
    for i, (dtype, shape) in enumerate(outs[:ctx.num_outputs]):
        ctx.set_output(i, dtype, shape)


@register_infer("If")
def _if(ctx: InferContext) -> None:
    if len(ctx.node.subgraph_names) < 2:
        raise ctx.fail("it needs then_branch and else_branch subgraphs")
    branches = [_subgraph_outputs(ctx, name, 1) for name in ctx.node.subgraph_names[:2]]
    if any(b is None for b in branches):
        raise ctx.fail("a branch subgraph is missing or has no NetOutput")
    then_o, else_o = branches  # type: ignore[misc]
    for i in range(ctx.num_outputs):
        if i >= len(then_o) or i >= len(else_o):
            raise ctx.fail(f"output {i} is not produced by both branches")
        (dt, s1), (_, s2) = then_o[i], else_o[i]
        shape = s1 if s1 == s2 else (
            tuple(a if a == b else UNKNOWN_DIM for a, b in zip(s1, s2, strict=True)) if len(s1) == len(s2)
            else UNKNOWN_SHAPE)
        ctx.set_output(i, dt, shape)
