"""Inference of shape/layout, reduction, indexing and resize ops, checked against numpy on real arrays."""

from __future__ import annotations

import numpy as np
import pytest

from gebench import ir, ops
from gebench.ir import DataType, Format, TensorDesc, TensorValue

try:  # tests/ is a package in some checkouts and a plain directory in others
    from tests.test_ops_support import Builder, infer_one
except ModuleNotFoundError:
    from test_ops_support import Builder, infer_one  # type: ignore[no-redef]

I64 = np.int64
I32 = np.int32


def zeros(shape):
    return np.zeros(shape, dtype=np.float32)


@pytest.mark.parametrize(("x", "target"), [((2, 3, 4), [4, -1]), ((2, 3, 4), [0, -1]), ((2, 3, 4), [0, 0, 2, 2]),
                                           ((6,), [1, 2, 3]), ((2, 3, 4), [-1])])
def test_reshape_with_const_shape(x, target):
    n = infer_one("Reshape", x, np.array(target, dtype=I64))
    resolved = [x[i] if t == 0 else t for i, t in enumerate(target)]  # ONNX rule: 0 copies the input dim
    assert n.outputs[0].shape == zeros(x).reshape(resolved).shape


def test_reshape_errors_and_non_constant_shape():
    with pytest.raises(ops.InferenceError, match=r"cannot reshape \[2, 3\]"):
        infer_one("Reshape", (2, 3), np.array([4, -1], dtype=I64))
    with pytest.raises(ops.InferenceError, match="more than one -1"):
        infer_one("Reshape", (2, 3), np.array([-1, -1], dtype=I64))
    n = infer_one("Reshape", (2, 3), {"shape": (3,), "dtype": DataType.DT_INT64})
    assert n.outputs[0].shape == (-1, -1, -1)
    assert infer_one("Reshape", (-1, 3, 4), np.array([0, -1], dtype=I64)).outputs[0].shape == (-1, 12)
    partial = infer_one("Reshape", (2, 12, 5), np.array([3, 4], dtype=I64), attrs={"axis": 1, "num_axes": 1})
    assert partial.outputs[0].shape == (2, 3, 4, 5)


def test_shape_gather_concat_chain_gives_static_reshape():
    # the pattern torch.onnx exports for x.view(x.size(0), -1, 8)
    b = Builder()
    x = b.data((4, 6, 8))
    shape = b.op("Shape", x, attrs={"dtype": int(DataType.DT_INT64)})
    batch = b.op("GatherV2", (shape, 0), b.const(np.array(0, dtype=I64)), b.const(np.array(0, dtype=I32)))
    unsq = b.op("UnsqueezeV3", (batch, 0), b.const(np.array([0], dtype=I64)))
    cat = b.op("ConcatV2", (unsq, 0), b.const(np.array([-1, 8], dtype=I64)), b.const(np.array(0, dtype=I32)),
               dyn_in={"x": 2})
    r = b.op("Reshape", x, (cat, 0))
    b.infer()
    assert shape.outputs[0].shape == (3,) and batch.outputs[0].shape == ()
    assert r.outputs[0].shape == zeros((4, 6, 8)).reshape(4, -1, 8).shape


def test_flatten_squeeze_unsqueeze():
    assert infer_one("Flatten", (2, 3, 4, 5), attrs={"axis": 2}).outputs[0].shape == (6, 20)
    assert infer_one("Flatten", (2, 3, 4)).outputs[0].shape == (2, 12)
    assert infer_one("Squeeze", (1, 3, 1, 2)).outputs[0].shape == np.squeeze(zeros((1, 3, 1, 2))).shape
    assert infer_one("Squeeze", (1, 3, 1, 2), attrs={"axis": [-2]}).outputs[0].shape == (1, 3, 2)
    assert infer_one("SqueezeV3", (1, 3, 1), np.array([0], dtype=I64)).outputs[0].shape == (3, 1)
    assert infer_one("SqueezeV3", (1, 3, 1), None).outputs[0].shape == (3,)
    with pytest.raises(ops.InferenceError, match="its size is 3, not 1"):
        infer_one("Squeeze", (1, 3), attrs={"axis": [1]})
    assert infer_one("Squeeze", (-1, 3)).outputs[0].shape == (-2,)
    assert infer_one("Unsqueeze", (3, 4), attrs={"axes": [0, 3]}).outputs[0].shape == (1, 3, 4, 1)
    expected = np.expand_dims(zeros((3, 4)), (1, -1)).shape
    assert infer_one("UnsqueezeV3", (3, 4), np.array([1, -1], dtype=I64)).outputs[0].shape == expected
    assert infer_one("ExpandDims", (3, 4), np.array(-1, dtype=I32)).outputs[0].shape == (3, 4, 1)


@pytest.mark.parametrize("perm", [[0, 2, 3, 1], [3, 2, 1, 0], [1, 0, 2, 3]])
def test_transpose(perm):
    x = (2, 3, 4, 5)
    expected = np.transpose(zeros(x), perm).shape
    assert infer_one("Transpose", x, np.array(perm, dtype=I32)).outputs[0].shape == expected
    assert infer_one("TransposeD", x, attrs={"perm": perm}).outputs[0].shape == expected


def test_transpose_non_constant_perm_and_bad_perm():
    assert infer_one("Transpose", (2, 3), {"shape": (2,), "dtype": DataType.DT_INT32}).outputs[0].shape == (-1, -1)
    with pytest.raises(ops.InferenceError, match="not a permutation"):
        infer_one("Transpose", (2, 3), np.array([0, 0], dtype=I32))


def test_concat_family():
    shapes = [(2, 3, 4), (2, 5, 4), (2, 1, 4)]
    expected = np.concatenate([zeros(s) for s in shapes], axis=1).shape
    dim = np.array(1, dtype=I32)
    assert infer_one("ConcatV2", *shapes, dim, dyn_in={"x": 3}, attrs={"N": 3}).outputs[0].shape == expected
    assert infer_one("Concat", dim, *shapes, dyn_in={"x": 3}).outputs[0].shape == expected
    assert infer_one("ConcatD", *shapes, dyn_in={"x": 3}, attrs={"concat_dim": -2}).outputs[0].shape == expected
    assert infer_one("ConcatV2D", *shapes, dyn_in={"x": 3}, attrs={"concat_dim": 1}).outputs[0].shape == expected
    with pytest.raises(ops.InferenceError, match=r"differ in dim 1 \(not the concat dim 0\)"):
        infer_one("ConcatD", (2, 3), (2, 4), dyn_in={"x": 2}, attrs={"concat_dim": 0})
    assert infer_one("ConcatD", (2, -1), (3, 4), dyn_in={"x": 2}, attrs={"concat_dim": 0}).outputs[0].shape == (5, 4)


def test_split_family():
    x = (4, 6, 3)
    parts = np.split(zeros(x), 3, axis=1)
    n = infer_one("Split", np.array(1, dtype=I32), x, attrs={"num_split": 3}, dyn_out={"y": 3})
    assert [d.shape for d in n.outputs] == [p.shape for p in parts]
    n = infer_one("SplitD", x, attrs={"split_dim": -2, "num_split": 2}, dyn_out={"y": 2})
    assert [d.shape for d in n.outputs] == [p.shape for p in np.split(zeros(x), 2, axis=-2)]
    sizes = [1, -1, 2]
    n = infer_one("SplitV", x, np.array(sizes, dtype=I64), np.array(1, dtype=I32), attrs={"num_split": 3},
                  dyn_out={"y": 3})
    assert [d.shape for d in n.outputs] == [p.shape for p in np.split(zeros(x), [1, 4], axis=1)]
    with pytest.raises(ops.InferenceError, match="does not split into 4 equal parts"):
        infer_one("Split", np.array(1, dtype=I32), x, attrs={"num_split": 4}, dyn_out={"y": 4})


def test_tile_expand_broadcast_fill_shape():
    assert infer_one("Tile", (2, 3), np.array([2, 1], dtype=I64)).outputs[0].shape == np.tile(zeros((2, 3)), (2, 1)).shape
    assert infer_one("TileD", (2, 3), attrs={"multiples": [1, 2, 2]}).outputs[0].shape == np.tile(
        zeros((2, 3)), (1, 2, 2)).shape
    expected = (zeros((3, 1)) * np.ones((2, 1, 6))).shape
    assert infer_one("Expand", (3, 1), np.array([2, 1, 6], dtype=I64)).outputs[0].shape == expected
    assert infer_one("BroadcastTo", (3, 1), np.array([3, 4], dtype=I64)).outputs[0].shape == (3, 4)
    n = infer_one("Fill", np.array([2, 5], dtype=I64), np.array(1.5, dtype=np.float32))
    assert (n.outputs[0].shape, n.outputs[0].dtype) == ((2, 5), DataType.DT_FLOAT)
    n = infer_one("Shape", (2, 3, 4))
    assert (n.outputs[0].shape, n.outputs[0].dtype) == ((3,), DataType.DT_INT32)


def test_pads():
    x = (1, 3, 5, 5)
    tf_pads = np.array([[0, 0], [0, 0], [1, 2], [3, 0]], dtype=I32)
    expected = np.pad(zeros(x), tf_pads).shape
    assert infer_one("Pad", x, tf_pads).outputs[0].shape == expected
    assert infer_one("PadV2", x, tf_pads, np.array(0.0, dtype=np.float32)).outputs[0].shape == expected
    assert infer_one("MirrorPad", x, tf_pads, attrs={"mode": "REFLECT"}).outputs[0].shape == expected
    onnx_pads = np.array([0, 0, 1, 3, 0, 0, 2, 0], dtype=I64)  # all begins, then all ends
    n = infer_one("PadV3", x, onnx_pads, None, attrs={"paddings_contiguous": False})
    assert n.outputs[0].shape == expected
    assert infer_one("PadV3", x, tf_pads.ravel().astype(I64), None).outputs[0].shape == expected


@pytest.mark.parametrize("op", ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd"])
@pytest.mark.parametrize("keep", [False, True])
def test_reductions(op, keep):
    x = (2, 3, 4, 5)
    axes = [1, -1]
    n = infer_one(op, x, np.array(axes, dtype=I64), attrs={"keep_dims": keep})
    assert n.outputs[0].shape == np.sum(zeros(x), axis=tuple(axes), keepdims=keep).shape


def test_reduction_special_cases():
    assert infer_one("ReduceSum", (2, 3), np.array([], dtype=I64)).outputs[0].shape == (2, 3)
    n = infer_one("ReduceMean", (2, 3), np.array([], dtype=I64), attrs={"noop_with_empty_axes": False})
    assert n.outputs[0].shape == ()
    assert infer_one("ReduceSumD", (2, 3, 4), attrs={"axes": [0, 2], "keep_dims": True}).outputs[0].shape == (1, 3, 1)
    n = infer_one("ReduceMax", (2, 3, 4), {"shape": (1,), "dtype": DataType.DT_INT64})
    assert n.outputs[0].shape == (-1, -1)


def test_argmax_topk_cumsum_range_onehot():
    n = infer_one("ArgMaxV2", (2, 3, 4), np.array(1, dtype=I32))
    assert (n.outputs[0].shape, n.outputs[0].dtype) == (np.argmax(zeros((2, 3, 4)), axis=1).shape, DataType.DT_INT64)
    n = infer_one("TopK", (2, 10), np.array(3, dtype=I32))
    assert [(d.shape, d.dtype) for d in n.outputs] == [((2, 3), DataType.DT_FLOAT), ((2, 3), DataType.DT_INT32)]
    assert infer_one("Cumsum", (2, 3), np.array(1, dtype=I32)).outputs[0].shape == (2, 3)
    n = infer_one("Range", np.array(1, dtype=I32), np.array(10, dtype=I32), np.array(3, dtype=I32))
    assert n.outputs[0].shape == np.arange(1, 10, 3).shape
    n = infer_one("OneHot", {"shape": (2, 3), "dtype": DataType.DT_INT32}, np.array(5, dtype=I32),
                  np.array(1.0, dtype=np.float32), np.array(0.0, dtype=np.float32))
    assert n.outputs[0].shape == (2, 3, 5)


@pytest.mark.parametrize(("x", "ind", "axis"), [((5, 4), (2, 3), 0), ((5, 4, 3), (7,), 1), ((5, 4), (), 1)])
def test_gather(x, ind, axis):
    indices = np.zeros(ind, dtype=I64)
    expected = np.take(zeros(x), indices, axis=axis).shape
    idx = {"shape": ind, "dtype": DataType.DT_INT64}
    assert infer_one("GatherV2", x, idx, np.array(axis, dtype=I32)).outputs[0].shape == expected
    if axis == 0:
        assert infer_one("Gather", x, idx).outputs[0].shape == expected


def test_gather_elements_nd_scatter_where():
    idx = {"shape": (2, 3), "dtype": DataType.DT_INT64}
    assert infer_one("GatherElements", (4, 3), idx).outputs[0].shape == (2, 3)
    nd = {"shape": (5, 2), "dtype": DataType.DT_INT64}
    x = zeros((4, 3, 6))
    assert infer_one("GatherNd", x.shape, nd).outputs[0].shape == x[tuple(np.zeros((2, 5), dtype=I64))].shape
    assert infer_one("ScatterElements", (4, 3), idx, (2, 3)).outputs[0].shape == (4, 3)
    assert infer_one("TensorScatterUpdate", (4, 3), nd, (5,)).outputs[0].shape == (4, 3)
    n = infer_one("Where", (4, 3))
    assert (n.outputs[0].shape, n.outputs[0].dtype) == ((-1, 2), DataType.DT_INT64)


def test_slices():
    x = (6, 7, 8)
    arr = zeros(x)
    n = infer_one("Slice", x, np.array([1, 0, 2], dtype=I64), np.array([2, -1, 3], dtype=I64))
    assert n.outputs[0].shape == arr[1:3, 0:, 2:5].shape
    assert infer_one("SliceD", x, attrs={"offsets": [0, 1, 2], "size": [6, 2, -1]}).outputs[0].shape == arr[:, 1:3, 2:].shape
    n = infer_one("StridedSlice", x, np.array([1, 6, 0], dtype=I64), np.array([5, 0, 8], dtype=I64),
                  np.array([2, -2, 3], dtype=I64))
    assert n.outputs[0].shape == arr[1:5:2, 6:0:-2, 0:8:3].shape
    masks = {"begin_mask": 0b001, "end_mask": 0b100, "shrink_axis_mask": 0b010}
    n = infer_one("StridedSliceD", x, attrs={"begin": [3, 2, 1], "end": [5, 3, 0], "strides": [1, 1, 1], **masks})
    assert n.outputs[0].shape == arr[:5, 2, 1:].shape
    n = infer_one("StridedSliceD", x, attrs={"begin": [0, 1], "end": [0, 3], "strides": [1, 1], "ellipsis_mask": 1,
                                             "new_axis_mask": 0})
    assert n.outputs[0].shape == arr[..., 1:3].shape
    n = infer_one("StridedSliceD", x, attrs={"begin": [1, 0, 0, 0], "end": [2, 0, 0, 3], "strides": [1, 1, 1, 1],
                                             "ellipsis_mask": 0b0010, "new_axis_mask": 0b0100})
    assert n.outputs[0].shape == arr[1:2, ..., None, 0:3].shape


def test_strided_slice_v2_onnx_semantics():
    x = (6, 7, 8)
    arr = zeros(x)
    big = np.iinfo(np.int64).max
    n = infer_one("StridedSliceV2", x, np.array([1, -3], dtype=I64), np.array([big, -1], dtype=I64),
                  np.array([0, 2], dtype=I64), np.array([2, 1], dtype=I64))
    assert n.outputs[0].shape == arr[1::2, :, -3:-1].shape
    n = infer_one("StridedSliceV2", x, np.array([0, 1, 2], dtype=I64), np.array([6, 5, 8], dtype=I64))
    assert n.outputs[0].shape == arr[0:6, 1:5, 2:8].shape
    n = infer_one("StridedSliceV2", x, {"shape": (1,), "dtype": DataType.DT_INT64}, np.array([4], dtype=I64),
                  np.array([1], dtype=I64))
    assert n.outputs[0].shape == (6, -1, 8)


def test_einsum():
    a, b = zeros((2, 3, 4)), zeros((2, 4, 5))
    for eq in ("bij,bjk->bik", "bij,bjk", "...ij,...jk->...ik", "bij,bjk->k"):
        n = infer_one("Einsum", a.shape, b.shape, attrs={"equation": eq, "N": 2}, dyn_in={"x": 2})
        assert n.outputs[0].shape == np.einsum(eq, a, b).shape, eq
    with pytest.raises(ops.InferenceError, match="label 'j' has sizes 4 and 3"):
        infer_one("Einsum", (2, 4), (3, 5), attrs={"equation": "ij,jk->ik", "N": 2}, dyn_in={"x": 2})


def test_resize_ops():
    n = infer_one("Resize", (1, 3, 10, 12), None, np.array([1, 1, 2, 0.5], dtype=np.float32), None)
    assert n.outputs[0].shape == (1, 3, 20, 6)
    n = infer_one("Resize", (1, 3, 10, 12), None, None, np.array([1, 3, 7, 9], dtype=I64))
    assert n.outputs[0].shape == (1, 3, 7, 9)
    n = infer_one("ResizeNearestNeighborV2", {"shape": (1, 3, 10, 12), "fmt": Format.FORMAT_NCHW},
                  np.array([20, 24], dtype=I32))
    assert n.outputs[0].shape == (1, 3, 20, 24)
    n = infer_one("ResizeNearestNeighborV2", {"shape": (1, 10, 12, 3), "fmt": Format.FORMAT_NHWC},
                  np.array([5, 6], dtype=I32))
    assert n.outputs[0].shape == (1, 5, 6, 3)


def test_structure_ops_const_data_netoutput():
    b = Builder()
    x = b.data((2, 3), DataType.DT_FLOAT16)
    c = b.const(np.ones((4, 1), dtype=np.int32))
    out = b.op("NetOutput", x, c, dyn_in={"x": 2})
    b.infer()
    assert [(d.shape, d.dtype) for d in out.inputs] == [((2, 3), DataType.DT_FLOAT16), ((4, 1), DataType.DT_INT32)]
    assert c[0].outputs[0].shape == (4, 1)
    nchw = b.op("Const", attrs={"value": TensorValue(DataType.DT_FLOAT, np.zeros((1, 2, 3, 4)), Format.FORMAT_NCHW)})
    ops.infer_node(b.g, nchw)
    assert (nchw.outputs[0].shape, nchw.outputs[0].format) == ((1, 2, 3, 4), Format.FORMAT_NCHW)
    assert x[0].outputs[0] == TensorDesc.of(DataType.DT_FLOAT16, (2, 3))


def test_infer_graph_reports_missing_rules_and_allows_skipping():
    b = Builder()
    x = b.data((2,))
    node = b.g.add_node("MysteryOp", inputs=1, outputs=1)
    b.g.add_edge(x[0], 0, node, 0)
    with pytest.raises(ops.InferenceError, match="MysteryOp node 'MysteryOp_0': no inference rule"):
        ops.infer_graph(b.g)
    ops.infer_graph(b.g, allow_unknown_ops=True)
    assert node.inputs[0].shape == (2,)


def test_every_catalogue_op_has_a_rule():
    assert set(ops.builtin_op_types()) <= set(ops.inferable_op_types())
    assert len(ops.inferable_op_types()) >= 60


def test_resize_sizes_computed_from_scales_are_folded():
    # the subgraph ONNX Resize(scales=...) import builds: sizes = Cast(Cast(Shape(x), float) * scales, int64)
    b = Builder()
    x = b.data((1, 3, 10, 12), fmt=Format.FORMAT_NCHW)
    shape = b.op("Shape", x, attrs={"dtype": int(DataType.DT_INT64)})
    as_float = b.op("Cast", (shape, 0), attrs={"dst_type": int(DataType.DT_FLOAT)})
    scaled = b.op("Mul", (as_float, 0), b.const(np.array([1, 1, 2, 1.5], dtype=np.float32)))
    sizes = b.op("Cast", (scaled, 0), attrs={"dst_type": int(DataType.DT_INT64)})
    resize = b.op("Resize", x, None, None, (sizes, 0), attrs={"mode": "linear"})
    b.infer()
    expected = (np.array([1, 3, 10, 12], dtype=np.float32) * np.array([1, 1, 2, 1.5], dtype=np.float32)).astype(I64)
    assert resize.outputs[0].shape == tuple(expected)
    assert sizes.outputs[0].dtype == DataType.DT_INT64


def test_register_infer_for_a_custom_op_type():
    @ops.register_infer("TestOnlyDoubleRows")
    def _rule(ctx: ops.InferContext) -> None:
        x = ctx.desc(0)
        ctx.set_output(0, x.dtype, (x.shape[0] * 2, *x.shape[1:]))

    try:
        b = Builder()
        x = b.data((3, 4))
        node = b.g.add_node("TestOnlyDoubleRows", inputs=1, outputs=1)
        b.g.add_edge(x[0], 0, node, 0)
        ops.infer_graph(b.g)
        assert node.outputs[0].shape == (6, 4)
        assert "TestOnlyDoubleRows" in ops.inferable_op_types()
        with pytest.raises(ValueError, match="already has inference rule"):
            ops.register_infer("TestOnlyDoubleRows")(lambda ctx: None)
        ops.register_infer("TestOnlyDoubleRows", replace=True)(lambda ctx: None)
    finally:
        from gebench.ops import _infer

        _infer._RULES.pop("TestOnlyDoubleRows", None)


def _body(name: str, op: str, parent_inputs: int, first_port: int = 0) -> ir.Graph:
    sub = ir.Graph(name)
    datas = []
    for i in range(parent_inputs):
        d = ops.make_node(sub, "Data", attrs={"index": i, "_parent_node_index": first_port + i})
        datas.append(d)
    n = ops.make_node(sub, op)
    sub.add_edge(datas[0], 0, n, 0)
    if op == "Add":
        sub.add_edge(datas[-1], 0, n, 1)
    out = ops.make_node(sub, "NetOutput", dynamic_inputs={"x": 1})
    sub.add_edge(n, 0, out, 0)
    return sub


def test_partitioned_call_and_if_take_outputs_from_subgraphs():
    b = Builder()
    x = b.data((2, 3))
    y = b.data((1, 3))
    call = b.op("PartitionedCall", x, y, dyn_in={"args": 2}, dyn_out={"output": 1})
    b.g.add_subgraph(_body("f", "Add", 2), parent_node=call)
    cond = b.data((), DataType.DT_BOOL)
    branch = b.op("If", cond, x, dyn_in={"input": 1}, dyn_out={"output": 1})
    b.g.add_subgraph(_body("then", "Relu", 1, first_port=1), parent_node=branch)
    b.g.add_subgraph(_body("else", "Neg", 1, first_port=1), parent_node=branch)
    b.infer()
    assert call.outputs[0].shape == np.broadcast_shapes((2, 3), (1, 3))
    assert (branch.outputs[0].shape, branch.outputs[0].dtype) == ((2, 3), DataType.DT_FLOAT)


def test_input_formats_stated_by_the_node_are_kept():
    # an importer marks the Resize input NCHW although its producer's desc is ND
    b = Builder()
    x = b.data((1, 3, 10, 12))
    relu = b.op("Relu", x)
    resize = b.op("ResizeNearestNeighborV2", (relu, 0), b.const(np.array([20, 24], dtype=I32)))
    resize.inputs[0].format = resize.inputs[0].origin_format = Format.FORMAT_NCHW
    b.infer()
    assert resize.inputs[0].format == Format.FORMAT_NCHW and resize.inputs[0].shape == (1, 3, 10, 12)
    assert resize.outputs[0].shape == (1, 3, 20, 24)
    assert relu.inputs[0].format == Format.FORMAT_ND
